"""The PPO networks by name: the SB3 policy each name builds and the games it can play.

| name | network | games |
| --- | --- | --- |
| ``mlp`` | SB3's MLP heads on one shared first layer (``common.SharedLinearExtractor``) | every game |
| ``walls-mlp`` | ``mlp`` over the observation plus fixed majority features (``walls.WallsExtractor``) | walls |
| ``grid-conv`` | a convolutional body with per-cell logits (``grid.GridConvPolicy``) | grid |
| ``grid-features`` | ``grid-conv`` plus fixed capture and fit planes (``grid.GridFeatures``) | grid |
| ``grid-cells`` | a small per-cell network on fixed tactical planes (``grid_cells.GridCellsPolicy``) | grid |

With a prior (``agents.prior``) the ``mlp`` networks become ``common.PriorMlpPolicy``. The game's id
and options are handed to the networks that need them and saved with the checkpoint. This module
imports torch only when a policy is built, so command lines can list the names cheaply.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

PolicyBuild = Callable[[str, dict[str, Any], list[int], dict[str, Any]], tuple[Any, dict[str, Any]]]


def _mlp(game_id: str, options: dict[str, Any], sizes: list[int], prior: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    from agents.nets.common import PriorMlpPolicy, SharedLinearExtractor

    kwargs = {
        "features_extractor_class": SharedLinearExtractor,
        "features_extractor_kwargs": {"features_dim": sizes[0]},
        "net_arch": sizes[1:],
    }
    return (PriorMlpPolicy if prior else "MlpPolicy"), {**kwargs, **prior}


def _walls_mlp(
    game_id: str, options: dict[str, Any], sizes: list[int], prior: dict[str, Any]
) -> tuple[Any, dict[str, Any]]:
    from agents.nets.walls import WallsExtractor

    policy, kwargs = _mlp(game_id, options, sizes, prior)
    kwargs["features_extractor_class"] = WallsExtractor
    kwargs["features_extractor_kwargs"] = {"features_dim": sizes[0], "game_id": game_id, "game_options": options}
    return policy, kwargs


def _grid_conv(features: bool) -> PolicyBuild:
    def build(game_id: str, options: dict[str, Any], sizes: list[int], prior: dict[str, Any]) -> tuple[Any, dict]:
        from agents.nets.grid import GridConvPolicy

        return GridConvPolicy, {"features": features, "game_id": game_id, "game_options": options, **prior}

    return build


def _grid_cells(game_id: str, options: dict[str, Any], sizes: list[int], prior: dict[str, Any]) -> tuple[Any, dict]:
    from agents.nets.grid_cells import GridCellsPolicy

    return GridCellsPolicy, {"game_id": game_id, "game_options": options, **prior}


@dataclasses.dataclass(frozen=True)
class PolicyChoice:
    """One entry of ``POLICIES``: a network and the games it plays."""

    games: tuple[str, ...] | None  # the games it can play; None: every game
    help: str  # one line for --help
    build: PolicyBuild  # (game_id, resolved game options, --net sizes, prior kwargs) -> (policy class, kwargs)
    sizes: tuple[str, ...] = ()  # size arguments of the network besides --net (a checkpoint may record them)


CONV_SIZES = ("channels", "layers")  # GridConvPolicy's size arguments
CELL_SIZES = ("width", "embed", "max_cells")  # GridCellsPolicy's
POLICIES: dict[str, PolicyChoice] = {
    "mlp": PolicyChoice(None, "MLP, the first --net layer shared by both heads", _mlp),
    "walls-mlp": PolicyChoice(("walls",), "mlp plus majority features", _walls_mlp),
    "grid-conv": PolicyChoice(("grid",), "convolutional", _grid_conv(False), CONV_SIZES),
    "grid-features": PolicyChoice(("grid",), "grid-conv plus capture and fit planes", _grid_conv(True), CONV_SIZES),
    "grid-cells": PolicyChoice(("grid",), "small per-cell network on fixed tactical planes", _grid_cells, CELL_SIZES),
}
POLICY_NAMES: tuple[str, ...] = tuple(POLICIES)


def describe_policies() -> str:
    """One line naming each policy, what it is and the games it is limited to (for ``--help``)."""
    return "; ".join(
        f"{n}: {c.help}" + (f" ({', '.join(c.games)} only)" if c.games else "") for n, c in POLICIES.items()
    )


def check_policy(name: str, game_id: str) -> str:
    """``name`` if it is a network that plays ``game_id``, else a ``ValueError`` saying what is allowed."""
    if name not in POLICIES:
        raise ValueError(f"--policy takes one of {', '.join(POLICY_NAMES)}, got {name!r}")
    games = POLICIES[name].games
    if games is not None and game_id not in games:
        raise ValueError(f"--policy {name} is for {', '.join(games)} only, not {game_id!r}")
    return name


def policies_for(game_id: str) -> tuple[str, ...]:
    """The network names that can play ``game_id``."""
    return tuple(n for n, net in POLICIES.items() if net.games is None or game_id in net.games)


# Bounds of the network sizes (--net, a network's own sizes, a checkpoint's meta.json): far above what
# training uses (256 wide, 16 channels, 3 layers), low enough that a typo or a hostile file cannot ask
# for a network larger than memory.
MAX_WIDTH = 4096  # units of a layer, channels, embedding sizes, cells
MAX_LAYERS = 16  # layers of --net, a network's ``layers``


def parse_net(text: str) -> list[int]:
    """``"256,128"`` -> [256, 128]: layer sizes, the first shared by the policy and value heads."""
    try:
        sizes = [int(x) for x in text.split(",")]
    except (ValueError, AttributeError):
        raise ValueError(f"--net takes comma-separated layer sizes such as 256,256, got {text!r}") from None
    if not sizes or any(s < 1 for s in sizes):
        raise ValueError(f"--net needs positive layer sizes, got {text!r}")
    if len(sizes) > MAX_LAYERS or max(sizes) > MAX_WIDTH:
        raise ValueError(f"--net takes at most {MAX_LAYERS} layers of at most {MAX_WIDTH} units each, got {text!r}")
    return sizes


def check_sizes(name: str, sizes: Mapping[str, Any]) -> dict[str, int]:
    """A network's own size arguments (``PolicyChoice.sizes``): known to it, ints in 1..``MAX_WIDTH`` (layers
    1..``MAX_LAYERS``); else ``ValueError`` naming the argument and what is allowed."""
    choice = POLICIES[name]
    unknown = set(sizes) - set(choice.sizes)
    if unknown:
        raise ValueError(f"network {name!r} takes no {', '.join(sorted(unknown))} (it takes: {choice.sizes or 'none'})")
    for key, value in sizes.items():
        top = MAX_LAYERS if key == "layers" else MAX_WIDTH
        if not (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= top):
            raise ValueError(f"network {name!r}: {key} must be an int in 1..{top}, got {value!r}")
    return dict(sizes)


def build_policy(
    name: str,
    game_id: str,
    game_options: Mapping[str, Any],
    net: str,
    prior: str = "none",
    prior_weight: float = 5.0,
    **sizes: int,
) -> tuple[Any, dict[str, Any]]:
    """The SB3 policy class (or ``"MlpPolicy"``) and ``policy_kwargs`` of network ``name`` for ``game_id``.

    ``game_options`` are resolved against the game (every option named) before the networks get them;
    ``sizes`` sets a network's own size arguments (``PolicyChoice.sizes``, e.g. ``channels``).
    """
    from agents.prior import check_prior
    from jericho_env.registry import make_rules

    choice = POLICIES[check_policy(name, game_id)]
    check_sizes(name, sizes)
    options = dict(make_rules(game_id, **game_options).options)
    prior_kwargs = {} if check_prior(prior, game_id) == "none" else {"prior": prior, "prior_weight": prior_weight}
    policy, kwargs = choice.build(game_id, options, parse_net(net), prior_kwargs)
    return policy, {**kwargs, **sizes}
