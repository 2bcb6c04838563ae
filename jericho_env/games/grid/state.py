"""The grid table geometry, the game state and the in-place table bookkeeping.

The table is a square window of ``size x size`` cells centred on the base; ``cell = row * size + col``,
row 0 at the top. Coordinates shown to people are relative to the base: ``x`` to the right, ``y`` up.

For speed the state keeps, beside the cards on each cell, the number of occupied neighbours of every
cell and, for every empty cell beside a card (the "frontier"), a 52-bit mask of the cards that may be
placed there (the AND of the suit-or-rank masks of its face-up neighbours). Placing a card updates four
neighbours; removing cards recomputes only the cells around them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jericho_env.core.cards import NUM_CARDS

EMPTY = -1
BASE = NUM_CARDS  # marker of the face-down base on a cell (its identity is kept in ``GridState.base_card``)
HAND_SIZE = 5
ALL_CARDS_MASK = (1 << NUM_CARDS) - 1
# Cards that may sit beside card c: same suit or same rank. The base accepts any card.
COMPAT: tuple[int, ...] = (
    *(sum(1 << d for d in range(NUM_CARDS) if d // 13 == c // 13 or d % 13 == c % 13) for c in range(NUM_CARDS)),
    ALL_CARDS_MASK,
)
# Points of a captured card: A = 1, 2..10 face value, J/Q/K = 10.
POINTS: tuple[int, ...] = tuple(min(c % 13 + 1, 10) for c in range(NUM_CARDS))
TOTAL_POINTS = sum(POINTS)  # 340: every card's points, the bound used to normalise scores


class Board:
    """The fixed geometry of a ``size x size`` window: neighbours, coordinates, distances."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.cells = size * size
        self.center = (size // 2) * size + size // 2
        half = size // 2
        nbr: list[tuple[int, ...]] = []
        xy: list[tuple[int, int]] = []
        for cell in range(self.cells):
            r, c = divmod(cell, size)
            around = [(r - 1, c), (r, c - 1), (r, c + 1), (r + 1, c)]
            nbr.append(tuple(rr * size + cc for rr, cc in around if 0 <= rr < size and 0 <= cc < size))
            xy.append((c - half, half - r))
        self.neighbours: tuple[tuple[int, ...], ...] = tuple(nbr)
        self.xy: tuple[tuple[int, int], ...] = tuple(xy)
        # Chebyshev distance from the base: a cell is inside a window of odd size k iff distance <= (k-1)/2.
        self.distance: tuple[int, ...] = tuple(max(abs(x), abs(y)) for x, y in xy)

    def cell_of(self, x: int, y: int) -> int:
        """The cell at ``(x, y)`` relative to the base; ``ValueError`` if outside the window."""
        half = self.size // 2
        if not (-half <= x <= half and -half <= y <= half):
            raise ValueError(f"({x}, {y}) is outside the {self.size}x{self.size} table (coordinates -{half}..{half})")
        return (half - y) * self.size + (x + half)

    def cell_name(self, cell: int) -> str:
        """``"x,y"`` relative to the base, e.g. ``"1,-2"``."""
        x, y = self.xy[cell]
        return f"{x},{y}"


@dataclass(slots=True)
class GridState:
    """A position of grid: table, hands, piles and whose turn it is (mutable; see ``GridRules``)."""

    board: list[int]  # per cell: EMPTY, BASE or a card 0..51
    nbrs: list[int]  # per cell: how many of its neighbours are occupied (base included)
    allowed: list[int]  # per frontier cell: mask of the cards that match every face-up neighbour
    frontier: set[int]  # empty cells with at least one occupied neighbour
    faceup: dict[int, int]  # cell -> face-up card, for every card on the table (not the base)
    hands: list[list[int]]  # per seat, sorted ascending (slot i = i-th lowest card)
    draw: list[int]  # draw pile, the top is the LAST element
    discard: list[int]  # in the order discarded
    captured: list[list[int]]  # per seat, in the order captured
    points: list[int]  # per seat, points of its capture pile
    base_card: int
    to_move: int
    in_chain: bool  # the seat to move captured this turn and may place another capturing card
    passes_in_row: int  # consecutive passes; 2 ends the game
    last_pass: list[bool]  # per seat: was its last turn a pass
    # per seat: the public history of its hand (see ``knowledge``): a persistent list, shared by copies
    hist: list[Any] = field(default_factory=lambda: [None, None])

    def copy(self) -> GridState:
        """An independent copy (lists copied, cards are ints)."""
        return GridState(
            self.board[:],
            self.nbrs[:],
            self.allowed[:],
            set(self.frontier),
            dict(self.faceup),
            [self.hands[0][:], self.hands[1][:]],
            self.draw[:],
            self.discard[:],
            [self.captured[0][:], self.captured[1][:]],
            self.points[:],
            self.base_card,
            self.to_move,
            self.in_chain,
            self.passes_in_row,
            self.last_pass[:],
            self.hist[:],
        )


def new_state(board: Board, hands: list[list[int]], draw: list[int], base_card: int, to_move: int) -> GridState:
    """A state whose table holds only the base, every pile but the given ones empty."""
    state = GridState(
        [EMPTY] * board.cells, [0] * board.cells, [0] * board.cells, set(), {}, hands, draw, [], [[], []],
        [0, 0], base_card, to_move, False, 0, [False, False],
    )  # fmt: skip
    place(board, state, board.center, BASE)
    return state


def place(board: Board, state: GridState, cell: int, card: int) -> None:
    """Put ``card`` (or ``BASE``) on the empty ``cell`` and update its empty neighbours."""
    cells, nbrs, allowed, frontier = state.board, state.nbrs, state.allowed, state.frontier
    cells[cell] = card
    if card != BASE:
        state.faceup[cell] = card
    frontier.discard(cell)
    cm = COMPAT[card]
    for q in board.neighbours[cell]:
        nbrs[q] += 1
        if cells[q] == EMPTY:
            if nbrs[q] == 1:
                allowed[q] = cm
                frontier.add(q)
            else:
                allowed[q] &= cm


def remove(board: Board, state: GridState, removed: list[int]) -> None:
    """Empty every cell of ``removed`` (face-up cards) at once and recompute the cells around them."""
    cells, nbrs, allowed, frontier, faceup = state.board, state.nbrs, state.allowed, state.frontier, state.faceup
    nb = board.neighbours
    touched: set[int] = set(removed)
    for cell in removed:
        cells[cell] = EMPTY
        del faceup[cell]
        for q in nb[cell]:
            nbrs[q] -= 1
            touched.add(q)
    for q in touched:
        if cells[q] != EMPTY:
            continue
        if nbrs[q] == 0:
            frontier.discard(q)
            continue
        m = ALL_CARDS_MASK
        for r in nb[q]:
            c = cells[r]
            if c >= 0:
                m &= COMPAT[c]
        allowed[q] = m
        frontier.add(q)


def disconnected_cells(board: Board, state: GridState) -> list[int]:
    """Occupied cells not reachable from the base through orthogonally adjacent occupied cells."""
    nb, cells = board.neighbours, state.board
    seen = {board.center}
    stack = [board.center]
    while stack:
        cell = stack.pop()
        for q in nb[cell]:
            if q not in seen and cells[q] != EMPTY:
                seen.add(q)
                stack.append(q)
    return sorted(cell for cell in state.faceup if cell not in seen)


def captures_at(board: Board, state: GridState, cell: int) -> bool:
    """Whether a placement on the empty ``cell`` captures: it or a neighbouring card ends up surrounded.

    It depends only on the cell, never on the card placed.
    """
    nbrs = state.nbrs
    if nbrs[cell] == 4:
        return True
    cells = state.board
    return any(nbrs[q] == 3 and 0 <= cells[q] < BASE for q in board.neighbours[cell])


def capturing_cells(board: Board, state: GridState) -> list[int]:
    """Frontier cells where a placement captures (see ``captures_at``)."""
    cells, nbrs, nb = state.board, state.nbrs, board.neighbours
    out = []
    for cell in state.frontier:
        if nbrs[cell] == 4:
            out.append(cell)
            continue
        for q in nb[cell]:
            if nbrs[q] == 3 and 0 <= cells[q] < BASE:
                out.append(cell)
                break
    return out
