"""What the server refuses before any game is touched, and whose games are whose.

* Host: only the served names (DNS rebinding); ``allowed_hosts`` / ``--allow-host`` add one on purpose.
* Origin and JSON: a request that changes something must come from the page's own origin and be JSON.
* Malformed bodies of every shape get a JSON 4xx and leave the game as it was; the body limit holds
  while the body is read (a real server, a raw socket sending an endless chunked body).
* Visitors: a cookie names each; a visitor sees only their own sessions; a visitor's many sessions
  push out only their own, and a full server refuses new games instead of pushing out anyone's.
  Requests without a cookie share a small pool of their own (250 of them leave room for everyone
  else); idle games go after minutes, not hours, once the server is nearly full.
"""

from __future__ import annotations

import json
import select
import socket
from typing import Any

import pytest
from starlette.testclient import TestClient

from jericho_env.web.__main__ import main as web_main
from jericho_env.web.__main__ import served_names
from jericho_env.web.app import create_app
from jericho_env.web.guard import MAX_BODY, VISITOR_COOKIE, host_name
from jericho_env.web.sessions import SessionStore
from tests.web_helpers import error, serving

BASE = "http://127.0.0.1"
WATCH = {"game": "castles", "agents": ["random", "random"]}


def visitor(app: Any, base: str = BASE) -> TestClient:
    """A new client (its own cookie jar: a visitor of its own) that has loaded the page."""
    client = TestClient(app, base_url=base)
    assert client.get("/").status_code == 200 and VISITOR_COOKIE in client.cookies
    return client


@pytest.fixture
def app() -> Any:
    return create_app("/nonexistent-runs", seed=1)


# ------------------------------------------------------------------------------------------- Host
def test_only_the_served_names_are_answered(app: Any) -> None:
    for base in ("http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000", "http://LOCALHOST"):
        assert TestClient(app, base_url=base).get("/api/games").status_code == 200, base
    for base in (
        "http://evil.example",
        "http://evil.example:8000",
        "http://127.0.0.1.evil.example",
        "http://testserver",
    ):
        r = TestClient(app, base_url=base).get("/")
        error(r, 400, "--allow-host", "not to Host")
    assert len(app.state.server.store) == 0
    error(TestClient(app, base_url="http://evil.example").post("/api/watch", json=WATCH), 400, "--allow-host")
    assert len(app.state.server.store) == 0


def test_another_name_is_answered_when_allowed_on_purpose() -> None:
    app = create_app("/nonexistent-runs", allowed_hosts=["mybox.lan"])
    assert TestClient(app, base_url="http://mybox.lan:8000").get("/api/games").status_code == 200
    error(TestClient(app, base_url="http://localhost").get("/"), 400, "mybox.lan")
    anyone = create_app("/nonexistent-runs", allowed_hosts=["*"])
    assert TestClient(anyone, base_url="http://whatever.example").get("/api/games").status_code == 200
    assert [host_name(h) for h in ("LocalHost:80", "[::1]:8000", "::1", "a.b")] == ["localhost", "::1", "::1", "a.b"]
    with pytest.raises(ValueError, match="allowed_hosts is empty"):
        TestClient(create_app("/nonexistent-runs", allowed_hosts=[]), base_url=BASE).get("/")


def test_the_command_line_serves_the_names_it_is_told() -> None:
    local = ("127.0.0.1", "localhost", "::1")
    assert served_names("127.0.0.1", [], local) == [*local, "127.0.0.1"]
    assert served_names("192.168.1.20", [], local) == [*local, "192.168.1.20"]  # a bound address answers to itself
    assert served_names("0.0.0.0", ["mybox.lan", "*"], local) == [*local, "mybox.lan", "*"]  # every interface: no name
    assert served_names("::", [], local) == list(local)


def test_the_command_line_refuses_bad_server_settings(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, words in [
        (["--allow-host", "http://evil.example/"], "--allow-host takes a host name"),
        (["--games-per-visitor", "0"], "--games-per-visitor must be 1..--max-games"),
        (["--max-games", "3", "--games-per-visitor", "5"], "--games-per-visitor must be 1..--max-games (3)"),
        (["--max-games", "0"], "--max-games must be at least 1"),
        (["--checkpoint-memory", "-1"], "--checkpoint-memory must be >= 0"),
        (["--anonymous-games", "300"], "--anonymous-games must be 1..--max-games (200)"),
        (["--anonymous-games", "0"], "argument --anonymous-games: must be at least 1"),
        (["--crowded-idle-minutes", "0"], "argument --crowded-idle-minutes: must be a number of minutes above 0"),
        (["--idle-minutes", "nan"], "argument --idle-minutes: must be a number of minutes above 0"),
    ]:
        with pytest.raises(SystemExit) as e:
            web_main(argv)
        assert e.value.code == 2 and words in capsys.readouterr().err, argv


# ------------------------------------------------------------------------------------------- Origin, JSON
def test_changes_from_another_origin_or_not_json_are_refused(app: Any) -> None:
    store = app.state.server.store
    me = visitor(app, "http://127.0.0.1:8000")
    body = json.dumps(WATCH)
    json_type = {"content-type": "application/json"}
    for origin in ("http://evil.example", "http://127.0.0.1:9999", "http://localhost:8000", "null", "file://"):
        r = me.post("/api/watch", content=body, headers={**json_type, "origin": origin})
        error(r, 403, "this server's own page", "http://127.0.0.1:8000")
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""):
        r = me.post("/api/watch", content=body, headers={"content-type": content_type})
        error(r, 415, "must be JSON")
    r = me.post("/api/watch", content=body, headers={"content-type": "text/plain", "origin": "http://evil.example"})
    assert r.status_code == 403
    assert len(store) == 0  # nothing above made a game
    same = me.post("/api/watch", content=body, headers={**json_type, "origin": "http://127.0.0.1:8000"})
    charset = me.post("/api/watch", content=body, headers={"content-type": "application/json; charset=utf-8"})
    assert (
        same.status_code == charset.status_code == 200 and len(store) == 2
    )  # the page's own, and programs' (no Origin)
    sid = same.json()["id"]
    for method in ("DELETE", "POST"):
        path = f"/api/session/{sid}" + ("/step" if method == "POST" else "")
        r = me.request(
            method, path, content=json.dumps({"ply": 0}), headers={**json_type, "origin": "http://evil.example"}
        )
        error(r, 403, "this server's own page")
    assert me.get(f"/api/session/{sid}").json()["plies"] == 0  # neither stepped nor deleted
    assert me.get("/api/games", headers={"origin": "http://evil.example"}).status_code == 200  # reading changes nothing


# ------------------------------------------------------------------------------------------- malformed bodies
MALFORMED: list[tuple[bytes, int, str]] = [
    (b"{not json", 400, "JSON object"),
    (b"", 400, ""),  # empty: {} then a missing field
    (b"null", 400, "JSON object"),
    (b"[]", 400, "JSON object"),
    (b"12", 400, "JSON object"),
    (b'"text"', 400, "JSON object"),
    (b"\xff\xfe{}", 400, "JSON object"),
    (b'{"a": 1,}', 400, "JSON object"),
    (b"[" * 5000 + b"]" * 5000, 400, "nests too deeply"),
    (b'{"a":' * 3000 + b"1" + b"}" * 3000, 400, "nests too deeply"),
    (b'{"x":' + b"[" * 40 + b"]" * 40 + b"}", 400, "nests too deeply"),
    (b'{"ply": 1' + b"0" * 5000 + b"}", 400, "JSON object"),  # an int too long to convert
    (b'{"ply": NaN, "action": Infinity}', 400, ""),  # valid JSON to Python: refused field by field
    (b'{"ply": 1e999}', 400, ""),
]
FIELDS: list[dict[str, Any]] = [
    {"game": None}, {"game": ["castles"]}, {"game": {"id": "castles"}}, {"game": "castles", "options": [1]},
    {"game": "castles", "options": {"ranks": "10"}}, {"game": "castles", "options": {"ranks": [[[10]]]}},
    {"game": "castles", "options": {"nope": 1}}, {"game": "castles", "seat": 0.5, "agents": [None, "random"]},
    {"game": "castles", "seat": True, "agents": [None, "random"]}, {"game": "castles", "seat": "0"},
    {"game": "castles", "agents": "random"}, {"game": "castles", "agents": [None, 7]},
    {"game": "castles", "agents": [None, {"name": "random"}]}, {"game": "castles", "agents": [None, None]},
    {"game": "castles", "agents": [None, "random", "random"]}, {"game": "walls", "options": {"num_players": 99}},
    {"file": ["t"], "index": 0}, {"file": "t/replays.jsonl", "index": "0"}, {"action": [1], "ply": 0},
    {"action": {"a": 1}, "ply": None}, {"action": 1.5, "ply": 0}, {"action": True, "ply": 0},
    {"action": 0, "ply": "0"}, {"action": 0, "ply": -1}, {"action": 2**70, "ply": 0},
]  # fmt: skip


def test_malformed_bodies_of_every_shape_get_a_json_4xx_and_change_nothing(app: Any) -> None:
    me = visitor(app)
    play = me.post("/api/play", json={"game": "castles", "seat": 0, "agents": [None, "random"]}).json()
    watch = me.post("/api/watch", json=WATCH).json()
    before = {s: me.get(f"/api/session/{s}" + ("?seat=all" if s == watch["id"] else "")).json()
              for s in (play["id"], watch["id"])}  # fmt: skip
    endpoints = ["/api/play", "/api/watch", "/api/replay", f"/api/session/{play['id']}/move",
                 f"/api/session/{watch['id']}/step", f"/api/session/{play['id']}/step"]  # fmt: skip
    bodies = [(raw, status, words) for raw, status, words in MALFORMED]
    bodies += [(json.dumps(f).encode(), 400, "") for f in FIELDS]
    seen = 0
    for path in endpoints:
        for raw, _, words in bodies:
            r = me.post(path, content=raw, headers={"content-type": "application/json"})
            assert 400 <= r.status_code < 500, (path, raw[:60], r.status_code, r.text[:200])
            assert r.headers["content-type"].startswith("application/json"), (path, raw[:60])
            message = r.json()["error"]
            assert len(message) <= 600, message
            if path == "/api/play" and words:
                assert words in message, (raw[:60], message)
            seen += 1
    assert seen == len(endpoints) * len(bodies)
    for raw in (b'{"ply": NaN, "action": 1}', b'{"ply": 1e999, "action": 1}'):
        r = me.post(endpoints[3], content=raw, headers={"content-type": "application/json"})
        error(r, 400, "ply must be an integer")
    assert len(app.state.server.store) == 2  # no game was made
    for sid, view in before.items():
        assert me.get(f"/api/session/{sid}" + ("?seat=all" if sid == watch["id"] else "")).json() == view


def test_a_body_over_the_limit_is_refused_by_its_length_before_it_is_read(app: Any) -> None:
    me = visitor(app)
    r = me.post("/api/watch", content=b"{" + b" " * MAX_BODY + b"}", headers={"content-type": "application/json"})
    error(r, 413, f"stay under {MAX_BODY}")
    r = me.post("/api/watch", content=b"{}", headers={"content-type": "application/json", "content-length": "12x"})
    assert r.status_code == 400


def _post_endless_chunks(base: str, chunk: int = 4096, most: int = 100 * 2**20) -> tuple[int, bytes]:
    """POST a chunked JSON body of up to ``most`` bytes (never ended) to /api/watch, sending until the server answers.

    Returns the bytes sent when the answer came, and the answer (a server that waits for the whole
    body never answers: the read times out).
    """
    host, port = base.removeprefix("http://").split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)  # little in flight: what was sent, the server saw
    sock.settimeout(30)
    sock.connect((host, int(port)))
    head = f"POST /api/watch HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
    sock.sendall((head + "Transfer-Encoding: chunked\r\n\r\n").encode())
    piece = f"{chunk:x}\r\n".encode() + b" " * chunk + b"\r\n"
    sent = 0
    with sock:
        while sent < most and not select.select([sock], [], [], 0)[0]:  # no answer yet: send on
            try:
                sock.sendall(piece)
            except OSError:  # the server closed its side (it answered): read the answer
                break
            sent += chunk
        return sent, _read_answer(sock)


def _read_answer(sock: socket.socket) -> bytes:
    """An HTTP answer read whole from ``sock``: its head, then as many bytes of body as its Content-Length says."""
    answer = b""
    while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < _length(answer):
        part = sock.recv(65536)
        if not part:
            break
        answer += part
    return answer


def _length(answer: bytes) -> int:
    head = answer.split(b"\r\n\r\n", 1)[0].lower()
    found = [line for line in head.split(b"\r\n") if line.startswith(b"content-length:")]
    return int(found[0].split(b":", 1)[1]) if found else 0


def _announce_a_huge_body(base: str) -> bytes:
    """POST headers announcing 100 MB, then 10 bytes of it; the answer (the server must not wait for the rest)."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        head = f"POST /api/watch HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        sock.sendall((head + "Content-Length: 100000000\r\n\r\n{        ").encode())
        return _read_answer(sock)  # a server waiting for the announced body would time out here


def test_a_chunked_body_is_cut_off_at_the_limit_while_it_is_read(app: Any) -> None:
    with serving(app) as base:
        announced = _announce_a_huge_body(base)
        sent, answer = _post_endless_chunks(base)
    assert b" 413 " in announced.split(b"\r\n", 1)[0], announced[:300]
    status = answer.split(b"\r\n", 1)[0]
    assert b" 413 " in status, answer[:300]
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"].startswith(f"request body over {MAX_BODY} bytes")
    # what was sent before the answer came is the limit plus what the sockets' buffers hold, not 100 MB
    assert sent < 16 * 2**20, f"{sent} bytes were sent before the refusal"


# ------------------------------------------------------------------------------------------- visitors
def test_a_visitor_sees_and_changes_only_their_own_games(app: Any) -> None:
    alice, bob = visitor(app), visitor(app)
    assert alice.cookies[VISITOR_COOKIE] != bob.cookies[VISITOR_COOKIE]
    game = alice.post("/api/play", json={"game": "castles", "seat": 0, "agents": [None, "random"]}).json()
    sid = game["id"]
    error(bob.get(f"/api/session/{sid}"), 404, "unknown game id")
    error(bob.post(f"/api/session/{sid}/move", json={"action": game["moves"][0]["action"], "ply": game["plies"]}),
          404, "unknown game id")  # fmt: skip
    error(bob.delete(f"/api/session/{sid}"), 404, "unknown game id")
    stranger = TestClient(app, base_url=BASE)  # no cookie at all: a new visitor, named by the answer
    error(stranger.get(f"/api/session/{sid}"), 404, "unknown game id")
    assert VISITOR_COOKIE in stranger.cookies
    forged = TestClient(app, base_url=BASE, cookies={VISITOR_COOKIE: "not-a-token"})
    error(forged.get(f"/api/session/{sid}"), 404, "unknown game id")
    assert alice.get(f"/api/session/{sid}").json() == game
    cookie = alice.get("/").headers.get("set-cookie")
    assert cookie is None  # a known visitor keeps their name
    fresh = TestClient(app, base_url=BASE).get("/").headers["set-cookie"]
    assert "HttpOnly" in fresh and "SameSite=Strict" in fresh and "Path=/" in fresh


def test_one_visitors_many_games_never_push_out_anothers() -> None:
    store = SessionStore(limit=10, per_visitor=4)
    app = create_app("/nonexistent-runs", store, seed=2)
    alice, bob = visitor(app), visitor(app)
    mine = alice.post("/api/play", json={"game": "castles", "seat": 0, "agents": [None, "random"]}).json()
    bobs = [bob.post("/api/watch", json=WATCH).json()["id"] for _ in range(25)]  # as the 205 watch sessions
    assert store.owned_by(bob.cookies[VISITOR_COOKIE]) == bobs[-4:]  # only his newest 4: his own oldest went
    error(bob.get(f"/api/session/{bobs[0]}"), 404, "pushed out by your own newer games (at most 4 each)")
    move = {"action": mine["moves"][0]["action"], "ply": mine["plies"]}
    assert alice.post(f"/api/session/{mine['id']}/move", json=move).status_code == 200  # hers lives on
    others = [visitor(app) for _ in range(2)]
    for other in others:  # 1 + 4 + 4 + 1 = 10: the server is full
        for _ in range(4 if other is others[0] else 1):
            assert other.post("/api/watch", json=WATCH).status_code == 200
    assert len(store) == 10
    late = visitor(app)
    error(late.post("/api/watch", json=WATCH), 503, "its limit", "--max-games 10")
    error(late.post("/api/play", json={"game": "castles", "seat": 0, "agents": [None, "random"]}), 503, "its limit")
    assert len(store) == 10 and alice.get(f"/api/session/{mine['id']}").status_code == 200
    assert bob.post("/api/watch", json=WATCH).status_code == 200  # a visitor at their own cap replaces their own
    assert alice.delete(f"/api/session/{mine['id']}").status_code == 200  # closing a game makes room
    assert late.post("/api/watch", json=WATCH).status_code == 200


def test_idle_games_are_forgotten_and_make_room() -> None:
    now = [0.0]
    store = SessionStore(limit=2, per_visitor=2, idle_seconds=60, clock=lambda: now[0])
    app = create_app("/nonexistent-runs", store)
    alice, bob = visitor(app), visitor(app)
    old = alice.post("/api/watch", json=WATCH).json()["id"]
    alice.post("/api/watch", json=WATCH)
    error(bob.post("/api/watch", json=WATCH), 503, "its limit")
    now[0] = 61.0
    assert bob.post("/api/watch", json=WATCH).status_code == 200
    error(alice.get(f"/api/session/{old}"), 404, "idle for")
    with pytest.raises(ValueError, match=r"per_visitor must be 1\.\.limit"):
        SessionStore(limit=2, per_visitor=3)


def test_cookieless_requests_share_a_small_pool_and_cannot_fill_the_server() -> None:
    """The issue's case: 250 POST /api/watch without a cookie; a new visitor can still start a game."""
    store = SessionStore(limit=200, per_visitor=12)
    app = create_app("/nonexistent-runs", store, seed=3)
    alice = visitor(app)
    mine = alice.post("/api/play", json={"game": "castles", "seat": 0, "agents": [None, "random"]}).json()["id"]
    for _ in range(250):
        script = TestClient(app, base_url=BASE)  # keeps no cookie: a new visitor every request
        assert script.post("/api/watch", json=WATCH).status_code == 200
    assert store.anonymous == 20 and len(store) == 1 + 20  # the pool's newest 20, and alice's game
    late = visitor(app)
    assert late.post("/api/play", json={"game": "castles", "seat": 0, "agents": [None, "random"]}).status_code == 200
    assert alice.get(f"/api/session/{mine}").status_code == 200
    # a script that keeps the cookie it was given: its game leaves the pool once it comes back
    keeper = TestClient(app, base_url=BASE)
    kept = keeper.post("/api/watch", json=WATCH).json()["id"]
    assert keeper.get(f"/api/session/{kept}?seat=all").status_code == 200
    for _ in range(30):
        TestClient(app, base_url=BASE).post("/api/watch", json=WATCH)
    assert keeper.get(f"/api/session/{kept}?seat=all").status_code == 200
    with pytest.raises(ValueError, match=r"anonymous must be 1\.\.limit"):
        SessionStore(limit=5, per_visitor=2, anonymous=6)


def test_idle_games_go_after_minutes_once_the_server_is_nearly_full() -> None:
    now = [0.0]
    store = SessionStore(limit=10, per_visitor=5, clock=lambda: now[0])
    assert store.anonymous == 1 and store.idle_seconds == 6 * 3600 and store.crowded_idle_seconds == 600
    app = create_app("/nonexistent-runs", store, seed=5)
    quiet = visitor(app)
    old = quiet.post("/api/watch", json=WATCH).json()["id"]
    now[0] = 3600.0  # an hour idle on a quiet server: kept
    assert quiet.get(f"/api/session/{old}?seat=all").status_code == 200
    busy = [visitor(app) for _ in range(2)]
    for v in busy:
        for _ in range(5 if v is busy[0] else 4):
            assert v.post("/api/watch", json=WATCH).status_code == 200
    assert len(store) == 10
    error(visitor(app).post("/api/watch", json=WATCH), 503, "its limit", "10 min while the server is nearly full")
    now[0] += 11 * 60  # eleven minutes idle on a full server: forgotten, and a new visitor plays
    late = visitor(app)
    assert late.post("/api/watch", json=WATCH).status_code == 200
    assert len(store) == 1
    error(quiet.get(f"/api/session/{old}?seat=all"), 404, "idle for 6 h (10 min while the server is nearly full)")
