"""AgileRL: a turn-based game as the PettingZoo parallel env its multi-agent algorithms step, and IPPO on it.

AgileRL's multi-agent algorithms (IPPO, MADDPG, MATD3) take PettingZoo **parallel** envs, in which
every agent acts at every step; jericho-env games are turn-based AEC envs. ``ParallelTurns``
presents one as a parallel env: the observation of every agent is its flat observation; only the
agent to move has legal actions (``infos[agent]["action_mask"]``, where AgileRL's ``get_action``
reads masks), the others' masks are all zero and their actions are ignored. Rewards, terminations
and the illegal-action rule are the AEC env's: ``illegal_action="raise"`` by default (a masked
policy never meets it), ``"lose"`` for unmasked probes such as PettingZoo's ``parallel_api_test``.

``collect`` plays whole games with one IPPO agent in every seat, asking it for the mover's action
alone (an all-zero mask has no action to sample), and returns each seat's own decisions in the form
``IPPO.learn`` takes: one shared network (AgileRL groups ``player_0``, ``player_1``... as
``player``) learns from every seat, each seat's decisions a sequence of whole games (its reward
between two of its moves is what it collected meanwhile; the first decision of each game carries
``done=1``, so advantages never cross games or seats). AgileRL's ``IPPO.learn`` recomputes
log-probabilities without the masks; acting is masked.

>>> from jericho_env.wrappers.agilerl import ParallelTurns, make_ippo, collect
>>> env = ParallelTurns("castles")
>>> agent = make_ippo(env)
>>> experiences, stats = collect(env, agent, games=8, seed=0)
>>> agent.learn(experiences)

Needs ``agilerl`` (the ``agilerl`` extra; its own venv: ``bash scripts/test-ecosystem.sh agilerl``).
Recipe: ``docs/ecosystem.md``; example: ``examples/agilerl_ippo.py``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from agilerl.algorithms import IPPO
from pettingzoo import ParallelEnv

from jericho_env.core.rules import OptionError
from jericho_env.envs.aec import JerichoEnv


class ParallelTurns(ParallelEnv):  # type: ignore[type-arg]
    """A jericho-env game as a PettingZoo ``ParallelEnv``: only the agent to move has a non-zero mask."""

    metadata = {"render_modes": ["ansi"], "name": "jericho_parallel_turns", "is_parallelizable": True}

    def __init__(self, game_id: str, **options: Any) -> None:
        self.aec = JerichoEnv(game_id, **options)
        self.game_id = game_id
        self.possible_agents = list(self.aec.possible_agents)
        self.agents: list[str] = []
        info = self.aec.rules.info
        self._obs_space = gym.spaces.Box(0.0, 1.0, (info.observation_size,), dtype=np.float32)
        self._act_space = gym.spaces.Discrete(info.num_actions)

    def observation_space(self, agent: str) -> gym.spaces.Box:
        """The flat observation of one seat (the mask travels in ``infos``)."""
        return self._obs_space

    def action_space(self, agent: str) -> gym.spaces.Discrete:
        """``Discrete(num_actions)``, as the AEC env's."""
        return self._act_space

    @property
    def mover(self) -> str | None:
        """The agent to move, or ``None`` once the game is over."""
        return None if not self.agents else self.aec.agent_selection

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict[str, Any]]]:
        """A new game: every agent's observation, and its mask in ``infos``."""
        self.aec.reset(seed=seed)
        self.agents = list(self.aec.agents)
        return self._observations(), self._infos()

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], ...]:
        """Play the mover's action (the others' are ignored); rewards and ends as the AEC env gives them."""
        mover = self.mover
        if mover is None:
            raise OptionError("the game is over: call reset()")
        if mover not in actions:
            raise OptionError(f"{mover} is to move: actions must hold its action (got {sorted(actions)})")
        self.aec.step(int(np.asarray(actions[mover]).reshape(())))
        rewards = {a: float(self.aec.rewards.get(a, 0.0)) for a in self.possible_agents}
        over = self._over()
        terminations = dict.fromkeys(self.possible_agents, over)
        truncations = dict.fromkeys(self.possible_agents, False)
        obs, infos = self._observations(), self._infos()
        if over:
            self.agents = []
        return obs, rewards, terminations, truncations, infos

    def render(self) -> Any:
        """The table as text from the mover's seat."""
        return self.aec.rules.render_text(self.aec.state, self.aec.rules.current_player(self.aec.state))

    def _over(self) -> bool:
        """Whether the game ended: by the rules, or by an illegal move under ``illegal_action="lose"``."""
        return bool(self.aec._lost_by_illegal) or self.aec.rules.is_terminal(self.aec.state)

    def _observations(self) -> dict[str, np.ndarray]:
        rules, state = self.aec.rules, self.aec.state
        return {a: rules.observe(state, i) for i, a in enumerate(self.possible_agents)}

    def _infos(self) -> dict[str, dict[str, Any]]:
        zeros = np.zeros(self._act_space.n, dtype=np.int8)
        mover = None if self._over() else self.aec.agent_selection
        return {
            a: {"action_mask": self.aec.current_mask().astype(np.int8) if a == mover else zeros.copy()}
            for a in self.possible_agents
        }


def make_ippo(env: ParallelTurns, **kwargs: Any) -> Any:
    """AgileRL's ``IPPO`` for ``env``'s seats (one shared network: AgileRL groups ``player_*``); ``kwargs`` to IPPO."""
    agents = env.possible_agents
    settings = {"batch_size": 64, "lr": 3e-4, "learn_step": 256, "update_epochs": 2, **kwargs}
    return IPPO(
        observation_spaces=[env.observation_space(a) for a in agents],
        action_spaces=[env.action_space(a) for a in agents],
        agent_ids=agents,
        **settings,
    )


def collect(
    env: ParallelTurns, agent: Any, games: int, seed: int | None = None
) -> tuple[tuple[dict[str, Any], ...], dict[str, Any]]:
    """Play ``games`` whole games with ``agent`` in every seat; return ``IPPO.learn``'s experiences and stats.

    The experiences hold one key, the first seat's id: every seat's decisions, seat after seat, each
    a run of whole games (AgileRL trains the group's shared network on them). The stats: ``returns``
    (each game's returns by seat), ``decisions`` and ``illegal`` (moves outside the mask: 0 when
    the masks are read).
    """
    if not isinstance(games, int) or games < 1:
        raise OptionError(f"games must be an int >= 1, got {games!r}")
    seats = env.possible_agents
    rows: dict[str, dict[str, list[Any]]] = {
        a: {k: [] for k in ("obs", "action", "log_prob", "reward", "done", "value")} for a in seats
    }
    returns: list[list[float]] = []
    illegal = 0
    for g in range(games):
        obs, infos = env.reset(seed=None if seed is None else seed + g)
        first = dict.fromkeys(seats, True)
        while env.mover is not None:
            mover = env.mover
            mask = infos[mover]["action_mask"]
            # a list: AgileRL 2.58's IPPO tests `None in masks`, which an ndarray of more than one value breaks
            action, log_prob, _, value = agent.get_action(
                {mover: obs[mover]}, infos={mover: {"action_mask": mask.tolist()}}
            )
            a = int(np.asarray(action[mover]).reshape(-1)[0])
            illegal += int(mask[a] == 0)
            row = rows[mover]
            row["obs"].append(obs[mover])
            row["action"].append(a)
            row["log_prob"].append(float(np.asarray(log_prob[mover]).reshape(-1)[0]))
            row["value"].append(float(np.asarray(value[mover]).reshape(-1)[0]))
            row["done"].append(1.0 if first[mover] else 0.0)  # a new game starts: no bootstrap across it
            row["reward"].append(0.0)
            first[mover] = False
            obs, rewards, _, _, infos = env.step({mover: a})
            for seat, r in rewards.items():
                if rows[seat]["reward"] and not first[seat]:
                    rows[seat]["reward"][-1] += r  # what the seat collected since its last decision
        returns.append([float(env.aec._cumulative_rewards.get(a, 0.0)) for a in seats])
    key = seats[0]
    merged = {k: [x for a in seats for x in rows[a][k]] for k in rows[key]}
    obs_arr = np.asarray(merged["obs"], dtype=np.float32)
    experiences = (
        {key: obs_arr},
        {key: np.asarray(merged["action"], dtype=np.int64)[:, None]},
        {key: np.asarray(merged["log_prob"], dtype=np.float32)},
        {key: np.asarray(merged["reward"], dtype=np.float32)},
        {key: np.asarray(merged["done"], dtype=np.float32)},
        {key: np.asarray(merged["value"], dtype=np.float32)},
        {key: obs_arr[-1:]},
        {key: np.ones(1, dtype=np.float32)},  # the last game ended: nothing to bootstrap
    )
    return experiences, {"returns": returns, "decisions": len(obs_arr), "illegal": illegal}
