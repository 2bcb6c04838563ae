"""Observation of grid from one seat: named slices of one flat float32 array (see the game page).

Encoding is one fancy-index write: the indices of every 1 are gathered in a Python list (from tables
precomputed per card and per (cell, card)) and set in a single numpy call, which is several times
faster than per-element writes.

Version 1 (option ``obs_version=1``) appends what the seat can infer and a summary of the table
(``BELIEF_FIELDS``): the cards it has not seen, what the opponent's latest self-ended chain showed its
hand lacked, and which cards fit the table's open cells and its capturing cells.
"""

from __future__ import annotations

import numpy as np

from jericho_env.core.cards import NUM_CARDS
from jericho_env.core.layout import Field, ObsLayout
from jericho_env.games.grid.knowledge import DRAW, NONE, History
from jericho_env.games.grid.state import ALL_CARDS_MASK, HAND_SIZE, TOTAL_POINTS, Board, GridState

MAX_DRAW = NUM_CARDS - 1 - 2 * HAND_SIZE  # 41 cards in the draw pile after the deal
MAX_UNSEEN = NUM_CARDS - HAND_SIZE  # a seat sees its own 5 cards from the deal on, and every card placed since
OBS_VERSIONS = (0, 1)
_BIT = tuple(1 << c for c in range(NUM_CARDS))
_RANK_BITS = sum(1 << 13 * k for k in range(4))  # the ace of each suit: shifted by r, rank r's cards
BELIEF_FIELDS = (
    "unseen", "unseen_suit", "unseen_rank", "unseen_count", "opp_lacked", "opp_lacked_room", "fits", "fits_capture",
)  # fmt: skip


def belief_fields() -> list[Field]:
    """Version 1's fields, appended to version 0's."""
    return [
        Field(
            "unseen",
            (NUM_CARDS,),
            "1 per card this seat has not seen: in the opponent's hand, the draw pile or the base",
        ),
        # unseen_suit, unseen_rank and unseen_count side by side: the encoder writes the three at once
        Field("unseen_suit", (4,), "unseen cards of each suit c d h s / 13"),
        Field("unseen_rank", (13,), "unseen cards of each rank A..K / 4"),
        Field("unseen_count", (1,), f"unseen cards / {MAX_UNSEEN}"),
        Field(
            "opp_lacked",
            (NUM_CARDS,),
            "1 per unseen card the opponent's hand held none of when its latest chain ended by itself (the "
            "cards that fitted a capturing cell then)",
        ),
        Field(
            "opp_lacked_room",
            (1,),
            "how many of `opp_lacked` the opponent's hand can hold now: cards it drew since, at most its hand size / 5",
        ),
        Field(
            "fits", (NUM_CARDS,), "1 per card that matches some empty cell beside the table (where it could be placed)"
        ),
        Field("fits_capture", (NUM_CARDS,), "1 per card that matches some cell where a placement captures"),
    ]


def latest_lack(history: History) -> tuple[int, int]:
    """(mask, cards drawn since) of the latest chain in ``history`` ended with no capturing card; (0, 0): none."""
    drawn = 0
    while history is not None:
        (kind, value), history = history
        if kind == DRAW:
            drawn += value
        elif kind == NONE and value:
            return value, drawn
    return 0, 0


def build_layout(size: int, version: int = 0) -> ObsLayout:
    """The observation layout of a ``size x size`` table; ``version`` 1 appends ``BELIEF_FIELDS``."""
    n = (size, size)
    return ObsLayout(
        [
            Field("hand", (NUM_CARDS,), "own hand: 1 per card held (card = suit*13 + rank; suits c d h s, ranks A..K)"),
            Field("hand_slots", (HAND_SIZE, 17), "own hand by action slot (sorted): suit (4) then rank (13) one-hot"),
            Field("own_captured", (NUM_CARDS,), "own capture pile: 1 per card"),
            Field("own_score", (1,), "own points / 340"),
            Field("opp_hand_size", (1,), "opponent's hand size / 5"),
            Field("opp_captured", (NUM_CARDS,), "opponent's capture pile: 1 per card"),
            Field("opp_score", (1,), "opponent's points / 340"),
            Field("opp_passed", (1,), "1 if the opponent's last turn was a pass"),
            Field("table_occupied", n, "1 where a cell holds a card or the base (row 0 = top, base at the centre)"),
            Field("table_base", n, "1 at the face-down base"),
            Field("table_suit", (4, *n), "suit planes c d h s of the face-up cards"),
            Field("table_rank", (13, *n), "rank planes A..K of the face-up cards"),
            Field("table_cards", (NUM_CARDS,), "face-up cards on the table: 1 per card"),
            Field("discard", (NUM_CARDS,), "discard pile: 1 per card"),
            Field("draw_size", (1,), "draw-pile size / 41"),
            Field("in_chain", (1,), "1 if this seat is to move in the middle of a capture chain"),
            Field("to_move", (1,), "1 if this seat is to move"),
            *(belief_fields() if version >= 1 else []),
        ]
    )


_ENCODERS: dict[tuple[int, int], Encoder] = {}


def encoder_for(layout: ObsLayout, board: Board) -> Encoder:
    """The encoder of ``board``'s size and ``layout``'s version, built once per process (read-only tables)."""
    key = (board.size, layout.size)
    encoder = _ENCODERS.get(key)
    if encoder is None:
        encoder = _ENCODERS[key] = Encoder(layout, board)
    return encoder


class Encoder:
    """Turns a state into the observation of a seat, with offsets precomputed for one board size."""

    def __init__(self, layout: ObsLayout, board: Board) -> None:
        self.layout = layout
        self.board = board
        sl = layout.slices
        cells = board.cells
        self.hand = sl["hand"].start
        self.slot = sl["hand_slots"].start
        self.own_captured = sl["own_captured"].start
        self.own_score = sl["own_score"].start
        self.opp_hand_size = sl["opp_hand_size"].start
        self.opp_captured = sl["opp_captured"].start
        self.opp_score = sl["opp_score"].start
        self.opp_passed = sl["opp_passed"].start
        self.base_index = sl["table_occupied"].start + board.center
        self.base_plane_index = sl["table_base"].start + board.center
        self.table_cards = sl["table_cards"].start
        self.discard = sl["discard"].start
        self.draw_size = sl["draw_size"].start
        self.in_chain = sl["in_chain"].start
        self.to_move = sl["to_move"].start
        occ, suit, rank = sl["table_occupied"].start, sl["table_suit"].start, sl["table_rank"].start
        tc = self.table_cards
        # For (cell, card): occupied bit, suit plane, rank plane, and the card in table_cards.
        self.cell_card: list[tuple[tuple[int, int, int, int], ...]] = [
            tuple(
                (occ + cell, suit + (c // 13) * cells + cell, rank + (c % 13) * cells + cell, tc + c)
                for c in range(NUM_CARDS)
            )
            for cell in range(cells)
        ]
        self.belief = "unseen" in sl
        if self.belief:
            self.unseen = sl["unseen"].start
            self.unseen_suit = sl["unseen_suit"].start
            self.unseen_rank = sl["unseen_rank"].start
            self.unseen_count = sl["unseen_count"].start
            self.opp_lacked = sl["opp_lacked"].start
            self.opp_lacked_room = sl["opp_lacked_room"].start
            self.fits = sl["fits"].start
            self.fits_capture = sl["fits_capture"].start
        self.slot_card: list[tuple[tuple[int, int], ...]] = [
            tuple((self.slot + i * 17 + c // 13, self.slot + i * 17 + 4 + c % 13) for c in range(NUM_CARDS))
            for i in range(HAND_SIZE)
        ]

    def encode(self, s: GridState, seat: int) -> np.ndarray:
        """A new observation of ``s`` for ``seat``."""
        opp = 1 - seat
        idx = [self.base_index, self.base_plane_index]
        ext = idx.extend
        hand = s.hands[seat]
        h = self.hand
        for i, c in enumerate(hand):
            idx.append(h + c)
            ext(self.slot_card[i][c])
        o = self.own_captured
        idx += [o + c for c in s.captured[seat]]
        o = self.opp_captured
        idx += [o + c for c in s.captured[opp]]
        o = self.discard
        idx += [o + c for c in s.discard]
        cc = self.cell_card
        for cell, c in s.faceup.items():
            ext(cc[cell][c])
        obs = np.zeros(self.layout.size, dtype=np.float32)
        obs[np.array(idx, dtype=np.intp)] = 1.0  # an explicit dtype converts the list ~40% faster
        if self.belief:
            self._encode_belief(s, seat, obs)
        obs[self.own_score] = s.points[seat] / TOTAL_POINTS
        obs[self.opp_score] = s.points[opp] / TOTAL_POINTS
        obs[self.opp_hand_size] = len(s.hands[opp]) / HAND_SIZE
        obs[self.draw_size] = len(s.draw) / MAX_DRAW
        if s.last_pass[opp]:
            obs[self.opp_passed] = 1.0
        if s.passes_in_row < 2 and s.to_move == seat:
            obs[self.to_move] = 1.0
            if s.in_chain:
                obs[self.in_chain] = 1.0
        return obs

    def _encode_belief(self, s: GridState, seat: int, obs: np.ndarray) -> None:
        """Version 1's fields into ``obs`` (zeros there; they are the layout's last fields).

        The four card fields are one bit string (each card field's bits at its offset from ``unseen``),
        unpacked into the floats in one call; the counts are bit counts of the unseen mask.
        """
        bit = _BIT
        seen = sum(map(bit.__getitem__, s.hands[seat]))  # distinct cards: the sum of their bits is their union
        seen += sum(map(bit.__getitem__, s.faceup.values()))
        seen += sum(map(bit.__getitem__, s.discard))
        seen += sum(map(bit.__getitem__, s.captured[0])) + sum(map(bit.__getitem__, s.captured[1]))
        unseen = ALL_CARDS_MASK & ~seen
        opp = 1 - seat
        lacked, drawn = latest_lack(s.hist[opp])
        allowed, nbrs, frontier = s.allowed, s.nbrs, s.frontier
        fits = capture = 0
        for cell in frontier:
            a = allowed[cell]
            fits |= a
            if nbrs[cell] == 4:  # surrounded once filled
                capture |= a
        # the other capturing cells (``capturing_cells``): the empty side of a face-up card with three
        # occupied sides, found from the cards (the OR does not mind a cell found twice)
        neighbours = self.board.neighbours
        for q in s.faceup:
            if nbrs[q] == 3:
                for cell in neighbours[q]:
                    if cell in frontier:
                        capture |= allowed[cell]
        start = self.unseen
        ones = (
            unseen
            | (lacked & unseen) << (self.opp_lacked - start)
            | fits << (self.fits - start)
            | capture << (self.fits_capture - start)
        )
        width = self.layout.size - start
        packed = np.frombuffer(ones.to_bytes((width + 7) // 8, "little"), dtype=np.uint8)
        obs[start:] = np.unpackbits(packed, count=width, bitorder="little")
        # unseen_suit, unseen_rank and unseen_count lie side by side: one write
        counts = [(unseen >> 13 * k & 0x1FFF).bit_count() / 13 for k in range(4)]
        counts += [(unseen >> r & _RANK_BITS).bit_count() / 4 for r in range(13)]
        counts.append(unseen.bit_count() / MAX_UNSEEN)
        obs[self.unseen_suit : self.unseen_count + 1] = counts
        if lacked:
            obs[self.opp_lacked_room] = min(drawn, len(s.hands[opp])) / HAND_SIZE
