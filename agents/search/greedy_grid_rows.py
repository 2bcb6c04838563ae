"""grid ``greedy`` as a compiled row policy for search: its scores as a tree prior, its move in rollouts.

``row_policy(rules, game)`` returns an ``agents.search.compiled.RowPolicy`` whose two functions read one
observation row and the legal actions, as ``ismcts``'s Python search asks the greedy agent
(``agents.search.ismcts.ISMCTSAgent._greedy_prior`` and ``_greedy_rollout``):

* ``prior``: ``GreedyAgent.scores`` (``exp(score - best)`` for the actions greedy weighs, a pass weighed when
  the points differ; rounded to float32 as ``scores`` returns them);
* ``rollout``: ``GreedyAgent.act`` (the best score, ties within 1e-9 drawn at random, here from the search's
  stream rather than the agent's generator).

Both call ``agents.greedy.grid_kernel.values``, the compiled scoring the agent itself uses, with the tables
of a ``GreedyAgent`` for the rules' board (``greedy_grid_kernel.Tables``) copied into one params record.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.greedy import grid_kernel as greedy_grid_kernel
from agents.greedy.grid_kernel import values
from agents.search.compiled import RowPolicy, policy_signature
from jericho_env.core.kernels import below, njit

_TIE = 1e-9  # GreedyAgent.act's margin


def params_dtype(tables: greedy_grid_kernel.Tables) -> np.dtype[Any]:
    """The record of one board's tables (field shapes from the board size)."""
    return np.dtype(
        [
            ("offsets", np.int64, tables.offsets.shape),
            ("nb", np.int64, tables.nb.shape),
            ("nbn", np.int64, tables.nbn.shape),
            ("compat", np.int64, tables.compat.shape),
            ("points", np.int64, tables.points.shape),
            ("rankmax", np.int64, tables.rankmax.shape),
            ("dist", np.int64, tables.dist.shape),
            ("a_slot", np.int64, tables.a_slot.shape),
            ("a_cell", np.int64, tables.a_cell.shape),
            ("risk", np.float64, tables.risk.shape),
            ("weights", np.float64, (4,)),
            ("score_at", np.int64, (2,)),
            ("pass_action", np.int64),
            ("soft", np.bool_),
            ("allow_pass", np.bool_),
        ]
    )


@njit(cache=True)
def _values(obs: np.ndarray, legal: np.ndarray, n: int, weigh: bool, p: Any) -> Any:
    """``GreedyAgent._values`` over ``legal[:n]`` in ascending order (the order the agent sees them in)."""
    ordered = np.sort(legal[:n])
    return values(
        obs, ordered, weigh, p.weights, p.soft, p.offsets, p.nb, p.nbn, p.compat, p.points, p.rankmax, p.dist,
        p.a_slot, p.a_cell, p.risk, p.pass_action,
    )  # fmt: skip


def _prior_py(
    obs: np.ndarray, legal: np.ndarray, n: int, params: np.ndarray, stream: np.ndarray, k: int, weights: np.ndarray
) -> int:
    """``GreedyAgent.scores`` at ``legal[:n]`` into ``weights[:n]``."""
    p = params[0]
    if n == 1:
        weights[0] = 1.0
        return legal[0]
    weigh = obs[p.score_at[0]] != obs[p.score_at[1]]
    acts, v = _values(obs, legal, n, weigh, p)
    best = v.max()
    for j in range(n):
        weights[j] = 0.0
        for i in range(acts.shape[0]):
            if acts[i] == legal[j]:
                weights[j] = np.float64(np.float32(np.exp(v[i] - best)))
    return legal[0]


def _rollout_py(
    obs: np.ndarray, legal: np.ndarray, n: int, params: np.ndarray, stream: np.ndarray, k: int, weights: np.ndarray
) -> int:
    """``GreedyAgent.act``: the best-scoring action, ties drawn from ``stream[k]``."""
    p = params[0]
    if n == 1:
        return legal[0]
    acts, v = _values(obs, legal, n, p.allow_pass, p)
    ties = np.empty(acts.shape[0] + 1, dtype=np.int64)
    ties[0] = p.pass_action
    count = 1
    best_value = -1e9
    for i in range(acts.shape[0]):
        if v[i] > best_value + _TIE:
            best_value = v[i]
            ties[0] = acts[i]
            count = 1
        elif v[i] > best_value - _TIE:
            ties[count] = acts[i]
            count += 1
    return ties[0] if count == 1 else ties[below(stream, k, count)]


_COMPILED: dict[Any, tuple[Any, Any]] = {}


def row_policy(rules: Any, game: Any = None) -> RowPolicy:
    """grid greedy as a ``RowPolicy`` for ``rules``' board (compiled once per board size in a process)."""
    from agents.greedy.grid import GreedyAgent

    agent = GreedyAgent("grid", **rules.options)
    tables = greedy_grid_kernel.tables_for(agent)
    dtype = params_dtype(tables)
    params = np.zeros(1, dtype=dtype)
    p = params[0]
    for name in ("offsets", "nb", "nbn", "compat", "points", "rankmax", "dist", "a_slot", "a_cell", "risk"):
        p[name] = getattr(tables, name)
    p["weights"] = tables.weights(agent)
    p["score_at"] = [agent._scores[0], agent._scores[1]]
    p["pass_action"] = tables.pass_action
    p["soft"] = bool(agent.soft_setup)
    p["allow_pass"] = bool(agent.allow_pass)
    key = dtype
    fns = _COMPILED.get(key)
    if fns is None:
        sig = policy_signature(params)
        fns = _COMPILED[key] = (njit(sig, cache=True)(_prior_py), njit(sig, cache=True)(_rollout_py))
    return RowPolicy(fns[0], fns[1], params)


__all__ = ["params_dtype", "row_policy"]
