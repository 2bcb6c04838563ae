"""Shards stepped one at a time (``ShardedVecEnv(local=False)``), the pipelined rollouts of
``experiments.training.ppo.model`` that use them, and the numpy path of sampling MLP snapshots
(``agents.nets.numpy_mlp``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from jericho_env import IllegalActionError
from jericho_env.envs.sb3 import SelfPlayVecEnv, ShardedVecEnv
from tests.test_selfplay import by_observation, first_legal, last_legal
from tests.test_sharded import hint, same_step

POOL = [first_legal, last_legal, by_observation]


def remote(game: str, sizes: list[int], seed: int, **options: Any) -> ShardedVecEnv:
    """Every shard in a worker of its own (none here), the games seeded as one vec env's."""
    offsets = [sum(sizes[:k]) for k in range(len(sizes))]

    def make(k: int) -> SelfPlayVecEnv:
        return SelfPlayVecEnv(game, sizes[k], opponents=POOL, seed=seed + offsets[k], hint=hint, hint_size=2, **options)

    return ShardedVecEnv(make, sizes, local=False)


@pytest.mark.parametrize(("game", "options"), [("castles", {}), ("walls", {"num_players": 3})])
def test_shards_stepped_one_at_a_time_play_the_games_of_one_vec_env(game: str, options: dict[str, Any]) -> None:
    whole = SelfPlayVecEnv(game, 7, opponents=POOL, seed=40, hint=hint, hint_size=2, **options)
    split = remote(game, [4, 3], 40, **options)
    try:
        assert split.num_envs == 7 and split.observation_space == whole.observation_space
        assert split.parts == [slice(0, 4), slice(4, 7)]
        assert np.array_equal(split.reset(), whole.reset())
        chooser = np.random.default_rng(2)
        for step in range(120):
            masks = whole.action_masks()
            assert np.array_equal(split.action_masks(), masks)
            actions = np.array([chooser.choice(np.flatnonzero(m)) for m in masks])
            expected = whole.step(actions)
            if step % 3 == 0:  # the whole vec env's step still works
                same_step(split.step(actions), expected)
                continue
            for k, part in enumerate(split.parts):
                split.step_part_async(k, actions[part])
            if step % 3 == 1:  # another command meanwhile: the shards' answers are kept for step_part_wait
                split.add_opponent(first_legal, max_added=1)
                whole.add_opponent(first_legal, max_added=1)
            answers = [split.step_part_wait(k) for k in range(2)]
            got = tuple(np.concatenate([a[i] for a in answers]) for i in range(3))
            same_step((*got, [info for a in answers for info in a[3]]), expected)
            assert np.array_equal(np.concatenate([a[4] for a in answers]), whole.action_masks())
    finally:
        split.close()


def test_stepping_one_shard_refuses_what_would_lose_an_answer() -> None:
    split = remote("castles", [2, 2], 3)
    try:
        split.reset()
        masks = split.action_masks()
        with pytest.raises(RuntimeError, match="no step under way"):
            split.step_part_wait(0)
        bad = first_legal(None, masks[2:])
        bad[1] = int(np.flatnonzero(~masks[3])[0])
        with pytest.raises(IllegalActionError, match=r"shard 1 \(games 2\.\.3"):
            split.step_part_async(1, bad)
        split.step_part_async(0, first_legal(None, masks[:2]))
        with pytest.raises(RuntimeError, match="still playing"):
            split.step_part_async(0, first_legal(None, masks[:2]))
        with pytest.raises(RuntimeError, match="playing a step of their own"):
            split.step(first_legal(None, masks))
        obs, *_ = split.step_part_wait(0)
        assert obs.shape[0] == 2
        split.step_part_async(1, first_legal(None, masks[2:]))  # shard 1 never moved: its masks are unchanged
        split.step_part_wait(1)
    finally:
        split.close()
    with pytest.raises(RuntimeError, match="local=False"):
        ShardedVecEnv(lambda k: SelfPlayVecEnv("castles", 2), [2, 2]).parts  # noqa: B018 - the property raises


def test_a_shard_closed_while_playing_a_step_closes_quietly() -> None:
    split = remote("castles", [2, 2], 0)
    split.reset()
    split.step_part_async(1, first_legal(None, split.action_masks()[2:]))
    split.close()
    assert all(not p.is_alive() for p in split._procs)


def pipelined_model(n_steps: int, seed: int) -> tuple[Any, ShardedVecEnv]:
    """castles' preset learner on 6 games in two worker shards, its rollouts pipelined (close the env after)."""
    from agents.checkpoint import PolicySpec
    from experiments.train import make_config
    from experiments.training.ppo.model import PPO_SETTINGS, make_model, pipeline_rollouts

    cfg = make_config("castles", n_envs=6, shards=2, n_steps=n_steps, batch_size=6 * n_steps // 4)
    split = remote("castles", [3, 3], 0)
    ppo = {k: getattr(cfg, k) for k in PPO_SETTINGS}
    try:
        model = make_model(split, "castles", PolicySpec(cfg.policy, cfg.net, cfg.prior, cfg.prior_weight), ppo, seed)
        assert pipeline_rollouts(model)
    except BaseException:
        split.close()
        raise
    return model, split


def test_pipelined_rollouts_hold_the_games_the_moves_made() -> None:
    """Replaying a pipelined rollout's moves on one vec env gives its observations, masks, rewards and starts."""
    model, split = pipelined_model(n_steps=64, seed=5)
    try:
        model.learn(6 * 64)  # one rollout, then one update
        buffer = model.rollout_buffer  # its arrays flattened by the update (step-major): back to (step, game)
        stored = {
            name: getattr(buffer, name).reshape(64, 6, -1)
            for name in ("observations", "action_masks", "actions", "rewards", "episode_starts")
        }
    finally:
        split.close()
    whole = SelfPlayVecEnv("castles", 6, opponents=POOL, hint=hint, hint_size=2)
    whole.seed(5)  # as the model seeded its env
    obs = whole.reset()
    starts = np.ones(6)
    for t in range(64):
        np.testing.assert_array_equal(stored["observations"][t], obs)
        np.testing.assert_array_equal(stored["action_masks"][t], whole.action_masks())
        np.testing.assert_array_equal(stored["episode_starts"][t].reshape(-1), starts)
        actions = stored["actions"][t].reshape(-1).astype(np.int64)
        obs, rewards, dones, _ = whole.step(actions)
        np.testing.assert_array_equal(stored["rewards"][t].reshape(-1), rewards)
        starts = dones.astype(np.float64)
    assert stored["episode_starts"][1:].sum() > 0  # games ended within the rollout


def test_pipelined_rollouts_store_the_policys_numbers() -> None:
    """Before any update: each stored log-probability and value is the policy's for the stored observation."""
    model, split = pipelined_model(n_steps=8, seed=1)
    try:
        model.train = lambda: None  # keep the rollout's policy: no update
        model.learn(6 * 8)
        buffer = model.rollout_buffer
        with torch.no_grad():
            for t in range(8):
                obs = torch.as_tensor(buffer.observations[t])
                acts = torch.as_tensor(buffer.actions[t].reshape(-1))
                values, log_probs, _ = model.policy.evaluate_actions(obs, acts, buffer.action_masks[t])
                np.testing.assert_allclose(log_probs.numpy(), buffer.log_probs[t], rtol=1e-5, atol=1e-6)
                np.testing.assert_allclose(values.numpy().reshape(-1), buffer.values[t], rtol=1e-5, atol=1e-6)
                assert buffer.action_masks[t][np.arange(6), acts.numpy()].all()
    finally:
        split.close()


def test_pipelined_rollouts_need_shards_stepped_one_at_a_time() -> None:
    from agents.checkpoint import PolicySpec
    from experiments.train import make_config
    from experiments.training.ppo.model import PPO_SETTINGS, make_model, pipeline_rollouts

    cfg = make_config("castles", n_envs=4, shards=1, n_steps=8, batch_size=16)
    spec = PolicySpec(cfg.policy, cfg.net, cfg.prior, cfg.prior_weight)
    ppo = {k: getattr(cfg, k) for k in PPO_SETTINGS}
    plain = SelfPlayVecEnv("castles", 4, opponents=POOL)
    assert not pipeline_rollouts(make_model(plain, "castles", spec, ppo, 0))
    here = ShardedVecEnv(lambda k: SelfPlayVecEnv("castles", 2, opponents=POOL), [2, 2])  # shard 0 local
    try:
        model = make_model(here, "castles", spec, ppo, 0)
        assert not pipeline_rollouts(model) and "collect_rollouts" not in vars(model)
    finally:
        here.close()


# ------------------------------------------------------------------------------------------- numpy plans
def _policy(game: str, **settings: Any) -> tuple[Any, np.ndarray, np.ndarray]:
    """A preset's policy with perturbed weights, and learner observations (hint included) with masks."""
    from tests.test_joint import _model, _perturbed, _prior

    model, cfg, obs, masks = _model(game)
    prior_fn = _prior(cfg, 0)
    if prior_fn is not None:
        obs = np.concatenate([obs, prior_fn(obs, masks)], axis=1)
    return _perturbed(model.policy, 1)[0], obs, masks


@pytest.mark.parametrize("game", ["castles", "walls"])
def test_a_numpy_plan_gives_the_networks_logits(game: str) -> None:
    from agents.batch import NetworkBatchPolicy, _masked_logits
    from agents.nets import numpy_mlp

    policy, obs, masks = _policy(game)
    policy.set_training_mode(False)
    plan = numpy_mlp.mlp_plan(policy)
    assert plan is not None and (plan.prior_weight is not None) == (game == "walls")  # walls: greedy's scores
    ours = numpy_mlp.logits(plan, obs)
    with torch.no_grad():
        theirs, _ = _masked_logits(policy, obs, np.ones_like(masks))
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-4, atol=1e-4)
    assert NetworkBatchPolicy(policy, deterministic=True).numpy_plan() is None  # evaluation stays in torch
    policy.set_training_mode(True)
    assert numpy_mlp.mlp_plan(policy) is None  # only in evaluation mode


def test_networks_that_are_not_plain_mlps_have_no_numpy_plan() -> None:
    from agents.nets.numpy_mlp import mlp_plan

    grid, _, _ = _policy("grid")
    grid.set_training_mode(False)
    assert mlp_plan(grid) is None
    castles, _, _ = _policy("castles")
    castles.set_training_mode(False)
    castles.features_extractor.norm = torch.nn.LayerNorm(4)  # a parameter outside the linear layers
    assert mlp_plan(castles) is None


def test_numpy_draws_follow_the_masked_softmax_and_never_a_masked_action() -> None:
    from agents.nets.numpy_mlp import draw

    logits = np.log(np.array([0.5, 0.2, 0.2, 0.1], np.float32))
    rows = 20_000
    masks = np.array([True, False, True, True])
    drawn = draw(np.tile(logits, (rows, 1)), np.tile(masks, (rows, 1)), np.random.default_rng(0).random(rows))
    counts = np.bincount(drawn, minlength=4) / rows
    np.testing.assert_allclose(counts, [0.625, 0.0, 0.25, 0.125], atol=0.012)  # 0.5, 0.2, 0.1 renormalised
    edges = np.array([0.0, np.nextafter(1.0, 0.0)])  # the lowest and the highest uniform number
    np.testing.assert_array_equal(draw(np.tile(logits, (2, 1)), np.tile(masks, (2, 1)), edges), [0, 3])
    only = np.array([False, False, False, True])
    assert (draw(np.tile(logits, (50, 1)), np.tile(only, (50, 1)), np.random.default_rng(1).random(50)) == 3).all()
