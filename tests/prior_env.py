"""The single-agent view with a prior's floats appended to each observation: a harness for the prior's tests.

``experiments.train`` trains on the batched self-play env, whose learner's observations carry the same floats
(``agents.prior.make_prior``); this wrapper gives them on ``jericho_env.single_agent``, so that tests can play whole
games against the floats and build small networks on them.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from agents.prior import check_prior, make_prior, with_prior


class PriorEnv(gym.Wrapper):
    """The single-agent view with the prior's floats (``make_prior``, a batch of one) appended to each observation.

    For training or probing on ``jericho_env.single_agent`` (``experiments.train`` itself trains on the
    batched self-play env, whose prior is the same ``Prior``). ``action_masks()`` and ``add_opponent``
    pass through, so MaskablePPO and an opponent pool work as on the bare view. After the game ends there
    is no move to suggest and the prior's floats is 0.
    """

    def __init__(self, env: gym.Env, prior: str, game_id: str, **game_options: Any) -> None:
        super().__init__(env)
        space = env.observation_space
        assert isinstance(space, gym.spaces.Box) and space.shape is not None
        scores = make_prior(check_prior(prior, game_id), game_id, **game_options)  # a user's value: checked here
        if scores is None:
            raise ValueError("PriorEnv needs a prior agent, not 'none'")
        self.prior = scores
        self.observation_space = gym.spaces.Box(0.0, 1.0, (space.shape[0] + scores.size,), dtype=np.float32)

    def _with_scores(self, observation: np.ndarray, done: bool) -> np.ndarray:
        mask = self.action_masks()
        if done or not mask.any():
            return with_prior(observation, np.zeros(self.prior.size, dtype=np.float32))
        return with_prior(observation, self.prior(observation[None], mask[None].astype(bool))[0])

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        observation, info = self.env.reset(seed=seed, options=options)
        self.prior.reset(None if seed is None else seed + 7919)
        return self._with_scores(observation, False), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        return self._with_scores(observation, terminated or truncated), float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (as the wrapped view's)."""
        masks: np.ndarray = self.env.get_wrapper_attr("action_masks")()
        return masks
