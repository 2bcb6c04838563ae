"""The documentation site: ``bash scripts/docs.sh`` builds it strict (warnings as errors) and offline.

One build per run (the notebooks executed, as CI builds it: the suite's only run of the notebooks) into a
temporary folder; Chromium (Debian's, driven by Playwright, as ``tests/test_web_browser.py`` does) opens
its index, a game page, the API page and both notebooks from a local server and finds every link
answering and every image drawn. The executed notebooks the build rendered are checked too: no error,
every picture cell an image, tables shown as tables, no path of this machine in any output. A site of one
page under the project's configuration shows that a broken link fails the build. The staging script's
link rewriting and its check of picture cells are checked on their own.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urldefrag, urlparse

import pytest
from playwright import sync_api

import jericho_env
from jericho_env import make_rules

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("JERICHO_CHROMIUM", "/usr/bin/chromium")
PAGES = ("index.html", "games/castles.html", "api/index.html", "api/envs.html", "notebooks/01_quickstart.html",
         "notebooks/02_train_and_evaluate.html")  # fmt: skip
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:tmp|home|work|root|usr|var|opt|private)/|site-packages|[A-Z]:\\")


def docs_sh(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``scripts/docs.sh`` with this interpreter."""
    env = {**os.environ, "PYTHON": sys.executable}
    return subprocess.run(
        ["bash", "scripts/docs.sh", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800, check=False
    )


@functools.cache
def docs_pages() -> ModuleType:
    """``scripts/docs_pages.py`` as a module (``scripts`` is not a package)."""
    spec = importlib.util.spec_from_file_location("docs_pages", ROOT / "scripts" / "docs_pages.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A built site (notebooks executed) served over HTTP from a thread: (site folder, base address)."""
    res = docs_sh("--out", str(tmp_path))
    assert res.returncode == 0, res.stdout[-5000:] + res.stderr[-5000:]
    site = tmp_path / "site"
    handler = functools.partial(QuietHandler, directory=str(site))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield site, f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        thread.join(timeout=10)


class QuietHandler(SimpleHTTPRequestHandler):
    """Python's static file handler without a log line per request."""

    def log_message(self, format: str, *args: Any) -> None:
        """Log nothing."""


def check_page(browser: Any, base: str, path: str) -> list[str]:
    """Open ``path``; return what is broken: failed requests, dead links, missing anchors, images not drawn."""
    problems: list[str] = []
    context = browser.new_context()
    page = context.new_page()
    page.on("requestfailed", lambda r: problems.append(f"{path}: request failed {r.url}"))
    page.on("response", lambda r: r.status >= 400 and problems.append(f"{path}: {r.status} {r.url}"))
    page.goto(base + path, wait_until="load")
    hrefs: list[str] = page.eval_on_selector_all("a[href]", "els => els.map(a => a.href)")
    images = page.eval_on_selector_all("img", "els => els.map(i => [i.src, i.complete && i.naturalWidth > 0])")
    ids: dict[str, set[str]] = {}
    for href in sorted(set(hrefs)):
        if urlparse(href).netloc != urlparse(base).netloc:
            continue  # outside links (PettingZoo, GitHub) are not this site's to answer for
        url, fragment = urldefrag(href)
        response = context.request.get(url)
        if response.status != 200:
            problems.append(f"{path}: link {href} answers {response.status}")
            continue
        if fragment and url.endswith(".html"):
            if url not in ids:
                ids[url] = set(re.findall(r'\bid="([^"]+)"', response.text()))
            if fragment not in ids[url]:
                problems.append(f"{path}: link {href}: no element with id {fragment!r}")
    problems += [f"{path}: image not drawn {src}" for src, drawn in images if not drawn]
    assert hrefs and (path != "games/castles.html" or images), f"{path} has no links or no picture"
    context.close()
    return problems


def test_the_site_builds_and_its_pages_have_no_broken_link_or_image(server: tuple[Path, str]) -> None:
    site, base = server
    for game in jericho_env.GAME_IDS:  # a page per game, from its own tables, with its picture
        html = (site / "games" / f"{game}.html").read_text(encoding="utf-8")
        assert f"images/{game}.png" in html and "Version History" in html
        for field in make_rules(game).layout.fields:
            assert f"<code>{field.name}</code>" in html, (game, field.name)
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "single_agent" in api and "OptionError" in api
    envs = (site / "api" / "envs.html").read_text(encoding="utf-8")
    for method in ("step", "observe", "observation_space", "action_space", "last", "render"):
        assert f'id="jericho_env.envs.aec.JerichoEnv.{method}"' in envs, f"the API page lacks JerichoEnv.{method}"
    for game in jericho_env.GAME_IDS:  # each game page opens with code to copy, under its properties
        html = (site / "games" / f"{game}.html").read_text(encoding="utf-8")
        assert html.index('id="properties"') < html.index("agent_iter") < html.index("Game lengths under random"), game
    notebook = (site / "notebooks" / "02_train_and_evaluate.html").read_text(encoding="utf-8")
    assert "ppo chooses" in notebook and "legal: True" in notebook  # rendered from the executed state
    assert "<table" in notebook and "| row vs column |" not in notebook  # the tournament table as a table
    check_executed_notebooks(site.parent / "src" / "notebooks")
    assert Path(CHROMIUM).is_file(), f"no Chromium at {CHROMIUM}: scripts/setup.sh --tests installs it"
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        problems = [x for path in PAGES for x in check_page(browser, base, path)]
        browser.close()
    assert not problems, "\n".join(problems)


def check_executed_notebooks(folder: Path) -> None:
    """The notebooks the build ran: every cell run without error, pictures drawn, tables shown, no machine path."""
    import nbformat

    executed = sorted(folder.glob("*.ipynb"))
    assert [p.name for p in executed] == ["01_quickstart.ipynb", "02_train_and_evaluate.ipynb"]
    for path in executed:
        nb = nbformat.read(path, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(c.get("execution_count") for c in code), f"{path.name}: a cell was not run"
        outputs = [o for c in code for o in c.get("outputs", [])]
        assert not [o for o in outputs if o.get("output_type") == "error"], f"{path.name}: a cell failed"
        docs_pages().check_pictures(nb, path.name)
        shown = "".join(str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", "")) for o in outputs)
        assert not MACHINE_PATH.search(shown), f"{path.name} shows a path of this machine: {MACHINE_PATH.search(shown)}"
        assert "| --- |" not in shown, f"{path.name} prints a Markdown table as text instead of showing it"
        assert any("text/markdown" in o.get("data", {}) for o in outputs), f"{path.name} shows no table"


@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_each_game_page_opens_with_code_that_plays_a_whole_game(game: str) -> None:
    import importlib

    doc = importlib.import_module(f"jericho_env.games.{game}").__doc__ or ""
    blocks = re.findall(r"```python\n(.*?)```", doc, re.S)
    assert len(blocks) == 1, f"{game}'s page has {len(blocks)} code blocks to copy, not one"
    assert doc.index("Properties") < doc.index(blocks[0]) < doc.index("Game lengths under random play")
    namespace: dict[str, Any] = {}
    exec(compile(blocks[0], f"<{game}'s page>", "exec"), namespace)  # the block as a reader pastes it
    env = namespace["env"].unwrapped
    assert env.rules.is_terminal(env.state) and env.agents == [] and env.num_moves > 10


def test_a_picture_cell_without_an_image_stops_the_build() -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\nplt.plot([1, 2])")
    cell.metadata["tags"] = ["picture"]
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/plain": "<Figure size 640x480>"})]
    nb.cells = [cell]
    with pytest.raises(SystemExit, match=r"nb\.ipynb: cell 0 is a picture cell but shows no image"):
        docs_pages().check_pictures(nb, "nb.ipynb")
    cell.outputs.append(nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="}))
    docs_pages().check_pictures(nb, "nb.ipynb")


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    """The project's configuration (strict, its link checks) on a site of one page: the page builds; with a link
    to a page that does not exist, the build fails and names it."""
    src = tmp_path / "src"
    src.mkdir()
    config = tmp_path / "mkdocs.yml"
    nav = "nav:\n  - Home: index.md\n"  # lists are replaced, not merged, under INHERIT
    config.write_text(f"INHERIT: {ROOT / 'mkdocs.yml'}\ndocs_dir: {src}\nsite_dir: {tmp_path / 'site'}\n{nav}")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config)]
    for link, fails in (("index.md#a-page", False), ("no-such-page.md", True)):
        (src / "index.md").write_text(f"# A page\n\n[a link]({link})\n", encoding="utf-8")
        built = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False)
        assert (built.returncode != 0) == fails, built.stdout[-3000:] + built.stderr[-3000:]
    assert "no-such-page.md" in built.stderr + built.stdout


def test_links_are_rewritten_for_the_site(tmp_path: Path) -> None:
    dp = docs_pages()
    out = tmp_path / "src"
    readme, page = ROOT / "README.md", out / "index.md"
    text = (
        "[install](docs/install.md#x) [page](jericho_env/games/walls/__init__.py) [rules](seeds/grid.md) "
        "![pic](docs/images/grid.png) [example](examples/rllib_ppo.py) [web](https://pettingzoo.farama.org) "
        "[lost](docs/no-such.md)"
    )
    got = dp.rewrite_links(text, readme, page, out)
    assert "[install](install.md#x)" in got and "[page](games/walls.md)" in got and "[rules](rules/grid.md)" in got
    assert "![pic](images/grid.png)" in got and "[web](https://pettingzoo.farama.org)" in got
    assert "example (`examples/rllib_ppo.py`)" in got  # a repository file the site does not hold: its path
    assert "[lost](no-such.md)" in got  # missing everywhere: left for the strict build to report
    deep = dp.rewrite_links(
        "[up](../results.md) [readme](../../README.md)", ROOT / "docs/history/x.md", out / "history/x.md", out
    )
    assert deep == "[up](../results.md) [readme](../index.md)"


def test_doctest_lines_become_code_blocks() -> None:
    spec = importlib.util.spec_from_file_location("docs_griffe", ROOT / "scripts" / "docs_griffe.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = "Intro.\n\n    >>> env = make('grid')\n    >>> env.reset(seed=0)\n\nAfter."
    assert module.fence_doctests(text) == (
        "Intro.\n\n\n```pycon\n>>> env = make('grid')\n>>> env.reset(seed=0)\n```\n\n\nAfter."
    )
    assert module.fence_doctests("No session here.") == "No session here."
