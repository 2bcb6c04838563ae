"""``experiments.leaderboard``: the counts per deal, the bootstrap over deals, and the page it writes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from agents import ppo
from agents.pretrained import ZOO_ENV
from experiments import leaderboard, zoo
from experiments.play.backends import Backend, ray_session
from experiments.play.tournament import AgentSpec, GameRecord, bradley_terry, run_games, tabulate
from tests.zoo_helpers import ppo_run

LABELS = ["random", "greedy", "ismcts"]


@pytest.fixture(scope="module")
def records() -> list[GameRecord]:
    specs = [AgentSpec(a, a, {"simulations": 4} if a == "ismcts" else {}) for a in LABELS]
    return run_games("castles", specs, 6, seed=3)


def test_counts_per_deal_add_up_to_the_table_and_a_resample_is_the_table_of_the_deals_drawn(
    records: list[GameRecord],
) -> None:
    counts, deals = leaderboard.deal_counts(records, LABELS)
    assert deals == list(range(6)) and counts.shape == (6, 3, 3, 3)
    assert leaderboard.cells_of(counts.sum(axis=0), LABELS) == tabulate(records, LABELS)
    weights = np.array([2, 0, 1, 0, 3, 0])  # deal 0 twice, deal 2 once, deal 4 three times
    drawn = [r for r in records for _ in range(weights[r.deal])]
    assert leaderboard.cells_of(np.tensordot(weights, counts, axes=1), LABELS) == tabulate(drawn, LABELS)


def test_bootstrap_intervals_hold_the_fit_and_pin_the_anchor(records: list[GameRecord]) -> None:
    counts, _ = leaderboard.deal_counts(records, LABELS)
    point = bradley_terry(LABELS, leaderboard.cells_of(counts.sum(axis=0), LABELS))
    intervals = leaderboard.bootstrap_intervals(counts, LABELS, 200, seed=0)
    assert intervals["random"] == pytest.approx((1000.0, 1000.0))
    for a in ("greedy", "ismcts"):
        lo, hi = intervals[a]
        assert lo < point[a] < hi and hi - lo > 20  # six deals: wide, never a point
    assert leaderboard.bootstrap_intervals(counts, LABELS, 200, seed=0) == intervals  # seeded


def test_the_command_writes_the_page_and_heatmap_with_every_agent_ranked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "zoo"
    folder.mkdir()
    monkeypatch.setenv(ZOO_ENV, str(folder))
    monkeypatch.setattr(ppo, "_loaded", {})
    assert zoo.main(["add", str(ppo_run(tmp_path / "run")), "--zoo", str(folder)]) == 0
    out = tmp_path / "docs" / "leaderboard.md"
    argv = ["--games", "castles", "--deals", "3", "--simulations", "4", "--bootstrap", "50", "--workers", "1"]
    assert leaderboard.main([*argv, "--quiet", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    text = out.read_text()
    assert (tmp_path / "docs" / "images" / "leaderboard-castles.png").stat().st_size > 5000
    assert text.startswith("# Leaderboard\n") and "## castles" in text and "(random = 1000)" in text
    assert (
        "3 seat-swapped deals per pair (36 games)" in text
        and "ismcts, exit-search and dmc-search: 4 simulations" in text
    )
    assert "castles-ppo.zip" in text and "bootstrap resamples of the deals" in text
    rows = re.findall(r"^\| (\d) \| \*\*([a-z-]+)\*\* \| (\d+) \[(\d+), (\d+)\] \|", text, re.M)
    assert [int(r[0]) for r in rows] == [1, 2, 3, 4] and {r[1] for r in rows} == {"random", "greedy", "ismcts", "ppo"}
    ratings = [int(r[2]) for r in rows]
    assert ratings == sorted(ratings, reverse=True) and all(int(lo) <= int(hi) for *_, lo, hi in rows)
    assert "README summary" in printed and "- **castles**: " in printed
    assert "`python -m experiments.leaderboard --games castles --deals 3" in text  # how it was made, per game
    # another game joins the page; the first one's board is kept (docs/leaderboard.json)
    assert leaderboard.main(["--games", "grid", *argv[2:], "--quiet", "--out", str(out)]) == 0
    both = out.read_text()
    assert both.index("## grid") < both.index("## castles") and text[text.index("| 1 |") :][:300] in both
    assert "- **grid**: " in both and "- **castles**: " in both and (tmp_path / "docs" / "leaderboard.json").is_file()


def test_quick_says_what_it_cut_and_stays_out_of_the_docs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ZOO_ENV, str(tmp_path))  # nothing shipped: the baselines and ismcts
    monkeypatch.chdir(tmp_path)
    assert leaderboard.main(["--quick", "--games", "grid", "--bootstrap", "20", "--workers", "1", "--quiet"]) == 0
    text = (tmp_path / leaderboard.QUICK_OUT).read_text()
    assert text.startswith("# Leaderboard (quick check: not a measurement)")
    assert "grid: 6 deals per pair, ismcts, exit-search and dmc-search at 20 simulations per move" in text
    assert "a check, not the leaderboard" in capsys.readouterr().out and not (tmp_path / "docs").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--games", "chess"], "unknown game(s) chess"),
        (["--deals", "0"], "--deals: must be at least 1"),
        (["--deals", "=4"], "write N or GAME=N"),
        (["--games", "grid", "--deals", "walls=4"], "--deals names walls, not among the games played (grid)"),
        (["--deals", "3", "4"], "one N for every game"),
        (["--deals", "grid=3", "grid=4"], "--deals names grid twice"),
    ],
)
def test_bad_input_is_named(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        leaderboard.main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_out_must_be_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        leaderboard.main(["--games", "grid", "--out", str(tmp_path)])
    assert "is a folder" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.ray
def test_ray_and_local_make_the_same_leaderboard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped network travels to the Ray workers as bytes; the games, cells and ratings are the local ones."""
    try:
        import ray  # noqa: F401
    except ImportError:
        pytest.fail("the ray tests need the ray extra: pip install -e '.[ray]' (or deselect: pytest -m 'not ray')")
    folder = tmp_path / "zoo"
    folder.mkdir()
    monkeypatch.setenv(ZOO_ENV, str(folder))
    monkeypatch.setattr(ppo, "_loaded", {})
    assert zoo.main(["add", str(ppo_run(tmp_path / "run")), "--zoo", str(folder)]) == 0
    argv = ["--games", "castles", "--deals", "3", "--simulations", "4", "--bootstrap", "30", "--quiet"]
    assert leaderboard.main([*argv, "--workers", "1", "--out", str(tmp_path / "local" / "lb.md")]) == 0
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with ray_session(Backend("ray"), 2):
        ray_argv = [*argv, "--workers", "2", "--backend", "ray", "--out", str(tmp_path / "ray" / "lb.md")]
        assert leaderboard.main(ray_argv) == 0

    def board(where: str) -> dict[str, object]:
        (data,) = json.loads((tmp_path / where / "lb.json").read_text())["games"]
        assert data["made"]["backend"] == where
        return {k: v for k, v in data.items() if k not in ("made", "seconds")}

    assert board("local") == board("ray") and board("local")["labels"]


def test_deals_per_game_takes_one_number_and_exceptions() -> None:
    games = ["grid", "walls", "castles"]
    assert leaderboard.deals_per_game([(None, 250), ("walls", 40)], games) == {"grid": 250, "walls": 40, "castles": 250}
    assert leaderboard.deals_per_game([("walls", 40)], games) == {"walls": 40}
    assert leaderboard.deals_per_game([], games) == {}


LOWEST = """
import numpy as np


class LowestCard:
    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])
"""


def test_a_newcomer_joins_a_board_playing_only_its_own_pairs_and_rates_as_a_full_board_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "zoo"
    folder.mkdir()
    monkeypatch.setenv(ZOO_ENV, str(folder))  # an empty zoo: random, greedy and ismcts
    mine = tmp_path / "mine.py"
    mine.write_text(LOWEST)
    board_page = tmp_path / "docs" / "leaderboard.md"
    base = ["--games", "castles", "--bootstrap", "50", "--workers", "1", "--quiet"]
    made = ["--deals", "4", "--simulations", "4"]
    assert leaderboard.main([*base, *made, "--out", str(board_page)]) == 0
    played: list[object] = []
    real = leaderboard.run_games

    def spy(*args: object, **kwargs: object) -> list[GameRecord]:
        played.append(kwargs.get("among"))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(leaderboard, "run_games", spy)
    out = tmp_path / "with" / "leaderboard.md"
    argv = [*base, "--board", str(board_page), "--out", str(out), "--with", f"lowest={mine}:LowestCard"]
    assert leaderboard.main(argv) == 0
    printed = capsys.readouterr().out
    assert played == [[3]]  # the newcomer's pairs only: no game of the board is played again
    assert re.search(r"lowest: rank \d of 4, rating \d+ \[\d+, \d+\]", printed) and "| **lowest** |" in printed
    joined = leaderboard.GameBoard.from_json(json.loads(out.with_suffix(".json").read_text())["games"][0])
    old = leaderboard.GameBoard.from_json(json.loads(board_page.with_suffix(".json").read_text())["games"][0])
    assert all(joined.cells[pair] == cell for pair, cell in old.cells.items())
    assert set(joined.population) == {"nash", "skill", "alpha_rank"} and set(joined.population["nash"]) == set(
        joined.labels
    )
    assert "Rankings a cycle cannot fool" in out.read_text() and "; Nash support: " in out.read_text()
    # the same board made whole, the newcomer among its agents from the start: the same cells, ratings, intervals
    monkeypatch.setattr(leaderboard, "run_games", real)
    agents_of = leaderboard.game_agents

    def with_lowest(game: str, simulations: int | None) -> tuple[list[AgentSpec], list[str]]:
        specs, notes = agents_of(game, simulations)
        return [*specs, AgentSpec("lowest", f"{mine}:LowestCard")], notes

    monkeypatch.setattr(leaderboard, "game_agents", with_lowest)
    whole = tmp_path / "whole" / "leaderboard.md"
    assert leaderboard.main([*base, *made, "--out", str(whole)]) == 0
    full = leaderboard.GameBoard.from_json(json.loads(whole.with_suffix(".json").read_text())["games"][0])
    assert full.cells == joined.cells and full.labels == joined.labels
    assert full.ratings == pytest.approx(joined.ratings) and full.intervals == joined.intervals


def test_a_newcomer_is_refused_by_a_board_that_cannot_hold_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "zoo"
    folder.mkdir()
    monkeypatch.setenv(ZOO_ENV, str(folder))
    mine = tmp_path / "mine.py"
    mine.write_text(LOWEST)
    board_page = tmp_path / "leaderboard.md"
    base = ["--games", "castles", "--bootstrap", "20", "--workers", "1", "--quiet"]
    assert leaderboard.main([*base, "--deals", "2", "--simulations", "2", "--out", str(board_page)]) == 0
    newcomer = ["--board", str(board_page), "--out", str(tmp_path / "w.md"), "--with", f"low={mine}:LowestCard"]
    store = board_page.with_suffix(".json")
    data = json.loads(store.read_text())

    def refused(extra: list[str], message: str) -> None:
        with pytest.raises(SystemExit) as info:
            leaderboard.main([*base, *newcomer, *extra])
        err = capsys.readouterr().err
        assert info.value.code == 2 and message in err and err.count("\n") == 1

    refused(["--quick"], "--with plays the board's own deals and budget")
    refused(["--board", str(tmp_path / "none.md")], "holds no board of castles")
    data["games"][0]["fingerprints"]["greedy"] = "0" * 64
    store.write_text(json.dumps(data))
    refused([], "the network of greedy changed since the castles board was made")
    del data["games"][0]["results"]
    store.write_text(json.dumps(data))
    refused([], "was written without its deal-by-deal results")


def test_the_best_response_column_shows_the_highest_lower_end_for_that_very_agent(
    records: list[GameRecord], tmp_path: Path
) -> None:
    specs = [AgentSpec(a, a) for a in LABELS]
    b = leaderboard.board("castles", specs, records, 6, 1.0, 20, 0, [])
    b.fingerprints["greedy"] = "abc"
    store = tmp_path / "exploitability.json"
    assert leaderboard.best_responses(b, store) is None and "best response" not in leaderboard.markdown_table(b)

    def entry(agent: str, lo: float, **more: object) -> dict[str, object]:
        base = {"game": "castles", "agent": agent, "estimator": "learned", "budget": 1_000_000, "seed": 0,
                "positions": 1_000_123, "score": lo + 0.02, "ci95": [lo, lo + 0.04], "fingerprint": ""}  # fmt: skip
        return {**base, **more}

    store.write_text(json.dumps({"entries": [
        entry("random", 0.9), entry("random", 0.95, estimator="search", budget=16),
        entry("greedy", 0.8, fingerprint="abc"), entry("greedy", 0.99, fingerprint="old"),
        entry("greedy", 0.9, game="grid", fingerprint="abc"),
    ]}))  # fmt: skip
    shown = leaderboard.best_responses(b, store)
    assert shown == {"random": "97.0% [95.0, 99.0] (search, 16 redeals)",
                     "greedy": "82.0% [80.0, 84.0] (learned, 10^6 positions)"}  # fmt: skip
    start = entry("greedy", 0.85, fingerprint="abc", estimator="start", budget=0, positions=0, init="zoo (x.zip)")
    store.write_text(json.dumps({"entries": [entry("greedy", 0.8, fingerprint="abc"), start]}))
    assert leaderboard.best_responses(b, store) == {"greedy": "87.0% [85.0, 89.0] (its start, zoo (x.zip), untrained)"}
    table = leaderboard.markdown_table(b, shown)
    assert "best response to it |" in table and "| not measured |" in table  # ismcts: none recorded
    assert "exploitability.md" in leaderboard.page([b], store)
