"""AgileRL recipe: the turn-based games as parallel envs, IPPO acting under the masks and learning from whole games.

Marked ``requires_agilerl`` (deselected by default; ``bash scripts/test-ecosystem.sh agilerl`` runs them).
The AEC env under ``ParallelTurns`` uses ``illegal_action="raise"``, so one unmasked action fails a test.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import jericho_env

pytestmark = pytest.mark.requires_agilerl
ROOT = Path(__file__).resolve().parent.parent
CASES = [("grid", {"board_size": 9}), ("walls", {"num_players": 3}), ("castles", {})]


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    import torch

    torch.set_num_threads(1)


@pytest.mark.parametrize(("game", "options"), CASES, ids=[c[0] for c in CASES])
def test_parallel_turns_passes_pettingzoo_parallel_api_test(game: str, options: dict[str, Any]) -> None:
    from pettingzoo.test import parallel_api_test

    from jericho_env.wrappers.agilerl import ParallelTurns

    env = ParallelTurns(game, **options)
    obs, infos = env.reset(seed=0)
    movers = [a for a in env.possible_agents if infos[a]["action_mask"].any()]
    assert movers == [env.mover]  # only the agent to move has legal actions
    assert all(env.observation_space(a).contains(obs[a]) for a in env.possible_agents)
    # PettingZoo's test steps unmasked random actions: an illegal one ends the game as a loss
    parallel_api_test(ParallelTurns(game, illegal_action="lose", **options), num_cycles=200)


@pytest.mark.parametrize(("game", "options"), CASES, ids=[c[0] for c in CASES])
def test_ippo_plays_only_legal_moves_and_learns(game: str, options: dict[str, Any]) -> None:
    from jericho_env.wrappers.agilerl import ParallelTurns, collect, make_ippo

    env = ParallelTurns(game, **options)
    agent = make_ippo(env)
    experiences, stats = collect(env, agent, games=3, seed=0)
    assert stats["illegal"] == 0 and stats["decisions"] == len(experiences[0]["player_0"])
    returns = np.array(stats["returns"])
    assert returns.shape == (3, len(env.possible_agents)) and np.allclose(returns.sum(axis=1), 0.0)
    assert experiences[4]["player_0"].sum() == 3 * len(env.possible_agents)  # each seat's first move of each game
    before = [p.detach().clone() for p in agent.actors["player"].parameters()]
    losses = agent.learn(experiences)
    assert np.isfinite(losses["player"])
    after = list(agent.actors["player"].parameters())
    assert any(not np.allclose(b.numpy(), a.detach().numpy()) for b, a in zip(before, after, strict=True))


def test_example_script_runs() -> None:
    out = subprocess.run(
        [sys.executable, "examples/agilerl_ippo.py", "all", "--iterations", "1", "--games", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,  # a guard against a hang, not a speed check
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [ln for ln in out.stdout.splitlines() if "iteration 1" in ln]
    assert len(lines) == len(jericho_env.GAME_IDS) and all("illegal moves 0" in ln for ln in lines)
