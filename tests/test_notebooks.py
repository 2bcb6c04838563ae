"""The notebooks are committed without outputs, and their picture cells are tagged for the documentation build.

They are run once in the suite, by the documentation build (``scripts/docs_pages.py``, which stops if a
picture cell shows no image); ``tests/test_docs_site.py`` checks the executed copies that build renders.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def test_notebooks_exist_and_are_committed_without_outputs() -> None:
    assert [p.name for p in NOTEBOOKS] == ["01_quickstart.ipynb", "02_train_and_evaluate.ipynb"]
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), f"{path.name} has outputs"


def test_each_notebook_tags_the_cells_that_draw_pictures() -> None:
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        tagged = [c for c in nb.cells if "picture" in c.get("metadata", {}).get("tags", [])]
        drawing = [c for c in nb.cells if c.cell_type == "code" and ("plt." in c.source or "Image(" in c.source)]
        assert tagged and tagged == drawing, f"{path.name}: every cell drawing a picture is tagged picture"
