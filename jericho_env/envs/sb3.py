"""``SelfPlayVecEnv``: the batched self-play games as a Stable-Baselines3 ``VecEnv`` with action masks.

Needs the ``train`` extra (stable-baselines3, sb3-contrib). MaskablePPO reads the masks through
``env_method("action_masks")``, which this class answers from the batch without a per-game call::

    from sb3_contrib import MaskablePPO
    from jericho_env.envs.sb3 import SelfPlayVecEnv

    venv = SelfPlayVecEnv("castles", num_envs=64, opponents=["random"], seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=1024)
    model.learn(100_000)

Opponents are batch policies (``jericho_env.envs.selfplay``); ``agents.batch.make_batch_policy`` builds
one for any agent of the ``agents`` package, and ``add_opponent`` grows the pool during training.
``hint`` (with ``hint_size``) appends floats computed from the learners' observations and masks, as
the prior of ``agents.prior`` needs; without it the observation is the game's own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvStepReturn

from jericho_env.envs.selfplay import SelfPlayVector


class SelfPlayVecEnv(VecEnv):
    """A Stable-Baselines3 ``VecEnv`` over ``SelfPlayVector`` (one learner seat per game)."""

    def __init__(
        self,
        game_id: str,
        num_envs: int,
        opponents: Any | Sequence[Any] = "random",
        seat: int | str = "random",
        seed: int | None = None,
        hint: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
        hint_size: int = 0,
        shaping: float = 0.0,
        **options: Any,
    ) -> None:
        self.vector = SelfPlayVector(
            game_id, num_envs, opponents=opponents, seat=seat, seed=seed, shaping=shaping, **options
        )
        info = self.vector.rules.info
        if (hint is None) != (hint_size == 0):
            raise ValueError("hint and hint_size go together: a hint callable and the number of floats it appends")
        self.hint, self.hint_size = hint, int(hint_size)
        obs_space = gym.spaces.Box(0.0, 1.0, (info.observation_size + self.hint_size,), dtype=np.float32)
        super().__init__(num_envs, obs_space, gym.spaces.Discrete(info.num_actions))
        self.rules = self.vector.rules
        self._actions: np.ndarray | None = None

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        obs, masks = self.vector.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        return self._hinted(obs, masks)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        assert self._actions is not None, "step_async() first"
        obs, rewards, dones, infos = self.vector.step(self._actions)
        self._actions = None
        if self.hint is not None:
            obs = self._hinted(obs, self.vector.action_masks())
            for i in np.flatnonzero(dones):  # a finished game has no move to hint: zeros, as PriorHintEnv does
                terminal = infos[i]["terminal_observation"]
                infos[i]["terminal_observation"] = np.concatenate([terminal, np.zeros(self.hint_size, np.float32)])
        return obs, rewards, dones, infos

    def _hinted(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The learners' observations with the hint floats appended (unchanged without a hint)."""
        if self.hint is None:
            return obs
        return np.concatenate([obs, self.hint(obs, masks).astype(np.float32, copy=False)], axis=1)

    def seed(self, seed: int | None = None) -> Sequence[int | None]:  # type: ignore[override]
        """Seed game ``i`` with ``seed + i`` at the next reset."""
        if seed is None:
            seed = int(np.random.randint(0, 2**31 - 1))
        self._seeds = [seed + i for i in range(self.num_envs)]
        return self._seeds

    def close(self) -> None:
        pass

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, (num_envs, num_actions) bool."""
        return self.vector.action_masks()

    def add_opponent(self, policy: Any, max_added: int | None = None) -> None:
        """Add a batch policy to the opponent pool (see ``SelfPlayVector.add_opponent``)."""
        self.vector.add_opponent(policy, max_added)

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        value = getattr(self.vector, attr_name)
        return [value] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.vector, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **kw: Any) -> list[Any]:
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":  # what sb3-contrib's get_action_masks asks, once per step
            return list(self.vector.action_masks()[idx])
        result = getattr(self, method_name)(*method_args, **kw)
        return [result] * len(idx)

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or hasattr(self.vector, attr_name)

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return [False] * len(self._get_indices(indices))

    def _get_indices(self, indices: VecEnvIndices) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return list(indices)
