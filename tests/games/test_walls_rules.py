"""walls (Jericho): scripted positions for every rule and every example of the issue."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import numpy as np
import pytest

from jericho_env.core.rules import StateFormatError
from jericho_env.games.walls.actions import WallsActions
from jericho_env.games.walls.cards import (
    COLOURS,
    NUM_CARDS,
    SCORING,
    TRUMPET,
    all_cards,
    card_to_str,
    parse_cards,
    str_to_card,
)
from jericho_env.games.walls.rules import WallsRules, pile_sizes
from jericho_env.games.walls.state import PHASE_NAMES, Phase, WallsState

PHASES = {name: Phase(i) for i, name in enumerate(PHASE_NAMES)}
ACTIONS = WallsActions()


def position(
    rules: WallsRules,
    hands: list[str],
    walls: list[str] | None = None,
    *,
    won: list[str] | None = None,
    supply_public: str = "",
    supply_hidden: list[str] | None = None,
    opening: list[str | None] | None = None,
    deck_top: str = "",
    phase: str = "play",
    to_move: int = 0,
    scorings: int = 0,
    drawer: int = -1,
    phase_left: int = 0,
    discard: int = 0,
) -> WallsState:
    """A hand-made position: every card not named goes to the bottom of the pile (scoring cards last)."""
    n = rules.n
    walls = walls or [""] * n
    won = won or [""] * n
    supply_hidden = supply_hidden or [""] * n
    opening = opening or [None] * n
    used: Counter[int] = Counter()
    for text in [*hands, *won, *supply_hidden, supply_public, deck_top]:
        used.update(parse_cards(text))
    for text in walls:
        for t in text.split():
            used[TRUMPET if t.lower().startswith("t-") else str_to_card(t)] += 1
    used.update(str_to_card(t) for t in opening if t)
    used[TRUMPET] += discard
    used[SCORING] += scorings
    rest = Counter(all_cards())
    rest.subtract(used)
    assert min(rest.values()) >= 0, (
        f"position uses too many cards: {[card_to_str(c) for c, k in rest.items() if k < 0]}"
    )
    bottom = sorted(c for c in rest.elements() if c != SCORING) + [SCORING] * rest[SCORING]
    data = {
        "num_players": n,
        "phase": phase,
        "to_move": to_move,
        "first_player": 0,
        "drawer": drawer,
        "phase_left": phase_left,
        "scorings": scorings,
        "hands": [h.split() for h in hands],
        "opening": opening,
        "walls": [w.split() for w in walls],
        "won": [w.split() for w in won],
        "supply_public": supply_public.split(),
        "supply_hidden": [h.split() for h in supply_hidden],
        "discard": discard,
        "deck": deck_top.split() + [card_to_str(c) for c in bottom],
        "trumpet_log": [None] * n,  # nobody was dealt seven trumpets
    }
    return rules.from_dict(data, strict=False)  # hand-made: need not be reachable by play


def act(rules: WallsRules, state: WallsState, text: str) -> None:
    """Play the legal action whose text is ``text``."""
    rules.apply(state, rules.str_to_action(state, text))


def walls_text(rules: WallsRules, state: WallsState, seat: int) -> list[str]:
    """A seat's walls as card text."""
    return rules.to_dict(state)["walls"][seat]


def length(state: WallsState, seat: int, colour: str) -> int:
    """The length of a seat's wall of ``colour``."""
    return state.walls[seat][COLOURS.index(colour) * 7 + 6]


# ------------------------------------------------------------------------------------------ cards and deal
def test_card_counts() -> None:
    cards = all_cards()
    assert len(cards) == NUM_CARDS == 110
    counts = Counter(card_to_str(c) for c in cards)
    assert counts["T"] == 22 and counts["S"] == 3
    for colour in COLOURS:
        per_value = {v: counts[f"{colour}-{v}"] for v in (1, 3, 4, 5, 7)}
        assert per_value == {1: 4, 3: 5, 4: 4, 5: 3, 7: 1}
        assert sum(v * k for v, k in per_value.items()) == 57
    assert sum(k for name, k in counts.items() if "-" in name) == 85


def test_card_codec_round_trip_and_errors() -> None:
    for c in range(27):
        assert str_to_card(card_to_str(c)) == c
    assert str_to_card(" Red-5 ") == str_to_card("red-5") and str_to_card("t") == TRUMPET
    for bad in ("red-2", "pink-3", "red", "7", ""):
        with pytest.raises(ValueError, match="not a walls card"):
            str_to_card(bad)
    with pytest.raises(ValueError, match="out of range"):
        card_to_str(27)


@pytest.mark.parametrize(
    ("n", "sizes"), [(3, [15, 16, 14, 15, 14, 15]), (4, [14, 14, 13, 14, 13, 14]), (5, [12, 13] * 3)]
)
def test_deal_and_piles(n: int, sizes: list[int]) -> None:
    assert pile_sizes(n) == sizes  # 86 / 79 / 72 cards as equal as possible, +1 scoring card in piles 2, 4, 6
    rules = WallsRules(num_players=n)
    rng = np.random.default_rng(n)
    firsts = set()
    starts = [sum(sizes[:p]) for p in range(6)]
    for _ in range(200):
        s = rules.initial_state(rng)
        assert s.hand_size == [7] * n and all(sum(h) == 7 for h in s.hands)
        assert len(s.deck) == 110 - 7 * n == sum(sizes)
        top_down = s.deck[::-1]
        positions = [i for i, c in enumerate(top_down) if c == SCORING]
        assert len(positions) == 3
        for k, pos in enumerate(positions):
            pile = 2 * k + 1
            assert starts[pile] <= pos < starts[pile] + sizes[pile], (k, pos)
        assert s.phase == Phase.OPEN_WALL and s.to_move == s.first_player
        firsts.add(s.first_player)
        assert sorted(c for z in rules.card_zones(s).values() for c in z) == all_cards()
    assert firsts == set(range(n))


# ------------------------------------------------------------------------------------------ opening
def test_opening_choices_hidden_until_revealed_together() -> None:
    rules = WallsRules(num_players=3)
    s = position(
        rules,
        ["red-5 red-1 blue-3 T T yellow-1 white-4", "red-7 brown-3 T T T T T", "blue-4 blue-1 T T T T T"],
        phase="opening-wall",
        phase_left=3,
        to_move=1,
    )
    s.first_player = 1
    before_1 = rules.observe(s, 1)
    act(rules, s, "red-7")  # seat 1: first wall card
    assert s.phase == Phase.OPEN_SUPPLY and s.to_move == 1
    act(rules, s, "supply-T")
    assert s.phase == Phase.OPEN_WALL and s.to_move == 2
    view = rules.layout.split(rules.observe(s, 0))
    assert view["walls"].sum() == 0, "a face-down first wall card must not show"
    assert view["own_opening"].sum() == 0 and view["own_supply"].sum() == 0
    assert view["opening_laid"].tolist() == [0, 1, 0]  # seat 0 sees that seat 1 laid a card, not which
    assert "red-7" not in rules.render_text(s, 0) and "red-7" in rules.render_text(s, 1)
    own = rules.layout.split(rules.observe(s, 1))
    assert own["own_opening"][str_to_card("red-7")] == 1 and own["own_supply"][TRUMPET] == 1 / 22
    assert not np.array_equal(before_1, rules.observe(s, 1))
    act(rules, s, "blue-4")
    act(rules, s, "supply-T")
    act(rules, s, "red-5")
    assert all(sum(w) == 0 for w in s.walls), "nothing is revealed before the last choice"
    act(rules, s, "supply-yellow-1")
    assert s.phase == Phase.PLAY and s.to_move == 1  # the first player starts
    assert (
        walls_text(rules, s, 0) == ["red-5"]
        and walls_text(rules, s, 1) == ["red-7"]
        and walls_text(rules, s, 2) == ["blue-4"]
    )
    assert s.opening == [-1, -1, -1] and s.hand_size == [5, 5, 5]
    assert s.supply_size == 3 and s.supply_public == [0] * 25 and s.hidden_count == [1, 1, 1]


def test_opening_order_of_choices_and_reasons() -> None:
    rules = WallsRules(num_players=3)
    s = position(
        rules,
        ["red-5 T T T T T T", "red-1 " * 1 + "T T T T T T", "blue-1 T T T T T T"],
        phase="opening-wall",
        phase_left=3,
    )
    assert rules.legal_actions(s) == [ACTIONS.build(str_to_card("red-5"))]
    assert "not a trumpet" in rules.why_illegal(s, ACTIONS.opening_trumpet)
    assert "supply card comes next" in rules.why_illegal(s, ACTIONS.supply(TRUMPET))
    assert "you hold no blue-1" in rules.why_illegal(s, ACTIONS.build(str_to_card("blue-1")))
    act(rules, s, "red-5")
    assert rules.legal_actions(s) == [ACTIONS.supply(TRUMPET)]
    assert "face down into the supply" in rules.why_illegal(s, ACTIONS.build(str_to_card("red-5")))


def test_seven_trumpets_open_with_a_trumpet_that_collapses() -> None:
    rules = WallsRules(num_players=3)
    s = position(
        rules, ["T T T T T T T", "red-1 T T T T T T", "blue-1 T T T T T T"], phase="opening-wall", phase_left=3
    )
    assert (
        rules.legal_actions(s) == [ACTIONS.opening_trumpet] and rules.action_to_str(s, ACTIONS.opening_trumpet) == "T"
    )
    assert "action 25 ('T')" in rules.why_illegal(s, ACTIONS.trumpet(1))
    assert "supply card comes next" in rules.why_illegal(s, ACTIONS.supply(TRUMPET))
    act(rules, s, "T")
    assert s.opening[0] == TRUMPET and s.hand_size[0] == 6
    act(rules, s, "supply-T")
    for text in ("red-1", "supply-T", "blue-1", "supply-T"):
        act(rules, s, text)
    assert s.phase == Phase.PLAY
    assert walls_text(rules, s, 0) == [] and s.discard == 1  # a trumpet-only wall cannot stand
    assert s.hand_size == [5, 5, 5]
    assert sorted(c for z in rules.card_zones(s).values() for c in z) == all_cards()


# ------------------------------------------------------------------------------------------ turns
def test_build_extends_wall_and_draws() -> None:
    rules = WallsRules(num_players=3)
    s = position(
        rules, ["red-5 red-3 blue-1 T white-7", "T T T T T", "T T T T T"], ["red-4", "", ""], deck_top="brown-3"
    )
    act(rules, s, "red-5")
    assert walls_text(rules, s, 0) == ["red-4", "red-5"] and length(s, 0, "red") == 9
    act_hand = rules.to_dict(s)["hands"][0]
    assert sorted(act_hand) == sorted(["red-3", "blue-1", "T", "white-7", "brown-3"])
    assert s.to_move == 1 and s.hand_size[0] == 5
    s.to_move = 0
    act(rules, s, "blue-1")  # a new colour starts a new wall
    assert walls_text(rules, s, 0) == ["blue-1", "red-4", "red-5"]


def test_supply_turn_is_face_down() -> None:
    rules = WallsRules(num_players=3)
    s = position(rules, ["red-5 red-3 blue-1 T white-7", "T T T T T", "T T T T T"], deck_top="brown-3")
    seen_by_1 = rules.observe(s, 1)
    act(rules, s, "supply-red-5")
    assert s.supply_size == 1 and s.supply_hidden[0][str_to_card("red-5")] == 1 and s.hand_size[0] == 5
    other = position(rules, ["red-4 red-3 blue-1 T white-7", "T T T T T", "T T T T T"], deck_top="brown-3")
    act(rules, other, "supply-red-4")
    # seat 1 cannot tell which card seat 0 put there
    assert np.array_equal(rules.observe(s, 1), rules.observe(other, 1))
    assert not np.array_equal(seen_by_1, rules.observe(s, 1))  # ...but sees that one was put there


def test_trumpet_jeuxsoc_worked_example() -> None:
    """rules-notes 1.5: Alfred blows yellow; Robert loses his 4, Mireille all three 4s; Alfred leads 13 to 10.

    The example holds six yellow 1s, two more than the deck has (4 per colour), so the walls are
    set directly on a legal position rather than dealt; the rules only read the wall counts.
    """
    rules = WallsRules(num_players=3)
    s = position(rules, ["red-1 T red-3", "T T T", "T T T"], to_move=2)
    y = COLOURS.index("yellow") * 7
    robert, mireille, alfred = s.walls
    robert[y : y + 7] = [2, 2, 1, 0, 0, 1, 14]  # 4-3-3-T-1-1
    mireille[y : y + 7] = [1, 0, 3, 0, 0, 0, 13]  # 4-4-4-1
    alfred[y : y + 7] = [3, 2, 0, 0, 0, 1, 11]  # 3-3-T-1-1-1
    act(rules, s, "T-yellow")
    assert robert[y : y + 7] == [2, 2, 0, 0, 0, 1, 10]
    assert mireille[y : y + 7] == [1, 0, 0, 0, 0, 0, 1]  # just the 1 left
    assert alfred[y : y + 7] == [3, 2, 0, 0, 0, 2, 13]
    assert s.supply_public[str_to_card("yellow-4")] == 4 and s.supply_size == 4


def test_trumpet_tie_for_highest_all_fall_several_from_one_wall() -> None:
    rules = WallsRules(num_players=3)
    s = position(
        rules,
        ["T red-1 red-3", "T T T", "T T T"],
        [
            "yellow-4 yellow-3 yellow-3 T-yellow yellow-1",
            "yellow-4 yellow-4 yellow-4 yellow-1",
            "yellow-3 yellow-3 T-yellow yellow-1 yellow-1",
        ],
        to_move=2,
    )
    act(rules, s, "T-yellow")
    assert walls_text(rules, s, 0) == ["yellow-1", "yellow-3", "yellow-3", "T-yellow"]
    assert walls_text(rules, s, 1) == ["yellow-1"]
    assert walls_text(rules, s, 2) == ["yellow-1", "yellow-1", "yellow-3", "yellow-3", "T-yellow", "T-yellow"]
    assert (length(s, 0, "yellow"), length(s, 1, "yellow"), length(s, 2, "yellow")) == (9, 1, 12)
    assert rules.to_dict(s)["supply_public"] == ["yellow-4"] * 4


def test_trumpeters_own_card_falls() -> None:
    rules = WallsRules(num_players=3)
    s = position(rules, ["T red-1 red-3", "T T T", "T T T"], ["red-5 red-1", "red-3", ""])
    act(rules, s, "T-red")
    assert walls_text(rules, s, 0) == ["red-1", "T-red"] and length(s, 0, "red") == 3
    assert walls_text(rules, s, 1) == ["red-3"]
    assert rules.to_dict(s)["supply_public"] == ["red-5"]


def test_wall_collapsing_to_trumpets_only_sends_its_trumpets_into_the_supply() -> None:
    """Walls v1 (the Italian seed): "le eventuali carte tromba associate vengono scartate e messe nella riserva"."""
    rules = WallsRules(num_players=3)
    s = position(
        rules, ["T red-1 red-3", "T T T", "T T T"], ["red-3", "red-7 T-red T-red", ""], deck_top="white-1 S blue-3"
    )
    act(rules, s, "T-red")
    assert walls_text(rules, s, 1) == [] and length(s, 1, "red") == 0
    assert s.supply_trumpets == 2 and s.discard == 0, "the collapsed wall's trumpets go into the supply, face up"
    assert s.supply_size == 3 and s.supply_public[str_to_card("red-7")] == 1  # the red-7 and the two trumpets
    assert walls_text(rules, s, 0) == ["red-3", "T-red"] and length(s, 0, "red") == 5
    data = rules.to_dict(s)
    assert sorted(data["supply_public"]) == ["T", "T", "red-7"]
    assert rules.to_dict(rules.from_dict(data, strict=False)) == data
    assert "face up [red-7 T T]" in rules.render_text(s, 1)
    seen = rules.layout.split(rules.observe(s, 1))
    assert seen["supply_size"][0] == pytest.approx(3 / 110), "everyone sees the supply grow by the trumpets"
    assert sorted(c for z in rules.card_zones(s).values() for c in z) == all_cards()
    # the next scoring throws them out with the supply's other trumpets
    act(rules, s, "supply-T")  # seat 1 draws the scoring card
    assert s.scored == 1 and s.phase == Phase.DONATE
    assert s.supply_trumpets == 0 and s.discard == 3 and s.supply_size == sum(s.supply_public)


def test_trumpet_without_own_wall_is_discarded() -> None:
    rules = WallsRules(num_players=3)
    s = position(rules, ["T red-1 red-3", "T T T", "T T T"], ["blue-5", "blue-4", "blue-1"])
    act(rules, s, "T-blue")  # seat 0's only blue card is the highest: its wall is gone, so is the trumpet
    assert walls_text(rules, s, 0) == [] and walls_text(rules, s, 1) == ["blue-4"] and s.discard == 1
    s.to_move = 0
    s.hands[0][TRUMPET] += 1  # (a trumpet from nowhere, to try a second case on the same table)
    s.discard -= 1
    act(rules, s, "T-red")  # nobody builds red: nothing falls, the trumpet is discarded
    assert s.discard == 1 and s.supply_size == 1 and walls_text(rules, s, 1) == ["blue-4"]
    s.to_move = 0
    s.hands[0][TRUMPET] += 1
    s.discard -= 1
    act(rules, s, "T-blue")  # no blue wall of its own: blue-4 falls and the trumpet is discarded
    assert walls_text(rules, s, 1) == [] and walls_text(rules, s, 2) == ["blue-1"] and s.discard == 1


# ------------------------------------------------------------------------------------------ scoring
def test_scoring_tie_odd_remainder_and_colour_nobody_builds() -> None:
    rules = WallsRules(num_players=4)
    s = position(
        rules,
        ["white-1 T T T T", "T T T T T", "T T T T T", "T T T T T"],
        ["red-5 red-3", "red-4 red-4", "red-1", "yellow-3"],
        supply_public="red-7 red-5",
        supply_hidden=["red-3 red-1", "red-4 T", "blue-5 blue-3", "yellow-1"],
        deck_top="S brown-3",
        to_move=2,
    )
    hand_before = list(s.hands[2])
    act(rules, s, "supply-T")
    # reds: 5 cards, seats 0 and 1 tie at 8: two each, one (the lowest) stays
    assert rules.to_dict(s)["won"][:2] == [["red-4", "red-7"], ["red-3", "red-5"]]  # dealt 7, 5, 4, 3 in turn
    # blue: nobody builds it, both stay; yellow goes to seat 3; trumpets are discarded
    assert rules.to_dict(s)["won"][3] == ["yellow-1"]
    assert rules.to_dict(s)["supply_public"] == ["blue-3", "blue-5", "red-1"]
    assert s.supply_size == 3 and s.hidden_count == [0, 0, 0, 0] and s.discard == 2
    # the drawer took a replacement: same hand size, one trumpet swapped for brown-3
    assert s.hand_size[2] == 5 and sum(s.hands[2]) == 5 and s.hands[2][str_to_card("brown-3")] == 1
    assert s.hands[2][TRUMPET] == hand_before[TRUMPET] - 1
    assert s.scored == 1 and s.drawer == 2 and s.phase == Phase.DONATE and s.to_move == 3


@pytest.mark.parametrize("scorings", [0, 1])
def test_donations_after_scorings_one_and_two(scorings: int) -> None:
    rules = WallsRules(num_players=4)
    size = 5 - scorings
    hands = [" ".join(["red-3"] * 2 + ["T"] * (size - 2)), "T " * size, "T " * size, "T " * size]
    s = position(rules, hands, ["red-1", "", "", ""], deck_top="S yellow-1 blue-1", to_move=1, scorings=scorings)
    act(rules, s, "supply-T")
    assert s.scored == scorings + 1 and s.phase == Phase.DONATE and s.to_move == 2 and s.phase_left == 4
    assert "face down into the supply" in rules.why_illegal(s, ACTIONS.trumpet(0))
    seat_0_view = rules.observe(s, 0)
    order = []
    for _ in range(4):
        order.append(s.to_move)
        assert rules.legal_actions(s) == sorted({ACTIONS.supply(c) for c in range(26) if s.hands[s.to_move][c]})
        act(rules, s, rules.action_to_str(s, rules.legal_actions(s)[-1]))
    assert order == [2, 3, 0, 1]
    assert s.phase == Phase.PLAY and s.to_move == 2  # the drawer's left neighbour plays
    assert s.hand_size == [size - 1] * 4 and s.hidden_count == [1, 1, 1, 1]
    # seat 0 sees that each seat donated one card, never which
    view = rules.layout.split(rules.observe(s, 0))
    assert view["supply_face_down"].tolist() == pytest.approx([1 / 110] * 4)
    assert not np.array_equal(seat_0_view, rules.observe(s, 0))
    round_field = view["round"].tolist()
    assert round_field == [0, 1, 0] if scorings == 0 else round_field == [0, 0, 1]


def test_third_scoring_ends_game_with_bonus_and_tie_break() -> None:
    rules = WallsRules(num_players=4)
    s = position(
        rules,
        ["T T T", "T T T", "T T T", "yellow-3 T T"],
        # seat 0: 2 won + two 1s = 4, walls after bonus: red-5 T (2 cards)
        # seat 1: 4 won, walls: blue-4 blue-3 (2 cards) -> tie with seat 0 on 4 won and 2 wall cards
        # seat 2: 3 won + one 1 = 4, walls after bonus: white-7 white-5 white-4 (3 cards): wins the tie-break
        # seat 3: 1 won + a brown-1 under a trumpet: 2 won; the lone trumpet is discarded
        ["red-5 red-1 red-1 T-red", "blue-4 blue-3", "white-7 white-5 white-4 white-1", "brown-1 T-brown"],
        won=["yellow-5 yellow-5", "yellow-4 yellow-4 yellow-4 yellow-4", "yellow-7 yellow-1 yellow-1", "yellow-1"],
        deck_top="S",
        scorings=2,
    )
    act(rules, s, "supply-T")
    assert (
        s.phase == Phase.OVER
        and rules.is_terminal(s)
        and rules.current_player(s) == -1
        and rules.legal_actions(s) == []
    )
    assert [rules.won_count(s, p) for p in range(4)] == [4, 4, 4, 2]
    assert [rules.wall_card_count(s, p) for p in range(4)] == [2, 2, 3, 0]
    assert walls_text(rules, s, 3) == [] and s.discard == 2  # supply-T at the scoring + the lone trumpet
    assert s.hand_size[0] == 2  # no replacement after the last scoring
    assert rules.winners(s) == [2]
    assert rules.returns(s) == pytest.approx([-1 / 3, -1 / 3, 1.0, -1 / 3])


def test_remaining_tie_is_shared_and_everyone_tied_gets_zero() -> None:
    rules = WallsRules(num_players=4)
    s = position(
        rules,
        ["T T T", "T T T", "T T T", "T T T"],
        ["red-5", "blue-4", "white-7", "brown-3"],
        won=["yellow-5", "yellow-4", "", ""],
        deck_top="S",
        scorings=2,
    )
    act(rules, s, "supply-T")
    assert rules.winners(s) == [0, 1]
    assert rules.returns(s) == pytest.approx([0.5, 0.5, -0.5, -0.5])
    t = position(rules, ["T T T"] * 4, ["red-5", "blue-4", "white-7", "brown-3"], deck_top="S", scorings=2)
    act(rules, t, "supply-T")
    assert rules.returns(t) == [0.0, 0.0, 0.0, 0.0]


def test_returns_zero_before_the_end() -> None:
    rules = WallsRules()
    s = rules.initial_state(np.random.default_rng(0))
    assert rules.returns(s) == [0.0] * 4


# ------------------------------------------------------------------------------------------ text, dicts
def test_action_texts() -> None:
    rules = WallsRules(num_players=3)
    s = position(rules, ["red-5 T blue-1 T T", "T T T T T", "T T T T T"])
    names = [rules.action_to_str(s, a) for a in rules.legal_actions(s)]
    assert names == [
        "blue-1",
        "red-5",
        "T-brown",
        "T-yellow",
        "T-blue",
        "T-red",
        "T-white",
        "supply-blue-1",
        "supply-red-5",
        "supply-T",
    ]
    assert rules.describe_action(ACTIONS.trumpet(3)) == "T-red: trumpet naming red"
    assert "supply" in rules.describe_action(ACTIONS.supply(0)) and "out of range" in rules.describe_action(56)


def test_state_dict_round_trip_of_a_scripted_position() -> None:
    rules = WallsRules(num_players=3)
    s = position(
        rules,
        ["red-5 T", "T T", "T T"],
        ["red-3 T-red", "", "blue-1"],
        supply_public="white-7",
        supply_hidden=["", "T", ""],
    )
    data = json.loads(json.dumps(rules.to_dict(s)))
    assert rules.to_dict(rules.from_dict(data, strict=False)) == data
    assert data["walls"][0] == ["red-3", "T-red"] and data["deck"][-1] == "S"


def _good_dict() -> dict[str, Any]:
    rules = WallsRules(num_players=3)
    return rules.to_dict(position(rules, ["red-5 T", "T T", "T T"], ["red-3", "", ""]))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("deck"), "missing deck"),
        (lambda d: d.update(num_players=4), "for 4 players"),
        (lambda d: d.update(phase="lunch"), "phase must be one of"),
        (lambda d: d.update(to_move=7), "to_move must be an int"),
        (lambda d: d["hands"][0].append("red-4"), "do not add up"),
        (lambda d: d["hands"][0].append("S"), "cannot hold 'S'"),
        (lambda d: d["walls"][1].append("T-blue"), "trumpets only"),
        (lambda d: d["walls"][1].append("T"), "T-<colour>"),
        (lambda d: d["deck"].remove("S"), "scoring card"),
        (lambda d: d.update(hands="red-5"), "one entry per seat"),
        (lambda d: d["won"][0].append("pink-9"), "not a walls card"),
        (lambda d: d.update(scorings=3), "over exactly when"),
    ],
)
def test_bad_state_dicts_say_what_is_wrong(change: Any, message: str) -> None:
    data = _good_dict()
    change(data)
    with pytest.raises(StateFormatError, match=message):
        WallsRules(num_players=3).from_dict(data, strict=False)  # format errors: either mode


def test_render_hides_other_hands_and_shows_all_when_asked() -> None:
    rules = WallsRules(num_players=3)
    s = position(rules, ["red-5 T", "white-7 T", "T T"], supply_hidden=["", "blue-7", ""])
    mine = rules.render_text(s, 0)
    assert "red-5" in mine and "white-7" not in mine and "blue-7" not in mine and "hand 2 cards" in mine
    everything = rules.render_text(s, None)
    assert "white-7" in everything and "blue-7" in everything
