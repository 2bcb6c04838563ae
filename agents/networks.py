"""Network pieces for the PPO agents (importable by name, so saved checkpoints load anywhere)."""

from __future__ import annotations

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor


class SharedLinearExtractor(BaseFeaturesExtractor):
    """One linear layer + ReLU shared by the policy and the value heads.

    The observations of some games are large (grid: 8,731 floats); with SB3's default MLP both heads
    own a first layer of that width. Sharing it roughly halves the cost of the largest matrix
    products in rollouts and updates (measured: see the README's training section).
    """

    def __init__(self, observation_space: gym.spaces.Box, features_dim: int = 256) -> None:
        super().__init__(observation_space, features_dim)
        n_in = int(observation_space.shape[0])
        self.net = torch.nn.Sequential(torch.nn.Linear(n_in, features_dim), torch.nn.ReLU())

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.net(observations)
