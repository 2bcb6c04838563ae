"""The model zoo's machinery (``agents.pretrained``, ``experiments.zoo``) on a zoo folder of its own.

A run folder is made here as the training and expert-iteration commands make theirs (their own writers:
``save_checkpoint``, ``RunFolder.save_training``, ``record_session``, the tournament), with a tiny
untrained network; ``experiments.zoo add`` turns it into an entry of a temporary zoo folder, which
``$JERICHO_ENV_ZOO`` makes the one ``agents.zoo()`` reads.
"""

from __future__ import annotations

import dataclasses
import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from starlette.testclient import TestClient

import agents
import jericho_env
from agents import ppo, pretrained
from agents.pretrained import ZOO_ENV, ZooError
from agents.registry import parse_spec, playable_names
from experiments import evaluate, train, zoo
from experiments.training.provenance import source_commit
from jericho_env import agent_plugins
from jericho_env.registry import make_rules
from jericho_env.web.app import create_app
from tests.zoo_helpers import exit_run, ppo_run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("runs")
    return {"ppo": ppo_run(base / "ppo"), "exit": exit_run(base / "exit")}


@pytest.fixture
def the_zoo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty zoo folder that ``agents.zoo()`` reads (``$JERICHO_ENV_ZOO``), nothing loaded from another."""
    folder = tmp_path / "zoo"
    folder.mkdir()
    monkeypatch.setenv(ZOO_ENV, str(folder))
    monkeypatch.setattr(ppo, "_loaded", {})
    return folder


def added(run: Path, the_zoo: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    assert zoo.main(["add", str(run), "--zoo", str(the_zoo), *extra]) == 0
    return capsys.readouterr().out


# --------------------------------------------------------------------------------------------- adding
def test_add_writes_the_policy_tensors_and_a_card_from_the_run_folder(
    runs: dict[str, Path], the_zoo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = added(runs["ppo"], the_zoo, capsys)
    assert "added castles-ppo" in out and "castles-ppo.zip" in out
    zip_path, card = the_zoo / "castles-ppo.zip", json.loads((the_zoo / "castles-ppo.json").read_text())
    with zipfile.ZipFile(zip_path) as zf:
        weights = torch.load(io.BytesIO(zf.read("weights.pt")), weights_only=True)
        assert sorted(zf.namelist()) == ["meta.json", "weights.pt"]
        assert zf.read("meta.json") == zipfile.ZipFile(runs["ppo"] / "final.zip").read("meta.json")
    assert set(weights) == {"policy"}  # the optimizer state is dropped: a smaller file
    assert zip_path.stat().st_size < (runs["ppo"] / "final.zip").stat().st_size
    rules = make_rules("castles")
    assert card["game"] == "castles" and card["kind"] == "ppo" and card["agents"] == ["ppo"]
    assert card["options"] == dict(rules.options)
    assert (card["game_version"], card["observation_version"]) == (rules.version, rules.observation_version)
    assert card["package_version"] == jericho_env.__version__
    made = card["made_by"]
    assert made["seed"] == 0 and made["commit"] == source_commit()[0] and made["commit"] is not None
    assert made["command_run"] == "python -m experiments.train castles --timesteps 32 --net 16,16"
    assert made["commit_source"].startswith("provenance.json")
    training = json.loads((runs["ppo"] / "training.json").read_text())
    assert card["training"]["steps"] == 32 and card["training"]["seconds"] == training["seconds_all_sessions"]
    table = json.loads((runs["ppo"] / "tournament" / "results.json").read_text())
    cell = next(c for c in table["cells"] if (c["agent"], c["opponent"]) == ("ppo", "greedy"))
    assert card["scores"]["deals"] == 2 and card["scores"]["ppo"]["greedy"]["score"] == cell["win_rate"]
    assert card["scores"]["ppo"]["greedy"]["ci95"] == cell["ci95"] and card["scores"]["ppo"]["greedy"]["games"] == 4
    assert set(card["scores"]["ppo"]) == {"random", "greedy"}
    assert card["file"]["bytes"] == zip_path.stat().st_size and card["file"]["sha256"] == pretrained.sha256(zip_path)
    assert card["file"]["source"]["sha256"] == pretrained.sha256(runs["ppo"] / "final.zip")
    assert card["config"] == json.loads((runs["ppo"] / "config.json").read_text())


def test_the_card_names_a_command_that_makes_the_same_config(runs: dict[str, Path]) -> None:
    config = json.loads((runs["ppo"] / "config.json").read_text())
    command, unset = zoo.derived_command("ppo", config)
    argv = command.split()
    assert argv[:4] == ["python", "-m", "experiments.train", "castles"] and not unset
    assert dataclasses.asdict(train.config_from_args(train.build_parser().parse_args(argv[3:]), "castles")) == config
    walls = dataclasses.asdict(train.make_config("walls", {"num_players": 3}, seed=4, gamma=0.9))
    command, unset = zoo.derived_command("ppo", {**walls, "vec": "selfplay"})  # vec: an older version's setting
    assert command == "python -m experiments.train walls --seed 4 --gamma 0.9 --option num_players=3"
    assert unset == ["vec='selfplay'"]


def test_an_exit_run_ships_one_network_for_exit_and_exit_search(
    runs: dict[str, Path], the_zoo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        zoo.main(["add", str(runs["exit"]), "--zoo", str(the_zoo), "--name", "ppo"])
    assert "holds a network of kind exit (it has exit.json)" in capsys.readouterr().err
    added(runs["exit"], the_zoo, capsys)
    card = json.loads((the_zoo / "castles-exit.json").read_text())
    assert card["agents"] == ["exit", "exit-search"] and set(card["scores"]) >= {"exit", "exit-search"}
    evals = [{"iteration": 1, "greedy": {"score": 0.5, "ci95": [0.1, 0.9], "games": 2}}]
    assert card["training"] == {"algorithm": "exit", "iterations": 1, "games": 2, "rows": 90, "seconds": 6.0,
                                "evals": evals}  # fmt: skip
    assert "no provenance.json" in capsys.readouterr().out or card["made_by"]["commit_source"].startswith("HEAD")
    assert card["made_by"]["command"].startswith("python -m experiments.exit castles --seed 0 --iterations 1")
    search = agents.make("exit-search", "castles", simulations=4)
    alone = agents.make("exit", "castles")
    assert search.path == alone.path == str(the_zoo / "castles-exit.zip") and search.policy is alone.policy
    assert search.meta["training"]["algorithm"] == "exit"
    assert playable_names("castles")[-2:] == ["exit", "exit-search"] and "ppo" not in playable_names("castles")


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("final.zip", "no final.zip"),
        ("training.json", "not a finished run folder"),
        ("tournament/results.json", "no tournament/results.json"),
        ("versions", "observation_version 7; this version of jericho-env has 0: train it again"),
    ],
)
def test_add_refuses_an_unfinished_or_outdated_run_naming_what_is_wrong(
    runs: dict[str, Path], the_zoo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str, message: str
) -> None:
    import shutil

    run = Path(shutil.copytree(runs["ppo"], tmp_path / "run"))
    if damage == "versions":
        final = run / "final.zip"
        with zipfile.ZipFile(final) as zf:
            members = {n: zf.read(n) for n in zf.namelist()}
        meta = json.loads(members["meta.json"])
        members["meta.json"] = json.dumps({**meta, "observation_version": 7}).encode()
        with zipfile.ZipFile(final, "w") as zf:
            for name, data in members.items():
                zf.writestr(name, data)
    else:
        (run / damage).unlink()
    with pytest.raises(SystemExit) as e:
        zoo.main(["add", str(run), "--zoo", str(the_zoo)])
    assert e.value.code == 2 and message in capsys.readouterr().err
    assert list(the_zoo.iterdir()) == []


def test_add_does_not_replace_an_entry_unless_asked(
    runs: dict[str, Path], the_zoo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    added(runs["ppo"], the_zoo, capsys)
    with pytest.raises(SystemExit) as e:
        zoo.main(["add", str(runs["ppo"]), "--zoo", str(the_zoo)])
    assert e.value.code == 2 and "already has castles-ppo" in capsys.readouterr().err
    added(runs["ppo"], the_zoo, capsys, "--replace", "--commit", "abc123")
    assert json.loads((the_zoo / "castles-ppo.json").read_text())["made_by"]["commit"] == "abc123"


# --------------------------------------------------------------------------------------------- using it
def test_a_shipped_ppo_plays_by_name_everywhere_and_as_its_run_played(
    runs: dict[str, Path], the_zoo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ZooError, match=r"none is shipped for castles .* write ppo=PATH"):
        agents.make("ppo", "castles")
    added(runs["ppo"], the_zoo, capsys)
    listed = agents.zoo()
    assert [e.name for e in listed] == ["castles-ppo"] and listed.entry("ppo", "castles") is not None
    assert "castles" in str(listed) and "vs greedy" in str(listed) and "KiB" in str(listed)
    shipped = agents.make("ppo", "castles", seed=0)
    again = agents.make("ppo", "castles", seed=1)
    assert shipped.path == str(the_zoo / "castles-ppo.zip") and again.policy is shipped.policy  # loaded once
    from_run = agents.make("ppo", "castles", path=str(runs["ppo"] / "final.zip"))
    env = jericho_env.make("castles")
    env.reset(seed=5)
    for _ in range(6):  # the shipped network plays its run's moves
        agent_id = env.agent_selection
        obs = env.observe(agent_id)
        assert shipped.act(obs) == from_run.act(obs)
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert parse_spec("ppo") == ("ppo", "ppo", {}) and parse_spec("exit=x.zip") == ("exit", "exit", {"path": "x.zip"})
    assert agent_plugins.parse_spec("ppo", "castles") == ("ppo", "ppo", {})
    assert agent_plugins.make_agent("ppo", "castles").path == shipped.path  # jericho_env.play --opponent ppo
    assert "ppo" in playable_names("castles") and "ppo" not in playable_names("grid")
    with pytest.raises(ZooError, match="none is shipped for grid"):
        agents.make("ppo", "grid")
    with pytest.raises(ZooError, match="was trained with ranks=10; for other options"):
        agents.make("ppo", "castles", ranks=5)
    assert zoo.main(["list", "--zoo", str(the_zoo)]) == 0 and "castles-ppo.zip" in capsys.readouterr().out
    assert zoo.main(["check", "--zoo", str(the_zoo)]) == 0
    assert "castles-ppo: " in capsys.readouterr().out


def test_evaluate_takes_ppo_without_a_path(
    runs: dict[str, Path], the_zoo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    added(runs["ppo"], the_zoo, capsys)
    argv = ["castles", "--agents", "greedy", "ppo", "--deals", "2", "--quiet", "--no-plot"]
    argv += ["--out", str(tmp_path / "e")]
    assert evaluate.main(argv) == 0
    results = json.loads((tmp_path / "e" / "results.json").read_text())
    assert results["agents"] == ["greedy", "ppo"] and len(results["games"]) == 4


def test_the_web_page_offers_the_shipped_agents_by_name(
    runs: dict[str, Path], the_zoo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def named(client: TestClient) -> dict[str, list[str]]:
        return {g["id"]: g["agents"] for g in client.get("/api/games").json()["games"]}

    before = named(TestClient(create_app("/nonexistent-runs", seed=0), base_url="http://127.0.0.1"))
    assert not {"ppo", "exit", "exit-search"} & set(before["castles"])  # nothing shipped: checkpoints need a file
    added(runs["ppo"], the_zoo, capsys)
    client = TestClient(create_app("/nonexistent-runs", seed=0), base_url="http://127.0.0.1")
    games = named(client)
    assert "ppo" in games["castles"] and "ppo" not in games["grid"] and "greedy" in games["grid"]
    view = client.post("/api/play", json={"game": "castles", "seat": 0, "agents": [None, "ppo"]}).json()
    assert view["players"][1]["agent"] == "ppo"
    refused = client.post("/api/play", json={"game": "grid", "seat": 0, "agents": [None, "ppo"]})
    assert refused.status_code == 400 and "unknown agent 'ppo'" in refused.json()["error"]


# --------------------------------------------------------------------------------------------- a damaged zoo
def test_a_damaged_zoo_is_named(runs: dict[str, Path], the_zoo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    added(runs["ppo"], the_zoo, capsys)
    zip_path = the_zoo / "castles-ppo.zip"
    zip_path.write_bytes(zip_path.read_bytes() + b"\0")
    with pytest.raises(ZooError, match=r"does not match the SHA-256 on its card castles-ppo\.json"):
        agents.make("ppo", "castles")
    (the_zoo / "castles-ppo.json").rename(the_zoo / "castles-x.json")
    with pytest.raises(ZooError, match=r"must be named castles-ppo\.json"):
        agents.zoo()
    (the_zoo / "castles-x.json").unlink()
    with pytest.raises(ZooError, match=r"castles-ppo\.zip has no card"):
        agents.zoo()


def test_the_zoo_folder_variable_must_name_a_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(ZOO_ENV, str(tmp_path / "missing"))
    with pytest.raises(ZooError, match="is not a folder"):
        agents.zoo()
    monkeypatch.delenv(ZOO_ENV)
    assert agents.zoo().folder == pretrained.PACKAGE_FOLDER
