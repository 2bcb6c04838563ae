"""A baseline agent's move as a hint for PPO: residual policy learning on top of ``greedy``.

With ``experiments.train --prior greedy`` the learner's observation gets one more float: the action
the greedy agent would play in the learner's place (``action / (num_actions - 1)``). The policy
(``agents.networks.PriorMlpPolicy`` or ``GridConvPolicy(prior=...)``) adds a learned weight
``prior_weight`` (initially 5) to that action's logit, so the untrained policy already plays close to
greedy (its most probable action is greedy's) and PPO learns where to depart from it: the network's
own logits must outgrow the bonus before the agent plays something else. The weight itself is
trained too, so the learner may lean on the hint less as it improves.

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

PRIORS = ("none", "greedy")


def check_prior(prior: str) -> str:
    """``prior`` if known (``"none"`` or an agent name in ``PRIORS``), else a clear ``ValueError``."""
    if prior not in PRIORS:
        raise ValueError(f"--prior takes one of {', '.join(PRIORS)}, got {prior!r}")
    return prior


def encode_hint(action: int, num_actions: int) -> float:
    """The hint float of ``action`` (in [0, 1], exact in float32 for any action count below 2**23)."""
    return action / max(num_actions - 1, 1)


def decode_hint(hint: Any, num_actions: int) -> Any:
    """Back from hint floats (a torch tensor) to action indices (int64)."""
    return (hint * max(num_actions - 1, 1)).round().long().clamp(0, num_actions - 1)


def with_hint(observation: np.ndarray, action: int, num_actions: int) -> np.ndarray:
    """``observation`` with the hint float appended (float32)."""
    out = np.empty(observation.shape[0] + 1, dtype=np.float32)
    out[:-1] = observation
    out[-1] = encode_hint(action, num_actions)
    return out


class PriorHintEnv(gym.Wrapper):
    """The single-agent view with the prior agent's move appended to each observation.

    ``action_masks()`` and ``add_opponent`` pass through, so MaskablePPO and the training pool work as
    on the bare view. After the game ends there is no move to suggest and the hint is 0.
    """

    def __init__(self, env: gym.Env, prior: str, game_id: str, **game_options: Any) -> None:
        super().__init__(env)
        import agents

        if check_prior(prior) == "none":
            raise ValueError("PriorHintEnv needs a prior agent, not 'none'")
        self.prior_agent = agents.make(prior, game_id, **game_options)
        space = env.observation_space
        assert isinstance(space, gym.spaces.Box) and space.shape is not None
        assert isinstance(env.action_space, gym.spaces.Discrete)
        self.num_actions = int(env.action_space.n)
        self.observation_space = gym.spaces.Box(0.0, 1.0, (space.shape[0] + 1,), dtype=np.float32)

    def _hinted(self, observation: np.ndarray, done: bool) -> np.ndarray:
        mask = self.action_masks()
        if done or not mask.any():
            return with_hint(observation, 0, self.num_actions)
        action = self.prior_agent.act({"observation": observation, "action_mask": mask.astype(np.int8)})
        return with_hint(observation, action, self.num_actions)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        observation, info = self.env.reset(seed=seed, options=options)
        self.prior_agent.reset(None if seed is None else seed + 7919)
        return self._hinted(observation, False), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        return self._hinted(observation, terminated or truncated), float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (as the wrapped view's)."""
        masks: np.ndarray = self.env.get_wrapper_attr("action_masks")()
        return masks
