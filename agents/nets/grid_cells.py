"""``grid-cells``: a small actor-critic for grid that looks only at the cells where a card may go.

A placement is legal only on an empty cell beside the table (the frontier: at most a few dozen of the
window's cells), so the network gathers those cells (up to ``max_cells``, ordered by position) and
describes each with fixed (untrained) quantities computed from the observation by tensor gathers:

* the points a placement there captures now, and whether it fills a hole (the placed card is surrounded too);
* the points it exposes: face-up neighbours it leaves with one open side, and those points times the best
  chance that the opponent fits one of their other open sides; whether the card placed there keeps one open
  side, and the chance that the opponent fits that side;
* the share of unseen cards and the number of our own cards that fit the cell (match every face-up neighbour
  by suit or rank), the chance that the opponent holds a fitting card, that chance times the capture (the
  cell's danger), and the capture we could make there;
* its covered sides and its distance from the base.

A per-cell network reads those, biased by the global features (hands, piles, scores, flags, and summaries
of the frontier), and embeds each cell; each hand slot is embedded from its card and the global features,
and placing slot ``s`` on cell ``c`` gets the logit ``<f_c, g_s> + b_c`` (cells outside the gathered set
get 0: they are never legal, or beyond ``max_cells``). Pass/end and the value come from the pooled cells
and the global features. The quantities are the ingredients of ``agents.greedy.grid``'s own scoring; the
network learns how to weigh them, and what else matters, from play.
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
from agents.nets.grid import GRID_TABLE_FIELDS, _runs

CELL_FEATURES = 15


class FrontierFeatures(nn.Module):
    """The gathered frontier cells of a grid observation and their fixed features (module docstring)."""

    use_kernel = frontier_kernel.KERNEL  # the compiled features (tests switch it off to run the reference)

    def __init__(self, side: int, layout: Any, max_cells: int) -> None:
        super().__init__()
        from jericho_env.games.grid.state import POINTS

        self.side, self.cells = side, side * side
        self.max_cells = min(max_cells, self.cells)
        sl = layout.slices
        self.sl = {k: sl[k] for k in ("table_occupied", "table_base", "table_suit", "table_rank", "hand")}
        self.seen = [sl[k] for k in ("hand", "own_captured", "opp_captured", "table_cards", "discard")]
        self.opp_hand = sl["opp_hand_size"].start
        pad = self.cells  # index of a virtual empty cell outside the window
        nb = torch.full((self.cells + 1, 4), pad, dtype=torch.long)
        for r in range(side):
            for c in range(side):
                for k, (dr, dc) in enumerate(((-1, 0), (1, 0), (0, -1), (0, 1))):
                    if 0 <= r + dr < side and 0 <= c + dc < side:
                        nb[r * side + c, k] = (r + dr) * side + c + dc
        self.nb: torch.Tensor
        self.register_buffer("nb", nb, persistent=False)
        self.nb_flat: torch.Tensor
        self.register_buffer("nb_flat", nb.reshape(1, -1), persistent=False)
        centre = (side - 1) / 2
        idx = torch.arange(self.cells)
        dist = torch.maximum((idx // side - centre).abs(), (idx % side - centre).abs()) / max(centre, 1.0)
        self.distance: torch.Tensor
        self.register_buffer("distance", dist.float(), persistent=False)
        self.order: torch.Tensor  # breaks ties between frontier cells by position, so the gather is deterministic
        self.register_buffer("order", 1.0 - idx.float() / (2 * self.cells), persistent=False)
        self.rank_points: torch.Tensor
        self.register_buffer("rank_points", torch.tensor(POINTS[:13], dtype=torch.float32) / 30.0, persistent=False)
        seen_at = np.array([s.start for s in self.seen], dtype=np.int64)
        self.kernel_args = (
            sl["table_occupied"].start,
            sl["table_base"].start,
            sl["table_suit"].start,
            seen_at,
            sl["hand"].start,
            self.opp_hand,
            np.ascontiguousarray(nb.numpy(), dtype=np.int64),
            dist.double().numpy(),
            self.rank_points.double().numpy(),
            self.max_cells,
        )

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(cell indices (b, K), valid (b, K) 0/1, features (b, K, CELL_FEATURES)).

        Computed by ``agents.nets.frontier_kernel`` where Numba is installed and the batch is on the CPU
        (``use_kernel``), else by ``reference``: the same cells and features (a test compares them).
        """
        if self.use_kernel and obs.device.type == "cpu":
            rows = np.ascontiguousarray(obs.detach().numpy(), dtype=np.float32)
            idx, valid, x = frontier_kernel.features(rows, *self.kernel_args)
            return torch.from_numpy(idx), torch.from_numpy(valid), torch.from_numpy(x)
        return self.reference(obs)

    def reference(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``forward`` with tensor operations only (any device; the definition the kernel is tested against)."""
        b, n = obs.shape[0], self.cells
        zero = obs.new_zeros(b, 1)
        occ = torch.cat([obs[:, self.sl["table_occupied"]], zero], dim=1)  # (b, n + 1): the last is outside
        face = occ - torch.cat([obs[:, self.sl["table_base"]], zero], dim=1)
        n_occ = occ.gather(1, self.nb_flat.expand(b, -1)).reshape(b, n + 1, 4).sum(dim=2)  # covered sides
        front = (1.0 - occ[:, :n]) * (n_occ[:, :n] > 0.5).float()
        idx = torch.topk(front * 2.0 + self.order, self.max_cells, dim=1).indices  # frontier first, by position
        valid = front.gather(1, idx)
        nbr = self.nb.index_select(0, idx.reshape(-1)).reshape(b, -1, 4)  # (b, K, 4)
        flat = nbr.reshape(b, -1)

        def at(x: torch.Tensor) -> torch.Tensor:  # (b, n + 1) -> values at each gathered cell's 4 neighbours
            return x.gather(1, flat).reshape(b, -1, 4)

        # suit and rank planes (adjacent in the layout) at the neighbours: (b, 17, K, 4); outside the window: 0
        planes = obs[:, self.sl["table_suit"].start : self.sl["table_rank"].stop].reshape(b, 17, n)
        inside = (flat < n).float()
        cards = planes.gather(2, flat.clamp(max=n - 1)[:, None].expand(-1, 17, -1)) * inside[:, None]
        cards = cards.reshape(b, 17, -1, 4)
        face_n, occ_n = at(face), at(n_occ)
        pts_n = torch.einsum("brkq,r->bkq", cards[:, 4:], self.rank_points)
        covered = n_occ.gather(1, idx)
        takeable = face_n * ((occ_n > 2.5) & (occ_n < 3.5)).float() * pts_n
        exposed = face_n * ((occ_n > 1.5) & (occ_n < 2.5)).float() * pts_n
        capture = takeable.sum(dim=2)
        # which cards fit: a card (s, r) matches a face-up neighbour by suit or by rank, never both (that
        # neighbour would be the card itself), so it fits when its suit and rank matches add up to the face-ups
        by_card = cards.sum(dim=3)  # (b, 17, K): face-up neighbours of each suit, then of each rank
        n_face = face_n.sum(dim=2)  # (b, K)
        matched = by_card[:, :4, None] + by_card[:, None, 4:]  # (b, 4, 13, K): card = suit * 13 + rank
        fits = (matched == n_face[:, None, None]).reshape(b, 52, -1).float()
        seen = torch.stack([obs[:, s] for s in self.seen]).sum(dim=0)
        unseen = (1.0 - seen).clamp(min=0.0)
        n_unseen = unseen.sum(dim=1, keepdim=True).clamp(min=1.0)
        counts = torch.bmm(torch.stack([unseen, obs[:, self.sl["hand"]]], dim=1), fits)  # (b, 2, K)
        unseen_share, own_fit = counts[:, 0] / n_unseen, counts[:, 1]
        opp_hand = (obs[:, self.opp_hand : self.opp_hand + 1] * 5.0).round()
        p_opp = (1.0 - (1.0 - unseen_share).clamp(0.0, 1.0) ** opp_hand) * valid
        # the opponent's chance at the other open sides of what a placement exposes (second order)
        p_map = obs.new_zeros(b, n + 1).scatter(1, idx, p_opp)
        around = self.nb.index_select(0, flat.reshape(-1)).reshape(b, -1)  # each neighbour's own neighbours
        second = p_map.gather(1, around).reshape(b, -1, 4, 4)  # (b, K, neighbour, its neighbour)
        second = second.masked_fill(around.reshape(b, -1, 4, 4) == idx[:, :, None, None], 0.0)
        exposed_risk = (exposed * second.amax(dim=3)).sum(dim=2)
        own_side = (covered > 2.5) & (covered < 3.5)
        own_risk = own_side.float() * (at(p_map) * (occ_n.new_ones(()) - at(occ))).amax(dim=2)
        features = [
            capture,
            (covered > 3.5).float(),
            exposed.sum(dim=2),
            exposed_risk,
            own_side.float(),
            own_risk,
            unseen_share,
            own_fit / 5.0,
            p_opp,
            p_opp * capture,
            (own_fit > 0.5).float() * capture,
            covered / 4.0,
            self.distance.expand(b, -1).gather(1, idx),
            valid,
            n_face / 4.0,
        ]
        return idx, valid, torch.stack(features, dim=2) * valid[:, :, None]


class GridCellsNet(nn.Module):
    """The ``grid-cells`` actor-critic body (see the module docstring) for the board of ``game_options``."""

    def __init__(
        self, game_options: Mapping[str, Any], width: int = 32, embed: int = 16, hidden: int = 64, max_cells: int = 64
    ) -> None:
        super().__init__()
        from jericho_env.registry import make_rules

        rules = make_rules("grid", **game_options)
        self.side = int(rules.options["board_size"])
        layout = rules.layout
        table = [i for n in GRID_TABLE_FIELDS for i in range(layout.slices[n].start, layout.slices[n].stop)]
        other = sorted(set(range(layout.size)) - set(table))
        self.global_runs = _runs(other)
        self.observation_size = layout.size
        self.slots = layout.slices["hand_slots"]
        self.num_slots, self.slot_dim = layout.fields[layout.index("hand_slots")].shape
        self.frontier = FrontierFeatures(self.side, layout, max_cells)
        self.glob = nn.Sequential(nn.Linear(len(other) + 2 * CELL_FEATURES, hidden), nn.ReLU())
        self.cell1 = nn.Linear(CELL_FEATURES, width)
        self.glob_bias = nn.Linear(hidden, width)
        self.cell2 = nn.Linear(width, width)
        self.cell_embed = nn.Linear(width, embed + 1)  # the cell's embedding and its own bias
        self.slot_mlp = nn.Sequential(nn.Linear(self.slot_dim + hidden, hidden), nn.ReLU(), nn.Linear(hidden, embed))
        self.stop_head = nn.Sequential(nn.Linear(2 * width + hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.value_head = nn.Sequential(nn.Linear(2 * width + hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.num_actions = self.num_slots * self.side**2 + 1
        self.slot_offsets: torch.Tensor
        self.register_buffer("slot_offsets", torch.arange(self.num_slots) * self.side**2, persistent=False)
        for head in (self.slot_mlp[-1], self.stop_head[-1], self.cell_embed):  # near-uniform policy at the start
            assert isinstance(head, nn.Linear)
            nn.init.orthogonal_(head.weight, gain=0.01)
            nn.init.zeros_(head.bias)

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
        slots = obs[:, self.slots].reshape(b, self.num_slots, self.slot_dim)
        g = self.slot_mlp(torch.cat([slots, glob[:, None, :].expand(-1, self.num_slots, -1)], dim=2))
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
        if game_id != "grid":
            raise ValueError(f"GridCellsPolicy plays grid only, not {game_id!r}")
        self.game_id = game_id
        self.game_options = dict(game_options or {})
        self.net_kwargs: dict[str, Any] = {"width": width, "embed": embed, "hidden": hidden, "max_cells": max_cells}
        self._init_prior(prior, prior_weight)
        kwargs.setdefault("net_arch", [])
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build(self, lr_schedule: Schedule) -> None:
        """Create the network and the optimizer (SB3's MLP extractor and heads are not used)."""
        obs_shape = self.observation_space.shape
        assert obs_shape is not None and isinstance(self.action_space, gym.spaces.Discrete)
        size = int(obs_shape[0]) - self._prior_size(self.action_space)
        self.body = GridCellsNet(self.game_options or {}, **self.net_kwargs)
        if self.body.observation_size != size or self.body.num_actions != int(self.action_space.n):
            raise ValueError(
                f"GridCellsPolicy: grid with options {self.game_options} has observations of "
                f"{self.body.observation_size} floats and {self.body.num_actions} actions, the spaces "
                f"{size} and {int(self.action_space.n)} (other options?)"
            )
        self._build_prior()
        self.optimizer = self.optimizer_class(  # type: ignore[call-arg]  # SB3 passes lr to any optimizer class
            self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs
        )
