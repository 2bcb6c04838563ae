"""Ray RLlib (new API stack): an env creator, the observation keys of RLlib's action-masking module, PPO configs.

RLlib plays PettingZoo AEC envs through ``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv``.
Two things stand between it and a jericho-env game, and this module handles both:

* **Observation keys.** RLlib's action-masking ``RLModule`` (``ActionMaskingTorchRLModule``, from
  RLlib's examples, shipped in the ``ray`` wheel) reads ``{"observations": ..., "action_mask": ...}``
  with a float mask; our envs give ``{"observation": ..., "action_mask": int8}``.
  ``RLlibObservation`` renames the key and casts the mask.
* **The env checker's probe.** With env checking on (RLlib's default), each env runner steps a new
  env once with an *unmasked* random action. The env creator builds the env with
  ``illegal_action="lose"`` so that probe ends a game (the prober loses) instead of raising; the
  masked module never plays an illegal action in training, which ``IllegalActionCounter`` counts
  (metric ``illegal_action_games``, 0 in our tests).

>>> from jericho_env.wrappers import rllib as jr
>>> algo = jr.ppo_config("castles", modules="shared").build_algo()
>>> algo.train()

Needs ``ray[rllib]`` and torch (the ``rllib`` extra; RLlib pins its own gymnasium, so give it its
own venv: ``bash scripts/test-ecosystem.sh rllib``). Recipe: ``docs/ecosystem.md``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from pettingzoo.utils import BaseWrapper
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
from ray.tune.registry import register_env

from jericho_env.core.rules import OptionError
from jericho_env.envs.aec import make
from jericho_env.registry import GAME_VERSIONS

MODULE_CHOICES = ("shared", "per_seat")


class RLlibObservation(BaseWrapper):  # type: ignore[type-arg]
    """An AEC env whose observations are ``{"observations": float32, "action_mask": float32}`` for RLlib."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self._spaces: dict[str, gym.spaces.Dict] = {}
        for agent in env.possible_agents:
            inner = env.observation_space(agent)
            n = inner["action_mask"].shape[0]
            self._spaces[agent] = gym.spaces.Dict(
                {
                    "observations": inner["observation"],
                    "action_mask": gym.spaces.Box(0.0, 1.0, (n,), dtype=np.float32),
                }
            )

    def observation_space(self, agent: str) -> gym.spaces.Dict:
        return self._spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.env.observe(agent)
        return {"observations": obs["observation"], "action_mask": obs["action_mask"].astype(np.float32)}


def env_creator(config: dict[str, Any]) -> PettingZooEnv:
    """RLlib env creator: ``config`` = ``{"game_id": ..., **game options}`` (``illegal_action`` defaults to "lose")."""
    options = dict(config)
    game_id = options.pop("game_id", None)
    if game_id is None:
        raise OptionError("env_config needs a 'game_id' (one of grid, walls, castles)")
    options.setdefault("illegal_action", "lose")
    return PettingZooEnv(RLlibObservation(make(game_id, **options)))


def env_name(game_id: str) -> str:
    """The name under which ``register(game_id)`` registers the game with Ray Tune (``jericho_castles_v0``)."""
    return f"jericho_{game_id}_v{GAME_VERSIONS.get(game_id, 0)}"


def register(game_id: str) -> str:
    """Register ``env_creator`` for ``game_id`` with Ray Tune's registry; return the registered name."""
    name = env_name(game_id)
    register_env(name, lambda cfg: env_creator({"game_id": game_id, **cfg}))
    return name


class IllegalActionCounter(RLlibCallback):
    """Counts games ended by an illegal action (``illegal_action="lose"``) as the metric ``illegal_action_games``."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        infos = episode.get_infos(-1) if hasattr(episode, "get_infos") else {}
        lost = any("illegal_action" in (info or {}) for info in infos.values())
        if metrics_logger is not None:
            metrics_logger.log_value("illegal_action_games", int(lost), reduce="sum")


def ppo_config(
    game_id: str,
    modules: str = "shared",
    hidden: tuple[int, ...] = (128, 128),
    **game_options: Any,
) -> PPOConfig:
    """A masked multi-agent PPO config for ``game_id``: one module for every seat or one per seat.

    ``modules="shared"``: every seat is played by the module ``"shared"`` (self-play);
    ``modules="per_seat"``: seat ``player_i`` by its own module ``"player_i"``. Env checking stays on.
    Sizes are small (a few iterations finish in seconds to minutes on a CPU); scale them for research.
    """
    if modules not in MODULE_CHOICES:
        raise OptionError(f"modules={modules!r} is not allowed: use one of {', '.join(MODULE_CHOICES)}")
    name = register(game_id)
    probe = env_creator({"game_id": game_id, **game_options})
    agents = list(probe.possible_agents)
    probe.close()
    module = RLModuleSpec(
        module_class=ActionMaskingTorchRLModule,
        model_config={"head_fcnet_hiddens": list(hidden), "head_fcnet_activation": "relu"},
    )
    if modules == "shared":
        ids = ["shared"]

        def mapping(agent_id: Any, episode: Any, **kwargs: Any) -> str:
            return "shared"
    else:
        ids = [str(a) for a in agents]

        def mapping(agent_id: Any, episode: Any, **kwargs: Any) -> str:
            return str(agent_id)

    return (
        PPOConfig()
        .environment(env=name, env_config=dict(game_options), disable_env_checking=False)
        .multi_agent(policies=set(ids), policy_mapping_fn=mapping)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=dict.fromkeys(ids, module)))
        .env_runners(num_env_runners=0, num_envs_per_env_runner=1)
        .training(train_batch_size_per_learner=512, minibatch_size=128, num_epochs=2, lr=3e-4)
        .callbacks(IllegalActionCounter)
    )
