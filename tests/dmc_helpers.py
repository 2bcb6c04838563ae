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


def make_actors(
    game: str,
    options: dict[str, Any],
    envs: int,
    epsilon: float,
    buffer: Any,
    seed: Any,
    teacher: Any = None,
    **settings: Any,
) -> Any:
    """``Actors`` of a config of ``game`` with these settings (self-play and the outcome alone unless given);
    ``teacher``: a plan whose Q labels each decision (``experiments.training.dmc.distill.Teacher``)."""
    from experiments.training.dmc.actors import Actors
    from experiments.training.dmc.config import make_config
    from experiments.training.dmc.distill import Teacher

    cfg = make_config(game, options, envs=envs, epsilon=epsilon, **{"lam": 1.0, "versus_share": 0.0, **settings})
    return Actors(cfg, buffer, seed, None if teacher is None else Teacher(teacher))
