"""``greedy``: one simple heuristic per game, each reading only the observation (never hidden state).

One module per game, each holding its heuristic written once, as functions over one observation row that
Numba compiles where it is installed (plain Python otherwise), and the three callers of those functions:

| game | the agent | over a batch of rows | search's prior and rollouts |
| --- | --- | --- | --- |
| grid | ``grid.GreedyAgent`` | ``grid.BatchGreedyGrid`` | ``grid.row_functions`` |
| walls | ``walls.GreedyAgent`` | ``walls.BatchGreedyWalls`` | ``walls.row_functions`` |
| castles | ``castles.GreedyAgent`` | ``castles.BatchGreedyCastles`` | ``castles.row_functions`` (rollouts) |

Each module's docstring says what its heuristic does; ``docs/agents.md`` how strong each plays;
``tests/greedy_oracles.py`` holds the readable Python versions the functions are tested equal to.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from agents.base import BaseAgent

GREEDY_MODULES = {"grid": "agents.greedy.grid", "walls": "agents.greedy.walls", "castles": "agents.greedy.castles"}


def _module(game_id: str) -> ModuleType:
    """The module of ``game_id``'s heuristic, imported on first use."""
    if game_id not in GREEDY_MODULES:
        raise ValueError(f"no greedy agent for game {game_id!r}; greedy plays {', '.join(GREEDY_MODULES)}")
    return importlib.import_module(GREEDY_MODULES[game_id])


def make_greedy(game_id: str, **kwargs: Any) -> BaseAgent:
    """The greedy agent of ``game_id``."""
    agent: BaseAgent = _module(game_id).GreedyAgent(game_id, **kwargs)
    return agent


def has_greedy(game_id: str) -> bool:
    """Whether ``game_id`` has a greedy agent."""
    return game_id in GREEDY_MODULES


def batch_twin(agent: BaseAgent, game_id: str, **options: Any) -> Any:
    """The twin over a batch of rows of ``agent`` (``make_greedy(game_id)``); None where the agent alone is as fast."""
    return _module(game_id).batch_twin(agent, **options)


def row_functions(rules: Any) -> tuple[Any, Any, Any] | None:
    """(prior, rollout, params) of greedy for search's rows (``agents.search.compiled.RowPolicy``), or None.

    The prior is None for a heuristic without scores (castles).
    """
    game_id = rules.info.game_id
    return _module(game_id).row_functions(rules) if has_greedy(game_id) else None  # type: ignore[no-any-return]


def make_greedy_capture(game_id: str, **kwargs: Any) -> BaseAgent:
    """``greedy-capture``: the grid game's greedy agent under its own name."""
    if game_id != "grid":
        raise ValueError(f"greedy-capture plays only the grid game, not {game_id!r}; use 'greedy' for {game_id!r}")
    return make_greedy(game_id, **kwargs)
