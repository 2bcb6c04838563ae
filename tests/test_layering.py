"""Layering as a checked contract: the import-linter contracts of ``pyproject.toml`` hold, and no import cycle exists.

Layers flow one way, ``experiments -> agents -> jericho_env`` (design.md §2). ``lint-imports`` checks the
contracts (imports inside functions and under ``TYPE_CHECKING`` count too); the cycle test builds the
import graph with grimp, import-linter's own graph library, and asserts that no module of the three
packages reaches itself, whatever the packages involved.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("jericho_env", "agents", "experiments")
LINT_IMPORTS = [
    sys.executable,
    "-c",
    "import sys; from importlinter.cli import lint_imports_command as c; sys.exit(c())",
]


def lint_imports(cwd: Path, python_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``lint-imports`` on the ``pyproject.toml`` in ``cwd``, finding the packages under ``python_path``."""
    env = None if python_path is None else {**os.environ, "PYTHONPATH": str(python_path)}
    return subprocess.run(
        [*LINT_IMPORTS, "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (or a module importing itself), each sorted."""
    adjacency = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in adjacency:
        if root in index:
            continue
        work = [(root, 0)]  # iterative Tarjan: (module, next neighbour to visit)
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            nbrs = adjacency.get(node, [])
            if i < len(nbrs):
                work.append((node, i + 1))
                nxt = nbrs[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component.append(m)
                    if m == node:
                        break
                if len(component) > 1 or node in adjacency.get(node, []):
                    cycles.append(sorted(component))
    return cycles


def test_the_import_contracts_of_pyproject_are_kept() -> None:
    res = lint_imports(ROOT)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "0 broken" in res.stdout
    for contract in ("The engine imports neither agents nor experiments", "No import cycles between the parts"):
        assert contract in res.stdout  # the contracts this issue asked for are configured


def test_no_module_import_cycles_in_the_three_packages() -> None:
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    assert {"jericho_env.play", "agents.registry", "experiments.train"} <= graph.modules
    cycles = import_cycles(graph)
    assert not cycles, "import cycles (each a set of modules that import one another): " + "; ".join(
        " <-> ".join(c) for c in cycles
    )


def test_the_cycle_finder_finds_cycles() -> None:
    graph = grimp.ImportGraph()
    for importer, imported in [("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d"), ("p.e", "p.e")]:
        graph.add_import(importer=importer, imported=imported)
    assert import_cycles(graph) == [["p.a", "p.b", "p.c"], ["p.e"]]


def test_the_contracts_catch_an_upward_import_and_a_cycle(tmp_path: Path) -> None:
    """A copy of the tree with an engine module importing ``agents`` and two game modules importing each other."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    rules = tmp_path / "jericho_env" / "games" / "grid" / "rules.py"
    rules.write_text(rules.read_text() + "\n\ndef _upward() -> None:\n    import agents  # noqa: F401\n")
    state = tmp_path / "jericho_env" / "games" / "grid" / "state.py"
    state.write_text(state.read_text() + "\nif False:\n    import jericho_env.games.grid.rules  # noqa: F401\n")
    res = lint_imports(tmp_path, python_path=tmp_path)
    out = res.stdout
    assert res.returncode != 0, out
    assert "The engine imports neither agents nor experiments BROKEN" in out
    assert "jericho_env.games.grid.rules -> agents" in out
    assert "No import cycles between the parts of any package BROKEN" in out
    assert "No cycles are allowed in jericho_env.games.grid" in out
