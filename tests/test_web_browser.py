"""The web page in a real browser: Debian's Chromium driven by Playwright (``executable_path``: no download).

A server (``create_app`` under uvicorn, in a thread) serves a runs folder holding a small
tournament recorded with ``--record``. The tests play a whole game of each game by clicking the
drawn table, watch a game to its end, open a replay and step through it, and take a screenshot of
each view: into ``$JERICHO_WEB_SCREENSHOTS`` when set (``docs/images`` for the README:
``JERICHO_WEB_SCREENSHOTS=docs/images pytest tests/test_web_browser.py``), else into a temporary folder.
The browser is ``$JERICHO_CHROMIUM`` or ``/usr/bin/chromium`` (``scripts/setup.sh`` installs it).
"""

from __future__ import annotations

import os
import random
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from playwright import sync_api

from experiments.evaluate import evaluate
from experiments.tournament import AgentSpec
from jericho_env.web.app import create_app

CHROMIUM = os.environ.get("JERICHO_CHROMIUM", "/usr/bin/chromium")
TIMEOUT_MS = 60_000  # the machines that run this are shared and loaded


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    runs = tmp_path_factory.mktemp("runs")
    specs = [AgentSpec("random", "random", {}), AgentSpec("greedy", "greedy", {})]
    summary = evaluate("castles", specs, deals=1, out=str(runs / "castles-table"), record=1, plot=False, quiet=True)
    assert summary["replays"][1] == 2  # one deal, both seat arrangements
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(runs), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the web server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser(base_url: str) -> Iterator[Any]:
    assert Path(CHROMIUM).is_file(), f"no Chromium at {CHROMIUM}: apt-get install chromium (scripts/setup.sh does)"
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture
def page(browser: Any, base_url: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(base_url)
    pg.wait_for_selector("body[data-ready=true]")
    yield pg
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def shots() -> Path:
    folder = Path(os.environ.get("JERICHO_WEB_SCREENSHOTS") or _tmp_shots)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


_tmp_shots = Path(os.environ.get("TMPDIR", "/tmp")) / f"jericho-web-shots-{os.getpid()}"


def screenshot(page: Any, name: str) -> Path:
    path = shots() / name
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000, f"{path} is nearly empty"
    return path


def settle(page: Any) -> dict[str, str]:
    """Wait until no request is under way; the page's state as its body's data attributes."""
    page.wait_for_function("document.body.dataset.busy !== 'true'")
    return dict(page.evaluate("() => ({...document.body.dataset})"))


def error_text(page: Any) -> str:
    box = page.locator("#error")
    return "" if box.is_hidden() else box.inner_text()


@pytest.mark.parametrize(("game", "options"), [("grid", {}), ("castles", {}), ("walls", {"num_players": 3})])
def test_play_a_whole_game_by_clicking(page: Any, game: str, options: dict[str, Any]) -> None:
    form = page.locator("#form-play")
    form.locator("select[name=game]").select_option(game)
    for name, value in options.items():
        form.locator(f"input[data-option={name}]").fill(str(value))
        form.locator(f"input[data-option={name}]").dispatch_event("change")
    for sel in form.locator(".agents select").all():
        sel.select_option("random")
    form.locator("#start-play").click()
    page.wait_for_selector("body[data-kind=play]")
    assert "you see only what your seat may see" in page.locator("#banner").inner_text()
    rng = random.Random(0)
    clicks = moves = 0
    shot = False
    while True:
        state = settle(page)
        assert not error_text(page), error_text(page)
        if state["over"] == "true":
            break
        assert state["yourTurn"] == "true", state
        live = page.locator("#board rect.target.live")
        if not shot and moves >= 3 and live.count():
            screenshot(page, f"web-play-{game}.png")  # the hand cards that may be played are framed
            shot = True
        if live.count():
            live.nth(rng.randrange(live.count())).click()
            clicks += 1
            state_after = settle(page)
            if state_after["plies"] != state["plies"]:
                moves += 1
            continue
        buttons = page.locator("#choices button.move")
        assert buttons.count(), "your turn, but neither a live card nor a move button"
        buttons.nth(rng.randrange(buttons.count())).click()
        if settle(page)["plies"] != state["plies"]:
            moves += 1
    assert page.locator("#status").inner_text().startswith("game over")
    assert moves >= 3 and clicks >= moves
    assert page.locator("#log li").count() >= moves


def test_watch_a_game_to_its_end(page: Any) -> None:
    page.locator("#tabs button[data-tab=watch]").click()
    form = page.locator("#form-watch")
    form.locator("select[name=game]").select_option("castles")
    form.locator("select[name=agent-0]").select_option("greedy")
    form.locator("select[name=agent-1]").select_option("random")
    form.locator("#start-watch").click()
    page.wait_for_selector("body[data-kind=watch]")
    assert "FULL VIEW" in page.locator("#banner").inner_text()
    page.locator("#step").click()
    assert settle(page)["plies"] == "1"
    page.locator("#speed").select_option("0")
    page.locator("#run").click()
    page.wait_for_selector("body[data-over=true]", timeout=120_000)
    settle(page)
    assert page.locator("#status").inner_text().startswith("game over")
    screenshot(page, "web-watch.png")
    page.locator("#view").select_option("0")
    settle(page)
    assert page.locator("#banner").inner_text().startswith("Seen by player_0 (greedy)")
    assert page.locator("#step").is_disabled()


def test_open_a_replay_and_step_through_it(page: Any) -> None:
    page.locator("#tabs button[data-tab=replay]").click()
    page.wait_for_selector("#replay-list button.replay")
    listed = page.locator("#replay-list button.replay")
    assert listed.count() == 2
    assert "random vs greedy" in page.locator("#replay-list .group").first.inner_text()
    listed.first.click()
    page.wait_for_selector("body[data-kind=replay]")
    state = settle(page)
    plies = int(state["plies"])
    assert state["ply"] == "0" and plies > 10
    for k in range(1, 6):
        page.locator("#next").click()
        assert settle(page)["ply"] == str(k)
    assert page.locator("#log li").count() == 5
    assert page.locator("#log li.current").inner_text() == page.locator("#log li").nth(4).inner_text()
    page.locator("#view").select_option("1")
    settle(page)
    assert page.locator("#banner").inner_text().startswith("Seen by player_1")
    screenshot(page, "web-replay.png")
    page.locator("#prev").click()
    assert settle(page)["ply"] == "4"
    page.locator("#last").click()
    state = settle(page)
    assert state["ply"] == str(plies) and state["over"] == "true"
    assert page.locator("#status").inner_text().startswith("game over")
    page.locator("#first").click()
    assert settle(page)["ply"] == "0"
