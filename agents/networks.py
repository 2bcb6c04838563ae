"""Network pieces for the PPO agents (importable by name, so saved checkpoints load anywhere)."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.preprocessing import preprocess_obs
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.common.type_aliases import Schedule
from torch import nn


class SharedLinearExtractor(BaseFeaturesExtractor):
    """One linear layer + ReLU shared by the policy and the value heads.

    The observations of some games are large (grid: 8,731 floats); with SB3's default MLP both heads
    own a first layer of that width. Sharing it roughly halves the cost of the largest matrix
    products in rollouts and updates (measured: see the README's training section).
    """

    def __init__(self, observation_space: gym.spaces.Box, features_dim: int = 256, input_size: int = 0) -> None:
        super().__init__(observation_space, features_dim)
        n_in = input_size or int(observation_space.shape[0])  # input_size: the first floats only (agents.prior)
        self.derived = self.derived_features(n_in)
        extra = self.derived.size if self.derived is not None else 0
        self.net = torch.nn.Sequential(torch.nn.Linear(n_in + extra, features_dim), torch.nn.ReLU())

    def derived_features(self, observation_size: int) -> Any:
        """A fixed module whose output (``.size`` floats) joins the observation; None here, see ``WallsExtractor``."""
        return None

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        if self.derived is not None:
            observations = torch.cat([observations, self.derived(observations)], dim=1)
        return self.net(observations)


# ---------------------------------------------------------------------------------------- grid
GRID_TABLE_FIELDS = ("table_occupied", "table_base", "table_suit", "table_rank")


def grid_board_size(observation_size: int) -> int:
    """The grid ``board_size`` whose observation has ``observation_size`` floats (``ValueError`` if none)."""
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

    Per cell, from the table planes and the public card piles: the points a card placed there would
    capture now (neighbours with their other three sides covered) / 30; the share of the unseen cards
    (not in our hand, on the table, in a capture pile or the discard) that fit the cell (match every
    face-up neighbour's suit or rank) and the number of our hand cards that fit it / 5; the chance that
    the opponent holds an unseen card that fits (1 - (1 - fits/unseen) ** opponent's hand size); that
    chance times the capture points (the cell's danger); and the capture points if we hold a fitting
    card. Zero on occupied cells and cells with no occupied neighbour. 6 planes.
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


class GridConvNet(nn.Module):
    """Translation-equivariant actor-critic body for grid: conv cell features x hand-slot embeddings.

    The table planes (occupied, base, suit, rank) plus a constant "inside the window" plane go through
    ``layers`` 3x3 convolutions (padding 1), the non-table fields (hands, piles, scores, flags) through
    a linear layer whose output is added to the first conv layer as a per-channel bias. Placing hand
    slot ``s`` on cell ``c`` gets the logit ``<f_c, g_s>`` (``f_c`` a 1x1 projection of the cell
    features, ``g_s`` an MLP of the slot's card and the global features): one filter bank is shared by
    every cell, so a pattern learned on one cell holds on all of them. Pass/end and the value come
    from the global features and the mean and max of the cell features.

    Size by measurement (grid 21x21, 1 torch thread, busy 2-core machine, PPO batch 512 x 5 epochs):
    16 channels train at ~150-200 env steps/s, 32 channels at ~90 (the 3x3 conv backward dominates);
    SB3's MLP runs ~250-390 but learns far less per step (after 60k steps: 92% vs random, against 53%).
    """

    def __init__(
        self,
        observation_size: int,
        channels: int = 16,
        layers: int = 3,
        embed: int = 32,
        hidden: int = 64,
        features: bool = False,
    ):
        super().__init__()
        from jericho_env.registry import make_rules

        self.side = grid_board_size(observation_size)
        layout = make_rules("grid", board_size=self.side).layout
        table = [i for n in GRID_TABLE_FIELDS for i in range(layout.slices[n].start, layout.slices[n].stop)]
        other = sorted(set(range(layout.size)) - set(table))
        self.table_runs = _runs(table)
        self.global_runs = _runs(other)
        self.slots = layout.slices["hand_slots"]
        self.num_slots, self.slot_dim = layout.fields[layout.index("hand_slots")].shape
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
        self.slot_mlp = nn.Sequential(nn.Linear(self.slot_dim + hidden, hidden), nn.ReLU(), nn.Linear(hidden, embed))
        self.stop_head = nn.Sequential(nn.Linear(2 * channels + hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.value_head = nn.Sequential(nn.Linear(2 * channels + hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.num_actions = self.num_slots * self.side**2 + 1
        for head in (self.slot_mlp[-1], self.stop_head[-1]):  # near-uniform policy at the start
            assert isinstance(head, nn.Linear)
            nn.init.orthogonal_(head.weight, gain=0.01)
            nn.init.zeros_(head.bias)

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
        slots = obs[:, self.slots].reshape(b, self.num_slots, self.slot_dim)
        g = self.slot_mlp(torch.cat([slots, glob[:, None, :].expand(-1, self.num_slots, -1)], dim=2))
        place = torch.bmm(g, cells).flatten(1)  # (b, slots * C), action = slot * C + cell
        pooled = torch.cat([x.mean(dim=(2, 3)), x.amax(dim=(2, 3)), glob], dim=1)
        logits = torch.cat([place, self.stop_head(pooled)], dim=1)
        return logits, self.value_head(pooled)


class _LogitsPolicy(MaskableActorCriticPolicy):
    """A maskable actor-critic whose subclasses compute logits and values in one ``_run(obs)``.

    Implements SB3's ``forward``, ``evaluate_actions``, ``get_distribution`` and ``predict_values`` on
    top of it, and the optional prior bonus (``agents.prior``): with ``prior`` set, the observation's
    last float names the prior agent's move, and ``prior_weight`` (a trained scalar) is added to its logit;
    with ``prior="greedy-scores"`` the last ``num_actions`` floats score every action, and ``prior_weight``
    times those scores is added to the logits.
    """

    prior: str | None
    prior_init: float

    def _init_prior(self, prior: str | None, prior_weight: float) -> None:
        self.prior = None if prior in (None, "none") else prior
        self.prior_init = float(prior_weight)

    def _build_prior(self) -> None:
        """Create the prior weight (call in ``_build`` before the optimizer is made)."""
        if self.prior is not None:
            self.prior_weight = nn.Parameter(torch.tensor(self.prior_init))

    def _prior_parameters(self) -> dict[str, Any]:
        return {"prior": self.prior, "prior_weight": self.prior_init}

    def _hint_size(self, action_space: gym.spaces.Space) -> int:
        """Floats of the prior's hint at the end of the observation (``agents.prior.hint_size``)."""
        from agents.prior import hint_size

        assert isinstance(action_space, gym.spaces.Discrete)
        return hint_size(self.prior, int(action_space.n))

    def _split(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(the game's observation, the prior bonus per action or None)."""
        if self.prior is None:
            return obs, None
        from agents.prior import decode_hint

        assert isinstance(self.action_space, gym.spaces.Discrete)
        n = int(self.action_space.n)
        if self.prior == "greedy-scores":  # one score per action in [0, 1]
            return obs[:, :-n], obs[:, -n:] * self.prior_weight
        bonus = torch.nn.functional.one_hot(decode_hint(obs[:, -1], n), n).to(obs.dtype) * self.prior_weight
        return obs[:, :-1], bonus

    def _run(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # pragma: no cover - abstract
        raise NotImplementedError

    def preprocess(self, obs: Any) -> torch.Tensor:
        """Observations as a float tensor (SB3's preprocessing for a Box space)."""
        out = preprocess_obs(obs, self.observation_space, normalize_images=False)
        assert isinstance(out, torch.Tensor)
        return out.float()

    def action_logits(self, obs: torch.Tensor) -> torch.Tensor:
        """Unmasked logits (batch, num_actions), prior bonus included."""
        return self._run(self.preprocess(obs))[0]

    def _distribution(self, logits: torch.Tensor, action_masks: Any) -> Any:
        distribution = self.action_dist.proba_distribution(action_logits=logits)
        if action_masks is not None:
            distribution.apply_masking(action_masks)
        return distribution

    def forward(
        self, obs: torch.Tensor, deterministic: bool = False, action_masks: np.ndarray | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Actions, values and log-probabilities (as SB3's ``forward``)."""
        logits, values = self._run(self.preprocess(obs))
        distribution = self._distribution(logits, action_masks)
        actions = distribution.get_actions(deterministic=deterministic)
        return actions, values, distribution.log_prob(actions)

    def evaluate_actions(
        self, obs: torch.Tensor, actions: torch.Tensor, action_masks: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Values, log-probabilities of ``actions`` and entropies (as SB3's ``evaluate_actions``)."""
        logits, values = self._run(self.preprocess(obs))
        distribution = self._distribution(logits, action_masks)
        return values, distribution.log_prob(actions), distribution.entropy()

    def get_distribution(self, obs: Any, action_masks: np.ndarray | None = None) -> Any:
        """The masked action distribution."""
        return self._distribution(self.action_logits(obs), action_masks)

    def predict_values(self, obs: Any) -> torch.Tensor:
        """Value estimates (batch, 1)."""
        return self._run(self.preprocess(obs))[1]


class PriorMlpPolicy(_LogitsPolicy):
    """SB3's MLP actor-critic (features extractor, ``net_arch`` heads) plus the prior bonus of ``agents.prior``.

    The extractor and heads see the game's observation without the hint float.
    """

    def __init__(
        self,
        observation_space: gym.spaces.Space,
        action_space: gym.spaces.Space,
        lr_schedule: Schedule,
        prior: str | None = "greedy",
        prior_weight: float = 5.0,
        **kwargs: Any,
    ) -> None:
        self._init_prior(prior, prior_weight)
        assert isinstance(observation_space, gym.spaces.Box) and observation_space.shape is not None
        n = observation_space.shape[0] - self._hint_size(action_space)
        # the extractor is built on the game's observation (SB3 builds it from the space it is given)
        kwargs.setdefault("features_extractor_class", SharedLinearExtractor)
        shared = kwargs.get("share_features_extractor", True)
        if not issubclass(kwargs["features_extractor_class"], SharedLinearExtractor) or not shared:
            raise ValueError("PriorMlpPolicy runs on a SharedLinearExtractor (or subclass), shared by both heads")
        kwargs["features_extractor_kwargs"] = {
            **kwargs.get("features_extractor_kwargs", {}),
            "input_size": n,
        }
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build(self, lr_schedule: Schedule) -> None:
        self._build_prior()
        super()._build(lr_schedule)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(self._prior_parameters())
        return data

    def _run(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        game_obs, bonus = self._split(obs)
        latent_pi, latent_vf = self.mlp_extractor(self.features_extractor(game_obs))
        logits = self.action_net(latent_pi)
        return (logits if bonus is None else logits + bonus), self.value_net(latent_vf)


class GridConvPolicy(_LogitsPolicy):
    """MaskablePPO policy for grid built on ``GridConvNet`` (any odd board_size, read from the observation size).

    Replaces SB3's features extractor + MLP heads: ``forward``, ``evaluate_actions``, ``get_distribution``
    and ``predict_values`` all run the one network. ``action_logits`` gives the unmasked logits. With
    ``prior`` (``agents.prior``) the observation carries the prior's hint (``agents.prior.hint_size`` floats).
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
        **kwargs: Any,
    ) -> None:
        self.net_kwargs: dict[str, Any] = {"channels": channels, "layers": layers, "embed": embed, "hidden": hidden}
        self.net_kwargs["features"] = features
        self._init_prior(prior, prior_weight)
        kwargs.setdefault("net_arch", [])
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build(self, lr_schedule: Schedule) -> None:
        """Create the network and the optimizer (SB3's MLP extractor and heads are not used)."""
        obs_shape = self.observation_space.shape
        assert obs_shape is not None and isinstance(self.action_space, gym.spaces.Discrete)
        self.body = GridConvNet(int(obs_shape[0]) - self._hint_size(self.action_space), **self.net_kwargs)
        n_actions = int(self.action_space.n)
        if self.body.num_actions != n_actions:
            raise ValueError(f"GridConvPolicy: {n_actions} actions, but the grid layout gives {self.body.num_actions}")
        self._build_prior()
        self.optimizer = self.optimizer_class(  # type: ignore[call-arg]  # SB3 passes lr to any optimizer class
            self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(self.net_kwargs)
        data.update(self._prior_parameters())
        return data

    def _run(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        game_obs, bonus = self._split(obs)
        logits, values = self.body(game_obs)
        return (logits if bonus is None else logits + bonus), values


# ---------------------------------------------------------------------------------------- walls
def walls_num_players(observation_size: int) -> int:
    """The walls ``num_players`` whose observation has ``observation_size`` floats (``ValueError`` if none)."""
    from jericho_env.registry import make_rules

    for n in range(2, 6):
        if make_rules("walls", num_players=n).layout.size == observation_size:
            return n
    raise ValueError(f"no walls num_players gives observations of {observation_size} floats")


class WallsFeatures(nn.Module):
    """Fixed (untrained) features of a walls observation that an MLP finds hard to compute itself.

    The observation stores each wall's length / 101, so a one-point lead is 0.01 apart, and a
    majority is a comparison across seats. Per colour this adds: own length minus the longest
    rival's (/ 20, clipped to [-1, 1]), whether we lead, tie for the lead or trail, each seat's
    length / 30 (clipped), which value a trumpet would knock down (one-hot over 1, 3, 4, 5, 7, none)
    and how many of our own cards of that value would fall, the cards of the colour in the public
    supply and in our hand. 5 x (1 + 3 + n + 6 + 1 + 2) floats.
    """

    def __init__(self, observation_size: int) -> None:
        super().__init__()
        from jericho_env.games.walls.cards import COPIES
        from jericho_env.registry import make_rules

        self.n = walls_num_players(observation_size)
        sl = make_rules("walls", num_players=self.n).layout.slices
        self.walls = sl["walls"]
        self.hand = sl["hand"]
        self.supply = sl["supply_public"]
        copies = torch.tensor(COPIES[:25], dtype=torch.float32)
        self.copies: torch.Tensor
        self.register_buffer("copies", copies, persistent=False)
        self.size = 5 * (1 + 3 + self.n + 6 + 1 + 2)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        b, n = obs.shape[0], self.n
        walls = obs[:, self.walls].reshape(b, n, 5, 7)
        length = walls[..., 6] * 101.0  # (b, n, 5)
        own, rival = length[:, 0], length[:, 1:].amax(dim=1)
        diff = ((own - rival) / 20.0).clamp(-1.0, 1.0)
        lead = (own > rival + 0.5).float()
        tie = ((own - rival).abs() < 0.5).float() * (own > 0).float()
        trail = 1.0 - lead - tie
        lengths = (length / 30.0).clamp(max=1.0).transpose(1, 2).reshape(b, 5 * n)
        counts = walls[..., :5] * self.copies[:5]  # (b, n, 5 colours, 5 values): cards standing
        present = (counts.sum(dim=1) > 0.5).float()  # (b, colour, value)
        # highest value present: the last present index; one-hot over the 5 values plus "none"
        idx = torch.arange(1, 6, device=obs.device, dtype=torch.float32)
        top = (present * idx).amax(dim=2).long()  # 0 = none, else value index + 1
        top_hot = torch.nn.functional.one_hot(top, 6).float()  # (b, 5, 6)
        own_counts = counts[:, 0]  # (b, colour, value)
        at_risk = (own_counts * top_hot[..., 1:]).sum(dim=2) / 4.0
        supply = (obs[:, self.supply] * self.copies).reshape(b, 5, 5).sum(dim=2) / 17.0
        hand = (obs[:, self.hand][:, :25] * self.copies).reshape(b, 5, 5).sum(dim=2) / 7.0
        parts = [diff, lead, tie, trail, lengths, top_hot.reshape(b, 30), at_risk, supply, hand]
        return torch.cat(parts, dim=1)


class WallsExtractor(SharedLinearExtractor):
    """``SharedLinearExtractor`` for walls over the observation plus ``WallsFeatures``."""

    def derived_features(self, observation_size: int) -> WallsFeatures:
        return WallsFeatures(observation_size)
