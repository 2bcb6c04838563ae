"""grid: every rule and every example of the rules text, as positions built by hand."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from jericho_env.core.cards import card_to_str, parse_cards, str_to_card
from jericho_env.core.rules import StateFormatError
from jericho_env.games.grid.rules import MAX_GAME_LENGTH, GridRules
from jericho_env.games.grid.state import POINTS, GridState

RULES = GridRules(board_size=11)


def position(
    table: dict[tuple[int, int], str],
    hands: tuple[str, str],
    *,
    base: str = "Ks",
    draw: str | None = None,
    captured: tuple[str, str] = ("", ""),
    to_move: int = 0,
    in_chain: bool = False,
    passes_in_row: int = 0,
    last_pass: tuple[bool, bool] = (False, False),
    rules: GridRules = RULES,
) -> GridState:
    """A position: the given zones; every other card goes to the draw pile (or, if ``draw`` is given, the discard)."""
    named = [base, *table.values(), *" ".join(hands).split(), *" ".join(captured).split(), *(draw or "").split()]
    rest = [card_to_str(c) for c in range(52) if card_to_str(c) not in named]
    data: dict[str, Any] = {
        "board_size": rules.board.size,
        "base": base,
        "table": {f"{x},{y}": card for (x, y), card in table.items()},
        "hands": [h.split() for h in hands],
        "draw_bottom_to_top": rest if draw is None else draw.split(),
        "discard": [] if draw is None else rest,
        "captured": [c.split() for c in captured],
        "to_move": to_move,
        "in_chain": in_chain,
        "passes_in_row": passes_in_row,
        "last_pass": list(last_pass),
        "history": [[], []],  # nothing known of the hands
    }
    return rules.from_dict(data, strict=False)  # hand-made: need not be reachable by play


def legal_text(state: GridState, rules: GridRules = RULES) -> set[str]:
    """The legal actions of ``state`` as text."""
    return {rules.action_to_str(state, a) for a in rules.legal_actions(state)}


def play(state: GridState, text: str, rules: GridRules = RULES) -> None:
    """Apply the legal action named ``text``."""
    rules.apply(state, rules.str_to_action(state, text))


def table_of(state: GridState, rules: GridRules = RULES) -> dict[str, str]:
    """The face-up table as ``{"x,y": card}``."""
    return rules.to_dict(state)["table"]


# ------------------------------------------------------------------------------------ placement
def test_any_card_beside_the_base_alone() -> None:
    hand = "Ac 7d Th Qs 2h"
    s = position({}, (hand, "3c"))
    cells = ["0,1", "-1,0", "1,0", "0,-1"]
    assert legal_text(s) == {f"{c}@{cell}" for c in hand.split() for cell in cells} | {"pass"}


def test_ten_or_heart_beside_the_ten_of_hearts_and_the_two_neighbour_constraint() -> None:
    # The rules text's picture: the 10♥ beside the base, a 2♣ beside it too. Spot 1 touches only the base
    # (the 10♥ is diagonal); spot 2 touches only the 10♥; spot 3 touches the 10♥ and the 2♣.
    s = position({(1, 0): "Th", (0, -1): "2c"}, ("Tc 2h Td 5h Ks", "3c"), base="9d")
    legal = legal_text(s)
    hand = ["Tc", "2h", "Td", "5h", "Ks"]
    spot1, spot2, spot3 = "0,1", "2,0", "1,-1"
    assert {c for c in hand if f"{c}@{spot1}" in legal} == {"Tc", "2h", "Td", "5h", "Ks"}
    assert {c for c in hand if f"{c}@{spot2}" in legal} == {"Tc", "2h", "Td", "5h"}
    assert {c for c in hand if f"{c}@{spot3}" in legal} == {"Tc", "2h"}
    slot_ks = s.hands[0].index(str_to_card("Ks"))
    reason = RULES.why_illegal(s, slot_ks * RULES.cells + RULES.board.cell_of(1, -1))
    assert reason is not None and "Ks matches neither the suit nor the rank" in reason


def test_a_placement_must_touch_a_card_and_stay_in_the_window() -> None:
    s = position({(1, 0): "Th"}, ("5h", "3c"))
    far = RULES.board.cell_of(3, 3)
    assert RULES.why_illegal(s, far) == "cell 3,3 touches no card orthogonally"
    small = GridRules(board_size=3)
    s3 = position({}, ("5h 6h", "3c"), rules=small)
    assert small.info.num_actions == 5 * 9 + 1
    assert len(small.legal_actions(s3)) == 2 * 4 + 1
    with pytest.raises(ValueError, match="outside the 3x3 table"):
        small.board.cell_of(2, 0)


def test_occupied_cell_and_empty_slot_are_illegal_with_reasons() -> None:
    s = position({(1, 0): "Th"}, ("5h", "3c"))
    assert "already holds Th" in RULES.why_illegal(s, RULES.board.cell_of(1, 0))
    assert "already holds the base" in RULES.why_illegal(s, RULES.board.center)
    assert "hand slot 3 is empty" in RULES.why_illegal(s, 3 * RULES.cells + RULES.board.cell_of(0, 1))


# ------------------------------------------------------------------------------------ captures
NINE_GAP = {(1, 0): "Kh", (0, 1): "5h", (2, 0): "Kc", (2, 1): "9c", (0, 2): "5s", (1, 2): "9s"}


def test_nine_of_hearts_into_an_already_surrounded_gap_is_captured_at_once() -> None:
    s = position(NINE_GAP, ("9h 2d", "3c"))
    assert "9h@1,1" in legal_text(s)
    assert "2d@1,1" not in legal_text(s)
    play(s, "9h@1,1")
    assert s.captured[0] == [str_to_card("9h")]
    assert s.points == [9, 0]
    assert "1,1" not in table_of(s)
    assert len(table_of(s)) == 6  # nothing else captured or discarded
    assert s.to_move == 1 and not s.in_chain  # 2d fits no capturing cell: the turn ended by itself


# Two cards, 7♥ at (1,0) and K♥ at (3,0), each with three sides covered; the gap (2,0) is the fourth of both.
DOUBLE = {
    (1, 0): "7h",
    (3, 0): "Kh",
    (1, 1): "2h",
    (1, -1): "3h",
    (2, 1): "8h",
    (3, 1): "4h",
    (3, -1): "5h",
    (4, 0): "6h",
}


def test_double_capture() -> None:
    s = position(DOUBLE, ("9h Qs", "3c"))
    play(s, "9h@2,0")
    assert sorted(card_to_str(c) for c in s.captured[0]) == ["7h", "Kh"]
    assert s.points == [17, 0]
    assert "1,0" not in table_of(s) and "3,0" not in table_of(s)


def test_a_chain_may_continue_only_with_a_capturing_placement() -> None:
    s = position(DOUBLE, ("9h Qh Qs", "3c"))
    play(s, "9h@2,0")
    assert s.in_chain and s.to_move == 0
    # (1,0) and (3,0) are now empty with four neighbours: any card placed there is captured at once.
    # Qh@2,-1 or Qs beside the base would be legal at the start of a turn, but they capture nothing.
    # Qh@2,2 captures too: it covers the fourth side of the 8♥ at (2,1), whose third side the 9♥ covered.
    assert legal_text(s) == {"Qh@1,0", "Qh@3,0", "Qh@2,2", "end"}
    qs_beside_base = s.hands[0].index(str_to_card("Qs")) * RULES.cells + RULES.board.cell_of(-1, 0)
    reason = RULES.why_illegal(s, qs_beside_base)
    assert reason is not None and "only a capturing placement" in reason
    obs = RULES.layout.split(RULES.observe(s, 0))
    assert obs["in_chain"][0] == 1.0
    play(s, "Qh@1,0")
    assert s.points == [27, 0]
    # Qs fits no capturing cell: the turn ends without an explicit "end".
    assert s.to_move == 1 and not s.in_chain


def test_the_chain_ends_by_itself_when_the_hand_is_empty() -> None:
    s = position(DOUBLE, ("9h", "3c"))
    play(s, "9h@2,0")
    assert s.to_move == 1 and not s.in_chain


def test_the_base_is_never_captured() -> None:
    s = position({(0, 1): "5h", (-1, 0): "5c", (1, 0): "5d"}, ("5s", "3c"))
    play(s, "5s@0,-1")
    assert s.captured == [[], []]
    assert s.board[RULES.board.center] == 52
    assert len(table_of(s)) == 4 and s.to_move == 1


def test_a_placement_that_captures_nothing_ends_the_turn() -> None:
    s = position({}, ("5h 6h", "3c"), draw="Ac Ad Ah As")
    play(s, "5h@1,0")
    assert s.to_move == 1 and not s.in_chain and s.passes_in_row == 0


# ------------------------------------------------------------------------------------ end of turn
def test_disconnected_cards_are_discarded_at_the_end_of_the_turn_and_not_before() -> None:
    s = position(DOUBLE, ("9h Qh Qs", "3c"))
    play(s, "9h@2,0")
    # The base lost its only neighbour (7♥): every face-up card is cut off, yet still on the table mid-turn.
    assert s.in_chain
    assert len(table_of(s)) == 7
    assert s.discard == []
    play(s, "end")
    assert table_of(s) == {}
    assert sorted(card_to_str(c) for c in s.discard) == ["2h", "3h", "4h", "5h", "6h", "8h", "9h"]
    assert s.to_move == 1


def test_only_the_cut_off_part_is_discarded() -> None:
    # Capturing 7♥ at (1,0) leaves 2♥ joined to the base through 4♥, but cuts off 3♥ and the 7♣ just placed.
    table = {(1, 0): "7h", (1, 1): "2h", (0, 1): "4h", (1, -1): "3h"}
    s = position(table, ("7c 9d", "3c"))
    play(s, "7c@2,0")
    assert s.captured[0] == [str_to_card("7h")]
    assert not s.in_chain and s.to_move == 1
    assert sorted(card_to_str(c) for c in s.discard) == ["3h", "7c"]
    assert table_of(s) == {"1,1": "2h", "0,1": "4h"}


def test_refill_to_five_from_the_top_of_the_draw_pile() -> None:
    s = position({}, ("Ac Ad Ah As 2c", "3c"), draw="Kd Qd Jd")  # Jd is the top
    play(s, "Ac@1,0")
    assert sorted(s.hands[0]) == sorted(parse_cards("Ad Ah As 2c Jd"))
    assert s.draw == parse_cards("Kd Qd")


def test_short_refill_when_the_draw_pile_runs_low() -> None:
    s = position(DOUBLE, ("9h Qh Qs Jc 2s", "3c"), draw="Kd")
    play(s, "9h@2,0")
    play(s, "Qh@1,0")
    assert s.to_move == 1
    assert sorted(s.hands[0]) == sorted(parse_cards("Qs Jc 2s Kd"))
    assert s.draw == []
    # with 4 cards the player plays as usual next turn
    obs = RULES.layout.split(RULES.observe(s, 0))
    assert obs["hand"].sum() == 4 and obs["hand_slots"][4].sum() == 0
    assert obs["draw_size"][0] == 0.0


# ------------------------------------------------------------------------------------ passing and end
def test_pass_is_always_legal_at_the_start_of_a_turn() -> None:
    s = position({}, ("5h 6h", "3c"))
    assert "pass" in legal_text(s)
    before = RULES.to_dict(s)
    play(s, "pass")
    after = RULES.to_dict(s)
    assert after["to_move"] == 1 and after["passes_in_row"] == 1 and after["last_pass"] == [True, False]
    assert {k: v for k, v in after.items() if k not in ("to_move", "passes_in_row", "last_pass")} == {
        k: v for k, v in before.items() if k not in ("to_move", "passes_in_row", "last_pass")
    }
    assert RULES.layout.split(RULES.observe(s, 1))["opp_passed"][0] == 1.0
    assert RULES.layout.split(RULES.observe(s, 0))["opp_passed"][0] == 0.0


def test_an_empty_hand_can_only_pass() -> None:
    s = position({}, ("", "3c"), draw="")
    assert RULES.legal_actions(s) == [RULES.pass_action]


def test_two_consecutive_passes_end_the_game() -> None:
    s = position({}, ("5h 6h", "3c 4c"))
    play(s, "pass")
    assert not RULES.is_terminal(s)
    play(s, "pass")
    assert RULES.is_terminal(s) and RULES.current_player(s) == -1 and RULES.legal_actions(s) == []
    assert RULES.returns(s) == [0.0, 0.0]


def test_a_placement_between_passes_resets_the_count() -> None:
    s = position({}, ("5h 6h", "3c 4c"))
    play(s, "pass")
    play(s, "3c@1,0")
    assert s.passes_in_row == 0 and s.last_pass == [True, False]
    play(s, "pass")
    assert not RULES.is_terminal(s)
    play(s, "pass")
    assert RULES.is_terminal(s)


def test_ending_a_chain_is_not_a_pass() -> None:
    s = position(DOUBLE, ("9h Qh", "3c"), passes_in_row=1, last_pass=(False, True))
    play(s, "9h@2,0")
    play(s, "end")
    assert s.passes_in_row == 0 and s.last_pass == [False, True]
    play(s, "pass")
    assert not RULES.is_terminal(s)


# ------------------------------------------------------------------------------------ scoring
def test_points_of_ace_seven_king() -> None:
    assert POINTS[str_to_card("Ac")] == 1
    assert POINTS[str_to_card("7d")] == 7
    assert POINTS[str_to_card("Kh")] == 10
    assert POINTS[str_to_card("Th")] == 10 and POINTS[str_to_card("Js")] == 10 and POINTS[str_to_card("Qs")] == 10
    assert sum(POINTS) == 340


@pytest.mark.parametrize(
    ("captured", "expected"),
    [(("Ah 7c", "Kd"), [-1.0, 1.0]), (("Kd Ah", "Qc"), [1.0, -1.0]), (("Ah 7c 2d", "Kd"), [0.0, 0.0])],
)
def test_final_score_decides_the_returns(captured: tuple[str, str], expected: list[float]) -> None:
    s = position({}, ("", ""), draw="", captured=captured, passes_in_row=2, last_pass=(True, True))
    assert RULES.returns(s) == expected


@pytest.mark.parametrize(("card", "points"), [("Ah", 1), ("7h", 7), ("Kh", 10)])
def test_capturing_ace_seven_king_scores_their_points(card: str, points: int) -> None:
    # A gap whose four neighbours are two other hearts and the same rank in clubs and spades.
    rank = card[0]
    table = {(1, 0): "Qh", (2, 0): "Qc", (2, 1): rank + "c", (0, 1): "2h", (0, 2): "2s", (1, 2): rank + "s"}
    s = position(table, (card, "3c"), base="Jd")
    play(s, card + "@1,1")
    assert s.points == [points, 0]
    assert s.captured[0] == [str_to_card(card)]
    s.passes_in_row = 2
    assert RULES.returns(s) == [1.0, -1.0]


def test_max_game_length_is_the_derived_bound() -> None:
    assert MAX_GAME_LENGTH == 155 == RULES.info.max_game_length


# ------------------------------------------------------------------------------------ options, dicts
@pytest.mark.parametrize("bad", [4, 1, 0, -3, 103, True, 21.0, "21"])
def test_bad_board_size_is_rejected(bad: Any) -> None:
    with pytest.raises(ValueError, match=r"board_size.*odd int in 3\.\.101"):
        GridRules(board_size=bad)


def test_board_size_changes_spaces() -> None:
    r = GridRules(board_size=7)
    assert r.info.num_actions == 5 * 49 + 1
    assert r.layout.size == 52 + 85 + 52 + 1 + 1 + 52 + 1 + 1 + 19 * 49 + 52 + 52 + 3
    assert GridRules().options["board_size"] == 21


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"base": "Ah"}, "exactly once"),
        ({"board_size": 9}, "board_size=9"),
        ({"table": {"0,0": "Ah"}}, "base's cell"),
        ({"table": {"9,9": "Ah"}}, "outside"),
        ({"hands": [["Ah", "2h", "3h", "4h", "5h", "6h"], []]}, "at most 5"),
        ({"to_move": 2}, "to_move"),
        ({"in_chain": "yes"}, "in_chain"),
        ({"draw_bottom_to_top": "Ah"}, "list of cards"),
    ],
)
def test_malformed_state_dicts_say_what_is_wrong(change: dict[str, Any], match: str) -> None:
    data = RULES.to_dict(RULES.initial_state(np.random.default_rng(0)))
    data.update(change)
    with pytest.raises(StateFormatError, match=match):
        RULES.from_dict(data)
