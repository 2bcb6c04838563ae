"""The notebooks run top to bottom with small budgets (design.md §4, layer 5)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def _kernel_for_this_interpreter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A kernelspec that runs this very interpreter (the venv's), whatever kernels the user has installed."""
    name = f"jericho-test-{os.getpid()}"
    spec = tmp_path / "kernels" / name
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": name, "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path) + os.pathsep + os.environ.get("JUPYTER_PATH", ""))
    return name


def test_notebooks_exist_and_are_committed_without_outputs() -> None:
    assert [p.name for p in NOTEBOOKS] == ["01_quickstart.ipynb", "02_train_and_evaluate.ipynb"]
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), f"{path.name} has outputs"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nb = nbformat.read(path, as_version=4)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    kernel = _kernel_for_this_interpreter(tmp_path, monkeypatch)
    client = NotebookClient(
        nb, timeout=300, kernel_name=kernel, resources={"metadata": {"path": str(path.parent.parent)}}
    )
    t0 = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - t0
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"
    ]
    assert not errors
    print(f"{path.name}: {seconds:.0f} s")  # timing is reported, not asserted (no timed tests)
