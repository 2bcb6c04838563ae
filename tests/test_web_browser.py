"""The web page in a real browser: Debian's Chromium driven by Playwright (``executable_path``: no download).

A server (``create_app`` under uvicorn, in a thread) serves a runs folder holding a small
tournament recorded with ``--record``. On a phone (390x844) and a laptop (1280x720), a whole game of
grid, castles and walls (3, 4 and 5 players) is played by tapping the drawn table only, and at every
position the test measures what the player sees: the smallest card or place that plays now (at least
24x24 CSS pixels on the phone: WCAG 2.2's minimum target size), the smallest text on the table (at
least 11 px on both: the font size the browser computes times the SVG's scale, from
``getScreenCTM``), and that the page never scrolls sideways; the laptop's games are then stepped
back through. A game of each is also played by keyboard only: Start pressed with Enter puts the
focus on the table, arrow keys move between its targets, Enter or Space plays, a choice that starts
no move says why in one line in the ``aria-live`` note, and the focus stays on the table after every
move. The other tests: the first player named, tabs kept apart and left games deleted, one visitor's
many games never pushing out another's, pages of other sites refused, a watched game to its end, a
replay stepped through, the rules panel; before the first game, a refused start said beside Start, a
slow start's sign of life, networks greyed out for options they were not trained with; during a game,
the window not scrolling as the log follows a 30-move grid game, cards not clickable while an agent
thinks, and a window resized (a phone turned) getting the table drawn for its new box, the card
chosen still chosen. Each browser context is a visitor of its own (its own cookie); one browser serves the
module, and the games are against ``random``, which answers at once.

The browser is ``$JERICHO_CHROMIUM`` or ``/usr/bin/chromium`` (Debian's package ``chromium``; the
page's font comes from ``fonts-dejavu-core``: ``scripts/setup.sh --tests`` installs both). The
screenshots of ``docs/web.md`` are taken by ``scripts/web_screenshots.py``, not here.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright import sync_api
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route

from experiments.evaluate import evaluate
from experiments.play.tournament import AgentSpec
from jericho_env.web.app import create_app
from jericho_env.web.guard import VISITOR_COOKIE
from jericho_env.web.sessions import SessionStore
from tests.web_helpers import NO_HOOK, has_agent_options_hook, serving

CHROMIUM = os.environ.get("JERICHO_CHROMIUM", "/usr/bin/chromium")
TIMEOUT_MS = 60_000  # the machines that run this are shared and loaded
EVIL = "evil.example"  # resolved to 127.0.0.1 by the browser (--host-resolver-rules): another site's name
# A browser and a server for the module: the fast tier tests the server through its client (test_web_server.py)
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Any:
    runs = tmp_path_factory.mktemp("runs")
    specs = [AgentSpec("random", "random", {}), AgentSpec("greedy", "greedy", {})]
    summary = evaluate("castles", specs, deals=1, out=str(runs / "castles-table"), record=1, plot=False, quiet=True)
    assert summary["replays"][1] == 2  # one deal, both seat arrangements
    return create_app(runs, SessionStore(limit=200, per_visitor=12), seed=7)


@pytest.fixture(scope="module")
def base_url(app: Any) -> Iterator[str]:
    with serving(app) as url:
        yield url


@pytest.fixture(scope="module")
def browser(base_url: str) -> Iterator[Any]:
    assert Path(CHROMIUM).is_file(), f"no Chromium at {CHROMIUM}: scripts/setup.sh --tests installs it"
    with sync_api.sync_playwright() as p:
        args = ["--no-sandbox", "--disable-gpu", f"--host-resolver-rules=MAP {EVIL} 127.0.0.1"]
        b = p.chromium.launch(executable_path=CHROMIUM, args=args)
        yield b
        b.close()


class Visitor:
    """A browser context (a visitor of its own: its own cookie) and its page, opened on the server's page."""

    def __init__(self, browser: Any, base_url: str, width: int = 1360, height: int = 900, touch: bool = False) -> None:
        self.context = browser.new_context(viewport={"width": width, "height": height}, has_touch=touch)
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT_MS)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(base_url)
        self.page.wait_for_selector("body[data-ready=true]")

    @property
    def cookie(self) -> str:
        """The visitor name the server gave this browser."""
        return next(c["value"] for c in self.context.cookies() if c["name"] == VISITOR_COOKIE)

    def close(self) -> None:
        """Close the context; the page must have raised no JavaScript error."""
        self.context.close()
        assert not self.errors, f"JavaScript errors on the page: {self.errors}"


@pytest.fixture
def visitor(browser: Any, base_url: str) -> Iterator[Visitor]:
    v = Visitor(browser, base_url)
    yield v
    v.close()


@pytest.fixture
def page(visitor: Visitor) -> Any:
    return visitor.page


def settle(page: Any) -> dict[str, str]:
    """Wait until no request is under way; the page's state as its body's data attributes."""
    page.wait_for_function("document.body.dataset.busy !== 'true'")
    return dict(page.evaluate("() => ({...document.body.dataset})"))


def error_text(page: Any) -> str:
    box = page.locator("#error")
    return "" if box.is_hidden() else box.inner_text()


def choose(form: Any, game: str, options: dict[str, Any] | None = None, agent: str | None = "random") -> None:
    """Fill in a start form: the game, its options (select, checkbox or number field), every agent."""
    form.locator("select[name=game]").select_option(game)
    for name, value in (options or {}).items():
        field = form.locator(f"[data-option={name}]")
        kind = field.get_attribute("data-kind")
        if kind == "bool":
            field.set_checked(bool(value))
        elif kind == "choice":
            field.select_option(label=str(value))
        else:
            field.fill(str(value))
    if agent is not None:
        for sel in form.locator(".agents select").all():
            sel.select_option(agent)


def start_play(page: Any, game: str, options: dict[str, Any] | None = None, agent: str = "random") -> dict[str, str]:
    form = page.locator("#form-play")
    choose(form, game, options, agent)
    form.locator("#start-play").click()
    page.wait_for_selector("body[data-kind=play]")
    return settle(page)


def force_agent(page: Any, seat: int, name: str) -> None:
    """Set an agent select as a stale page could have it (greyed-out options cannot be clicked)."""
    page.evaluate(f"document.querySelector('#form-play select[name=agent-{seat}]').value = {name!r}")


def start_message(page: Any) -> str:
    box = page.locator("#form-play .start-error")
    box.wait_for(state="visible")
    return str(box.inner_text())


def wait_until(check: Any, what: str, seconds: float = 30) -> None:
    """Wait for ``check()`` to hold (the server acts on the page's requests in its own time)."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"still not so after {seconds} s: {what}"
        time.sleep(0.05)


PHONE, LAPTOP = (390, 844), (1280, 720)
GAMES = [("grid", {}), ("castles", {}), ("walls", {"num_players": 3}), ("walls", {"num_players": 4}),
         ("walls", {"num_players": 5})]  # fmt: skip
GAME_IDS = ["grid", "castles", "walls3", "walls4", "walls5"]
MIN_TARGET_PX, MIN_TEXT_PX = 24, 11
MEASURE = """() => {
  const live = [...document.querySelectorAll('#board rect.target.live')].map(r => r.getBoundingClientRect());
  const texts = [...document.querySelectorAll('#board svg.table text')].filter(t => t.textContent.trim());
  const px = t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a;
  const smallest = texts.reduce((a, t) => (a === null || px(t) < px(a) ? t : a), null);
  const doc = document.documentElement;
  return {target: live.length ? Math.min(...live.map(b => Math.min(b.width, b.height))) : null,
          text: smallest ? px(smallest) : null, which: smallest ? smallest.textContent : null,
          sideways: doc.scrollWidth - doc.clientWidth};
}"""
FOCUS = """() => {
  const a = document.activeElement;
  return {board: !!a.closest('#board'), live: a.classList.contains('live'), chosen: a.classList.contains('chosen'),
          move: a.matches('#choices button.move'), key: a.dataset ? a.dataset.key || null : null,
          tag: a.tagName, label: a.getAttribute('aria-label')};
}"""
# the board's focus stops in reading order, and whether each plays now (itself, or a target drawn on its box)
STOPS = """() => {
  const box = r => ['x', 'y', 'width', 'height'].map(a => r.getAttribute(a)).join();
  const live = new Set([...document.querySelectorAll('#board rect.target.live')].map(box));
  return [...document.querySelectorAll('#board rect.target:not(.dup)')].map(r => live.has(box(r)));
}"""


class Sizes:
    """The smallest live target and board text seen over a game, and whether the page ever scrolled sideways."""

    def __init__(self) -> None:
        self.target = self.text = float("inf")
        self.which = ""
        self.sideways = 0
        self.positions = 0

    def measure(self, page: Any) -> None:
        """Measure the position shown now."""
        m = page.evaluate(MEASURE)
        self.positions += 1
        if m["target"] is not None:
            self.target = min(self.target, m["target"])
        if m["text"] is not None and m["text"] < self.text:
            self.text, self.which = m["text"], m["which"]
        self.sideways = max(self.sideways, m["sideways"])


def open_form(page: Any) -> Any:
    """The play form, unfolded by a tap where a phone folded it away under a game."""
    toggle = page.locator("#side-toggle")
    if toggle.is_visible() and toggle.get_attribute("aria-expanded") == "false":
        toggle.tap()
    return page.locator("#form-play")


@pytest.fixture(scope="module")
def phone(browser: Any, base_url: str) -> Iterator[Visitor]:
    v = Visitor(browser, base_url, *PHONE, touch=True)
    yield v
    v.close()


@pytest.fixture(scope="module")
def laptop(browser: Any, base_url: str) -> Iterator[Visitor]:
    v = Visitor(browser, base_url, *LAPTOP, touch=True)
    yield v
    v.close()


def play_by_tapping(page: Any, game: str, options: dict[str, Any], seed: int) -> tuple[Sizes, int, int]:
    """A whole game started and played by taps only; (sizes seen, moves, taps)."""
    form = open_form(page)
    choose(form, game, options, "random")  # the form's fields are set by Playwright; the game is played by taps
    form.locator("#start-play").tap()
    page.wait_for_function("document.body.dataset.kind === 'play' && document.body.dataset.busy !== 'true'")
    assert "you see only what your seat may see" in page.locator("#banner").inner_text()
    assert page.locator("#step-controls").is_hidden()  # no looking back while the game is on
    rng = random.Random(seed)
    sizes = Sizes()
    taps = moves = 0
    for _ in range(800):
        state = settle(page)
        assert not error_text(page), error_text(page)
        sizes.measure(page)
        if state["over"] == "true":
            break
        assert state["yourTurn"] == "true", state
        live = page.locator("#board rect.target.live")
        if live.count():
            live.nth(rng.randrange(live.count())).tap()
        else:
            buttons = page.locator("#choices button.move")
            assert buttons.count(), "your turn, but neither a live card nor a move button"
            buttons.nth(rng.randrange(buttons.count())).tap()
        taps += 1
        moves += settle(page)["plies"] != state["plies"]
    else:
        raise AssertionError("the game did not end in 800 taps")
    return sizes, moves, taps


@pytest.mark.parametrize("where", ["phone", "laptop"])
@pytest.mark.parametrize(("game", "options"), GAMES, ids=GAME_IDS)
def test_a_whole_game_by_tapping_with_targets_and_text_large_enough(
    where: str, game: str, options: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    visitor: Visitor = request.getfixturevalue(where)
    page = visitor.page
    sizes, moves, taps = play_by_tapping(page, game, options, seed=GAMES.index((game, options)))
    label = f"{game} {options} on the {where}"
    print(f"{label}: smallest live target {sizes.target:.1f} px, smallest text {sizes.text:.1f} px "
          f"({sizes.which!r}) over {sizes.positions} positions")  # fmt: skip
    if where == "phone":
        assert sizes.target >= MIN_TARGET_PX, f"{label}: a card or place to choose is {sizes.target:.1f} px"
    assert sizes.text >= MIN_TEXT_PX, f"{label}: the table's text {sizes.which!r} renders at {sizes.text:.1f} px"
    assert sizes.sideways == 0, f"{label}: the page scrolls sideways by {sizes.sideways} px"
    assert moves >= 3 and taps >= moves
    status = page.locator("#status").inner_text()
    assert status.startswith("game over") and "0.33333" not in status
    plies = int(settle(page)["plies"])
    assert page.locator("#log li").count() == plies
    # the game's own result beside the reward the environment pays; no empty list of legal moves
    result = page.locator("#result")
    assert result.is_visible() and "Reward the environment pays, not the game's points: you " in result.inner_text()
    assert page.locator("#moves-box").is_hidden()
    if game == "walls":
        assert "cards won: you " in result.inner_text() and "winners share +1" in result.inner_text()
    if where == "laptop":
        step_back_through(page, plies, status)


def step_back_through(page: Any, plies: int, status: str) -> None:
    """The finished game stepped back through: buttons and arrow keys, in the past tense, nothing to play."""
    assert page.locator("#step-controls").is_visible()
    page.locator("#prev").tap()
    back = settle(page)
    assert back["ply"] == str(plies - 1) and back["over"] == "false" and back["yourTurn"] == "false"
    assert page.locator("#status").inner_text().startswith(f"after move {plies - 1} of {plies}: ")  # the past tense
    assert " to move" not in page.locator("#status").inner_text() and page.locator("#result").is_hidden()
    assert page.locator("#board rect.target.live").count() == 0 and page.locator("#choices button").count() == 0
    assert page.locator("#log li").count() == plies - 1
    page.locator("#prev").focus()
    page.keyboard.press("ArrowLeft")
    assert settle(page)["ply"] == str(plies - 2)
    page.locator("#first").tap()
    assert settle(page)["ply"] == "0" and page.locator("#log li").count() == 0
    page.locator("#next").tap()
    assert settle(page)["ply"] == "1" and page.locator("#log li.current").count() == 1
    page.locator("#last").tap()
    end = settle(page)
    assert end["ply"] == str(plies) and end["over"] == "true"
    assert page.locator("#status").inner_text() == status


def test_a_window_resized_gets_the_table_drawn_for_its_new_box(browser: Any, base_url: str) -> None:
    visitor = Visitor(browser, base_url, *LAPTOP, touch=True)
    try:
        page = visitor.page
        start_play(page, "walls", {"num_players": 4})
        page.locator("#board rect.target.live").first.tap()  # a card chosen: it stays chosen through the redraw
        wide = page.evaluate("document.querySelector('#board svg.table').viewBox.baseVal.width")
        page.set_viewport_size({"width": PHONE[0], "height": PHONE[1]})
        page.wait_for_function(f"document.querySelector('#board svg.table').viewBox.baseVal.width < {wide}")
        narrow = page.evaluate("document.querySelector('#board svg.table').viewBox.baseVal.width")
        assert narrow <= PHONE[0] - 16 < wide
        # a resize can fire twice (the scrollbar comes and goes): the second redraw settles on the one chosen card
        sync_api.expect(page.locator("#board rect.target.chosen")).to_have_count(1, timeout=5000)
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE[0]
    finally:
        visitor.close()


def to_stop(page: Any, index: int) -> None:
    """Move the focus to the board's ``index``-th focus stop (reading order) with Home and ArrowRight."""
    page.keyboard.press("Home")
    for _ in range(index):
        page.keyboard.press("ArrowRight")
    assert page.evaluate(FOCUS)["board"], "Home and ArrowRight left the table"


@pytest.mark.parametrize(("game", "options"), [("grid", {}), ("castles", {}), ("walls", {"num_players": 4})])
def test_a_whole_game_by_keyboard_only(browser: Any, base_url: str, game: str, options: dict[str, Any]) -> None:
    visitor = Visitor(browser, base_url, *LAPTOP)
    try:
        page = visitor.page
        choose(page.locator("#form-play"), game, options, "random")
        page.locator("#start-play").focus()
        page.keyboard.press("Enter")
        page.wait_for_function("document.body.dataset.kind === 'play' && document.body.dataset.busy !== 'true'")
        assert page.evaluate(FOCUS)["board"], "after Start the focus is not on the table"
        assert page.locator("#note").get_attribute("aria-live") == "polite"
        rng = random.Random(len(game))
        refused = moves = 0
        for _ in range(2000):
            state = settle(page)
            if state["over"] == "true":
                break
            focus = page.evaluate(FOCUS)
            assert focus["board"] or focus["move"], f"the focus left the table: {focus}"
            live = page.locator("#board rect.target.live").count()
            if not live:  # only buttons (grid's pass, castles' how many): back to them with Shift+Tab
                for _ in range(12):
                    page.keyboard.press("Shift+Tab")
                    if page.evaluate(FOCUS)["move"]:
                        break
                assert page.evaluate(FOCUS)["move"], "no move button reached by Shift+Tab"
                page.keyboard.press(rng.choice(["Enter", " "]))
            else:
                plays = page.evaluate(STOPS)
                if refused < 2 and not all(plays) and not page.locator("#board rect.target.chosen").count():
                    to_stop(page, plays.index(False))  # a target that starts no move: it says why, in one line
                    page.keyboard.press("Enter")
                    note = page.locator("#note").inner_text()
                    assert note and "\n" not in note and len(note) < 160, note
                    assert "refused" in str(page.locator("#note").get_attribute("class"))
                    refused += 1
                to_stop(page, rng.choice([i for i, p in enumerate(plays) if p]))
                page.keyboard.press(rng.choice(["Enter", " "]))
            after = settle(page)
            if after["plies"] != state["plies"]:
                moves += 1
                assert page.evaluate(FOCUS)["board"], f"the focus left the table after a move: {page.evaluate(FOCUS)}"
        else:
            raise AssertionError("the game did not end in 2000 key presses")
        assert page.locator("#status").inner_text().startswith("game over") and moves >= 3 and refused >= 1
    finally:
        visitor.close()


def test_the_first_player_named_is_the_one_who_moved_first(page: Any) -> None:
    form = page.locator("#form-play")
    form.locator("select[name=game]").select_option("castles")
    seats = form.locator("select[name=seat] option").all_inner_texts()
    assert seats == ["player_0", "player_1"]  # castles draws who moves first: no seat is named for it
    assert "drawn" in form.locator(".first-player").inner_text()
    seen = set()
    for _ in range(12):
        state = start_play(page, "castles")
        first = int(state["first"])
        marked = page.locator("#players .player.first")
        assert marked.count() == 1 and marked.get_attribute("data-seat") == str(first)
        assert marked.inner_text() == f"player_{first}: {'you' if first == 0 else 'random'} (moves first)"
        log = page.locator("#log li")
        if first == 1:  # the agent moved first: its face-down save opens the narration
            assert log.first.inner_text() == "player_1 (random): a save face down"
        else:
            assert log.count() == 0 and state["yourTurn"] == "true" and state["plies"] == "0"
        seen.add(first)
        if seen == {0, 1}:
            break
    assert seen == {0, 1}


def test_switching_tabs_keeps_each_tabs_game_and_the_page_deletes_the_games_it_leaves(
    visitor: Visitor, app: Any, base_url: str
) -> None:
    page, store = visitor.page, app.state.server.store
    start_play(page, "castles")
    first_game = store.owned_by(visitor.cookie)
    assert len(first_game) == 1 and page.locator("#choices button, #board rect.target.live").count() > 0
    start_play(page, "castles")  # a new game in the same tab replaces the old one: deleted on the server
    wait_until(lambda: len(store.owned_by(visitor.cookie)) == 1, "the replaced game is deleted")
    assert store.owned_by(visitor.cookie) != first_game
    page.locator("#tabs button[data-tab=watch]").click()
    assert page.locator("#game").is_hidden()  # none of the played game's controls stay
    assert page.locator("#choices *").count() == 0 and page.locator("#board *").count() == 0
    assert page.evaluate("document.body.dataset.kind") is None
    page.locator("#start-watch").click()
    page.wait_for_selector("body[data-kind=watch]")
    assert "FULL VIEW" in page.locator("#banner").inner_text() and page.locator("#choices button").count() == 0
    assert page.locator("#moves-box").is_hidden()
    page.locator("#tabs button[data-tab=replay]").click()
    assert page.locator("#game").is_hidden()
    page.locator("#tabs button[data-tab=play]").click()  # the played game is back, as it was
    state = settle(page)
    assert state["kind"] == "play" and state["yourTurn"] == "true" and page.locator("#step-controls").is_hidden()
    assert page.locator("#board rect.target.live").count() + page.locator("#choices button.move").count() > 0
    assert len(store.owned_by(visitor.cookie)) == 2  # one per tab
    page.goto("about:blank")  # leaving the page deletes its games
    wait_until(lambda: store.owned_by(visitor.cookie) == [], "the games of a closed page are deleted")


def test_one_visitors_many_games_never_push_out_anothers(browser: Any, base_url: str, app: Any) -> None:
    """The issue's case: 205 watch sessions opened by one visitor; another's game plays on."""
    store = app.state.server.store
    alice, bob = Visitor(browser, base_url), Visitor(browser, base_url)
    try:
        start_play(alice.page, "castles")
        mine = store.owned_by(alice.cookie)
        statuses = bob.page.evaluate(
            """async () => {
                const body = JSON.stringify({game: "castles", agents: ["random", "random"]});
                const headers = {"Content-Type": "application/json"};
                const post = () => fetch("/api/watch", {method: "POST", headers, body}).then(r => r.status);
                const out = [];
                for (let i = 0; i < 205; i += 41) out.push(...await Promise.all(Array.from({length: 41}, post)));
                return out;
            }"""
        )
        assert statuses == [200] * 205  # each of his new games pushed out only his own oldest
        assert len(store.owned_by(bob.cookie)) == 12 and store.owned_by(alice.cookie) == mine
        page = alice.page
        before = settle(page)["plies"]
        target = page.locator("#board rect.target.live, #choices button.move").first
        target.click()
        if page.locator("#choices button.move").count() and settle(page)["plies"] == before:
            page.locator("#choices button.move").first.click()
        wait_until(lambda: settle(page)["plies"] != before, "alice's move is played")
        assert not error_text(page), error_text(page)
    finally:
        alice.close()
        bob.close()


EVIL_PAGE = """<!doctype html><html><body><iframe name="sink"></iframe>
<form id="form" method="POST" enctype="text/plain" target="sink">
<input name='{"game": "castles", "agents": ["random", "random"], "x": "' value='"}'></form>
<script>
const target = new URLSearchParams(location.search).get("target");
const body = JSON.stringify({game: "castles", agents: ["random", "random"]});
const tries = [
  () => fetch(target + "/api/watch", {method: "POST", mode: "no-cors", credentials: "include",
                                      headers: {"Content-Type": "text/plain"}, body}),
  () => fetch(target + "/api/watch", {method: "POST", credentials: "include",
                                      headers: {"Content-Type": "application/json"}, body}),
  () => fetch(target + "/api/watch", {method: "POST", mode: "no-cors", credentials: "include", body}),
  () => Promise.resolve(navigator.sendBeacon(target + "/api/watch", body)),
  () => new Promise(done => {
    document.querySelector("iframe").onload = done;
    const form = document.getElementById("form");
    form.action = target + "/api/watch";
    form.submit();
  }),
];
(async () => {
  const results = [];
  for (const t of tries) { try { await t(); results.push("sent"); } catch (e) { results.push("blocked"); } }
  document.body.dataset.results = results.join(",");
  document.body.dataset.done = "true";
})();
</script></body></html>"""


def test_pages_of_other_sites_cannot_start_games(visitor: Visitor, app: Any, base_url: str, browser: Any) -> None:
    store = app.state.server.store
    start_play(visitor.page, "castles")  # the visitor has a game, and a cookie other sites' requests may carry
    count = len(store)
    evil_app = Starlette(routes=[Route("/", lambda request: HTMLResponse(EVIL_PAGE))])
    with serving(evil_app) as evil_base:
        attack = visitor.context.new_page()
        port = evil_base.rsplit(":", 1)[1]
        attack.goto(f"http://{EVIL}:{port}/?target={base_url}")
        attack.wait_for_selector("body[data-done=true]", timeout=TIMEOUT_MS)
        assert attack.evaluate("document.body.dataset.results").count("sent") >= 3  # they did reach the server
        attack.close()
    time.sleep(0.5)  # a beacon is sent in the background: give it time to arrive before counting
    assert len(store) == count, "a page of another site started a game"
    # the server reached under another site's name (DNS rebinding) answers nothing but a refusal
    rebound = visitor.context.new_page()
    port = base_url.rsplit(":", 1)[1]
    response = rebound.goto(f"http://{EVIL}:{port}/")
    assert response.status == 400 and "--allow-host" in response.json()["error"]
    assert rebound.evaluate("document.body.dataset.ready") is None  # the page did not load
    rebound.close()
    assert len(store) == count and not error_text(visitor.page)


def test_watch_a_game_to_its_end(page: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from agents.search.ismcts import ISMCTSAgent

    searched = ISMCTSAgent.act

    def slow_act(self: Any, observation: Any) -> int:  # the compiled search answers in milliseconds
        time.sleep(1.0)
        return searched(self, observation)

    monkeypatch.setattr(ISMCTSAgent, "act", slow_act)  # the server runs in this process (a thread)
    page.locator("#tabs button[data-tab=watch]").click()
    form = page.locator("#form-watch")
    form.locator("select[name=game]").select_option("castles")
    form.locator("select[name=agent-0]").select_option("ismcts")
    form.locator("select[name=agent-1]").select_option("ismcts")
    form.locator("#start-watch").click()
    page.wait_for_selector("body[data-kind=watch]")
    page.locator("#step").click()  # ismcts takes a second (slow_act): the page says it is thinking
    page.wait_for_selector("body[data-thinking=true]")
    assert page.locator("#thinking").inner_text().endswith("(ismcts) is thinking…")
    assert settle(page)["plies"] == "1" and page.locator("#thinking").is_hidden()
    form.locator("select[name=agent-0]").select_option("greedy")
    form.locator("select[name=agent-1]").select_option("random")
    form.locator("#start-watch").click()
    page.wait_for_selector("body[data-plies='0']")
    assert "FULL VIEW" in page.locator("#banner").inner_text()
    page.locator("#step").click()
    assert settle(page)["plies"] == "1"
    page.locator("#speed").select_option("0")
    page.locator("#run").click()
    page.wait_for_selector("body[data-over=true]", timeout=120_000)
    settle(page)
    assert page.locator("#status").inner_text().startswith("game over")
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
    page.locator("#prev").click()
    assert settle(page)["ply"] == "4"
    page.locator("#last").click()
    state = settle(page)
    assert state["ply"] == str(plies) and state["over"] == "true"
    assert page.locator("#status").inner_text().startswith("game over")
    page.locator("#first").click()
    assert settle(page)["ply"] == "0"


def test_the_rules_are_one_click_away(page: Any, base_url: str) -> None:
    form = page.locator("#form-play")
    form.locator("select[name=game]").select_option("walls")
    form.locator(".rules summary").click()
    text = form.locator(".rules-text").inner_text()
    assert text.startswith("110 cards") and "trumpet" in text
    assert form.locator(".rules-text i").first.inner_text() == "supply"  # the page's *supply* in italics
    assert "*" not in text
    assert form.locator(".rules-link").get_attribute("href") == "/rules/walls"
    rules = page.context.new_page()
    rules.goto(f"{base_url}/rules/walls")
    assert "Version History" in rules.locator("pre").inner_text()
    rules.close()
    form.locator("select[name=game]").select_option("grid")
    assert form.locator(".rules-text b").first.inner_text() == "base"  # and grid's **base** in bold
    assert "*" not in form.locator(".rules-text").inner_text()


# ------------------------------------------------------------------------------------ before the first game
def test_a_refused_start_says_why_beside_start(visitor: Visitor) -> None:
    """The issue's clicks: walls with 3 players, or castles A-K, against ppo (shipped for other options)."""
    page = visitor.page
    form = page.locator("#form-play")
    choose(form, "walls", {"num_players": 3})
    force_agent(page, 1, "ppo")
    form.locator("#start-play").click()
    message = start_message(page)
    assert "ppo cannot play walls" in message and "Number of players set to 4" in message, message
    assert "Choose another agent for player_1" in message and "(path=)" not in message
    assert page.locator("#game").is_hidden()  # no game yet: the message is beside Start, where the player is
    assert "invalid" in str(form.locator("select[name=agent-1]").get_attribute("class"))
    choose(form, "castles", {"ranks": 13}, agent="greedy")
    force_agent(page, 1, "ppo")
    form.locator("#start-play").click()
    page.wait_for_function("document.querySelector('#form-play .start-error').innerText.includes('castles')")
    assert "Ranks per suit set to 10" in start_message(page)
    choose(form, "grid", {"board_size": 4}, agent="random")  # a number out of its bounds, named before sending
    form.locator("#start-play").click()
    page.wait_for_function("document.querySelector('#form-play .start-error').innerText.includes('Board size')")
    assert start_message(page) == "Board size must be an odd number from 3 to 101; not 4."


def test_a_slow_start_shows_the_thinking_sign(visitor: Visitor, app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    opponents = app.state.server.opponents
    make = opponents.make

    def slow_make(*args: Any, **kwargs: Any) -> Any:  # as a network loading, or Numba compiling
        time.sleep(1.5)
        return make(*args, **kwargs)

    monkeypatch.setattr(opponents, "make", slow_make)  # the server runs in this process (a thread)
    page = visitor.page
    choose(page.locator("#form-play"), "castles")
    page.locator("#start-play").click()
    sign = page.locator("#form-play .start-thinking")
    sign.wait_for(state="visible")
    assert sign.locator(".text").inner_text() == "starting: dealing, and getting random ready…"
    assert page.locator("#start-play").is_disabled() and page.locator("#start-watch").is_disabled()
    page.wait_for_selector("body[data-kind=play]")
    settle(page)
    assert sign.is_hidden() and page.locator("#start-play").is_enabled()


def test_networks_that_cannot_play_the_options_are_not_offered(page: Any) -> None:
    assert has_agent_options_hook(), NO_HOOK
    form = page.locator("#form-play")
    choose(form, "walls", {"num_players": 3}, agent=None)
    ppo = form.locator("select[name=agent-1] option[value=ppo]")
    assert ppo.is_disabled() and ppo.inner_text() == "ppo (not for these options)"
    note = form.locator(".agents-note")
    dmc = form.locator("select[name=agent-1] option[value=dmc]")  # walls ships a dmc network too
    assert dmc.is_disabled() and dmc.inner_text() == "dmc (not for these options)"
    assert note.is_visible() and note.inner_text() == (
        "ppo and dmc are not offered here: they play walls only with Number of players set to 4."
    )
    assert form.locator("select[name=agent-1] option[value=greedy]").is_enabled()
    choose(form, "walls", {"num_players": 4}, agent=None)
    assert ppo.is_enabled() and dmc.is_enabled() and note.is_hidden()
    choose(form, "castles", {"ranks": 13}, agent=None)
    for name in ("ppo", "exit", "exit-search", "dmc", "dmc-search"):
        assert form.locator(f"select[name=agent-1] option[value={name}]").is_disabled(), name
    assert note.inner_text().startswith(
        "ppo, exit, exit-search, dmc and dmc-search are not offered here: they play castles only with"
    )


# ------------------------------------------------------------------------------------ during a game
def test_the_window_does_not_scroll_during_a_grid_game(browser: Any, base_url: str) -> None:
    """A 30-move grid game at 1280x720: the log follows the moves inside its box; the window stays put."""
    visitor = Visitor(browser, base_url, 1280, 720)
    try:
        page = visitor.page
        start_play(page, "grid")
        top = page.evaluate("window.scrollY")
        rng = random.Random(1)
        log = page.locator("#log")
        overflowing = "e => e.scrollHeight > e.clientHeight"
        while True:
            state = settle(page)
            if int(state["plies"]) >= 30 and log.evaluate(overflowing):
                break
            assert state["over"] == "false", "the game ended before 30 moves filled the log"
            live = page.locator("#board rect.target.live")
            if live.count():
                live.nth(rng.randrange(live.count())).click()
            else:
                page.locator("#choices button.move").first.click()
            settle(page)
            assert page.evaluate("window.scrollY") == top
        board = page.locator("#board").bounding_box()
        assert page.locator("#status").bounding_box()["y"] >= 0 and board["y"] + board["height"] <= 720
        assert log.evaluate("e => e.scrollTop > 0")  # it followed the moves, inside its own box
        assert log.evaluate("e => e.scrollTop + e.clientHeight >= e.scrollHeight - 2")  # to the newest move
    finally:
        visitor.close()


class SlowAgent:
    """An agent that takes a second over each move (as ismcts searching)."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    def reset(self, seed: int | None = None) -> None:
        """As the agent wrapped."""
        self.agent.reset(seed)

    def act(self, observation: Any) -> int:
        """The wrapped agent's move, a second later."""
        time.sleep(1.0)
        return int(self.agent.act(observation))


def test_while_an_agent_thinks_the_cards_are_not_clickable(
    page: Any, app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    opponents = app.state.server.opponents
    make = opponents.make
    monkeypatch.setattr(opponents, "make", lambda *a, **k: SlowAgent(make(*a, **k)))
    start_play(page, "grid")
    page.locator("#board rect.target.live").first.click()  # a hand card
    page.locator("#board rect.target.live").first.click()  # then a cell: no capture yet, so the agent answers
    page.wait_for_selector("body[data-waiting=true]")
    assert page.locator("#status").inner_text() == "player_1 (random) is thinking…"
    assert page.locator("#board rect.target.live").count() == 0 and page.locator("#choices button").count() == 0
    page.wait_for_selector("body[data-thinking=true]")  # and the sign of life beside the status
    assert page.locator("#thinking").is_visible()
    state = settle(page)
    assert state["yourTurn"] == "true" and page.evaluate("document.body.dataset.waiting") == "false"
    assert page.locator("#status").inner_text() == "your move" and page.locator("#board rect.target.live").count()
