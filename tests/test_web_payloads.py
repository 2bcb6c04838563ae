"""What the web server sends for a human seat holds nothing that seat may not see.

Every response body the page receives during whole games is recorded (the view after each move,
then a ``GET`` of the view at every ply of the finished game) and checked two ways:

* swapped games (castles, walls): a second game differs from the first only in cards the human
  seat never sees (the swaps of ``tests/test_play_hidden``); every payload of the two must be
  byte-identical once the session id is left out;
* named cards (grid, whose 52 cards are all different): no payload names a card of the
  opponent's hand or the draw pile, neither as drawn on the table (``10♥``) nor in move text (``10♥``
  as the page words it, or the code ``Th``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from starlette.testclient import TestClient

from jericho_env.core.cards import card_to_str
from jericho_env.games.grid.render import card_label
from jericho_env.registry import make_rules
from jericho_env.web.app import create_app
from jericho_env.web.guard import VISITOR_COOKIE
from jericho_env.web.sessions import Session
from tests.test_play_hidden import _castles_swap, _walls_swap, random_game


class Scripted:
    """An agent that plays the given moves of its seat in order."""

    def __init__(self, moves: Iterator[int]) -> None:
        self.moves = moves

    def reset(self, seed: int | None = None) -> None:
        """Nothing to re-seed."""

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """The next scripted move."""
        return next(self.moves)


def played_payloads(rules: Any, start: Any, moves: list[int], human: int) -> list[dict[str, Any]]:
    """Every payload the page receives while ``human`` plays its share of ``moves`` (others scripted)."""
    app = create_app("/nonexistent-runs")
    client = TestClient(app, base_url="http://127.0.0.1")
    client.get("/")  # the page: the server names this client as a visitor (a cookie)
    script = iter(moves)
    others = {s: Scripted(script) for s in range(rules.info.num_players) if s != human}  # one shared script
    session = Session("sid-test", "play", rules, start, ["you" if s == human else "x" for s in range(len(others) + 1)],
                      others, human=human)  # fmt: skip
    app.state.server.store.add(session, client.cookies[VISITOR_COOKIE])
    with session.lock:
        session.run_agents()
    payloads: list[dict[str, Any]] = []

    def record(response: Any) -> dict[str, Any]:
        assert response.status_code == 200, response.text
        payloads.append(json.loads(response.text))
        return payloads[-1]

    view = record(client.get("/api/session/sid-test"))
    while not view["over"]:
        assert view["your_turn"]
        action = next(script)
        assert action in [m["action"] for m in view["moves"]]
        view = record(client.post("/api/session/sid-test/move", json={"action": action, "ply": view["plies"]}))
    for ply in range(view["plies"] + 1):  # the game looked back on, ply by ply
        record(client.get(f"/api/session/sid-test?ply={ply}&seat={human}"))
    assert client.get("/api/session/sid-test?seat=all").status_code == 403
    return payloads


def _without_id(p: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in p.items() if k != "id"}, sort_keys=True)


def assert_same_payloads(game: str, options: dict[str, Any], human: int, found: Any) -> int:
    """Both games of a swap give ``human`` identical payloads; returns how many were compared."""
    rules = make_rules(game, **options)
    s1, m1, s2, m2 = found
    one = played_payloads(rules, s1, m1, human)
    two = played_payloads(rules, s2, m2, human)
    assert len(one) == len(two) > 10
    for k, (a, b) in enumerate(zip(one, two, strict=True)):
        assert _without_id(a) == _without_id(b), f"payload {k} differs: it shows a card the seat does not see"
    return len(one) + len(two)


@pytest.mark.parametrize("human", [0, 1])
def test_castles_payloads_hide_the_opponents_saves_and_deck(human: int) -> None:
    rules = make_rules("castles")
    found = next((r for seed in range(200) if (r := _castles_swap(rules, seed, human)) is not None), None)
    assert found is not None
    assert assert_same_payloads("castles", {}, human, found) > 50


@pytest.mark.parametrize(("players", "opening_only"), [(3, True), (4, False), (5, False)])
def test_walls_payloads_hide_face_down_supply_cards(players: int, opening_only: bool) -> None:
    rules = make_rules("walls", num_players=players)
    found = next((r for seed in range(50) if (r := _walls_swap(rules, seed, 0, opening_only)) is not None), None)
    assert found is not None
    assert assert_same_payloads("walls", {"num_players": players}, 0, found) > 50


def _grid_hidden_names(state: Any, human: int) -> set[str]:
    hidden = [*state.hands[1 - human], *state.draw]
    names = set()
    for card in hidden:
        label, _ = card_label(card)
        names.add(f">{label}<")  # a card face on the SVG table: its label is a text element of its own
        names.add(label)  # in move text, as the page words it ("10♥ at 0,-4")
        names.add(card_to_str(card))  # in move text, as the rules write it ("Th@0,-4")
    return names


@pytest.mark.parametrize(("human", "seed"), [(0, 1), (1, 2)])
def test_grid_payloads_never_name_a_hidden_card(human: int, seed: int) -> None:
    rules = make_rules("grid")
    start, moves, before = random_game(rules, seed)
    payloads = played_payloads(rules, start, moves, human)
    states = dict(enumerate(before))  # ply -> the state before that ply's move (the last: the end)
    checked = looked = 0
    for p in payloads:
        text = json.dumps(p, ensure_ascii=False)
        hidden = _grid_hidden_names(states[p["ply"]], human)  # empty once the hands and the pile run out
        looked += bool(hidden)
        for name in hidden:
            if name.startswith(">"):
                assert name not in p["svg"], f"ply {p['ply']}: the table shows hidden card {name}"
            else:  # move text such as "10♥ at 1,0" or "Th@1,0": a whole word
                assert not re.search(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![a-z])", text.replace(p["svg"], "")), (
                    f"ply {p['ply']}: hidden card {name} is named"
                )
        # the seat's own hand is drawn face up: the check above would see a leak
        assert all(f">{card_label(c)[0]}<" in p["svg"] for c in states[p["ply"]].hands[human])
        if p["ply"] == p["plies"] and not p["over"]:  # a game under way: the seed would deal every hidden card
            assert "seed" not in p
        checked += 1
    assert checked == len(payloads) > 20 and looked > checked // 2
