"""The batched-rules protocol: a game's rules over many games at once, every state a row of one array.

A game that plays fast in bulk (``games/<game>/batched.py``) subclasses ``BatchedGame``: its state is
one record of a structured numpy dtype (``dtype``), N games are an array of N records, and each
method processes a set of rows in one call of compiled (Numba) code. The Python rules (``Rules``)
stay the reference and the readable specification: a kernel must give the same legal actions, states
(``from_batched`` then ``to_dict``), observations, masks and returns as the Python rules, bit for bit
(``tests/batched_harness.py`` plays thousands of seeded games through both).

``jericho_env.envs.batched.BatchedEnv`` drives any ``BatchedGame`` (``jericho_env.make_batched``); a game
without kernels, or an install without Numba, is driven through ``PythonBatchedGame`` (the Python rules
under the same interface). A game names its kernels with the ``batched`` class attribute of its
``Rules`` subclass (``"module:Class"``), so adding a game stays one folder.

Randomness: ``deal`` and ``determinize`` draw from a per-row stream (``jericho_env.core.kernels``): the
caller passes ``stream``, one fresh ``uint64`` state per row of ``rows`` (``row_seeds``), which the kernel
advances in place. Chance comes only at the deal in the built-in games (decks are shuffled once), so
``apply`` takes no stream.

Search (``agents.search.compiled``) needs one more thing: the rules of one row as compiled functions it can
call from its own compiled code, ``row_kernels()`` (``RowKernels``; None for a game without them, which
search then plays through the Python rules). What a game provides:

* a params dtype and a one-element array of it holding the option-dependent tables the functions read (deck
  sizes, answer tables, observation offsets; ``NO_PARAMS`` when there are none). Its fields have fixed
  shapes, so a table whose size depends on the options takes its shape from the options when the dtype is
  built (each option set is then compiled once);
* five functions, each ``@njit(<signature>, cache=True)`` with the explicit signature of
  ``jericho_env.core.kernels.row_signatures(dtype, params_dtype)`` (without it they cannot be passed to
  compiled code as values, or the code that calls them is compiled again in every process):

  ================ ===========================================================================================
  ``status``       ``(states, row, params, returns) -> seat to move or -1``; ``returns`` (float64, one per
                   seat) gets ``rules.returns`` (zeros before the end)
  ``legal``        ``(states, row, params, out) -> count``: the legal actions into ``out`` (int64, room for
                   ``num_actions``), the same set as ``rules.legal_actions`` (any order, fixed by the state)
  ``apply``        ``(states, row, params, action)``: ``rules.apply_unchecked`` (a legal action)
  ``observe``      ``(states, row, params, seat, out)``: ``rules.observe(state, seat)`` into ``out``
                   (float32, the whole row written), bit for bit
  ``determinize``  ``(src, src_row, params, seat, dst, dst_row, stream, k) -> ok``: ``dst[dst_row]`` becomes
                   ``src[src_row]`` with what ``seat`` cannot see redealt, as ``rules.determinize`` (same
                   support and weights), drawing from ``stream[k]``; ``dst`` may be ``src`` (in place);
                   False when no deal fits what the seat saw (a hand-made, impossible state)
  ================ ===========================================================================================

  ``row`` indexes a one-dimensional, C-contiguous array of the game's ``dtype``; every integer is int64.
  The functions allocate nothing per call where they can avoid it (search calls them millions of times).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar

import numpy as np

from jericho_env.core.rules import Rules

S = TypeVar("S")


class RowKernels(NamedTuple):
    """A game's rules for one row as compiled functions (see the module docstring), plus their tables.

    Each function is a Numba dispatcher compiled with its explicit signature (``row_signatures``), so compiled
    callers receive it as a first-class function value.
    """

    status: Any
    legal: Any
    apply: Any
    observe: Any
    determinize: Any
    params: np.ndarray  # one record of the game's params dtype: the tables the functions read


class BatchedGame(ABC, Generic[S]):
    """A game's rules over rows of a structured array; see the module docstring.

    Conventions for every method: ``states`` is the array of records (``new_states``), ``rows`` an int64
    array of row indices (distinct), and per-row inputs and outputs are indexed like ``rows`` unless
    said otherwise. Methods never allocate per row; outputs are written into arrays the caller owns.
    """

    #: whether the methods run compiled code (``PythonBatchedGame`` sets False)
    compiled: ClassVar[bool] = True

    def __init__(self, rules: Rules[S]) -> None:
        self.rules = rules
        self.info = rules.info

    # ------------------------------------------------------------------ layout of a state
    @property
    @abstractmethod
    def dtype(self) -> np.dtype[Any]:
        """One game's state as a structured dtype (fixed size: decks as arrays plus a length, and so on)."""

    def new_states(self, count: int) -> np.ndarray:
        """``count`` rows of zeros (not games yet: ``deal`` or ``set_state`` fills them)."""
        return np.zeros(count, dtype=self.dtype)

    @abstractmethod
    def to_batched(self, state: S, states: np.ndarray, row: int) -> None:
        """Write the Python ``state`` into ``states[row]`` (every field: ``from_batched`` gives it back equal)."""

    @abstractmethod
    def from_batched(self, states: np.ndarray, row: int) -> S:
        """The Python state of ``states[row]`` (a new object: ``rules.to_dict`` of it equals the kernel's state)."""

    # ------------------------------------------------------------------ the state machine
    @abstractmethod
    def deal(self, states: np.ndarray, rows: np.ndarray, stream: np.ndarray) -> None:
        """A new game in each of ``rows``, every chance event drawn from ``stream`` (one state per row of ``rows``).

        The deal must have the distribution of ``rules.initial_state`` (the same shuffles, uniform), not its
        random stream: a seed gives the same deals run after run, but other deals than the Python rules.
        """

    @abstractmethod
    def apply(self, states: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> None:
        """Play ``actions[k]`` for the seat to move in ``states[rows[k]]``; every action legal (not checked)."""

    @abstractmethod
    def status(self, states: np.ndarray, rows: np.ndarray, current: np.ndarray, returns: np.ndarray) -> None:
        """``current[k]``: the seat to move in ``states[rows[k]]`` (-1 once over); ``returns[k]``: its returns.

        ``current`` is int64 of ``len(rows)``; ``returns`` float64 of shape ``(len(rows), num_players)``,
        ``rules.returns`` (zeros before the end).
        """

    @abstractmethod
    def masks(self, states: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
        """``out[k]``: the int8 legal mask of ``states[rows[k]]`` (``rules.legal_mask``; zeros once over)."""

    @abstractmethod
    def observe(self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """``out[k]``: ``rules.observe(states[rows[k]], seats[k])`` as float32 (the whole row written)."""

    # ------------------------------------------------------------------ optional: faster paths, search
    def observe_rows(self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """As ``observe``, but ``out[rows[k]]`` is row ``rows[k]`` of a buffer this object wrote before.

        The batched env keeps one observation buffer of ``num_envs`` rows and calls this every step; a
        game whose observations are large and sparse (grid) overrides it to rewrite only what changed
        since its previous call for that row. The default writes every row in full.
        """
        scratch = np.empty((len(rows), out.shape[1]), dtype=np.float32)
        self.observe(states, rows, seats, scratch)
        out[rows] = scratch

    def potential(self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """``out[k]``: ``rules.potential(state, seats[k])`` of ``states[rows[k]]`` (float64), for reward shaping.

        The default is 0 where the rules keep ``Rules.potential`` (0 everywhere), else it asks the rules on
        each row's Python state (``from_batched``); a game with a potential may compute it from the rows.
        """
        if type(self.rules).potential is Rules.potential:
            out[: len(rows)] = 0.0
            return
        for k, i in enumerate(rows.tolist()):
            out[k] = self.rules.potential(self.from_batched(states, i), int(seats[k]))

    def determinize(
        self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, stream: np.ndarray, out: np.ndarray
    ) -> None:
        """``out[k]``: ``states[rows[k]]`` with what ``seats[k]`` cannot see redealt, as ``rules.determinize`` does.

        The same support and weights as the Python rules' determinization (not its random stream); ``out``
        is another array of this dtype with ``len(rows)`` rows. Games without it raise NotImplementedError.
        """
        raise NotImplementedError(f"{self.info.game_id}: no compiled determinize")

    def rollout(self, states: np.ndarray, rows: np.ndarray, stream: np.ndarray, returns: np.ndarray) -> None:
        """Play each of ``rows`` to the end with uniformly random legal actions; ``returns[k]``: its returns.

        The rows' states end over (callers pass copies). Random playouts of search (``ismcts``); games
        without it raise NotImplementedError.
        """
        raise NotImplementedError(f"{self.info.game_id}: no compiled rollout")

    def row_kernels(self) -> RowKernels | None:
        """The per-row compiled functions search calls (``RowKernels``), or None: search uses the Python rules."""
        return None


class PythonBatchedGame(BatchedGame[Any]):
    """The Python rules under the batched interface: rows hold state objects (``dtype`` object).

    Used for games without kernels and where Numba is not installed; every method loops in Python over
    ``rules``, so it is as fast as the AEC env's engine, not faster.
    """

    compiled = False

    @property
    def dtype(self) -> np.dtype[Any]:
        """Object rows: each holds a Python state."""
        return np.dtype(object)

    def new_states(self, count: int) -> np.ndarray:
        """``count`` empty rows (None)."""
        return np.full(count, None, dtype=object)

    def to_batched(self, state: Any, states: np.ndarray, row: int) -> None:
        """A copy of ``state`` into ``states[row]``."""
        states[row] = self.rules.clone(state)

    def from_batched(self, states: np.ndarray, row: int) -> Any:
        """A copy of the state in ``states[row]``."""
        return self.rules.clone(states[row])

    def deal(self, states: np.ndarray, rows: np.ndarray, stream: np.ndarray) -> None:
        """``rules.initial_state`` with a generator seeded by each row's stream state."""
        for k, i in enumerate(rows):
            states[i] = self.rules.initial_state(np.random.default_rng(int(stream[k])))

    def apply(self, states: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> None:
        """``rules.apply_unchecked`` row by row."""
        apply = self.rules.apply_unchecked
        for k, i in enumerate(rows):
            apply(states[i], int(actions[k]))

    def status(self, states: np.ndarray, rows: np.ndarray, current: np.ndarray, returns: np.ndarray) -> None:
        """``rules.current_player`` and ``rules.returns`` row by row."""
        rules = self.rules
        for k, i in enumerate(rows):
            current[k] = rules.current_player(states[i])
            returns[k] = rules.returns(states[i]) if current[k] < 0 else 0.0

    def masks(self, states: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
        """``rules.legal_actions`` row by row, set in one assignment."""
        legal = self.rules.legal_actions
        columns: list[int] = []
        counts: list[int] = []
        for i in rows:
            actions = legal(states[i])
            columns += actions
            counts.append(len(actions))
        out[: len(rows)] = 0
        out[np.repeat(np.arange(len(rows)), counts), columns] = 1

    def observe(self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """``rules.observe_into`` over the rows."""
        self.rules.observe_into(out[: len(rows)], [states[i] for i in rows], [int(s) for s in seats])

    def potential(self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """``rules.potential`` row by row."""
        for k, i in enumerate(rows.tolist()):
            out[k] = self.rules.potential(states[i], int(seats[k]))

    def determinize(
        self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, stream: np.ndarray, out: np.ndarray
    ) -> None:
        """``rules.determinize`` with a generator seeded by each row's stream state."""
        for k, i in enumerate(rows):
            out[k] = self.rules.determinize(states[i], int(seats[k]), np.random.default_rng(int(stream[k])))

    def rollout(self, states: np.ndarray, rows: np.ndarray, stream: np.ndarray, returns: np.ndarray) -> None:
        """Random legal actions until the end, with a generator seeded by each row's stream state."""
        rules = self.rules
        for k, i in enumerate(rows):
            s, rng = states[i], np.random.default_rng(int(stream[k]))
            while not rules.is_terminal(s):
                legal = rules.legal_actions(s)
                rules.apply_unchecked(s, legal[int(rng.integers(len(legal)))])
            returns[k] = rules.returns(s)


__all__ = ["BatchedGame", "PythonBatchedGame", "RowKernels"]
