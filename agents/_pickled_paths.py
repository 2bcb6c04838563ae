"""Module paths that checkpoints already written name, answered as the modules they became.

A finder on ``sys.meta_path`` answers only the old names (``agents.networks``, ``agents.rollout``) with the new
module object itself, so pickled classes load and ``isinstance`` agrees.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

PICKLED: dict[str, str] = {
    "agents.networks": "agents.nets.pickled",
    "agents.rollout": "agents.ppo_buffer",  # PPO's rollout buffer, not search's rollouts
}


class _Alias(importlib.abc.Loader):
    """Loads an old name as the new module: the module object is shared, not copied."""

    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.new)
        self.spec = module.__spec__  # the import system sets the old name's spec on it next: put back in exec_module
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run (the new module ran when it was imported); the module keeps its own spec."""
        module.__spec__ = self.spec


class PickledPaths(importlib.abc.MetaPathFinder):
    """A ``sys.meta_path`` finder for the old names in ``PICKLED``."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = PICKLED.get(fullname)
        return None if new is None else importlib.machinery.ModuleSpec(fullname, _Alias(new))


if not any(isinstance(f, PickledPaths) for f in sys.meta_path):
    sys.meta_path.insert(0, PickledPaths())  # first: an old path means the new module, wherever found
