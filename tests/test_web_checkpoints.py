"""Checkpoints under the runs folder are offered for the game, options and agent they were trained for, named by
what they are (files that are not checkpoints are not offered); each is loaded once per server and shared by
the games against it, within a memory bound."""

from __future__ import annotations

import json
import os
import threading
import zipfile
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from agents.checkpoint import save_checkpoint
from jericho_env.web.app import create_app
from jericho_env.web.checkpoints import CheckpointCache, read_checkpoint
from jericho_env.web.guard import VISITOR_COOKIE
from tests.test_checkpoint_safety import tiny_model


class Net:
    """A stand-in network: ``parameters()`` of a given size in bytes."""

    def __init__(self, size: int) -> None:
        self.size = size

    def parameters(self) -> list[Any]:
        """One "tensor" of ``size`` one-byte elements."""
        return [type("T", (), {"numel": lambda s: self.size, "element_size": lambda s: 1})()]


class FakeMaker:
    """``make_agent`` as the cache calls it: a load (``path=``) makes a new network, ``model=`` wraps one."""

    def __init__(self, size: int = 100) -> None:
        self.size = size
        self.loads: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, name: str, game_id: str, **kwargs: Any) -> Any:
        assert name == "ppo"
        if "model" in kwargs:
            return type("Agent", (), {"policy": kwargs["model"], "seed": kwargs["seed"]})()
        with self.lock:
            self.loads.append(kwargs["path"])
        return type("Agent", (), {"policy": Net(self.size), "seed": kwargs["seed"]})()


def _file(folder: Path, name: str) -> Path:
    path = folder / name
    path.write_bytes(b"zip")
    return path


def test_each_checkpoint_is_loaded_once_and_its_network_shared(tmp_path: Path) -> None:
    make = FakeMaker()
    cache = CheckpointCache(max_bytes=1000)
    a = _file(tmp_path, "a.zip")
    agents = [cache.agent("castles", a, {}, seed, make) for seed in range(3)]
    assert len(make.loads) == cache.loads == 1
    assert len({id(x) for x in agents}) == 3 and len({id(x.policy) for x in agents}) == 1  # own agents, one network
    assert [x.seed for x in agents] == [0, 1, 2]
    cache.agent("castles", a, {"ranks": 13}, 0, make)  # other options: another network
    cache.agent("grid", a, {}, 0, make)  # another game: another
    assert cache.loads == 3 and len(cache) == 3 and cache.bytes == 300


def test_the_least_recently_used_networks_go_beyond_the_memory_bound(tmp_path: Path) -> None:
    make = FakeMaker(size=400)
    cache = CheckpointCache(max_bytes=1000)
    a, b, c = (_file(tmp_path, f"{k}.zip") for k in "abc")
    cache.agent("castles", a, {}, 0, make)
    cache.agent("castles", b, {}, 0, make)
    cache.agent("castles", a, {}, 0, make)  # a is now the more recently used
    cache.agent("castles", c, {}, 0, make)  # 1200 > 1000: b goes
    assert cache.bytes == 800 and len(cache) == 2
    cache.agent("castles", a, {}, 0, make)
    cache.agent("castles", b, {}, 0, make)  # b again: loaded again
    assert [Path(p).name for p in make.loads] == ["a.zip", "b.zip", "c.zip", "b.zip"]
    huge = CheckpointCache(max_bytes=300)  # a network over the whole bound is used, not kept
    huge.agent("castles", a, {}, 0, make)
    huge.agent("castles", a, {}, 0, make)
    assert len(huge) == 0 and huge.loads == 2
    with pytest.raises(ValueError, match="max_bytes"):
        CheckpointCache(max_bytes=-1)


def test_a_rewritten_checkpoint_is_loaded_again(tmp_path: Path) -> None:
    make = FakeMaker()
    cache = CheckpointCache()
    a = _file(tmp_path, "a.zip")
    cache.agent("castles", a, {}, 0, make)
    a.write_bytes(b"a newer checkpoint")
    os.utime(a, ns=(a.stat().st_atime_ns, a.stat().st_mtime_ns + 10**9))
    cache.agent("castles", a, {}, 0, make)
    assert cache.loads == 2


def test_games_started_at_once_load_a_checkpoint_once(tmp_path: Path) -> None:
    class Slow(FakeMaker):
        def __call__(self, name: str, game_id: str, **kwargs: Any) -> Any:
            if "path" in kwargs:
                release.wait(5)  # every thread asks while the first load is under way
            return super().__call__(name, game_id, **kwargs)

    release = threading.Event()
    make = Slow()
    cache = CheckpointCache()
    a = _file(tmp_path, "a.zip")
    out: list[Any] = []
    threads = [threading.Thread(target=lambda: out.append(cache.agent("castles", a, {}, 0, make))) for _ in range(8)]
    for t in threads:
        t.start()
    release.set()
    for t in threads:
        t.join()
    assert len(out) == 8 and len(make.loads) == 1 and len({id(x.policy) for x in out}) == 1


def _meta_zip(path: Path, meta: Any) -> Path:
    """A zip holding only ``meta.json`` (what the listing reads; it never loads the network)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("meta.json", json.dumps(meta))
    return path


def _meta(fmt: str, game: str, options: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"format": fmt, "format_version": 1, "game_id": game, "game_version": 0, "observation_version": 0,
            "options": options, **extra}  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("runs")
    (folder / "castles-run").mkdir()
    (folder / "walls-run").mkdir()
    save_checkpoint(tiny_model(), folder / "castles-run" / "model.zip")
    save_checkpoint(tiny_model("walls", num_players=3), folder / "walls-run" / "model.zip")
    return folder


@pytest.fixture(scope="module")
def listed(runs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``runs`` with files of every kind the listing meets: networks of each kind, cards, and files that are not."""
    folder = tmp_path_factory.mktemp("listed")
    for rel in ("castles-run/model.zip", "walls-run/model.zip"):
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes((runs / rel).read_bytes())
    dmc = _meta(
        "jericho-env dmc checkpoint", "grid", {"board_size": 21}, training={"stats": {"positions_generated": 1200}}
    )
    _meta_zip(folder / "dmc-grid" / "latest.zip", dmc)
    exit_training = {"algorithm": "exit", "exit": {"iterations": 2}}
    _meta_zip(folder / "exit-castles" / "final.zip", _meta("jericho-env checkpoint", "castles", {"ranks": 10},
                                                           training=exit_training))  # fmt: skip
    zoo = _meta_zip(folder / "zoo" / "walls-ppo.zip", _meta("jericho-env checkpoint", "walls", {"num_players": 4}))
    card = {"game": "walls", "kind": "ppo", "options": {"num_players": 4}, "observation_version": 0}
    zoo.with_suffix(".json").write_text(json.dumps(card))
    (folder / "notes.zip").write_bytes(b"not a zip at all")
    _meta_zip(folder / "other.zip", {"format": "something else", "game_id": "castles"})
    _meta_zip(folder / "chess.zip", _meta("jericho-env checkpoint", "chess", {}))
    _meta_zip(folder / "old-obs.zip", {**_meta("jericho-env checkpoint", "grid", {}), "observation_version": 7})
    with zipfile.ZipFile(folder / "sb3.zip", "w") as zf:
        zf.writestr("data", "{}")  # a Stable-Baselines3 zip: no meta.json
    return folder


def test_checkpoints_are_offered_for_their_game_options_and_agent_only(listed: Path) -> None:
    client = TestClient(create_app(listed, seed=0), base_url="http://127.0.0.1")
    catalog = client.get("/api/games").json()
    offered = {g["id"]: {c["value"]: c for c in g["checkpoints"]} for g in catalog["games"]}
    assert set(offered["castles"]) == {"ppo:castles-run/model.zip", "exit:exit-castles/final.zip",
                                       "exit-search:exit-castles/final.zip"}  # fmt: skip
    assert set(offered["walls"]) == {"ppo:walls-run/model.zip", "ppo:zoo/walls-ppo.zip"}
    assert set(offered["grid"]) == {"dmc:dmc-grid/latest.zip"}
    assert sorted(catalog["checkpoints"]) == sorted(v for g in offered.values() for v in g)  # no other file listed
    walls3 = offered["walls"]["ppo:walls-run/model.zip"]
    assert walls3["options"]["num_players"] == 3 and walls3["kind"] == "ppo"
    assert offered["walls"]["ppo:zoo/walls-ppo.zip"]["options"]["num_players"] == 4  # from the card beside it
    assert offered["castles"]["ppo:castles-run/model.zip"]["options"] == {
        "ranks": 10, "small_deck": False, "reversed_order": False, "obs_version": 0}  # fmt: skip
    exit_search = offered["castles"]["exit-search:exit-castles/final.zip"]
    assert exit_search["label"] == "exit-search: exit-castles/final.zip (an expert-iteration network, 2 iterations)"
    assert offered["grid"]["dmc:dmc-grid/latest.zip"]["label"].endswith("(a Deep Monte-Carlo network, 1,200 positions)")
    # what the server refuses before any network is loaded, in the form's words
    play = {"game": "castles", "seat": 0, "options": {"ranks": 13}, "agents": [None, "ppo:castles-run/model.zip"]}
    r = client.post("/api/play", json=play)
    assert r.status_code == 400 and r.json()["field"] == "agent-1", r.text
    assert "plays castles only with Ranks per suit set to 10" in r.json()["error"]
    r = client.post("/api/play", json={**play, "options": {}, "agents": [None, "ppo:walls-run/model.zip"]})
    assert r.status_code == 400 and "is a walls network for ppo" in r.json()["error"], r.text
    r = client.post("/api/play", json={**play, "options": {}, "agents": [None, "dmc:castles-run/model.zip"]})
    assert r.status_code == 400 and "is a castles network for ppo" in r.json()["error"], r.text
    r = client.post("/api/play", json={**play, "options": {}, "agents": [None, "ppo:notes.zip"]})
    assert r.status_code == 400 and "unknown checkpoint 'notes.zip'" in r.json()["error"], r.text
    assert app_loads(client) == 0


def app_loads(client: TestClient) -> int:
    """Networks the client's server has loaded."""
    return int(client.app.state.server.checkpoint_cache.loads)  # type: ignore[attr-defined]


def test_a_file_is_read_as_a_checkpoint_only_when_it_is_one(listed: Path) -> None:
    assert read_checkpoint(listed / "notes.zip", "notes.zip") is None
    assert read_checkpoint(listed / "sb3.zip", "sb3.zip") is None
    assert read_checkpoint(listed / "chess.zip", "chess.zip") is None
    assert read_checkpoint(listed / "old-obs.zip", "old-obs.zip") is None  # observations this version does not give
    found = read_checkpoint(listed / "walls-run" / "model.zip", "walls-run/model.zip")
    assert found is not None and (found.game, found.kind, found.agents) == ("walls", "ppo", ("ppo",))


def test_the_server_plays_many_games_against_one_loaded_checkpoint(runs: Path) -> None:
    app = create_app(runs, seed=3)
    client = TestClient(app, base_url="http://127.0.0.1")
    castles = next(g for g in client.get("/api/games").json()["games"] if g["id"] == "castles")
    assert [c["value"] for c in castles["checkpoints"]] == ["ppo:castles-run/model.zip"]
    body = {"game": "castles", "seat": 0, "agents": [None, "ppo:castles-run/model.zip"]}
    views = [client.post("/api/play", json=body).json() for _ in range(3)]
    cache = app.state.server.checkpoint_cache
    assert cache.loads == 1 and len(cache) == 1 and cache.bytes > 0
    sessions = [app.state.server.store.get(v["id"], client.cookies[VISITOR_COOKIE]) for v in views]
    agents = [s.agents[1] for s in sessions]
    assert len({id(a) for a in agents}) == 3 and len({id(a.policy) for a in agents}) == 1
    view = views[0]
    while not view["over"]:  # the shared network plays a whole game
        move = {"action": view["moves"][0]["action"], "ply": view["plies"]}
        view = client.post(f"/api/session/{view['id']}/move", json=move).json()
        assert "error" not in view, view
    wrong = {"game": "castles", "seat": 0, "agents": [None, "ppo:walls-run/model.zip"]}
    r = client.post("/api/play", json=wrong)
    assert r.status_code == 400 and "is a walls network" in r.json()["error"], r.text
    assert r.json()["field"] == "agent-1" and "choose another agent for player_1" in r.json()["error"]
    assert cache.loads == 1  # a refused checkpoint is not loaded
