"""The benchmark CLI runs and writes its JSON (figures are printed, never asserted: no timed tests)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from experiments import bench


def test_bench_runs_every_row_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pgx", None)  # Pgx absent, wherever the tests run: its line says why
    out = tmp_path / "bench.json"
    argv = ["castles", "grid", "--seconds", "0.3", "--repeats", "2", "--num-envs", "256", "--json", str(out)]
    assert bench.main(argv) == 0
    data = json.loads(out.read_text())
    for g in ("castles", "grid"):
        for kind in ("rules", "AEC", "single-agent"):
            assert data["rows"][f"{g} {kind}"]["steps_per_s"] > 0
        assert data["memory"][g]["observation_bytes"] > 0
    printed = capsys.readouterr().out
    assert "steps/s" in printed and "memory" in printed
    assert "batched random play (256 games in lockstep" in printed
    for g in ("castles", "grid"):
        entry = data["batched"][g]
        if bench.batched_skip_reason(g) is None:  # a game with kernels: its row, and its ratio to its AEC loop
            assert entry["num_envs"] == 256 and entry["steps_per_s"] > 0 and entry["games_per_s"] > 0
            aec = data["rows"][f"{g} AEC"]["steps_per_s"]
            assert entry["ratio_to_aec"] == pytest.approx(entry["steps_per_s"] / aec)
            assert f"{entry['ratio_to_aec']:.1f}x its AEC loop" in printed
        else:
            assert f"{g:<22} not timed: {entry['skipped']}" in printed
    assert "steps_per_s" in data["batched"]["castles"]  # castles has kernels
    assert "pip install pgx" in data["pgx"]["unavailable"]
    assert "pgx: not timed: Pgx is not installed here" in printed and "pip install pgx" in printed


def test_bench_says_why_a_game_has_no_batched_row(monkeypatch: pytest.MonkeyPatch) -> None:
    rules_class = type(bench.make_rules("castles"))
    monkeypatch.setattr(rules_class, "batched", None)
    assert "no compiled kernels" in str(bench.batched_skip_reason("castles"))
    monkeypatch.undo()
    assert bench.batched_skip_reason("castles") is None


def test_bench_rejects_unknown_games(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        bench.main(["chess"])
    assert "unknown game" in capsys.readouterr().err
