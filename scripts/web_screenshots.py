"""Take the web page's screenshots for ``docs/web.md`` (and the README): ``python scripts/web_screenshots.py``.

A server (``jericho_env.web.app.create_app``, seeded) runs in a thread over a temporary runs folder
holding one recorded castles tournament; Debian's Chromium, driven by Playwright as the tests drive
it, opens the page and plays. Written into ``docs/images`` (``--out`` for another folder):

* ``web-phone-GAME.png`` (390x844, the whole page) and ``web-laptop-GAME.png`` (1280x720, the window)
  for grid, castles and walls (4 players): a game against ``random`` a few moves in, played by tapping
  the table;
* ``web-play-walls.png`` (the README's), ``web-walls-over.png`` (a finished walls game),
  ``web-start.png`` (the start form with networks greyed out for castles A-K), ``web-refused.png``
  (a refused start), ``web-watch.png`` and ``web-replay.png``.

Every game is seeded (the server's ``seed``, the taps' own generator), so the pictures change only
when the page or the games do.
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PHONE, LAPTOP = (390, 844), (1280, 720)
GAMES = {"grid": ({}, 14), "castles": ({}, 6), "walls": ({"num_players": 4}, 10)}  # options, taps before the picture
CHROMIUM = os.environ.get("JERICHO_CHROMIUM", "/usr/bin/chromium")


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """``app`` under uvicorn in a thread on a free port of 127.0.0.1; yields its address."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the web server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def settle(page: Any) -> dict[str, str]:
    """Wait until no request is under way; the page's state (its body's data attributes)."""
    page.wait_for_function("document.body.dataset.busy !== 'true'")
    return dict(page.evaluate("() => ({...document.body.dataset})"))


def start(page: Any, game: str, options: dict[str, Any], agent: str = "random") -> None:
    """Fill in the play form (unfolding it on a phone) and press Start."""
    toggle = page.locator("#side-toggle")
    if toggle.is_visible() and toggle.get_attribute("aria-expanded") == "false":
        toggle.click()
    form = page.locator("#form-play")
    form.locator("select[name=game]").select_option(game)
    for name, value in options.items():
        form.locator(f"[data-option={name}]").select_option(label=str(value))
    for sel in form.locator(".agents select").all():
        sel.select_option(agent)
    form.locator("#start-play").click()
    page.wait_for_function("document.body.dataset.kind === 'play' && document.body.dataset.busy !== 'true'")


def tap_moves(page: Any, taps: int, rng: random.Random, to_the_end: bool = False) -> None:
    """Tap ``taps`` live targets or move buttons (or until the game is over, with ``to_the_end``)."""
    done = 0
    while to_the_end or done < taps:
        state = settle(page)
        if state.get("over") == "true":
            return
        live = page.locator("#board rect.target.live")
        if live.count():
            live.nth(rng.randrange(live.count())).tap()
        else:
            buttons = page.locator("#choices button.move")
            buttons.nth(rng.randrange(buttons.count())).tap()
        done += 1
    settle(page)


def take(base: str, browser: Any, out: Path, replays: bool) -> list[Path]:
    """Every picture of the module's list; returns the files written."""
    written: list[Path] = []

    def new_page(size: tuple[int, int]) -> Any:
        context = browser.new_context(viewport={"width": size[0], "height": size[1]}, has_touch=True)
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(base)
        page.wait_for_selector("body[data-ready=true]")
        return page

    def shot(page: Any, name: str, full: bool) -> None:
        path = out / name
        page.evaluate("document.activeElement && document.activeElement.blur()")  # no focus ring in the picture
        page.screenshot(path=str(path), full_page=full)
        written.append(path)

    for game, (options, taps) in GAMES.items():
        for where, size in (("phone", PHONE), ("laptop", LAPTOP)):
            page = new_page(size)
            start(page, game, options)
            tap_moves(page, taps, random.Random(7))
            live = page.locator("#board rect.target.live")
            if live.count() and game != "castles":  # a card chosen: where it may go is highlighted
                live.first.tap()
                settle(page)
            page.evaluate("window.scrollTo(0, 0)")
            shot(page, f"web-{where}-{game}.png", full=where == "phone")
            if game == "walls" and where == "laptop":
                shot(page, "web-play-walls.png", full=False)
                tap_moves(page, 0, random.Random(8), to_the_end=True)
                shot(page, "web-walls-over.png", full=True)
            page.context.close()
    page = new_page(LAPTOP)
    form = page.locator("#form-play")
    form.locator("select[name=game]").select_option("castles")
    form.locator("[data-option=ranks]").select_option(label="13")
    shot(page, "web-start.png", full=False)
    form.locator("select[name=game]").select_option("walls")
    form.locator("[data-option=num_players]").select_option(label="3")
    page.evaluate("document.querySelector('#form-play select[name=agent-1]').value = 'ppo'")
    form.locator("#start-play").click()
    form.locator(".start-error").wait_for(state="visible")
    shot(page, "web-refused.png", full=False)
    page.locator("#tabs button[data-tab=watch]").click()
    watch = page.locator("#form-watch")
    watch.locator("select[name=game]").select_option("castles")
    watch.locator("select[name=agent-0]").select_option("greedy")
    watch.locator("select[name=agent-1]").select_option("random")
    watch.locator("#start-watch").click()
    page.wait_for_selector("body[data-kind=watch]")
    for _ in range(12):
        page.locator("#step").click()
        settle(page)
    shot(page, "web-watch.png", full=False)
    if replays:
        page.locator("#tabs button[data-tab=replay]").click()
        page.wait_for_selector("#replay-list button.replay")
        page.locator("#replay-list button.replay").first.click()
        page.wait_for_selector("body[data-kind=replay]")
        for _ in range(8):
            page.locator("#next").click()
            settle(page)
        shot(page, "web-replay.png", full=False)
    page.context.close()
    return written


def main() -> None:
    """Parse the command line, serve the page, take the pictures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images", help="folder for the PNG files")
    args = parser.parse_args()
    from playwright import sync_api

    from experiments.evaluate import evaluate
    from experiments.play.tournament import AgentSpec
    from jericho_env.web.app import create_app

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp)
        specs = [AgentSpec("random", "random", {}), AgentSpec("greedy", "greedy", {})]
        evaluate("castles", specs, deals=1, out=str(runs / "castles-table"), record=1, plot=False, quiet=True)
        with serving(create_app(runs, seed=7)) as base, sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            try:
                written = take(base, browser, args.out, replays=True)
            finally:
                browser.close()
    for path in written:
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


if __name__ == "__main__":
    main()
