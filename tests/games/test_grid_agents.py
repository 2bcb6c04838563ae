"""grid: the greedy-capture agent (scripted observations, legality, strength) and the image rendering."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import agents
from agents.greedy.grid import GreedyAgent
from experiments.play.tournament import AgentSpec, run_games, tabulate
from jericho_env.core.cards import card_to_str, str_to_card
from jericho_env.games.grid.rules import GridRules
from jericho_env.games.grid.state import COMPAT, GridState, capturing_cells

RULES = GridRules()


def obs_of(rules: GridRules, state: GridState) -> dict[str, np.ndarray]:
    """The observation dict of the seat to move, as the env gives it."""
    return {"observation": rules.observe(state, state.to_move), "action_mask": rules.legal_mask(state)}


def position(
    table: dict[str, str],
    hand: list[str],
    opp_hand: list[str] | None = None,
    discard: list[str] | None = None,
    rules: GridRules = RULES,
) -> GridState:
    """A start-of-turn position for player 0: the given table, hands and discard; every other card in the draw."""
    used = {*table.values(), *hand, *(opp_hand or []), *(discard or [])}
    rest = [card_to_str(c) for c in range(52) if card_to_str(c) not in used]
    opp = opp_hand if opp_hand is not None else rest[:5]
    rest = [c for c in rest if c not in opp]
    data: dict[str, Any] = {
        "board_size": rules.board.size,
        "base": rest[0],
        "table": table,
        "hands": [hand, opp],
        "draw_bottom_to_top": rest[1:],
        "discard": discard or [],
        "captured": [[], []],
        "to_move": 0,
        "in_chain": False,
        "passes_in_row": 0,
        "last_pass": [False, False],
        "history": [[], []],  # nothing known of the hands
    }
    return rules.from_dict(data, strict=False)  # hand-made: need not be reachable by play


def action(rules: GridRules, state: GridState, text: str) -> int:
    """The legal action named ``text`` (e.g. ``"5d@-1,-1"``)."""
    return rules.str_to_action(state, text)


def unseen_mask(state: GridState, seat: int) -> int:
    """Cards ``seat`` cannot see: the opponent's hand, the draw pile and the base."""
    m = 0
    for c in [*state.hands[1 - seat], *state.draw, state.base_card]:
        m |= 1 << c
    return m


# ---------------------------------------------------------------------------------------- construction
def test_make_builds_the_grid_greedy_under_both_names() -> None:
    for name in ("greedy", "greedy-capture"):
        agent = agents.make(name, "grid", seed=1, board_size=9)
        assert isinstance(agent, GreedyAgent) and agent.name == "greedy"
        assert agent.cells == 81


# ---------------------------------------------------------------------------------------- scripted positions
def two_captures() -> GridState:
    """2c at (1,0) and Kd at (-1,0), each with three occupied sides; 5c captures the 2c, 5d the Kd."""
    table = {"1,0": "2c", "1,1": "2s", "2,0": "3c", "-1,0": "Kd", "-1,1": "Ks", "-2,0": "Qd"}
    return position(table, ["5c", "5d"])


def test_greedy_takes_the_capture_worth_most_points() -> None:
    state = two_captures()
    agent = GreedyAgent("grid")
    assert agent.act(obs_of(RULES, state)) == action(RULES, state, "5d@-1,-1")


def test_greedy_keeps_chaining_while_a_capture_is_available() -> None:
    state = two_captures()
    RULES.apply(state, action(RULES, state, "5d@-1,-1"))
    assert state.in_chain and state.to_move == 0 and state.points[0] == 10
    chosen = GreedyAgent("grid").act(obs_of(RULES, state))
    assert chosen == action(RULES, state, "5c@1,-1")


def test_greedy_avoids_giving_a_capture_when_a_safe_placement_exists() -> None:
    # 9h beside the 5h at (1,-1) or (2,0) gives the 5h a third side, and many unseen hearts fill the fourth;
    # beside the base alone, at (-1,0) or (0,-1), it leaves nothing to capture.
    state = position({"1,0": "5h", "1,1": "5c"}, ["9h"])
    agent = GreedyAgent("grid")
    chosen = agent.act(obs_of(RULES, state))
    assert RULES.action_to_str(state, chosen) in {"9h@-1,0", "9h@0,-1"}
    RULES.apply(state, chosen)
    unseen = unseen_mask(state, 0)
    assert not any(state.allowed[cell] & unseen for cell in capturing_cells(RULES.board, state))


def test_greedy_sets_up_a_capture_only_its_own_hand_can_make() -> None:
    # A card at (1,-1) or (2,0) gives the 5h a third side. The last cell then takes only hearts or fives, and
    # every one of them is seen (own hand or discard): the opponent cannot take the 5h, greedy can next turn.
    hearts_and_fives = [card_to_str(c) for c in range(52) if COMPAT[str_to_card("5h")] >> c & 1]
    discard = [c for c in hearts_and_fives if c not in {"5h", "5c", "9h", "2h", "5s"}]
    state = position({"1,0": "5h", "1,1": "5c"}, ["9h", "2h", "5s"], discard=discard)
    chosen = GreedyAgent("grid").act(obs_of(RULES, state))
    assert RULES.action_to_str(state, chosen).split("@")[1] in {"1,-1", "2,0"}
    RULES.apply(state, chosen)
    unseen = unseen_mask(state, 0)
    assert not any(state.allowed[cell] & unseen for cell in capturing_cells(RULES.board, state))


def test_greedy_passes_only_when_nothing_else_is_legal() -> None:
    state = position({"1,0": "5h"}, [])
    obs = obs_of(RULES, state)
    assert obs["action_mask"].sum() == 1
    assert GreedyAgent("grid").act(obs) == RULES.pass_action
    # every placement here gives the opponent a likely capture, yet greedy still places rather than pass
    state = position({"1,0": "5h", "1,1": "5c"}, ["9h"])
    assert GreedyAgent("grid").act(obs_of(RULES, state)) != RULES.pass_action


def test_greedy_reads_only_the_observation() -> None:
    """Redealing what the seat cannot see changes nothing in its choice."""
    rng = np.random.default_rng(3)
    agent = GreedyAgent("grid", seed=0)
    for state in sampled_states(RULES, games=6, seed=4):
        seat = state.to_move
        other = RULES.determinize(state, seat, rng)
        agent.reset(seed=1)
        a = agent.act(obs_of(RULES, state))
        agent.reset(seed=1)
        assert agent.act(obs_of(RULES, other)) == a


# ---------------------------------------------------------------------------------------- legality over play
def sampled_states(rules: GridRules, games: int, seed: int) -> list[GridState]:
    """Copies of every position of ``games`` greedy-vs-random games."""
    rng = np.random.default_rng(seed)
    players = [GreedyAgent("grid", seed=seed, **rules.options), agents.make("random", "grid", seed=seed + 1)]
    out = []
    for _ in range(games):
        state = rules.initial_state(rng)
        while not rules.is_terminal(state):
            out.append(rules.clone(state))
            rules.apply(state, int(players[state.to_move].act(obs_of(rules, state))))
    return out


@pytest.mark.parametrize("board_size", [21, 7])
def test_greedy_never_picks_a_masked_action_and_passes_only_when_forced(board_size: int) -> None:
    rules = GridRules(board_size=board_size)
    rng = np.random.default_rng(board_size)
    players = [GreedyAgent("grid", seed=1, board_size=board_size), GreedyAgent("grid", seed=2, board_size=board_size)]
    for game in range(40):
        state = rules.initial_state(rng)
        mix = game % 3 == 0  # some games against random play, for positions greedy would not reach
        rand = np.random.default_rng(game)
        while not rules.is_terminal(state):
            obs = obs_of(rules, state)
            a = int(players[state.to_move].act(obs))
            assert obs["action_mask"][a] == 1
            if a == rules.pass_action and not state.in_chain:
                assert obs["action_mask"].sum() == 1, "greedy passed although it could place"
            if mix and state.to_move == 1:
                legal = np.flatnonzero(obs["action_mask"])
                a = int(legal[rand.integers(len(legal))])
            rules.apply(state, a)


def test_greedy_beats_random_over_seat_swapped_deals() -> None:
    specs = [AgentSpec("greedy", "greedy-capture"), AgentSpec("random", "random")]
    records = run_games("grid", specs, deals=150, seed=0)
    cell = tabulate(records, ["greedy", "random"])[("greedy", "random")]
    assert cell.games == 300
    assert cell.interval[0] > 0.5, f"greedy vs random: {cell.win_rate:.3f}, interval {cell.interval}"


# ---------------------------------------------------------------------------------------- image
def test_image_has_a_fixed_shape_and_follows_the_state() -> None:
    states = sampled_states(RULES, games=3, seed=8)
    shapes = set()
    previous = None
    changes = 0
    for k, state in enumerate(states):
        seats: list[int | None] = [0, 1, None] if k % 5 == 0 else [state.to_move]
        for seat in seats:
            image = RULES.render_image(state, seat)
            assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
            shapes.add(image.shape)
        if previous is not None:
            changes += not np.array_equal(previous, RULES.render_image(state, 0))
        previous = RULES.render_image(state, 0)
    assert len(shapes) == 1, f"the image size changes: {shapes}"
    assert changes > len(states) // 2
    small = GridRules(board_size=5)
    assert small.render_image(small.initial_state(np.random.default_rng(0)), 0).shape in shapes


def test_image_shows_only_what_the_seat_sees() -> None:
    rng = np.random.default_rng(9)
    for k, state in enumerate(sampled_states(RULES, games=2, seed=10)):
        if k % 6:
            continue
        seat = k % 2
        other = RULES.determinize(state, seat, rng)
        assert np.array_equal(RULES.render_image(state, seat), RULES.render_image(other, seat))
        if other.base_card != state.base_card:  # everything face up: the base shows
            assert not np.array_equal(RULES.render_image(state, None), RULES.render_image(other, None))
