"""``BatchedEnv``: N games of one game id in lockstep as arrays, in the style of Pgx and EnvPool.

>>> import jericho_env
>>> env = jericho_env.make_batched("castles", 1024)
>>> obs, mask, player = env.reset(seed=0)               # (N, D) float32, (N, A) int8, (N,) int64
>>> obs, mask, player, rewards, terminated = env.step(actions)

Every row is one game; ``player[i]`` is the seat to move in game ``i`` and ``obs[i]``, ``mask[i]`` are that
seat's observation and legal mask, identical to the AEC env's for the same state and seat. A game that
ends in a step is dealt again at once (auto-reset): that step returns ``terminated[i] = True``, the
finished game's returns in ``rewards[i]`` (one per seat, ``rules.returns``; zeros in the other rows), and
the first observation, mask and player of the new game. With ``potentials=True`` the env also keeps, in
``final_potentials[i]``, each seat's ``rules.potential`` of game ``i``'s final state (grid: the points lead
/ 100, walls: the lead in cards won over the best other seat / 20) when it ends, before the new deal: a
finished game's margin, for learners that regress on it.

The rules run as compiled kernels (``games/<game>/batched.py``, Numba) where the game has them and Numba
is installed (the ``train`` extra); otherwise on the Python rules through the same interface
(``PythonBatchedGame``), with a warning that it is much slower. ``compiled`` says which.

States convert both ways: ``get_state(i)`` is game ``i`` as a Python state (``rules.to_dict`` works on
it), ``set_state(i, state)`` puts a Python state into row ``i``; ``game.to_batched`` and
``game.from_batched`` do the same on any array of rows (``new_states``), for search code.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jericho_env.core.kernels import NUMBA, njit, row_seeds
from jericho_env.core.rules import IllegalActionError, OptionError, Rules
from jericho_env.core.validate import check_optional_seed
from jericho_env.registry import batched_game, make_rules


class BatchedEnv:
    """``num_envs`` games of ``game_id`` in lockstep; see the module docstring.

    ``copy=True`` returns new arrays from ``reset`` and ``step``; ``copy=False`` returns read-only views
    of the env's own buffers, valid until the next call (faster: grid's observations are 35 kB a row).
    ``check=True`` refuses illegal actions (``IllegalActionError`` naming the game, before any game
    changes); ``False`` skips the check for callers that sample from the masks themselves.
    ``potentials=True`` fills ``final_potentials`` (module docstring) as games end.
    """

    def __init__(
        self,
        game_id: str,
        num_envs: int,
        *,
        compiled: bool | None = None,
        copy: bool = True,
        check: bool = True,
        rules: Rules[Any] | None = None,
        potentials: bool = False,
        **options: Any,
    ) -> None:
        if not isinstance(num_envs, (int, np.integer)) or isinstance(num_envs, bool) or num_envs < 1:
            raise OptionError(f"num_envs must be an int >= 1, got {num_envs!r}")
        if compiled not in (None, True, False):
            raise OptionError(f"compiled must be None (auto), True or False, got {compiled!r}")
        self.rules: Rules[Any] = rules if rules is not None else make_rules(game_id, **options)
        self.game = batched_game(self.rules, compiled)
        self.compiled = self.game.compiled
        info = self.rules.info
        self.game_id = game_id
        self.num_envs = n = int(num_envs)
        self.num_players = info.num_players
        self.num_actions = info.num_actions
        self.observation_size = info.observation_size
        self.copy, self.check = bool(copy), bool(check)
        self.states = self.game.new_states(n)
        self.rows = np.arange(n, dtype=np.int64)
        self._obs = np.zeros((n, info.observation_size), dtype=np.float32)
        self._mask = np.zeros((n, info.num_actions), dtype=np.int8)
        self._player = np.full(n, -1, dtype=np.int64)
        self._returns = np.zeros((n, info.num_players), dtype=np.float64)
        self._rewards = np.zeros((n, info.num_players), dtype=np.float64)
        self._terminated = np.zeros(n, dtype=bool)
        self._rng: np.random.Generator | None = None
        self.potentials = bool(potentials)
        # each seat's potential of the last game each row finished (zeros before one ends), with potentials=True
        self.final_potentials = np.zeros((n, info.num_players), dtype=np.float64)

    # ------------------------------------------------------------------ episodes
    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Deal a new game in every row; ``seed`` (an int in 0..2**63-1) seeds the deals (None: fresh entropy)."""
        self._rng = np.random.default_rng(check_optional_seed(seed))
        self._deal(self.rows)
        self._refresh(self.rows)
        return self._out(self._obs), self._out(self._mask), self._out(self._player)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Play ``actions`` (one per game, for its seat to move); see the module docstring for what returns."""
        if self._rng is None:
            raise RuntimeError("call reset() before step()")
        acts = self._checked(actions) if self.check else np.asarray(actions, dtype=np.int64).reshape(-1)
        game = self.game
        game.apply(self.states, self.rows, acts)
        game.status(self.states, self.rows, self._player, self._returns)
        ended = np.flatnonzero(self._player < 0)
        self._terminated[:] = False
        self._rewards[:] = 0.0
        if len(ended):
            self._terminated[ended] = True
            self._rewards[ended] = self._returns[ended]
            if self.potentials:
                self._record_potentials(ended)
            self._deal(ended)
            self._player[ended] = self._status_of(ended)
        self._refresh(self.rows, status=False)
        out = self._out
        return out(self._obs), out(self._mask), out(self._player), out(self._rewards), out(self._terminated)

    def _record_potentials(self, rows: np.ndarray) -> None:
        """Each seat's potential of the finished games ``rows`` into ``final_potentials``."""
        part = np.empty(len(rows), dtype=np.float64)
        for seat in range(self.num_players):
            self.game.potential(self.states, rows, np.full(len(rows), seat, dtype=np.int64), part)
            self.final_potentials[rows, seat] = part

    def _status_of(self, rows: np.ndarray) -> np.ndarray:
        current = np.empty(len(rows), dtype=np.int64)
        returns = np.empty((len(rows), self.num_players), dtype=np.float64)
        self.game.status(self.states, rows, current, returns)
        return current

    def _deal(self, rows: np.ndarray) -> None:
        """New games in ``rows``; any that is over before a move (none in the built-in games) is dealt again."""
        assert self._rng is not None
        pending = rows
        for _ in range(1000):
            self.game.deal(self.states, pending, row_seeds(self._rng, len(pending)))
            pending = pending[self._status_of(pending) < 0]
            if not len(pending):
                return
        raise RuntimeError(f"{self.game_id}: 1000 deals in a row ended before the first move")

    def _refresh(self, rows: np.ndarray, status: bool = True) -> None:
        """Player to move, mask and observation of ``rows`` from their states."""
        if status:
            self._player[rows] = self._status_of(rows)
        if len(rows) == self.num_envs:  # rows is self.rows: the masks in place
            self.game.masks(self.states, rows, self._mask)
        else:
            part = np.empty((len(rows), self.num_actions), dtype=np.int8)
            self.game.masks(self.states, rows, part)
            self._mask[rows] = part
        self.game.observe_rows(self.states, rows, self._player[rows], self._obs)

    def _out(self, a: np.ndarray) -> np.ndarray:
        if self.copy:
            return a.copy()
        view = a.view()
        view.flags.writeable = False
        return view

    def _checked(self, actions: Any) -> np.ndarray:
        """``actions`` as int64, one per game, each legal; else the error of the first bad one."""
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,):
            raise ValueError(f"step() takes {self.num_envs} actions (one per game), got shape {acts.shape}")
        if not np.issubdtype(acts.dtype, np.integer):
            raise IllegalActionError(f"actions must be integers, got dtype {acts.dtype}")
        acts = acts.astype(np.int64, copy=False)
        bad = np.flatnonzero((acts < 0) | (acts >= self.num_actions))
        if not len(bad):
            bad = np.flatnonzero(self._mask[self.rows, acts] == 0)
        if len(bad):
            i, a = int(bad[0]), int(acts[bad[0]])
            what = self.rules.describe_action(a) if 0 <= a < self.num_actions else "outside the action space"
            raise IllegalActionError(
                f"{self.game_id} game {i}: action {a} ({what}) is not legal for seat {int(self._player[i])}; "
                f"legal: {np.flatnonzero(self._mask[i]).tolist()}; no game was changed"
            )
        return acts

    # ------------------------------------------------------------------ states
    def get_state(self, i: int) -> Any:
        """Game ``i`` as a Python state of the rules (a copy)."""
        return self.game.from_batched(self.states, self._row(i))

    def set_state(self, i: int, state: Any) -> None:
        """Put the Python ``state`` into row ``i`` (checked by a round trip through ``rules.to_dict``)."""
        i = self._row(i)
        self.rules.from_dict(self.rules.to_dict(state))  # StateFormatError for a state play cannot reach
        if self.rules.is_terminal(state):
            raise OptionError("set_state: that game is over; the rows of a batched env hold games in progress")
        self.game.to_batched(state, self.states, i)
        self._refresh(np.array([i], dtype=np.int64))

    def _row(self, i: Any) -> int:
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool) or not 0 <= i < self.num_envs:
            raise IndexError(f"game index must be an int in 0..{self.num_envs - 1}, got {i!r}")
        return int(i)

    def observations(self, seats: Any) -> np.ndarray:
        """Every game's observation from ``seats`` (one per game), e.g. a finished seat's last view."""
        seats = np.asarray(seats, dtype=np.int64).reshape(-1)
        if seats.shape != (self.num_envs,) or ((seats < 0) | (seats >= self.num_players)).any():
            raise ValueError(f"seats: one int in 0..{self.num_players - 1} per game")
        out = np.empty((self.num_envs, self.observation_size), dtype=np.float32)
        self.game.observe(self.states, self.rows, seats, out)
        return out

    def masks(self) -> np.ndarray:
        """The current legal masks (a copy)."""
        return self._mask.copy()


@njit(cache=True)
def _random_legal(masks: np.ndarray, uniforms: np.ndarray, out: np.ndarray) -> None:
    for i in range(masks.shape[0]):
        row = masks[i]
        count = 0
        for a in range(row.shape[0]):
            count += row[a]
        k = int(uniforms[i] * count)
        for a in range(row.shape[0]):
            if row[a]:
                if k == 0:
                    out[i] = a
                    break
                k -= 1


def random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of the int8 ``masks`` (every row with one legal action at least)."""
    out = np.empty(len(masks), dtype=np.int64)
    uniforms = rng.random(len(masks))
    if NUMBA:
        _random_legal(np.ascontiguousarray(masks, dtype=np.int8), uniforms, out)
        return out
    counts = masks.sum(axis=1)
    k = (uniforms * counts).astype(np.int64)
    return np.argmax(np.cumsum(masks, axis=1) > k[:, None], axis=1)


def make_batched(game_id: str, num_envs: int, **kwargs: Any) -> BatchedEnv:
    """``num_envs`` games of ``game_id`` in lockstep (``BatchedEnv``: ``compiled``, ``copy``, ``check``, options)."""
    return BatchedEnv(game_id, num_envs, **kwargs)


__all__ = ["BatchedEnv", "batched_game", "make_batched", "random_actions"]
