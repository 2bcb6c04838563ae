"""Castles: invariants over seeded random play, hidden information, variants through the env, bad input."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test

import jericho_env
from jericho_env.games.castles import VARIANTS
from jericho_env.games.castles.rules import CastlesRules
from jericho_env.games.castles.state import EMPTIED, STUCK, CastlesState, Phase
from tests.games.test_castles_rules import position


def random_games(rules: CastlesRules, games: int, seed: int) -> Iterator[tuple[CastlesState, int]]:
    """Every state (and its step number) of ``games`` seeded uniformly random games."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        s = rules.initial_state(rng)
        steps = 0
        yield s, steps
        while not rules.is_terminal(s):
            legal = rules.legal_actions(s)
            rules.apply(s, legal[int(rng.integers(len(legal)))])
            steps += 1
            yield s, steps


def check_state(rules: CastlesRules, s: CastlesState, steps: int, deck: list[int]) -> None:
    """The invariants every reachable state satisfies."""
    assert sorted(c for zone in rules.card_zones(s).values() for c in zone) == deck, "cards not conserved"
    assert s.hand_n == [sum(h) for h in s.hands] and s.save_n == [sum(v) for v in s.saves], "stale counts"
    assert steps <= rules.info.max_game_length
    if rules.is_terminal(s):
        ret = rules.returns(s)
        assert ret in ([1.0, -1.0], [-1.0, 1.0]) and sum(ret) == 0.0
        assert rules.legal_actions(s) == [] and rules.current_player(s) == -1
        return
    p = rules.current_player(s)
    legal = rules.legal_actions(s)
    assert legal and legal == sorted(set(legal)) and legal[0] >= 0 and legal[-1] < rules.info.num_actions
    assert rules.returns(s) == [0.0, 0.0]
    if s.phase in (Phase.PLAY, Phase.DISCARD, Phase.PLAY_SAVE):
        # After set-up a hand never exceeds 5, and is short only when its deck is empty.
        for q in (0, 1):
            assert s.hand_n[q] <= 5 and (s.hand_n[q] == 5 or not s.decks[q] or (s.phase == Phase.DISCARD and q == p))
        assert s.hand_n[p] > 0


@pytest.mark.parametrize(("opts", "games"), [({}, 2000), *[(v, 300) for v in VARIANTS]], ids=str)
def test_invariants_over_random_games(opts: dict[str, Any], games: int) -> None:
    rules = CastlesRules(**opts)
    deck = sorted(rules.all_cards())
    assert len(deck) == 2 * rules.deck.size
    reasons: Counter[int] = Counter()
    lengths = []
    for s, steps in random_games(rules, games, seed=2026):
        check_state(rules, s, steps, deck)
        if s.phase == Phase.OVER:
            reasons[s.reason] += 1
            lengths.append(steps)
    assert sum(reasons.values()) == games
    assert max(lengths) <= rules.info.max_game_length
    if not opts:
        assert len(deck) == 84
        # Both ways of ending a game occur in random play (about 94% stuck, 6% emptied with A-10).
        assert reasons[STUCK] > 0 and reasons[EMPTIED] > 0
        print(f"castles random play: {games} games, mean length {np.mean(lengths):.1f}, ends {dict(reasons)}")


def test_apply_on_a_clone_leaves_the_original_alone() -> None:
    rules = CastlesRules()
    rng = np.random.default_rng(1)
    for s, _ in random_games(rules, 30, seed=5):
        if rules.is_terminal(s):
            continue
        before = rules.to_dict(s)
        twin = rules.clone(s)
        legal = rules.legal_actions(twin)
        rules.apply(twin, legal[int(rng.integers(len(legal)))])
        assert rules.to_dict(s) == before


# ---------------------------------------------------------------------------------- hidden information
def test_determinize_redeals_only_what_the_seat_cannot_see() -> None:
    rules = CastlesRules()
    rng = np.random.default_rng(9)
    changed_opp = changed_own_deck = 0
    for s, _ in random_games(rules, 60, seed=8):
        for seat in (0, 1):
            o = 1 - seat
            d = rules.determinize(s, seat, rng)
            assert np.array_equal(rules.observe(s, seat), rules.observe(d, seat))
            if rules.current_player(s) == seat:
                assert rules.legal_actions(s) == rules.legal_actions(d)
            assert d.hands[seat] == s.hands[seat] and d.saves[seat] == s.saves[seat]
            assert sorted(d.decks[seat]) == sorted(s.decks[seat])
            assert (d.hand_n, d.save_n, [len(x) for x in d.decks]) == (s.hand_n, s.save_n, [len(x) for x in s.decks])
            assert d.pile == s.pile and d.discard == s.discard
            changed_opp += d.hands[o] != s.hands[o] or d.saves[o] != s.saves[o]
            changed_own_deck += d.decks[seat] != s.decks[seat]
    assert changed_opp > 100 and changed_own_deck > 100  # it really redeals


def test_opponent_hand_saves_and_deck_order_do_not_reach_the_observation() -> None:
    rules = CastlesRules()
    a = position(
        rules, hands=("A 2 3 4 5", "6 7 8 9 T"), saves=("joker", "T T 2"), decks=("9 9 8", "A 3 joker 7"), beat="3"
    )
    b = position(
        rules, hands=("A 2 3 4 5", "A 3 joker 7 2"), saves=("joker", "6 T 8"), decks=("8 9 9", "T 9 7 T"), beat="3"
    )
    assert a.hands[1] != b.hands[1] and a.saves[1] != b.saves[1] and a.decks != b.decks
    assert np.array_equal(rules.observe(a, 0), rules.observe(b, 0))
    assert np.array_equal(rules.legal_mask(a), rules.legal_mask(b))
    # The control: what seat 0 can see does change its observation.
    c = position(
        rules, hands=("A 2 3 4 6", "6 7 8 9 T"), saves=("joker", "T T 2"), decks=("9 9 5", "A 3 joker 7"), beat="3"
    )
    assert not np.array_equal(rules.observe(a, 0), rules.observe(c, 0))
    assert not np.array_equal(rules.observe(a, 1), rules.observe(b, 1))


def test_public_counts_are_in_the_observation() -> None:
    rules = CastlesRules()
    s = position(
        rules,
        hands=("A 2 3 4 5", "6 7 8 9 T"),
        saves=("joker", "T T"),
        decks=("9 9", "A"),
        beat="3",
        discard=("7", "A"),
    )
    obs = rules.observation_dict(s, 0)
    assert obs["own_counts"].tolist() == pytest.approx([2 / 42, 5 / 8, 1 / 3])
    assert obs["opp_counts"].tolist() == pytest.approx([1 / 42, 5 / 8, 2 / 3])
    assert obs["own_saves"][10] == pytest.approx(1 / 3) and obs["own_hand"][:5].tolist() == [0.25] * 5
    # opponent played or discarded: everything except its hand, saves and deck (A: 4 - 1 in deck = 3 out)
    assert obs["opp_out"][0] == pytest.approx(3 / 4) and obs["opp_out"][9] == pytest.approx(1 / 4)
    assert (
        obs["to_beat"][2] == 1.0 and obs["to_beat_by"].tolist() == [0.0, 1.0] and obs["to_move"].tolist() == [1.0, 0.0]
    )


# ---------------------------------------------------------------------------------- variants through the env
def test_variants_cover_every_option_value() -> None:
    seen = {(k, v) for opts in VARIANTS for k, v in opts.items()}
    assert {("ranks", 5), ("ranks", 13), ("small_deck", True), ("reversed_order", True)} <= seen


@pytest.mark.parametrize("opts", [{}, *VARIANTS], ids=str)
def test_each_variant_passes_the_pettingzoo_api_test(opts: dict[str, Any]) -> None:
    api_test(jericho_env.make("castles", **opts), num_cycles=200)


# ---------------------------------------------------------------------------------- bad input
def _env_at(seed: int, phase: Phase) -> Any:
    """An env stepped with random legal actions until the rules' phase is ``phase``."""
    env = jericho_env.make("castles")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while env.unwrapped.state.phase != phase:
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    return env


def test_illegal_play_is_rejected_with_agent_action_and_reason() -> None:
    env = jericho_env.make("castles")
    env.reset(seed=3)
    agent = env.agent_selection
    acts, code = env.unwrapped.rules.actions, env.unwrapped.rules.deck.code_of
    seven, two, nines = acts.play(code("7")), acts.play(code("2")), acts.play(code("9"), 2)
    before = json.dumps(env.unwrapped.save_state(), sort_keys=True)
    with pytest.raises(
        jericho_env.IllegalActionError, match=rf"{agent} cannot play {seven} \(play 7\): you must choose a save card"
    ):
        env.step(seven)
    assert json.dumps(env.unwrapped.save_state(), sort_keys=True) == before and env.agent_selection == agent
    env = _env_at(3, Phase.PLAY)
    rules, s = env.unwrapped.rules, env.unwrapped.state
    # seed 3: player_0 holds 2 5 5 9 T against a 6
    before = json.dumps(env.unwrapped.save_state(), sort_keys=True)
    with pytest.raises(
        ValueError, match=rf"player_0 cannot play {two} \(play 2\): 2 does not beat 6: play one of 6 7 8 9 T"
    ):
        env.step(two)
    with pytest.raises(ValueError, match=rf"cannot play {seven} \(play 7\): you hold 0 card\(s\) of rank 7, not 1"):
        env.step(seven)
    with pytest.raises(ValueError, match=rf"cannot play {nines} \(play 9x2\): you hold 1 card\(s\) of rank 9, not 2"):
        env.step(nines)
    with pytest.raises(ValueError, match=r"you must play from your hand now"):
        env.step(rules.actions.play_save(1))
    assert json.dumps(env.unwrapped.save_state(), sort_keys=True) == before and env.unwrapped.state is s


@pytest.mark.parametrize("bad", ["7", 2.0, None, [3], np.array([1, 2])])
def test_wrong_action_types_are_rejected(bad: Any) -> None:
    env = jericho_env.make("castles")
    env.reset(seed=0)
    with pytest.raises(jericho_env.ActionTypeError, match="player_"):
        env.step(bad)


def test_bad_make_options() -> None:
    with pytest.raises(ValueError, match="ranks"):
        jericho_env.make("castles", ranks=6)
    with pytest.raises(ValueError, match="small_deck"):
        jericho_env.make("castles", small_deck="true")


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda d: d.pop("decks"), "missing decks"),
        (lambda d: d.__setitem__("phase", "bidding"), "'phase' must be one of"),
        (lambda d: d["hands"][0].__setitem__(0, d["hands"][0][0] + 1), "player 0's cards"),
        (lambda d: d["decks"][1].append(99), "rank codes 0..10"),
        (lambda d: d.__setitem__("to_move", True), "to_move must be an int"),
        (lambda d: d.__setitem__("hands", [[1] * 11]), "two lists of 11"),
        (lambda d: d.__setitem__("winner", 1), "phase 'over' goes with a winner"),
    ],
)
def test_bad_state_dicts_are_rejected(change: Any, match: str) -> None:
    rules = CastlesRules()
    data = json.loads(json.dumps(rules.to_dict(rules.initial_state(np.random.default_rng(0)))))
    change(data)
    with pytest.raises(jericho_env.StateFormatError, match=match):
        rules.from_dict(data)


def test_from_dict_of_a_non_dict() -> None:
    with pytest.raises(jericho_env.StateFormatError, match="must be a dict"):
        CastlesRules().from_dict([1, 2])  # type: ignore[arg-type]
