"""Checkpoints written before the networks moved (tests/fixtures/checkpoints_v0) load and choose the same moves.

The fixture holds a castles (``MlpPolicy`` on ``agents.networks.SharedLinearExtractor``), a walls
(``agents.networks.PriorMlpPolicy`` with ``WallsExtractor`` and the greedy-scores prior) and a grid
(``agents.networks.GridConvPolicy``, grid-features, greedy-scores prior) checkpoint, with the moves each
chose in a seeded game when it was written (``make_expected.py``). The test replays that game.
They are Stable-Baselines3 zips, so they load only with ``trust=True`` (``agents.checkpoint``); without
it they are refused, saying why.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import agents
import jericho_env

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "checkpoints_v0"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("game", ["castles", "walls", "grid"])
def test_old_checkpoint_replays_its_recorded_moves(game: str) -> None:
    record = EXPECTED[game]
    agent = agents.make("ppo", game, path=str(FIXTURES / f"{game}.zip"), trust=True)  # SB3 zips: unpickled
    env = jericho_env.raw_env(game)
    env.reset(seed=record["env_seed"])
    rng = np.random.default_rng(record["mix_seed"])
    chosen: list[int] = []
    while not env.rules.is_terminal(env.state) and len(chosen) < len(record["actions"]):
        seat = env.rules.current_player(env.state)
        obs = env.observe(env.possible_agents[seat])
        action = agent.act(obs)
        chosen.append(int(action))
        legal = np.flatnonzero(obs["action_mask"])  # the same mix of its moves and random ones as when recorded
        env.step(int(action) if rng.random() < 0.5 else int(rng.choice(legal)))
    assert chosen == record["actions"]


def test_old_checkpoints_name_the_old_module_and_still_build_the_same_networks() -> None:
    """The fixtures pickle ``agents.networks`` class paths; those resolve, without a warning, to the classes in
    ``agents.nets`` (``agents.nets.pickled``)."""
    from agents.nets.common import PriorMlpPolicy
    from agents.nets.grid import GridConvPolicy
    from agents.nets.walls import WallsExtractor
    from agents.ppo import load_model

    grid = load_model(FIXTURES / "grid.zip", trust=True).policy
    assert type(grid) is GridConvPolicy and grid.game_options is None, "no options saved: found from the size"
    assert grid.body.side == 21 and grid.body.features is not None
    walls = load_model(FIXTURES / "walls.zip", trust=True).policy
    assert type(walls) is PriorMlpPolicy and type(walls.features_extractor) is WallsExtractor
    assert walls.features_extractor.derived.n == 4


@pytest.mark.parametrize("game", ["castles", "walls", "grid"])
def test_old_checkpoints_are_refused_without_trust_saying_why(game: str) -> None:
    from agents.checkpoint import UnsafeCheckpointError

    with pytest.raises(UnsafeCheckpointError, match="Stable-Baselines3 zip: loading it unpickles") as err:
        agents.make("ppo", game, path=str(FIXTURES / f"{game}.zip"))
    assert "trust=True" in str(err.value) and "--trust-checkpoint" in str(err.value)
