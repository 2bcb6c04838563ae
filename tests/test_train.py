"""Training: a tiny run saves, reloads, resumes and plays; the CLI rejects bad input."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import agents
import jericho_env
from agents.nets import build_policy
from agents.ppo import start_from
from experiments import train
from experiments.play.tournament import play_game
from experiments.training import presets

TINY = [
    "--timesteps",
    "1024",
    "--n-envs",
    "2",
    "--snapshot-every",
    "512",
    "--eval-every",
    "512",
    "--eval-deals",
    "2",
    "--checkpoint-every",
    "512",
    "--final-deals",
    "2",
    "--workers",
    "1",
    "--net",
    "32,32",
    "--shards",
    "2",  # one game per process: snapshots reach the worker, resuming rebuilds it
    "--update-threads",
    "2",
    "--quiet",
]


@pytest.mark.slow
@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_tiny_training_run_saves_reloads_resumes_and_plays(
    game: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / game
    assert train.main([game, "--out", str(out), *TINY]) == 0
    printed = capsys.readouterr().out
    assert f"## {game}: final table" in printed and "ppo" in printed
    # the policy training started from plays in the table too, so the table shows what training added
    assert "| **untrained** |" in printed
    for name in (
        "final.zip",
        "config.json",
        "checkpoints/latest.zip",
        "checkpoints/state.json",
        "tournament/table.csv",
        "logs/progress.csv",
        "learning_curves.png",
    ):
        assert (out / name).exists(), name
    state = json.loads((out / "checkpoints" / "state.json").read_text())
    assert state["num_timesteps"] >= 1024 and state["snapshots"] and state["evals"]
    # config.json records the values used, per-game defaults resolved
    cfg = json.loads((out / "config.json").read_text())
    preset = train.TrainConfig.preset(game)
    assert cfg["timesteps"] == 1024 and cfg["policy"] == preset["policy"]
    assert cfg["pool"] == preset["pool"] and cfg["prior"] == preset["prior"]
    assert cfg["learning_rate"] == preset["learning_rate"] and cfg["n_epochs"] == preset["n_epochs"]
    assert cfg["lr_schedule"] == preset["lr_schedule"] and cfg["eval_opponent"] == "greedy"
    assert set(cfg) == {f.name for f in dataclasses.fields(train.TrainConfig)}
    # reload as an agent and play a game through the env
    agent = agents.make("ppo", game, path=str(out / "final.zip"))
    env = jericho_env.make(game).unwrapped
    play_game(env, [agent] * len(env.possible_agents), 0, [0] * len(env.possible_agents))
    # resume with a larger budget continues from the checkpoint
    assert train.main([game, "--resume", str(out), "--timesteps", "2048", "--quiet", "--final-deals", "2"]) == 0
    state = json.loads((out / "checkpoints" / "state.json").read_text())
    assert state["num_timesteps"] >= 2048
    # PPO's statistics: the resumed session appends to the first one's rows
    import csv

    with (out / "logs" / "progress.csv").open() as f:
        steps = [int(r["time/total_timesteps"]) for r in csv.DictReader(f)]
    assert min(steps) <= 1024 < max(steps), steps


@pytest.mark.parametrize(
    ("game", "prior", "policy"),
    [("grid", "greedy-scores", "grid-cells"), ("walls", "greedy-scores", "mlp"), ("castles", "none", "mlp")],
)
def test_per_game_defaults_resolve_and_can_be_overridden(game: str, prior: str, policy: str) -> None:
    parser = train.build_parser()
    cfg = train.config_from_args(parser.parse_args([game]), game)
    assert cfg.prior == prior, "config.json records the resolved prior"
    assert train.make_config(game).prior == prior
    assert cfg.policy == policy
    assert train.config_from_args(parser.parse_args([game, "--policy", "auto"]), game).policy == policy
    cfg = train.config_from_args(parser.parse_args([game, "--prior", "none", "--policy", "mlp"]), game)
    assert cfg.prior == "none" and cfg.policy == "mlp"


def test_train_help() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "experiments.train", "--help"], capture_output=True, text=True, check=False
    )
    assert res.returncode == 0 and "--timesteps" in res.stdout and "--resume" in res.stdout
    help_text = " ".join(res.stdout.split())  # argparse wraps the lines
    assert "(default 1000000; walls: 4000000, castles: 8000000)" in help_text, "per-game defaults"
    assert "(default mlp; grid: grid-cells)" in help_text


def test_a_registered_game_without_its_own_preset_or_greedy_trains(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The done-when of the "house" issue: the test-only toy game (tests/conftest.py) trains on the default preset."""
    out = tmp_path / "toy"
    argv = ["toy", "--out", str(out), "--timesteps", "384", "--n-envs", "2", "--snapshot-every", "128"]
    argv += ["--eval-every", "128", "--eval-deals", "4", "--checkpoint-every", "128", "--final-deals", "4"]
    assert train.main([*argv, "--workers", "1", "--net", "16,16", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "toy: agents it lacks are dropped from the preset: pool random,greedy -> random" in printed
    assert "## toy: final table" in printed
    assert (out / "tournament" / "table.md").read_text().startswith("# toy: agent vs agent")
    results = json.loads((out / "tournament" / "results.json").read_text())
    assert results["agents"] == ["random", "ppo", "untrained"] and len(results["games"]) == 3 * 2 * 4
    cfg = json.loads((out / "config.json").read_text())
    expected = {**presets.PPO["default"], "pool": "random", "eval_opponent": "random", "timesteps": 384}
    expected.update(n_envs=2, snapshot_every=128, eval_every=128, eval_deals=4, checkpoint_every=128)
    expected.update(final_deals=4, workers=1, net="16,16", batch_size=2 * 64)  # the preset's 2048: one rollout
    assert cfg == {"game": "toy", "options": {}, **expected}
    evals = json.loads((out / "training.json").read_text())["evals"]
    assert [e["steps"] for e in evals] == [128, 256, 384] and all(e["opponent"] == "random" for e in evals)
    assert len(json.loads((out / "checkpoints" / "state.json").read_text())["snapshots"]) == 3
    agent = agents.make("ppo", "toy", path=str(out / "final.zip"))
    env = jericho_env.make("toy").unwrapped
    play_game(env, [agent, agent], 0, [0, 0])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nope"], "unknown game 'nope'"),
        (["grid", "--timesteps", "-5"], "--timesteps: must be at least 1"),
        (["grid", "--net", "a,b"], "--net takes comma-separated"),
        (["grid", "--resume", "/no/such/run"], "not a training run folder"),
        (["grid", "--option", "board_size=4"], "board_size"),
        (["grid", "--policy", "walls-mlp"], "--policy walls-mlp is for walls only"),
        (["castles", "--learning-rate", "-1"], "--learning-rate: must be a finite number above 0"),
        (["castles", "--learning-rate", "fast"], "--learning-rate: expected a number > 0"),
        (["castles", "--policy", "grid-features"], "--policy grid-features is for grid only"),
        (["castles", "--shards", "0"], "--shards: must be a whole number in 1..256, got 0"),
        (["castles", "--n-envs", "4", "--shards", "5"], "--shards 5 is more than the 4 games"),
    ],
)
def test_train_bad_input(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        train.main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


NUMBERS = [
    (["--batch-size", "64", "--n-envs", "2", "--n-steps", "8"], "--batch-size 64 is more than one rollout holds"),
    (["--batch-size", "1"], "--batch-size: must be a whole number in 2..1000000000, got 1"),
    (["--n-envs", "1", "--n-steps", "1"], "--n-envs 1 x --n-steps 1 is one sample per rollout"),
    (["--n-envs", "1000000"], "--n-envs: must be a whole number in 1..100000, got 1000000"),
    (["--n-envs", "20000", "--n-steps", "100000"], "--n-envs 20000 x --n-steps 100000 = 2000000000 samples per"),
    (["--eval-deals", "1000000000"], "--eval-deals: must be a whole number in 1..100000"),
    (["--final-deals", "1000000000"], "--final-deals: must be a whole number in 1..1000000"),
    (["--update-threads", "100000"], "--update-threads: must be a whole number in 1..256"),
    (["--shards", "1000", "--n-envs", "1000"], "--shards: must be a whole number in 1..256"),
    (["--net", "99999999"], "--net takes at most 16 layers of at most 4096 units each"),
    (["--net", "64,,64"], "--net takes comma-separated layer sizes"),
    (["--pool", "random,,greedy"], "--pool takes agent names from"),
]


@pytest.mark.parametrize(("argv", "message"), NUMBERS, ids=[" ".join(a) for a, _ in NUMBERS])
def test_numeric_flags_are_checked_before_any_work(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def work(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the run started before the bad flag was refused")

    monkeypatch.setattr(train, "train_one", work)
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as e:
        train.main(["castles", *argv, "--out", str(out)])
    assert e.value.code == 2 and message in capsys.readouterr().err
    assert not out.exists(), "refused before the run folder is made"


def test_corrupt_and_missing_checkpoints(tmp_path: Path) -> None:
    bad = tmp_path / "model.zip"
    bad.write_bytes(b"not a zip at all")
    with pytest.raises(ValueError, match="not a PPO checkpoint: not a zip archive"):
        agents.make("ppo", "grid", path=str(bad))
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        agents.make("ppo", "grid", path=str(tmp_path / "missing.zip"))


@pytest.mark.slow
@pytest.mark.parametrize(("game", "policy"), [("grid", "grid-features"), ("walls", "walls-mlp")])
def test_feature_policies_train_and_play(
    game: str, policy: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / policy
    argv = [game, "--policy", policy, "--out", str(out), "--timesteps", "512", "--n-envs", "2", "--n-epochs", "1"]
    argv += ["--eval-every", "512", "--eval-deals", "1", "--final-deals", "1", "--workers", "1", "--quiet"]
    if game == "grid":
        argv += ["--option", "board_size=9"]
    assert train.main(argv) == 0
    assert f"## {game}: final table" in capsys.readouterr().out
    options = {"board_size": 9} if game == "grid" else {}
    agent = agents.make("ppo", game, path=str(out / "final.zip"), **options)
    env = jericho_env.make(game, **options).unwrapped
    play_game(env, [agent] * len(env.possible_agents), 2, [2] * len(env.possible_agents))


def _untrained(game: str, net: str = "32,32") -> Any:
    from sb3_contrib import MaskablePPO

    from agents.checkpoint import CheckpointMeta, PolicySpec, attach_meta

    name = train.TrainConfig.preset(game)["policy"]
    policy, kwargs = build_policy(name, game, {}, net)
    model = MaskablePPO(
        policy, jericho_env.single_agent(game), n_steps=32, batch_size=32, policy_kwargs=kwargs, device="cpu", seed=1
    )
    return attach_meta(model, CheckpointMeta(game, {}, PolicySpec(name, net)))


def test_init_copies_policy_weights_and_rejects_misfits(tmp_path: Path) -> None:
    import torch

    from agents.checkpoint import save_checkpoint

    source = _untrained("castles")
    path = tmp_path / "source.zip"
    save_checkpoint(source, path)
    target = _untrained("castles")
    start_from(target, str(path))
    pairs = zip(source.policy.state_dict().items(), target.policy.state_dict().values(), strict=True)
    for (name, a), b in pairs:
        assert torch.equal(a, b), name
    with pytest.raises(ValueError, match="do not match this run's"):
        start_from(_untrained("walls"), str(path))
    with pytest.raises(ValueError, match="the network differs"):
        start_from(_untrained("castles", net="64,32"), str(path))


def test_init_missing_checkpoint_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as e:
        train.main(["castles", "--init", "/no/such/clone.zip", "--timesteps", "64", "--quiet", "--out", str(out)])
    assert e.value.code == 2
    assert "no checkpoint at '/no/such/clone.zip'" in capsys.readouterr().err
    assert not out.exists(), "bad input is caught before the run folder is made"


@pytest.mark.slow
def test_linear_learning_rate_schedule_decays_to_zero(tmp_path: Path) -> None:
    import csv

    out = tmp_path / "run"
    argv = [
        "castles",
        "--out",
        str(out),
        "--lr-schedule",
        "linear",
        "--learning-rate",
        "0.001",
        *TINY,
        "--timesteps",
        "512",  # 16 updates of 32 steps
    ]
    assert train.main(argv) == 0
    assert json.loads((out / "config.json").read_text())["lr_schedule"] == "linear"
    with (out / "logs" / "progress.csv").open() as f:
        rates = [float(r["train/learning_rate"]) for r in csv.DictReader(f) if r.get("train/learning_rate")]
    assert len(rates) >= 2 and rates == sorted(rates, reverse=True) and rates[0] < 0.001
    assert rates[-1] < 0.001 / 2  # the rate falls with the progress through the budget


def test_learning_curves_need_something_to_plot(tmp_path: Path) -> None:
    from experiments.play.report import learning_curves

    assert learning_curves(tmp_path) is None
    (tmp_path / "training.json").write_text(
        json.dumps({"evals": [{"steps": 10, "vs_greedy": 0.5, "ci95": [0.3, 0.7]}]})
    )
    out = learning_curves(tmp_path)
    assert out is not None and out.stat().st_size > 1000


def test_curves_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from experiments import curves

    with pytest.raises(SystemExit) as e:
        curves.main([str(tmp_path)])
    assert e.value.code == 2 and "is not a training run folder" in capsys.readouterr().err
    (tmp_path / "config.json").write_text("{}")
    assert curves.main([str(tmp_path)]) == 0
    assert "nothing to plot yet" in capsys.readouterr().out
    (tmp_path / "training.json").write_text(json.dumps({"evals": [{"steps": 5, "vs_greedy": 0.4, "ci95": [0.2, 0.6]}]}))
    assert curves.main([str(tmp_path)]) == 0
    assert (tmp_path / "learning_curves.png").is_file()


def test_the_curves_mark_the_games_even_share(tmp_path: Path) -> None:
    """Two players: 50%; walls (4 by default, 5 as an option): 25% and 20%; no or an odd config: 50%."""
    from experiments.play.report import _even_share

    assert _even_share(tmp_path) == 50.0
    for game, options, even in (("grid", {}, 50.0), ("walls", {}, 25.0), ("walls", {"num_players": 5}, 20.0)):
        (tmp_path / "config.json").write_text(json.dumps({"game": game, "options": options}))
        assert _even_share(tmp_path) == even
    (tmp_path / "config.json").write_text(json.dumps({"game": "chess", "options": {}}))
    assert _even_share(tmp_path) == 50.0
    (tmp_path / "config.json").write_text("[1, 2]")
    assert _even_share(tmp_path) == 50.0


def test_the_training_config_stays_in_experiments_train() -> None:
    """The parts (hint, pool, vec env, model, shards, agents) get objects and plain values, never the config."""
    import re

    root = Path(__file__).resolve().parent.parent
    parts = [
        "experiments/training/ppo/selfplay.py",
        "experiments/training/ppo/pool.py",
        "experiments/training/ppo/model.py",
        "agents/batch.py",
    ]
    parts += ["agents/prior.py", "agents/ppo.py", "jericho_env/envs/sb3.py", "jericho_env/envs/selfplay.py"]
    for part in parts:
        text = (root / part).read_text(encoding="utf-8")
        assert not re.search(r"\bcfg\b|TrainConfig", text), f"{part} reads the training config"
