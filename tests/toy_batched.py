"""Compiled batched rules of the test-only toy game: proves a game registered from outside can bring kernels.

The layout every game's ``batched.py`` follows: a structured dtype for one state, ``@njit`` kernels
looping over ``rows``, and a ``BatchedGame`` subclass whose methods call them and convert states; for
search, the rules of one row as functions with explicit signatures (``row_kernels``, see
``jericho_env.core.batched``), which the kernels over rows call too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jericho_env.core.batched import BatchedGame, RowKernels
from jericho_env.core.kernels import NO_PARAMS, njit, row_signatures, shuffle_prefix

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


SIG = row_signatures(DTYPE, NO_PARAMS)  # None without Numba (then njit leaves the functions as Python)
_NO_PARAMS = np.zeros(1, dtype=NO_PARAMS)


# ---------------------------------------------------------------------------------------------- one row
@njit(SIG and SIG.status, cache=True)
def _status_row(states: np.ndarray, row: int, params: np.ndarray, returns: np.ndarray) -> int:
    s = states[row]
    returns[0] = 0.0
    returns[1] = 0.0
    if s.pile:
        return int(s.to_move)
    pts0 = (1 if s.last_taker == 0 else 0) + (1 if s.cards[0] > s.cards[1] else 0)
    if pts0 != 1:
        returns[0] = 1.0 if pts0 > 1 else -1.0
        returns[1] = -returns[0]
    return -1


@njit(SIG and SIG.legal, cache=True)
def _legal_row(states: np.ndarray, row: int, params: np.ndarray, out: np.ndarray) -> int:
    pile = states[row].pile
    if pile > 0:
        out[0] = 0
    if pile > 1:
        out[1] = 1
    return min(int(pile), 2)


@njit(SIG and SIG.apply, cache=True)
def _apply_row(states: np.ndarray, row: int, params: np.ndarray, action: int) -> None:
    s = states[row]
    s.pile -= action + 1
    s.history[s.history_len] = action
    s.history_len += 1
    if s.pile == 0:
        s.last_taker = s.to_move
    s.to_move = 1 - s.to_move


@njit(SIG and SIG.observe, cache=True)
def _observe_row(states: np.ndarray, row: int, params: np.ndarray, seat: int, out: np.ndarray) -> None:
    s = states[row]
    out[:] = 0.0
    out[s.cards[seat]] = 1.0
    out[10] = np.float32(s.pile / 20)


@njit(SIG and SIG.determinize, cache=True)
def _determinize_row(
    src: np.ndarray,
    src_row: int,
    params: np.ndarray,
    seat: int,
    dst: np.ndarray,
    dst_row: int,
    stream: np.ndarray,
    k: int,
) -> bool:
    dst[dst_row] = src[src_row]
    s = dst[dst_row]
    # the nine cards the seat has not seen, in ascending order (so the draw depends only on what it saw), shuffled
    unseen = np.empty(9, dtype=np.int8)
    n = 0
    for c in range(10):
        if c != s.cards[seat]:
            unseen[n] = c
            n += 1
    shuffle_prefix(unseen, 9, stream, k)
    s.cards[1 - seat] = unseen[0]
    s.deck[:] = unseen[1:]
    return True


# ---------------------------------------------------------------------------------------------- over rows
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
def _apply(states: np.ndarray, rows: np.ndarray, actions: np.ndarray, params: np.ndarray) -> None:
    for k in range(rows.shape[0]):
        _apply_row(states, rows[k], params, actions[k])


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
        _apply(states, rows, actions, _NO_PARAMS)

    def status(self, states: np.ndarray, rows: np.ndarray, current: np.ndarray, returns: np.ndarray) -> None:
        """Seat to move and returns."""
        _status(states, rows, current, returns)

    def masks(self, states: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
        """Take one while any is left, two while two are."""
        _masks(states, rows, out)

    def observe(self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """Own card one-hot and the pile."""
        _observe(states, rows, seats, out)

    def determinize(
        self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, stream: np.ndarray, out: np.ndarray
    ) -> None:
        """The other seat's card and the deck shuffled together (``ToyRules.determinize``)."""
        for k in range(len(rows)):
            _determinize_row(states, int(rows[k]), _NO_PARAMS, int(seats[k]), out, k, stream, k)

    def row_kernels(self) -> RowKernels:
        """The rules of one row for search (no tables: ``NO_PARAMS``)."""
        return RowKernels(_status_row, _legal_row, _apply_row, _observe_row, _determinize_row, _NO_PARAMS)
