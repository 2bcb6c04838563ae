"""The agent protocol (``jericho_env.user_agents.Agent``) and ``BaseAgent``, the plumbing of this package's agents."""

from __future__ import annotations

from typing import Any

import numpy as np

from jericho_env.core.validate import check_optional_seed

# the one agent protocol: act(observation) -> int; reset(seed) and act_batch(observations, masks) optional
from jericho_env.user_agents import Agent

__all__ = ["Agent", "BaseAgent", "ViewAgent"]


class BaseAgent:
    """Shared plumbing: a name, the game it plays and its own seeded generator."""

    name = "agent"

    def __init__(self, game_id: str, seed: int | None = None, **game_options: Any) -> None:
        from jericho_env.core.rules import OptionError, resolve_options
        from jericho_env.registry import rules_class

        seed = check_optional_seed(seed)  # an int in 0..2**63-1 or None (jericho_env.core.validate)
        specs = rules_class(game_id).OPTIONS
        unknown = sorted(set(game_options) - {o.name for o in specs})
        if unknown:
            takes = ", ".join(o.name for o in specs) or "none"
            raise OptionError(
                f"agent {self.name!r} for {game_id!r} got unknown argument(s) {', '.join(unknown)}; "
                f"it takes seed and the game's options ({takes})"
            )
        resolve_options(game_id, specs, game_options)  # values out of range fail here, naming what is allowed
        self.game_id = game_id
        self.game_options = dict(game_options)
        self.rng = np.random.default_rng(seed)
        # set by agents that read the observation: a mismatch (another game or options) is then named
        self.observation_size: int | None = None

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the agent's generator with an int in 0..2**63-1 (``None`` keeps it running)."""
        if check_optional_seed(seed) is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray]) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def check_observation(self, observation: dict[str, np.ndarray]) -> None:
        """``ValueError`` when the observation is not of the size this agent was made for (other options?)."""
        size = self.observation_size
        got = np.shape(observation["observation"])
        if size is not None and got != (size,):
            options = self.game_options or "the defaults"
            raise ValueError(
                f"{self.name} agent made for {self.game_id!r} with options {options} expects observations of "
                f"shape ({size},), got {got}: make it with the options of the env it plays in"
            )

    def legal(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        """Indices of the legal actions; ``ValueError`` if the mask has none (not this agent's turn)."""
        self.check_observation(observation)
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 0:
            raise ValueError(f"{self.name}: the action mask has no legal action (is it this agent's turn?)")
        return legal

    def __repr__(self) -> str:
        return f"{type(self).__name__}(game_id={self.game_id!r})"


class ViewAgent(BaseAgent):
    """An agent that searches from the seat's information view, handed to it by ``observe_view`` before each ``act``."""

    rules: Any
    _view: Any = None

    def observe_view(self, view: Any) -> None:
        """Take the seat's information view for the next ``act``."""
        self._view = view

    def take_view(self, observation: dict[str, np.ndarray]) -> tuple[Any, int]:
        """(the view handed over for this ``act``, the seat to move there); ``ValueError`` if none or a stale one."""
        view, self._view = self._view, None
        if view is None:
            raise ValueError(
                f"{self.name}: no information view; the front end must call observe_view(env.information_view(agent)) "
                "before act (jericho_env.agent_plugins.choose_action does)"
            )
        seat = self.rules.current_player(view)
        if seat < 0 or not np.array_equal(self.rules.observe(view, seat), observation["observation"]):
            raise ValueError(f"{self.name}: the information view does not match the observation (a stale view?)")
        return view, seat
