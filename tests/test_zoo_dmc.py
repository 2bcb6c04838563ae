"""Deep Monte-Carlo networks in the model zoo: ``experiments.zoo add`` of an ``experiments.dmc`` run folder.

Tiny real runs (3,000 positions, a 32-wide trunk: seconds) are added to a temporary zoo folder, which
``$JERICHO_ENV_ZOO`` makes the one ``agents.zoo()`` reads; the card, ``agents.make("dmc", GAME)`` without a
path, ``list``, ``check``, the leaderboard's agents and the refusals of damaged entries are tested on it.
"""

from __future__ import annotations

import dataclasses
import io
import json
import shlex
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

import agents
import jericho_env
from agents import ppo, pretrained
from agents.pretrained import ZOO_ENV, ZooError
from experiments import dmc, evaluate, leaderboard, zoo
from experiments.training.dmc.config import DmcConfig, make_config
from experiments.training.provenance import source_commit
from jericho_env.registry import make_rules

TINY = ["--positions", "3000", "--envs", "32", "--rounds", "8", "--buffer", "4000", "--batch-size", "128"]
TINY += ["--net", "32", "--eval-every", "2000", "--eval-deals", "2", "--quiet"]
WALLS = ["--prior", "greedy-scores", "--option", "num_players=3"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("dmc-runs")
    assert dmc.main(["castles", *TINY, "--out", str(base / "castles")]) == 0
    assert dmc.main(["walls", *TINY, *WALLS, "--out", str(base / "walls")]) == 0
    return {"castles": base / "castles", "walls": base / "walls"}


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


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as e:
        zoo.main(argv)
    assert e.value.code == 2
    return capsys.readouterr().err


# --------------------------------------------------------------------------------------------- adding
def test_add_writes_the_dmc_policy_tensors_and_a_card_whose_scores_say_they_are_the_last_evaluation(
    runs: dict[str, Path], the_zoo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = runs["castles"]
    out = added(run, the_zoo, capsys)
    assert "added castles-dmc" in out and "castles-dmc.zip" in out and "its run's last evaluation" in out
    zip_path, card = the_zoo / "castles-dmc.zip", json.loads((the_zoo / "castles-dmc.json").read_text())
    with zipfile.ZipFile(zip_path) as zf:
        assert sorted(zf.namelist()) == ["meta.json", "weights.pt"]
        assert zf.read("meta.json") == zipfile.ZipFile(run / "final.zip").read("meta.json")
        weights = torch.load(io.BytesIO(zf.read("weights.pt")), weights_only=True)
    assert set(weights) == {"policy"} and json.loads(zipfile.ZipFile(zip_path).read("meta.json"))["format"] == (
        "jericho-env dmc checkpoint"
    )
    rules = make_rules("castles")
    assert card["game"] == "castles" and card["kind"] == "dmc" and card["agents"] == ["dmc"]
    assert card["options"] == dict(rules.options) and card["package_version"] == jericho_env.__version__
    assert (card["game_version"], card["observation_version"]) == (rules.version, rules.observation_version)
    made = card["made_by"]
    assert made["seed"] == 0 and made["commit"] == source_commit()[0] and made["commit_source"].startswith("provenance")
    assert made["command_run"].startswith("python -m experiments.dmc castles --positions 3000")
    assert made["command"] == (
        "python -m experiments.dmc castles --seed 0 --positions 3000 --envs 32 --rounds 8 --buffer 4000 "
        "--batch-size 128 --net 32 --eval-every 2000 --eval-deals 2"
    )
    training = json.loads((run / "training.json").read_text())
    summary = card["training"]
    assert summary["algorithm"] == "dmc" and summary["positions_generated"] == training["positions_generated"] >= 3000
    assert summary["positions_learned"] == training["positions_learned"] and summary["seconds"] == training["seconds"]
    assert summary["generated_per_second"] == training["rates"]["generated_per_second"]
    assert summary["evals"] == training["evals"] and len(summary["evals"]) == 2
    last = training["evals"][-1]
    scores = card["scores"]
    assert scores["table"] == "training.json" and "last evaluation" in scores["source"] and scores["deals"] == 2
    assert scores["dmc"]["greedy"] == {k: last[k] for k in ("score", "ci95", "games", "positions_generated")}
    assert card["file"]["sha256"] == pretrained.sha256(zip_path) and card["file"]["bytes"] == zip_path.stat().st_size
    assert card["file"]["source"]["sha256"] == pretrained.sha256(run / "final.zip")
    assert card["config"] == json.loads((run / "config.json").read_text())
    assert card["fingerprint"]["agent"] == "dmc" and len(card["fingerprint"]["moves"].split()) > 50


def test_the_policy_only_copy_drops_the_optimizer_and_stays_a_dmc_checkpoint(runs: dict[str, Path]) -> None:
    from agents.dmc import load_dmc

    latest = runs["castles"] / "checkpoints" / "latest.zip"
    _, _, optimizer = load_dmc(latest)
    assert optimizer is not None  # latest.zip keeps it, to resume
    copy = runs["castles"].parent / "latest-policy.zip"
    copy.write_bytes(zoo.policy_only(latest))
    network, meta, none = load_dmc(copy, "castles", {})
    assert none is None and meta["format"] == "jericho-env dmc checkpoint" and network.spec.hidden == (32,)
    assert copy.stat().st_size < latest.stat().st_size


def test_the_card_names_a_command_that_makes_the_same_config(runs: dict[str, Path]) -> None:
    for run in runs.values():
        config = json.loads((run / "config.json").read_text())
        command, unset = zoo.derived_command("dmc", config)
        argv = shlex.split(command)
        assert argv[:3] == ["python", "-m", "experiments.dmc"] and not unset
        args = dmc.build_parser().parse_args(argv[3:])
        remade = DmcConfig.from_args(args, args.game)
        assert dataclasses.asdict(remade) == config
    walls = dataclasses.asdict(make_config("walls", {"num_players": 3}, seed=4, prior="none"))
    command, _ = zoo.derived_command("dmc", walls)  # only what differs from the preset (walls: greedy-scores)
    assert command == "python -m experiments.dmc walls --seed 4 --prior none --option num_players=3"


def test_scores_from_an_evaluate_table_of_the_runs_network_and_not_from_another_network(
    runs: dict[str, Path], the_zoo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = runs["castles"]
    argv = ["castles", "--agents", f"dmc={run / 'final.zip'}", "greedy", "random", "--deals", "2", "--quiet"]
    assert evaluate.main([*argv, "--no-plot", "--out", str(tmp_path / "e")]) == 0
    table = tmp_path / "e" / "results.json"
    added(run, the_zoo, capsys, "--scores", str(table))
    scores = json.loads((the_zoo / "castles-dmc.json").read_text())["scores"]
    assert "--scores" in scores["source"] and scores["table"] == str(table.resolve()) and scores["deals"] == 2
    cells = {c["opponent"]: c for c in json.loads(table.read_text())["cells"] if c["agent"] == "dmc"}
    assert (
        set(scores["dmc"]) == {"greedy", "random"} and scores["dmc"]["greedy"]["score"] == cells["greedy"]["win_rate"]
    )
    assert scores["dmc"]["random"]["games"] == 4 and "wins" in scores["dmc"]["random"]
    earlier = sorted((run / "checkpoints").glob("pos_*.zip"), key=lambda p: int(p.stem[4:]))[0]  # another network
    argv[2] = f"dmc={earlier}"
    assert evaluate.main([*argv, "--no-plot", "--out", str(tmp_path / "other")]) == 0
    add = ["add", str(run), "--zoo", str(the_zoo), "--replace", "--scores", str(tmp_path / "other" / "results.json")]
    assert "another network than" in refused(add, capsys)
    assert (
        pretrained.sha256(the_zoo / "castles-dmc.zip")
        == json.loads((the_zoo / "castles-dmc.json").read_text())["file"]["sha256"]
    )  # the entry before is kept


def test_add_refuses_a_dmc_run_that_is_unfinished_or_named_as_another_kind(
    runs: dict[str, Path], the_zoo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    run = Path(shutil.copytree(runs["castles"], tmp_path / "run"))
    assert "holds a network of kind dmc (it has training.json counting positions)" in refused(
        ["add", str(run), "--zoo", str(the_zoo), "--name", "ppo"], capsys
    )
    (run / "final.zip").unlink()
    assert "no final.zip" in refused(["add", str(run), "--zoo", str(the_zoo)], capsys)
    shutil.copy(run / "checkpoints" / "latest.zip", run / "final.zip")
    training = json.loads((run / "training.json").read_text())
    (run / "training.json").write_text(json.dumps({**training, "evals": []}))
    assert "records no evaluation: give a table with --scores" in refused(
        ["add", str(run), "--zoo", str(the_zoo)], capsys
    )
    assert list(the_zoo.iterdir()) == []


# --------------------------------------------------------------------------------------------- using it
def test_a_shipped_dmc_plays_by_name_is_listed_checked_and_joins_the_leaderboard(
    runs: dict[str, Path], the_zoo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ZooError, match=r"none is shipped for castles .* write dmc=PATH"):
        agents.make("dmc", "castles")
    added(runs["castles"], the_zoo, capsys)
    listed = agents.zoo()
    assert [e.name for e in listed] == ["castles-dmc"] and listed.entry("dmc", "castles") is not None
    assert "3,1" in listed[0].trained() and "positions" in str(listed) and "vs greedy" in str(listed)
    shipped = agents.make("dmc", "castles", seed=0)
    from_run = agents.make("dmc", "castles", path=str(runs["castles"] / "final.zip"))
    assert shipped.path == str(the_zoo / "castles-dmc.zip")
    env = jericho_env.make("castles")
    env.reset(seed=5)
    for _ in range(8):  # the shipped network plays its run's moves
        obs = env.observe(env.agent_selection)
        assert shipped.act(obs) == from_run.act(obs)
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert zoo.main(["list", "--zoo", str(the_zoo)]) == 0 and "castles-dmc.zip" in capsys.readouterr().out
    assert zoo.main(["check", "--zoo", str(the_zoo)]) == 0
    assert "castles-dmc: " in capsys.readouterr().out
    specs, notes = leaderboard.game_agents("castles", 4)
    assert [s.label for s in specs] == ["random", "greedy", "ismcts", "dmc", "dmc-search"]  # a self-play network
    assert specs[-2].kwargs == {"path": str(the_zoo / "castles-dmc.zip")}
    assert specs[-1].kwargs == {"path": str(the_zoo / "castles-dmc.zip"), "simulations": 4}
    assert "Deep Monte-Carlo positions" in notes[0] and "its run's last evaluation scores" in notes[0]
    out = tmp_path / "docs" / "leaderboard.md"
    argv = ["--games", "castles", "--deals", "1", "--simulations", "4", "--bootstrap", "20", "--workers", "1"]
    assert leaderboard.main([*argv, "--quiet", "--out", str(out)]) == 0
    assert "| **dmc** |" in out.read_text() and "| **dmc-search** |" in out.read_text()
    assert "castles-dmc.zip" in out.read_text()


def test_a_walls_run_with_the_greedy_prior_and_three_players_round_trips(
    runs: dict[str, Path], the_zoo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    added(runs["walls"], the_zoo, capsys)
    card = json.loads((the_zoo / "walls-dmc.json").read_text())
    assert card["options"] == dict(make_rules("walls", num_players=3).options)
    # walls' preset has the prior: the command names only what differs from it
    assert card["made_by"]["command"].endswith("--net 32 --eval-every 2000 --eval-deals 2 --option num_players=3")
    meta = json.loads(zipfile.ZipFile(the_zoo / "walls-dmc.zip").read("meta.json"))
    assert meta["network"]["prior"] == "greedy-scores" and meta["options"]["num_players"] == 3
    agent = agents.make("dmc", "walls", seed=0, num_players=3)
    assert agent.path == str(the_zoo / "walls-dmc.zip") and agent.network.spec.prior == "greedy-scores"
    assert zoo.play_one("dmc", "walls", None, {"num_players": 3}) > 0
    with pytest.raises(ZooError, match="was trained with num_players=3; for other options"):
        agents.make("dmc", "walls")
    assert zoo.main(["check", "--zoo", str(the_zoo)]) == 0
    assert "walls-dmc: " in capsys.readouterr().out


# --------------------------------------------------------------------------------------------- a damaged zoo
def test_a_damaged_dmc_file_or_card_is_refused_naming_it(
    runs: dict[str, Path], the_zoo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    added(runs["castles"], the_zoo, capsys)
    zip_path, card_path = the_zoo / "castles-dmc.zip", the_zoo / "castles-dmc.json"
    good_zip, good_card = zip_path.read_bytes(), card_path.read_text()
    zip_path.write_bytes(good_zip + b"\0")
    with pytest.raises(ZooError, match=r"does not match the SHA-256 on its card castles-dmc\.json"):
        agents.make("dmc", "castles")
    assert "does not match the SHA-256 on its card" in refused(["check", "--zoo", str(the_zoo)], capsys)
    zip_path.write_bytes(good_zip)
    card = json.loads(good_card)
    moves = card["fingerprint"]["moves"].split()
    card["fingerprint"]["moves"] = " ".join(str(int(m) + 1) for m in moves)
    card_path.write_text(json.dumps(card))
    assert f"castles-dmc plays {len(moves)} of its card's {len(moves)} fixed positions otherwise" in refused(
        ["check", "--zoo", str(the_zoo)], capsys
    )
    card_path.write_text(json.dumps({**json.loads(good_card), "observation_version": 7}))
    assert "castles-dmc (its card) was trained on castles with observation_version 7" in refused(
        ["check", "--zoo", str(the_zoo)], capsys
    )
    card_path.write_text(good_card[: len(good_card) // 2])
    with pytest.raises(ZooError, match=r"castles-dmc\.json' is unreadable"):
        agents.zoo()
    card_path.write_text(good_card)
    assert zoo.main(["check", "--zoo", str(the_zoo)]) == 0
