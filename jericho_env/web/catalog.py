"""What the page's forms offer for each game, derived from the games themselves (nothing typed here).

* ``option_values``: the values an option allows, for a select. The games declare their options
  as ``jericho_env.core.rules.Option`` (a default, a text and a ``check``); a choice option's
  values, a bool's two and an int option's range are found by asking its ``check`` about every
  candidate (``False``, ``True``, the ints ``-PROBE_INTS..PROBE_INTS`` and the default). An option
  whose values run past that window, or are not of those kinds (free text), has none: the page
  then shows a text box with the option's ``allowed`` text.
* ``first_player``: the seat that always moves first, or ``None`` when the deal draws it (every
  game here draws it; the page then says so instead of naming ``player_0``).
* ``rules_summary`` / ``rules_page``: the "Rules in short" section of the game's page (its
  package docstring, ``jericho_env/games/<game>/__init__.py``), and the whole page.
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any

import numpy as np

from jericho_env.core.rules import Option
from jericho_env.registry import make_rules, rules_class

PROBE_INTS = 256
PROBE_DEALS = 16  # deals looked at to tell a fixed first player from a drawn one


def option_values(option: Option) -> list[Any] | None:
    """Every value ``option`` allows, in order, or ``None`` if they cannot all be listed (see the module)."""
    declared = getattr(option, "choices", None)  # a spec that lists its values says so itself
    if declared is not None:
        return list(declared)
    candidates: list[Any] = [False, True, *range(-PROBE_INTS, PROBE_INTS + 1)]
    if option.default not in candidates or type(option.default) not in (bool, int):
        return None  # text or other kinds: not found by probing
    allowed = []
    for value in candidates:
        try:
            if option.check(value):
                allowed.append(value)
        except (TypeError, ValueError):
            continue
    ints = [v for v in allowed if not isinstance(v, bool)]
    if option.default not in allowed or (ints and max(ints) == PROBE_INTS) or (ints and min(ints) == -PROBE_INTS):
        return None  # open-ended (or a check that refuses its own default): a text box
    return allowed


@functools.cache
def first_player(game_id: str) -> int | None:
    """The seat to move first in every deal of ``game_id`` (default options), or ``None`` if deals differ."""
    rules = make_rules(game_id)
    seats = {rules.current_player(rules.initial_state(np.random.default_rng(k))) for k in range(PROBE_DEALS)}
    return seats.pop() if len(seats) == 1 else None


def rules_page(game_id: str) -> str:
    """The game's page: the docstring of its package (``jericho_env.games.<game>``), or of its rules module."""
    module = rules_class(game_id).__module__
    package = importlib.import_module(module.rsplit(".", 1)[0])
    return (package.__doc__ or importlib.import_module(module).__doc__ or "").strip()


@functools.cache
def rules_summary(game_id: str) -> str:
    """The "Rules in short" section of the game's page, or its first paragraph when it has no such section."""
    page = rules_page(game_id)
    found = re.search(r"^Rules in short\n-+\n(.*?)(?=^\S[^\n]*\n-{3,}\n|\Z)", page, flags=re.M | re.S)
    if found:
        return found.group(1).strip()
    return page.split("\n\n", 1)[0].strip()
