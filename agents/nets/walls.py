"""Walls' network: fixed majority features beside the observation, in front of a shared first layer.

``WallsExtractor`` takes the game's options (``game_options``, saved with the checkpoint's policy
arguments) and reads ``num_players`` from them. Checkpoints written before it took them load through
``walls_num_players``, which finds the player count from the observation size.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import torch
from torch import nn

from agents.nets.common import SharedLinearExtractor


def walls_num_players(observation_size: int) -> int:
    """The walls ``num_players`` whose observation has ``observation_size`` floats (``ValueError`` if none).

    Only for checkpoints saved without ``game_options``; new ones name their options.
    """
    from jericho_env.registry import make_rules

    for n in range(2, 6):
        if make_rules("walls", num_players=n).layout.size == observation_size:
            return n
    raise ValueError(f"no walls num_players gives observations of {observation_size} floats")


class WallsFeatures(nn.Module):
    """Fixed (untrained) features of a walls observation that an MLP finds hard to compute itself.

    Per colour: own length minus the longest rival's (/ 20, clipped), lead, tie or trail, each seat's length / 30,
    which value a trumpet would knock down (one-hot) and how many of our cards would fall, the colour's cards in the
    supply and in our hand. 5 x (1 + 3 + n + 6 + 1 + 2) floats.
    """

    def __init__(self, game_options: Mapping[str, Any]) -> None:
        super().__init__()
        from jericho_env.games.walls.cards import COPIES
        from jericho_env.registry import make_rules

        rules = make_rules("walls", **game_options)
        self.n = int(rules.options["num_players"])
        self.observation_size = rules.layout.size
        sl = rules.layout.slices
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
    """``SharedLinearExtractor`` for walls over the observation plus ``WallsFeatures``.

    ``game_id`` and ``game_options`` are saved with the policy's arguments; ``game_options=None``
    (checkpoints from before they were saved) finds ``num_players`` from the observation size.
    """

    def __init__(
        self,
        observation_space: gym.spaces.Box,
        features_dim: int = 256,
        input_size: int | None = None,
        game_id: str = "walls",
        game_options: Mapping[str, Any] | None = None,
    ) -> None:
        if game_id != "walls":
            raise ValueError(f"WallsExtractor reads walls observations only, not {game_id!r}")
        self.game_id = game_id
        self.game_options = None if game_options is None else dict(game_options)
        super().__init__(observation_space, features_dim, input_size)

    def derived_features(self, observation_size: int) -> WallsFeatures:
        """``WallsFeatures`` for the game's options (checked against the observation size)."""
        options = self.game_options
        if options is None:
            options = {"num_players": walls_num_players(observation_size)}
        features = WallsFeatures(options)
        if features.observation_size != observation_size:
            raise ValueError(
                f"WallsExtractor: walls with options {options} has observations of {features.observation_size} "
                f"floats, the observation space {observation_size} (other options?)"
            )
        return features
