"""The OpenSpiel bridge: pyspiel's random-simulation checks, evaluate_bots, resampling, ISMCTSBot, no stray imports."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="the openspiel extra is not installed: pip install -e .[openspiel]")

import jericho_env.openspiel as bridge  # noqa: E402  (after the check above)
from jericho_env import make_rules  # noqa: E402

CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("grid", {}),
    ("castles", {}),
    ("castles", {"ranks": 5}),
    ("castles", {"ranks": 13}),
    ("castles", {"small_deck": True}),
    ("castles", {"reversed_order": True}),
    ("walls", {"num_players": 3}),
    ("walls", {"num_players": 4}),
    ("walls", {"num_players": 5}),
]


@pytest.mark.parametrize(("game_id", "params"), CONFIGS, ids=str)
def test_pyspiel_random_sim_test_with_serialization(game_id: str, params: dict[str, Any]) -> None:
    game = bridge.load_game(game_id, **params)
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)


def test_games_are_registered_with_their_options_as_parameters() -> None:
    names = {g.short_name for g in pyspiel.registered_games()}
    assert {"jericho_grid", "jericho_walls", "jericho_castles"} <= names
    game = pyspiel.load_game("jericho_castles(ranks=5,small_deck=True)")
    rules = make_rules("castles", ranks=5, small_deck=True)
    assert game.num_distinct_actions() == rules.info.num_actions
    assert game.observation_tensor_size() == rules.info.observation_size
    assert game.information_state_tensor_size() == rules.info.observation_size
    assert pyspiel.load_game("jericho_walls(num_players=3)").num_players() == 3
    with pytest.raises(Exception, match="ranks"):
        pyspiel.load_game("jericho_castles(ranks=7)")


def test_the_deal_is_chance_nodes_and_the_tensors_are_our_observations() -> None:
    game = bridge.load_game("grid")
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    chance_nodes = 0
    while state.is_chance_node():
        outcomes = state.chance_outcomes()
        assert abs(sum(p for _, p in outcomes) - 1.0) < 1e-9
        state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
        chance_nodes += 1
    assert chance_nodes == 52  # 51 Fisher-Yates swaps of the deck, then the first player
    rules = make_rules("grid")
    for p in range(2):
        assert np.array_equal(np.array(state.observation_tensor(p), np.float32), rules.observe(state.inner, p))
        assert np.array_equal(np.array(state.information_state_tensor(p), np.float32), rules.observe(state.inner, p))
    assert state.observation_string(0) == rules.render_text(state.inner, 0)


@pytest.mark.parametrize(("game_id", "params"), [CONFIGS[0], CONFIGS[1], CONFIGS[7]], ids=str)
def test_resample_from_infostate_keeps_the_players_information_state(game_id: str, params: dict[str, Any]) -> None:
    game = bridge.load_game(game_id, **params)
    rng = np.random.default_rng(1)
    state = game.new_initial_state()
    steps = 0
    while not state.is_terminal() and steps < 120:
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
            continue
        if steps % 7 == 0:
            player = state.current_player()
            before = str(state)
            other = state.resample_from_infostate(player, pyspiel.UniformProbabilitySampler(0.0, 1.0))
            assert str(state) == before
            assert other.information_state_string(player) == state.information_state_string(player)
            assert other.observation_tensor(player) == state.observation_tensor(player)
            assert other.legal_actions() == state.legal_actions()
        legal = state.legal_actions()
        state.apply_action(legal[int(rng.integers(len(legal)))])
        steps += 1


@pytest.mark.parametrize(("game_id", "params"), [("castles", {}), ("grid", {"board_size": 9}), ("walls", {})], ids=str)
def test_evaluate_bots_with_ismcts_and_random(game_id: str, params: dict[str, Any]) -> None:
    from open_spiel.python.algorithms import evaluate_bots

    game = bridge.load_game(game_id, **params)
    n = game.num_players()
    bots = [bridge.make_ismcts_bot(game, simulations=10, seed=1)]
    bots += [pyspiel.make_uniform_random_bot(p, 10 + p) for p in range(1, n)]
    returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(2))
    assert len(returns) == n and abs(sum(returns)) < 1e-9


def test_ismcts_agent_with_the_openspiel_backend_plays_legal_moves() -> None:
    import agents
    from experiments.play.tournament import play_game
    from jericho_env.envs.aec import JerichoEnv

    env = JerichoEnv("castles")
    seats = [agents.make("ismcts", "castles", simulations=10, backend="openspiel"), agents.make("random", "castles")]
    returns, steps = play_game(env, seats, env_seed=1, agent_seeds=[0, 1])
    assert steps > 0 and sorted(returns) == [-1.0, 1.0]
    with pytest.raises(ValueError, match="simulation budget"):
        agents.make("ismcts", "castles", time_limit=0.1, backend="openspiel")


def test_nothing_but_the_bridge_imports_pyspiel() -> None:
    """The engine, the agents and the experiments load without pyspiel (the bridge is the only importer)."""
    code = (
        "import sys, jericho_env, jericho_env.play, jericho_env.envs.single, agents, agents.search.ismcts, "
        "experiments.evaluate; sys.exit(1 if 'pyspiel' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
