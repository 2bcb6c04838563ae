"""MaskablePPO's rollout buffer without two copies of every observation per update.

sb3-contrib's ``MaskableRolloutBuffer`` turns its ``(n_steps, n_envs, ...)`` arrays into
``(n_steps * n_envs, ...)`` by swapping the first two axes (a full copy of the observations, large for
grid's), then copies each minibatch twice (numpy's fancy indexing, then
``torch.tensor``). Here the flattening is a reshape of the contiguous arrays (a view, step-major
order) and the minibatch, already a fresh array, becomes a tensor without a copy
(``torch.as_tensor``). Minibatches are drawn by a random permutation of all the samples either way, so
the order of the flattened samples changes which rows share a minibatch, not how they are drawn; the
values, advantages and returns are computed before flattening, exactly as before.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer


class FlatRolloutBuffer(MaskableRolloutBuffer):
    """``MaskableRolloutBuffer`` that flattens by reshaping and hands minibatches to torch without copying."""

    @staticmethod
    def swap_and_flatten(arr: np.ndarray) -> np.ndarray:
        """``(n_steps, n_envs, ...)`` -> ``(n_steps * n_envs, ...)`` in step-major order (a view when contiguous)."""
        shape = arr.shape
        if len(shape) < 3:
            shape = (*shape, 1)
        return arr.reshape(shape[0] * shape[1], *shape[2:])

    def to_torch(self, array: np.ndarray, copy: bool = True) -> Any:
        """A tensor sharing ``array``'s memory: every array passed here is a fresh minibatch copy."""
        return torch.as_tensor(array, device=self.device)
