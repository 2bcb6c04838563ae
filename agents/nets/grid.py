"""Grid's networks: fixed capture/fit planes, a convolutional actor-critic body and its policy.

``GridConvPolicy`` takes the game's options (``game_options``, saved with the checkpoint) and builds
the network for that board. Checkpoints written before it took them load through
``grid_board_size``, which finds the board from the observation size.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import torch
from stable_baselines3.common.type_aliases import Schedule
from torch import nn

from agents.nets.common import _BodyPolicy

GRID_TABLE_FIELDS = ("table_occupied", "table_base", "table_suit", "table_rank")


def grid_board_size(observation_size: int) -> int:
    """The grid ``board_size`` whose observation has ``observation_size`` floats (``ValueError`` if none).

    Only for checkpoints saved without ``game_options``; new ones name their options.
    """
    from jericho_env.registry import make_rules

    small = make_rules("grid", board_size=3).layout
    planes = sum(small.fields[small.index(n)].size for n in GRID_TABLE_FIELDS) // 9
    rest = small.size - 9 * planes
    side = math.isqrt(max(observation_size - rest, 0) // planes)
    try:
        if make_rules("grid", board_size=side).layout.size == observation_size:
            return side
    except ValueError:  # not an allowed board_size (even, or out of range)
        pass
    raise ValueError(f"no grid board_size gives observations of {observation_size} floats")


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    """Sorted indices as (start, stop) runs of consecutive values."""
    runs: list[tuple[int, int]] = []
    for i in indices:
        if runs and runs[-1][1] == i:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs


class GridFeatures(nn.Module):
    """Fixed (untrained) cell planes of a grid observation: what a placement captures and which cards fit.

    Per empty cell beside the table: the points a placement captures now / 30, the share of unseen cards that fit
    it, our fitting hand cards / 5, the chance the opponent holds a fitting card, that chance times the capture
    (the danger), and the capture if we hold a fitting card. 6 planes.
    """

    planes = 6

    def __init__(self, side: int, layout: Any) -> None:
        super().__init__()
        from jericho_env.games.grid.state import POINTS

        self.side = side
        sl = layout.slices
        self.sl = {k: sl[k] for k in ("table_occupied", "table_base", "table_suit", "table_rank", "hand")}
        self.seen = [sl[k] for k in ("hand", "own_captured", "opp_captured", "table_cards", "discard")]
        self.opp_hand = sl["opp_hand_size"].start
        self.rank_points: torch.Tensor
        self.register_buffer("rank_points", torch.tensor(POINTS[:13], dtype=torch.float32), persistent=False)

    @staticmethod
    def _around(x: torch.Tensor) -> torch.Tensor:
        """Per cell, the sum of ``x`` over its four orthogonal neighbours (zero outside the window)."""
        p = torch.nn.functional.pad(x, (1, 1, 1, 1))
        return p[..., :-2, 1:-1] + p[..., 2:, 1:-1] + p[..., 1:-1, :-2] + p[..., 1:-1, 2:]

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        b, side = obs.shape[0], self.side
        occ = obs[:, self.sl["table_occupied"]].reshape(b, side, side)
        base = obs[:, self.sl["table_base"]].reshape(b, side, side)
        suit = obs[:, self.sl["table_suit"]].reshape(b, 4, side, side)
        rank = obs[:, self.sl["table_rank"]].reshape(b, 13, side, side)
        face = occ - base
        n_occ = self._around(occ)
        empty_front = (1.0 - occ) * (n_occ > 0.5).float()
        pts = torch.einsum("brxy,r->bxy", rank, self.rank_points)
        # capture points: neighbours holding a face-up card whose other three sides are covered
        takeable = face * (n_occ > 2.5).float() * (n_occ < 3.5).float() * pts
        capture = self._around(takeable) * empty_front
        # fits[b, card, cell]: the card matches every face-up neighbour of the cell. A card u = (s, r) not
        # on the table matches a neighbour by suit or by rank, never both (that neighbour would be u), so it
        # fits when (neighbours of suit s) + (neighbours of rank r) = (face-up neighbours).
        by_suit = self._around(suit)  # (b, 4, side, side)
        by_rank = self._around(rank)  # (b, 13, side, side)
        n_face = self._around(face)
        matched = by_suit[:, :, None] + by_rank[:, None, :]  # (b, 4, 13, side, side), card = suit * 13 + rank
        fits = (matched == n_face[:, None, None]).reshape(b, 52, side * side).to(obs.dtype)  # exact small integers
        seen = torch.stack([obs[:, s] for s in self.seen]).sum(dim=0)
        unseen = (1.0 - seen).clamp(min=0.0)  # (b, 52)
        n_unseen = unseen.sum(dim=1).clamp(min=1.0)
        weights = torch.stack([unseen, obs[:, self.sl["hand"]]], dim=1)  # (b, 2, 52)
        unseen_fit, own_fit = (torch.bmm(weights, fits).reshape(b, 2, side, side) * empty_front[:, None]).unbind(1)
        hand = (obs[:, self.opp_hand] * 5.0).round()
        p_opp = 1.0 - (1.0 - unseen_fit / n_unseen[:, None, None]).clamp(0.0, 1.0) ** hand[:, None, None]
        planes = [
            capture / 30.0,
            unseen_fit / n_unseen[:, None, None],
            own_fit / 5.0,
            p_opp,
            p_opp * capture / 30.0,
            (own_fit > 0.5).float() * capture / 30.0,
        ]
        return torch.stack(planes, dim=1)


class GridBody(nn.Module):
    """What grid's bodies share: the board's layout, the hand-slot embeddings, the pass/end and value heads."""

    def _read_board(self, game_options: Mapping[str, Any]) -> tuple[Any, list[int], list[int]]:
        """(layout, the table planes' indices, the other fields') of ``game_options``' board; its sizes on ``self``."""
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
        self.num_actions = self.num_slots * self.side**2 + 1
        return layout, table, other

    def _add_heads(self, pooled: int, hidden: int, embed: int, *near_uniform: nn.Module) -> None:
        """The slot MLP, pass/end and value heads; the first two's last layers and ``near_uniform`` start near 0."""
        self.slot_mlp = nn.Sequential(nn.Linear(self.slot_dim + hidden, hidden), nn.ReLU(), nn.Linear(hidden, embed))
        self.stop_head = nn.Sequential(nn.Linear(pooled, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.value_head = nn.Sequential(nn.Linear(pooled, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        for head in (self.slot_mlp[-1], self.stop_head[-1], *near_uniform):
            assert isinstance(head, nn.Linear)
            nn.init.orthogonal_(head.weight, gain=0.01)
            nn.init.zeros_(head.bias)

    def _slot_embeddings(self, obs: torch.Tensor, glob: torch.Tensor) -> torch.Tensor:
        """Each hand slot's embedding (b, slots, embed): the slot MLP of its card and the global features."""
        slots = obs[:, self.slots].reshape(obs.shape[0], self.num_slots, self.slot_dim)
        return self.slot_mlp(torch.cat([slots, glob[:, None, :].expand(-1, self.num_slots, -1)], dim=2))


class GridConvNet(GridBody):
    """Translation-equivariant actor-critic body for grid: conv cell features x hand-slot embeddings.

    The table planes and an "inside the window" plane go through ``layers`` 3x3 convolutions, biased per channel by
    a linear layer over the other fields. Placing hand slot ``s`` on cell ``c`` gets the logit ``<f_c, g_s>`` (a 1x1
    projection of the cell features, an MLP of the slot's card and the global features); pass/end and the value come
    from the global features and the mean and max of the cell features.
    """

    def __init__(
        self,
        game_options: Mapping[str, Any],
        channels: int = 16,
        layers: int = 3,
        embed: int = 32,
        hidden: int = 64,
        features: bool = False,
    ):
        super().__init__()
        layout, table, other = self._read_board(game_options)
        self.table_runs = _runs(table)
        planes = len(table) // self.side**2
        self.features = GridFeatures(self.side, layout) if features else None
        planes += GridFeatures.planes if features else 0
        self.inside: torch.Tensor
        self.register_buffer("inside", torch.ones(1, 1, self.side, self.side), persistent=False)
        self.glob = nn.Sequential(nn.Linear(len(other), hidden), nn.ReLU())
        self.glob_bias = nn.Linear(hidden, channels)
        self.convs = nn.ModuleList(
            [nn.Conv2d(planes + 1 if i == 0 else channels, channels, 3, padding=1) for i in range(layers)]
        )
        self.cell_proj = nn.Conv2d(channels, embed, 1)
        self._add_heads(2 * channels + hidden, hidden, embed)

    @staticmethod
    def _gather(obs: torch.Tensor, runs: list[tuple[int, int]]) -> torch.Tensor:
        parts = [obs[:, a:b] for a, b in runs]
        return parts[0] if len(parts) == 1 else torch.cat(parts, dim=1)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Unmasked logits (batch, num_actions) and values (batch, 1)."""
        b, side = obs.shape[0], self.side
        glob = self.glob(self._gather(obs, self.global_runs))
        x = self._gather(obs, self.table_runs).reshape(b, -1, side, side)
        extra = [self.features(obs)] if self.features is not None else []
        x = torch.cat([x, self.inside.expand(b, -1, -1, -1), *extra], dim=1)
        for i, conv in enumerate(self.convs):
            x = conv(x)
            if i == 0:
                x = x + self.glob_bias(glob)[:, :, None, None]
            x = torch.relu(x)
        cells = self.cell_proj(x).flatten(2)  # (b, embed, C)
        place = torch.bmm(self._slot_embeddings(obs, glob), cells).flatten(
            1
        )  # (b, slots * C), action = slot * C + cell
        pooled = torch.cat([x.mean(dim=(2, 3)), x.amax(dim=(2, 3)), glob], dim=1)
        logits = torch.cat([place, self.stop_head(pooled)], dim=1)
        return logits, self.value_head(pooled)


class GridConvPolicy(_BodyPolicy):
    """MaskablePPO policy for grid built on ``GridConvNet`` for the board of ``game_options``.

    ``game_options=None`` (checkpoints from before they were saved) finds the board from the observation size.
    """

    def __init__(
        self,
        observation_space: gym.spaces.Space,
        action_space: gym.spaces.Space,
        lr_schedule: Schedule,
        channels: int = 16,
        layers: int = 3,
        embed: int = 32,
        hidden: int = 64,
        features: bool = False,
        prior: str | None = None,
        prior_weight: float = 5.0,
        game_id: str = "grid",
        game_options: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        net_kwargs = {"channels": channels, "layers": layers, "embed": embed, "hidden": hidden, "features": features}
        options = None if game_options is None else dict(game_options)
        super().__init__(
            observation_space, action_space, lr_schedule, net_kwargs, prior, prior_weight, game_id, options, **kwargs
        )

    def _make_body(self, size: int, num_actions: int) -> nn.Module:
        options = {"board_size": grid_board_size(size)} if self.game_options is None else self.game_options
        body = GridConvNet(options, **self.net_kwargs)
        if body.observation_size != size:
            raise ValueError(
                f"GridConvPolicy: grid with options {options} has observations of {body.observation_size} "
                f"floats, the observation space {size} (other options?)"
            )
        if body.num_actions != num_actions:
            raise ValueError(f"GridConvPolicy: {num_actions} actions, but the grid layout gives {body.num_actions}")
        return body
