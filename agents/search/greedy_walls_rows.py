"""walls ``greedy`` as a compiled row policy for search: its scores as a tree prior, its move in rollouts.

``row_policy(rules, game)`` returns an ``agents.search.compiled.RowPolicy`` whose two functions read one
observation row and the legal actions, as ``ismcts``'s Python search asks the greedy agent
(``agents.search.ismcts.ISMCTSAgent._greedy_prior`` and ``_greedy_rollout``):

* ``prior``: ``GreedyAgent.scores`` (``exp(score - best)`` over the legal actions; in the opening
  ``exp(-rank)`` of greedy's order; rounded to float32 as ``scores`` returns them);
* ``rollout``: ``GreedyAgent.act`` (the first legal action whose score beats the running best by 1e-9).

The play scores come from ``agents.greedy.walls_kernel.play_values``, the compiled scoring
``BatchGreedyWalls`` uses (the same floats as the scalar agent), on the observation's raw counts; the opening
order is ``BatchGreedyWalls._opening_keys``'s (colour with the most value in hand, then the lowest card). The
weights and tables are ``BatchGreedyWalls``'s, copied into one params record.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.greedy.walls_kernel import play_values
from agents.search.compiled import RowPolicy, policy_signature
from jericho_env.core.kernels import njit

_TIE = 1e-9  # GreedyAgent.act's margin
_OPEN_WALL = 0  # the observation's phase one-hot, in Phase order
_OPENING_ACTIONS = 26  # builds 0..24 and the face-down trumpet (25): the opening's actions


def params_dtype(size: int, num_actions: int) -> np.dtype[Any]:
    """The record of greedy's tables for observations of ``size`` floats."""
    return np.dtype(
        [
            ("unscale", np.float32, (size,)),
            ("at", np.int64, (8,)),
            ("values", np.float64, (5,)),
            ("extra", np.float64, (num_actions,)),
            ("action_variant", np.int64, (num_actions,)),
            ("n", np.int64),
            ("hand_at", np.int64),
            ("phase_at", np.int64),
            ("future_rate", np.float64),
            ("one_weight", np.float64),
            ("trumpet_value", np.float64),
        ]
    )


@njit(cache=True)
def _scores(obs: np.ndarray, legal: np.ndarray, n: int, p: Any, out: np.ndarray) -> bool:
    """Greedy's value of each of ``legal[:n]`` into ``out[:n]`` (higher is better); whether it is the opening."""
    size = obs.shape[0]
    raw = np.empty((size, 1), dtype=np.float32)
    for d in range(size):
        raw[d, 0] = np.rint(obs[d] * p.unscale[d])
    phase = np.zeros(1, dtype=np.int64)
    best = raw[p.phase_at, 0]
    for i in range(1, 4):
        if raw[p.phase_at + i, 0] > best:
            best = raw[p.phase_at + i, 0]
            phase[0] = i
    if phase[0] == _OPEN_WALL:
        for j in range(n):
            a = legal[j]
            if a < 25:
                c = a // 5
                colour = 0.0
                for v in range(5):
                    colour += raw[p.hand_at + c * 5 + v, 0] * p.values[v]
                out[j] = colour * 8.0 + (4 - a % 5)
            else:
                out[j] = -1.0
        return True
    scores = play_values(raw, phase, p.n, p.at, p.future_rate, p.one_weight, p.trumpet_value, p.values, p.extra,
                         p.action_variant)  # fmt: skip
    for j in range(n):
        out[j] = scores[legal[j], 0]
    return False


def _prior_py(
    obs: np.ndarray, legal: np.ndarray, n: int, params: np.ndarray, stream: np.ndarray, k: int, weights: np.ndarray
) -> int:
    """``GreedyAgent.scores`` at ``legal[:n]`` into ``weights[:n]``."""
    p = params[0]
    if n == 1:
        weights[0] = 1.0
        return legal[0]
    v = np.empty(n, dtype=np.float64)
    opening = _scores(obs, legal, n, p, v)
    if opening:  # exp(-rank): the rank of the key among the distinct keys of the legal actions
        for j in range(n):
            rank = 0
            for i in range(n):
                if v[i] > v[j]:
                    seen = False
                    for h in range(i):
                        if v[h] == v[i]:
                            seen = True
                    rank += 0 if seen else 1
            weights[j] = np.float64(np.float32(np.exp(-float(rank))))
        return legal[0]
    best = v.max()
    for j in range(n):
        weights[j] = np.float64(np.float32(np.exp(v[j] - best)))
    return legal[0]


def _rollout_py(
    obs: np.ndarray, legal: np.ndarray, n: int, params: np.ndarray, stream: np.ndarray, k: int, weights: np.ndarray
) -> int:
    """``GreedyAgent.act``: the first legal action (ascending) whose score beats the running best by more than 1e-9."""
    p = params[0]
    if n == 1:
        return legal[0]
    order = np.sort(legal[:n])
    v = np.empty(n, dtype=np.float64)
    _scores(obs, order, n, p, v)
    best = order[0]
    best_score = -1e18
    for j in range(n):
        if v[j] > best_score + _TIE:
            best_score = v[j]
            best = order[j]
    return best


_COMPILED: dict[Any, tuple[Any, Any]] = {}


def row_policy(rules: Any, game: Any = None) -> RowPolicy:
    """walls greedy as a ``RowPolicy`` for ``rules``' seat count (compiled once per count in a process)."""
    from agents.greedy.walls_batch import BatchGreedyWalls

    batch = BatchGreedyWalls("walls", **rules.options)
    if batch.rival_weight != 0.0:
        raise ValueError("the compiled walls greedy policy scores only the seat's own cards (rival_weight 0)")
    n, at, future_rate, one_weight, trumpet_value, values, extra, variant = batch._kernel_arguments()
    dtype = params_dtype(batch.observation_size, len(extra))
    params = np.zeros(1, dtype=dtype)
    p = params[0]
    p["unscale"] = batch._unscale_row
    p["at"], p["values"], p["extra"], p["action_variant"] = at, values, extra, variant
    p["n"], p["hand_at"], p["phase_at"] = n, batch._hand, batch._phase.start
    p["future_rate"], p["one_weight"], p["trumpet_value"] = future_rate, one_weight, trumpet_value
    fns = _COMPILED.get(dtype)
    if fns is None:
        sig = policy_signature(params)
        fns = _COMPILED[dtype] = (njit(sig, cache=True)(_prior_py), njit(sig, cache=True)(_rollout_py))
    return RowPolicy(fns[0], fns[1], params)


__all__ = ["params_dtype", "row_policy"]
