"""Tianshou 2.0 recipe: PettingZooEnv plays masked random rollouts; masked DQN trains a few epochs.

Marked ``requires_tianshou`` (deselected by default; ``bash scripts/test-ecosystem.sh tianshou`` runs them).
Every env uses ``illegal_action="raise"``, so one unmasked action fails the test.
"""

from __future__ import annotations

import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import jericho_env

pytestmark = pytest.mark.requires_tianshou
ROOT = Path(__file__).resolve().parent.parent
CASES = [("grid", {"board_size": 9}), ("walls", {"num_players": 3}), ("walls", {"num_players": 5}), ("castles", {})]
IDS = ["grid-9", "walls-3", "walls-5", "castles"]


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    import torch

    torch.set_num_threads(1)


@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
def test_masked_random_rollouts_finish_games(game: str, options: dict[str, Any]) -> None:
    from tianshou.data import Collector, CollectStats
    from tianshou.env import DummyVectorEnv

    from jericho_env.wrappers.tianshou import make_env, marl_algorithm

    env_fn = partial(make_env, game, **options)
    envs = DummyVectorEnv([env_fn for _ in range(2)])
    envs.seed(0)
    stats = Collector[CollectStats](marl_algorithm(env_fn(), learners=[]), envs).collect(
        n_episode=3, reset_before_collect=True
    )
    assert stats.n_collected_episodes >= 3
    returns = np.asarray(stats.returns)  # one row per game, one column per seat: zero-sum
    assert returns.shape[1] == len(env_fn().agents)
    assert np.allclose(returns.sum(axis=1), 0.0)


def test_masked_dqn_trains_and_changes_its_weights() -> None:
    import torch
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams

    from jericho_env.wrappers.tianshou import make_env, marl_algorithm

    torch.manual_seed(0)
    env_fn = partial(make_env, "castles")
    envs = DummyVectorEnv([env_fn for _ in range(2)])
    envs.seed(0)
    algo = marl_algorithm(env_fn(), learners=[0, 1])
    before = [p.detach().clone() for p in algo.parameters()]
    train = Collector[CollectStats](algo, envs, VectorReplayBuffer(5000, len(envs)), exploration_noise=True)
    train.reset()
    train.collect(n_step=128)
    result = algo.run_training(
        OffPolicyTrainerParams(
            training_collector=train,
            max_epochs=1,
            epoch_num_steps=256,
            collection_step_num_env_steps=16,
            batch_size=32,
            update_step_num_gradient_steps_per_sample=0.25,
            show_progress=False,
            verbose=False,
        )
    )
    assert result.update_step > 0 and result.train_episode > 0
    assert any(not torch.equal(a, b) for a, b in zip(before, algo.parameters(), strict=True))
    with pytest.raises(jericho_env.OptionError, match="not seats"):
        marl_algorithm(env_fn(), learners=[2])


@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_example_trains_on_every_game(game: str) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "tianshou_dqn.py"), game, "--epochs", "1", "--steps", "256"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert f"{game}: trained 1 epochs" in out.stdout
