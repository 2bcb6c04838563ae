"""``make(game_id, illegal_action=...)``: "raise" leaves the env unchanged, "lose" ends the game zero-sum."""

from __future__ import annotations

from typing import Any

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test

import jericho_env
from jericho_env.core.rules import ActionTypeError, IllegalActionError, OptionError

CASES: list[tuple[str, dict[str, Any]]] = [
    ("grid", {}),
    ("castles", {}),
    ("walls", {"num_players": 3}),
    ("walls", {"num_players": 4}),
    ("walls", {"num_players": 5}),
]
IDS = [g + "".join(f"-{k}={v}" for k, v in o.items()) for g, o in CASES]


def _advance(env: Any, rng: np.random.Generator, moves: int) -> None:
    """Play ``moves`` random legal actions (fewer if the game ends first)."""
    for _ in range(moves):
        obs, _, term, _, _ = env.last()
        if term:
            return
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def _illegal_action(env: Any) -> int:
    mask = env.last()[0]["action_mask"]
    return int(np.flatnonzero(mask == 0)[0])


def _snapshot(env: Any) -> tuple[Any, ...]:
    return (
        env.save_state(),
        env.agent_selection,
        list(env.agents),
        dict(env.rewards),
        dict(env._cumulative_rewards),
        dict(env.terminations),
        {a: env.observe(a)["observation"].tobytes() + env.observe(a)["action_mask"].tobytes() for a in env.agents},
    )


@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
def test_raise_is_the_default_and_leaves_the_env_unchanged(game: str, options: dict[str, Any]) -> None:
    env = jericho_env.make(game, **options)
    env.reset(seed=3)
    _advance(env, np.random.default_rng(0), 7)
    before = _snapshot(env)
    bad = _illegal_action(env)
    with pytest.raises(IllegalActionError, match=f"cannot play {bad}"):
        env.step(bad)
    assert _snapshot(env) == before
    # the agent may retry with a legal action
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))


@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
def test_lose_ends_the_game_offender_minus_one_others_share_the_rest(game: str, options: dict[str, Any]) -> None:
    env = jericho_env.make(game, illegal_action="lose", **options)
    env.reset(seed=5)
    _advance(env, np.random.default_rng(1), 9)
    offender = env.agent_selection
    n = len(env.possible_agents)
    env.step(_illegal_action(env))
    assert all(env.terminations.values())
    assert env.legal_actions() == []
    assert env.infos[offender]["illegal_action"].startswith(f"{offender} cannot play")
    assert "unchanged" not in env.infos[offender]["illegal_action"]
    rewards = {a: env._cumulative_rewards[a] for a in env.possible_agents}
    assert rewards[offender] == -1.0
    for a in env.possible_agents:
        if a != offender:
            assert rewards[a] == pytest.approx(1.0 / (n - 1))
    assert sum(rewards.values()) == pytest.approx(0.0)
    # every agent sees the end through the usual AEC loop: its reward once, a zero mask, then removal
    seen: dict[str, float] = {}
    for agent in env.agent_iter():
        obs, reward, term, _, _ = env.last()
        assert term and not obs["action_mask"].any()
        seen[agent] = reward
        env.step(None)
    assert seen == rewards
    assert env.agents == []


@pytest.mark.parametrize(("game", "options"), CASES[:3], ids=IDS[:3])
def test_lose_still_rejects_malformed_actions_and_legal_play_is_unchanged(game: str, options: dict[str, Any]) -> None:
    lose = jericho_env.make(game, illegal_action="lose", **options)
    ref = jericho_env.make(game, **options)
    for env in (lose, ref):
        env.reset(seed=11)
    with pytest.raises(ActionTypeError):
        lose.step(10**6)
    with pytest.raises(ActionTypeError):
        lose.step("1")
    rng = np.random.default_rng(2)
    for agent in ref.agent_iter():
        obs, reward, term, _, _ = ref.last()
        obs2, reward2, term2, _, _ = lose.last()
        assert agent == lose.agent_selection and reward == reward2 and term == term2
        assert np.array_equal(obs["observation"], obs2["observation"])
        action = None if term else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        ref.step(action)
        lose.step(action)
    assert lose.agents == []


def test_lose_passes_api_test_and_reset_starts_a_fresh_game() -> None:
    env = jericho_env.make("castles", illegal_action="lose")
    api_test(env, num_cycles=200)
    env.reset(seed=0)
    env.step(_illegal_action(env))
    env.reset(seed=0)
    assert not any(env.terminations.values()) and env.legal_actions()


def test_option_through_pettingzoo_registry_and_bad_value() -> None:
    if not hasattr(pettingzoo, "make"):
        pytest.fail("this PettingZoo has no registry; the project requires one (pettingzoo>=1.25)")
    env = pettingzoo.make("aec", "jericho/castles-v0", illegal_action="lose")
    env.reset(seed=0)
    env.step(_illegal_action(env))
    assert all(env.terminations.values())
    with pytest.raises(OptionError, match="illegal_action='forfeit' is not allowed: use one of raise, lose"):
        jericho_env.make("grid", illegal_action="forfeit")
