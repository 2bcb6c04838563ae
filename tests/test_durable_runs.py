"""Durable runs: a checkpoint cut short costs one interval, statistics survive resumes, tables never lie.

The kills are simulated at the exact points that matter: a ``latest.zip`` left at 0 bytes (what a kill
during ``model.save`` used to leave), a kill between the renames of a new checkpoint, and a kill before
the first checkpoint; and a real ``kill -9`` of a training process, whose shard workers must end with it.
Resuming refuses a checkpoint of another game or other options, and a run folder moved whole resumes.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

import pytest

from experiments import evaluate, train
from experiments.play import report
from experiments.play.tournament import AgentSpec
from experiments.training.run_folder import MissingSnapshotError, RunFolder, RunMismatchError
from tests.helpers import alive, descendants, ends_within

ROOT = Path(__file__).resolve().parent.parent

TINY = ["--n-envs", "2", "--n-steps", "512", "--snapshot-every", "512", "--eval-every", "512", "--eval-deals", "1"]
TINY += ["--checkpoint-every", "256", "--final-deals", "1", "--workers", "1", "--net", "16,16", "--quiet"]


def progress_steps(run: Path) -> list[int]:
    with (run / "logs" / "progress.csv").open(encoding="utf-8") as f:
        return [int(r["time/total_timesteps"]) for r in csv.DictReader(f)]


@pytest.mark.slow
def test_a_torn_checkpoint_and_a_kill_mid_save_are_survived_and_every_statistics_row_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    ckpt = run / "checkpoints"
    assert train.main(["castles", "--out", str(run), "--timesteps", "1024", *TINY]) == 0
    assert (ckpt / "latest.zip").is_file() and (ckpt / "previous.zip").is_file()
    first = progress_steps(run)
    assert first == [1024]

    # 1. latest.zip left at 0 bytes: --resume takes previous.zip and says so
    (ckpt / "latest.zip").write_bytes(b"")
    capsys.readouterr()
    assert train.main(["castles", "--resume", str(run), "--timesteps", "2048", "--quiet", "--final-deals", "1"]) == 0
    out = capsys.readouterr().out
    assert "--resume: skipped" in out and "latest.zip" in out and "resuming from previous.zip (1024 steps)" in out
    assert json.loads((ckpt / "state.json").read_text())["num_timesteps"] >= 2048

    # 2. killed between the renames of a new checkpoint (latest.zip already moved aside, the new one not yet in place)
    real_replace = os.replace

    def killed(src: Any, dst: Any) -> None:
        if Path(src).name == "next.zip":
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", killed)
    assert train.main(["castles", "--resume", str(run), "--timesteps", "4096", "--quiet", "--final-deals", "1"]) == 130
    monkeypatch.undo()
    assert not (ckpt / "latest.zip").exists() and (ckpt / "next.zip").is_file()

    # 3. the next --resume takes the complete new checkpoint and finishes; every session's rows are there
    assert train.main(["castles", "--resume", str(run), "--timesteps", "4096", "--quiet", "--final-deals", "1"]) == 0
    steps = progress_steps(run)
    assert steps[: len(first)] == first, "the first session's rows are kept"
    assert len(steps) >= 4 and max(steps) >= 4096
    summary = json.loads((run / "training.json").read_text())
    assert summary["steps"] >= 4096 and len(summary["sessions"]) >= 3
    assert summary["sessions"][0]["from_steps"] == 0 and summary["sessions"][0]["steps"] >= 1024
    assert summary["seconds_all_sessions"] >= summary["seconds_this_session"] > 0


# ------------------------------------------------------------------------------- kills, moves, mismatches
# 3 rollouts of 128 steps; snapshots at 128 and 256, checkpoints at 256 and at the end
SMALL = ["--timesteps", "384", "--n-envs", "2", "--n-steps", "64", "--snapshot-every", "128", "--eval-every", "10000"]
SMALL += ["--checkpoint-every", "256", "--final-deals", "1", "--workers", "1", "--shards", "1", "--net", "16,16"]
SMALL += ["--quiet"]


class Killed(BaseException):
    """A kill: nothing of the training process runs after it (no Ctrl-C checkpoint, no clean-up)."""


def killed_before_its_first_checkpoint(run: Path, monkeypatch: pytest.MonkeyPatch, *argv: str) -> None:
    """Train castles in ``run`` until its first checkpoint is due, and die there."""

    def kill(self: RunFolder, model: Any, steps: int) -> None:
        raise Killed

    with monkeypatch.context() as patch:
        patch.setattr(RunFolder, "save_checkpoint", kill)
        with pytest.raises(Killed):
            train.main(["castles", *argv, *SMALL])
    assert (run / "config.json").is_file() and not RunFolder.has_checkpoint(run)
    assert progress_steps(run) == [128] and len(list((run / "snapshots").glob("*.zip"))) == 2, "what it left"


@pytest.mark.slow
def test_a_run_killed_before_its_first_checkpoint_restarts_with_the_same_command_or_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    killed_before_its_first_checkpoint(run, monkeypatch, "--out", str(run))
    capsys.readouterr()
    with pytest.raises(SystemExit):  # another command into that folder: refused, naming what differs
        train.main(["castles", "--out", str(run), *SMALL, "--timesteps", "512"])
    err = capsys.readouterr().err
    assert "holds a run stopped before its first checkpoint, with other settings (timesteps 384 there, 512 here)" in err
    assert train.main(["castles", "--out", str(run), *SMALL]) == 0  # the same command: starts afresh
    assert "holds a run stopped before its first checkpoint: starting it afresh" in capsys.readouterr().out
    assert progress_steps(run) == [128, 256, 384], "the killed session's rows are gone"
    assert len(json.loads((run / "training.json").read_text())["sessions"]) == 1

    other = tmp_path / "other"
    killed_before_its_first_checkpoint(other, monkeypatch, "--out", str(other))
    assert train.main(["castles", "--resume", str(other), "--quiet"]) == 0
    assert "holds a run stopped before its first checkpoint: starting it afresh" in capsys.readouterr().out
    assert progress_steps(other) == [128, 256, 384]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small castles run, trained to its end (snapshots at 128, 256 and 384 steps)."""
    run = tmp_path_factory.mktemp("finished") / "run"
    assert train.main(["castles", "--out", str(run), *SMALL]) == 0
    return run


def copy_of(run: Path, where: Path) -> Path:
    import shutil

    return Path(shutil.copytree(run, where))


@pytest.mark.slow
def test_snapshots_are_listed_relative_to_the_run_folder_which_resumes_when_moved(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = [f"snapshots/step_{k}.zip" for k in (128, 256, 384)]
    assert json.loads((finished_run / "checkpoints" / "state.json").read_text())["snapshots"] == listed
    moved = copy_of(finished_run, tmp_path / "elsewhere" / "run")
    for old in (finished_run / "snapshots").glob("*.zip"):  # the old place holds none of them: they load from here
        old.rename(old.with_suffix(".gone"))
    try:
        assert train.main(["castles", "--resume", str(moved), "--timesteps", "512", "--quiet"]) == 0
    finally:
        for old in (finished_run / "snapshots").glob("*.gone"):
            old.rename(old.with_suffix(".zip"))
    state = json.loads((moved / "checkpoints" / "state.json").read_text())
    assert state["num_timesteps"] == 512 and state["snapshots"] == [*listed, "snapshots/step_512.zip"]
    (moved / "snapshots" / "step_256.zip").unlink()
    capsys.readouterr()
    with pytest.raises(SystemExit):
        train.main(["castles", "--resume", str(moved), "--timesteps", "1024", "--quiet"])
    err = capsys.readouterr().err
    assert "the snapshot 'snapshots/step_256.zip' that the checkpoint's opponent pool lists is missing" in err


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--option", "ranks=13"], "--option ranks=13 differs from the run's config.json"),
        (["--timesteps", "256"], "--timesteps 256 is below the run's 384"),
        (["--learning-rate", "0.123"], "--learning-rate 0.123 differs from the run's config.json ("),
        (["--net", "32,32"], "--net '32,32' differs from the run's config.json ('16,16')"),
    ],
)
def test_resume_refuses_a_flag_that_differs_from_the_runs_config_naming_it(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], named: str
) -> None:
    run = copy_of(finished_run, tmp_path / "run")
    before = (run / "config.json").read_text()
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        train.main(["castles", "--resume", str(run), *flags, "--quiet"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert named in err and len(err.strip().splitlines()) == 1, err
    assert (run / "config.json").read_text() == before, "the run's config is untouched"
    assert json.loads((run / "checkpoints" / "state.json").read_text())["num_timesteps"] == 384, "nothing trained"


def test_resume_takes_flags_equal_to_the_runs_config(finished_run: Path, tmp_path: Path) -> None:
    """Flags that repeat the run's own values (or an option at its default) are not differences."""
    run = copy_of(finished_run, tmp_path / "run")
    args = train.build_parser().parse_args(
        ["castles", "--resume", str(run), "--net", "16,16", "--option", "ranks=10", "--timesteps", "384"]
    )
    assert train.config_from_args(args, "castles").timesteps == 384


@pytest.mark.slow
def test_resume_refuses_a_checkpoint_of_other_options_naming_both(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = copy_of(finished_run, tmp_path / "run")
    config = json.loads((run / "config.json").read_text())
    (run / "config.json").write_text(json.dumps({**config, "options": {"reversed_order": True}}))
    capsys.readouterr()
    with pytest.raises(SystemExit):
        train.main(["castles", "--resume", str(run), "--timesteps", "1024", "--quiet"])
    err = " ".join(capsys.readouterr().err.split())
    assert "checkpoints/latest.zip was trained on 'castles' with options {" in err
    assert "'reversed_order': False" in err and "config.json says 'castles' with options {" in err
    assert "'reversed_order': True" in err
    assert json.loads((run / "checkpoints" / "state.json").read_text())["num_timesteps"] == 384, "nothing trained"


def test_a_checkpoint_of_another_game_is_refused_by_the_run_folder(tmp_path: Path) -> None:
    from agents.checkpoint import save_checkpoint
    from tests.test_checkpoint_safety import tiny_model

    run = RunFolder(tmp_path / "run")
    save_checkpoint(tiny_model("walls", num_players=3), run.latest)
    with pytest.raises(RunMismatchError, match=r"latest.zip was trained on 'walls' with options \{'num_players': 3"):
        run.restore("castles", {})
    with pytest.raises(RunMismatchError, match=r"config.json says 'walls' with options \{'num_players': 4"):
        run.restore("walls", {"num_players": 4})


def test_snapshots_listed_by_older_runs_resolve_and_a_missing_one_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Absolute paths and paths relative to the working directory (as runs before issue 35 wrote them)."""
    monkeypatch.chdir(tmp_path)
    folder = Path("runs") / "old"
    run = RunFolder(folder)
    for name in ("step_1.zip", "step_2.zip", "step_3.zip"):
        (run.snap_dir / name).write_bytes(b"")
    absolute, from_cwd = str((run.snap_dir / "step_1.zip").resolve()), "runs/old/snapshots/step_2.zip"
    moved = "/no/longer/here/snapshots/step_3.zip"  # the folder moved since: found in its own snapshots/
    state = {"num_timesteps": 3, "snapshots": [absolute, from_cwd, moved], "evals": []}
    assert run._restore_state(state) == 3
    assert run.snapshots == ["snapshots/step_1.zip", "snapshots/step_2.zip", "snapshots/step_3.zip"]
    assert run.snapshot_paths() == [str(folder / "snapshots" / f"step_{k}.zip") for k in (1, 2, 3)]
    (run.snap_dir / "step_2.zip").unlink()
    with pytest.raises(MissingSnapshotError, match=r"snapshot 'runs/old/snapshots/step_2\.zip' that the"):
        run._restore_state(state)


@pytest.mark.slow
def test_kill_9_of_a_training_process_leaves_no_shard_worker(tmp_path: Path) -> None:
    """A real training process on two shards, killed with SIGKILL once it trains: every process it started ends.

    Its shard workers, and with the default start method the fork server and the resource tracker too.
    """
    import os
    import signal
    import subprocess
    import sys
    import time

    run = tmp_path / "run"
    argv = ["castles", "--timesteps", "100000000", "--n-envs", "4", "--n-steps", "64", "--shards", "2", "--quiet"]
    argv += ["--checkpoint-every", "100000000", "--net", "16,16", "--out", str(run)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "experiments.train", *argv], cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 300  # imports and the first rollouts, on a loaded machine
        while not (run / "logs" / "progress.csv").is_file() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)  # a rollout done: the workers are at work
        started = [p for p in descendants(proc.pid) if alive(p)]
        assert len(started) >= 2, "the training process started no shard workers"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert all(ends_within(p, 10) for p in started), "a process outlived its killed training process"


def test_progress_csv_is_appended_to_and_a_row_cut_short_is_dropped(tmp_path: Path) -> None:
    from experiments.training.run_folder import RunFolder

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "progress.csv").write_text("a,b\n1,2\n3,4\n5,", encoding="utf-8")
    logger = RunFolder(tmp_path).logger(4)
    logger.record("a", 7)
    logger.record("c", 9)
    logger.dump(step=0)
    logger.close()
    assert (logs / "progress.csv").read_text(encoding="utf-8").splitlines() == ["a,b,c", "1,2,", "3,4,", "7,,9"]


# ------------------------------------------------------------------------------------------------ evaluate
def _evaluate(out: Path) -> dict[str, Any]:
    specs = [AgentSpec("random", "random"), AgentSpec("greedy", "greedy")]
    return evaluate.evaluate("castles", specs, 2, out=str(out), plot=False, quiet=True)


@pytest.mark.parametrize("killed_at", ["results.json", "table.csv", "table.md"])
def test_a_killed_evaluate_leaves_no_table_without_its_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, killed_at: str
) -> None:
    out = tmp_path / "e"
    _evaluate(out)  # an earlier complete run in the same folder
    real = report.write_file

    def write(path: Path, text: str) -> None:
        if path.name == killed_at:
            path.with_name(path.name + ".tmp").write_text(text[: len(text) // 2])  # cut short, then killed
            raise KeyboardInterrupt
        real(path, text)

    monkeypatch.setattr(report, "write_file", write)
    with pytest.raises(KeyboardInterrupt):
        _evaluate(out)
    present = {p.name for p in out.iterdir() if not p.name.endswith(".tmp")}
    order = list(report.OUTPUTS)
    assert present == set(order[: order.index(killed_at)]), "stale outputs removed; only complete files stand"
    if "results.json" in present:
        results = json.loads((out / "results.json").read_text())
        assert len(results["games"]) == 4


def test_missing_matplotlib_skips_pictures_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    specs = [AgentSpec("random", "random"), AgentSpec("greedy", "greedy")]
    evaluate.evaluate("castles", specs, 1, out=str(tmp_path / "e"), plot=True, quiet=True)
    assert "no matplotlib: heatmap.png skipped; pip install -e '.[plot]'" in capsys.readouterr().out
    assert not (tmp_path / "e" / "heatmap.png").exists() and (tmp_path / "e" / "table.md").exists()
    (tmp_path / "training.json").write_text(json.dumps({"evals": [{"steps": 1, "vs_greedy": 0.5, "ci95": [0, 1]}]}))
    assert report.learning_curves(tmp_path) is None
    assert "learning_curves.png skipped" in capsys.readouterr().out
