"""The SB3 callback of ``experiments.train``: a progress bar and actions run at step intervals."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback


@dataclasses.dataclass
class Every:
    """Run ``action(model, steps)`` (which may return a message for the bar) each multiple of ``steps``."""

    steps: int
    action: Callable[[Any, int], str | None]


class TrainCallback(BaseCallback):
    """A tqdm bar from ``start`` to ``total`` steps (unless quiet), and the ``Every`` actions in their order."""

    def __init__(self, start: int, total: int, desc: str, quiet: bool, actions: Sequence[Every]) -> None:
        super().__init__()
        self.start, self.total, self.desc, self.quiet = start, total, desc, quiet
        self.actions = list(actions)
        self.due = [(start // a.steps + 1) * a.steps for a in self.actions]  # each one's first multiple above start
        self.bar: Any = None
        self.last = start

    def _on_training_start(self) -> None:
        if not self.quiet:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=self.total, initial=self.start, desc=self.desc, unit="step", dynamic_ncols=True)

    def _on_step(self) -> bool:
        n = self.num_timesteps
        if self.bar is not None:
            self.bar.update(n - self.last)
        self.last = n
        for i, every in enumerate(self.actions):
            if n >= self.due[i]:
                message = every.action(self.model, n)
                if message and self.bar is not None:
                    self.bar.set_postfix_str(message)
                elif message and not self.quiet:
                    print(f"{n} steps: {message}")
                self.due[i] += every.steps
        return True

    def close(self) -> None:
        """Close the progress bar."""
        if self.bar is not None:
            self.bar.close()


def eval_text(row: dict[str, Any]) -> str:
    """An evaluation row as ``"vs greedy 61% [45, 75]"``."""
    rate, (lo, hi) = row[f"vs_{row['opponent']}"], row["ci95"]
    return f"vs {row['opponent']} {100 * rate:.0f}% [{100 * lo:.0f}, {100 * hi:.0f}]"
