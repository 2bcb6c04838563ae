"""Stage the documentation site's sources for MkDocs: ``python scripts/docs_pages.py OUT [--no-execute]``.

``scripts/docs.sh`` runs this, then ``mkdocs build --strict`` over ``OUT`` (``mkdocs.yml``). What it writes:

* ``index.md``: the README (its quick start), ``docs/*`` and ``docs/images`` as they are;
* ``games/<game>.md``: each game's page, generated from the game's own tables: the module docstring of
  ``jericho_env/games/<game>/__init__.py`` (rules in short, properties, the observation layout, actions,
  options, version history), its picture (``docs/images/<game>.png``), and its options and version as
  the rules class declares them;
* ``rules/<game>.md``: the full rules specification (``seeds/<game>.md``);
* ``api/*.md``: the API reference, rendered by mkdocstrings from the docstrings;
* ``notebooks/*.ipynb``: the notebooks, executed here (the training budget small, ``NOTEBOOK_ENV``) and
  rendered by mkdocs-jupyter from that executed state; ``--no-execute`` copies them unexecuted. This is
  the one run of the notebooks in the test suite (``tests/test_docs_site.py`` checks the executed
  copies). A cell tagged ``picture`` (``notebooks/make_notebooks.py``) must show an image once run: the
  build stops, naming the cell, if one does not (``check_pictures``).

Links are rewritten for the site: ``docs/X`` to ``X``, a game's ``__init__.py`` to its page,
``seeds/<game>.md`` to its rules page, ``README.md`` to the index; a link to any other file of the
repository (source, examples) becomes its path as code, since the site does not hold it. A link to a
file that exists nowhere is left as it is, and the strict build fails on it.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)")
IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)")
# the notebooks' own knobs (notebooks/make_notebooks.py): a training budget small enough for a build
# (the tournament keeps its default deals: a table from a handful of games would mean nothing)
NOTEBOOK_ENV = {"JERICHO_NB_TIMESTEPS": "1024"}
PICTURE = "picture"  # the tag of a notebook cell that must show an image
API_PAGES = {
    "index.md": (
        "# API reference\n\nThe engine's public API (`jericho_env`), generated from the docstrings. "
        "Also: [envs](envs.md), [agent plugins](agent_plugins.md), [OpenSpiel bridge](openspiel.md), "
        "[agents](agents.md).\n\n::: jericho_env\n"
    ),
    "envs.md": (
        "# Environments\n\n::: jericho_env.envs.aec.JerichoEnv\n\n::: jericho_env.envs.single.SingleAgentEnv\n\n"
        "::: jericho_env.envs.single.IllegalMoveLossWarning\n\n::: jericho_env.envs.selfplay.SelfPlayVector\n"
    ),
    "agent_plugins.md": "# Agent plugins\n\n::: jericho_env.agent_plugins\n",
    "openspiel.md": "# OpenSpiel bridge\n\n::: jericho_env.openspiel\n",
    "agents.md": "# Agents\n\n`agents.make(name, game_id, **kwargs)` and its registry.\n\n::: agents.registry\n",
}


def game_ids() -> list[str]:
    """The game ids of the package (``jericho_env.GAME_IDS``)."""
    sys.path.insert(0, str(ROOT))
    import jericho_env

    return list(jericho_env.GAME_IDS)


def site_target(target: str, source: Path, out_page: Path, out: Path) -> str | None:
    """Where a link of ``source`` (a repository file) points on the site, relative to ``out_page``.

    ``None`` when it points to a repository file the site does not hold (the caller shows it as code).
    """
    if re.match(r"^[a-z]+:", target) or target.startswith("#"):
        return target
    path, _, anchor = target.partition("#")
    resolved = (source.parent / path).resolve()
    try:
        rel = resolved.relative_to(ROOT)
    except ValueError:
        return target
    parts = rel.parts
    site: Path | None = None
    if parts and parts[0] == "docs":
        site = out.joinpath(*parts[1:])
    elif rel.as_posix() == "README.md":
        site = out / "index.md"
    elif len(parts) == 4 and parts[:2] == ("jericho_env", "games") and parts[3] == "__init__.py":
        site = out / "games" / f"{parts[2]}.md"
    elif len(parts) == 2 and parts[0] == "seeds" and rel.suffix == ".md":
        site = out / "rules" / parts[1]
    elif parts and parts[0] == "notebooks" and rel.suffix == ".ipynb":
        site = out / "notebooks" / parts[-1]
    elif resolved.exists():
        return None
    if site is None:
        return target  # missing everywhere: left for the strict build to report
    link = os.path.relpath(site, out_page.parent).replace(os.sep, "/")
    return link + (f"#{anchor}" if anchor else "")


def rewrite_links(text: str, source: Path, out_page: Path, out: Path) -> str:
    """``text`` with its links and images pointing where the site keeps their targets."""

    def image(m: re.Match[str]) -> str:
        target = site_target(m.group(2), source, out_page, out)
        return f"![{m.group(1)}]({target if target is not None else m.group(2)})"

    def link(m: re.Match[str]) -> str:
        target = site_target(m.group(2), source, out_page, out)
        if target is None:
            label = m.group(1)
            path = m.group(2).split("#")[0]
            shown = (source.parent / path).resolve().relative_to(ROOT).as_posix()
            return label if label.strip("`") == shown else f"{label} (`{shown}`)"
        return f"[{m.group(1)}]({target})"

    return LINK.sub(link, IMAGE.sub(image, text))


def stage_markdown(source: Path, out_page: Path, out: Path) -> None:
    """Copy one markdown file to ``out_page`` with its links rewritten."""
    out_page.parent.mkdir(parents=True, exist_ok=True)
    out_page.write_text(rewrite_links(source.read_text(encoding="utf-8"), source, out_page, out), encoding="utf-8")


def game_page(game_id: str) -> str:
    """A game's page: its module docstring as Markdown, its picture, its declared options and version."""
    from jericho_env.registry import GAME_VERSIONS, rules_class

    init = ROOT / "jericho_env" / "games" / game_id / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    title, _, body = doc.partition("\n")
    cls = rules_class(game_id)
    options = "\n".join(f"| `{o.name}` | `{o.default!r}` | {o.allowed} | {o.doc} |" for o in cls.OPTIONS)
    body = re.sub(r"``seeds/(\w+)\.md``", r"[the rules specification](../rules/\1.md)", body)
    return (
        f"# {game_id}\n\n*{title.strip()}*\n\n"
        f"![{game_id}: a position from the seat to move](../images/{game_id}.png)\n\n"
        f"Gymnasium and PettingZoo id `jericho/{game_id}-v{GAME_VERSIONS[game_id]}` · "
        f"[full rules](../rules/{game_id}.md)\n\n"
        f"{body.strip()}\n\n"
        "## Options as the rules class declares them\n\n"
        "Generated from `OPTIONS` of the game's rules class (`jericho_env.make_rules(game_id, **options)`).\n\n"
        f"| option | default | allowed | meaning |\n| --- | --- | --- | --- |\n{options}\n"
    )


def check_pictures(nb: Any, name: str) -> None:
    """``SystemExit`` naming the first cell tagged ``picture`` of executed notebook ``nb`` that shows no image."""
    for i, cell in enumerate(nb.cells):
        if PICTURE not in cell.get("metadata", {}).get("tags", []):
            continue
        if not any("image/png" in out.get("data", {}) for out in cell.get("outputs", [])):
            raise SystemExit(f"{name}: cell {i} is a picture cell but shows no image once run (its outputs: "
                             f"{[o.get('output_type') for o in cell.get('outputs', [])]})")  # fmt: skip


def run_notebook(source: Path, target: Path) -> None:
    """Execute ``source`` top to bottom with this interpreter's kernel; write the executed copy to ``target``."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(source, as_version=4)
    with tempfile.TemporaryDirectory() as tmp:
        name = f"jericho-docs-{os.getpid()}"
        spec = Path(tmp) / "kernels" / name
        spec.mkdir(parents=True)
        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": name, "language": "python"}))
        saved = {k: os.environ.get(k) for k in [*NOTEBOOK_ENV, "JUPYTER_PATH"]}
        os.environ.update(NOTEBOOK_ENV)
        os.environ["JUPYTER_PATH"] = tmp + os.pathsep + os.environ.get("JUPYTER_PATH", "")
        try:
            NotebookClient(nb, timeout=600, kernel_name=name, resources={"metadata": {"path": str(ROOT)}}).execute()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    check_pictures(nb, f"notebooks/{source.name}")
    nbformat.write(nb, target)


def stage(out: Path, execute: bool) -> None:
    """Write every source of the site into ``out`` (emptied first)."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for source in sorted(DOCS.rglob("*")):
        rel = source.relative_to(DOCS)
        if source.is_dir() or rel.suffix == ".py":
            continue
        if rel.suffix == ".md":
            stage_markdown(source, out / rel, out)
        else:
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, out / rel)
    stage_markdown(ROOT / "README.md", out / "index.md", out)
    for game in game_ids():
        page = out / "games" / f"{game}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        init = ROOT / "jericho_env" / "games" / game / "__init__.py"
        page.write_text(rewrite_links(game_page(game), init, page, out), encoding="utf-8")
        stage_markdown(ROOT / "seeds" / f"{game}.md", out / "rules" / f"{game}.md", out)
    (out / "api").mkdir()
    for name, text in API_PAGES.items():
        (out / "api" / name).write_text(text, encoding="utf-8")
    (out / "notebooks").mkdir()
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        if execute:
            run_notebook(nb, out / "notebooks" / nb.name)
        else:
            shutil.copy2(nb, out / "notebooks" / nb.name)


def main() -> None:
    """Parse the command line and stage the site's sources."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="the folder to write (emptied first)")
    parser.add_argument("--no-execute", action="store_true", help="copy the notebooks without running them")
    args = parser.parse_args()
    stage(args.out.resolve(), execute=not args.no_execute)
    print(f"staged the site's sources in {args.out}")


if __name__ == "__main__":
    main()
