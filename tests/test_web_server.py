"""The web server's JSON endpoints: bad input gets a clear error and the game goes on; games do not mix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from starlette.testclient import TestClient

from jericho_env.registry import make_rules
from jericho_env.replay import FILE_NAME, Replay, ReplayError, read_replays, write_replays
from jericho_env.web.app import create_app


def _replay(seed: int = 3) -> Replay:
    rules = make_rules("castles")
    state = rules.initial_state(np.random.default_rng(seed))
    rng = np.random.default_rng(seed)
    actions = []
    while not rules.is_terminal(state):
        a = int(rng.choice(rules.legal_actions(state)))
        actions.append(a)
        rules.apply(state, a)
    return Replay("castles", rules.version, dict(rules.options), seed, ("random", "random"), tuple(actions),
                  tuple(rules.returns(state)), {"pairing": "random vs random", "deal": 0})  # fmt: skip


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    (tmp_path / "t").mkdir()
    write_replays(tmp_path / "t" / FILE_NAME, [_replay(3), _replay(4)])
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / FILE_NAME).write_text('{"format": "something else"}\n')
    return TestClient(create_app(tmp_path))


def error(r: Any, status: int, *words: str) -> None:
    assert r.status_code == status, r.text
    message = r.json()["error"]
    for w in words:
        assert w in message, message


def test_catalog_lists_games_agents_and_replays(client: TestClient) -> None:
    games = {g["id"]: g for g in client.get("/api/games").json()["games"]}
    assert {"grid", "walls", "castles"} <= set(games)
    assert "greedy" in games["castles"]["agents"] and "ppo" not in games["castles"]["agents"]
    listed = client.get("/api/replays").json()["replays"]
    good = [r for r in listed if "error" not in r]
    assert [(r["file"], r["index"]) for r in good] == [("t/replays.jsonl", 0), ("t/replays.jsonl", 1)]
    assert [r["file"] for r in listed if "error" in r] == ["bad/replays.jsonl"]


def test_bad_requests_get_clear_errors(client: TestClient) -> None:
    error(client.post("/api/play", json={"game": "chess"}), 400, "unknown game", "castles")
    error(client.post("/api/play", content=b"{not json"), 400, "JSON")
    error(client.post("/api/play", json=[1, 2]), 400, "JSON object")
    error(client.post("/api/play", json={"game": "castles", "options": {"ranks": 7}}), 400, "ranks")
    error(
        client.post("/api/play", json={"game": "castles", "seat": 2, "agents": [None, "greedy"]}), 400, "seat", "0..1"
    )
    error(client.post("/api/play", json={"game": "castles", "agents": [None, "alphazero"]}), 400, "unknown agent")
    error(client.post("/api/play", json={"game": "castles", "agents": [None, "ppo:/etc/passwd"]}), 400, "checkpoint")
    error(client.post("/api/play", json={"game": "castles", "agents": ["greedy"]}), 400, "2 agent names")
    error(client.get("/api/session/0123456789abcdef"), 404, "unknown game id")
    error(client.post("/api/replay", json={"file": "../../etc/passwd", "index": 0}), 400, "unknown replay file")
    error(client.post("/api/replay", json={"file": "t/replays.jsonl", "index": 9}), 400, "0..1")
    error(client.post("/api/replay", json={"file": "bad/replays.jsonl", "index": 0}), 400, "format")
    error(client.get("/api/nothing"), 404, "no such address")


def test_illegal_and_stale_moves_leave_the_game_as_it_was(client: TestClient) -> None:
    view = client.post("/api/play", json={"game": "castles", "seat": 0, "agents": [None, "greedy"]}).json()
    sid, ply = view["id"], view["plies"]
    legal = {m["action"] for m in view["moves"]}
    illegal = next(a for a in range(1000) if a not in legal)
    error(client.post(f"/api/session/{sid}/move", json={"action": illegal, "ply": ply}), 400, "illegal move")
    error(client.post(f"/api/session/{sid}/move", json={"action": "7", "ply": ply}), 400, "integer")
    error(client.post(f"/api/session/{sid}/move", json={"action": min(legal), "ply": ply + 3}), 409, "stale")
    error(client.post(f"/api/session/{sid}/step", json={"ply": ply}), 409, "play session")
    error(client.get(f"/api/session/{sid}?seat=1"), 403, "your seat")
    error(client.get(f"/api/session/{sid}?seat=all"), 403, "your seat")
    error(client.get(f"/api/session/{sid}?ply=x"), 400, "integers")
    error(client.get(f"/api/session/{sid}?ply=999"), 400, "outside this game")
    assert client.get(f"/api/session/{sid}").json() == view  # unchanged by every refused request
    after = client.post(f"/api/session/{sid}/move", json={"action": min(legal), "ply": ply}).json()
    assert after["plies"] > ply and after["log"][ply]["who"] == "you"
    error(client.post(f"/api/session/{sid}/move", json={"action": min(legal), "ply": ply}), 409, "stale")
    assert client.delete(f"/api/session/{sid}").status_code == 200
    error(client.get(f"/api/session/{sid}"), 404, "unknown game id")


def test_many_games_at_once_do_not_mix(client: TestClient) -> None:
    seats = [[None, "random"], ["random", None]]
    views = [client.post("/api/play", json={"game": "grid", "seat": s, "agents": seats[s]}).json() for s in range(2)]
    watch = client.post("/api/watch", json={"game": "castles", "agents": ["greedy", "random"]}).json()
    assert len({v["id"] for v in [*views, watch]}) == 3
    for _ in range(3):  # interleaved moves in every game
        for k, v in enumerate(views):
            if not v["over"]:
                move = v["moves"][0]["action"]
                views[k] = client.post(f"/api/session/{v['id']}/move", json={"action": move, "ply": v["plies"]}).json()
        watch = client.post(f"/api/session/{watch['id']}/step?seat=all", json={"ply": watch["plies"]}).json()
    for k, v in enumerate(views):
        again = client.get(f"/api/session/{v['id']}").json()
        assert again == v and again["human"] == k
    assert watch["plies"] == 3 and watch["full_view"]
    assert client.get(f"/api/session/{watch['id']}?seat=1&ply=2").json()["seat"] == 1


def test_replays_round_trip_and_refuse_what_does_not_replay(tmp_path: Path) -> None:
    r = _replay(5)
    path = write_replays(tmp_path / FILE_NAME, [r])
    (back,) = read_replays(path)
    assert back == r and len(back.states()) == len(r.actions) + 1
    wrong = Replay(r.game, r.game_version, r.options, r.seed, r.seats, r.actions, tuple(-x for x in r.returns or ()))
    with pytest.raises(ReplayError, match="not the recorded"):
        wrong.states()
    cut = Replay(r.game, r.game_version, r.options, r.seed + 1, r.seats, r.actions, r.returns)
    with pytest.raises(ReplayError, match=r"does not replay|do not end|not the recorded"):
        cut.states()
    (tmp_path / "x.jsonl").write_text("{}\n")
    with pytest.raises(ReplayError, match=r"x\.jsonl line 1"):
        read_replays(tmp_path / "x.jsonl")
