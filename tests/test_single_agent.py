"""The single-agent Gymnasium view: checkers, masks, reward attribution, opponents."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import agents
import jericho_env
from jericho_env.envs.single import IllegalMoveLossWarning

GAMES = [*jericho_env.GAME_IDS, "toy"]


# the checkers step random actions, most of them illegal: the loss's warning is expected there
@pytest.mark.filterwarnings("ignore::jericho_env.envs.single.IllegalMoveLossWarning")
@pytest.mark.parametrize("game", GAMES)
def test_gymnasium_and_sb3_checkers(game: str) -> None:
    check_env(jericho_env.single_agent(game), skip_render_check=True)
    sb3_check_env(jericho_env.single_agent(game))


@pytest.mark.parametrize("game", GAMES)
def test_rewards_are_the_learners_own_return(game: str) -> None:
    """Every episode pays the learner exactly its own seat's return, once, at the end."""
    env = jericho_env.single_agent(game, opponents=[agents.make("random", game)] if game != "toy" else "random")
    rng = np.random.default_rng(0)
    seen = set()
    for ep in range(40):
        obs, info = env.reset(seed=ep)
        assert env.rules.current_player(env.aec.state) == info["seat"] == env.seat
        total, done = 0.0, False
        while not done:
            mask = env.action_masks()
            assert mask.dtype == bool and mask.any()
            assert np.array_equal(obs, env.rules.observe(env.aec.state, env.seat))
            obs, r, done, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            assert not trunc
            if not done:
                assert r == 0.0
            total += r
        returns = env.rules.returns(env.aec.state)
        assert total == returns[env.seat]
        seen.add(np.sign(total))
        assert not env.action_masks().any()
    assert {-1.0, 1.0} <= seen


def test_scripted_win_and_loss_are_attributed_to_the_learner() -> None:
    """Toy game: the learner (seat 0) takes the last token and holds the higher card: +1; else -1."""
    env = jericho_env.single_agent("toy", seat=0)
    for my_card, other, expected in ((9, 0, 1.0), (0, 9, 0.0)):
        env.reset(seed=1)
        env.aec.state = env.rules.from_dict(
            {
                "cards": [my_card, other],
                "deck": [c for c in range(10) if c not in (my_card, other)],
                "pile": 1,
                "to_move": 0,
                "last_taker": -1,
                "history": [],
            }
        )
        _, r, done, _, _ = env.step(0)
        assert done and r == expected  # last token (+1) and card: 2-0 win, or 1-1 draw
    env.reset(seed=1)
    env.aec.state = env.rules.from_dict(
        {"cards": [0, 9], "deck": list(range(1, 9)), "pile": 3, "to_move": 0, "last_taker": -1, "history": []}
    )
    _, r, done, _, _ = env.step(1)  # learner takes 2, opponent must take the last one
    assert done and r == -1.0


def test_fixed_seat_and_random_seat() -> None:
    fixed = jericho_env.single_agent("grid", seat=1)
    assert all(fixed.reset(seed=s)[1]["seat"] == 1 for s in range(5))
    rnd = jericho_env.single_agent("walls", seat="random")
    assert {rnd.reset(seed=s)[1]["seat"] for s in range(40)} == {0, 1, 2, 3}


def test_opponent_pool_is_sampled_per_seat_and_episode() -> None:
    pool = [agents.make("random", "walls"), agents.make("greedy", "walls")]
    env = jericho_env.single_agent("walls", opponents=pool)
    kinds = set()
    for s in range(20):
        env.reset(seed=s)
        assert set(env.opponents) == set(range(4)) - {env.seat}
        kinds |= {type(o).__name__ for o in env.opponents.values()}
    assert len(kinds) == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"illegal_action": "ignore"}, "illegal_action='ignore'"),
        ({"seat": 2}, "seat=2"),
        ({"seat": "left"}, "seat='left'"),
        ({"opponents": 42}, "opponent 42"),
        ({"opponents": []}, "empty"),
    ],
)
def test_bad_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        jericho_env.single_agent("grid", **kwargs)


def test_illegal_action_loses_the_episode_by_default() -> None:
    env = jericho_env.single_agent("grid", seat=0)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.warns(IllegalMoveLossWarning, match="illegal_action='raise'"):
        _, reward, done, trunc, info = env.step(illegal)
    assert done and not trunc and reward == -1.0
    assert "cannot play" in info["illegal_action"]
    assert not env.action_masks().any()
    with pytest.raises(jericho_env.IllegalActionError, match="reset"):
        env.step(0)
    env.reset(seed=1)
    assert env.action_masks().any()


def test_illegal_action_raises_when_asked() -> None:
    env = jericho_env.single_agent("grid", seat=0, illegal_action="raise")
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    before = env.rules.to_dict(env.aec.state)
    with pytest.raises(jericho_env.IllegalActionError):
        env.step(illegal)
    assert env.rules.to_dict(env.aec.state) == before


def test_added_opponents_are_capped_and_the_given_ones_kept() -> None:
    given = [agents.make("random", "grid"), agents.make("greedy", "grid")]
    env = jericho_env.single_agent("grid", opponents=given)
    added = [agents.make("random", "grid", seed=i) for i in range(5)]
    for a in added:
        env.add_opponent(a, max_added=3)
    assert env.pool[:2] == given
    assert env.pool[2:] == added[2:]
