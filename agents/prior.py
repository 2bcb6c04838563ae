"""A baseline agent's move as a hint for PPO: residual policy learning on top of ``greedy``.

With ``experiments.train --prior greedy`` the learner's observation gets one more float: the action
the greedy agent would play in the learner's place (``action / (num_actions - 1)``). The policy
(``agents.nets.common.PriorMlpPolicy`` or ``agents.nets.grid.GridConvPolicy(prior=...)``) adds a learned weight
``prior_weight`` (initially 5) to that action's logit, so the untrained policy already plays close to
greedy (its most probable action is greedy's) and PPO learns where to depart from it: the network's
own logits must outgrow the bonus before the agent plays something else. The weight itself is
trained too, so the learner may lean on the hint less as it improves.

``--prior greedy-scores`` (grid and walls, their default in ``experiments.train``) hints every action instead: the
observation gets one float per action, ``exp(score - best score)`` of greedy's own scoring (1 for the
best-scoring move, 0.37 for a move one point worse, 0 for moves it does not weigh), and the policy adds
``prior_weight`` times it to the logits, so the untrained policy plays a best move by greedy's scoring and
its other samples fall on near-best moves rather than on any legal move: the departures PPO tries are the
plausible ones. In grid a pass at the start of a turn is scored too when the points differ, by the risk
of the table left as it is (``agents.greedy_grid.GreedyAgent.scores``), although greedy itself passes only
when it must. In walls the score is the cards the seat would hold if a scoring came after the move
(``agents.greedy_walls.GreedyAgent.scores``), so a move one expected card worse than the best gets 0.37.

The hint is computed outside the network (the greedy agents are Python code reading the
observation), by ``PriorHintEnv`` around the single-agent view during training and by
``agents.ppo.PPOAgent`` when the trained agent plays; the checkpoint records the prior's name.

This is the technique of Silver et al. (2018), "Residual Policy Learning", and of Johannink et al.
(2019), "Residual Reinforcement Learning for Robot Control", with a discrete action bonus in place
of an added continuous action.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

PRIORS = ("none", "greedy", "greedy-scores")
# the baseline agent behind each prior
PRIOR_AGENTS = {"greedy": "greedy", "greedy-scores": "greedy"}
# "greedy-scores" needs an agent with a scores(observation) method (agents.greedy_grid / greedy_walls)
SCORE_GAMES = ("grid", "walls")


def check_prior(prior: str, game_id: str | None = None) -> str:
    """``prior`` if known (and available for ``game_id``), else a clear ``ValueError``."""
    if prior not in PRIORS:
        raise ValueError(f"--prior takes one of {', '.join(PRIORS)}, got {prior!r}")
    if prior == "greedy-scores" and game_id is not None and game_id not in SCORE_GAMES:
        raise ValueError(f"--prior greedy-scores is for {', '.join(SCORE_GAMES)} only, not {game_id!r}")
    if prior != "none" and game_id is not None:
        from agents.registry import available

        if not available(PRIOR_AGENTS[prior], game_id):
            raise ValueError(f"--prior {prior} needs a {PRIOR_AGENTS[prior]} agent, and {game_id!r} has none")
    return prior


def hint_size(prior: str | None, num_actions: int) -> int:
    """Floats the prior appends to the observation: 0 without one, 1 (the move) or one score per action."""
    if prior in (None, "none"):
        return 0
    return num_actions if prior == "greedy-scores" else 1


class Prior:
    """A prior's baseline agent and the hint floats it gives for an observation."""

    def __init__(self, name: str, game_id: str, num_actions: int, seed: int | None = None, **game_options: Any):
        import agents

        if check_prior(name, game_id) == "none":
            raise ValueError("a prior (e.g. PriorHintEnv) needs a prior agent, not 'none'")
        self.name = name
        self.num_actions = num_actions
        self.size = hint_size(name, num_actions)
        self.agent: Any = agents.make(PRIOR_AGENTS[name], game_id, seed=seed, **game_options)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the baseline agent (its random tie-breaks)."""
        self.agent.reset(seed)

    def hint(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        """The hint floats: the agent's move (encoded) or its score of every action."""
        if self.name == "greedy-scores":
            return np.asarray(self.agent.scores(observation), dtype=np.float32)
        return np.array([encode_hint(self.agent.act(observation), self.num_actions)], dtype=np.float32)


def encode_hint(action: int, num_actions: int) -> float:
    """The hint float of ``action`` (in [0, 1], exact in float32 for any action count below 2**23)."""
    return action / max(num_actions - 1, 1)


def decode_hint(hint: Any, num_actions: int) -> Any:
    """Back from hint floats (a torch tensor) to action indices (int64)."""
    return (hint * max(num_actions - 1, 1)).round().long().clamp(0, num_actions - 1)


def with_hint(observation: np.ndarray, hint: np.ndarray) -> np.ndarray:
    """``observation`` with the hint floats appended (float32)."""
    return np.concatenate([observation.astype(np.float32, copy=False), hint.astype(np.float32, copy=False)])


class PriorHintEnv(gym.Wrapper):
    """The single-agent view with the prior agent's move appended to each observation.

    ``action_masks()`` and ``add_opponent`` pass through, so MaskablePPO and the training pool work as
    on the bare view. After the game ends there is no move to suggest and the hint is 0.
    """

    def __init__(self, env: gym.Env, prior: str, game_id: str, **game_options: Any) -> None:
        super().__init__(env)
        space = env.observation_space
        assert isinstance(space, gym.spaces.Box) and space.shape is not None
        assert isinstance(env.action_space, gym.spaces.Discrete)
        self.prior = Prior(prior, game_id, int(env.action_space.n), **game_options)
        self.observation_space = gym.spaces.Box(0.0, 1.0, (space.shape[0] + self.prior.size,), dtype=np.float32)

    def _hinted(self, observation: np.ndarray, done: bool) -> np.ndarray:
        mask = self.action_masks()
        if done or not mask.any():
            return with_hint(observation, np.zeros(self.prior.size, dtype=np.float32))
        view = {"observation": observation, "action_mask": mask.astype(np.int8)}
        return with_hint(observation, self.prior.hint(view))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        observation, info = self.env.reset(seed=seed, options=options)
        self.prior.reset(None if seed is None else seed + 7919)
        return self._hinted(observation, False), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        return self._hinted(observation, terminated or truncated), float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (as the wrapped view's)."""
        masks: np.ndarray = self.env.get_wrapper_attr("action_masks")()
        return masks
