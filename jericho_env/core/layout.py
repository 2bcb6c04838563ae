"""Observation layout: named slices of one flat float32 array, and the table that documents them."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Sequence

import numpy as np


@dataclasses.dataclass(frozen=True)
class Field:
    """One named block of the observation: its shape and what each entry means."""

    name: str
    shape: tuple[int, ...]
    doc: str

    @property
    def size(self) -> int:
        """Number of floats in the block."""
        return math.prod(self.shape)


class ObsLayout:
    """A flat observation made of named fields, in order; every value lies in [0, 1]."""

    def __init__(self, fields: Sequence[Field]) -> None:
        names = [f.name for f in fields]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate field names in layout: {names}")
        self.fields: tuple[Field, ...] = tuple(fields)
        self.slices: dict[str, slice] = {}
        start = 0
        for f in self.fields:
            self.slices[f.name] = slice(start, start + f.size)
            start += f.size
        self.size: int = start

    def zeros(self) -> np.ndarray:
        """A new all-zero observation."""
        return np.zeros(self.size, dtype=np.float32)

    def view(self, obs: np.ndarray, name: str) -> np.ndarray:
        """The field ``name`` of ``obs``, reshaped to its shape (a view: writes go through)."""
        f = self.fields[self.index(name)]
        return obs[self.slices[name]].reshape(f.shape)

    def index(self, name: str) -> int:
        """Position of field ``name``; ``KeyError`` naming the known fields otherwise."""
        for i, f in enumerate(self.fields):
            if f.name == name:
                return i
        raise KeyError(f"no field {name!r}; fields are {[f.name for f in self.fields]}")

    def split(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Every field of ``obs`` by name."""
        return {f.name: obs[self.slices[f.name]].reshape(f.shape) for f in self.fields}

    def markdown_table(self, names: Collection[str] | None = None) -> str:
        """The layout as a Markdown table (name, offset, shape, meaning), for the game pages.

        ``names``: only the rows of those fields (offsets stay the whole layout's), e.g. the fields a newer
        observation version appends; the total row is always the whole layout's.
        """
        rows = ["| field | offset | shape | meaning |", "| --- | --- | --- | --- |"]
        for f in self.fields:
            if names is not None and f.name not in names:
                continue
            s = self.slices[f.name]
            rows.append(f"| `{f.name}` | {s.start} | {f.shape} | {f.doc} |")
        rows.append(f"| **total** | | ({self.size},) | float32, every value in [0, 1] |")
        return "\n".join(rows)
