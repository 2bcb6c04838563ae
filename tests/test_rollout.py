"""``agents.ppo_buffer.FlatRolloutBuffer``: the same samples as sb3-contrib's buffer, minibatches not aliasing it."""

from __future__ import annotations

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer

from agents.ppo_buffer import FlatRolloutBuffer


def filled(cls: type, n_steps: int = 6, n_envs: int = 4, seed: int = 0) -> MaskableRolloutBuffer:
    obs_space, act_space = spaces.Box(0, 1, (5,), dtype=np.float32), spaces.Discrete(3)
    buf = cls(n_steps, obs_space, act_space, device="cpu", gamma=0.9, gae_lambda=0.95, n_envs=n_envs)
    rng = np.random.default_rng(seed)
    for _ in range(n_steps):
        buf.add(
            rng.random((n_envs, 5), dtype=np.float32),
            rng.integers(3, size=(n_envs, 1)),
            rng.random(n_envs, dtype=np.float32),
            rng.random(n_envs) < 0.2,
            torch.as_tensor(rng.random(n_envs, dtype=np.float32)),
            torch.as_tensor(rng.random(n_envs, dtype=np.float32)),
            action_masks=rng.random((n_envs, 3)) < 0.7,
        )
    buf.compute_returns_and_advantage(torch.as_tensor(rng.random(n_envs, dtype=np.float32)), np.zeros(n_envs, bool))
    return buf


def rows(buf: MaskableRolloutBuffer, batch_size: int) -> list[tuple[float, ...]]:
    """Every sample the buffer yields, one tuple of all its fields, sorted."""
    out = []
    for s in buf.get(batch_size):
        fields = [s.observations, s.actions.reshape(len(s.observations), -1), s.old_values[:, None]]
        fields += [s.old_log_prob[:, None], s.advantages[:, None], s.returns[:, None], s.action_masks]
        out += [tuple(x) for x in torch.cat([f.double() for f in fields], dim=1).tolist()]
    return sorted(out)


def test_the_flat_buffer_yields_the_same_samples() -> None:
    stock, flat = filled(MaskableRolloutBuffer), filled(FlatRolloutBuffer)
    assert rows(flat, 5) == rows(stock, 5)  # every (observation, action, ..., mask) row, each once


def test_a_minibatch_does_not_alias_the_buffer() -> None:
    buf = filled(FlatRolloutBuffer)
    batch = next(buf.get(8))
    kept = buf.observations.copy()
    batch.observations.zero_()
    batch.action_masks.zero_()
    np.testing.assert_array_equal(buf.observations, kept)
    assert buf.action_masks.any()
