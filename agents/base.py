"""The agent protocol: ``act(observation) -> action`` on PettingZoo observation dicts."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    """Anything that picks a legal action from a PettingZoo observation dict."""

    name: str

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """A legal action: ``observation["action_mask"][action] == 1``."""
        ...

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; re-seed any randomness the agent has."""
        ...


class BaseAgent:
    """Shared plumbing: a name, the game it plays and its own seeded generator."""

    name = "agent"

    def __init__(self, game_id: str, seed: int | None = None, **game_options: Any) -> None:
        self.game_id = game_id
        self.game_options = dict(game_options)
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the agent's generator (``None`` keeps it running)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray]) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def legal(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        """Indices of the legal actions; ``ValueError`` if the mask has none (not this agent's turn)."""
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 0:
            raise ValueError(f"{self.name}: the action mask has no legal action (is it this agent's turn?)")
        return legal

    def __repr__(self) -> str:
        return f"{type(self).__name__}(game_id={self.game_id!r})"
