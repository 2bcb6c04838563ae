"""Old module paths of the regroup (2026-12-04) kept importable for one release, each as the module it became.

``import agents.ismcts`` (and ``from agents.ismcts import ISMCTSAgent``) gives ``agents.search.ismcts`` itself
(the same module object, so ``isinstance`` and monkeypatching agree) with a ``DeprecationWarning`` naming the
new path. A finder on ``sys.meta_path`` answers only the names in its table, so nothing else is affected and
no file is left behind at the old path. Checkpoints never named these modules (the safe format stores a
network's name, ``agents.nets.POLICIES``); this is for code and notebooks written against the old paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

# the agents' old module paths and where each went
AGENTS_MOVED: dict[str, str] = {
    "agents.greedy_grid": "agents.greedy.grid",
    "agents.greedy_grid_kernel": "agents.greedy.grid",
    "agents.greedy_walls": "agents.greedy.walls",
    "agents.greedy_walls_batch": "agents.greedy.walls",
    "agents.greedy_walls_kernel": "agents.greedy.walls",
    "agents.greedy_castles": "agents.greedy.castles",
    "agents.greedy_castles_batch": "agents.greedy.castles",
    "agents.ismcts": "agents.search.ismcts",
    "agents.puct": "agents.search.puct",
    "agents.rollout_search": "agents.search.rollout_search",
    "agents.compiled_search": "agents.search.compiled",
    "agents.row_calls": "agents.search.row_calls",
    "agents.row_values": "agents.search.row_values",
    "agents.greedy_grid_rows": "agents.greedy.grid",
    "agents.greedy_walls_rows": "agents.greedy.walls",
    # each greedy heuristic is one module: its kernel, batch twin and search rows went into it
    "agents.greedy.grid_kernel": "agents.greedy.grid",
    "agents.greedy.walls_batch": "agents.greedy.walls",
    "agents.greedy.walls_kernel": "agents.greedy.walls",
    "agents.search.greedy_grid_rows": "agents.greedy.grid",
    "agents.search.greedy_walls_rows": "agents.greedy.walls",
}


# module paths that checkpoints already written name (pickled class paths in Stable-Baselines3 zips): answered
# for good, without a warning
PICKLED: dict[str, str] = {
    "agents.networks": "agents.nets.pickled",
    "agents.rollout": "agents.ppo_buffer",  # PPO's rollout buffer, not search's rollouts
}


class _Alias(importlib.abc.Loader):
    """Loads an old name as the new module: the module object is shared, not copied."""

    def __init__(self, new: str, warn: bool = True) -> None:
        self.new, self.warn = new, warn

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        if self.warn:
            warnings.warn(f"{spec.name} moved to {self.new}; the old path goes in the next release",
                          DeprecationWarning, stacklevel=2)  # fmt: skip
        module = importlib.import_module(self.new)
        self.spec = module.__spec__  # the import system sets the old name's spec on it next: put back in exec_module
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run (the new module ran when it was imported); the module keeps its own spec."""
        module.__spec__ = self.spec


class MovedModules(importlib.abc.MetaPathFinder):
    """A ``sys.meta_path`` finder for the old names in ``moved`` (old dotted path -> new dotted path)."""

    def __init__(self, moved: Mapping[str, str], warn: bool = True) -> None:
        self.moved, self.warn = dict(moved), warn

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = self.moved.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(new, self.warn))


def keep_old_paths(moved: Mapping[str, str], warn: bool = True) -> None:
    """Install a finder for ``moved`` once (a second call with the same table does nothing)."""
    if not any(isinstance(f, MovedModules) and f.moved == dict(moved) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedModules(moved, warn))  # first: an old path means the new module, wherever found


keep_old_paths(AGENTS_MOVED)
keep_old_paths(PICKLED, warn=False)
