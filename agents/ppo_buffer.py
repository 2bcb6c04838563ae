"""MaskablePPO's rollout buffer without two copies of every observation per update.

sb3-contrib's ``MaskableRolloutBuffer`` flattens ``(n_steps, n_envs, ...)`` by swapping axes (a full copy) and
copies each minibatch twice; here flattening is a reshape (a view, step-major order) and a minibatch becomes a
tensor without a copy. Minibatches are still drawn by a random permutation of all the samples.
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
