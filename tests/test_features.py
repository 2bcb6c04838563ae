"""The fixed feature layers of the grid and walls networks agree with the rules and the greedy agents."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import agents
import jericho_env
from agents.nets.grid import GridConvNet, GridFeatures
from agents.nets.walls import WallsExtractor, WallsFeatures, walls_num_players
from jericho_env.games.grid.state import BASE, POINTS
from jericho_env.games.walls.state import LENGTH_AT, WALL_STRIDE
from jericho_env.registry import make_rules
from tests.greedy_oracles import GridGreedy
from tests.helpers import play_out


def test_grid_planes_match_greedys_arithmetic() -> None:
    """Capture points and unseen cards that fit, per frontier cell, as greedy-capture computes them."""
    layout = make_rules("grid").layout
    planes = GridFeatures(21, layout)
    greedy = agents.make("greedy", "grid", seed=0)
    reading = GridGreedy(greedy)  # greedy's readable version: its reading of the table
    env = jericho_env.make("grid")
    checked = 0

    def check(_: str, obs: dict[str, np.ndarray]) -> int:
        nonlocal checked
        x = obs["observation"]
        hand, table, unseen, _, _ = reading.read(x)
        f = planes(torch.as_tensor(x)[None])[0].numpy()
        front = reading.frontier(table)
        for cell in range(21 * 21):
            r, c = divmod(cell, 21)
            if cell not in front:
                assert not f[:, r, c].any(), "planes are zero off the frontier"
                continue
            points = 0
            for q in reading.nb[cell]:
                card = table.get(q)
                sides = reading.nb[q]
                if card is not None and card != BASE and len(sides) == 4 and sum(s in table for s in sides) == 3:
                    points += POINTS[card]
            allowed = reading.allowed(table, cell)
            assert f[0, r, c] * 30 == pytest.approx(points, abs=1e-4)
            assert f[1, r, c] * unseen.bit_count() == pytest.approx((allowed & unseen).bit_count(), abs=1e-3)
            mine = sum(1 for h in hand if allowed >> h & 1)
            assert f[2, r, c] * 5 == pytest.approx(mine, abs=1e-4)
            checked += 1
        return greedy.act(obs)

    for seed in range(2):
        env.reset(seed=seed)
        play_out(env, check)
    assert checked > 1000


def test_grid_features_network_shapes() -> None:
    net = GridConvNet({"board_size": 7}, features=True)
    assert net.side == 7 and net.observation_size == make_rules("grid", board_size=7).layout.size
    logits, values = net(torch.zeros(3, make_rules("grid", board_size=7).layout.size))
    assert logits.shape == (3, 5 * 49 + 1) and values.shape == (3, 1)


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_walls_features_follow_the_walls(num_players: int) -> None:
    rules = make_rules("walls", num_players=num_players)
    assert walls_num_players(rules.layout.size) == num_players  # how checkpoints without options find it
    feats = WallsFeatures({"num_players": num_players})
    assert feats.n == num_players and feats.observation_size == rules.layout.size
    env = jericho_env.make("walls", num_players=num_players)
    env.reset(seed=num_players)
    rng = np.random.default_rng(0)

    def check(name: str, obs: dict[str, np.ndarray]) -> int:
        seat = env.possible_agents.index(name)
        state = env.unwrapped.state
        order = [(seat + k) % num_players for k in range(num_players)]
        lengths = np.array([[state.walls[o][c * WALL_STRIDE + LENGTH_AT] for c in range(5)] for o in order])
        f = feats(torch.as_tensor(obs["observation"])[None])[0].numpy()
        own, rival = lengths[0], lengths[1:].max(axis=0)
        assert np.allclose(f[0:5], np.clip((own - rival) / 20, -1, 1), atol=1e-5)
        assert (f[5:10] == (own > rival)).all()
        assert (f[10:15] == ((own == rival) & (own > 0))).all()
        assert np.allclose(f[15:20] + f[5:10] + f[10:15], 1.0)
        return int(rng.choice(np.flatnonzero(obs["action_mask"])))

    assert play_out(env, check) > 20


def test_walls_extractor_rejects_other_sizes() -> None:
    import gymnasium as gym

    with pytest.raises(ValueError, match="no walls num_players"):
        WallsExtractor(gym.spaces.Box(0, 1, (12,)))  # no options (an old checkpoint): found from the size
    size = make_rules("walls", num_players=3).layout.size
    with pytest.raises(ValueError, match="other options"):
        WallsExtractor(gym.spaces.Box(0, 1, (size,)), game_options={"num_players": 4})
    with pytest.raises(ValueError, match="walls observations only, not 'grid'"):
        WallsExtractor(gym.spaces.Box(0, 1, (size,)), game_id="grid", game_options={})
    assert WallsExtractor(gym.spaces.Box(0, 1, (size,)), game_options={"num_players": 3}).derived.n == 3
