"""Shared test helpers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def play_out(env: Any, choose: Callable[[str, dict[str, np.ndarray]], int]) -> int:
    """Play a reset AEC ``env`` to its end with ``choose(agent_id, observation) -> action`` in every seat.

    Returns the number of actions chosen (the dead steps after termination are not counted).
    """
    moves = 0
    for agent_id in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        env.step(choose(agent_id, obs))
        moves += 1
    return moves
