"""Compiled position values for search rollouts cut short: ``ismcts.EVALUATORS`` on rows of batched states.

Each has ``agents.search.compiled.value_signature`` (``(states, row, params, out)``, each seat's value into
``out``) and computes the Python evaluator's values (up to the last bit of ``tanh``).

* ``grid_points`` (grid): ``agents.search.ismcts.grid_points``, ``tanh`` of seat 0's lead in captured points over 20.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.search.compiled import value_signature
from jericho_env.core.kernels import njit


def _grid_points_py(states: Any, row: int, params: Any, out: Any) -> None:
    s = states[row]
    v = np.tanh((np.float64(s.points[0]) - np.float64(s.points[1])) / 20.0)
    out[0] = v
    out[1] = -v


_COMPILED: dict[Any, Any] = {}


def grid_points(rules: Any, game: Any) -> Any:
    """``grid_points`` compiled for ``game``'s records and row-kernel params (once per record type in a process)."""
    params = game.row_kernels().params
    sig = value_signature(game.dtype, params)
    fn = _COMPILED.get(sig)
    if fn is None:
        fn = _COMPILED[sig] = njit(sig, cache=True)(_grid_points_py)
    return fn


__all__ = ["grid_points"]
