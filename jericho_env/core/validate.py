"""Checks of input from outside: state dictionaries (``from_dict``), seeds and random generators.

A state dictionary comes from outside (a file, a user), so every check names the field, what it holds
and what is allowed, each failure a ``StateFormatError``. The games add what a reachable state
satisfies (``games/<g>/serialize.py``).

Seeds: every public entry that takes one (``reset(seed=...)`` of the envs, ``agents.make(...,
seed=...)`` and an agent's ``reset``, the ``--seed`` flags) accepts an int in ``0 .. 2**63-1``
(``SEED_MAX``) or ``None``, and nothing else: ``check_seed`` raises ``OptionError`` naming the
argument and that range for a negative or too large int, a bool, a float (``1.5``, ``nan``) or text.
Why 63 bits, not numpy's legacy 32: the package draws the seeds it hands on (to the env inside the
single-agent view, to opponents, to a search's greedy rollouts, the tournament's per-game seeds) as
ints below 2**63 and passes them to these same entries, and the self-play vector keeps its deal seeds
in int64; 32 bits would refuse them, or change every seeded deal to fit. Code that must seed a
32-bit library (``np.random.seed``, SB3's ``set_random_seed``) reduces it there (``seed32``), and a seed
derived by adding to another stays in range with ``shift_seed``.
Rules engines take a ``np.random.Generator`` (``require_generator``), never a seed.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np

from jericho_env.core.rules import OptionError, StateFormatError

SEED_MAX = 2**63 - 1
SEED_RANGE = "0..2**63-1"  # how messages name the range (2**63-1 = 9223372036854775807)


def check_seed(seed: Any, name: str = "seed") -> int:
    """``seed`` as a Python int if it is an int (numpy's too, not a bool) in ``0..SEED_MAX``, else ``OptionError``."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and 0 <= int(seed) <= SEED_MAX:
        return int(seed)
    kind = "" if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) else f" (a {type(seed).__name__})"
    raise OptionError(f"{name}={seed!r}{kind} is not allowed: a seed is an int in {SEED_RANGE}, or None")


def check_optional_seed(seed: Any, name: str = "seed") -> int | None:
    """``None``, or ``check_seed(seed, name)``."""
    return None if seed is None else check_seed(seed, name)


def shift_seed(seed: int, k: int) -> int:
    """``seed + k`` wrapped into ``0..SEED_MAX``, a seed derived from another (``seed + k`` itself when it fits)."""
    return (seed + k) % (SEED_MAX + 1)


def seed32(seed: int) -> int:
    """``seed`` reduced to ``0..2**32-1`` for a library that takes 32 bits (``np.random.seed``, SB3's seeding)."""
    return seed % 2**32


def seed_from_text(text: str) -> int:
    """A seed written on a command line (``"42"``): ``OptionError`` saying what is allowed for anything else."""
    try:
        value = int(text)
    except ValueError:
        raise OptionError(f"expected a whole number in {SEED_RANGE}, got {text!r}") from None
    if not 0 <= value <= SEED_MAX:
        raise OptionError(f"a seed is a whole number in {SEED_RANGE}, got {text!r}")
    return value


class ChanceSource(abc.ABC):  # noqa: B024 - a marker for isinstance (register), no abstract method
    """What ``initial_state`` and ``determinize`` draw from: a ``np.random.Generator``, or a class registered here.

    The one registered class is the OpenSpiel bridge's replay of chance outcomes (``jericho_env.openspiel``),
    which answers the engines' draws (``integers``, ``permutation``) with the outcomes OpenSpiel chose.
    """


ChanceSource.register(np.random.Generator)


def require_generator(rng: Any, name: str = "rng") -> np.random.Generator:
    """``rng`` if it is a ``np.random.Generator`` (``ChanceSource``), else ``OptionError`` naming what to pass."""
    if not isinstance(rng, ChanceSource):
        shown = repr(rng) if len(repr(rng)) < 60 else repr(rng)[:57] + "..."
        raise OptionError(
            f"{name} must be a numpy random Generator (np.random.default_rng(seed)), got {type(rng).__name__} {shown}"
        )
    return cast(np.random.Generator, rng)


def require_mapping(game_id: str, data: Any, source: str = "to_dict") -> Mapping[str, Any]:
    """``data`` if it is a dict-like mapping, else ``StateFormatError`` (naming ``source``, what writes one)."""
    if not isinstance(data, Mapping):
        raise StateFormatError(f"{game_id} state must be a dict (from {source}), got {type(data).__name__}")
    return data


def require_keys(game_id: str, data: Mapping[str, Any], keys: Sequence[str]) -> None:
    """All of ``keys`` and nothing else: no default fills a missing key, and a misspelt one would be ignored."""
    missing = [k for k in keys if k not in data]
    allowed = ", ".join(keys)
    if missing:
        raise StateFormatError(f"{game_id} state is missing {', '.join(missing)}; expected keys {allowed}")
    unknown = sorted(str(k) for k in data if k not in keys)
    if unknown:
        raise StateFormatError(f"{game_id} state has unknown key(s) {', '.join(unknown)}; expected keys {allowed}")


def is_int(v: Any) -> bool:
    """Whether ``v`` is a Python int and not a bool (JSON numbers such as 21.0 are refused)."""
    return isinstance(v, int) and not isinstance(v, bool)


def strict_int(game_id: str, data: Mapping[str, Any], key: str, lo: int, hi: int) -> int:
    """``data[key]`` if it is an int (not a bool, not a float) in ``lo..hi``."""
    v = data[key]
    if not is_int(v) or not lo <= v <= hi:
        raise StateFormatError(f"{game_id} state: {key} must be an int in {lo}..{hi}, got {v!r}")
    return int(v)


def strict_bool(game_id: str, data: Mapping[str, Any], key: str) -> bool:
    """``data[key]`` if it is a bool (not 0 or 1)."""
    v = data[key]
    if not isinstance(v, bool):
        raise StateFormatError(f"{game_id} state: {key} must be true or false, got {v!r}")
    return v


def strict_list(game_id: str, value: Any, what: str, length: int | None = None) -> list[Any]:
    """``value`` if it is a list (of ``length`` entries when given)."""
    if not isinstance(value, list) or (length is not None and len(value) != length):
        size = f" of {length} entries" if length is not None else ""
        raise StateFormatError(f"{game_id} state: {what} must be a list{size}, got {value!r}")
    return value


def text_of(game_id: str, value: Any, what: str) -> str:
    """``value`` if it is a string (a card's text)."""
    if not isinstance(value, str):
        raise StateFormatError(f"{game_id} state: {what} must hold cards as text, got {value!r}")
    return value
