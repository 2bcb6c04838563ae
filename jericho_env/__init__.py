"""jericho-env: three small card games as PettingZoo AEC environments for RL research.

>>> import jericho_env
>>> env = jericho_env.make("grid")          # PettingZoo AECEnv
>>> env.reset(seed=0)

Also ``pettingzoo.make("aec", "jericho/grid-v0")`` (the AEC env) and ``gymnasium.make("jericho/grid-v0")``
(the single-agent view) once ``jericho_env`` is imported.

A seed, wherever one is taken (``reset(seed=...)``, ``agents.make(..., seed=...)``, ``--seed``), is an int
in 0..2**63-1 or None; anything else is an ``OptionError`` naming the range (``jericho_env.core.validate``).
"""

from __future__ import annotations

from typing import Any

from jericho_env.core.rules import (
    ActionTypeError,
    GameInfo,
    IllegalActionError,
    JerichoError,
    OptionError,
    Rules,
    StateFormatError,
)
from jericho_env.envs.aec import JerichoEnv, make, raw_env
from jericho_env.registry import GAME_IDS, GAME_VERSIONS, make_rules, register_game

__version__ = "0.1.0"

__all__ = [
    "GAME_IDS",
    "GAME_VERSIONS",
    "ActionTypeError",
    "GameInfo",
    "IllegalActionError",
    "JerichoEnv",
    "JerichoError",
    "OptionError",
    "Rules",
    "StateFormatError",
    "make",
    "make_batched",
    "make_rules",
    "raw_env",
    "register_game",
    "single_agent",
]


def single_agent(
    game_id: str, opponents: Any = "random", seat: int | str = "random", illegal_action: str = "lose", **options: Any
) -> Any:
    """A ``gymnasium.Env`` for one learner seat (see ``jericho_env.envs.single.SingleAgentEnv``)."""
    from jericho_env.envs.single import SingleAgentEnv

    return SingleAgentEnv(game_id, opponents=opponents, seat=seat, illegal_action=illegal_action, **options)


def make_batched(game_id: str, num_envs: int, **kwargs: Any) -> Any:
    """``num_envs`` games in lockstep as arrays (``jericho_env.envs.batched.BatchedEnv``; Pgx/EnvPool style)."""
    from jericho_env.envs.batched import BatchedEnv

    return BatchedEnv(game_id, num_envs, **kwargs)


def _register_with_pettingzoo() -> None:
    """Register ``jericho/<game>-v<version>`` in PettingZoo's registry where it has one (>= 1.25)."""
    try:
        from pettingzoo import register
    except ImportError:  # older PettingZoo: no registry, make() is the way
        return
    for gid in GAME_IDS:
        env_id = f"jericho/{gid}-v{GAME_VERSIONS[gid]}"
        register("aec", env_id, entry_point="jericho_env.envs.aec:make", kwargs={"game_id": gid})


def _register_with_gymnasium() -> None:
    """Register the single-agent view as ``jericho/<game>-v<version>`` in Gymnasium's registry.

    ``gymnasium.make("jericho/castles-v0", opponents=..., seat=..., **game_options)`` then builds a
    ``SingleAgentEnv``; see ``docs/ecosystem.md`` for vector envs and the mask under autoreset.
    """
    import gymnasium
    from gymnasium.envs.registration import WrapperSpec

    # gymnasium.make applies this last, so that env.action_masks() works through its wrappers
    masks = WrapperSpec("ActionMasks", "jericho_env.envs.single:ActionMasks", {})
    for gid in GAME_IDS:
        env_id = f"jericho/{gid}-v{GAME_VERSIONS[gid]}"
        if env_id not in gymnasium.registry:
            gymnasium.register(
                env_id,
                entry_point="jericho_env.envs.single:SingleAgentEnv",
                kwargs={"game_id": gid},
                additional_wrappers=(masks,),
            )


_register_with_pettingzoo()
_register_with_gymnasium()
