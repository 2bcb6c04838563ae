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
* ``option_field``: how the form shows an option, in the game's words: a label (the option's own
  text up to its colon, ``"number of players: 3-5 ..."`` -> "Number of players", else its name
  with spaces), a one-line help (the option's row of the "Options" table of the game's page, else
  its text), and the field: a checkbox for a yes/no option, a select for a short list, a number
  field with its bounds and step where the list would be long (more than ``LONG_LIST`` values in
  even steps, such as grid's ``board_size``, 3..101 by 2), a text box where the values cannot be
  listed. ``rule_words`` says what a number field takes ("an odd number from 3 to 101").
* ``reward_rule``: the "rewards" row of the game's Properties table: what the environment pays,
  shown beside the game's own result at the end.
"""

from __future__ import annotations

import functools
import importlib
import itertools
import re
from typing import Any

import numpy as np

from jericho_env.core.rules import Option
from jericho_env.registry import make_rules, rules_class

PROBE_INTS = 256
PROBE_DEALS = 16  # deals looked at to tell a fixed first player from a drawn one
LONG_LIST = 12  # more values than this, in even steps: a number field with bounds instead of a select
MAX_LABEL = 40  # characters of an option's text before its colon still read as its label
_SECTION = r"^{title}\n-+\n(.*?)(?=^\S[^\n]*\n-{{3,}}\n|\Z)"  # a section of a game's page, by its title


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
    found = _section(page, "Rules in short")
    if found is not None:
        return found
    return page.split("\n\n", 1)[0].strip()


def _section(page: str, title: str) -> str | None:
    found = re.search(_SECTION.format(title=re.escape(title)), page, flags=re.M | re.S)
    return found.group(1).strip() if found else None


def _table_rows(section: str | None) -> dict[str, str]:
    """The rows of a Markdown table in ``section`` by their first cell (backticks dropped): the last cell's text."""
    rows: dict[str, str] = {}
    for line in (section or "").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and not set(cells[0]) <= set("-: "):
            rows.setdefault(cells[0].strip("`*"), cells[-1].replace("`", ""))
    return rows


@functools.cache
def option_help(game_id: str) -> dict[str, str]:
    """Each option's one-line help from the "Options" table of the game's page (its last column), by name."""
    return _table_rows(_section(rules_page(game_id), "Options"))


@functools.cache
def reward_rule(game_id: str) -> str:
    """What the environment pays at the end: the "rewards" row of the game's Properties table ('' if none)."""
    return _table_rows(_section(rules_page(game_id), "Properties")).get("rewards", "")


def option_label(option: Option) -> str:
    """The option's label: its text up to a colon (``"ranks per suit: ..."`` -> "Ranks per suit"), else its name."""
    head, colon, _ = option.doc.partition(":")
    if colon and 0 < len(head.strip()) <= MAX_LABEL and ";" not in head:
        text = head.strip()
    else:
        text = option.name.replace("_", " ")
    return text[:1].upper() + text[1:]


def number_bounds(values: list[Any] | None) -> tuple[int, int, int] | None:
    """(min, max, step) when ``values`` are more than ``LONG_LIST`` ints in even steps, else ``None``."""
    if not values or len(values) <= LONG_LIST or any(isinstance(v, bool) or not isinstance(v, int) for v in values):
        return None
    step = values[1] - values[0]
    if step <= 0 or any(b - a != step for a, b in itertools.pairwise(values)):
        return None
    return values[0], values[-1], step


def rule_words(low: int, high: int, step: int) -> str:
    """What a number field takes, in words: "a whole number from 2 to 5", "an odd number from 3 to 101"."""
    if step == 1:
        return f"a whole number from {low} to {high}"
    if step == 2:
        return f"an {'odd' if low % 2 else 'even'} number from {low} to {high}"
    return f"a number from {low} to {high} in steps of {step}"


def option_field(game_id: str, option: Option) -> dict[str, Any]:
    """How the form shows ``option`` (see the module): name, label, help, kind, values or bounds, default."""
    values = option_values(option)
    field: dict[str, Any] = {
        "name": option.name,
        "label": option_label(option),
        "help": option_help(game_id).get(option.name) or option.doc,
        "default": option.default,
        "doc": option.doc,
        "allowed": option.allowed,
        "values": values,
    }
    bounds = number_bounds(values)
    if values is not None and all(isinstance(v, bool) for v in values) and len(values) == 2:
        field.update(kind="bool", rule="yes or no")
    elif bounds is not None:
        low, high, step = bounds
        field.update(kind="number", min=low, max=high, step=step, rule=rule_words(low, high, step))
    elif values is not None:
        field["kind"] = "choice"
    else:
        field["kind"] = "text"
    field.setdefault("rule", option.allowed)
    return field


def value_words(value: Any) -> str:
    """An option value as a player reads it: ``yes`` / ``no`` for booleans, else as written."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value) if isinstance(value, int) else repr(value)
