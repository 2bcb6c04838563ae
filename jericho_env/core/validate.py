"""Helpers shared by the games' ``from_dict``: exact keys, strict ints and lists, each failure a ``StateFormatError``.

A state dictionary comes from outside (a file, a user), so every check names the field, what it holds
and what is allowed. The games add what a reachable state satisfies (``games/<g>/serialize.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jericho_env.core.rules import StateFormatError


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
