"""The walls greedy agent: legal moves only, the right move in clear positions, and a clear edge over random."""

from __future__ import annotations

import numpy as np
import pytest

import agents
import jericho_env
from agents.greedy.walls import GreedyAgent
from experiments.play.tournament import AgentSpec, run_games, tabulate
from jericho_env.games.walls.actions import WallsActions
from jericho_env.games.walls.cards import COLOURS, TRUMPET, VALUES, str_to_card
from jericho_env.games.walls.rules import WallsRules
from jericho_env.games.walls.state import LENGTH_AT, WALL_STRIDE, Phase, WallsState

ACTIONS = WallsActions()


def obs_of(rules: WallsRules, s: WallsState, seat: int) -> dict[str, np.ndarray]:
    """The observation dict the env would give ``seat``, mask included."""
    mask = np.zeros(rules.info.num_actions, dtype=np.int8)
    if rules.current_player(s) == seat:
        mask[rules.legal_actions(s)] = 1
    return {"observation": rules.observe(s, seat), "action_mask": mask}


def table(n: int, phase: Phase = Phase.PLAY, to_move: int = 0) -> WallsState:
    """An empty mid-game table: nothing dealt, a long pile, ``to_move`` to act."""
    s = WallsState(n)
    s.phase, s.to_move, s.first_player = phase, to_move, 0
    s.deck = [0] * 40
    s.hand_size = [5] * n
    return s


def give(s: WallsState, seat: int, cards: str) -> None:
    """Put ``cards`` (text) into ``seat``'s hand."""
    for t in cards.split():
        s.hands[seat][str_to_card(t)] += 1


def build(s: WallsState, seat: int, cards: str) -> None:
    """Lay wall cards (text, e.g. ``"red-5 red-3"``) on ``seat``'s walls."""
    for t in cards.split():
        card = str_to_card(t)
        base = (card // 5) * WALL_STRIDE
        s.walls[seat][base + card % 5] += 1
        s.walls[seat][base + LENGTH_AT] += VALUES[card % 5]


def fall(s: WallsState, cards: str) -> None:
    """Cards lying face up in the supply."""
    for t in cards.split():
        s.supply_public[str_to_card(t)] += 1
        s.supply_size += 1


@pytest.mark.parametrize("n", [3, 4, 5])
def test_greedy_never_picks_a_masked_action(n: int) -> None:
    env = jericho_env.raw_env("walls", num_players=n)
    seats = [agents.make("greedy" if i % 2 == 0 else "random", "walls", num_players=n, seed=i) for i in range(n)]
    greedy_moves = 0
    for game in range(12):
        env.reset(seed=1000 * n + game)
        for k, agent in enumerate(seats):
            agent.reset(seed=game * 10 + k)
        while not env.rules.is_terminal(env.state):
            seat = env.rules.current_player(env.state)
            obs = env.observe(env.possible_agents[seat])
            action = seats[seat].act(obs)
            assert obs["action_mask"][action] == 1, (seat, action, env.rules.render_text(env.state, seat))
            greedy_moves += seat % 2 == 0
            env.step(action)
    assert greedy_moves > 100 * n


def test_greedy_refuses_an_empty_mask_and_other_games() -> None:
    agent = agents.make("greedy", "walls")
    rules = WallsRules()
    s = table(4, to_move=1)
    give(s, 1, "red-3")
    with pytest.raises(ValueError, match="no legal action"):
        agent.act(obs_of(rules, s, 0))
    with pytest.raises(ValueError, match="plays walls"):
        GreedyAgent("castles")


def test_trumpet_that_knocks_down_the_rivals_top_card_takes_the_majority() -> None:
    rules = WallsRules(num_players=4)
    s = table(4)
    build(s, 0, "red-4")  # ours: red 4
    build(s, 1, "red-5")  # theirs: red 5, the longest; a trumpet on red knocks it down
    build(s, 2, "blue-3")
    fall(s, "red-1 red-3 red-3 red-4")
    give(s, 0, "T brown-3 yellow-3 white-4 blue-1")
    action = agents.make("greedy", "walls", num_players=4).act(obs_of(rules, s, 0))
    assert action == ACTIONS.trumpet(COLOURS.index("red")), rules.describe_short(action)


def test_trumpet_is_not_blown_where_it_would_knock_down_our_own_lead() -> None:
    rules = WallsRules(num_players=4)
    s = table(4)
    build(s, 0, "red-5")  # our lead in red stands on the 5: a trumpet on red would hand red to seat 1
    build(s, 1, "red-4")
    fall(s, "red-1 red-3 red-3 red-4")
    give(s, 0, "T brown-3 yellow-3")
    action = agents.make("greedy", "walls", num_players=4).act(obs_of(rules, s, 0))
    assert action != ACTIONS.trumpet(COLOURS.index("red")), rules.describe_short(action)


def test_greedy_builds_the_colour_where_it_can_take_the_majority() -> None:
    rules = WallsRules(num_players=4)
    s = table(4)
    build(s, 0, "blue-3")
    build(s, 1, "blue-5")  # 5 against our 3: our blue-4 makes 7 and takes the blue supply
    build(s, 2, "red-7")
    fall(s, "blue-1 blue-3 blue-4 blue-4")
    give(s, 0, "blue-4 brown-3 yellow-5 white-7")
    action = agents.make("greedy", "walls", num_players=4).act(obs_of(rules, s, 0))
    assert action == ACTIONS.build(str_to_card("blue-4")), rules.describe_short(action)


def test_greedy_feeds_the_supply_in_a_colour_it_leads() -> None:
    rules = WallsRules(num_players=3)
    s = table(3)
    build(s, 0, "yellow-5 yellow-4")  # a safe lead in yellow, nothing to gain by building
    build(s, 1, "red-7 blue-5")
    give(s, 0, "yellow-7 red-3 blue-3")
    action = agents.make("greedy", "walls", num_players=3).act(obs_of(rules, s, 0))
    assert action == ACTIONS.supply(str_to_card("yellow-7")), rules.describe_short(action)


def test_donation_goes_to_a_colour_this_seat_leads() -> None:
    rules = WallsRules(num_players=4)
    s = table(4, phase=Phase.DONATE, to_move=2)
    s.phase_left, s.scored = 4, 1
    build(s, 2, "white-5 white-3")
    build(s, 0, "red-7")
    build(s, 3, "blue-4")
    give(s, 2, "red-3 blue-3 white-4 T")
    action = agents.make("greedy", "walls", num_players=4).act(obs_of(rules, s, 2))
    assert action == ACTIONS.supply(str_to_card("white-4")), rules.describe_short(action)


def test_opening_wall_card_comes_from_the_strongest_colour_of_the_hand() -> None:
    rules = WallsRules(num_players=4)
    s = WallsState(4)
    s.hand_size = [7] * 4
    s.deck = [0] * 40
    give(s, 0, "red-5 red-4 red-1 blue-7 yellow-3 T T")
    action = agents.make("greedy", "walls", num_players=4).act(obs_of(rules, s, 0))
    assert action < TRUMPET and action // 5 == COLOURS.index("red"), rules.describe_short(action)


@pytest.mark.parametrize("n", [3, 4])
def test_greedy_alone_beats_a_random_field_significantly(n: int) -> None:
    specs = [AgentSpec("greedy", "greedy"), AgentSpec("random", "random")]
    records = run_games("walls", specs, deals=60, seed=7, options={"num_players": n})
    cell = tabulate(records, ["greedy", "random"])[("greedy", "random")]
    assert cell.games == 60 * n
    # an agent no better than the field wins 1/n of the games (its even share)
    assert cell.interval[0] > 1.0 / n, cell
