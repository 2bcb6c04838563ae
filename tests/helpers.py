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


# ------------------------------------------------------------------------------------------------ processes
# Linux only, as the package's CI: processes are read from /proc.
def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped by its new parent, does not)."""
    try:
        stat = open(f"/proc/{pid}/stat", encoding="utf-8").read()  # noqa: SIM115 - read at once
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def ends_within(pid: int, seconds: float) -> bool:
    """Whether ``pid`` ends within ``seconds`` (polled); a survivor is killed so that no test leaves one behind."""
    import os
    import signal
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    return False


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (read from /proc)."""
    from pathlib import Path

    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text(encoding="utf-8").rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def descendants(pid: int) -> list[int]:
    """The processes started by ``pid``, by its children, and so on (read from /proc)."""
    found, todo = [], [pid]
    while todo:
        kids = children(todo.pop())
        found += kids
        todo += kids
    return found
