"""The grid network (agents.nets.grid.GridConvPolicy): shapes, masking, save/load, other board sizes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch
from sb3_contrib import MaskablePPO

import jericho_env
from agents.nets.grid import GridConvPolicy, grid_board_size
from agents.ppo import PPOAgent


def make_model(board_size: int = 21, **policy_kwargs: Any) -> MaskablePPO:
    """An untrained MaskablePPO with the grid network on a single-agent grid env (the board named in its options)."""
    from stable_baselines3.common.logger import Logger

    env = jericho_env.single_agent("grid", opponents=["random"], seat="random", board_size=board_size)
    model = MaskablePPO(
        GridConvPolicy,
        env,
        n_steps=32,
        batch_size=32,
        n_epochs=1,
        policy_kwargs={"game_options": {"board_size": board_size}, **policy_kwargs},
        seed=0,
        device="cpu",
        verbose=0,
    )
    model.set_logger(Logger(None, []))  # SB3's default logger leaves a folder in the temp directory
    return model


def save(model: MaskablePPO, path: Path, board_size: int, **sizes: int) -> None:
    """Save ``model`` (the grid-conv network of ``make_model``) in the safe checkpoint format."""
    from agents.checkpoint import CheckpointMeta, PolicySpec, save_checkpoint

    meta = CheckpointMeta("grid", {"board_size": board_size}, PolicySpec("grid-conv", sizes=sizes))
    save_checkpoint(model, path, meta)


def observations(board_size: int, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` observations and masks of the learner seat from random play."""
    env = jericho_env.single_agent("grid", opponents=["random"], seat="random", board_size=board_size)
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    out, masks = [], []
    while len(out) < n:
        mask = env.action_masks()
        out.append(obs)
        masks.append(mask)
        obs, _, done, trunc, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if done or trunc:
            obs, _ = env.reset()
    return np.stack(out), np.stack(masks)


@pytest.mark.parametrize("board_size", [21, 7])
def test_logits_shape_and_values(board_size: int) -> None:
    model = make_model(board_size)
    obs, _ = observations(board_size, 6)
    logits = model.policy.action_logits(torch.as_tensor(obs))
    assert logits.shape == (6, 5 * board_size**2 + 1)
    assert torch.isfinite(logits).all()
    assert model.policy.predict_values(torch.as_tensor(obs)).shape == (6, 1)
    assert grid_board_size(obs.shape[1]) == board_size


def test_bad_observation_size() -> None:
    with pytest.raises(ValueError, match="board_size"):
        grid_board_size(1000)


@pytest.mark.parametrize("board_size", [21, 7])
def test_ppo_agent_never_picks_masked(tmp_path: Path, board_size: int) -> None:
    model = make_model(board_size)
    model.learn(64)
    path = tmp_path / "m.zip"
    save(model, path, board_size)
    obs, masks = observations(board_size, 40, seed=1)
    for deterministic in (True, False):
        agent = PPOAgent("grid", path=path, deterministic=deterministic, seed=0, board_size=board_size)
        for o, m in zip(obs, masks, strict=True):
            assert m[agent.act({"observation": o, "action_mask": m.astype(np.int8)})]


def test_save_load_identical_logits(tmp_path: Path) -> None:
    model = make_model(7, channels=8, layers=2)
    model.learn(64)
    path = tmp_path / "m.zip"
    model.save(str(path))
    loaded = MaskablePPO.load(str(path), device="cpu")
    assert isinstance(loaded.policy, GridConvPolicy)
    assert loaded.policy.body.side == 7 and len(loaded.policy.body.convs) == 2
    assert loaded.policy.game_options == {"board_size": 7}, "the checkpoint names the board it was built for"
    obs = torch.as_tensor(observations(7, 8)[0])
    with torch.no_grad():
        a, b = model.policy.action_logits(obs), loaded.policy.action_logits(obs)
    assert torch.equal(a, b)
    # the safe format (agents.checkpoint) rebuilds the same network from its name and sizes
    from agents.checkpoint import load_policy

    save(model, tmp_path / "safe.zip", 7, channels=8, layers=2)
    policy, meta = load_policy(tmp_path / "safe.zip", game_id="grid", options={"board_size": 7})
    assert meta["policy"] == {"name": "grid-conv", "net": "256,256", "prior": "none", "prior_weight": 5.0,
                              "sizes": {"channels": 8, "layers": 2}}  # fmt: skip
    with torch.no_grad():
        assert torch.equal(a, policy.action_logits(obs))


def test_mlp_policy_still_acts(tmp_path: Path) -> None:
    """SB3's own MlpPolicy is no network of agents.nets: it loads only as a trusted SB3 zip."""
    env = jericho_env.single_agent("grid", opponents=["random"], seat="random", board_size=7)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.save(str(tmp_path / "m.zip"))
    agent = PPOAgent("grid", path=tmp_path / "m.zip", board_size=7, trust=True)
    obs, masks = observations(7, 20)
    for o, m in zip(obs, masks, strict=True):
        assert m[agent.act({"observation": o, "action_mask": m.astype(np.int8)})]


def test_options_and_game_are_checked_against_the_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="other options"):
        make_model(7, game_options={"board_size": 9})
    with pytest.raises(ValueError, match="GridConvPolicy plays grid only, not 'walls'"):
        make_model(7, game_id="walls")
    model = make_model(7)
    path = tmp_path / "m.zip"
    save(model, path, 7)
    with pytest.raises(ValueError, match="was trained on 'grid', not 'castles'"):
        PPOAgent("castles", path=path)
    with pytest.raises(
        ValueError, match=r"with options \{'board_size': 7, 'obs_version': 0\}; this game has board_size=9"
    ):
        PPOAgent("grid", path=path, board_size=9)


def test_policy_names_build_for_their_games_only() -> None:
    from agents.nets import POLICY_NAMES, build_policy, check_policy, policies_for

    assert policies_for("grid") == ("mlp", "grid-conv", "grid-features", "grid-cells")
    assert policies_for("castles") == ("mlp",) and set(policies_for("walls")) == {"mlp", "walls-mlp"}
    assert set(POLICY_NAMES) == {"mlp", "walls-mlp", "grid-conv", "grid-features", "grid-cells"}
    with pytest.raises(ValueError, match="--policy grid-conv is for grid only, not 'walls'"):
        check_policy("grid-conv", "walls")
    policy, kwargs = build_policy("grid-features", "grid", {"board_size": 9}, "64", "greedy-scores", 3.0)
    assert policy is GridConvPolicy
    assert kwargs == {
        "features": True,
        "game_id": "grid",
        "game_options": {"board_size": 9, "obs_version": 0},
        "prior": "greedy-scores",
        "prior_weight": 3.0,
    }
    _, kwargs = build_policy("walls-mlp", "walls", {}, "64,32")
    assert kwargs["features_extractor_kwargs"] == {
        "features_dim": 64,
        "game_id": "walls",
        "game_options": {"num_players": 4, "obs_version": 0},
    }
    assert kwargs["net_arch"] == [32]
    with pytest.raises(ValueError, match="takes no channels"):
        build_policy("mlp", "castles", {}, "64", channels=8)


@pytest.mark.parametrize("num_actions", [5, 74, 2206])
def test_masked_categorical_is_sb3_contribs_distribution_and_never_samples_a_masked_action(num_actions: int) -> None:
    """The policies' cheaper categorical: same log-probabilities, entropies, mode; samples follow the probabilities."""
    from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution

    from agents.nets.common import MaskedCategorical

    gen = torch.Generator().manual_seed(num_actions)
    logits = torch.randn(32, num_actions, generator=gen) * 3
    masks = torch.rand(32, num_actions, generator=gen) < 0.3
    masks[:, -1] = False  # the last action masked: the inverse CDF must not fall past the last legal one
    masks[torch.arange(32), torch.randint(0, num_actions - 1, (32,), generator=gen)] = True
    ref = MaskableCategoricalDistribution(num_actions).proba_distribution(logits)
    ref.apply_masking(masks)
    ours = MaskedCategorical(logits, masks)
    actions = ref.distribution.sample()
    assert torch.allclose(ref.log_prob(actions), ours.log_prob(actions), atol=1e-5)
    assert torch.allclose(ref.entropy(), ours.entropy(), atol=1e-5)
    assert torch.equal(ref.distribution.probs.argmax(1), ours.probs.argmax(1))
    torch.manual_seed(0)
    draws = torch.stack([ours.sample() for _ in range(50)])  # (50, 32)
    assert masks.gather(1, draws.T).all()
    one_row = MaskedCategorical(logits[:1].expand(4000, -1), masks[:1].expand(4000, -1)).sample()
    assert masks[0, one_row].all()
    freq = torch.bincount(one_row, minlength=num_actions) / 4000
    assert 0.5 * (freq - ours.probs[0]).abs().sum() < 0.08  # total variation: sampling noise only


def test_sampled_rows_follow_their_probabilities_and_never_take_an_impossible_action() -> None:
    from agents.nets.common import sample_rows

    probs = torch.tensor([[0.0, 0.1, 0.2, 0.0, 0.7, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]])
    rows = probs.repeat(50_000, 1)
    drawn = sample_rows(rows, torch.Generator().manual_seed(3))
    first = torch.bincount(drawn[0::2], minlength=6).float() / 50_000
    assert torch.allclose(first, probs[0], atol=0.01) and first[[0, 3, 5]].sum() == 0
    assert (drawn[1::2] == 5).all()
    ones = torch.zeros(4, 9)
    ones[:, 8] = 1.0  # the last action alone: the uniform number never reaches past the row's total
    assert (sample_rows(ones, torch.Generator().manual_seed(0)) == 8).all()
