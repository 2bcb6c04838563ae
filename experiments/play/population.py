"""Rankings of a population of agents that a cycle cannot fool: Nash averaging and α-Rank.

Bradley–Terry fits one strength per agent, so an intransitive population (A beats B beats C beats A) gets
an order none of its games supports; these two read the whole score matrix instead:

* **Nash averaging** (Balduzzi et al., 2018), two-player zero-sum games: the maximum-entropy Nash equilibrium
  ``p`` of ``A[i, j] = score(i vs j) - 1/2`` (SciPy), and each agent's skill ``(A p)_i`` against that mixture.
* **α-Rank** (Omidshafiei et al., 2019; OpenSpiel's ``alpharank``): the stationary mass of an evolutionary
  process in which agents invade each other's populations. In games of more than two players ``M[i, j]`` is
  agent i's win share alone against copies of j, read as a symmetric two-player meta-game.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

SUPPORT = 1e-3  # an agent's equilibrium weight below this is outside the Nash support
ALPHA = 100.0  # α-Rank's selection intensity (its paper's default; payoffs are win shares in 0..1)
POPULATION = 50  # α-Rank's population size m


def score_matrix(labels: Sequence[str], cells: Mapping[tuple[str, str], Any]) -> np.ndarray:
    """``M[i, j]``: the row agent's score per game against the column agent (``win_rate``), 1/2 on the diagonal."""
    k = len(labels)
    m = np.full((k, k), 0.5)
    for i, a in enumerate(labels):
        for j, b in enumerate(labels):
            if i != j:
                m[i, j] = float(cells[(a, b)].win_rate)
    return m


def nash_average(labels: Sequence[str], scores: np.ndarray) -> tuple[dict[str, float], dict[str, float]]:
    """(equilibrium weight, Nash-averaged skill) per agent of a two-player score matrix, made antisymmetric first."""
    from scipy.optimize import linprog, minimize

    s = np.asarray(scores, dtype=np.float64)
    a = (s - s.T) / 2.0
    k = len(labels)
    # value of the symmetric zero-sum game (0 in theory): max v s.t. (A^T p)_j >= v, p in the simplex
    res = linprog(
        c=np.r_[np.zeros(k), -1.0],
        A_ub=np.c_[-a.T, np.ones(k)],
        b_ub=np.zeros(k),
        A_eq=np.r_[np.ones(k), 0.0][None],
        b_eq=[1.0],
        bounds=[(0, None)] * k + [(None, None)],
        method="highs",
    )
    if not res.success:  # pragma: no cover - a bounded feasible LP always solves
        raise RuntimeError(f"the Nash equilibrium's linear program failed: {res.message}")
    start, value = res.x[:k], res.x[k]
    # the equilibria: p in the simplex with (A^T p)_j >= value; of those, the one of greatest entropy
    tol = 1e-9

    def neg_entropy(p: np.ndarray) -> float:
        q = np.clip(p, 1e-12, None)
        return float(np.sum(q * np.log(q)))

    best = minimize(
        neg_entropy,
        np.clip(start, 1e-6, None) / np.clip(start, 1e-6, None).sum(),
        method="SLSQP",
        bounds=[(0.0, 1.0)] * k,
        constraints=[
            {"type": "eq", "fun": lambda p: np.sum(p) - 1.0},
            {"type": "ineq", "fun": lambda p: a.T @ p - value + tol},
        ],
        options={"maxiter": 500, "ftol": 1e-12},
    )
    p = best.x if best.success and np.min(a.T @ best.x) >= value - 1e-6 else start
    p = np.clip(p, 0.0, None)
    p /= p.sum()
    skill = a @ p
    return {x: float(p[i]) for i, x in enumerate(labels)}, {x: float(skill[i]) for i, x in enumerate(labels)}


def nash_support(weights: Mapping[str, float]) -> list[str]:
    """The agents of the equilibrium's support (weight at least ``SUPPORT``), heaviest first."""
    return sorted((a for a, w in weights.items() if w >= SUPPORT), key=lambda a: -weights[a])


def alpha_rank(labels: Sequence[str], scores: np.ndarray, alpha: float = ALPHA) -> dict[str, float]:
    """α-Rank's stationary mass per agent of the symmetric meta-game ``scores`` (``ImportError`` without OpenSpiel)."""
    try:
        from open_spiel.python.egt import alpharank
    except ImportError as e:
        raise ImportError("α-Rank needs OpenSpiel: pip install -e '.[openspiel]'") from e
    table = np.asarray(scores, dtype=np.float64)
    with np.errstate(over="ignore"):  # exp of a large selection pressure overflows to inf: the limit it wants
        _, _, pi, _, _ = alpharank.compute([table], m=POPULATION, alpha=alpha)
    pi = np.clip(np.asarray(pi, dtype=np.float64).reshape(-1), 0.0, None)  # an eigenvector's -1e-17s are 0
    pi /= pi.sum()
    return {x: float(pi[i]) for i, x in enumerate(labels)}


__all__ = ["ALPHA", "POPULATION", "SUPPORT", "alpha_rank", "nash_average", "nash_support", "score_matrix"]
