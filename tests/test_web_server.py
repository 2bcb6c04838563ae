"""The web server's JSON endpoints: bad input gets a clear error and the game goes on; games do not mix;
what the page offers and shows (options in the game's words, agents for the options they play, the first
player, rules, the game's own result beside the reward, narration in the cards' words and in the past tense
when looking back, the favicon)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from starlette.testclient import TestClient

from jericho_env.agent_plugins import UniformRandomAgent, providers
from jericho_env.core.image import font
from jericho_env.core.rules import Option, OptionError, choice_option, int_option
from jericho_env.registry import make_rules, rules_class
from jericho_env.replay import FILE_NAME, Replay, ReplayError, read_replays, write_replays
from jericho_env.web.app import create_app
from jericho_env.web.catalog import option_values
from jericho_env.web.guard import VISITOR_COOKIE
from jericho_env.web.opponents import Opponents
from jericho_env.web.results import walls_result
from jericho_env.web.sessions import Session, SessionStore, score_text
from tests.web_helpers import NO_HOOK, error, font_characters, has_agent_options_hook

BASE = "http://127.0.0.1"
STATIC = Path(__file__).resolve().parent.parent / "jericho_env" / "web" / "static"
DEBIAN_FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


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
    return TestClient(create_app(tmp_path, seed=0), base_url=BASE)


def finish(client: TestClient, view: dict[str, Any]) -> dict[str, Any]:
    """Play the human's first legal move until the game is over."""
    while not view["over"]:
        body = {"action": view["moves"][0]["action"], "ply": view["plies"]}
        view = client.post(f"/api/session/{view['id']}/move", json=body).json()
    return view


def test_catalog_lists_games_agents_and_replays(
    client: TestClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "zoo").mkdir()
    monkeypatch.setenv("JERICHO_ENV_ZOO", str(tmp_path / "zoo"))  # no agent shipped (agents.pretrained)
    games = {g["id"]: g for g in client.get("/api/games").json()["games"]}
    assert {"grid", "walls", "castles"} <= set(games)
    assert "greedy" in games["castles"]["agents"] and "ppo" not in games["castles"]["agents"]
    listed = client.get("/api/replays").json()["replays"]
    good = [r for r in listed if "error" not in r]
    assert [(r["file"], r["index"]) for r in good] == [("t/replays.jsonl", 0), ("t/replays.jsonl", 1)]
    assert [r["file"] for r in listed if "error" in r] == ["bad/replays.jsonl"]


def test_catalog_offers_each_options_allowed_values_the_first_player_and_the_rules(client: TestClient) -> None:
    games = {g["id"]: g for g in client.get("/api/games").json()["games"]}
    options = {g: {o["name"]: o["values"] for o in games[g]["options"]} for g in ("grid", "walls", "castles")}
    expected = {"ranks": [5, 10, 13], "small_deck": [False, True], "reversed_order": [False, True]}
    assert options["castles"].items() >= expected.items()
    assert options["walls"]["num_players"] == [2, 3, 4, 5]
    assert options["grid"]["board_size"] == list(range(3, 102, 2))
    for game_id in ("grid", "walls", "castles"):  # every game here draws who moves first
        assert games[game_id]["first_player"] is None
        assert games[game_id]["rules"].startswith(("A 52-card deck", "110 cards", "Each player has an own deck"))
    assert "saves" in games["castles"]["rules"] and "Properties" not in games["castles"]["rules"]


class Zoo:
    """A provider of pretrained agents, as a model zoo would be: names of its own, for castles only."""

    def agent_names(self, game_id: str) -> list[str]:
        """Its agents for ``game_id``."""
        return ["zoo-castles-small", "random"] if game_id == "castles" else []

    def make(self, name: str, game_id: str, **kwargs: Any) -> Any:
        """A random player standing in for a pretrained one."""
        agent = UniformRandomAgent(seed=kwargs.get("seed"))
        agent.name = name
        return agent


def test_a_provider_that_adds_agents_adds_them_to_the_page_read_once() -> None:
    reads: list[int] = []

    def read() -> dict[str, Any]:
        reads.append(1)
        return {**providers(), "zoo": Zoo()}

    client = TestClient(create_app("/nonexistent-runs", opponents=Opponents(read), seed=4), base_url=BASE)
    games = {g["id"]: g["agents"] for g in client.get("/api/games").json()["games"]}
    assert "zoo-castles-small" in games["castles"] and "zoo-castles-small" not in games["grid"]
    assert games["castles"][-1] == "zoo-castles-small" and games["castles"].count("random") == 1
    body = {"game": "castles", "seat": 0, "agents": [None, "zoo-castles-small"]}
    view = client.post("/api/play", json=body).json()
    assert view["players"][1]["agent"] == "zoo-castles-small"
    server = client.app.state.server  # type: ignore[attr-defined]
    assert server.store.get(view["id"], client.cookies[VISITOR_COOKIE]).agents[1].name == "zoo-castles-small"
    error(client.post("/api/play", json={**body, "game": "grid"}), 400, "unknown agent")
    assert reads == [1]  # the installed providers are read once per server, not per request
    bare = Opponents(lambda: {})  # no provider installed: the built-in random alone
    assert bare.names("castles") == ["random"] and isinstance(
        bare.make("random", "castles", seed=1), UniformRandomAgent
    )
    with pytest.raises(OptionError, match="unknown agent 'greedy'"):
        bare.make("greedy", "castles")


def test_options_are_shown_in_the_games_words(client: TestClient) -> None:
    """A label and a one-line help from the game's page; a yes/no is a checkbox; a long list a number field."""
    games = {g["id"]: g for g in client.get("/api/games").json()["games"]}
    fields = {g: {o["name"]: o for o in games[g]["options"]} for g in games}
    ranks, small = fields["castles"]["ranks"], fields["castles"]["small_deck"]
    assert (ranks["label"], ranks["kind"]) == ("Ranks per suit", "choice")
    assert ranks["help"].startswith("5 (A-5), 10 (A-10) or 13 (A-K)")  # the Options table of the game's page
    assert (small["label"], small["kind"], small["rule"]) == ("The smaller deck", "bool", "yes or no")
    assert fields["castles"]["reversed_order"]["label"] == "Reversed order"
    assert fields["walls"]["num_players"]["label"] == "Number of players"
    assert "published" in fields["walls"]["num_players"]["help"]
    size = fields["grid"]["board_size"]
    assert (size["label"], size["kind"], size["min"], size["max"], size["step"]) == ("Board size", "number", 3, 101, 2)
    assert size["rule"] == "an odd number from 3 to 101" and "window" in size["help"]
    assert all("_" not in o["label"] for g in fields.values() for o in g.values())
    for body, words, field in [
        ({"game": "grid", "options": {"board_size": 4}}, "Board size cannot be 4: choose an odd number from 3 to 101",
         "option:board_size"),
        ({"game": "castles", "options": {"ranks": 7}}, "Ranks per suit cannot be 7: choose one of 5, 10, 13",
         "option:ranks"),
        ({"game": "castles", "options": {"small_deck": "yes"}}, "The smaller deck cannot be 'yes': choose yes or no",
         "option:small_deck"),
    ]:  # fmt: skip
        r = client.post("/api/play", json={**body, "seat": 0, "agents": [None, "random"]})
        error(r, 400, words)
        assert r.json()["field"] == field


def test_the_seat_of_a_played_game_is_required(client: TestClient) -> None:
    r = client.post("/api/play", json={"game": "castles", "agents": [None, "random"]})
    error(r, 400, "seat is required", "0..1")
    assert r.json()["field"] == "seat"
    assert client.post("/api/play", json={"game": "castles", "seat": 1, "agents": ["random", None]}).status_code == 200


class Trained(Zoo):
    """A provider whose network plays castles only as trained (A-10, the full deck), as the zoo's cards say."""

    def agent_names(self, game_id: str) -> list[str]:
        """Its agent, for castles."""
        return ["net"] if game_id == "castles" else []

    def agent_options(self, name: str, game_id: str) -> dict[str, Any] | None:
        """The options ``net`` was trained with (the plugin hook the page offers agents by)."""
        return {"ranks": 10, "small_deck": False} if name == "net" else None


def test_an_agent_is_offered_only_for_the_options_it_plays() -> None:
    opponents = Opponents(lambda: {**providers(), "trained": Trained()})
    client = TestClient(create_app("/nonexistent-runs", opponents=opponents, seed=4), base_url=BASE)
    castles = next(g for g in client.get("/api/games").json()["games"] if g["id"] == "castles")
    needs = castles["agent_options"]["net"]
    assert needs["ranks"] == 10 and needs["small_deck"] is False and needs["reversed_order"] is False  # all filled in
    assert "random" not in castles["agent_options"] and "greedy" not in castles["agent_options"]
    body = {"game": "castles", "seat": 0, "agents": [None, "net"]}
    assert client.post("/api/play", json=body).status_code == 200
    r = client.post("/api/play", json={**body, "options": {"ranks": 13}})
    error(r, 400, "net cannot play castles with Ranks per suit set to 13: it plays castles only with Ranks per suit "
          "set to 10. Choose another agent for player_1, or set Ranks per suit to 10")  # fmt: skip
    assert r.json()["field"] == "agent-1" and "(path=)" not in r.text
    small = {"game": "castles", "options": {"small_deck": True}, "agents": ["net", "random"]}
    r = client.post("/api/watch", json=small)
    error(r, 400, "with The smaller deck set to yes", "only with The smaller deck set to no")
    assert r.json()["field"] == "agent-0"


def test_the_shipped_networks_say_which_options_they_play() -> None:
    """The installed agents provider's agent_options hook reads each shipped network's card (agents/zoo)."""
    assert has_agent_options_hook(), NO_HOOK
    client = TestClient(create_app("/nonexistent-runs", seed=4), base_url=BASE)
    games = {g["id"]: g for g in client.get("/api/games").json()["games"]}
    assert games["walls"]["agent_options"]["ppo"]["num_players"] == 4
    assert games["castles"]["agent_options"]["ppo"]["ranks"] == 10
    assert "greedy" not in games["walls"]["agent_options"]
    r = client.post("/api/play", json={"game": "walls", "options": {"num_players": 3}, "seat": 0,
                                       "agents": [None, "ppo", "random"]})  # fmt: skip
    error(r, 400, "ppo cannot play walls", "Number of players set to 4", "Choose another agent for player_1")


def test_the_page_has_an_icon(client: TestClient) -> None:
    r = client.get("/favicon.ico")
    assert r.status_code == 200 and r.headers["content-type"] == "image/x-icon" and r.content[:4] == b"\0\0\1\0"
    assert '<link rel="icon" href="/favicon.ico"' in client.get("/").text


def test_option_values_come_from_the_options_own_check() -> None:
    assert option_values(choice_option("x", 3, "", (1, 3, 9))) == [1, 3, 9]
    assert option_values(int_option("n", 4, "", "2..6", lambda v: 2 <= v <= 6)) == [2, 3, 4, 5, 6]
    assert option_values(int_option("n", 4, "", "any positive int", lambda v: v > 0)) is None  # open-ended: a text box
    assert option_values(choice_option("s", "a", "", ("a", "b"))) is None  # text values are not probed
    declared = Option("c", "x", "", "one of x, y", lambda v: v in ("x", "y"))
    object.__setattr__(declared, "choices", ("x", "y"))  # a spec that lists its values itself is taken at its word
    assert option_values(declared) == ["x", "y"]


def test_the_rules_page_of_each_game(client: TestClient) -> None:
    for game_id in ("grid", "walls", "castles"):
        page = client.get(f"/rules/{game_id}")
        assert page.status_code == 200 and "Rules in short" in page.text and "Version History" in page.text
        assert rules_class(game_id).__module__.split(".")[2] == game_id  # the page of that game, not another's
    assert "Castles (Working Title)" in client.get("/rules/castles").text
    error(client.get("/rules/chess"), 404, "no game", "castles")


def test_bad_requests_get_clear_errors(client: TestClient) -> None:
    error(client.post("/api/play", json={"game": "chess"}), 400, "unknown game", "castles")
    error(client.post("/api/play", content=b"{not json", headers={"content-type": "application/json"}), 400, "JSON")
    error(client.post("/api/play", json=[1, 2]), 400, "JSON object")
    error(client.post("/api/play", json={"game": "castles", "options": {"ranks": 7}}), 400, "Ranks per suit")
    error(client.post("/api/play", json={"game": "castles", "options": {"nope": 1}}), 400, "no option 'nope'", "ranks")
    error(
        client.post("/api/play", json={"game": "castles", "seat": 2, "agents": [None, "greedy"]}), 400, "seat", "0..1"
    )
    play = {"game": "castles", "seat": 0}
    error(client.post("/api/play", json={**play, "agents": [None, "alphazero"]}), 400, "unknown agent")
    error(client.post("/api/play", json={**play, "agents": [None, "ppo:/etc/passwd"]}), 400, "checkpoint")
    error(client.post("/api/play", json={**play, "agents": ["greedy"]}), 400, "2 agent names")
    error(client.get("/api/session/0123456789abcdef"), 404, "unknown game id")
    error(client.post("/api/replay", json={"file": "../../etc/passwd", "index": 0}), 400, "unknown replay file")
    error(client.post("/api/replay", json={"file": "t/replays.jsonl", "index": 9}), 400, "0..1")
    error(client.post("/api/replay", json={"file": "bad/replays.jsonl", "index": 0}), 400, "format")
    error(client.get("/api/nothing"), 404, "no such address")
    error(client.put("/api/play", json={}), 405, "PUT is not allowed")
    error(client.get("/static/nothing.js"), 404, "no such address")


def test_the_board_is_drawn_for_the_box_the_page_asks_for(client: TestClient) -> None:
    body = {"game": "walls", "seat": 0, "options": {"num_players": 5}, "agents": [None, *["random"] * 4]}
    phone = client.post("/api/play?w=374&h=700", json=body).json()
    laptop = client.get(f"/api/session/{phone['id']}?w=690&h=505").json()
    assert phone["width"] <= 374 < laptop["width"] <= 690 and phone["height"] > laptop["height"]
    assert phone["targets"].keys() == laptop["targets"].keys() and phone["moves"] == laptop["moves"]
    for view in (phone, laptop):  # every box named, every refused choice explained
        assert {k: len(v) for k, v in view["labels"].items()} == {k: len(v) for k, v in view["targets"].items()}
        assert "supply" in view["refusals"] and set(view["hints"]) == {m["keys"][0] for m in view["moves"]}
    tiny = client.get(f"/api/session/{phone['id']}?w=10&h=10").json()  # held to the smallest box
    assert tiny["width"] == client.get(f"/api/session/{phone['id']}?w=240").json()["width"]
    error(client.get(f"/api/session/{phone['id']}?w=wide"), 400, "w and h", "CSS pixels")
    default = client.get(f"/api/session/{phone['id']}").json()  # no box: a laptop's
    assert default["width"] > 374


def test_illegal_and_stale_moves_leave_the_game_as_it_was(client: TestClient) -> None:
    view = client.post("/api/play", json={"game": "castles", "seat": 0, "agents": [None, "greedy"]}).json()
    sid, ply = view["id"], view["plies"]
    legal = {m["action"] for m in view["moves"]}
    illegal = next(a for a in range(1000) if a not in legal)
    error(client.post(f"/api/session/{sid}/move", json={"action": illegal, "ply": ply}), 400, "illegal move")
    error(client.post(f"/api/session/{sid}/move", json={"action": 10**30, "ply": ply}), 400, "illegal move")
    error(client.post(f"/api/session/{sid}/move", json={"action": -1, "ply": ply}), 400, "illegal move")
    error(client.post(f"/api/session/{sid}/move", json={"action": "7", "ply": ply}), 400, "integer")
    error(client.post(f"/api/session/{sid}/move", json={"action": "x" * 5000, "ply": ply}), 400, "integer")
    error(client.post(f"/api/session/{sid}/move", json={"action": min(legal), "ply": ply + 3}), 409, "stale")
    error(client.post(f"/api/session/{sid}/step", json={"ply": ply}), 409, "play session")
    error(client.get(f"/api/session/{sid}?seat=1"), 403, "your seat")
    error(client.get(f"/api/session/{sid}?seat=all"), 403, "your seat")
    error(client.get(f"/api/session/{sid}?ply=x"), 400, "integers")
    error(client.get(f"/api/session/{sid}?ply=999"), 400, "outside this game")
    assert len(client.post(f"/api/session/{sid}/move", json={"action": "x" * 5000, "ply": ply}).text) < 700
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


def test_create_app_keeps_the_store_it_is_given_even_empty() -> None:
    store = SessionStore(limit=5, per_visitor=2)
    assert len(store) == 0
    app = create_app("/nonexistent-runs", store)
    assert app.state.server.store is store
    client = TestClient(app, base_url=BASE)
    client.post("/api/watch", json={"game": "castles", "agents": ["random", "random"]})
    assert len(store) == 1


def test_the_view_names_the_seat_that_moved_first(client: TestClient) -> None:
    firsts = set()
    for _ in range(12):  # the deal draws the first player: both seats come up
        view = client.post("/api/watch", json={"game": "castles", "agents": ["random", "random"]}).json()
        view = client.post(f"/api/session/{view['id']}/step?seat=all", json={"ply": 0}).json()
        mover = view["log"][0]["seat"]
        assert view["first"] == mover and [p["first"] for p in view["players"]] == [s == mover for s in (0, 1)]
        firsts.add(mover)
        client.delete(f"/api/session/{view['id']}")
    assert firsts == {0, 1}
    for _ in range(12):  # and a played game names it too, whoever it is
        view = client.post("/api/play", json={"game": "castles", "seat": 0, "agents": [None, "random"]}).json()
        assert view["first"] == (view["log"][0]["seat"] if view["log"] else 0)
        client.delete(f"/api/session/{view['id']}")


def test_a_finished_played_game_can_be_stepped_back_through(client: TestClient) -> None:
    view = client.post("/api/play", json={"game": "castles", "seat": 1, "agents": ["random", None]}).json()
    assert view["finished"] is False
    end = finish(client, view)
    assert end["finished"] and end["status"].startswith("game over")
    n = end["plies"]
    for ply in (0, 1, n // 2, n - 1):
        back = client.get(f"/api/session/{end['id']}?ply={ply}").json()
        assert back["ply"] == ply and back["seat"] == 1 and back["finished"] and not back["over"]
        assert back["moves"] == [] and back["targets"] == {} and not back["your_turn"]
        # in the past tense: the move that led there (its text as that seat knows it), or who moved first
        who = r"(you|player_0 \(random\))"
        assert len(back["log"]) == ply and re.fullmatch(
            rf"the start of the game \({n} moves in all\): {who} moved first" if ply == 0
            else rf"after move {ply} of {n}: {who} (played \S.*|passed|ended the turn)", back["status"]
        ), back["status"]  # fmt: skip
        assert " to move" not in back["status"] and "result" not in back
        assert back["seed"] == end["seed"]  # the game is over: its deal may be known
    assert client.get(f"/api/session/{end['id']}?ply={n}").json() == end


def test_scores_read_as_fractions_or_two_decimals() -> None:
    assert [score_text(x) for x in (1.0, -1.0, 0.0, -0.0, -1 / 3, 2 / 3, 0.25)] == [
        "+1",
        "-1",
        "0",
        "0",
        "-1/3",
        "+2/3",
        "+1/4",
    ]
    assert [score_text(x) for x in (-0.333, 0.123456, 1 / 13)] == ["-0.33", "+0.12", "+0.08"]


def test_walls_status_shows_the_scores_as_fractions(client: TestClient) -> None:
    view = client.post("/api/play", json={"game": "walls", "seat": 0, "agents": [None, "random", "random", "random"],
                                          "options": {"num_players": 4}}).json()  # fmt: skip
    end = finish(client, view)
    reward = end["result"]["reward"]
    assert re.search(r"-1/3", reward) and not re.search(r"\d\.\d{3}", reward), reward
    assert end["result"]["text"].startswith("cards won: you ")  # the game's own result, beside the reward
    assert "winners share +1" in end["result"]["reward_rule"]
    assert end["status"].startswith("game over: you ")


class FakeWalls:
    """What walls_result reads of the rules: each seat's (cards won, cards in walls) and the winners."""

    def __init__(self, keys: list[tuple[int, int]]) -> None:
        self.keys = keys

    def ranking_keys(self, state: Any) -> list[tuple[int, int]]:
        """The keys given."""
        return self.keys

    def winners(self, state: Any) -> list[int]:
        """Seats sharing the best key."""
        return [s for s, k in enumerate(self.keys) if k == max(self.keys)]


def test_the_result_names_the_tiebreak_that_decided() -> None:
    def name(seat: int) -> str:
        return f"player_{seat}"

    assert walls_result(FakeWalls([(24, 5), (21, 9), (11, 3)]), None, name) == (
        "cards won: player_0 24, player_1 21, player_2 11; player_0 won the most cards"
    )
    assert walls_result(FakeWalls([(20, 5), (22, 6), (22, 9)]), None, name) == (
        "cards won: player_0 20, player_1 22, player_2 22; player_1 and player_2 each won 22, "
        "so cards in walls decided (player_1 6, player_2 9): player_2 won"
    )
    assert walls_result(FakeWalls([(20, 5), (22, 6), (22, 6)]), None, name).endswith(
        ": still equal, player_1 and player_2 share the win"
    )


def test_each_games_end_names_its_own_result(client: TestClient) -> None:
    seen = {}
    for game_id, agents in (("grid", [None, "random"]), ("castles", [None, "random"])):
        end = finish(client, client.post("/api/play", json={"game": game_id, "seat": 0, "agents": agents}).json())
        seen[game_id] = end["result"]["text"]
        assert end["result"]["reward"].startswith("you ") and end["status"].startswith("game over: ")
    assert re.fullmatch(r"points of captured cards: you \d+, player_1 \(random\) \d+; .*", seen["grid"]), seen
    assert " won" in seen["castles"] and ("no cards left" in seen["castles"] or "no save left" in seen["castles"])
    watch = client.post("/api/watch", json={"game": "castles", "agents": ["random", "greedy"]}).json()
    while not watch["over"]:
        watch = client.post(f"/api/session/{watch['id']}/step?seat=all", json={"ply": watch["plies"]}).json()
    assert re.fullmatch(r"game over: player_\d \((random|greedy)\) wins", watch["status"]), watch["status"]


def _texts(view: dict[str, Any]) -> list[str]:
    return [e["text"] for e in view["log"]] + [m["text"] for m in view["moves"]]


def test_moves_are_worded_as_the_cards_show_them(client: TestClient) -> None:
    tens = 0
    for _ in range(3):  # castles: a ten is "10", never "T" (its code)
        view = client.post("/api/play", json={"game": "castles", "seat": 0, "agents": [None, "random"]}).json()
        while not view["over"]:
            assert not any(re.search(r"\bT(x\d)?\b", t) for t in _texts(view)), _texts(view)
            tens += sum("10" in t for t in _texts(view))
            view = client.post(f"/api/session/{view['id']}/move",
                               json={"action": view["moves"][-1]["action"], "ply": view["plies"]}).json()  # fmt: skip
    assert tens > 0
    view = finish(client, client.post("/api/play", json={"game": "grid", "seat": 0, "agents": [None, "random"]}).json())
    placed = [t for t in _texts(view) if " at " in t]
    assert placed and all(re.fullmatch(r"(10|[2-9AJQK])[♣♦♥♠] at -?\d+,-?\d+", t) for t in placed), placed


def test_every_character_the_page_shows_is_drawn_by_dejavu_sans(client: TestClient) -> None:
    """The page asks for DejaVu Sans: the browser's own (fonts-dejavu-core), else the file the server sends."""
    assert DEBIAN_FONT.is_file(), f"no {DEBIAN_FONT}: apt-get install fonts-dejavu-core (scripts/setup.sh does)"
    served = Path(font(12).path)
    drawn = font_characters(DEBIAN_FONT) & font_characters(served)
    shown = {p.name: p.read_text(encoding="utf-8") for p in STATIC.iterdir() if p.suffix in (".html", ".js", ".css")}
    for game_id, agents in (
        ("grid", [None, "random"]),
        ("castles", [None, "random"]),
        ("walls", [None, "random", "random", "random"]),
    ):
        view = finish(client, client.post("/api/play", json={"game": game_id, "seat": 0, "agents": agents}).json())
        text = [view["status"], *_texts(view), *re.findall(r">([^<]+)<", view["svg"]), *view["result"].values()]
        shown[f"{game_id} views"] = "\n".join(text)
    shown["catalog"] = client.get("/api/games").text
    missing = {name: sorted({c for c in text if ord(c) > 127 and ord(c) not in drawn}) for name, text in shown.items()}
    assert not any(missing.values()), f"characters DejaVu Sans does not draw: {missing}"


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


def test_a_session_object_keeps_its_owner_only_through_the_store() -> None:
    rules = make_rules("castles")
    session = Session("s1", "watch", rules, rules.initial_state(np.random.default_rng(0)), ["random", "random"])
    assert session.owner == ""
    store = SessionStore()
    store.add(session, "a" * 32)
    assert session.owner == "a" * 32 and store.owned_by("a" * 32) == ["s1"] and store.owned_by("b" * 32) == []
