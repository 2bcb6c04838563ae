"""``greedy`` reads version 0's fields only: under ``obs_version=1`` it plays exactly the moves it plays under 0."""

from __future__ import annotations

import numpy as np
import pytest

import agents
import jericho_env
from agents.batch import make_batch_policy


@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_greedy_and_its_batch_twin_choose_the_same_under_both_observation_versions(game: str) -> None:
    v0 = jericho_env.make_batched(game, 16)
    v1 = jericho_env.make_batched(game, 16, obs_version=1)
    obs0, mask0, _ = v0.reset(seed=3)
    obs1, mask1, _ = v1.reset(seed=3)
    twin0, twin1 = make_batch_policy("greedy", game, seed=5), make_batch_policy("greedy", game, seed=5, obs_version=1)
    agent0, agent1 = agents.make("greedy", game, seed=7), agents.make("greedy", game, seed=7, obs_version=1)
    rng = np.random.default_rng(0)
    for _ in range(60):
        assert obs1.shape[1] > obs0.shape[1] and np.array_equal(obs1[:, : obs0.shape[1]], obs0)
        assert np.array_equal(mask0, mask1)
        live = mask0.any(axis=1)
        a0, a1 = twin0(obs0, mask0.astype(bool)), twin1(obs1, mask1.astype(bool))
        assert np.array_equal(a0[live], a1[live])
        row = int(np.flatnonzero(live)[0])
        one0 = agent0.act({"observation": obs0[row], "action_mask": mask0[row].astype(np.int8)})
        one1 = agent1.act({"observation": obs1[row], "action_mask": mask1[row].astype(np.int8)})
        assert one0 == one1
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in mask0])
        obs0, mask0, *_ = v0.step(actions)
        obs1, mask1, *_ = v1.step(actions)
