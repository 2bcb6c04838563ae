"""Durable runs: a checkpoint cut short costs one interval, statistics survive resumes, tables never lie.

The kills are simulated at the exact points that matter: a ``latest.zip`` left at 0 bytes (what a kill
during ``model.save`` used to leave) and a kill between the renames of a new checkpoint.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sb3_contrib")

from experiments import evaluate, report, train
from experiments.tournament import AgentSpec

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


def test_progress_csv_is_appended_to_and_a_row_cut_short_is_dropped(tmp_path: Path) -> None:
    from experiments.checkpoints import RunFolder

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
