"""Rankings a cycle cannot fool: Nash averaging and α-Rank on matrices whose answers are known."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.play.population import alpha_rank, nash_average, nash_support

RPS = np.array([[0.5, 1.0, 0.0], [0.0, 0.5, 1.0], [1.0, 0.0, 0.5]])
CHAIN = np.array([[0.5, 0.7, 0.9], [0.3, 0.5, 0.8], [0.1, 0.2, 0.5]])  # a beats b beats c, a beats c


def test_a_cycle_is_a_uniform_equilibrium_with_equal_skills_and_equal_alpha_rank_mass() -> None:
    weights, skill = nash_average(["r", "p", "s"], RPS)
    assert list(weights.values()) == pytest.approx([1 / 3] * 3, abs=1e-6)
    assert list(skill.values()) == pytest.approx([0.0] * 3, abs=1e-6)
    assert sorted(nash_support(weights)) == ["p", "r", "s"]
    assert list(alpha_rank(["r", "p", "s"], RPS).values()) == pytest.approx([1 / 3] * 3, abs=1e-6)


def test_a_transitive_population_puts_everything_on_its_best_agent() -> None:
    weights, skill = nash_average(["a", "b", "c"], CHAIN)
    assert nash_support(weights) == ["a"]
    assert skill["a"] == pytest.approx(0.0, abs=1e-6)
    assert skill["b"] == pytest.approx(-0.2, abs=1e-6) and skill["c"] == pytest.approx(-0.4, abs=1e-6)
    ranks = alpha_rank(["a", "b", "c"], CHAIN)
    assert ranks["a"] > 0.99 and ranks["c"] < ranks["b"] + 1e-9


def test_alpha_rank_masses_are_never_negative_and_add_up_to_one() -> None:
    """Walls' board of 2026-12-06: OpenSpiel's stationary vector holds a -5.8e-94 there, printed as -0.000."""
    walls = np.array([[0.5, 0.312, 0.383, 0.365, 0.956], [0.266, 0.5, 0.32, 0.293, 0.973],
                      [0.247, 0.23, 0.5, 0.266, 0.949], [0.229, 0.201, 0.226, 0.5, 0.951],
                      [0.002, 0.0, 0.0, 0.004, 0.5]])  # fmt: skip
    ranks = alpha_rank(["dmc", "ppo", "greedy", "ismcts", "random"], walls)
    assert min(ranks.values()) >= 0.0 and sum(ranks.values()) == pytest.approx(1.0)
    assert ranks["dmc"] == pytest.approx(1.0)


def test_a_copy_of_an_agent_changes_no_skill_and_splits_its_weight() -> None:
    copy = np.array([[0.5, 1, 0, 0.5], [0, 0.5, 1, 0], [1, 0, 0.5, 1], [0.5, 1, 0, 0.5]])
    weights, skill = nash_average(["r", "p", "s", "r2"], copy)
    assert weights["r"] == pytest.approx(weights["r2"], abs=1e-4)
    assert weights["r"] + weights["r2"] == pytest.approx(1 / 3, abs=1e-4)
    assert list(skill.values()) == pytest.approx([0.0] * 4, abs=1e-6)


def test_bradley_terry_orders_a_cycle_where_nash_averaging_does_not() -> None:
    from experiments.play.tournament import Cell, bradley_terry

    # b beats a often, c beats b narrowly, a beats c narrowly: a cycle; Bradley–Terry still ranks them
    scores = np.array([[0.5, 0.2, 0.6], [0.8, 0.5, 0.45], [0.4, 0.55, 0.5]])
    labels = ["a", "b", "c"]
    cells = {
        (x, y): Cell(wins=int(1000 * scores[i, j]), losses=1000 - int(1000 * scores[i, j]))
        for i, x in enumerate(labels)
        for j, y in enumerate(labels)
        if i != j
    }
    ratings = bradley_terry(labels, cells, anchor=None)
    assert max(ratings, key=ratings.__getitem__) == "b"
    weights, _ = nash_average(labels, scores)
    assert len(nash_support(weights)) == 3  # the equilibrium mixes all three: none is simply best
