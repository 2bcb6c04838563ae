"""The n-player head to head (``experiments.teams``): arrangements, scores, seeds, CLI."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from experiments import teams
from experiments.play.deals import AgentSpec


@pytest.mark.parametrize(("n", "count"), [(2, 2), (3, 3), (4, 6), (5, 10)])
def test_every_seat_is_a_s_equally_often(n: int, count: int) -> None:
    arrangements = teams.team_arrangements(n)
    assert len(arrangements) == count and len(set(arrangements)) == count
    assert all(len(a) == n // 2 for a in arrangements)
    seats = Counter(s for a in arrangements for s in a)
    assert set(seats) == set(range(n)) and len(set(seats.values())) == 1


def test_team_score_is_a_s_share_of_the_winners() -> None:
    assert teams.team_score([1.0, -1.0, -1.0, -1.0], (0, 2)) == 1.0
    assert teams.team_score([-1.0, 1.0, -1.0, -1.0], (0, 2)) == 0.0
    assert teams.team_score([0.5, 0.5, -1.0, -1.0], (0, 2)) == 0.5  # a win shared across the sides
    assert teams.team_score([0.5, -1.0, 0.5, -1.0], (0, 2)) == 1.0  # shared within A
    assert teams.team_score([0.0, 0.0, 0.0, 0.0], (1, 3)) == 0.5  # nobody wins


def test_an_agent_against_itself_scores_exactly_the_even_share() -> None:
    # seat s of a deal is seeded alike whichever side holds it, so arrangement k and its complement are
    # the same game with the sides swapped: their scores add up to 1 whatever the cards
    a, b = AgentSpec("random", "random"), AgentSpec("random#2", "random")
    result = teams.head_to_head("walls", a, b, deals=3, seed=4)
    assert result["games"] == 3 * 6 and result["score"] == 0.5 and result["even_share"] == 0.5


def test_the_same_games_for_any_number_of_workers() -> None:
    a, b = AgentSpec("greedy", "greedy"), AgentSpec("random", "random")
    one = teams.head_to_head("walls", a, b, deals=5, seed=1, workers=1)
    two = teams.head_to_head("walls", a, b, deals=5, seed=1, workers=2)
    assert one["scores"] == two["scores"] and len(one["scores"]) == 30
    assert one["score"] > 0.8  # greedy wins most four-player games against random
    r1, r2 = AgentSpec("random", "random"), AgentSpec("random#2", "random")
    runs = [(1, 2), (1, 1), (2, 1)]  # (seed, workers)
    seeds = [teams.head_to_head("walls", r1, r2, deals=5, seed=s, workers=w)["scores"] for s, w in runs]
    assert seeds[0] == seeds[1] != seeds[2]


def test_odd_players_and_two_players() -> None:
    a, b = AgentSpec("greedy", "greedy"), AgentSpec("random", "random")
    five = teams.head_to_head("walls", a, b, deals=1, options={"num_players": 5})
    assert five["games"] == 10 and five["seats_of_a"] == 2 and five["even_share"] == 0.4
    two = teams.head_to_head("castles", a, b, deals=2)
    assert two["games"] == 4 and two["even_share"] == 0.5


def test_cli_writes_the_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "h2h"
    assert teams.main(["walls", "greedy", "random", "--deals", "2", "--quiet", "--out", str(out)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("greedy (2 seats) against random (2 seats), walls:") and "even share 50%" in line
    data = json.loads((out / "teams.json").read_text())
    assert data["games"] == 12 and len(data["scores"]) == 12 and data["a"]["name"] == "greedy"
