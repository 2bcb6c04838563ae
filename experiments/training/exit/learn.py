"""Expert iteration's learner: a replay buffer of search targets and the network update on it, by AlphaZero's loss
(Silver et al. 2018; ``losses``)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from experiments.training.exit.play import ROW_ARRAYS, Rows


class ReplayBuffer:
    """The latest ``capacity`` training rows (a ring), kept as numpy arrays."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"the replay buffer needs room for at least one row, got {capacity}")
        self.capacity = capacity
        self.rows: Rows | None = None
        self.added = 0  # rows ever added

    def add(self, rows: Rows) -> None:
        """Append ``rows``, dropping the oldest beyond ``capacity``."""
        self.added += len(rows)
        merged = Rows.concat([rows] if self.rows is None else [self.rows, rows])
        self.rows = merged.sliced(len(merged) - self.capacity) if len(merged) > self.capacity else merged

    def __len__(self) -> int:
        return 0 if self.rows is None else len(self.rows)

    def state(self) -> dict[str, np.ndarray]:
        """The buffer as arrays (for saving with ``np.savez``)."""
        assert self.rows is not None
        r = self.rows
        counters = np.array([self.capacity, self.added, r.games, r.moves], dtype=np.int64)
        return {**{name: getattr(r, name) for name in ROW_ARRAYS}, "counters": counters}

    @classmethod
    def from_state(cls, data: Any) -> ReplayBuffer:
        """The buffer saved by ``state`` (arrays only: loaded with ``allow_pickle=False``)."""
        capacity, added, games, moves = (int(x) for x in data["counters"])
        buf = cls(capacity)
        arrays = {name: np.asarray(data[name], dtype) for name, dtype in ROW_ARRAYS.items()}
        buf.rows = Rows(**arrays, games=games, moves=moves)
        buf.added = added
        return buf


@dataclasses.dataclass(frozen=True)
class LearnSettings:
    """The network update of one iteration (``experiments.training.presets.EXIT``)."""

    learning_rate: float
    weight_decay: float
    batch_size: int
    updates: int  # minibatches per iteration
    value_weight: float
    target: str = "policy"  # "advantage": the policy part is the squared error of centred logits (``losses``)


def make_optimizer(policy: Any, settings: LearnSettings) -> Any:
    """AdamW over every parameter of ``policy``."""
    import torch

    return torch.optim.AdamW(policy.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay)


def losses(
    policy: Any, features: Any, masks: np.ndarray, targets: Any, values: Any, has_policy: Any, target: str = "policy"
) -> tuple[Any, Any]:
    """(policy loss, value squared error), each a mean over its rows: the cross-entropy to the targets, or with
    ``target="advantage"`` the squared error of the logits, both centred on their mean over the legal actions."""
    import torch

    from agents.exit import logits_and_values

    movers = has_policy.numpy()
    # value-only rows have no legal action: they are given every action (their logits are not used)
    logits, numbers, predicted = logits_and_values(policy, features, masks | ~movers[:, None])
    value_loss = torch.mean((predicted.reshape(-1) - values) ** 2)
    if not movers.any():
        return torch.zeros((), dtype=value_loss.dtype), value_loss
    t = targets[has_policy]
    if numbers is not None:  # a compact distribution over some actions (grid-cells): its columns' targets
        t = t.gather(1, numbers[has_policy])
    if target == "advantage":
        lg = logits[has_policy]
        legal = torch.isfinite(lg)
        count = legal.sum(dim=1, keepdim=True).clamp(min=1)

        def centred(x: Any) -> Any:  # x minus its mean over the legal actions; zero elsewhere
            x = torch.where(legal, x, torch.zeros_like(x))
            return torch.where(legal, x - x.sum(dim=1, keepdim=True) / count, torch.zeros_like(x))

        err = centred(lg) - centred(t)
        return (err**2).sum() / legal.sum().clamp(min=1), value_loss
    logp = torch.log_softmax(logits[has_policy], dim=1)
    policy_loss = -torch.where(t > 0, t * logp, torch.zeros_like(logp)).sum(dim=1).mean()
    return policy_loss, value_loss


def learn(
    policy: Any, optimizer: Any, buffer: ReplayBuffer, settings: LearnSettings, rng: np.random.Generator
) -> dict[str, float]:
    """``settings.updates`` minibatch steps on ``buffer``; the mean losses back."""
    import torch

    assert buffer.rows is not None
    r = buffer.rows
    policy.set_training_mode(True)
    sums = {"policy_loss": 0.0, "value_loss": 0.0}
    try:
        for _ in range(settings.updates):
            idx = rng.integers(len(r), size=min(settings.batch_size, len(r)))
            features = torch.as_tensor(r.features[idx])
            p_loss, v_loss = losses(
                policy, features, r.masks[idx], torch.as_tensor(r.targets[idx]), torch.as_tensor(r.values[idx]),
                torch.as_tensor(r.policy[idx]), settings.target,
            )  # fmt: skip
            loss = p_loss + settings.value_weight * v_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 5.0)
            optimizer.step()
            sums["policy_loss"] += float(p_loss.detach())
            sums["value_loss"] += float(v_loss.detach())
    finally:
        policy.set_training_mode(False)
    return {k: v / max(settings.updates, 1) for k, v in sums.items()}


__all__ = ["LearnSettings", "ReplayBuffer", "learn", "losses", "make_optimizer"]
