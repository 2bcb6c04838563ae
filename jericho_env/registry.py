"""Which games exist and how to build their rules engines.

Adding a game: a ``games/<game>/`` package whose ``rules.py`` defines a ``Rules`` subclass, plus
one line in ``_BUILTIN``. Third-party games can call ``register_game`` at import time. ``make_rules``
builds a game's rules engine; ``batched_game`` its engine over many games at once (the compiled kernels
its ``Rules`` class names in ``batched``, else the Python rules), for the batched envs and the searches.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

from jericho_env.core.rules import OptionError, Rules

if TYPE_CHECKING:
    from jericho_env.core.batched import BatchedGame

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


def registered_games() -> dict[str, type[Rules[Any]]]:
    """The games registered with ``register_game`` (id -> ``Rules`` class), as a new dict."""
    return dict(_extra)


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


_warned: set[str] = set()


def batched_game(rules: Rules[Any], compiled: bool | None = None) -> BatchedGame[Any]:
    """The ``BatchedGame`` of ``rules``: its kernels where it has them and Numba is installed, else the Python rules.

    ``compiled=True`` insists on the kernels (``OptionError`` saying why they are not available);
    ``False`` always takes the Python rules; ``None`` (the default) takes the kernels when it can and warns
    when a game has kernels but Numba is missing.
    """
    from jericho_env.core.batched import PythonBatchedGame
    from jericho_env.core.kernels import NUMBA  # imported here: importing the registry stays cheap (no Numba)

    spec = getattr(type(rules), "batched", None)
    game_id = rules.info.game_id
    if compiled is False:
        return PythonBatchedGame(rules)
    if spec is None or not NUMBA:
        why = (
            f"{game_id!r} has no compiled kernels (its Rules class sets no `batched`)"
            if spec is None
            else "Numba is not installed (pip install 'jericho-env[train]' or pip install numba)"
        )
        if compiled:
            raise OptionError(f"make_batched({game_id!r}, compiled=True): {why}")
        if spec is not None and game_id not in _warned:
            _warned.add(game_id)
            warnings.warn(
                f"make_batched({game_id!r}): {why}; running the Python rules, much slower than the kernels",
                RuntimeWarning,
                stacklevel=3,
            )
        return PythonBatchedGame(rules)
    module_name, class_name = spec.split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    game: BatchedGame[Any] = cls(rules)
    return game
