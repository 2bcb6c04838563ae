"""The grid action encoding, written once: offsets, encode and decode helpers, and the action text.

``C = board_size**2`` cells, ``cell = row * board_size + col`` (row 0 at the top). The hand is kept
sorted by card number, so slot ``i`` is the ``i``-th lowest card held.

| action | meaning | text |
| --- | --- | --- |
| `slot * C + cell` [0 .. 5C-1] | place the card of hand slot 0-4 on that cell | `"Th@1,-2"`: card@x,y (from the base) |
| `5 * C` [2205 at size 21] | at the start of a turn: pass; in a capture chain: end the turn | `"pass"` / `"end"` |

The rules' hot path (``legal_actions``, ``apply``) reads ``cells`` and ``pass_action`` from here and
does the arithmetic inline; everything else goes through ``decode``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Literal, NamedTuple

from jericho_env.core.cards import card_to_str
from jericho_env.games.grid.state import HAND_SIZE, Board


class GridMove(NamedTuple):
    """A decoded grid action: ``"place"`` (hand ``slot`` on ``cell``) or ``"stop"`` (pass / end turn)."""

    kind: Literal["place", "stop"]
    slot: int = -1
    cell: int = -1


@functools.cache
def board_of(size: int) -> Board:
    """The geometry of a ``size x size`` window, built once per process (it is read-only)."""
    return Board(size)


class GridActions:
    """The action encoding of grid on a ``board_size`` window: ``HAND_SIZE * cells`` placements, then pass/end."""

    __slots__ = ("board", "board_size", "cells", "num_actions", "pass_action")

    def __init__(self, board_size: int) -> None:
        self.board_size = board_size
        self.board = board_of(board_size)
        self.cells = self.board.cells
        self.pass_action = HAND_SIZE * self.cells  # pass at the start of a turn, end the turn in a chain
        self.num_actions = self.pass_action + 1

    # ----------------------------------------------------------------- encode
    def place(self, slot: int, cell: int) -> int:
        """The action placing the card of hand ``slot`` (0-4) on ``cell``."""
        if not 0 <= slot < HAND_SIZE:
            raise ValueError(f"hand slot {slot} is out of range 0..{HAND_SIZE - 1}")
        if not 0 <= cell < self.cells:
            raise ValueError(
                f"cell {cell} is out of range 0..{self.cells - 1} on a {self.board_size}x{self.board_size} table"
            )
        return slot * self.cells + cell

    def place_at(self, slot: int, x: int, y: int) -> int:
        """The action placing hand ``slot`` at ``(x, y)`` relative to the base."""
        return self.place(slot, self.board.cell_of(x, y))

    # ----------------------------------------------------------------- decode
    def decode(self, action: int) -> GridMove:
        """What ``action`` does; ``ValueError`` naming the range if it is no action of this encoding."""
        if not 0 <= action < self.num_actions:
            raise ValueError(f"action {action} is out of range 0..{self.num_actions - 1}")
        if action == self.pass_action:
            return GridMove("stop")
        slot, cell = divmod(action, self.cells)
        return GridMove("place", slot, cell)

    # ----------------------------------------------------------------- text
    def to_str(self, action: int, hand: Sequence[int], in_chain: bool) -> str:
        """``"Th@1,0"`` (the card of the slot in ``hand`` at x,y), ``"pass"`` or, in a capture chain, ``"end"``."""
        move = self.decode(action)
        if move.kind == "stop":
            return "end" if in_chain else "pass"
        card = card_to_str(hand[move.slot]) if move.slot < len(hand) else f"slot{move.slot}"
        return f"{card}@{self.board.cell_name(move.cell)}"

    def describe(self, action: int) -> str:
        """State-free name: ``"hand slot 2 at 1,0"`` or ``"pass/end turn"``."""
        if not 0 <= action < self.num_actions:
            return f"action {action}"
        move = self.decode(action)
        if move.kind == "stop":
            return "pass/end turn"
        return f"hand slot {move.slot} at {self.board.cell_name(move.cell)}"
