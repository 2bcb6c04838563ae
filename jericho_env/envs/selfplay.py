"""Batched self-play: N games in lockstep, one learner seat each, opponents asked once per batch.

``SelfPlayVector`` drives ``num_envs`` games of one game id through the game's batched rules (no per-game
AEC env): the games are the rows of one array of the game's compiled state (``games/<game>/batched.py``,
``jericho_env.core.batched``), and each round applies, checks the status of, masks and observes all of its
games in one compiled call. A game without kernels, or an install without Numba, runs the same loop on
the Python rules (``PythonBatchedGame``; ``compiled=False`` asks for it, ``True`` insists on the kernels);
both play the same games for the same seeds, bit for bit (a test checks it). The deals still come from the
Python rules' seeded ``initial_state``, converted into the rows (``to_batched``), so a seed deals what it
dealt before the kernels existed; ``states`` gives the games back as Python states.

After the learner's actions are applied, every game advances to its learner's
next decision; at each round of that advance, every opponent policy that has games waiting is called
**once** with all of them: ``policy(observations, masks) -> actions``, observations a
``(B, observation_size)`` float32 array and masks a ``(B, num_actions)`` bool array. A network
snapshot thus costs one forward pass per round, not one per game.

Episode bookkeeping follows ``jericho_env.single_agent`` (``SingleAgentEnv``) exactly: per game a
generator seeded like Gymnasium's ``np_random(seed)``; per episode the learner's seat, then each
other seat's opponent drawn from the pool (plus a seed drawn per seat, as the single-agent view
draws to reset its opponents), then the deal's seed; a game that ends before the learner moves is
dealt again; the reward is the learner's return, paid on the step that ends the game. With the same
seeds and deterministic opponents both views play the same games (a test checks it).

With ``shaping`` > 0 the reward of every learner step also pays ``shaping`` times the change of the
learner's ``rules.potential`` since its previous decision (grid: its points lead, walls: its lead in cards
won; ``BatchedGame.potential`` reads it from the rows), the potential counting as 0 at the start and at the
end of a game: potential-based shaping (Ng, Harada and Russell, 1999), which moves credit earlier in the
game without changing any episode's return (``episode["r"]`` stays the game's outcome).

Games restart on their own (as in Stable-Baselines3's vector envs): the step that ends a game
returns the first observation of the next one, and ``infos[i]`` carries ``terminal_observation``,
the learner's ``seat``, and ``episode`` (return, length in learner steps). ``SelfPlayVecEnv`` in
``jericho_env.envs.sb3`` wraps this class as a Stable-Baselines3 ``VecEnv`` for MaskablePPO.

This module imports nothing from ``agents``: opponents are plain callables. The ``agents`` package
provides batch policies for its agents (random, greedy, PPO snapshots, search). A policy with a
``joint`` attribute other than None is asked together with the other waiting policies of the same
``joint`` object, in one call ``joint([(policy, observations, masks), ...])`` that returns one action
array per policy (``agents.batch.NetworkBatchPolicy(joint=True)``: network snapshots of one architecture
in one forward pass). A policy with
``uses_views = True`` (a searching agent, ``agents.batch.AgentBatchPolicy`` over ``ismcts``) is first
handed ``observe_views(views)``: per row, its seat's *information view*, the Python state of the row
(``from_batched``) redealt by ``rules.determinize`` from what that seat has seen (as
``JerichoEnv.information_view`` gives a single agent), drawn with a generator of the vector's own seed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium.utils.seeding import np_random

from jericho_env.agent_plugins import make_batch_policy
from jericho_env.core.batched import BatchedGame
from jericho_env.core.rules import IllegalActionError, OptionError, Rules
from jericho_env.core.validate import check_optional_seed, check_seed
from jericho_env.registry import batched_game, make_rules
from jericho_env.user_agents import batch_policy_of

BatchPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]


class RandomBatchPolicy:
    """Uniform over each row's legal actions; reads only the masks (no observation is encoded for it)."""

    name = "random"
    uses_observation = False

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(check_optional_seed(seed))

    def __call__(self, observations: np.ndarray | None, masks: np.ndarray) -> np.ndarray:
        # the k-th legal action with k uniform: cumulative counts along each row
        counts = masks.sum(axis=1)
        k = (self.rng.random(len(masks)) * counts).astype(np.int64)
        cum = np.cumsum(masks, axis=1)
        return np.argmax(cum > k[:, None], axis=1)


def _as_batch_policy(
    p: Any, game_id: str | None = None, options: dict[str, Any] | None = None, seed: int | None = None
) -> Any:
    if p is None or (isinstance(p, str) and p == "random"):
        return RandomBatchPolicy()
    if isinstance(p, str) and game_id is not None:  # an agent name ("greedy", "ppo=PATH"), built for this game
        return make_batch_policy(p, game_id, seed=seed, **(options or {}))
    if not callable(p) and (hasattr(p, "act") or hasattr(p, "act_batch")):  # an agent object: act_batch or act
        return batch_policy_of(p)
    if callable(p):
        return p
    raise OptionError(
        f"opponent {p!r} is not a batch policy: pass an agent name ('random', 'greedy', ...; "
        "jericho_env.agent_plugins.agent_names(game_id) lists them), an agent (act, or act_batch) or a callable "
        "(observations, masks) -> actions"
    )


def checked_actions(actions: Any, masks: np.ndarray, describe: Callable[[int], str] | None = None) -> np.ndarray:
    """``actions`` (one per row of ``masks``) as int64, or the error of the first that is not legal.

    ``ValueError`` for the wrong count; ``IllegalActionError`` for a non-integer, an action outside the
    space or one its row's mask does not allow, naming the game (row), ``describe(action)`` and the legal ones.
    """
    acts = np.asarray(actions).reshape(-1)
    n, num_actions = masks.shape
    if acts.shape[0] != n:
        raise ValueError(f"step() takes {n} actions (one per game), got {acts.shape[0]}")
    if not np.issubdtype(acts.dtype, np.integer):
        if not np.all(np.isfinite(acts)) or not np.all(acts == np.round(acts)):
            raise IllegalActionError(f"actions must be integers, got {acts!r}")
        acts = acts.astype(np.int64)
    bad = np.flatnonzero((acts < 0) | (acts >= num_actions))
    if len(bad) == 0:
        bad = np.flatnonzero(~masks[np.arange(n), acts])
    if len(bad):
        i = int(bad[0])
        a = int(acts[i])
        what = "outside the action space" if not 0 <= a < num_actions else (describe(a) if describe else "")
        raise IllegalActionError(
            f"game {i}: learner action {a} ({what}) is not legal; legal: {np.flatnonzero(masks[i]).tolist()}"
        )
    return acts


class SelfPlayVector:
    """``num_envs`` games of ``game_id`` in lockstep, each with one learner seat; see the module docstring."""

    render_mode = None  # nothing to render: Stable-Baselines3's VecEnv asks

    def __init__(
        self,
        game_id: str,
        num_envs: int,
        opponents: Any | Sequence[Any] = "random",
        seat: int | str = "random",
        seed: int | None = None,
        rules: Rules[Any] | None = None,
        shaping: float = 0.0,
        compiled: bool | None = None,
        **options: Any,
    ) -> None:
        if not isinstance(num_envs, (int, np.integer)) or isinstance(num_envs, bool) or num_envs < 1:
            raise OptionError(f"num_envs must be an int >= 1, got {num_envs!r}")
        if compiled not in (None, True, False):
            raise OptionError(f"compiled must be None (auto), True or False, got {compiled!r}")
        self.rules: Rules[Any] = rules if rules is not None else make_rules(game_id, **options)
        self.game_id = game_id
        info = self.rules.info
        self.num_envs = int(num_envs)
        self.num_players = info.num_players
        self.num_actions = info.num_actions
        self.observation_size = info.observation_size
        if not (
            seat == "random"
            or (isinstance(seat, (int, np.integer)) and not isinstance(seat, bool) and 0 <= seat < self.num_players)
        ):
            raise OptionError(f"seat={seat!r} is not allowed: use 'random' or an int in 0..{self.num_players - 1}")
        self.seat_choice = seat
        pool = list(opponents) if isinstance(opponents, (list, tuple)) else [opponents]
        if not pool:
            raise OptionError("opponents must not be empty")
        seed = check_optional_seed(seed)
        # agent names are built for this game and options, each seeded from the vector's seed
        self._name_seeds = np.random.default_rng(None if seed is None else [int(seed), 0xA6E7])
        self.pool: list[Any] = [self._batch_policy(p) for p in pool]
        self._fixed = len(self.pool)
        if not (isinstance(shaping, (int, float)) and np.isfinite(shaping) and shaping >= 0):
            raise OptionError(f"shaping must be a finite number >= 0, got {shaping!r}")
        self.shaping = float(shaping)
        # the games: rows of the game's batched state (compiled kernels where it has them and Numba is here)
        self.game: BatchedGame[Any] = batched_game(self.rules, compiled)
        self.compiled = self.game.compiled
        n = self.num_envs
        self.batch = self.game.new_states(n)
        self.rows = np.arange(n, dtype=np.int64)
        self._current = np.full(n, -1, dtype=np.int64)  # the seat to move in each game (-1: over)
        self._returns = np.zeros((n, self.num_players), dtype=np.float64)  # each game's returns once over
        self._rngs: list[np.random.Generator] = []
        self.seats = np.zeros(n, dtype=np.int64)
        # the opponent policy of each game and seat (None in the learner's seat), and the same as numbers
        # (``_policies[number]``, -1 for the learner) for grouping the games of a round without a Python loop
        self.opponents: list[list[Any]] = [[None] * self.num_players for _ in range(n)]
        self._opp = np.full((n, self.num_players), -1, dtype=np.int64)
        self._policies: list[Any] = []
        self._numbers: dict[int, int] = {}  # id(policy) -> its number (the list keeps it alive: ids stay unique)
        self.deal_seeds = np.zeros(n, dtype=np.int64)  # the env seed of each game's deal (replays it exactly)
        self.episode_lengths = np.zeros(n, dtype=np.int64)
        self.episode_starts = np.zeros(n, dtype=np.float64)
        self._obs = np.zeros((n, self.observation_size), dtype=np.float32)  # observe_rows keeps it up to date
        self._mask8 = np.zeros((n, self.num_actions), dtype=np.int8)
        self._masks = self._mask8.view(np.bool_)  # the kernels' 0/1 bytes read as bools: no copy
        self.opponent_calls = 0  # batched calls made (for profiling)
        self.opponent_decisions = 0
        self._potential = np.zeros(n)  # the learner's potential at its last decision (shaping)
        self._seed = seed = check_optional_seed(seed)
        self._view_rng = np.random.default_rng(None if seed is None else [int(seed), 0x5EA4C4])
        self._needs_reset = True

    # ------------------------------------------------------------------ pool
    def add_opponent(self, policy: Any, max_added: int | None = None) -> None:
        """Add ``policy`` to the pool; beyond ``max_added`` added ones, the oldest added is dropped.

        Games in progress keep the opponents they drew (a dropped policy finishes its games).
        """
        self.pool.append(self._batch_policy(policy))
        if max_added is not None and len(self.pool) - self._fixed > max_added:
            del self.pool[self._fixed]
        self._forget_unused()

    def set_opponents(self, policies: Sequence[Any]) -> None:
        """Replace the pool (all of it counts as given at construction); takes effect at the next episodes."""
        self.pool = [self._batch_policy(p) for p in policies]
        self._fixed = len(self.pool)
        self._needs_reset = True
        self._forget_unused()

    def _batch_policy(self, p: Any) -> Any:
        seed = int(self._name_seeds.integers(2**62)) if isinstance(p, str) else None
        return _as_batch_policy(p, self.game_id, dict(self.rules.options), seed)

    def _number(self, policy: Any) -> int:
        """The number of ``policy`` in ``_policies`` (given one the first time it plays)."""
        number = self._numbers.get(id(policy))
        if number is None:
            number = self._numbers[id(policy)] = len(self._policies)
            self._policies.append(policy)
        return number

    def _forget_unused(self) -> None:
        """Let go of the policies that left the pool and play no game any more."""
        playing = set(np.unique(self._opp).tolist())
        pooled = {id(p) for p in self.pool}
        for key, number in list(self._numbers.items()):
            if key not in pooled and number not in playing:
                del self._numbers[key]
                self._policies[number] = None

    @property
    def states(self) -> list[Any]:
        """Every game as a Python state of the rules (copies: the games are the rows of ``batch``)."""
        return [self.game.from_batched(self.batch, i) for i in range(self.num_envs)]

    # ------------------------------------------------------------------ episodes
    def seed(self, seed: int | None) -> None:
        """Seed the games: game ``i`` gets the generator Gymnasium's ``np_random(seed + i)`` gives."""
        self._seed = check_optional_seed(seed)
        self._needs_reset = True

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Start a game in every slot; return (observations, masks) of the learners."""
        if seed is not None:
            self._seed = check_seed(seed)
        base = self._seed
        self._rngs = [np_random(None if base is None else base + i)[0] for i in range(self.num_envs)]
        self._new_episodes(self.rows)
        self._advance(self.rows)
        self._redeal_finished(self.rows)
        self._needs_reset = False
        self._encode()
        return self._obs.copy(), self._masks.copy()

    def _new_episodes(self, ids: np.ndarray) -> None:
        """A new episode in each game of ``ids``: seat, opponents and deal drawn from the game's generator."""
        for i in ids.tolist():
            self._new_episode(i)
        self._status(ids)

    def _new_episode(self, i: int) -> None:
        rng = self._rngs[i]
        n = self.num_players
        seat = int(rng.integers(n)) if self.seat_choice == "random" else int(self.seat_choice)
        self.seats[i] = seat
        row = self.opponents[i]
        for s in range(n):
            row[s] = None
            self._opp[i, s] = -1
            if s != seat:
                row[s] = policy = self.pool[int(rng.integers(len(self.pool)))]
                self._opp[i, s] = self._number(policy)
                rng.integers(2**62)  # the single-agent view reseeds each opponent here: keep the streams equal
        self.deal_seeds[i] = int(rng.integers(2**62))
        # the deal of the Python rules from the deal's seed (the same games as the single-agent view), as a row
        state = self.rules.initial_state(np.random.default_rng(int(self.deal_seeds[i])))
        self.game.to_batched(state, self.batch, i)
        self.episode_lengths[i] = 0
        self.episode_starts[i] = time.perf_counter()
        self._potential[i] = 0.0

    def _status(self, ids: np.ndarray) -> None:
        """The seat to move and the returns of the games ``ids`` into ``_current`` and ``_returns``."""
        if len(ids) == self.num_envs:  # ids is every game in order: in place
            self.game.status(self.batch, self.rows, self._current, self._returns)
            return
        current = np.empty(len(ids), dtype=np.int64)
        returns = np.empty((len(ids), self.num_players), dtype=np.float64)
        self.game.status(self.batch, ids, current, returns)
        self._current[ids] = current
        self._returns[ids] = returns

    def _redeal_finished(self, ids: np.ndarray) -> None:
        """Deal again every game in ``ids`` that ended before its learner moved."""
        again = ids[self._current[ids] < 0]
        while len(again):
            self._new_episodes(again)
            self._advance(again)
            again = again[self._current[again] < 0]

    def _waiting(self, ids: np.ndarray) -> np.ndarray:
        """The games of ``ids`` where an opponent is to move."""
        current = self._current[ids]
        return ids[(current >= 0) & (current != self.seats[ids])]

    def _advance(self, ids: np.ndarray) -> None:
        """Play the opponents of the games ``ids`` until each is at its learner's turn or over."""
        waiting = self._waiting(ids)
        while len(waiting):
            numbers = self._opp[waiting, self._current[waiting]]
            # one group per policy, in the order of the first game each plays (the games in ascending order)
            found, first = np.unique(numbers, return_index=True)
            joints: dict[int, tuple[Any, list[tuple[Any, np.ndarray]]]] = {}
            for number in found[np.argsort(first)].tolist():
                policy = self._policies[number]
                members = waiting[numbers == number]
                joint = getattr(policy, "joint", None)
                if joint is None:
                    self._play_opponent(policy, members)
                else:  # asked together with the other waiting policies of the same joint, below
                    joints.setdefault(id(joint), (joint, []))[1].append((policy, members))
            for joint, parts in joints.values():
                self._play_joint(joint, parts)
            self._status(waiting)
            waiting = self._waiting(waiting)

    def _opponent_inputs(self, policy: Any, members: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
        """(observations or None, masks) of the games ``members`` for their movers, as ``policy`` reads them."""
        game = self.game
        movers = self._current[members]
        masks = np.empty((len(members), self.num_actions), dtype=np.int8)
        game.masks(self.batch, members, masks)
        obs = None
        if getattr(policy, "uses_observation", True):
            obs = np.empty((len(members), self.observation_size), dtype=np.float32)
            game.observe(self.batch, members, movers, obs)
        if getattr(policy, "uses_views", False):  # a search: the seats' information views first
            determinize = self.rules.determinize
            views = [
                determinize(game.from_batched(self.batch, i), p, self._view_rng)
                for i, p in zip(members.tolist(), movers.tolist(), strict=True)
            ]
            policy.observe_views(views)
        return obs, masks.view(np.bool_)

    def _play_opponent(self, policy: Any, members: np.ndarray) -> None:
        obs, masks = self._opponent_inputs(policy, members)
        self._apply_opponent(policy, members, masks, policy(obs, masks))

    def _play_joint(self, joint: Any, parts: list[tuple[Any, np.ndarray]]) -> None:
        """One call of ``joint`` for several policies' games: ``joint([(policy, obs, masks), ...])`` -> actions each."""
        inputs = [self._opponent_inputs(policy, members) for policy, members in parts]
        answers = list(joint([(policy, obs, masks) for (policy, _), (obs, masks) in zip(parts, inputs, strict=True)]))
        if len(answers) != len(parts):
            raise ValueError(f"joint {joint!r} answered {len(answers)} of {len(parts)} policies")
        self.opponent_calls += 1 - len(parts)  # one call in all (each part below counts one)
        for (policy, members), (_, masks), actions in zip(parts, inputs, answers, strict=True):
            self._apply_opponent(policy, members, masks, actions)

    def _apply_opponent(self, policy: Any, members: np.ndarray, masks: np.ndarray, answer: Any) -> None:
        """Check ``policy``'s ``answer`` (one action per game of ``members``) against ``masks`` and play it.

        An illegal action raises ``IllegalActionError`` naming the policy and the game; none of the
        answer's actions is played then.
        """
        actions = np.asarray(answer).reshape(-1)
        self.opponent_calls += 1
        self.opponent_decisions += len(members)
        if len(actions) != len(members):
            raise ValueError(
                f"opponent {getattr(policy, 'name', policy)!r} returned {len(actions)} actions for {len(members)} games"
            )
        acts = actions.astype(np.int64)  # as int(action) reads each: toward zero
        inside = (acts >= 0) & (acts < self.num_actions)
        legal = inside & masks[np.arange(len(acts)), np.where(inside, acts, 0)]
        if not legal.all():
            j = int(np.flatnonzero(~legal)[0])
            a = int(acts[j])
            raise IllegalActionError(
                f"opponent {getattr(policy, 'name', policy)!r} chose illegal action {a} "
                f"({self.rules.describe_action(a) if 0 <= a < self.num_actions else 'out of range'}) "
                f"in game {int(members[j])}"
            )
        self.game.apply(self.batch, members, acts)  # checked against the masks above

    def _encode(self) -> None:
        """The learners' observations and masks of every game into ``_obs`` and ``_masks``."""
        self.game.observe_rows(self.batch, self.rows, self.seats, self._obs)
        self.game.masks(self.batch, self.rows, self._mask8)  # zeros for a game that is over

    # ------------------------------------------------------------------ stepping
    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Play the learners' ``actions`` (one per game); return (observations, rewards, dones, infos).

        An illegal learner action raises ``IllegalActionError`` naming the game, before any game changes.
        """
        if self._needs_reset:
            raise RuntimeError("call reset() before step() (and after set_opponents or seed)")
        acts = checked_actions(actions, self._masks, self.rules.describe_action)
        n = self.num_envs
        self.game.apply(self.batch, self.rows, acts)  # checked against the masks above
        self.episode_lengths += 1
        self._status(self.rows)
        self._advance(self.rows)
        rewards = np.zeros(n, dtype=np.float32)
        dones = np.zeros(n, dtype=bool)
        infos: list[dict[str, Any]] = [{} for _ in range(n)]
        finished = np.flatnonzero(self._current < 0)
        if self.shaping:  # potential-based: the change of the learner's potential since its last move
            now = np.zeros(n)  # 0 once a game is over
            live = np.flatnonzero(self._current >= 0)
            part = np.empty(len(live))
            self.game.potential(self.batch, live, self.seats[live], part)
            now[live] = part
            rewards[:] = self.shaping * (now - self._potential)
            self._potential[:] = now
        if len(finished):
            self._finish(finished, rewards, dones, infos)
            self._new_episodes(finished)
            self._advance(finished)
            self._redeal_finished(finished)
        self._encode()
        return self._obs.copy(), rewards, dones, infos

    def _finish(
        self, finished: np.ndarray, rewards: np.ndarray, dones: np.ndarray, infos: list[dict[str, Any]]
    ) -> None:
        """The rewards, dones and infos of the games ``finished`` (over, not dealt again yet)."""
        now = time.perf_counter()
        seats = self.seats[finished]
        last = np.empty((len(finished), self.observation_size), dtype=np.float32)
        self.game.observe(self.batch, finished, seats, last)
        for j, i in enumerate(finished.tolist()):
            seat = int(seats[j])
            returns = self._returns[i].tolist()
            r = float(returns[seat])
            rewards[i] += r
            dones[i] = True
            infos[i] = {
                "terminal_observation": last[j].copy(),
                "seat": seat,
                "returns": returns,
                "episode": {"r": r, "l": int(self.episode_lengths[i]), "t": round(now - self.episode_starts[i], 6)},
            }

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, (num_envs, num_actions) bool."""
        return self._masks.copy()
