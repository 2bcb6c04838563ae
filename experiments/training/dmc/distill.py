"""Distillation (``experiments.dmc --teacher A.zip+B.zip``): each position the actors play (as DAgger gathers them)
learns the Q of a teacher, one dmc network or the mean of several."""

from __future__ import annotations

from typing import Any

import numpy as np


def teacher_plan(cfg: Any) -> Any:
    """The plan of ``cfg.teacher``, None without one; a ``ValueError`` naming what is wrong."""
    if not cfg.teacher:
        return None
    from agents.checkpoint import CheckpointError
    from agents.dmc import DmcAgent

    try:
        return DmcAgent(cfg.game, path=cfg.teacher, **cfg.options).plan
    except (CheckpointError, OSError, ValueError) as e:
        raise ValueError(f"--teacher {cfg.teacher!r}: {e}") from None


def taught_width(network: Any, teacher: Any) -> int:
    """The teacher's values kept beside a position: every action's Q where the network scores every action."""
    return network.spec.num_actions if teacher is not None and network.scores_every_action else 0


class Teacher:
    """Labels the actors' decisions with the teacher's Q as they are stored: every action's beside the position, or
    (a pair network, grid's) a row of the action taken and one of the teacher's best where it differs."""

    def __init__(self, plan: Any) -> None:
        self.plan = plan

    def store(
        self, buffer: Any, plan: Any, obs: np.ndarray, legal: np.ndarray, stored: np.ndarray, chosen: np.ndarray
    ) -> None:
        """Store the decisions ``obs`` (the rows ``stored`` of the ``chosen`` actions) labelled with the teacher's Q."""
        from agents.dmc import legal_q

        if buffer.taught is not None:  # every action's Q beside the position
            buffer.add_taught(stored, chosen, self.plan.q_all(obs, legal), legal)
            return
        q = legal_q(self.plan, obs, legal)  # a pair network: the action taken, and the teacher's best
        rows = np.arange(len(chosen))
        buffer.label(buffer.add(stored, chosen), q[rows, chosen])
        best = q.argmax(axis=1)
        other = rows[best != chosen]
        if len(other):
            buffer.label(buffer.add(plan.stored(obs, other, best[other]), best[other]), q[other, best[other]])


def distill_loss(network: Any, batch: Any, level_weight: float) -> Any:
    """The teacher's Q of every legal action learned by squared errors: the error of each position's mean over its
    legal actions (the level of Q) weighted ``level_weight`` against the errors around it (which decide the move)."""
    import torch

    keep = torch.from_numpy(batch.legal).float()
    error = (network(torch.from_numpy(batch.rows)) - torch.from_numpy(batch.taught)) * keep  # 0 off the legal
    count = keep.sum(dim=1)
    level = error.sum(dim=1) / count  # each position's mean error over its legal actions
    spread = ((error - level[:, None]) * keep).square().sum()  # the errors in the differences between actions
    return (spread + level_weight * (count * level.square()).sum()) / count.sum()
