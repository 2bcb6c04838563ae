"""``grid-cells``: its fixed frontier features agree with greedy's own arithmetic; legal moves get their logits."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import agents
from agents.nets.grid import GridFeatures
from agents.nets.grid_cells import FrontierFeatures, GridCellsNet
from jericho_env.games.grid.state import BASE, POINTS
from jericho_env.registry import make_rules
from tests.greedy_oracles import GridGreedy


def _constant_rate(_progress: float) -> float:
    """A learning-rate schedule for SB3 policies built by hand (sb3 2.9 deprecates ``get_schedule_fn``)."""
    return 3e-4


def positions(count: int, seed: int = 0, board_size: int = 21) -> list[tuple[np.ndarray, np.ndarray]]:
    """(observation, mask) of the seat to move in seeded games of greedy against random."""
    rules = make_rules("grid", board_size=board_size)
    rng = np.random.default_rng(seed)
    greedy = agents.make("greedy", "grid", seed=seed, board_size=board_size)
    out = []
    while len(out) < count:
        state = rules.initial_state(rng)
        while not rules.is_terminal(state) and len(out) < count:
            seat = rules.current_player(state)
            obs, mask = rules.observe(state, seat), rules.legal_mask(state)
            out.append((obs, mask))
            legal = np.flatnonzero(mask)
            move = greedy.act({"observation": obs, "action_mask": mask}) if rng.random() < 0.5 else rng.choice(legal)
            rules.apply(state, int(move))
    return out


@pytest.fixture(scope="module")
def sample() -> list[tuple[np.ndarray, np.ndarray]]:
    return positions(300)


def test_frontier_features_match_greedys_reading_of_the_table(sample: list[tuple[np.ndarray, np.ndarray]]) -> None:
    rules = make_rules("grid")
    greedy = GridGreedy(agents.make("greedy", "grid"))  # greedy's readable version: its reading of the table
    features = FrontierFeatures(21, rules.layout, 64)
    dense = GridFeatures(21, rules.layout)
    obs = torch.as_tensor(np.stack([o for o, _ in sample]))
    with torch.no_grad():
        idx, valid, x = features(obs)
        planes = dense(obs).flatten(2)  # (b, 6, cells)
    checked = 0
    for j, (o, _) in enumerate(sample):
        hand, table, _, _, _ = greedy.read(o)
        frontier = greedy.frontier(table)
        cells = [int(c) for c, v in zip(idx[j], valid[j], strict=True) if v > 0.5]
        assert set(cells) == set(frontier)  # every empty cell beside the table, and nothing else
        for k, cell in enumerate(idx[j].tolist()):
            if valid[j, k] < 0.5:
                continue
            taken = [q for q in greedy.captured_by(table, cell) if q != cell]
            assert x[j, k, 0].item() * 30 == pytest.approx(sum(POINTS[table[q]] for q in taken), abs=1e-4)
            around = [table.get(q) for q in greedy.nb[cell]]
            assert x[j, k, 11].item() * 4 == pytest.approx(sum(c is not None for c in around))
            assert x[j, k, 1].item() == (1.0 if all(c is not None for c in around) else 0.0)
            # the fit shares are GridFeatures' planes at that cell
            assert x[j, k, 6].item() == pytest.approx(planes[j, 1, cell].item(), abs=1e-5)
            assert x[j, k, 7].item() == pytest.approx(planes[j, 2, cell].item(), abs=1e-5)
            # a card of our hand fits if it matches every face-up neighbour by suit or rank
            fits = sum(all(c in (None, BASE) or c // 13 == h // 13 or c % 13 == h % 13 for c in around) for h in hand)
            assert x[j, k, 7].item() * 5 == pytest.approx(fits, abs=1e-4)
            checked += 1
    assert checked > 3000


def test_every_legal_placement_gets_the_logit_of_its_cell(sample: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """Legal placements lie on gathered cells, so their logits come from the network (not the filler zero)."""
    torch.manual_seed(0)
    net = GridCellsNet({})
    for head in (net.cell_embed, net.slot_mlp[-1]):  # bigger weights than the near-uniform start, to see them
        torch.nn.init.normal_(head.weight, std=1.0)
    obs = torch.as_tensor(np.stack([o for o, _ in sample]))
    with torch.no_grad():
        logits, values = net(obs)
    assert logits.shape == (len(sample), 5 * 441 + 1) and values.shape == (len(sample), 1)
    for j, (_, mask) in enumerate(sample):
        legal = np.flatnonzero(mask[:-1])
        assert np.all(logits[j, legal].numpy() != 0.0)


def test_the_policy_trains_saves_and_plays(tmp_path: object) -> None:
    from sb3_contrib import MaskablePPO

    from agents.checkpoint import CheckpointMeta, PolicySpec, attach_meta, save_checkpoint
    from agents.nets import build_policy
    from jericho_env.envs.sb3 import SelfPlayVecEnv

    venv = SelfPlayVecEnv("grid", 8, seed=0, board_size=11)
    policy, kwargs = build_policy("grid-cells", "grid", {"board_size": 11}, "64")
    model = MaskablePPO(policy, venv, n_steps=16, batch_size=64, n_epochs=1, policy_kwargs=kwargs, device="cpu")
    model.learn(256)
    path = f"{tmp_path}/cells.zip"
    meta = CheckpointMeta("grid", {"board_size": 11}, PolicySpec("grid-cells", "64", "none", 5.0))
    save_checkpoint(attach_meta(model, meta), path)  # the safe format: JSON and tensors only
    agent = agents.make("ppo", "grid", path=path, board_size=11)
    (obs, mask), *_ = positions(1, board_size=11)
    assert mask[agent.act({"observation": obs, "action_mask": mask})] == 1


@pytest.mark.parametrize("prior", ["none", "greedy-scores"])
def test_the_policy_normalises_over_the_frontier_as_over_every_action(
    sample: list[tuple[np.ndarray, np.ndarray]], prior: str
) -> None:
    """``forward`` and ``evaluate_actions`` on the gathered actions give the full masked distribution's numbers."""
    import gymnasium as gym

    from agents.nets.grid_cells import GridCellsPolicy

    torch.manual_seed(1)
    n = 5 * 441 + 1
    hint = n if prior != "none" else 0
    size = sample[0][0].size + hint
    space = gym.spaces.Box(-np.inf, np.inf, (size,), np.float32)
    policy = GridCellsPolicy(space, gym.spaces.Discrete(n), _constant_rate, prior=prior)
    for head in (policy.body.cell_embed, policy.body.slot_mlp[-1], policy.body.stop_head[-1]):
        torch.nn.init.normal_(head.weight, std=1.0)  # far from uniform, so a wrong normalisation shows
    rng = np.random.default_rng(3)
    rows = [np.concatenate([o, rng.random(hint, dtype=np.float32) * (rng.random(hint) < 0.2)]) for o, _ in sample[:64]]
    obs = torch.as_tensor(np.stack(rows))
    masks = np.stack([m for _, m in sample[:64]]).astype(bool)
    assert policy._compact(obs, masks) is not None
    with torch.no_grad():
        actions, values, log_prob = policy(obs, action_masks=masks)
        full = policy._distribution(policy.action_logits(obs), masks)
        assert masks[np.arange(64), actions.numpy()].all()
        assert torch.allclose(log_prob, full.log_prob(actions), atol=1e-5)
        chosen, _, _ = policy(obs, deterministic=True, action_masks=masks)
        assert torch.equal(chosen, full.get_actions(deterministic=True))
        legal = torch.as_tensor(np.stack([rng.choice(np.flatnonzero(m)) for m in masks]))
        v, lp, ent = policy.evaluate_actions(obs, legal, torch.as_tensor(masks))
        assert torch.allclose(lp, full.log_prob(legal), atol=1e-5)
        assert torch.allclose(ent, full.entropy(), atol=1e-5)
        assert torch.allclose(v, values)
        # a legal action outside the gathered cells (a mask no grid position has): the full path is taken
        odd = masks.copy()
        odd[0, 440] = True  # slot 0 on the window's last corner cell, never beside a table near the base
        assert policy._compact(obs, odd) is None
        _, lp_odd, _ = policy.evaluate_actions(obs, legal, torch.as_tensor(odd))
        full_odd = policy._distribution(policy.action_logits(obs), odd)
        assert torch.allclose(lp_odd, full_odd.log_prob(legal), atol=1e-5)


def test_a_batched_opponent_on_grid_cells_chooses_as_on_every_action(
    sample: list[tuple[np.ndarray, np.ndarray]],
) -> None:
    import gymnasium as gym

    from agents.batch import NetworkBatchPolicy
    from agents.nets.grid_cells import GridCellsPolicy

    torch.manual_seed(2)
    n = 5 * 441 + 1
    space = gym.spaces.Box(-np.inf, np.inf, (sample[0][0].size,), np.float32)
    policy = GridCellsPolicy(space, gym.spaces.Discrete(n), _constant_rate)
    for head in (policy.body.cell_embed, policy.body.slot_mlp[-1], policy.body.stop_head[-1]):
        torch.nn.init.normal_(head.weight, std=1.0)
    obs = np.stack([o for o, _ in sample])
    masks = np.stack([m for _, m in sample]).astype(bool)
    with torch.no_grad():
        logits = policy.action_logits(torch.as_tensor(obs)).masked_fill(~torch.as_tensor(masks), float("-inf"))
    chosen = NetworkBatchPolicy(policy, deterministic=True)(obs, masks)
    assert np.array_equal(chosen, logits.argmax(dim=1).numpy())
    sampled = NetworkBatchPolicy(policy, seed=0)(np.repeat(obs[:1], 4000, 0), np.repeat(masks[:1], 4000, 0))
    assert masks[0, sampled].all()
    freq = np.bincount(sampled, minlength=n) / 4000
    probs = torch.softmax(logits[0], dim=0).numpy()
    assert np.abs(freq - probs).max() < 0.04


def test_the_policy_deep_copies_after_a_training_pass_on_the_full_path(
    sample: list[tuple[np.ndarray, np.ndarray]],
) -> None:
    """A snapshot is ``copy.deepcopy(policy)``: no tensor of a graph may stay on the policy after a pass."""
    import copy

    import gymnasium as gym

    from agents.nets.grid_cells import GridCellsPolicy

    n = 5 * 441 + 1
    space = gym.spaces.Box(-np.inf, np.inf, (sample[0][0].size,), np.float32)
    policy = GridCellsPolicy(space, gym.spaces.Discrete(n), _constant_rate)
    obs = torch.as_tensor(np.stack([o for o, _ in sample[:8]]))
    masks = np.stack([m for _, m in sample[:8]]).astype(bool)
    masks[:, 440] = True  # off the frontier: the full path
    legal = torch.as_tensor([np.flatnonzero(m)[0] for m in masks])
    _, log_prob, _ = policy.evaluate_actions(obs, legal, torch.as_tensor(masks))
    log_prob.sum().backward()
    copy.deepcopy(policy)
