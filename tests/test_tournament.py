"""The tournament: statistics, fairness, reproducibility, outputs and the evaluate CLI."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

import jericho_env
from experiments import evaluate as evaluate_cli
from experiments.play.tournament import (
    AgentSpec,
    Cell,
    GameRecord,
    bradley_terry,
    make_tasks,
    run_games,
    tabulate,
    wilson_interval,
)


def test_wilson_interval_known_values() -> None:
    # reference values of the Wilson score interval at 95%
    lo, hi = wilson_interval(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson_interval(95, 100)
    assert lo == pytest.approx(0.8882, abs=1e-4) and hi == pytest.approx(0.9785, abs=1e-4)


def test_bradley_terry_recovers_a_known_strength_gap() -> None:
    # A beats B three times as often: the Elo gap is 400*log10(3) ~ 190.8
    cells = {("A", "B"): Cell(wins=7500, losses=2500), ("B", "A"): Cell(wins=2500, losses=7500)}
    r = bradley_terry(["A", "B"], cells, anchor="B")
    assert r["B"] == pytest.approx(1000.0)
    assert r["A"] - r["B"] == pytest.approx(400 * math.log10(3), abs=1.0)


def test_bradley_terry_is_finite_when_one_agent_wins_everything() -> None:
    cells = {("A", "B"): Cell(wins=50), ("B", "A"): Cell(losses=50)}
    r = bradley_terry(["A", "B"], cells)
    assert all(math.isfinite(v) for v in r.values()) and r["A"] > r["B"]


def test_tabulate_counts_both_seats_of_a_two_player_game() -> None:
    recs = [
        GameRecord("a", "b", 0, 0, 1, ("a", "b"), (1.0, -1.0), 10),
        GameRecord("a", "b", 0, 1, 1, ("b", "a"), (0.0, 0.0), 10),
    ]
    cells = tabulate(recs, ["a", "b"])
    assert (cells[("a", "b")].wins, cells[("a", "b")].draws, cells[("a", "b")].losses) == (1, 1, 0)
    assert (cells[("b", "a")].wins, cells[("b", "a")].draws, cells[("b", "a")].losses) == (0, 1, 1)


def test_tasks_pair_every_agent_and_rotate_seats() -> None:
    assert len(make_tasks(3, 2, 5)) == 3 * 5  # unordered pairs in 2-player games
    assert len(make_tasks(3, 4, 5)) == 6 * 5  # ordered pairs (A alone vs B's) in n-player games


def test_seat_swapped_games_share_the_deal() -> None:
    specs = [AgentSpec("r1", "random"), AgentSpec("r2", "random")]
    recs = run_games("toy", specs, deals=4, seed=3)
    assert len(recs) == 8
    for k in range(0, 8, 2):
        assert recs[k].env_seed == recs[k + 1].env_seed and recs[k].seats == tuple(reversed(recs[k + 1].seats))
    assert len({r.env_seed for r in recs}) == 4


def test_results_identical_for_one_and_two_workers_and_reproducible() -> None:
    specs = [AgentSpec("r1", "random"), AgentSpec("r2", "random"), AgentSpec("r3", "random")]
    one = run_games("toy", specs, deals=40, seed=7, workers=1)
    two = run_games("toy", specs, deals=40, seed=7, workers=2)
    again = run_games("toy", specs, deals=40, seed=7, workers=1)
    other = run_games("toy", specs, deals=40, seed=8, workers=1)
    assert one == two == again
    assert one != other


@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_evaluate_cli_end_to_end(game: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    rc = evaluate_cli.main([game, "--agents", "random", "greedy", "--deals", "3", "--out", str(out), "--quiet"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "Bradley–Terry" in printed and str(out) in printed
    rows = list(csv.DictReader((out / "table.csv").open()))
    assert {(r["agent"], r["opponent"]) for r in rows} == {("random", "greedy"), ("greedy", "random")}
    results = json.loads((out / "results.json").read_text())
    n = jericho_env.make_rules(game).info.num_players
    pairs = 1 if n == 2 else 2
    assert len(results["games"]) == 3 * n * pairs
    assert all(len(g["returns"]) == n for g in results["games"])
    assert (out / "table.md").read_text().startswith(f"# {game}")
    assert (out / "heatmap.png").stat().st_size > 5000


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["grid", "--agents", "random", "nosuch"], "unknown agent 'nosuch'"),
        (["grid", "--agents", "random", "greedy", "--deals", "0"], "--deals: must be at least 1"),
        (["nope", "--agents", "random", "greedy"], "unknown game id 'nope'"),
        (["grid", "--agents", "random"], "at least two agents"),
        (["grid", "--agents", "random", "ppo"], "ppo needs a checkpoint: none is shipped for grid"),  # empty zoo
        (["grid", "--agents", "random", "ppo=/no/such/model.zip"], "no checkpoint"),
        (["walls", "--agents", "random", "greedy", "--option", "num_players=6"], "num_players"),
    ],
)
def test_evaluate_cli_bad_input(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JERICHO_ENV_ZOO", str(tmp_path))  # no agent shipped (agents.pretrained)
    with pytest.raises(SystemExit) as e:
        evaluate_cli.main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err
