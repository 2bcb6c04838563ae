"""grid: invariants over thousands of seeded random games, hidden information, bad input, the edge study."""

from __future__ import annotations

import json

import numpy as np
import pytest

import jericho_env
from jericho_env.core.cards import str_to_card
from jericho_env.games.grid.rules import GridRules
from jericho_env.games.grid.state import (
    ALL_CARDS_MASK,
    BASE,
    COMPAT,
    EMPTY,
    HAND_SIZE,
    POINTS,
    GridState,
    disconnected_cells,
)

DECK = list(range(52))


def random_games(rules: GridRules, games: int, seed: int):
    """Yield (state, steps, legal) at every decision of ``games`` seeded random games, then (state, steps, [])."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        state = rules.initial_state(rng)
        steps = 0
        while not rules.is_terminal(state):
            legal = rules.legal_actions(state)
            yield state, steps, legal
            rules.apply(state, legal[int(rng.integers(len(legal)))])
            steps += 1
        yield state, steps, []


def check_invariants(rules: GridRules, s: GridState, steps: int, legal: list[int]) -> None:
    """Every invariant of a reachable position."""
    zones = rules.card_zones(s)
    assert sorted(c for z in zones.values() for c in z) == DECK, "cards not conserved"
    assert steps <= rules.info.max_game_length
    assert s.points == [sum(POINTS[c] for c in pile) for pile in s.captured]
    assert all(len(h) <= HAND_SIZE and h == sorted(h) for h in s.hands)
    if rules.is_terminal(s):
        ret = rules.returns(s)
        assert sum(ret) == 0.0 and all(r in (-1.0, 0.0, 1.0) for r in ret)
        assert (ret[0] > 0) == (s.points[0] > s.points[1])
        return
    assert legal and legal == sorted(set(legal)) and legal[-1] == rules.pass_action
    assert rules.current_player(s) == s.to_move
    if not s.in_chain:
        # at the start of a turn the table is whole (connected) and no card is surrounded
        assert all(s.nbrs[cell] < 4 for cell in s.faceup)
        assert disconnected_cells(rules.board, s) == []
        mover_last = 1 - s.to_move
        if s.draw:
            assert len(s.hands[mover_last]) == HAND_SIZE


def check_bookkeeping(rules: GridRules, s: GridState) -> None:
    """The incremental neighbour counts, frontier and allowed masks equal a recomputation from scratch."""
    nb = rules.board.neighbours
    for cell in range(rules.cells):
        occupied = [s.board[q] for q in nb[cell] if s.board[q] != EMPTY]
        assert s.nbrs[cell] == len(occupied)
        in_frontier = s.board[cell] == EMPTY and bool(occupied)
        assert (cell in s.frontier) == in_frontier
        if in_frontier:
            m = ALL_CARDS_MASK
            for c in occupied:
                m &= COMPAT[c]
            assert s.allowed[cell] == m
    assert s.faceup == {cell: c for cell, c in enumerate(s.board) if 0 <= c < BASE}


def brute_force_legal(rules: GridRules, s: GridState) -> list[int]:
    """Legal actions straight from the rules text, checking every slot and cell."""
    out = []
    nb, board = rules.board.neighbours, s.board
    for slot, card in enumerate(s.hands[s.to_move]):
        for cell in range(rules.cells):
            if board[cell] != EMPTY:
                continue
            around = [board[q] for q in nb[cell]]
            if all(c == EMPTY for c in around):
                continue
            if not all(c in (EMPTY, BASE) or c // 13 == card // 13 or c % 13 == card % 13 for c in around):
                continue
            if s.in_chain:
                trial = list(board)
                trial[cell] = card
                full = [q for q in (cell, *nb[cell]) if 0 <= trial[q] < BASE and len(nb[q]) == 4]
                if not any(all(trial[r] != EMPTY for r in nb[q]) for q in full):
                    continue
            out.append(slot * rules.cells + cell)
    return [*sorted(out), rules.pass_action]


def test_invariants_over_2000_random_games() -> None:
    rules = GridRules()
    games, lengths, longest = 0, [], 0
    for s, steps, legal in random_games(rules, 2000, seed=2026):
        check_invariants(rules, s, steps, legal)
        if not legal:
            games += 1
            lengths.append(steps)
            longest = max(longest, steps)
    assert games == 2000
    assert longest <= rules.info.max_game_length
    assert 30 < float(np.mean(lengths)) < 80


@pytest.mark.parametrize("size", [5, 9])
def test_legal_actions_and_bookkeeping_match_a_brute_force(size: int) -> None:
    """On small windows (where the edge matters) the fast engine equals the rules read literally."""
    rules = GridRules(board_size=size)
    chains = 0
    for s, _, legal in random_games(rules, 100, seed=size):
        check_bookkeeping(rules, s)
        if legal:
            assert legal == brute_force_legal(rules, s)
            chains += s.in_chain
            for a in range(0, rules.info.num_actions, 7):
                assert rules.is_legal(s, a) == (a in legal)
                assert (rules.why_illegal(s, a) is None) == (a in legal)
    assert chains > 10


def test_many_games_reach_chains_captures_and_discards() -> None:
    """The random games used above exercise every rule, so the invariants mean something."""
    rules = GridRules()
    seen = {"chain": 0, "capture": 0, "discard": 0, "double": 0, "end": 0}
    for s, _, legal in random_games(rules, 300, seed=5):
        seen["chain"] += s.in_chain
        seen["end"] += s.in_chain and rules.pass_action in legal
        if not legal:
            seen["capture"] += bool(s.captured[0] or s.captured[1])
            seen["discard"] += bool(s.discard)
    assert all(v > 0 for k, v in seen.items() if k != "double"), seen


# ------------------------------------------------------------------------------------ hidden information
def _swap(data: dict, zone_a: str, zone_b: str, rng: np.random.Generator) -> dict:
    """A copy of ``data`` where the cards of two hidden zones are shuffled between them (sizes kept)."""
    out = json.loads(json.dumps(data))

    def get(z: str) -> list[str]:
        return [out["base"]] if z == "base" else (out["hands"][1] if z == "hand_1" else out["draw_bottom_to_top"])

    a, b = get(zone_a), get(zone_b)
    pool = a + b
    pool = [pool[i] for i in rng.permutation(len(pool))]
    new_a, new_b = pool[: len(a)], pool[len(a) :]
    for z, v in ((zone_a, new_a), (zone_b, new_b)):
        if z == "base":
            out["base"] = v[0]
        elif z == "hand_1":
            out["hands"][1] = v
        else:
            out["draw_bottom_to_top"] = v
    return out


@pytest.mark.parametrize(("zone_a", "zone_b"), [("hand_1", "draw"), ("base", "draw"), ("base", "hand_1")])
def test_opponent_hand_draw_order_and_base_do_not_change_seat_0s_view(zone_a: str, zone_b: str) -> None:
    rules = GridRules()
    rng = np.random.default_rng(1)
    changed = 0
    for s, _, legal in random_games(rules, 30, seed=77):
        if not legal or not s.draw:
            continue
        other = rules.from_dict(_swap(rules.to_dict(s), zone_a, zone_b, rng))
        changed += rules.to_dict(other) != rules.to_dict(s)
        assert np.array_equal(rules.observe(s, 0), rules.observe(other, 0))
        if s.to_move == 0:
            assert np.array_equal(rules.legal_mask(s), rules.legal_mask(other))
        assert rules.render_text(s, 0) == rules.render_text(other, 0)
    assert changed > 100


def test_what_seat_0_can_see_does_change_its_view() -> None:
    """The converse, so the hidden-information test can fail: own hand, table and piles are observed."""
    rules = GridRules()
    s = rules.initial_state(np.random.default_rng(0))
    s.to_move = 0
    other = rules.clone(s)
    other.hands[0][0], other.draw[0] = other.draw[0], other.hands[0][0]
    other.hands[0].sort()
    assert not np.array_equal(rules.observe(s, 0), rules.observe(other, 0))
    assert np.array_equal(rules.observe(s, 1), rules.observe(other, 1))
    view = rules.layout.split(rules.observe(s, 1))
    assert view["table_base"].sum() == 1 and view["table_occupied"].sum() == 1
    assert view["table_suit"].sum() == 0 and view["table_rank"].sum() == 0  # the base's face is not shown
    assert view["opp_hand_size"][0] == 1.0 and view["draw_size"][0] == 1.0


def test_observation_fields_after_a_capture() -> None:
    rules = GridRules(board_size=11)
    from tests.games.test_grid_rules import NINE_GAP, position

    s = position(NINE_GAP, ("9h 2d", "3c"), rules=rules)
    rules.apply(s, rules.str_to_action(s, "9h@1,1"))
    me, opp = (rules.layout.split(rules.observe(s, seat)) for seat in (0, 1))
    nine = str_to_card("9h")
    assert me["own_captured"][nine] == 1 and opp["opp_captured"][nine] == 1
    assert me["own_score"][0] == pytest.approx(9 / 340) and opp["opp_score"][0] == pytest.approx(9 / 340)
    assert opp["to_move"][0] == 1 and me["to_move"][0] == 0
    cell = rules.board.cell_of(1, 0)  # K♥
    r, c = divmod(cell, 11)
    assert me["table_suit"][2, r, c] == 1 and me["table_rank"][12, r, c] == 1 and me["table_occupied"][r, c] == 1
    assert me["table_cards"].sum() == 6


# ------------------------------------------------------------------------------------ bad input through the env
def test_illegal_action_names_agent_action_and_reason_and_leaves_env_unchanged() -> None:
    env = jericho_env.make("grid")
    env.reset(seed=4)
    agent = env.agent_selection
    rules = env.unwrapped.rules
    before = json.dumps(env.unwrapped.save_state(), sort_keys=True)
    far = rules.board.cell_of(5, 5)
    with pytest.raises(jericho_env.IllegalActionError) as err:
        env.step(far)
    msg = str(err.value)
    assert isinstance(err.value, ValueError)
    assert agent in msg and "hand slot 0 at 5,5" in msg and "touches no card orthogonally" in msg
    assert json.dumps(env.unwrapped.save_state(), sort_keys=True) == before
    assert env.agent_selection == agent
    env.step(rules.pass_action)  # the agent may retry
    assert env.agent_selection != agent


@pytest.mark.parametrize("bad", ["pass", 2.0, None, np.array([1, 2]), -1, 2206])
def test_wrong_action_type_through_the_env(bad: object) -> None:
    env = jericho_env.make("grid")
    env.reset(seed=0)
    with pytest.raises(jericho_env.ActionTypeError):
        env.step(bad)


def test_bad_options_through_make() -> None:
    with pytest.raises(jericho_env.OptionError, match=r"board_size=4 .*odd int in 3\.\.101"):
        jericho_env.make("grid", board_size=4)
    with pytest.raises(ValueError, match="unknown game id 'nope'"):
        jericho_env.make("nope")
    env = jericho_env.make("grid", board_size=9)
    assert env.action_space("player_0").n == 5 * 81 + 1


def test_game_page_shows_the_generated_layout_table() -> None:
    import jericho_env.games.grid as page

    rules = GridRules()
    assert rules.layout.markdown_table() in (page.__doc__ or "")
    assert f"Discrete({rules.info.num_actions})" in (page.__doc__ or "")
    assert f"({rules.layout.size},)" in (page.__doc__ or "")
