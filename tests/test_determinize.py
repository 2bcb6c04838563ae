"""``determinize`` is sound: every copy is a state the seat cannot tell from the real one, and could have arisen.

Property tests over thousands of mid-game states per game and option set (uniformly random and
greedy play, every seat), then named positions: the issue's castles reproduction, and each fact a
forced move reveals (castles: stuck with an empty or a short deck; grid: a chain ended by itself,
or by choice).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import agents
from jericho_env import make_rules
from jericho_env.core.redeal import NoConsistentDealError, draw_hand
from jericho_env.core.rules import Rules
from jericho_env.games.castles.state import STUCK, Phase
from jericho_env.games.grid.knowledge import SOME, HandFacts

CONFIGS: list[tuple[str, dict[str, Any], int]] = [
    ("castles", {}, 3000),
    ("castles", {"ranks": 5}, 2000),
    ("castles", {"ranks": 13}, 2000),
    ("castles", {"small_deck": True}, 2000),
    ("castles", {"reversed_order": True}, 2000),
    ("castles", {"ranks": 5, "small_deck": True, "reversed_order": True}, 2000),
    ("grid", {}, 2000),
    ("walls", {"num_players": 3}, 1500),
    ("walls", {}, 1500),
    ("walls", {"num_players": 5}, 1500),
    # observation version 1 (what the seat can infer): the copies must leave those fields unchanged too
    ("castles", {"obs_version": 1}, 2000),
    ("castles", {"ranks": 5, "small_deck": True, "obs_version": 1}, 2000),
    ("grid", {"obs_version": 1}, 1500),
    ("walls", {"obs_version": 1}, 1000),
    ("walls", {"num_players": 2, "obs_version": 1}, 1000),
]


def _states(game: str, options: dict[str, Any], count: int, seed: int) -> Iterator[tuple[Rules[Any], Any]]:
    """``count`` states of games played alternately by random and greedy players (each state once)."""
    rules = make_rules(game, **options)
    rng = np.random.default_rng(seed)
    base = {k: v for k, v in options.items() if k != "obs_version"}
    seen = make_rules(game, **base)  # greedy reads version 0's observation (walls' greedy reads no other)
    greedy = [agents.make("greedy", game, seed=seed + i, **base) for i in range(rules.info.num_players)]
    made, k = 0, 0
    while made < count:
        state = rules.initial_state(rng)
        k += 1
        while not rules.is_terminal(state) and made < count:
            yield rules, state
            made += 1
            p = rules.current_player(state)
            if k % 2:
                legal = rules.legal_actions(state)
                a = legal[int(rng.integers(len(legal)))]
            else:
                a = greedy[p].act({"observation": seen.observe(state, p), "action_mask": rules.legal_mask(state)})
            rules.apply(state, a)
        if made < count:
            yield rules, state  # the terminal state too
            made += 1


def _cards(rules: Rules[Any], state: Any) -> list[int]:
    return sorted(c for zone in rules.card_zones(state).values() for c in zone)


@pytest.mark.parametrize(("game", "options", "count"), CONFIGS, ids=lambda v: str(v))
def test_every_copy_is_playable_indistinguishable_and_leaves_the_state_alone(
    game: str, options: dict[str, Any], count: int
) -> None:
    """Legal action or terminal; same observation and mask for the seat; cards conserved; the real state unchanged."""
    rng = np.random.default_rng(11)
    for i, (rules, state) in enumerate(_states(game, options, count, seed=100 + count)):
        seat = i % rules.info.num_players
        before = rules.to_dict(state)
        copy = rules.determinize(state, seat, rng)
        assert rules.to_dict(state) == before, "determinize changed the real state"
        assert rules.is_terminal(copy) == rules.is_terminal(state)
        assert rules.is_terminal(copy) or rules.legal_actions(copy), f"a copy with no legal action: {before}"
        assert rules.current_player(copy) == rules.current_player(state)
        assert np.array_equal(rules.observe(copy, seat), rules.observe(state, seat))
        if rules.current_player(state) == seat:
            assert np.array_equal(rules.legal_mask(copy), rules.legal_mask(state))
        assert _cards(rules, copy) == sorted(rules.all_cards())
        json.dumps(rules.to_dict(copy))  # and it is a well-formed state
        assert rules.to_dict(rules.from_dict(rules.to_dict(copy))) == rules.to_dict(copy)


@pytest.mark.parametrize(("game", "options", "count"), CONFIGS[:1] + CONFIGS[6:8], ids=lambda v: str(v))
def test_copies_depend_only_on_what_the_seat_has_seen(game: str, options: dict[str, Any], count: int) -> None:
    """Two states the seat cannot tell apart give the same copy for the same seed, and seeds vary the hidden cards."""
    varied = checked = 0
    for i, (rules, state) in enumerate(_states(game, options, count // 10, seed=7)):
        if rules.is_terminal(state):
            continue
        seat = i % rules.info.num_players
        twin = rules.determinize(state, seat, np.random.default_rng(i))  # the hidden cards moved
        a = rules.determinize(state, seat, np.random.default_rng(10**6 + i))
        b = rules.determinize(twin, seat, np.random.default_rng(10**6 + i))
        assert rules.to_dict(a) == rules.to_dict(b)
        copies = {json.dumps(rules.to_dict(rules.determinize(state, seat, np.random.default_rng(s)))) for s in range(4)}
        varied += len(copies) > 1
        checked += 1
    assert varied >= 0.9 * checked, f"hidden cards varied across seeds in only {varied} of {checked} states"


# ---------------------------------------------------------------------------------------------- castles


def _castles_facts_hold(rules: Any, copy: Any, opp: int) -> None:
    """What the opponent's forced moves revealed holds in ``copy``."""
    hand = copy.hands[opp]
    assert not any(hand[r] for r in range(len(hand)) if copy.barred[opp] >> r & 1)
    if copy.need_n[opp]:
        answers = rules._answers[copy.need_beat[opp]]
        assert sum(n for r, n in enumerate(hand) if not answers >> r & 1) >= copy.need_n[opp]
    if copy.phase == Phase.PLAY and copy.to_move == opp:
        assert rules.can_play(copy, opp)
    if copy.phase == Phase.OVER and copy.reason == STUCK and copy.winner != opp:  # it lost stuck: nothing answered
        assert not any(hand[r] for r in range(len(hand)) if rules._answers[copy.beat] >> r & 1)


@pytest.mark.parametrize("options", [o for g, o, _ in CONFIGS if g == "castles"], ids=str)
def test_castles_copies_keep_what_stuck_turns_revealed(options: dict[str, Any]) -> None:
    rng = np.random.default_rng(5)
    revealed = lost_stuck = 0
    for i, (rules, state) in enumerate(_states("castles", options, 3000, seed=77)):
        seat = i % 2
        opp = 1 - seat
        _castles_facts_hold(rules, state, opp)  # the real state obeys them
        copy = rules.determinize(state, seat, rng)
        _castles_facts_hold(rules, copy, opp)
        revealed += bool(state.barred[opp] or state.need_n[opp])
        if state.phase == Phase.OVER and state.reason == STUCK:  # redealt by the winner: the loser held no answer
            lost_stuck += 1
            _castles_facts_hold(rules, rules.determinize(state, state.winner, rng), 1 - state.winner)
    assert revealed > 0, "no position with a revealed fact: the test saw nothing"
    assert lost_stuck > 0, "no game the opponent lost stuck: the test saw nothing"


def test_castles_issue_reproduction_gives_a_playable_copy() -> None:
    """The issue's case: 24 random moves from seed 8000014; determinize for seat 1 while seat 0 is to move."""
    rules = make_rules("castles")
    rng = np.random.default_rng(8000014)
    state = rules.initial_state(rng)
    for _ in range(24):
        legal = rules.legal_actions(state)
        rules.apply(state, legal[int(rng.integers(len(legal)))])
    assert rules.current_player(state) == 0 and state.phase == Phase.PLAY
    copy = rules.determinize(state, 1, np.random.default_rng(80000142))
    assert rules.legal_actions(copy), "the mover was dealt a hand with nothing playable"
    assert rules.can_play(copy, 0)


def _castles_position(**fields: Any) -> Any:
    rules = make_rules("castles")
    data = rules.to_dict(rules.initial_state(np.random.default_rng(0)))
    data.update(fields)
    return rules, rules.from_dict(data)


def test_castles_stuck_with_an_empty_deck_bars_the_ranks_that_would_have_answered() -> None:
    """Player 1, stuck on a 7 with an empty deck, keeps a hand that holds no 7-10 and no joker: copies respect it."""
    rules = make_rules("castles")
    k = 11
    comp = rules.deck.composition()
    hand1 = [0] * k
    hand1[0], hand1[1] = 2, 1  # A A 2: nothing answers a 7
    saves1 = [0] * k
    saves1[3] = 1
    pile1 = [c - h - s for c, h, s in zip(comp, hand1, saves1, strict=True)]
    hand0 = [0] * k
    hand0[6] = 1  # player 0 plays a 7
    hand0[2] = 4
    deck0 = [r for r in rules.deck.ordered_cards() if r not in (2, 6)] + [6, 6, 6]
    pile0 = [0] * k
    state = rules.from_dict(
        {
            **rules.to_dict(rules.initial_state(np.random.default_rng(0))),
            "hands": [hand0, hand1],
            "saves": [[0] * k, saves1],
            "decks": [deck0, []],
            "pile": [pile0, pile1],
            "discard": [[0] * k, [0] * k],
            "beat": 0,
            "beat_n": 1,
            "beat_by": 1,
            "first": 0,
            "to_move": 0,
            "phase": "play",
            "pending": 0,
            "winner": -1,
            "reason": "",
        }
    )
    rules.apply(state, rules.actions.play(6, 1))  # player 0 plays a 7; player 1 is stuck, deck empty
    assert state.phase == Phase.PLAY_SAVE and state.to_move == 1
    barred = state.barred[1]
    assert all(barred >> r & 1 for r in (6, 7, 8, 9, 10)) and not barred & 0b111111
    for seed in range(200):
        copy = rules.determinize(state, 0, np.random.default_rng(seed))
        assert not any(copy.hands[1][r] for r in (6, 7, 8, 9, 10)), copy.hands[1]
        assert copy.hand_n[1] == 3 and copy.save_n[1] == 1


def test_castles_short_deck_swap_keeps_enough_cards_that_could_not_answer() -> None:
    """Stuck on a 9 with two cards left in the deck: of the five in hand after the swap, three could not answer a 9."""
    rules = make_rules("castles")
    rng = np.random.default_rng(3)
    found = 0
    for i, (_, state) in enumerate(_states("castles", {}, 20000, seed=9)):
        if state.need_n[1] == 0 or state.phase == Phase.OVER:
            continue
        answers = rules._answers[state.need_beat[1]]
        for _ in range(20):
            copy = rules.determinize(state, 0, rng)
            unfit = sum(n for r, n in enumerate(copy.hands[1]) if not answers >> r & 1)
            assert unfit >= state.need_n[1]
        found += 1
        if found >= 30 or i > 19000:
            break
    assert found >= 5, "too few short-deck swaps met to check anything"


# ---------------------------------------------------------------------------------------------- grid


def test_grid_copies_admit_a_drawing_schedule_for_every_chain_fact() -> None:
    """Every copy's opponent hand is consistent with what its chains revealed (and the real hand always is)."""
    rng = np.random.default_rng(2)
    with_facts = 0
    for i, (rules, state) in enumerate(_states("grid", {}, 3000, seed=55)):
        if rules.is_terminal(state):
            continue
        seat = i % 2
        opp = 1 - seat
        facts = HandFacts(state.hist[opp], len(state.hands[opp]))
        if state.to_move == opp and state.in_chain:
            facts.add_current(SOME, rules._capture_mask(state))
        assert facts.consistent(state.hands[opp])
        copy = rules.determinize(state, seat, rng)
        assert facts.consistent(copy.hands[opp])
        with_facts += bool(facts.facts)
    assert with_facts > 100


def test_grid_opponent_in_a_chain_holds_a_capturing_card_in_every_copy() -> None:
    rng = np.random.default_rng(4)
    chains = 0
    for rules, state in _states("grid", {}, 6000, seed=91):
        if rules.is_terminal(state) or not state.in_chain:
            continue
        mover = state.to_move
        fits = rules._capture_mask(state)
        for _ in range(5):
            copy = rules.determinize(state, 1 - mover, rng)
            assert any(fits >> c & 1 for c in copy.hands[mover])
            assert len(rules.legal_actions(copy)) > 1  # a capturing placement besides "end"
        chains += 1
    assert chains > 10


def test_grid_chain_ended_by_itself_excludes_the_fitting_cards_until_the_next_refill() -> None:
    """A NONE fact at the current refill bars its cards from the hand outright."""
    from jericho_env.games.grid.knowledge import DRAW, NONE, PLACE, from_entries

    hist = from_entries([(DRAW, 0), (PLACE, 5), (NONE, (1 << 7) | (1 << 8))])
    facts = HandFacts(hist, 4)
    assert facts.excluded_now() == (1 << 7) | (1 << 8)
    assert not facts.consistent([7, 1, 2, 3])
    assert facts.consistent([1, 2, 3, 4])


def test_grid_fact_before_a_refill_binds_only_cards_drawn_before_it() -> None:
    """Held no 7 before refill 1 (which drew one card): one 7 may be in hand (drawn at refill 1), two may not."""
    from jericho_env.games.grid.knowledge import DRAW, NONE, PLACE, from_entries

    seven, eight = 1 << 7, 1 << 8
    hist = from_entries([(PLACE, 20), (NONE, seven | eight), (DRAW, 1)])
    facts = HandFacts(hist, 5)
    assert facts.capacity == [5, 1]
    assert facts.consistent([7, 1, 2, 3, 4])
    assert not facts.consistent([7, 8, 2, 3, 4])


def test_grid_some_fact_needs_a_witness_held_at_its_moment() -> None:
    """Ended a chain by choice holding a card of {9}: the 9 is still in hand, or was placed later from that hand."""
    from jericho_env.games.grid.knowledge import DRAW, PLACE, SOME, from_entries

    hist = from_entries([(PLACE, 20), (SOME, 1 << 9), (DRAW, 1)])
    facts = HandFacts(hist, 5)
    assert facts.consistent([9, 1, 2, 3, 4])
    assert not facts.consistent([1, 2, 3, 4, 5])
    later = from_entries([(PLACE, 20), (SOME, 1 << 9), (DRAW, 1), (PLACE, 9)])
    assert HandFacts(later, 4).consistent([1, 2, 3, 4])


def test_draw_hand_is_uniform_over_hands_meeting_the_bounds() -> None:
    """Pool 0..5, hands of 2 holding at least one of {0, 1}: the 9 qualifying hands come up equally often."""
    rng = np.random.default_rng(0)
    counts: dict[tuple[int, ...], int] = {}
    for _ in range(9000):
        hand, rest = draw_hand(list(range(6)), 2, [(lambda c: c < 2, 1)], rng)
        assert sorted(hand + rest) == list(range(6))
        counts[tuple(hand)] = counts.get(tuple(hand), 0) + 1
    assert len(counts) == 9
    assert all(850 < n < 1150 for n in counts.values()), counts
    with pytest.raises(NoConsistentDealError):
        draw_hand([5, 6], 2, [(lambda c: c < 2, 1)], rng)


# ---------------------------------------------------------------------------------------------- walls


def test_walls_player_dealt_seven_trumpets_keeps_the_trumpets_it_must_still_hold() -> None:
    """Seat 1 opens with a trumpet (it was dealt seven): every copy, for every observer, leaves it the known ones."""
    from jericho_env.games.walls.cards import TRUMPET

    rules: Any = make_rules("walls")
    data = rules.to_dict(rules.initial_state(np.random.default_rng(0)))
    hand, deck = data["hands"][1], data["deck"]
    trumpets = [i for i, c in enumerate(deck) if c == "T"]
    for k, i in enumerate([i for i, c in enumerate(hand) if c != "T"]):
        hand[i], deck[trumpets[k]] = deck[trumpets[k]], hand[i]
    state = rules.from_dict(data)
    assert state.hands[1][TRUMPET] == 7
    rng = np.random.default_rng(1)
    while state.phase in (0, 1):  # the opening: seat 1 can only lay a trumpet
        legal = rules.legal_actions(state)
        rules.apply(state, legal[int(rng.integers(len(legal)))])
    assert state.trumpet_log[1] == () and rules._trumpet_floor(state, 1, 0) == (6, 1)
    bound_seen = 0
    while not rules.is_terminal(state):
        for seat in (0, 2, 3):
            total, in_supply = rules._trumpet_floor(state, 1, seat)
            held = state.hands[1][TRUMPET] + state.supply_hidden[1][TRUMPET]
            assert held >= total and state.supply_hidden[1][TRUMPET] >= in_supply  # true of the real state
            for k in range(10):
                copy = rules.determinize(state, seat, np.random.default_rng(k))
                assert copy.hands[1][TRUMPET] + copy.supply_hidden[1][TRUMPET] >= total
                assert copy.supply_hidden[1][TRUMPET] >= in_supply
            bound_seen += total > 0
        legal = rules.legal_actions(state)
        rules.apply(state, legal[int(rng.integers(len(legal)))])
    assert bound_seen > 10
    assert rules.to_dict(rules.from_dict(json.loads(json.dumps(rules.to_dict(state))))) == rules.to_dict(state)


def test_walls_opening_copies_spread_the_trumpets_uniformly_over_the_hidden_zones() -> None:
    """In the opening (face-down first wall cards), every hidden zone of every other seat holds trumpets at the
    pool's rate: the face-down cards are wall cards drawn uniformly, so the rest stays a uniform shuffle.

    (Taking the first wall card of the shuffled pool instead left the trumpets before it at the front, and the
    first seat's supply cards came out trumpets about three times too often.)
    """
    from jericho_env.games.walls.cards import TRUMPET

    rules = make_rules("walls")
    rng = np.random.default_rng(1)
    state = rules.initial_state(rng)
    for _ in range(6):  # six opening moves: some seats have laid their first wall card face down
        legal = rules.legal_actions(state)
        rules.apply(state, legal[int(rng.integers(len(legal)))])
    seat = 3
    others = [o for o in range(state.n) if o != seat]
    assert any(state.opening[o] >= 0 for o in others), "the position has no face-down opening to redeal"
    draws = 3000
    zones: dict[str, list[float]] = {}
    for _ in range(draws):
        copy = rules.determinize(state, seat, rng)
        for o in others:
            if copy.hidden_count[o]:
                zones.setdefault(f"supply {o}", []).append(copy.supply_hidden[o][TRUMPET] / copy.hidden_count[o])
            zones.setdefault(f"hand {o}", []).append(copy.hands[o][TRUMPET] / copy.hand_size[o])
    # the pool: every card the seat cannot see, less the face-down openings (wall cards)
    pool = [c for o in others for c in range(26) for _ in range(state.hands[o][c] + state.supply_hidden[o][c])]
    pool += [c for c in state.deck if c < 26] + [state.opening[o] for o in others if state.opening[o] >= 0]
    openings = sum(1 for o in others if state.opening[o] >= 0)
    rate = pool.count(TRUMPET) / (len(pool) - openings)
    for name, shares in zones.items():
        se = np.std(shares) / np.sqrt(draws) + 1e-3
        assert abs(np.mean(shares) - rate) < 5 * se, f"{name}: trumpet share {np.mean(shares):.3f}, pool {rate:.3f}"
