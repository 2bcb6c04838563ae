"""Castles: scripted positions for every rule, decision and variant (seeds/castles.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from jericho_env.core.rules import OptionError
from jericho_env.games.castles.rules import CastlesRules
from jericho_env.games.castles.state import CastlesState, Phase


def codes(rules: CastlesRules, text: str) -> list[int]:
    """Rank codes of space-separated rank names, e.g. ``"A 7 T joker"``."""
    return [rules.deck.code_of(t) for t in text.split()]


def counts(rules: CastlesRules, text: str) -> list[int]:
    """Counts per rank code of space-separated rank names."""
    out = [0] * (rules.deck.ranks + 1)
    for c in codes(rules, text):
        out[c] += 1
    return out


def position(
    rules: CastlesRules,
    hands: tuple[str, str] = ("", ""),
    saves: tuple[str, str] = ("", ""),
    decks: tuple[str, str] = ("", ""),
    beat: str | None = None,
    beat_n: int = 1,
    beat_by: int = 1,
    to_move: int = 0,
    phase: str = "play",
    pending: int = 0,
    first: int = 0,
    discard: tuple[str, str] = ("", ""),
) -> CastlesState:
    """A hand-built state; decks are written top card first; every other card of a deck is on the pile."""
    d = rules.deck
    pile = []
    for p in range(2):
        left = d.composition()
        for zone in (hands[p], saves[p], decks[p], discard[p]):
            for c in codes(rules, zone):
                left[c] -= 1
        assert min(left) >= 0, f"too many cards in player {p}'s zones"
        pile.append(left)
    data: dict[str, Any] = {
        "hands": [counts(rules, h) for h in hands],
        "saves": [counts(rules, s) for s in saves],
        "decks": [list(reversed(codes(rules, t))) for t in decks],
        "pile": pile,
        "discard": [counts(rules, t) for t in discard],
        "beat": -1 if beat is None else d.code_of(beat),
        "beat_n": beat_n if beat is not None else 0,
        "beat_by": beat_by if beat is not None else -1,
        "first": first,
        "to_move": to_move,
        "phase": phase,
        "pending": pending,
        "winner": -1,
        "reason": "",
        # nothing known of the hands beyond their cards
        "barred": [0, 0],
        "need_n": [0, 0],
        "need_beat": [-1, -1],
    }
    return rules.from_dict(data, strict=False)  # hand-made: need not be reachable by play


def legal_text(rules: CastlesRules, s: CastlesState) -> list[str]:
    """The legal actions of ``s`` as text."""
    return [rules.action_to_str(s, a) for a in rules.legal_actions(s)]


def play(rules: CastlesRules, s: CastlesState, text: str) -> None:
    """Apply the legal action named ``text``."""
    rules.apply(s, rules.str_to_action(s, text))


def hand_text(rules: CastlesRules, s: CastlesState, p: int) -> str:
    """Seat ``p``'s hand as rank names, lowest first."""
    return " ".join(rules.deck.name(c) for c, n in enumerate(s.hands[p]) for _ in range(n))


@pytest.fixture
def rules() -> CastlesRules:
    return CastlesRules()


# ---------------------------------------------------------------------------------- plays
def test_equal_and_higher_plays_are_legal_lower_are_not(rules: CastlesRules) -> None:
    s = position(rules, hands=("3 7 9 T 6", "2 2 2 2 4"), decks=("5 5", "5 5"), beat="7")
    assert legal_text(rules, s) == ["7", "9", "T"]
    assert "6 does not beat 7" in rules.why_illegal(s, rules.deck.code_of("6") * 4)


def test_multiples_of_one_rank_need_only_the_rank_to_beat(rules: CastlesRules) -> None:
    s = position(rules, hands=("5 5 5 8 joker", "9 9 9 9 T"), decks=("2 3 4", "6"), beat="4", beat_n=2)
    assert legal_text(rules, s) == ["5", "5x2", "5x3", "8", "joker"]
    play(rules, s, "5x3")
    assert (s.beat, s.beat_n, s.beat_by, s.to_move) == (rules.deck.code_of("5"), 3, 0, 1)
    assert hand_text(rules, s, 0) == "2 3 4 8 joker"  # drew 3 back up to 5
    assert legal_text(rules, s) == ["9", "9x2", "9x3", "9x4", "T"]
    assert "you hold 1 card(s) of rank T, not 2" in rules.why_illegal(s, rules.deck.code_of("T") * 4 + 1)


def test_ace_on_ten_restarts_the_cycle(rules: CastlesRules) -> None:
    s = position(rules, hands=("A A 2 9 3", "2 4 6 8 8"), decks=("7", "7"), beat="T")
    assert legal_text(rules, s) == ["A", "Ax2"]  # 2, 3 and 9 are below a 10; only Aces go on it
    play(rules, s, "Ax2")
    # Everything is equal to or higher than an Ace: the cycle starts again from the bottom.
    assert legal_text(rules, s) == ["2", "4", "6", "8", "8x2"]
    s2 = position(rules, hands=("A 2 3 4 9", "6 6 6 6 7"), decks=("7", "7"), beat="9")
    assert legal_text(rules, s2) == ["9"]  # an Ace goes on a 10 only, not on a 9


def test_joker_goes_on_anything_then_an_extra_turn_with_any_card(rules: CastlesRules) -> None:
    s = position(rules, hands=("2 3 joker 4 5", "6 7 8 9 9"), decks=("A T", "T T"), beat="T")
    assert legal_text(rules, s) == ["joker"]
    play(rules, s, "joker")
    assert s.to_move == 0 and s.beat == rules.deck.joker and s.beat_by == 0
    assert hand_text(rules, s, 0) == "A 2 3 4 5"  # the joker's turn ended with a refill
    assert legal_text(rules, s) == ["A", "2", "3", "4", "5"]  # any card from hand
    assert rules.observation_dict(s, 0)["joker_turn"][0] == 1.0
    assert rules.observation_dict(s, 1)["joker_turn"][0] == 1.0
    play(rules, s, "2")
    assert s.to_move == 1 and s.beat == rules.deck.code_of("2")
    assert rules.observation_dict(s, 1)["joker_turn"][0] == 0.0


def test_joker_on_a_joker_and_joker_as_last_card(rules: CastlesRules) -> None:
    s = position(rules, hands=("joker joker", "6 7 8 9 9"), beat="T", saves=("", "A"))
    play(rules, s, "joker")
    assert s.to_move == 0 and legal_text(rules, s) == ["joker"]
    play(rules, s, "joker")  # the last card of deck and hand: the win comes before any extra turn
    assert rules.is_terminal(s) and s.winner == 0 and rules.returns(s) == [1.0, -1.0]


def test_refill_to_five_and_a_short_deck(rules: CastlesRules) -> None:
    s = position(rules, hands=("6 6 7 8 9", "T T T T A"), decks=("2 3", "4 4 4 4 5"), beat="5")
    play(rules, s, "6x2")
    assert s.hand_n[0] == 5 and s.decks[0] == [] and hand_text(rules, s, 0) == "2 3 7 8 9"
    assert legal_text(rules, s) == ["T", "Tx2", "Tx3", "Tx4"]
    play(rules, s, "T")  # player 1 refills one card from the top of its own deck
    assert hand_text(rules, s, 1) == "A 4 T T T" and len(s.decks[1]) == 4
    # player 0 now holds 2 3 7 8 9 against a 10, with no save: player 1 wins
    assert rules.is_terminal(s) and s.winner == 1 and s.reason == 2


def test_no_refill_once_the_deck_is_empty(rules: CastlesRules) -> None:
    s = position(rules, hands=("6 7 8 9 9", "T T T T A"), beat="5", saves=("", "2"))
    play(rules, s, "9x2")
    assert s.hand_n[0] == 3 and not rules.is_terminal(s)


# ---------------------------------------------------------------------------------- set-up
def test_set_up_draws_eight_chooses_three_saves_then_first_player_turns_over_a_card(rules: CastlesRules) -> None:
    s = rules.initial_state(np.random.default_rng(4))
    f = s.first
    assert (
        s.phase == Phase.CHOOSE_SAVES
        and s.to_move == f
        and s.hand_n == [8, 8]
        and [len(d) for d in s.decks] == [34, 34]
    )
    for p in (f, 1 - f):
        for n in range(3):
            assert s.to_move == p and s.pending == 3 - n
            legal = rules.legal_actions(s)
            assert all(rules.action_to_str(s, a).startswith("save ") for a in legal)
            assert legal == [rules.actions.save(c) for c in range(11) if s.hands[p][c]]
            rules.apply(s, legal[-1])
        assert s.save_n[p] == 3
    assert s.hand_n == [5, 5] and sum(s.pile[f]) == 1 and sum(s.pile[1 - f]) == 0
    assert len(s.decks[f]) == 33 and len(s.decks[1 - f]) == 34
    assert s.beat_by == f and s.beat_n == 1 and s.beat != rules.deck.joker
    assert s.to_move == 1 - f and s.phase == Phase.PLAY  # seed 4: the second player can answer the turned-over card


def test_choosing_saves_by_rank_and_the_turned_over_card_is_answered(rules: CastlesRules) -> None:
    s = position(
        rules,
        hands=("A 2 3 4 5 6 7 8", "2 3 4 5 6 7 8 9"),
        decks=("9 T T", "A A"),
        phase="choose_saves",
        pending=3,
        to_move=1,
        first=1,
    )
    for t in ("save 8", "save 9", "save 2"):
        play(rules, s, t)
    assert s.to_move == 0 and s.pending == 3 and rules.legal_actions(s)[0] == rules.actions.save(0)  # "save A"
    for t in ("save A", "save 2", "save 3"):
        play(rules, s, t)
    # Player 1 (first) turned over the top of its deck, an A; player 0 answers it with anything.
    assert s.beat == 0 and s.beat_by == 1 and s.to_move == 0 and s.decks[1] == [0]
    assert legal_text(rules, s) == ["4", "5", "6", "7", "8"]


def test_a_turned_over_joker_gives_the_first_player_a_free_play(rules: CastlesRules) -> None:
    s = position(
        rules,
        hands=("A 2 3 3 joker", "2 3 4 5 6 7"),
        saves=("6 7 8", "8 9"),
        decks=("joker T", "A"),
        phase="choose_saves",
        pending=1,
        to_move=1,
        first=0,
    )
    play(rules, s, "save 7")
    assert s.beat == rules.deck.joker and s.beat_by == 0 and s.to_move == 0 and s.phase == Phase.PLAY
    assert s.hand_n == [5, 5] and s.save_n == [3, 3] and s.decks[0] == [rules.deck.code_of("T")]
    assert legal_text(rules, s) == ["A", "2", "3", "3x2", "joker"]  # any card: a free play


# ---------------------------------------------------------------------------------- saves
def test_save_sequence_discard_draw_five_then_play_a_save_whatever_its_rank(rules: CastlesRules) -> None:
    s = position(
        rules,
        hands=("T T T T 9", "2 3 4 5 6"),
        saves=("", "2 7 joker"),
        decks=("", "A A 8 8 9 9"),
        beat="8",
        beat_by=1,
        to_move=0,
    )
    play(rules, s, "9")  # player 1 holds 2..6 against a 9: stuck
    assert s.to_move == 1 and s.phase == Phase.PLAY_SAVE
    assert s.discard[1] == counts(rules, "2 3 4 5 6")  # the old hand, face up
    assert hand_text(rules, s, 1) == "A A 8 8 9" and len(s.decks[1]) == 1
    assert legal_text(rules, s) == ["play save 2", "play save 7", "play save joker"]
    assert "you must turn over one of your saves" in rules.why_illegal(s, rules.deck.code_of("9") * 4)
    play(rules, s, "play save 2")  # a 2 on a 9: saves ignore the order
    assert (s.beat, s.beat_n, s.beat_by, s.to_move, s.save_n[1]) == (1, 1, 1, 0, 2)
    assert s.hand_n[1] == 5  # already five: nothing more to draw
    assert legal_text(rules, s) == ["T", "Tx2", "Tx3", "Tx4"]


def test_a_joker_save_is_a_joker(rules: CastlesRules) -> None:
    s = position(
        rules,
        hands=("2 3 4 5 6", "T T 9 9 9"),
        saves=("joker", ""),
        decks=("7 7 7 7 8 8", "A"),
        beat="9",
        beat_by=0,
        to_move=1,
    )
    play(rules, s, "T")
    assert (
        s.phase == Phase.PLAY_SAVE
        and hand_text(rules, s, 0) == "7 7 7 7 8"
        and legal_text(rules, s) == ["play save joker"]
    )
    play(rules, s, "play save joker")
    assert s.to_move == 0 and s.beat == rules.deck.joker and legal_text(rules, s) == ["7", "7x2", "7x3", "7x4", "8"]


def test_short_deck_discard_only_as_many_as_the_deck_holds(rules: CastlesRules) -> None:
    s = position(
        rules, hands=("2 3 4 5 6", "T T T T 9"), saves=("8", ""), decks=("A 9", "7"), beat="9", beat_by=0, to_move=1
    )
    play(rules, s, "T")
    assert s.to_move == 0 and s.phase == Phase.DISCARD and s.pending == 2
    assert legal_text(rules, s) == ["discard 2", "discard 3", "discard 4", "discard 5", "discard 6"]
    play(rules, s, "discard 2")
    assert s.phase == Phase.DISCARD and s.pending == 1 and s.hand_n[0] == 4
    assert "you hold no 2" in rules.why_illegal(s, rules.actions.discard(1))
    play(rules, s, "discard 6")
    assert s.phase == Phase.PLAY_SAVE and s.decks[0] == [] and hand_text(rules, s, 0) == "A 3 4 5 9"
    assert s.discard[0] == counts(rules, "2 6")
    play(rules, s, "play save 8")
    assert s.beat == rules.deck.code_of("8") and s.to_move == 1


def test_stuck_with_an_empty_deck_keeps_the_hand(rules: CastlesRules) -> None:
    s = position(rules, hands=("2 3", "T T T T 9"), saves=("8 A", ""), decks=("", "7"), beat="9", beat_by=0, to_move=1)
    play(rules, s, "T")
    assert s.to_move == 0 and s.phase == Phase.PLAY_SAVE and hand_text(rules, s, 0) == "2 3" and sum(s.discard[0]) == 0
    play(rules, s, "play save A")
    assert not rules.is_terminal(s) and s.save_n[0] == 1 and s.hand_n[0] == 2


def test_losing_when_stuck_with_no_save_left(rules: CastlesRules) -> None:
    s = position(
        rules, hands=("2 3 4 5 6", "T 9 9 9 9"), saves=("", "A"), decks=("7 7 7", "8"), beat="9", beat_by=0, to_move=1
    )
    play(rules, s, "T")
    assert rules.is_terminal(s) and s.winner == 1 and s.reason == 2
    assert rules.returns(s) == [-1.0, 1.0] and rules.current_player(s) == -1 and rules.legal_actions(s) == []
    assert "cannot play and has no save left" in rules.render_text(s, None)


# ---------------------------------------------------------------------------------- winning by emptying
def test_winning_by_emptying_deck_and_hand_even_with_saves_left(rules: CastlesRules) -> None:
    s = position(rules, hands=("8 8", "T 9 9 9 9"), saves=("2 3 4", "A"), decks=("", "7"), beat="5", to_move=0)
    play(rules, s, "8x2")
    assert rules.is_terminal(s) and s.winner == 0 and s.reason == 1 and rules.returns(s) == [1.0, -1.0]
    assert "no cards left in deck and hand" in rules.render_text(s, 1)


def test_an_empty_hand_with_cards_in_the_deck_is_not_a_win(rules: CastlesRules) -> None:
    s = position(rules, hands=("8 8", "T 9 9 9 9"), saves=("2", "A"), decks=("3", "7"), beat="5", to_move=0)
    play(rules, s, "8x2")
    assert not rules.is_terminal(s) and s.hand_n[0] == 1 and s.decks[0] == []


# ---------------------------------------------------------------------------------- variants
def test_option_ranks_5_and_13() -> None:
    r5 = CastlesRules(ranks=5)
    assert r5.deck.size == 22 and r5.info.num_actions == 5 * 4 + 1 + 3 * 6 and r5.info.max_game_length == 50
    s = position(r5, hands=("A 2 3 4 5", "5 5 5 4 4"), decks=("", ""), saves=("", "A"), beat="5")
    assert legal_text(r5, s) == ["A", "5"]  # the Ace goes on the 5, the top rank
    r13 = CastlesRules(ranks=13)
    assert r13.deck.size == 54 and r13.info.max_game_length == 114 and r13.deck.code_of("K") == 12
    s = position(r13, hands=("A T J Q K", "2 2 3 3 4"), decks=("", ""), saves=("", "A"), beat="J")
    assert legal_text(r13, s) == ["J", "Q", "K"]  # a 10 is below a Jack; no Ace on a Jack
    s = position(r13, hands=("A T J Q K", "2 2 3 3 4"), decks=("", ""), saves=("", "A"), beat="K")
    assert legal_text(r13, s) == ["A", "K"]


def test_option_small_deck() -> None:
    r = CastlesRules(small_deck=True)
    assert r.deck.size == 21 and r.deck.composition() == [2] * 10 + [1] and len(r.all_cards()) == 42
    assert r.info.num_actions == 10 * 2 + 1 + 33 and r.info.max_game_length == 48
    s = r.initial_state(np.random.default_rng(0))
    assert [len(d) for d in s.decks] == [13, 13]
    s = position(r, hands=("7 7 9 9 joker", "T T 8 8 A"), decks=("", ""), saves=("", "A"), beat="7")
    assert legal_text(r, s) == ["7", "7x2", "9", "9x2", "joker"]


def test_option_reversed_order() -> None:
    r = CastlesRules(reversed_order=True)
    s = position(r, hands=("A 2 6 7 9", "T T 8 8 3"), decks=("", ""), saves=("", "A"), beat="7")
    assert legal_text(r, s) == ["A", "2", "6", "7"]  # A high, 10 low: lower numbers beat higher
    s = position(r, hands=("A 2 6 7 T", "T 9 8 8 3"), decks=("", ""), saves=("", "A"), beat="A")
    assert legal_text(r, s) == ["A", "T"]  # the 10 (now lowest) trumps the A (now highest)
    s = position(r, hands=("A 2 6 7 T", "T 9 8 8 3"), decks=("", ""), saves=("", "A"), beat="T")
    assert legal_text(r, s) == ["A", "2", "6", "7", "T"]
    assert "reversed" in r.render_text(s, 0)


@pytest.mark.parametrize(
    ("opts", "match"),
    [
        ({"ranks": 7}, "ranks must be one of 5, 10, 13"),
        ({"ranks": True}, "ranks"),
        ({"small_deck": 1}, "small_deck must be one of False, True"),
        ({"reversed_order": "yes"}, "reversed_order"),
        ({"colour": "red"}, "unknown option"),
    ],
)
def test_bad_options_are_rejected(opts: dict[str, Any], match: str) -> None:
    with pytest.raises(OptionError, match=match):
        CastlesRules(**opts)


# ---------------------------------------------------------------------------------- codec, text
def test_dict_round_trip_of_a_built_position(rules: CastlesRules) -> None:
    s = position(
        rules, hands=("A 2 3 4 5", "6 7 8 9 T"), saves=("joker", "T T"), decks=("9 9", "A"), beat="3", discard=("7", "")
    )
    again = rules.from_dict(rules.to_dict(s))
    assert again == s and rules.to_dict(again) == rules.to_dict(s)


def test_render_hides_the_opponent_and_shows_all_with_no_seat(rules: CastlesRules) -> None:
    s = position(rules, hands=("A 2 3 4 5", "6 6 8 9 T"), saves=("joker", "T T"), decks=("9 9", "A"), beat="3")
    mine = rules.render_text(s, 0)
    assert "hand 5: A 2 3 4 5 | saves 1: joker" in mine and "hand 5: 6 6" not in mine
    assert "hand 5: ? ? ? ? ? | saves 2: ? ?" in mine
    assert "deck, top first" not in mine and "playable on it: 3 4 5 6 7 8 9 T or a joker" in mine
    everything = rules.render_text(s, None)
    assert "hand 5: 6 6 8 9 T | saves 2: T T" in everything and "deck, top first: 9 9" in everything
