"""A Gymnasium vector env (``gymnasium.make_vec``) as a Stable-Baselines3 ``VecEnv``, masks included.

SB3 and sb3-contrib take their own ``VecEnv`` type, not ``gymnasium.vector.VectorEnv``; this adapter
lets ``MaskablePPO`` train on ``gymnasium.make_vec("jericho/castles-v0", num_envs=4, ...)``:

>>> from jericho_env.wrappers.sb3 import make_vec_env
>>> venv = make_vec_env("jericho/castles-v0", num_envs=4, seat=0)
>>> MaskablePPO("MlpPolicy", venv).learn(4096)  # masks via venv.env_method("action_masks")

SB3 expects a finished sub-env to be reset in the same step (the new episode's observation, the
last one in ``info["terminal_observation"]``), which is Gymnasium's ``AutoresetMode.SAME_STEP``; the
adapter refuses a vector env in another mode rather than mix up episodes. Needs stable-baselines3
(the ``train`` extra); imported only by this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvStepReturn

from jericho_env.core.rules import OptionError


class GymnasiumVecEnv(VecEnv):
    """SB3's ``VecEnv`` over a ``gymnasium.vector.VectorEnv`` whose autoreset mode is ``SAME_STEP``."""

    def __init__(self, venv: gym.vector.VectorEnv) -> None:
        # Sync and Async vector envs both have call / get_attr / set_attr; the base class does not declare them.
        mode = venv.metadata.get("autoreset_mode")
        if mode != gym.vector.AutoresetMode.SAME_STEP:
            raise OptionError(
                f"the vector env resets in mode {mode!r}; SB3 needs AutoresetMode.SAME_STEP: build it with "
                "gymnasium.make_vec(..., vector_kwargs={'autoreset_mode': gymnasium.vector.AutoresetMode.SAME_STEP})"
            )
        self.venv: Any = venv
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        """Reset every sub-env (with the seeds and options set by ``seed`` / ``set_options``, once)."""
        seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
        options = self._options[0] or None
        obs, infos = self.venv.reset(seed=seeds, options=options)
        self.reset_infos = _split_infos(infos, self.num_envs)
        self._reset_seeds()
        self._reset_options()
        return np.asarray(obs)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, terminated, truncated, infos = self.venv.step(self._actions)
        dones = np.logical_or(terminated, truncated)
        out = _split_infos(infos, self.num_envs)
        final_obs = infos.get("final_obs")
        for i, info in enumerate(out):
            info.pop("final_obs", None)
            info.pop("final_info", None)
            if dones[i]:
                info["terminal_observation"] = final_obs[i] if final_obs is not None else obs[i]
                info["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return np.asarray(obs), np.asarray(rewards, dtype=np.float32), dones, out

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        values = self.venv.get_attr(attr_name)
        return [values[i] for i in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        values = list(self.venv.get_attr(attr_name))
        for i in self._get_indices(indices):
            values[i] = value
        self.venv.set_attr(attr_name, values)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        """Call ``method_name`` on every sub-env (``action_masks`` for MaskablePPO), keep ``indices``."""
        results = self.venv.call(method_name, *method_args, **method_kwargs)
        return [results[i] for i in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        envs: Sequence[gym.Env[Any, Any]] | None = getattr(self.venv, "envs", None)  # SyncVectorEnv only
        if envs is None:
            return [False for _ in self._get_indices(indices)]
        return [_is_wrapped(envs[i], wrapper_class) for i in self._get_indices(indices)]

    def _get_indices(self, indices: VecEnvIndices) -> Iterable[int]:
        return list(super()._get_indices(indices))


def make_vec_env(env_id: str, num_envs: int, vectorization_mode: str = "sync", **env_kwargs: Any) -> GymnasiumVecEnv:
    """``gymnasium.make_vec(env_id, num_envs, ...)`` in ``SAME_STEP`` autoreset mode, as an SB3 ``VecEnv``."""
    venv = gym.make_vec(
        env_id,
        num_envs=num_envs,
        vectorization_mode=vectorization_mode,
        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP},
        **env_kwargs,
    )
    return GymnasiumVecEnv(venv)


def _split_infos(infos: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """Gymnasium's vector info (arrays plus ``_key`` presence masks) as one dict per sub-env."""
    out: list[dict[str, Any]] = [{} for _ in range(n)]
    for key, value in infos.items():
        if key.startswith("_"):
            continue
        present = infos.get("_" + key)
        values = _split_infos(value, n) if isinstance(value, dict) else value
        for i in range(n):
            if present is None or present[i]:
                out[i][key] = values[i]
    return out


def _is_wrapped(env: gym.Env[Any, Any], wrapper_class: type[gym.Wrapper]) -> bool:
    while isinstance(env, gym.Wrapper):
        if isinstance(env, wrapper_class):
            return True
        env = env.env
    return False
