"""Uniformly random legal play, from the agent's own seeded generator."""

from __future__ import annotations

import numpy as np

from agents.base import BaseAgent


class RandomAgent(BaseAgent):
    """Picks uniformly among the legal actions."""

    name = "random"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """A uniformly random legal action."""
        legal = self.legal(observation)
        return int(legal[int(self.rng.integers(len(legal)))])
