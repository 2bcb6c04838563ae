"""walls (Jericho) through the env: hidden information, determinize, bad input, options."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pettingzoo.test import seed_test

import jericho_env
from jericho_env.core.rules import ActionTypeError, IllegalActionError, OptionError
from jericho_env.games.walls.actions import WallsActions
from jericho_env.games.walls.cards import SCORING, TRUMPET
from jericho_env.games.walls.rules import WallsRules
from jericho_env.games.walls.state import Phase, WallsState

ACTIONS = WallsActions()


def play_until(rules: WallsRules, seed: int, stop) -> WallsState:  # type: ignore[no-untyped-def]
    """A random game played until ``stop(state)`` holds."""
    rng = np.random.default_rng(seed)
    s = rules.initial_state(rng)
    while not stop(s):
        legal = rules.legal_actions(s)
        rules.apply(s, legal[int(rng.integers(len(legal)))])
    return s


def swap_hidden(rules: WallsRules, s: WallsState, seat: int, rng: np.random.Generator) -> WallsState:
    """``s`` with the other seats' hands and face-down supply cards and the pile's non-scoring cards reshuffled."""
    t = rules.clone(s)
    others = [o for o in range(t.n) if o != seat]
    pool = []
    for o in others:
        pool += [c for c in range(26) for _ in range(t.hands[o][c])]
        pool += [c for c in range(26) for _ in range(t.supply_hidden[o][c])]
    pool += [c for c in t.deck if c != SCORING]
    pool = [pool[i] for i in rng.permutation(len(pool))]
    for o in others:
        t.hands[o] = [0] * 26
        for _ in range(t.hand_size[o]):
            t.hands[o][pool.pop()] += 1
        t.supply_hidden[o] = [0] * 26
        for _ in range(t.hidden_count[o]):
            t.supply_hidden[o][pool.pop()] += 1
    t.deck = [c if c == SCORING else pool.pop() for c in t.deck]
    assert not pool
    return t


@pytest.mark.parametrize("n", [3, 4, 5])
def test_others_hands_donations_and_pile_order_are_invisible(n: int) -> None:
    rules = WallsRules(num_players=n)
    rng = np.random.default_rng(n)
    for seed in range(30):
        s = play_until(rules, seed, lambda st: st.phase == Phase.DONATE and st.phase_left == 1)  # donations under way
        for seat in range(n):
            t = swap_hidden(rules, s, seat, rng)
            assert np.array_equal(rules.observe(s, seat), rules.observe(t, seat))
            if rules.current_player(s) == seat:
                assert rules.legal_actions(s) == rules.legal_actions(t)
            assert rules.render_text(s, seat) == rules.render_text(t, seat)
    # the test can fail: the seat's own hand does show
    t = rules.clone(s)
    seat = 0
    c = next(c for c in range(26) if t.hands[seat][c])
    t.hands[seat][c] -= 1
    t.hands[seat][(c + 1) % 26] += 1
    assert not np.array_equal(rules.observe(s, seat), rules.observe(t, seat))


def test_opening_choice_invisible_before_the_reveal() -> None:
    rules = WallsRules(num_players=4)
    s = play_until(rules, 3, lambda st: st.phase == Phase.OPEN_WALL and st.phase_left == 2)
    laid = [o for o in range(4) if s.opening[o] >= 0]
    assert len(laid) == 2
    o = laid[0]
    t = rules.clone(s)
    # give seat o another first wall card from its hand
    swap = next(c for c in range(25) if t.hands[o][c] and c != t.opening[o])
    t.hands[o][swap] -= 1
    t.hands[o][t.opening[o]] += 1
    t.opening[o] = swap
    for seat in range(4):
        same = np.array_equal(rules.observe(s, seat), rules.observe(t, seat))
        assert same == (seat != o), seat


def test_determinize_respects_what_the_seat_knows() -> None:
    rules = WallsRules(num_players=4)
    s = play_until(rules, 5, lambda st: st.phase == Phase.OPEN_SUPPLY and st.phase_left == 2)
    rng = np.random.default_rng(0)
    seat = s.to_move
    decks = set()
    for _ in range(50):
        t = rules.determinize(s, seat, rng)
        assert t.hands[seat] == s.hands[seat] and t.opening[seat] == s.opening[seat]
        assert all((t.opening[o] >= 0) == (s.opening[o] >= 0) for o in range(4))
        assert all(t.opening[o] != TRUMPET for o in range(4))  # first wall cards are wall cards
        assert t.hand_size == s.hand_size and [sum(h) for h in t.hands] == t.hand_size
        assert t.hidden_count == s.hidden_count and len(t.deck) == len(s.deck)
        top_down = t.deck[::-1]
        drawn = rules.deck_size - len(t.deck)
        for k, pos in enumerate(i for i, c in enumerate(top_down) if c == SCORING):
            start, end = rules.scoring_piles[k]
            assert start <= pos + drawn < end
        decks.add(tuple(t.deck))
    assert len(decks) == 50, "the pile is really redealt"
    mid = play_until(rules, 6, lambda st: st.scored == 1 and st.phase == Phase.PLAY)
    t = rules.determinize(mid, 0, rng)
    assert t.deck.count(SCORING) == 2 and t.supply_public == mid.supply_public and t.walls == mid.walls


def test_illegal_action_names_agent_action_and_reason() -> None:
    env = jericho_env.make("walls")
    env.reset(seed=4)
    agent = env.agent_selection
    before = json.dumps(env.unwrapped.save_state(), sort_keys=True)
    with pytest.raises(
        IllegalActionError, match=rf"{agent} cannot play {ACTIONS.supply(0)}.*supply card comes next"
    ) as err:
        env.step(ACTIONS.supply(0))  # in the opening the first wall card comes first
    assert isinstance(err.value, ValueError)
    assert json.dumps(env.unwrapped.save_state(), sort_keys=True) == before and env.agent_selection == agent
    rules = env.unwrapped.rules
    missing = next(a for a in range(25) if a not in rules.legal_actions(env.unwrapped.state))
    with pytest.raises(IllegalActionError, match="you hold no"):
        env.step(missing)
    with pytest.raises(ActionTypeError, match="action"):
        env.step("red-5")
    assert json.dumps(env.unwrapped.save_state(), sort_keys=True) == before


@pytest.mark.parametrize("bad", [6, 1, 0, "4", True, 4.0])
def test_bad_num_players(bad: object) -> None:
    with pytest.raises(OptionError, match=r"num_players.*2\.\.5") as err:
        jericho_env.make("walls", num_players=bad)
    assert isinstance(err.value, ValueError)


def test_two_player_variant_and_lengths() -> None:
    for n, size, longest in [(2, 242, 102), (3, 306, 99), (4, 370, 96), (5, 434, 93)]:
        info = WallsRules(num_players=n).info
        assert (info.num_players, info.num_actions, info.observation_size, info.max_game_length) == (
            n,
            56,
            size,
            longest,
        )
    assert "not in the published rules" in WallsRules.OPTIONS[0].doc
    env = jericho_env.make("walls", num_players=2)
    env.reset(seed=0)
    assert env.possible_agents == ["player_0", "player_1"]


def test_seed_test_five_players() -> None:
    seed_test(lambda: jericho_env.make("walls", num_players=5), num_cycles=200)


def test_rewards_arrive_at_the_end_and_sum_to_zero() -> None:
    env = jericho_env.make("walls", num_players=3)
    env.reset(seed=11)
    rng = np.random.default_rng(11)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        assert reward == 0.0
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert abs(sum(totals.values())) < 1e-9 and max(totals.values()) > 0


def test_game_page_has_the_generated_layout_table() -> None:
    import jericho_env.games.walls as page

    assert WallsRules(num_players=4).layout.markdown_table() in (page.__doc__ or "")
    assert "Version History" in (page.__doc__ or "")


@pytest.mark.parametrize("n", [3, 5])
def test_image_has_fixed_size_and_hides_what_the_seat_cannot_see(n: int) -> None:
    rules = WallsRules(num_players=n)
    s = play_until(rules, 2, lambda st: st.phase == Phase.OPEN_WALL and st.phase_left == 1)  # face-down openings lie
    later = play_until(rules, 2, lambda st: st.scored == 1 and st.phase == Phase.PLAY)
    rng = np.random.default_rng(1)
    for state in (s, later):
        seat = state.to_move
        image = rules.render_image(state, seat)
        assert image.shape == (rules_image_height(n), image.shape[1], 3) and image.dtype == np.uint8
        assert image.shape == rules.render_image(later, None).shape
        assert np.array_equal(image, rules.render_image(swap_hidden(rules, state, seat, rng), seat))
    assert not np.array_equal(rules.render_image(s, 0), rules.render_image(later, 0))


def rules_image_height(n: int) -> int:
    """The documented image height for ``n`` players."""
    from jericho_env.games.walls.render import image_height

    return image_height(n)
