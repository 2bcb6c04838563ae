"""Castles: the greedy agent (masks, scripted decisions, strength against random) and the image view."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import agents
from agents.greedy.castles import GreedyAgent
from experiments.play.tournament import AgentSpec, run_games, tabulate
from jericho_env.games.castles import VARIANTS
from jericho_env.games.castles.rules import CastlesRules
from jericho_env.games.castles.state import CastlesState
from tests.games.test_castles_rules import codes, position


def full_decks(rules: CastlesRules, hands: tuple[str, str], saves: tuple[str, str] = ("", "")) -> tuple[str, str]:
    """Each player's deck holding every card not in their hand or saves (nothing played yet)."""
    d = rules.deck
    out = []
    for p in range(2):
        left = d.composition()
        for c in codes(rules, hands[p] + " " + saves[p]):
            left[c] -= 1
        out.append(" ".join(d.name(c) for c, n in enumerate(left) for _ in range(n)))
    return out[0], out[1]


def obs_of(rules: CastlesRules, s: CastlesState) -> dict[str, np.ndarray]:
    """The PettingZoo observation dict of the seat to move."""
    return {"observation": rules.observe(s, s.to_move), "action_mask": rules.legal_mask(s)}


def greedy_choice(rules: CastlesRules, s: CastlesState) -> str:
    """What greedy plays in ``s``, as the action's text."""
    a = GreedyAgent("castles", **rules.options).act(obs_of(rules, s))
    return rules.action_to_str(s, a)


def play_position(hands: tuple[str, str], beat: str, saves: tuple[str, str] = ("T", "T"), **kw: Any) -> str:
    """Greedy's play for seat 0 with ``hands`` against ``beat`` (played by seat 1), everything else in the decks."""
    rules = CastlesRules()
    decks = full_decks(rules, hands, saves)
    # the card to beat counts as played by seat 1: take one copy out of its deck
    d1 = decks[1].split()
    d1.remove(beat if beat != "joker" else "joker")
    s = position(rules, hands=hands, saves=saves, decks=(decks[0], " ".join(d1)), beat=beat, beat_by=1, **kw)
    return greedy_choice(rules, s)


# ---------------------------------------------------------------------------------------- masks
@pytest.mark.parametrize("opts", [{}, *VARIANTS], ids=str)
def test_greedy_never_picks_a_masked_action(opts: dict[str, Any]) -> None:
    rules = CastlesRules(**opts)
    rng = np.random.default_rng(11)
    greedy = [GreedyAgent("castles", **opts), GreedyAgent("castles", **opts)]
    rand = agents.make("random", "castles", seed=3, **opts)
    checked = 0
    for game in range(60 if not opts else 25):
        s = rules.initial_state(rng)
        # both seats greedy in even games, greedy against random in odd ones
        players = greedy if game % 2 == 0 else [greedy[0], rand]
        while not rules.is_terminal(s):
            obs = obs_of(rules, s)
            a = players[s.to_move].act(obs)
            assert isinstance(a, int) and obs["action_mask"][a] == 1, rules.render_text(s, s.to_move)
            rules.apply(s, a)
            checked += 1
    assert checked > 400


def test_greedy_through_the_registry_with_options() -> None:
    agent = agents.make("greedy", "castles", seed=1, ranks=5, small_deck=True)
    assert isinstance(agent, GreedyAgent) and agent.name == "greedy"
    rules = CastlesRules(ranks=5, small_deck=True)
    s = rules.initial_state(np.random.default_rng(0))
    assert rules.legal_mask(s)[agent.act(obs_of(rules, s))] == 1


def test_greedy_refuses_an_empty_mask() -> None:
    rules = CastlesRules()
    obs = {"observation": rules.layout.zeros(), "action_mask": np.zeros(rules.info.num_actions, np.int8)}
    with pytest.raises(ValueError, match="no legal action"):
        GreedyAgent("castles").act(obs)


# ---------------------------------------------------------------------------------------- decisions
def test_greedy_plays_the_lowest_legal_rank_with_all_its_copies() -> None:
    assert play_position(("A 3 3 7 joker", "2 4 5 6 8"), beat="2") == "3x2"
    assert play_position(("2 5 8 8 8", "2 4 5 6 9"), beat="6") == "8x3"


def test_greedy_keeps_the_joker_while_another_play_exists() -> None:
    assert play_position(("4 9 joker joker 2", "2 4 5 6 9"), beat="8") == "9"
    assert play_position(("4 5 joker 2 3", "2 4 5 6 9"), beat="8") == "joker"


def test_greedy_steps_up_when_the_opponent_can_hardly_answer() -> None:
    rules = CastlesRules()
    # every 8, 9, 10 and joker of the opponent's is gone: an 8 leaves it stuck for sure, a 6 hardly ever
    hands = ("6 8 A 2 3", "2 3 4 6 7")
    s = position(rules, hands=hands, saves=("T", "A"), decks=("9 9 9 4 4", "2 3 4 5 6 7"), beat="5", beat_by=1)
    assert greedy_choice(rules, s) == "8"
    # with the opponent's high cards still unseen, the lowest rank it is
    decks = full_decks(rules, hands, ("T", "A"))
    d1 = decks[1].split()
    d1.remove("5")
    s = position(rules, hands=hands, saves=("T", "A"), decks=(decks[0], " ".join(d1)), beat="5", beat_by=1)
    assert greedy_choice(rules, s) == "6"


def test_greedy_answers_a_ten_with_an_ace_rather_than_a_ten() -> None:
    assert play_position(("A 5 T 2 3", "2 4 5 6 9"), beat="T") == "A"


def test_greedy_plays_low_on_the_free_turn_after_a_joker() -> None:
    rules = CastlesRules()
    hands = ("2 2 6 9 T", "3 4 5 6 9")
    decks = full_decks(rules, hands, ("8", "8"))
    d0 = decks[0].split()
    d0.remove("joker")
    s = position(rules, hands=hands, saves=("8", "8"), decks=(" ".join(d0), decks[1]), beat="joker", beat_by=0)
    assert greedy_choice(rules, s) == "2x2"


def test_greedy_saves_jokers_then_the_highest_ranks() -> None:
    rules = CastlesRules()
    for hand, want in (
        ("A 2 5 7 9 T joker 3", "save joker"),
        ("A 2 5 7 9 T 9 3", "save T"),
        ("A A 2 3 4 5 6 7", "save 7"),
    ):
        hands = (hand, "A 2 3 4 5 6 7 8")
        s = position(rules, hands=hands, decks=full_decks(rules, hands), phase="choose_saves", pending=3)
        assert greedy_choice(rules, s) == want


def test_greedy_turns_over_its_strongest_save_and_discards_its_lowest_cards() -> None:
    rules = CastlesRules()
    hands = ("2 3 4 5 6", "8 8 9 9 T")
    s = position(rules, hands=hands, saves=("3 T 7", ""), beat="T", phase="play_save")
    assert greedy_choice(rules, s) == "play save T"
    s = position(rules, hands=hands, saves=("3 joker 7", ""), beat="T", phase="play_save")
    assert greedy_choice(rules, s) == "play save joker"
    hands = ("9 3 6 4 8", "8 8 9 9 T")
    s = position(rules, hands=hands, saves=("7", ""), decks=("5 5", ""), beat="T", phase="discard", pending=2)
    assert greedy_choice(rules, s) == "discard 3"


def test_greedy_respects_the_reversed_order() -> None:
    rules = CastlesRules(reversed_order=True)
    hands = ("A 3 7 7 9", "2 4 5 6 8")
    decks = full_decks(rules, hands, ("T", "T"))
    d1 = decks[1].split()
    d1.remove("8")
    s = position(rules, hands=hands, saves=("T", "T"), decks=(decks[0], " ".join(d1)), beat="8", beat_by=1)
    assert greedy_choice(rules, s) == "7x2"  # reversed: 7 is the weakest rank that beats an 8


# ---------------------------------------------------------------------------------------- strength
def test_greedy_beats_random_over_seat_swapped_deals() -> None:
    specs = [AgentSpec("greedy", "greedy"), AgentSpec("random", "random")]
    records = run_games("castles", specs, deals=150, seed=2026)
    cell = tabulate(records, ["greedy", "random"])[("greedy", "random")]
    assert cell.games == 300
    lo, _ = cell.interval
    assert lo > 0.5, cell


# ---------------------------------------------------------------------------------------- image
def greedy_game_states(rules: CastlesRules, seed: int) -> list[CastlesState]:
    """Every state of one greedy-against-greedy game."""
    g = GreedyAgent("castles", **rules.options)
    s = rules.initial_state(np.random.default_rng(seed))
    states = [s.clone()]
    while not rules.is_terminal(s):
        rules.apply(s, g.act(obs_of(rules, s)))
        states.append(s.clone())
    return states


@pytest.mark.parametrize("opts", [{}, {"ranks": 13, "reversed_order": True}, {"ranks": 5, "small_deck": True}], ids=str)
def test_image_is_rgb_of_one_size_and_follows_the_game(opts: dict[str, Any]) -> None:
    rules = CastlesRules(**opts)
    states = greedy_game_states(rules, seed=4)
    images = [rules.render_image(s, 0) for s in states[::3]] + [rules.render_image(states[-1], None)]
    assert all(im.dtype == np.uint8 and im.ndim == 3 and im.shape[2] == 3 for im in images)
    assert len({im.shape for im in images}) == 1
    assert all(not np.array_equal(a, b) for a, b in itertools.pairwise(images))


def test_image_hides_the_opponents_hand_and_saves_but_the_all_seeing_view_shows_them() -> None:
    rules = CastlesRules()
    mine, saves = "A 3 3 7 joker", ("T 9 joker", "T 9 8")

    hands = (mine, "2 4 5 6 2")
    decks = full_decks(rules, hands, saves)
    d1 = decks[1].split()
    d1.remove("T")  # the card to beat, played by seat 1
    a = position(rules, hands=hands, saves=saves, decks=(decks[0], " ".join(d1)), beat="T", beat_by=1)
    b = a.clone()  # the opponent holds 7 8 9 9 4 instead, and the 2 4 5 6 2 lie in its deck
    b.hands[1] = [0] * len(b.hands[1])
    for c in codes(rules, "7 8 8 9 4"):
        b.hands[1][c] += 1
        b.decks[1].remove(c)
    b.decks[1] += codes(rules, "2 4 5 6 2")
    a.decks[1].sort()
    b.decks[1].sort()  # same deck contents, same pile: only the opponent's hand differs
    assert a.pile == b.pile and a.hands[0] == b.hands[0] and a.hands[1] != b.hands[1]
    assert np.array_equal(rules.render_image(a, 0), rules.render_image(b, 0))
    assert not np.array_equal(rules.render_image(a, None), rules.render_image(b, None))
    assert not np.array_equal(rules.render_image(a, 0), rules.render_image(a, 1))
    # the seat's own saves are drawn for it (marked with their ranks) but not for the opponent
    c = a.clone()
    joker, eight = rules.deck.joker, rules.deck.code_of("8")
    c.saves[0][joker] -= 1
    c.saves[0][eight] += 1
    c.decks[0][c.decks[0].index(eight)] = joker
    c.decks[0].sort()
    assert not np.array_equal(rules.render_image(a, 0), rules.render_image(c, 0))
    assert np.array_equal(rules.render_image(a, 1), rules.render_image(c, 1))
