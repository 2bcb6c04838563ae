"""``grid-cells``' frontier features as tensor operations: the definition ``agents.nets.frontier_kernel`` is tested
against.

The network computes its gathered frontier cells and their fifteen fixed features with the kernel, one pass per
row (``agents.nets.grid_cells.FrontierFeatures``). This is the same definition in about a hundred tensor
operations, as the network first computed it: it reads as the features' definition, so the kernel's loops are
checked against it (``tests/test_frontier_kernel.py``). Its arithmetic is float32 against the kernel's float64,
so a feature may differ in its last bits.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


class FrontierReference(nn.Module):
    """``FrontierFeatures(side, layout, max_cells)`` with tensor operations only: the same call, the same outputs."""

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
        self.nb = nb
        self.nb_flat = nb.reshape(1, -1)
        centre = (side - 1) / 2
        idx = torch.arange(self.cells)
        self.distance = (
            torch.maximum((idx // side - centre).abs(), (idx % side - centre).abs()) / max(centre, 1.0)
        ).float()
        self.order = 1.0 - idx.float() / (2 * self.cells)  # breaks ties between frontier cells by position
        self.rank_points = torch.tensor(POINTS[:13], dtype=torch.float32) / 30.0

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(cell indices (b, K), valid (b, K) 0/1, features (b, K, 15))."""
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
