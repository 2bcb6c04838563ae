"""The imitation diagnostic: greedy's games, a cloned policy that loads as ppo, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

import agents
from experiments.studies import imitate


@pytest.mark.slow
def test_tiny_imitation_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    argv = ["castles", "--games", "30", "--epochs", "2", "--deals", "2", "--workers", "1", "--net", "32,32"]
    assert imitate.main([*argv, "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "chance agreement" in printed and "epoch 2: loss" in printed and "## castles: greedy's clone" in printed
    clone = agents.make("ppo", "castles", path=str(out / "imitation.zip"))
    assert clone.prior is None and (out / "tournament" / "table.csv").is_file()
    # two epochs on 30 games already copy greedy better than chance (castles' greedy is a simple rule)
    line = next(x for x in printed.splitlines() if x.startswith("epoch 2:"))
    held_out = float(line.split("/ ")[1].split("%")[0])
    chance = float(printed.split("chance agreement ")[1].split("%")[0])
    assert held_out > chance + 20


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nope"], "unknown game 'nope'"),
        (["grid", "--games", "0"], "--games: must be at least 1"),
        (["castles", "--net", "x"], "--net takes comma-separated"),
        (["walls", "--option", "num_players=9"], "num_players"),
    ],
)
def test_imitate_bad_input(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        imitate.main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err
