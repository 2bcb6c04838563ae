"""Compiled batched rules of the test-only toy game: proves a game registered from outside can bring kernels.

The layout every game's ``batched.py`` follows: a structured dtype for one state, ``@njit`` kernels
looping over ``rows``, and a ``BatchedGame`` subclass whose methods call them and convert states.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jericho_env.core.batched import BatchedGame
from jericho_env.core.kernels import njit, shuffle_prefix

try:
    from tests.toy_game import ToyRules, ToyState
except ImportError:  # pragma: no cover
    from toy_game import ToyRules, ToyState  # type: ignore[no-redef]

MAX_PILE = 20
DTYPE = np.dtype(
    [
        ("cards", np.int8, (2,)),
        ("deck", np.int8, (8,)),
        ("pile", np.int8),
        ("to_move", np.int8),
        ("last_taker", np.int8),
        ("history_len", np.int8),
        ("history", np.int8, (MAX_PILE,)),
    ]
)


@njit(cache=True)
def _deal(states: np.ndarray, rows: np.ndarray, stream: np.ndarray, pile: int) -> None:
    order = np.empty(10, dtype=np.int8)
    for k in range(rows.shape[0]):
        s = states[rows[k]]
        for c in range(10):
            order[c] = c
        shuffle_prefix(order, 10, stream, k)
        s.cards[0], s.cards[1] = order[0], order[1]
        s.deck[:] = order[2:]
        s.pile = pile
        s.to_move = int(stream[k] & np.uint64(1))
        s.last_taker = -1
        s.history_len = 0
        s.history[:] = 0


@njit(cache=True)
def _apply(states: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> None:
    for k in range(rows.shape[0]):
        s = states[rows[k]]
        s.pile -= actions[k] + 1
        s.history[s.history_len] = actions[k]
        s.history_len += 1
        if s.pile == 0:
            s.last_taker = s.to_move
        s.to_move = 1 - s.to_move


@njit(cache=True)
def _status(states: np.ndarray, rows: np.ndarray, current: np.ndarray, returns: np.ndarray) -> None:
    for k in range(rows.shape[0]):
        s = states[rows[k]]
        returns[k, 0] = 0.0
        returns[k, 1] = 0.0
        if s.pile:
            current[k] = s.to_move
            continue
        current[k] = -1
        pts0 = (1 if s.last_taker == 0 else 0) + (1 if s.cards[0] > s.cards[1] else 0)
        pts1 = 2 - pts0
        if pts0 != pts1:
            returns[k, 0] = 1.0 if pts0 > pts1 else -1.0
            returns[k, 1] = -returns[k, 0]


@njit(cache=True)
def _masks(states: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    for k in range(rows.shape[0]):
        pile = states[rows[k]].pile
        out[k, 0] = 1 if pile > 0 else 0
        out[k, 1] = 1 if pile > 1 else 0


@njit(cache=True)
def _observe(states: np.ndarray, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
    for k in range(rows.shape[0]):
        s = states[rows[k]]
        out[k, :] = 0.0
        out[k, s.cards[seats[k]]] = 1.0
        out[k, 10] = np.float32(s.pile / 20)


class ToyBatched(BatchedGame[ToyState]):
    """The toy game's rules over rows of ``DTYPE``."""

    def __init__(self, rules: ToyRules) -> None:
        super().__init__(rules)
        self.pile = int(rules.options["pile"])

    @property
    def dtype(self) -> np.dtype[Any]:
        """``DTYPE``."""
        return DTYPE

    def to_batched(self, state: ToyState, states: np.ndarray, row: int) -> None:
        """Every field of ``state`` into ``states[row]``."""
        r = states[row]
        r["cards"] = state.cards
        r["deck"] = state.deck
        r["pile"], r["to_move"], r["last_taker"] = state.pile, state.to_move, state.last_taker
        r["history_len"] = len(state.history)
        r["history"] = 0
        r["history"][: len(state.history)] = state.history

    def from_batched(self, states: np.ndarray, row: int) -> ToyState:
        """The state of ``states[row]``."""
        r = states[row]
        n = int(r["history_len"])
        return ToyState(
            [int(c) for c in r["cards"]],
            [int(c) for c in r["deck"]],
            int(r["pile"]),
            int(r["to_move"]),
            int(r["last_taker"]),
            [int(a) for a in r["history"][:n]],
        )

    def deal(self, states: np.ndarray, rows: np.ndarray, stream: np.ndarray) -> None:
        """Shuffle the ten cards, two in hand; the first player from the stream."""
        _deal(states, rows, stream, self.pile)

    def apply(self, states: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> None:
        """Take tokens."""
        _apply(states, rows, actions)

    def status(self, states: np.ndarray, rows: np.ndarray, current: np.ndarray, returns: np.ndarray) -> None:
        """Seat to move and returns."""
        _status(states, rows, current, returns)

    def masks(self, states: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
        """Take one while any is left, two while two are."""
        _masks(states, rows, out)

    def observe(self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """Own card one-hot and the pile."""
        _observe(states, rows, seats, out)
