"""The batched self-play loop as it was before the batched engine: one Python state per game, the rules row by row.

Kept verbatim (``jericho_env/envs/selfplay.py`` at the commit before the engine, class renamed, the pool's
helpers imported) as the reference ``tests/test_selfplay_engine.py`` compares today's ``SelfPlayVector``
with: the same seeds must give the same games, rewards, infos, opponents' inputs and information views.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.utils.seeding import np_random

from jericho_env.core.rules import IllegalActionError, OptionError, Rules
from jericho_env.core.validate import check_optional_seed, check_seed
from jericho_env.envs.selfplay import _as_batch_policy, checked_actions
from jericho_env.registry import make_rules


class ReferenceSelfPlayVector:
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
        **options: Any,
    ) -> None:
        if not isinstance(num_envs, (int, np.integer)) or isinstance(num_envs, bool) or num_envs < 1:
            raise OptionError(f"num_envs must be an int >= 1, got {num_envs!r}")
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
        self.pool: list[Any] = [_as_batch_policy(p) for p in pool]
        self._fixed = len(self.pool)
        n = self.num_envs
        self._rngs: list[np.random.Generator] = []
        self.states: list[Any] = [None] * n
        self.seats = np.zeros(n, dtype=np.int64)
        # the opponent policy of each game and seat (None in the learner's seat)
        self.opponents: list[list[Any]] = [[None] * self.num_players for _ in range(n)]
        self.deal_seeds = np.zeros(n, dtype=np.int64)  # the env seed of each game's deal (replays it exactly)
        self.episode_lengths = np.zeros(n, dtype=np.int64)
        self.episode_starts = np.zeros(n, dtype=np.float64)
        self._obs = np.zeros((n, self.observation_size), dtype=np.float32)
        self._masks = np.zeros((n, self.num_actions), dtype=bool)
        self.opponent_calls = 0  # batched calls made (for profiling)
        self.opponent_decisions = 0
        if not (isinstance(shaping, (int, float)) and np.isfinite(shaping) and shaping >= 0):
            raise OptionError(f"shaping must be a finite number >= 0, got {shaping!r}")
        self.shaping = float(shaping)
        self._potential = np.zeros(n)  # the learner's potential at its last decision (shaping)
        self._seed = seed = check_optional_seed(seed)
        self._view_rng = np.random.default_rng(None if seed is None else [int(seed), 0x5EA4C4])
        self._needs_reset = True

    # ------------------------------------------------------------------ pool
    def add_opponent(self, policy: Any, max_added: int | None = None) -> None:
        """Add ``policy`` to the pool; beyond ``max_added`` added ones, the oldest added is dropped.

        Games in progress keep the opponents they drew (a dropped policy finishes its games).
        """
        self.pool.append(_as_batch_policy(policy))
        if max_added is not None and len(self.pool) - self._fixed > max_added:
            del self.pool[self._fixed]

    def set_opponents(self, policies: Sequence[Any]) -> None:
        """Replace the pool (all of it counts as given at construction); takes effect at the next episodes."""
        self.pool = [_as_batch_policy(p) for p in policies]
        self._fixed = len(self.pool)
        self._needs_reset = True

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
        for i in range(self.num_envs):
            self._new_episode(i)
        self._advance(list(range(self.num_envs)))
        self._redeal_finished(list(range(self.num_envs)))
        self._needs_reset = False
        self._encode(range(self.num_envs))
        return self._obs.copy(), self._masks.copy()

    def _new_episode(self, i: int) -> None:
        rng = self._rngs[i]
        n = self.num_players
        seat = int(rng.integers(n)) if self.seat_choice == "random" else int(self.seat_choice)
        self.seats[i] = seat
        row = self.opponents[i]
        for s in range(n):
            row[s] = None
            if s != seat:
                row[s] = self.pool[int(rng.integers(len(self.pool)))]
                rng.integers(2**62)  # the single-agent view reseeds each opponent here: keep the streams equal
        self.deal_seeds[i] = int(rng.integers(2**62))
        self.states[i] = self.rules.initial_state(np.random.default_rng(int(self.deal_seeds[i])))
        self.episode_lengths[i] = 0
        self.episode_starts[i] = time.perf_counter()
        self._potential[i] = 0.0

    def _redeal_finished(self, ids: list[int]) -> None:
        """Deal again every game in ``ids`` that ended before its learner moved."""
        terminal = self.rules.is_terminal
        again = [i for i in ids if terminal(self.states[i])]
        while again:
            for i in again:
                self._new_episode(i)
            self._advance(again)
            again = [i for i in again if terminal(self.states[i])]

    def _advance(self, ids: list[int]) -> None:
        """Play the opponents of the games ``ids`` until each is at its learner's turn or over."""
        rules = self.rules
        current, terminal = rules.current_player, rules.is_terminal
        states, seats, opp = self.states, self.seats, self.opponents
        waiting = [i for i in ids if not terminal(states[i]) and current(states[i]) != seats[i]]
        while waiting:
            groups: dict[int, tuple[Any, list[int]]] = {}
            for i in waiting:
                policy = opp[i][current(states[i])]
                groups.setdefault(id(policy), (policy, []))[1].append(i)
            joints: dict[int, tuple[Any, list[tuple[Any, list[int]]]]] = {}
            for policy, members in groups.values():
                joint = getattr(policy, "joint", None)
                if joint is None:
                    self._play_opponent(policy, members)
                else:  # asked together with the other waiting policies of the same joint, below
                    joints.setdefault(id(joint), (joint, []))[1].append((policy, members))
            for joint, parts in joints.values():
                self._play_joint(joint, parts)
            waiting = [i for i in waiting if not terminal(states[i]) and current(states[i]) != seats[i]]

    def _opponent_inputs(self, policy: Any, members: list[int]) -> tuple[np.ndarray | None, np.ndarray]:
        """(observations or None, masks) of the games ``members`` for their movers, as ``policy`` reads them."""
        rules = self.rules
        states = [self.states[i] for i in members]
        movers = [rules.current_player(s) for s in states]
        masks = np.zeros((len(members), self.num_actions), dtype=bool)
        self._fill_masks(masks, states)
        obs = None
        if getattr(policy, "uses_observation", True):
            obs = np.empty((len(members), self.observation_size), dtype=np.float32)
            rules.observe_into(obs, states, movers)
        if getattr(policy, "uses_views", False):  # a search: the seats' information views first
            views = [rules.determinize(s, p, self._view_rng) for s, p in zip(states, movers, strict=True)]
            policy.observe_views(views)
        return obs, masks

    def _play_opponent(self, policy: Any, members: list[int]) -> None:
        obs, masks = self._opponent_inputs(policy, members)
        self._apply_opponent(policy, members, masks, policy(obs, masks))

    def _play_joint(self, joint: Any, parts: list[tuple[Any, list[int]]]) -> None:
        """One call of ``joint`` for several policies' games: ``joint([(policy, obs, masks), ...])`` -> actions each."""
        inputs = [self._opponent_inputs(policy, members) for policy, members in parts]
        answers = list(joint([(policy, obs, masks) for (policy, _), (obs, masks) in zip(parts, inputs, strict=True)]))
        if len(answers) != len(parts):
            raise ValueError(f"joint {joint!r} answered {len(answers)} of {len(parts)} policies")
        self.opponent_calls += 1 - len(parts)  # one call in all (each part below counts one)
        for (policy, members), (_, masks), actions in zip(parts, inputs, answers, strict=True):
            self._apply_opponent(policy, members, masks, actions)

    def _apply_opponent(self, policy: Any, members: list[int], masks: np.ndarray, answer: Any) -> None:
        """Check ``policy``'s ``answer`` (one action per game of ``members``) against ``masks`` and play it."""
        rules, states = self.rules, self.states
        actions = np.asarray(answer).reshape(-1)
        self.opponent_calls += 1
        self.opponent_decisions += len(members)
        if len(actions) != len(members):
            raise ValueError(
                f"opponent {getattr(policy, 'name', policy)!r} returned {len(actions)} actions for {len(members)} games"
            )
        for j, i in enumerate(members):
            a = int(actions[j])
            if not (0 <= a < self.num_actions and masks[j, a]):
                raise IllegalActionError(
                    f"opponent {getattr(policy, 'name', policy)!r} chose illegal action {a} "
                    f"({rules.describe_action(a) if 0 <= a < self.num_actions else 'out of range'}) in game {i}"
                )
            rules.apply_unchecked(states[i], a)  # checked against the mask above

    def _fill_masks(self, masks: np.ndarray, states: list[Any]) -> None:
        """Set row ``j`` of the all-False ``masks`` to the legal actions of ``states[j]`` (one assignment for all)."""
        legal = self.rules.legal_actions
        columns: list[int] = []
        counts: list[int] = []
        for s in states:
            actions = legal(s)
            columns += actions
            counts.append(len(actions))
        masks[np.repeat(np.arange(len(states)), counts), columns] = True

    def _encode(self, ids: Any) -> None:
        """The learners' observations and masks of the games ``ids`` into ``_obs`` and ``_masks``."""
        ids = list(ids)
        rules = self.rules
        states = [self.states[i] for i in ids]
        whole = ids == list(range(self.num_envs))
        obs = self._obs if whole else np.empty((len(ids), self.observation_size), dtype=np.float32)
        rules.observe_into(obs, states, [int(self.seats[i]) for i in ids])
        live = [j for j, s in enumerate(states) if not rules.is_terminal(s)]
        masks = np.zeros((len(live), self.num_actions), dtype=bool)
        self._fill_masks(masks, [states[j] for j in live])
        if not whole:
            self._obs[ids] = obs
        self._masks[ids] = False
        self._masks[[ids[j] for j in live]] = masks

    # ------------------------------------------------------------------ stepping
    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Play the learners' ``actions`` (one per game); return (observations, rewards, dones, infos).

        An illegal learner action raises ``IllegalActionError`` naming the game, before any game changes.
        """
        if self._needs_reset:
            raise RuntimeError("call reset() before step() (and after set_opponents or seed)")
        acts = checked_actions(actions, self._masks, self.rules.describe_action)
        n = self.num_envs
        rules, states = self.rules, self.states
        for i in range(n):
            rules.apply_unchecked(states[i], int(acts[i]))  # checked against the masks above
        self.episode_lengths += 1
        self._advance(list(range(n)))
        rewards = np.zeros(n, dtype=np.float32)
        dones = np.zeros(n, dtype=bool)
        infos: list[dict[str, Any]] = [{} for _ in range(n)]
        finished = [i for i in range(n) if rules.is_terminal(states[i])]
        if self.shaping:  # potential-based: the change of the learner's potential since its last move
            for i in range(n):
                now = 0.0 if rules.is_terminal(states[i]) else rules.potential(states[i], int(self.seats[i]))
                rewards[i] = self.shaping * (now - self._potential[i])
                self._potential[i] = now
        if finished:
            now = time.perf_counter()
            for i in finished:
                s = states[i]
                seat = int(self.seats[i])
                r = float(rules.returns(s)[seat])
                rewards[i] += r
                dones[i] = True
                infos[i] = {
                    "terminal_observation": rules.observe(s, seat),
                    "seat": seat,
                    "returns": [float(x) for x in rules.returns(s)],
                    "episode": {
                        "r": r,
                        "l": int(self.episode_lengths[i]),
                        "t": round(now - self.episode_starts[i], 6),
                    },
                }
                self._new_episode(i)
            self._advance(finished)
            self._redeal_finished(finished)
        self._encode(range(n))
        return self._obs.copy(), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, (num_envs, num_actions) bool."""
        return self._masks.copy()
