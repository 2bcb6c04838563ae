"""``greedy``: one simple heuristic per game, each reading only the observation (never hidden state).

The heuristics live beside this file, one module per game (``greedy_grid``, ``greedy_walls``,
``greedy_castles``); each module's docstring says what it does.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from agents.base import BaseAgent


def make_greedy(game_id: str, **kwargs: Any) -> BaseAgent:
    """The greedy agent of ``game_id``."""
    try:
        module = importlib.import_module(f"agents.greedy_{game_id}")
    except ModuleNotFoundError as e:
        raise ValueError(f"no greedy agent for game {game_id!r}") from e
    agent: BaseAgent = module.GreedyAgent(game_id, **kwargs)
    return agent


def has_greedy(game_id: str) -> bool:
    """Whether ``game_id`` has a greedy agent (a module ``agents.greedy_<game_id>``)."""
    return game_id.isidentifier() and importlib.util.find_spec(f"agents.greedy_{game_id}") is not None


def make_greedy_capture(game_id: str, **kwargs: Any) -> BaseAgent:
    """``greedy-capture``: the grid game's greedy agent under its own name."""
    if game_id != "grid":
        raise ValueError(f"greedy-capture plays only the grid game, not {game_id!r}; use 'greedy' for {game_id!r}")
    return make_greedy(game_id, **kwargs)
