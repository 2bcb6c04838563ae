"""The ``ismcts`` agent: legal play through ``act``, its information view, no peeking, no side effects, specs."""

from __future__ import annotations

import io
import tracemalloc

import numpy as np
import pytest

import agents
import jericho_env
from agents.registry import parse_budget, parse_spec
from agents.search.engine import ISMCTS
from agents.search.ismcts import ISMCTSAgent
from experiments.evaluate import main as evaluate_main
from experiments.play.tournament import play_game
from jericho_env.agent_plugins import choose_action
from jericho_env.envs.aec import JerichoEnv

GAMES = [("castles", {}), ("grid", {"board_size": 9}), ("walls", {"num_players": 3})]


def _mid_game(game: str, options: dict[str, object], steps: int, seed: int) -> JerichoEnv:
    env = JerichoEnv(game, **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rules = env.rules
    for _ in range(steps):
        if rules.is_terminal(env.state):
            break
        legal = rules.legal_actions(env.state)
        env.step(legal[int(rng.integers(len(legal)))])
    return env


@pytest.mark.parametrize(("game", "options"), GAMES)
def test_ismcts_plays_whole_games_with_legal_moves(game: str, options: dict[str, object]) -> None:
    env = JerichoEnv(game, **options)
    n = env.rules.info.num_players
    seats = [agents.make("ismcts", game, simulations=20, **options)] + [
        agents.make("random", game, **options) for _ in range(n - 1)
    ]
    returns, steps = play_game(env, seats, env_seed=3, agent_seeds=list(range(n)))
    assert env.rules.is_terminal(env.state) and steps > 0 and len(returns) == n


@pytest.mark.parametrize(("game", "options"), GAMES)
def test_search_never_changes_the_env_it_plays_in(game: str, options: dict[str, object]) -> None:
    env = _mid_game(game, options, 12, seed=5)
    agent = agents.make("ismcts", game, simulations=30, seed=1, **options)
    agent_id = env.agent_selection
    before = env.rules.to_dict(env.state)
    action = choose_action(agent, env, agent_id)
    assert env.rules.to_dict(env.state) == before
    assert env.observe(agent_id)["action_mask"][action] == 1


@pytest.mark.parametrize(("game", "options"), GAMES)
@pytest.mark.parametrize("rollout", ["random", "greedy"])
def test_choice_is_unchanged_when_hidden_cards_are_swapped(game: str, options: dict[str, object], rollout: str) -> None:
    """Two envs that differ only in cards the mover cannot see: same view, same choice (same seeds)."""
    for seed in range(3):
        env = _mid_game(game, options, 10 + seed, seed=20 + seed)
        rules = env.rules
        if rules.is_terminal(env.state):
            continue
        seat = rules.current_player(env.state)
        twin = JerichoEnv(game, **options)
        twin.reset(seed=20 + seed)
        twin.state = rules.determinize(env.state, seat, np.random.default_rng(99 + seed))  # hidden cards moved
        twin.agent_selection, twin._mask = env.agent_selection, None
        assert rules.to_dict(twin.state) != rules.to_dict(env.state)
        choices = []
        for e in (env, twin):
            e._view_rng = np.random.default_rng(7)
            agent = agents.make("ismcts", game, simulations=25, rollout=rollout, seed=3, **options)
            choices.append(choose_action(agent, e, e.possible_agents[seat]))
        assert choices[0] == choices[1]


def test_ismcts_needs_a_matching_view() -> None:
    env = _mid_game("castles", {}, 8, seed=1)
    agent = ISMCTSAgent("castles", simulations=10)
    obs = env.observe(env.agent_selection)
    if obs["action_mask"].sum() > 1:
        with pytest.raises(ValueError, match="information view"):
            agent.act(obs)
        other = env.rules.initial_state(np.random.default_rng(0))
        agent.observe_view(other)
        with pytest.raises(ValueError, match="does not match"):
            agent.act(obs)


def test_budgets_and_specs() -> None:
    assert parse_budget("300") == {"simulations": 300}
    assert parse_budget("0.5s") == {"time_limit": 0.5}
    assert parse_budget("300,0.5s,rollout=greedy,uct_c=1.2") == {
        "simulations": 300,
        "time_limit": 0.5,
        "rollout": "greedy",
        "uct_c": 1.2,
    }
    assert parse_spec("ismcts") == ("ismcts", "ismcts", {})
    assert parse_spec("fast:ismcts=50") == ("fast", "ismcts", {"simulations": 50})
    with pytest.raises(ValueError, match="bad ismcts setting"):
        parse_budget("depth=3")
    with pytest.raises(ValueError, match="rollout"):
        ISMCTSAgent("castles", rollout="smart")
    with pytest.raises(ValueError, match="budget"):
        ISMCTS(jericho_env.make_rules("castles"), simulations=None, time_limit=None)


def test_a_time_budget_alone_ends_the_search() -> None:
    """With only a time budget the search stops by itself, after at least one simulation."""
    for steps in range(8, 30):
        env = _mid_game("castles", {}, steps, seed=4)
        if env.observe(env.agent_selection)["action_mask"].sum() > 1:
            break
    agent = agents.make("ismcts", "castles", time_limit=0.02, simulations=None)
    choose_action(agent, env, env.agent_selection)
    assert agent.search.last_simulations >= 1


def test_memory_of_one_search_is_small() -> None:
    """One grid move at 200 simulations allocates well under a laptop's memory (figures: docs/results.md)."""
    env = _mid_game("grid", {}, 12, seed=6)
    agent = agents.make("ismcts", "grid", simulations=200)
    tracemalloc.start()
    choose_action(agent, env, env.agent_selection)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 200 * 2**20


def test_evaluate_cli_runs_ismcts_with_budgets(tmp_path: object) -> None:
    agents_ = ["random", "ismcts=10", "quick:ismcts=5,rollout=greedy"]
    argv = ["castles", "--agents", *agents_, "--deals", "1", "--out", str(tmp_path), "--no-plot", "--quiet"]
    assert evaluate_main(argv) == 0


def test_terminal_play_against_ismcts() -> None:
    """``python -m jericho_env.play`` with an ismcts opponent: the human types moves until the game ends."""
    from jericho_env import play

    out = io.StringIO()
    code = play.main(["castles", "--opponent", "ismcts=5", "--seed", "3"], stdin=io.StringIO("1\n" * 400), stdout=out)
    text = out.getvalue()
    assert code == 0, text[-2000:]
    assert "opponents: ismcts" in text and "player_1 plays" in text and "== game over ==" in text
