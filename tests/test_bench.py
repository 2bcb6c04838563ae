"""The benchmark CLI runs and writes its JSON (figures are printed, never asserted: no timed tests)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments import bench


def test_bench_runs_every_row_and_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench.json"
    assert bench.main(["castles", "grid", "--seconds", "0.3", "--repeats", "2", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    for g in ("castles", "grid"):
        for kind in ("rules", "AEC", "single-agent"):
            assert data["rows"][f"{g} {kind}"]["steps_per_s"] > 0
        assert data["memory"][g]["observation_bytes"] > 0
    printed = capsys.readouterr().out
    assert "steps/s" in printed and "memory" in printed


def test_bench_rejects_unknown_games(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        bench.main(["chess"])
    assert "unknown game" in capsys.readouterr().err
