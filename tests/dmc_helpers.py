"""Helpers of the Deep Monte-Carlo tests: saved networks with strong, different preferences."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from agents.dmc import build_network, save_dmc


def random_networks(game: str, options: dict[str, Any], tmp_path: Path, n: int, prior: str = "none") -> list[Path]:
    """``n`` saved networks of ``game`` with strong, different preferences."""
    paths = []
    for i in range(n):
        torch.manual_seed(i)
        network = build_network(game, options, "16", prior=prior)
        with torch.no_grad():
            for parameter in network.parameters():
                parameter.normal_(std=0.5)
        paths.append(save_dmc(tmp_path / f"n{i}.zip", network, game, options, {}))
    return paths
