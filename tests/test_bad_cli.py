"""Bad input, door 3: command-line flags and paths. Each is refused before any work, in one line naming it.

Every case asserts exit status 2, that the last line of stderr names the flag or file and what is
allowed, and that the message is one line; the ``--out`` cases also check that no game was played.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sb3_contrib")

from experiments import evaluate, teams, train


def refused(main: Any, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one-line error of ``main(argv)`` (exit status 2)."""
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err and "error:" in err[-1], err
    return err[-1]


TRAIN_FLAGS = [
    (["castles", "--ent-coef", "-5"], "--ent-coef: must be a finite number >= 0, got '-5'"),
    (["castles", "--ent-coef", "nan"], "--ent-coef: must be a finite number, got 'nan'"),
    (["castles", "--prior-weight", "nan"], "--prior-weight: must be a finite number, got 'nan'"),
    (["castles", "--prior-weight", "inf"], "--prior-weight: must be a finite number, got 'inf'"),
    (["castles", "--learning-rate", "nan"], "--learning-rate: must be a finite number above 0"),
    (["castles", "--n-envs", "0"], "--n-envs: must be a whole number in 1..100000, got 0"),
    (["castles", "--pool", "random,ppo"], "--pool takes agent names from"),
    (["castles", "--prior", "greedy-scores"], "--prior greedy-scores is for grid, walls only"),
    (["castles", "--option", "ranks=7"], "ranks must be one of 5, 10, 13"),
    (["castles", "--option", "colour=red"], "unknown option(s) colour"),
    (["all", "--resume", "runs/x"], "--resume takes one game's run folder"),
]


@pytest.mark.parametrize(("argv", "message"), TRAIN_FLAGS, ids=[" ".join(a) for a, _ in TRAIN_FLAGS])
def test_train_flags(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert message in refused(train.main, argv, capsys)


def test_train_out_is_checked_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert f"--out {str(a_file)!r} is a file" in refused(train.main, ["castles", "--out", str(a_file)], capsys)
    under = str(a_file / "run")
    assert "lies under" in refused(train.main, ["castles", "--out", under], capsys)
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "config.json").write_text("{}")
    line = refused(train.main, ["castles", "--out", str(tmp_path / "old")], capsys)
    assert "already holds a training run: continue it with --resume" in line


# ------------------------------------------------------------------------------------------------ --resume
@pytest.fixture(scope="module")
def legacy_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder as written before the safe format: config.json, an SB3 latest.zip and state.json."""
    from sb3_contrib import MaskablePPO

    import jericho_env

    run = tmp_path_factory.mktemp("legacy") / "run"
    (run / "checkpoints").mkdir(parents=True)
    cfg = train.make_config("castles", {}, net="16,16", timesteps=256)
    (run / "config.json").write_text(json.dumps(cfg.to_json()))
    model = MaskablePPO("MlpPolicy", jericho_env.single_agent("castles"), n_steps=64, device="cpu")
    model.save(str(run / "checkpoints" / "latest.zip"))
    return run


def with_files(run: Path, tmp_path: Path, **files: str) -> Path:
    """A copy of ``run`` with some of its files replaced (``config``, ``state``)."""
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    names = {"config": "config.json", "state": "checkpoints/state.json"}
    for key, text in files.items():
        (copy / names[key]).write_text(text)
    return copy


RESUME: list[tuple[dict[str, str], list[str], str]] = [
    ({"state": "{}"}, [], "is a Stable-Baselines3 zip from an earlier version"),
    ({"state": "{}"}, ["--trust-checkpoint"], "run state lacks num_timesteps, snapshots, evals"),
    ({"state": '{"num_timesteps": 10, "snapshots": [], "evals": [], '}, ["--trust-checkpoint"], "is not valid JSON"),
    ({"state": '{"num_timesteps": -3, "snapshots": [], "evals": []}'}, ["--trust-checkpoint"], "num_timesteps must"),
    ({"state": '{"num_timesteps": 3, "snapshots": "x", "evals": []}'}, ["--trust-checkpoint"], "snapshots must be"),
    ({"config": "{not json"}, [], "config.json' is not valid JSON (Expecting property name"),
    ({"config": "[1]"}, [], "must hold a JSON object"),
]


@pytest.mark.parametrize(("files", "flags", "message"), RESUME, ids=[m for _, _, m in RESUME])
def test_resume_of_a_broken_run_folder(
    legacy_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    files: dict[str, str],
    flags: list[str],
    message: str,
) -> None:
    run = with_files(legacy_run, tmp_path, **files)
    assert message in refused(train.main, ["castles", "--resume", str(run), *flags], capsys)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"bogus": 1}, "config.json has unknown field(s) bogus (not a run of python -m experiments.train)"),
        ({"n_envs": -1}, "n_envs (--n-envs): must be a whole number in 1..100000, got -1"),
        ({"ent_coef": "high"}, "ent_coef (--ent-coef): expected a number, got 'high'"),
        ({"net": 16}, "net (--net) must be text, got 16"),
        ({"options": {"ranks": 7}}, "ranks must be one of 5, 10, 13"),
        ({"game": "grid"}, "is a 'grid' run, not 'castles'"),
    ],
)
def test_resume_with_a_bad_config_json(
    legacy_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, Any], message: str
) -> None:
    config = {**json.loads((legacy_run / "config.json").read_text()), **change}
    run = with_files(legacy_run, tmp_path, config=json.dumps(config))
    assert message in refused(train.main, ["castles", "--resume", str(run)], capsys)


def test_resume_without_a_usable_checkpoint(
    legacy_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = with_files(legacy_run, tmp_path)
    (run / "checkpoints" / "latest.zip").write_bytes(b"")
    line = refused(train.main, ["castles", "--resume", str(run)], capsys)
    assert "no checkpoint loads (" in line and "latest.zip' is not a PPO checkpoint" in line
    # without any checkpoint the run starts afresh (tests/test_durable_runs.py)
    assert "no config.json there" in refused(train.main, ["castles", "--resume", str(tmp_path)], capsys)


def test_init_of_another_game_or_a_damaged_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agents.checkpoint import save_checkpoint
    from tests.test_checkpoint_safety import tiny_model

    walls = save_checkpoint(tiny_model("walls"), tmp_path / "walls.zip")
    out = str(tmp_path / "run")
    line = refused(train.main, ["castles", "--init", str(walls), "--out", out], capsys)
    assert "was trained on 'walls', not 'castles'" in line and not Path(out).exists()
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(b"PK\x03\x04 cut short")
    line = refused(train.main, ["castles", "--init", str(damaged), "--out", out], capsys)
    assert "is not a PPO checkpoint" in line and not Path(out).exists()


# ------------------------------------------------------------------------------------------------ evaluate
@pytest.fixture
def no_games(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a tournament game is played."""

    def run_games(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a game was played before the bad input was refused")

    monkeypatch.setattr(evaluate, "run_games", run_games)


def test_evaluate_out_is_checked_before_any_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_games: None
) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    argv = ["castles", "--agents", "random", "greedy", "--deals", "50"]
    assert f"--out {str(a_file)!r} is a file" in refused(evaluate.main, [*argv, "--out", str(a_file)], capsys)
    assert "lies under" in refused(evaluate.main, [*argv, "--out", str(a_file / "x")], capsys)


@pytest.fixture(scope="module")
def castles_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from agents.checkpoint import save_checkpoint
    from tests.test_checkpoint_safety import tiny_model

    return save_checkpoint(tiny_model(), tmp_path_factory.mktemp("ck") / "castles.zip")


EVALUATE = [
    (["--option", "small_deck=true"], "this game has small_deck=True"),
    (["--option", "reversed_order=true"], "this game has reversed_order=True"),
    (["--deals", "0"], "--deals: must be at least 1"),
    (["--workers", "x"], "--workers: expected a whole number >= 1, got 'x'"),
    (["--option", "ranks"], "options are written KEY=VALUE"),
]


@pytest.mark.parametrize(("extra", "message"), EVALUATE, ids=[m for _, m in EVALUATE])
def test_evaluate_flags(
    castles_zip: Path, capsys: pytest.CaptureFixture[str], no_games: None, extra: list[str], message: str
) -> None:
    argv = ["castles", "--agents", "random", f"ppo={castles_zip}", *extra]
    assert message in refused(evaluate.main, argv, capsys)


@pytest.mark.parametrize(
    ("agents", "message"),
    [
        (["random", "ppo=/no/such.zip"], "no checkpoint at '/no/such.zip'"),
        (["random", "ppo"], "agent ppo needs a checkpoint: none is shipped for castles"),  # an empty zoo
        (["random", "oracle"], "unknown agent 'oracle'"),
        (["random"], "a tournament needs at least two agents"),
        (["random", "greedy=x"], "agent 'greedy' takes no argument"),
    ],
)
def test_evaluate_agents(
    capsys: pytest.CaptureFixture[str], no_games: None, agents: list[str], message: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch
) -> None:  # fmt: skip
    monkeypatch.setenv("JERICHO_ENV_ZOO", str(tmp_path))  # no agent shipped (agents.pretrained)
    assert message in refused(evaluate.main, ["castles", "--agents", *agents], capsys)


TEAMS = [
    (["walls", "greedy", "nope"], "unknown agent 'nope'"),
    (["walls", "greedy", "random", "--option", "num_players=9"], "num_players must be an int in 2..5"),
    (["chess", "greedy", "random"], "unknown game id 'chess'"),
    (["walls", "greedy", "random", "--deals", "0"], "--deals: must be at least 1"),
    (["walls", "greedy", "ppo=/no/such.zip"], "no checkpoint at '/no/such.zip'"),
]


@pytest.mark.parametrize(("argv", "message"), TEAMS, ids=[m for _, m in TEAMS])
def test_teams_flags(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str], message: str
) -> None:
    def no_game(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a game was played before the bad input was refused")

    monkeypatch.setattr(teams, "play_deals", no_game)
    assert message in refused(teams.main, argv, capsys)


def test_teams_out_is_checked_before_any_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    argv = ["walls", "ismcts", "random", "--deals", "50", "--out", str(a_file)]
    assert f"--out {str(a_file)!r} is a file" in refused(teams.main, argv, capsys)
