"""Which games exist and how to build their rules engines.

Adding a game: a ``games/<game>/`` package whose ``rules.py`` defines a ``Rules`` subclass, plus
one line in ``_BUILTIN``. Third-party games can call ``register_game`` at import time.
"""

from __future__ import annotations

import importlib
from typing import Any

from jericho_env.core.rules import OptionError, Rules

_BUILTIN: dict[str, str] = {
    "grid": "jericho_env.games.grid.rules:GridRules",
    "walls": "jericho_env.games.walls.rules:WallsRules",
    "castles": "jericho_env.games.castles.rules:CastlesRules",
}
GAME_IDS: tuple[str, ...] = tuple(_BUILTIN)
# The env version of each built-in game (its ``Rules.version``; a test keeps the two equal), known
# without importing the games so that registering with PettingZoo stays cheap.
GAME_VERSIONS: dict[str, int] = {"grid": 0, "walls": 1, "castles": 0}
_extra: dict[str, type[Rules[Any]]] = {}


def register_game(game_id: str, rules_class: type[Rules[Any]]) -> None:
    """Make ``rules_class`` available to ``make(game_id)`` (for games outside this package)."""
    if game_id in _BUILTIN:
        raise OptionError(f"game id {game_id!r} is built in and cannot be replaced")
    _extra[game_id] = rules_class


def known_game_ids() -> tuple[str, ...]:
    """Built-in game ids followed by any registered ones."""
    return GAME_IDS + tuple(_extra)


def rules_class(game_id: str) -> type[Rules[Any]]:
    """The ``Rules`` subclass of ``game_id``; ``OptionError`` naming the known ids otherwise."""
    if not isinstance(game_id, str):
        raise OptionError(f"game id must be a string, one of {', '.join(known_game_ids())}; got {game_id!r}")
    if game_id in _extra:
        return _extra[game_id]
    if game_id not in _BUILTIN:
        raise OptionError(f"unknown game id {game_id!r}; known games: {', '.join(known_game_ids())}")
    module_name, class_name = _BUILTIN[game_id].split(":")
    cls: type[Rules[Any]] = getattr(importlib.import_module(module_name), class_name)
    return cls


def make_rules(game_id: str, **options: Any) -> Rules[Any]:
    """The rules engine of ``game_id`` under ``options`` (validated; ``OptionError`` if not)."""
    return rules_class(game_id)(**options)
