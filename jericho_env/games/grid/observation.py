"""Observation of grid from one seat: named slices of one flat float32 array (see the game page).

Encoding is one fancy-index write: the indices of every 1 are gathered in a Python list (from tables
precomputed per card and per (cell, card)) and set in a single numpy call, which is several times
faster than per-element writes.
"""

from __future__ import annotations

import numpy as np

from jericho_env.core.cards import NUM_CARDS
from jericho_env.core.layout import Field, ObsLayout
from jericho_env.games.grid.state import HAND_SIZE, TOTAL_POINTS, Board, GridState

MAX_DRAW = NUM_CARDS - 1 - 2 * HAND_SIZE  # 41 cards in the draw pile after the deal


def build_layout(size: int) -> ObsLayout:
    """The observation layout of a ``size x size`` table."""
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
        ]
    )


_ENCODERS: dict[int, Encoder] = {}


def encoder_for(layout: ObsLayout, board: Board) -> Encoder:
    """The encoder of ``board``'s size, built once per process (it holds only read-only tables)."""
    encoder = _ENCODERS.get(board.size)
    if encoder is None or encoder.layout.size != layout.size:
        encoder = _ENCODERS[board.size] = Encoder(layout, board)
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
