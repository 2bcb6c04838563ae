"""experiments.sweep on the local backend: trials, bad input refused before any work, failures kept, reruns.

The sweep on Ray is in tests/test_ray.py. Trials here train castles for 512 steps with tiny tables.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from experiments import evaluate, sweep, train
from experiments.sweep import Trial, make_trials, parse_grid

SMALL = ["--n-envs", "1", "--final-deals", "4", "--eval-every", "100000", "--snapshot-every", "100000"]


def refused(main: Any, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one-line error of ``main(argv)`` (exit status 2)."""
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_trials_are_every_seed_of_every_grid_point() -> None:
    grid = [parse_grid("learning_rate=1e-3,3e-4"), parse_grid("net=256,128;64,64")]
    assert grid[1] == ("--net", ["256,128", "64,64"])
    trials = make_trials([0, 1], grid)
    assert [t.name for t in trials[:3]] == [
        "learning-rate=1e-3_net=256,128_seed=0",
        "learning-rate=1e-3_net=256,128_seed=1",
        "learning-rate=1e-3_net=64,64_seed=0",
    ]
    assert len(trials) == 8 and trials[-1] == Trial(
        "learning-rate=3e-4_net=64,64_seed=1", 1, {"learning-rate": "3e-4", "net": "64,64"}
    )
    assert make_trials([3], [])[0].config == "default"


BAD = [
    (["--grid", "colour=red,blue"], "--grid colour: not a flag of experiments.train with one value"),
    (["--grid", "seed=1,2"], "--grid seed: the sweep sets --seed itself"),
    (["--grid", "quiet=1,2"], "--grid quiet: the sweep sets --quiet itself"),
    (["--grid", "learning_rate"], "expected KEY=V1,V2"),
    (["--grid", "ent_coef=0.01,0.01"], "values must be non-empty and distinct"),
    (["--grid", "ent_coef=0.01,-1"], "experiments.train refuses"),
    (
        ["--seeds", "0,x"],
        "in 0..4294967295 (Stable-Baselines3 seeds from 32 bits), got 'x' (seeds are separated by commas)",
    ),
    (["--seeds", "1,1"], "a seed appears twice"),
    (["--workers", "2"], "--workers sets the CPUs of a local Ray (--backend ray)"),
    (["--ray-address", "10.0.0.1:6379"], "is for --backend ray, not local"),
    (["--", "--out", "elsewhere"], "--out after --: the sweep sets it itself"),
    (["--", "--learning-rate", "fast"], "experiments.train refuses"),
]


@pytest.mark.parametrize(("extra", "message"), BAD, ids=[m for _, m in BAD])
def test_bad_sweeps_are_refused_before_any_work(
    extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "never"
    cut = extra.index("--") if "--" in extra else len(extra)
    argv = ["castles", "--out", str(out), *extra[:cut], *extra[cut:]]
    assert message in refused(sweep.main, argv, capsys)
    assert not out.exists()


def test_unknown_game_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert "unknown game 'chess'" in refused(sweep.main, ["chess"], capsys)


def test_ray_address_without_the_ray_backend_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["castles", "--agents", "random", "greedy", "--ray-address", "10.0.0.1:6379", "--out", str(tmp_path / "e")]
    assert "is for --backend ray, not local" in refused(evaluate.main, argv, capsys)
    argv = ["castles", "--ray-address", "10.0.0.1:6379", "--out", str(tmp_path / "t")]
    assert "is for --backend ray, not local" in refused(train.main, argv, capsys)
    assert not (tmp_path / "e").exists() and not (tmp_path / "t").exists()


@pytest.mark.slow
def test_a_failed_trial_is_reported_and_a_rerun_finishes_only_what_is_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = train.main
    calls: list[list[str]] = []
    crashed: list[bool] = []

    def crashing(argv: list[str]) -> int:  # seed 1 trains, then its process "dies" before the sweep hears back
        calls.append(argv)
        code = real(argv)
        if argv[argv.index("--seed") + 1] == "1" and not crashed:
            crashed.append(True)
            raise RuntimeError("lost power")
        return code

    monkeypatch.setattr(train, "main", crashing)
    out = tmp_path / "sweep"
    argv = ["castles", "--seeds", "0,1", "--timesteps", "512", "--out", str(out), "--quiet", "--", *SMALL]
    assert sweep.main(argv) == 1
    data = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    failed = data["trials"][1]
    assert [t["status"] for t in data["trials"]] == ["done", "failed"]
    assert failed["error"] == "RuntimeError: lost power" and failed["vs"] == {}
    assert "lost power" in (out / "seed=1" / "train.log").read_text(encoding="utf-8")  # the traceback is kept
    md = (out / "sweep.md").read_text(encoding="utf-8")
    assert "| seed=1 | failed: RuntimeError: lost power | — | — |" in md and "| default | 1 / 2 |" in md
    assert "trial seed=1 failed: RuntimeError: lost power" in capsys.readouterr().err

    calls.clear()
    assert sweep.main(argv) == 0
    assert len(calls) == 1 and "--resume" in calls[0]  # seed 0 skipped; seed 1 continued from its run folder
    data = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    assert [t["status"] for t in data["trials"]] == ["done", "done"]
    assert json.loads((out / "seed=1" / "trial.json").read_text(encoding="utf-8"))["resumed"] is True
    assert "| default | 2 / 2 |" in (out / "sweep.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_trial_on_a_node_that_cannot_see_out_sends_its_run_folder_back(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    out.mkdir()
    (out / sweep.TOKEN).write_text("the head's token", encoding="utf-8")
    trial = Trial("seed=0", 0, {})
    common = ["--timesteps", "512", *SMALL]
    job = {"game": "castles", "trial": trial.__dict__, "common": common, "backend": {"name": "local"}}
    job.update(out=str(out), token="another machine's view")  # this worker's OUT is not the head's
    result = sweep.run_trial(job)
    assert result["status"] == "done", result["error"]
    assert not (out / "seed=0").exists() and result["folder_zip"]
    sweep.finish(out, job, result)
    assert sweep.is_finished(out / "seed=0")
    assert (out / "seed=0" / "final.zip").is_file() and (out / "seed=0" / "train.log").is_file()
