"""Deep Monte-Carlo's grid network: Q(s, a) from a compact state and the features of the one action, DouZero-style.

The state ``S``: the observation without the table planes, plus the mean and maximum of the frontier cells'
features; each legal action ``A``: its card, its cell's fixed features, its place, a "stop" flag and, with the
prior, greedy's score of it. ``Q(s, a) = head(relu(W h(S) + U A + b))``: the trunk once per position.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.nets import frontier_kernel
from agents.nets.dmc import PRIOR_WEIGHT, QSpec, action_features, best_pairs, mlp

HEAD = (128, 64)  # the action head's layers
MAX_CELLS = 96  # frontier cells gathered per position (a legal cell beyond them gets zero cell features)
TABLE_FIELDS = ("table_occupied", "table_base", "table_suit", "table_rank")


class GridEncoder:
    """Observation rows -> state features ``S``; (row, action) pairs -> action features ``A`` (numpy)."""

    def __init__(self, options: Mapping[str, Any], prior: bool = False) -> None:
        from agents.nets.grid_cells import FrontierFeatures
        from jericho_env.registry import make_rules

        rules = make_rules("grid", **dict(options))
        self.layout = layout = rules.layout
        self.side = int(rules.options["board_size"])
        self.cells = self.side * self.side
        self.num_actions = rules.info.num_actions
        self.stop = self.num_actions - 1
        self.keep = np.concatenate([np.arange(s.start, s.stop) for n, s in layout.slices.items()
                                    if n not in TABLE_FIELDS])  # fmt: skip
        slots = layout.slices["hand_slots"]
        self.slots_at, self.slot_width = slots.start, (slots.stop - slots.start) // 5
        frontier = FrontierFeatures(self.side, layout, MAX_CELLS)
        self.kernel_args = frontier.kernel_args
        self.static = action_features("grid", options)
        self.cell_features = frontier_kernel.NUM_FEATURES
        self.state_size = len(self.keep) + 2 * self.cell_features
        self.prior = bool(prior)  # A ends with greedy's score of the action
        self.action_size = 1 + self.slot_width + self.cell_features + self.static.shape[1] + int(self.prior)

    def frontier(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(gathered cells (B, K), valid (B, K), features (B, K, 15)) of the rows."""
        return frontier_kernel.features(np.ascontiguousarray(obs, dtype=np.float32), *self.kernel_args)  # type: ignore[no-any-return]

    def state(self, obs: np.ndarray, front: tuple[np.ndarray, ...]) -> np.ndarray:
        """``S`` (B, state_size): the observation without its table planes, the frontier's mean and maximum."""
        _, valid, x = front
        count = np.maximum(valid.sum(axis=1, keepdims=True), 1.0)
        summary = [x.sum(axis=1) / count, np.where(valid[:, :, None] > 0, x, 0).max(axis=1)]
        return np.concatenate([obs[:, self.keep], *summary], axis=1).astype(np.float32)

    def actions(self, obs: np.ndarray, front: tuple[np.ndarray, ...], rows: np.ndarray, acts: np.ndarray,
                scores: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
        """``A`` (P, action_size) of the pairs (row, action); ``scores`` (B, actions): the prior's, if any."""
        idx, valid, x = front
        place = acts != self.stop
        slot, cell = np.divmod(np.where(place, acts, 0), self.cells)
        out = np.zeros((len(acts), self.action_size), np.float32)
        out[:, 0] = ~place
        w = self.slot_width
        starts = self.slots_at + slot * w
        out[:, 1 : 1 + w] = obs[rows[:, None], starts[:, None] + np.arange(w)] * place[:, None]
        hit = (idx[rows] == cell[:, None]) & (valid[rows] > 0)
        k = hit.argmax(axis=1)
        found = hit.any(axis=1) & place
        out[found, 1 + w : 1 + w + self.cell_features] = x[rows[found], k[found]]
        end = self.action_size - int(self.prior)
        out[:, 1 + w + self.cell_features : end] = self.static[acts]
        if self.prior:
            if scores is None:
                raise ValueError("this encoder's actions end with the prior's scores: pass them")
            out[:, -1] = scores[rows, acts]
        return out


class GridQNetwork(nn.Module):
    """Q of (state, action) pairs (module docstring); stores ``S`` and the chosen action's ``A`` for learning."""

    scores_every_action = False  # one (state, action) row at a time

    def __init__(self, spec: QSpec, options: Mapping[str, Any], scorer: Any = None) -> None:
        super().__init__()
        if (spec.prior != "none") != (scorer is not None):
            raise ValueError(f"a network with prior {spec.prior!r} needs its scorer (and only then)")
        self.spec = spec
        self.scorer = scorer
        self.encoder = GridEncoder(options, prior=scorer is not None)
        self.trunk, size = mlp(self.encoder.state_size, spec.hidden)
        self.join_state = nn.Linear(size, HEAD[0])
        self.join_action = nn.Linear(self.encoder.action_size, HEAD[0], bias=False)
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(HEAD[0], HEAD[1]), nn.ReLU(), out := nn.Linear(HEAD[1], 1))
        self.prior_weight = nn.Parameter(torch.tensor(PRIOR_WEIGHT)) if scorer is not None else None
        if scorer is not None:  # the head starts near 0, so that the untrained network plays greedy's best move
            nn.init.normal_(out.weight, std=0.01)
            nn.init.zeros_(out.bias)

    @property
    def stored_width(self) -> int:
        """Numbers stored per position: ``S`` then ``A``."""
        return self.encoder.state_size + self.encoder.action_size

    def q_stored(self, x: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """Q of stored rows (B,)."""
        s, a = x[:, : self.encoder.state_size], x[:, self.encoder.state_size :]
        q = self.head(self.join_state(self.trunk(s)) + self.join_action(a)).squeeze(1)
        if self.prior_weight is not None:
            q = q + self.prior_weight * a[:, -1]
        return q

    def plan(self) -> GridQPlan:
        """The network as numpy arrays (a snapshot for the actors)."""

        def arrays(m: nn.Linear) -> tuple[np.ndarray, np.ndarray]:
            bias = np.zeros(m.out_features, np.float32) if m.bias is None else m.bias.detach().numpy().copy()
            return m.weight.detach().numpy().T.copy(), bias

        with torch.no_grad():
            trunk = tuple(arrays(m) for m in self.trunk if isinstance(m, nn.Linear))
            head = tuple(arrays(m) for m in self.head if isinstance(m, nn.Linear))
            weight = 0.0 if self.prior_weight is None else float(self.prior_weight.detach())
            return GridQPlan(self.encoder, trunk, arrays(self.join_state), arrays(self.join_action)[0], head,
                             self.scorer, weight)  # fmt: skip


class GridQPlan:
    """A ``GridQNetwork`` as numpy arrays: the masked argmax of Q over each row's legal actions."""

    def __init__(self, encoder: GridEncoder, trunk: Any, join_state: Any, join_action: np.ndarray, head: Any,
                 scorer: Any = None, prior_weight: float = 0.0) -> None:  # fmt: skip
        self.encoder, self.trunk, self.head = encoder, trunk, head
        self.join_state, self.join_action = join_state, join_action
        self.scorer, self.prior_weight = scorer, prior_weight  # the prior's scorer, if any, and its weight
        self._last: tuple[np.ndarray, tuple[np.ndarray, ...], np.ndarray, np.ndarray | None] | None = None

    def _encoded(
        self, obs: np.ndarray, masks: np.ndarray | None = None
    ) -> tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray | None]:
        """(frontier, ``S``, the prior's scores) of ``obs``; ``masks`` None: those ``best`` computed last on ``obs``."""
        if masks is None:
            if self._last is None or self._last[0] is not obs:
                raise RuntimeError("GridQPlan.stored needs best() on the same observations first")
            return self._last[1], self._last[2], self._last[3]
        front = self.encoder.frontier(obs)
        state = self.encoder.state(obs, front)
        scores = None
        if self.scorer is not None:
            scores = self.scorer(np.ascontiguousarray(obs, np.float32), masks)
        self._last = (obs, front, state, scores)
        return front, state, scores

    def pair_values(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row, action, Q) of every legal pair of the rows."""
        front, h, scores = self._encoded(obs, masks)
        for w, b in self.trunk:
            h = np.maximum(h @ w + b, 0)
        h = h @ self.join_state[0] + self.join_state[1]
        rows, acts = np.nonzero(masks)
        a = self.encoder.actions(obs, front, rows, acts, scores)
        z = h[rows] + a @ self.join_action
        for w, b in self.head:  # each head layer follows a ReLU
            z = np.maximum(z, 0) @ w + b
        q = z[:, 0]
        if self.scorer is not None:
            q = q + self.prior_weight * a[:, -1]
        return rows, acts, q

    def q_all(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Q of every legal action (B, A) float32, -inf elsewhere."""
        masks = np.asarray(masks, dtype=bool)
        rows, acts, values = self.pair_values(obs, masks)
        q = np.full(masks.shape, -np.inf, dtype=np.float32)
        q[rows, acts] = values
        return q

    def stored(self, obs: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """What to store for the positions ``obs[rows]`` where ``actions`` were taken (after ``best``): ``S``, ``A``."""
        front, state, scores = self._encoded(obs)
        return np.concatenate([state[rows], self.encoder.actions(obs, front, rows, actions, scores)], axis=1)

    def best(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The legal action of highest Q per row (B,) int64."""
        return self.best_values(obs, masks)[0]

    def best_values(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The legal action of highest Q per row (B,) int64 and that Q (B,) float32: the position's value."""
        masks = np.asarray(masks, dtype=bool)
        rows, acts, q = self.pair_values(obs, masks)
        return best_pairs(rows, acts, q, len(masks))
