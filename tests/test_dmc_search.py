"""``dmc-search``: a dmc network's Q as the prior and value of information-set PUCT."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
from agents.dmc import DmcAgent, QEvaluator, legal_q
from agents.registry import parse_spec
from experiments.play.tournament import play_game
from jericho_env.envs.aec import JerichoEnv
from tests.dmc_helpers import random_networks

GAMES = [("castles", {}), ("grid", {"board_size": 9})]


def _positions(game: str, options: dict[str, Any], count: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the seat to move at positions of random games."""
    env = JerichoEnv(game, **options)
    rng = np.random.default_rng(3)
    obs, masks = [], []
    seed = 0
    while len(obs) < count:
        env.reset(seed=seed)
        seed += 1
        for _ in range(int(rng.integers(0, 12))):
            if env.rules.is_terminal(env.state):
                break
            legal = env.rules.legal_actions(env.state)
            env.step(legal[int(rng.integers(len(legal)))])
        if env.rules.is_terminal(env.state):
            continue
        o = env.observe(env.agent_selection)
        obs.append(o["observation"])
        masks.append(o["action_mask"].astype(bool))
    return np.stack(obs).astype(np.float32), np.stack(masks)


@pytest.mark.parametrize(("game", "options"), GAMES)
@pytest.mark.parametrize("members", [1, 2])
def test_the_prior_is_the_softmax_of_legal_q_and_the_value_the_highest(
    game: str, options: dict[str, Any], members: int, tmp_path: Path
) -> None:
    """Priors: softmax(Q / T) over the legal actions, nothing elsewhere; values: the Q of the agent's own move."""
    paths = random_networks(game, options, tmp_path, members)
    agent = DmcAgent(game, path="+".join(str(p) for p in paths), **options)
    obs, masks = _positions(game, options)
    q = legal_q(agent.plan, obs, masks)
    assert np.all(np.isfinite(q[masks])) and np.all(q[~masks] == -np.inf)
    moves, best = agent.plan.best_values(obs, masks)
    np.testing.assert_array_equal(q.argmax(axis=1), moves)
    np.testing.assert_allclose(q.max(axis=1), best, rtol=1e-5, atol=1e-6)
    for temperature in (0.05, 1.0):
        priors, values = QEvaluator(agent.plan, temperature)(obs, masks, np.ones(len(obs), bool))
        np.testing.assert_allclose(values, best, rtol=1e-5, atol=1e-6)
        assert np.all(priors[~masks] == 0)
        np.testing.assert_allclose(priors.sum(axis=1), 1.0, rtol=1e-5)
        for j in range(len(obs)):
            legal = np.flatnonzero(masks[j])
            z = np.exp((q[j, legal] - q[j, legal].max()) / temperature)
            np.testing.assert_allclose(priors[j, legal], z / z.sum(), rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match="seat to move"):
        QEvaluator(agent.plan)(obs, masks, np.zeros(len(obs), bool))


@pytest.mark.parametrize(("game", "options"), GAMES)
def test_dmc_search_plays_whole_games_and_its_batch_policy_plays_as_act(
    game: str, options: dict[str, Any], tmp_path: Path
) -> None:
    """Whole games against random with legal moves; the batch hook's choice for one row is ``act``'s."""
    path = random_networks(game, options, tmp_path, 1)[0]
    agent = agents.make("dmc-search", game, path=str(path), simulations=8, seed=1, **options)
    env = JerichoEnv(game, **options)
    for seed in range(2):
        returns, steps = play_game(env, [agent, agents.make("random", game, **options)], seed, [seed, seed + 1])
        assert steps > 0 and len(returns) == 2
    env.reset(seed=7)
    for _ in range(3):
        env.step(env.rules.legal_actions(env.state)[0])
    view = env.information_view(env.agent_selection)
    observation = env.observe(env.agent_selection)
    policy = agent.batch_policy()
    agent.reset(5)
    policy.observe_views([view])
    batched = int(policy(None, observation["action_mask"][None].astype(bool))[0])
    agent.reset(5)
    agent.observe_view(view)
    assert batched == agent.act(observation) and observation["action_mask"][batched]


def test_dmc_search_plays_the_zoo_network_without_a_path() -> None:
    agent = agents.make("dmc-search", "castles", simulations=4)
    assert agent.path is not None and agent.path.endswith("castles-dmc.zip")


def test_bad_settings_and_games_are_refused_naming_what_is_allowed(tmp_path: Path) -> None:
    path = random_networks("castles", {}, tmp_path, 1)[0]
    with pytest.raises(ValueError, match="two-player zero-sum"):
        agents.make("dmc-search", "walls", path=str(path))
    for bad, message in (({"search": "rollouts", "temperature": 0}, "temperature must"),
                         ({"simulations": 0}, "simulations must"),
                         ({"search": "mcts"}, "search='mcts' is not allowed")):  # fmt: skip
        with pytest.raises(ValueError, match=f"^dmc-search: {message}"):  # its own name, not exit-search's
            agents.make("dmc-search", "castles", path=str(path), **bad)
    for bad in (0, -1.0, float("nan"), float("inf"), True, "0.1"):
        with pytest.raises(ValueError, match="prior_temperature must be a finite number above 0"):
            agents.make("dmc-search", "castles", path=str(path), prior_temperature=bad)
    assert parse_spec(f"dmc-search=path={path},prior_temperature=0.05,simulations=20") == (
        "dmc-search",
        "dmc-search",
        {"path": str(path), "prior_temperature": 0.05, "simulations": 20},
    )
    assert parse_spec(f"dmc-search={path}")[2] == {"path": str(path)}
    with pytest.raises(ValueError, match=r"dmc-search: 'depth=3' is not a setting.*prior_temperature"):
        parse_spec("dmc-search=depth=3")
    with pytest.raises(ValueError, match="prior_temperature"):
        parse_spec("exit-search=prior_temperature=0.1")  # exit-search's prior is its policy's


def test_a_zoo_network_learned_against_greedy_is_refused_and_not_offered() -> None:
    """grid's zoo network learned against greedy: its Q is no zero-sum value, so no dmc-search without a path."""
    from agents.registry import playable_names

    with pytest.raises(ValueError, match=r"learned against greedy .*give path= a network learned in self-play"):
        agents.make("dmc-search", "grid")
    assert "dmc-search" not in playable_names("grid") and "dmc" in playable_names("grid")
    assert "dmc-search" in playable_names("castles") and "dmc-search" not in playable_names("walls")
