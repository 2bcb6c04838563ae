"""Baseline agents for jericho-env: ``agents.make(name, game_id, **kwargs)``.

Names: ``random``; ``greedy`` (one heuristic per game; ``greedy-capture`` is the grid one's own
name); ``ppo`` (``path=`` a MaskablePPO checkpoint saved by ``experiments.train``).
"""

from agents.base import Agent, BaseAgent
from agents.registry import AGENT_NAMES, make, parse_spec

__all__ = ["AGENT_NAMES", "Agent", "BaseAgent", "make", "parse_spec"]
