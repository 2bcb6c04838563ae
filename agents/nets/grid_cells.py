"""``grid-cells``: a small actor-critic for grid that looks only at the cells where a card may go.

A placement is legal only on an empty cell beside the table (the frontier), so the network gathers those cells
(up to ``max_cells``, ordered by position) and describes each with fixed quantities computed from the
observation (``agents.nets.frontier_kernel``): the points a placement there captures and exposes, the share of
unseen and own cards that fit it, the chance the opponent holds a fitting card and the cell's danger, its
covered sides and its distance from the base: the ingredients of ``agents.greedy.grid``'s own scoring.

A per-cell network reads those, biased by the global features, and embeds each cell; each hand slot is embedded
from its card and the global features, and placing slot ``s`` on cell ``c`` gets the logit ``<f_c, g_s> + b_c``
(cells outside the gathered set get 0). Pass/end and the value come from the pooled cells and global features.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3.common.type_aliases import Schedule
from torch import nn

from agents.nets import frontier_kernel
from agents.nets.common import _BodyPolicy
from agents.nets.grid import GridBody

CELL_FEATURES = 15


class FrontierFeatures(nn.Module):
    """The gathered frontier cells of a grid observation and their fixed features (module docstring).

    Computed by ``agents.nets.frontier_kernel`` (compiled by Numba where it is installed, plain Python otherwise);
    ``tests/frontier_reference.py`` holds the same features as tensor operations, the definition the kernel is
    tested against.
    """

    def __init__(self, side: int, layout: Any, max_cells: int) -> None:
        super().__init__()
        from jericho_env.games.grid.state import POINTS

        self.side, self.cells = side, side * side
        self.max_cells = min(max_cells, self.cells)
        sl = layout.slices
        pad = self.cells  # index of a virtual empty cell outside the window
        nb = torch.full((self.cells + 1, 4), pad, dtype=torch.long)
        for r in range(side):
            for c in range(side):
                for k, (dr, dc) in enumerate(((-1, 0), (1, 0), (0, -1), (0, 1))):
                    if 0 <= r + dr < side and 0 <= c + dc < side:
                        nb[r * side + c, k] = (r + dr) * side + c + dc
        centre = (side - 1) / 2
        idx = torch.arange(self.cells)
        dist = torch.maximum((idx // side - centre).abs(), (idx % side - centre).abs()) / max(centre, 1.0)
        rank_points = torch.tensor(POINTS[:13], dtype=torch.float32) / 30.0
        seen_at = [sl[k].start for k in ("hand", "own_captured", "opp_captured", "table_cards", "discard")]
        self.kernel_args = (
            sl["table_occupied"].start,
            sl["table_base"].start,
            sl["table_suit"].start,
            np.array(seen_at, dtype=np.int64),
            sl["hand"].start,
            sl["opp_hand_size"].start,
            np.ascontiguousarray(nb.numpy(), dtype=np.int64),
            dist.double().numpy(),
            rank_points.double().numpy(),
            self.max_cells,
        )

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(cell indices (b, K), valid (b, K) 0/1, features (b, K, CELL_FEATURES))."""
        rows = np.ascontiguousarray(obs.detach().numpy(), dtype=np.float32)
        idx, valid, x = frontier_kernel.features(rows, *self.kernel_args)
        return torch.from_numpy(idx), torch.from_numpy(valid), torch.from_numpy(x)


class GridCellsNet(GridBody):
    """The ``grid-cells`` actor-critic body (see the module docstring) for the board of ``game_options``."""

    def __init__(
        self, game_options: Mapping[str, Any], width: int = 32, embed: int = 16, hidden: int = 64, max_cells: int = 64
    ) -> None:
        super().__init__()
        layout, _, other = self._read_board(game_options)
        self.frontier = FrontierFeatures(self.side, layout, max_cells)
        self.glob = nn.Sequential(nn.Linear(len(other) + 2 * CELL_FEATURES, hidden), nn.ReLU())
        self.cell1 = nn.Linear(CELL_FEATURES, width)
        self.glob_bias = nn.Linear(hidden, width)
        self.cell2 = nn.Linear(width, width)
        self.cell_embed = nn.Linear(width, embed + 1)  # the cell's embedding and its own bias
        self._add_heads(2 * width + hidden, hidden, embed, self.cell_embed)
        self.slot_offsets: torch.Tensor
        self.register_buffer("slot_offsets", torch.arange(self.num_slots) * self.side**2, persistent=False)

    def forward_compact(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The logits of the gathered actions only: (logits (b, M), their action numbers (b, M), values (b, 1)).

        ``M = slots * max_cells + 1``: every hand slot on every gathered cell, then pass/end. The action
        numbers are distinct in each row; every action outside them has logit 0 in ``forward``.
        """
        b = obs.shape[0]
        idx, valid, x = self.frontier(obs)  # (b, K), (b, K), (b, K, F)
        count = valid.sum(dim=1, keepdim=True).clamp(min=1.0)
        summary = torch.cat([x.sum(dim=1) / count, x.amax(dim=1)], dim=1)
        glob = self.glob(torch.cat([*(obs[:, a:c] for a, c in self.global_runs), summary], dim=1))
        h = torch.relu(self.cell1(x) + self.glob_bias(glob)[:, None, :])
        h = torch.relu(self.cell2(h)) * valid[:, :, None]
        out = self.cell_embed(h)  # (b, K, embed + 1)
        g = self._slot_embeddings(obs, glob)
        gathered = torch.bmm(g, out[..., :-1].transpose(1, 2)) + out[..., -1][:, None, :]  # (b, slots, K)
        pooled = torch.cat([h.sum(dim=1) / count, h.amax(dim=1), glob], dim=1)
        logits = torch.cat([gathered.flatten(1), self.stop_head(pooled)], dim=1)
        place = idx[:, None, :] + self.slot_offsets[None, :, None]  # action = slot * cells + cell
        stop = idx.new_full((b, 1), self.num_actions - 1)
        return logits, torch.cat([place.flatten(1), stop], dim=1), self.value_head(pooled)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Unmasked logits (batch, num_actions) and values (batch, 1)."""
        logits, actions, values = self.forward_compact(obs)
        return logits.new_zeros(obs.shape[0], self.num_actions).scatter(1, actions, logits), values


class GridCellsPolicy(_BodyPolicy):
    """MaskablePPO policy for grid on ``GridCellsNet`` (``--policy grid-cells``); options saved with it."""

    def __init__(
        self,
        observation_space: gym.spaces.Space,
        action_space: gym.spaces.Space,
        lr_schedule: Schedule,
        width: int = 32,
        embed: int = 16,
        hidden: int = 64,
        max_cells: int = 64,
        prior: str | None = None,
        prior_weight: float = 5.0,
        game_id: str = "grid",
        game_options: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        net_kwargs = {"width": width, "embed": embed, "hidden": hidden, "max_cells": max_cells}
        options = dict(game_options or {})
        super().__init__(
            observation_space, action_space, lr_schedule, net_kwargs, prior, prior_weight, game_id, options, **kwargs
        )

    def _make_body(self, size: int, num_actions: int) -> nn.Module:
        body = GridCellsNet(self.game_options or {}, **self.net_kwargs)
        if body.observation_size != size or body.num_actions != num_actions:
            raise ValueError(
                f"GridCellsPolicy: grid with options {self.game_options} has observations of "
                f"{body.observation_size} floats and {body.num_actions} actions, the spaces "
                f"{size} and {num_actions} (other options?)"
            )
        return body
