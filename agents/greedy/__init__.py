"""``greedy``: one simple heuristic per game, each reading only the observation (never hidden state).

One module per game beside this file, each holding its heuristic (``GreedyAgent``) and the heuristic's twin
over a batch of rows (compiled with Numba, equal to the agent row by row), with a kernel file beside it where
Numba needs one:

| game | heuristic | batch twin | kernels |
| --- | --- | --- | --- |
| grid | ``grid.GreedyAgent`` | ``grid.BatchGreedyGrid`` | ``grid_kernel`` |
| walls | ``walls.GreedyAgent`` | ``walls_batch.BatchGreedyWalls`` | ``walls_kernel`` |
| castles | ``castles.GreedyAgent`` | ``castles.BatchGreedyCastles`` | in ``castles`` |

Each module's docstring says what its heuristic does; ``docs/agents.md`` how strong each plays.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from agents.base import BaseAgent

# game id -> (the module of its GreedyAgent, the module of its batch twin's ``batch_twin``)
GREEDY_MODULES: dict[str, tuple[str, str]] = {
    "grid": ("agents.greedy.grid", "agents.greedy.grid"),
    "walls": ("agents.greedy.walls", "agents.greedy.walls_batch"),
    "castles": ("agents.greedy.castles", "agents.greedy.castles"),
}


def _module(game_id: str, part: int) -> ModuleType:
    """The module of ``game_id``'s heuristic (``part`` 0) or of its batch twin (1), imported on first use."""
    if game_id not in GREEDY_MODULES:
        raise ValueError(f"no greedy agent for game {game_id!r}; greedy plays {', '.join(GREEDY_MODULES)}")
    return importlib.import_module(GREEDY_MODULES[game_id][part])


def make_greedy(game_id: str, **kwargs: Any) -> BaseAgent:
    """The greedy agent of ``game_id``."""
    agent: BaseAgent = _module(game_id, 0).GreedyAgent(game_id, **kwargs)
    return agent


def has_greedy(game_id: str) -> bool:
    """Whether ``game_id`` has a greedy agent."""
    return game_id in GREEDY_MODULES


def batch_twin(agent: BaseAgent, game_id: str, **options: Any) -> Any:
    """The twin over a batch of rows of ``agent`` (``make_greedy(game_id)``); None where the agent alone is faster."""
    return _module(game_id, 1).batch_twin(agent, **options)


def make_greedy_capture(game_id: str, **kwargs: Any) -> BaseAgent:
    """``greedy-capture``: the grid game's greedy agent under its own name."""
    if game_id != "grid":
        raise ValueError(f"greedy-capture plays only the grid game, not {game_id!r}; use 'greedy' for {game_id!r}")
    return make_greedy(game_id, **kwargs)
