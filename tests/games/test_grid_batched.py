"""grid's compiled batched rules (``jericho_env/games/grid/batched.py``) against its Python rules.

Equality, bit for bit, over seeded games (``tests/batched_harness.py``): the default options and every board
size. The default suite plays fewer games than the 10,000 per option set of the full check, which runs with
``JERICHO_BATCHED_GAMES=10000 pytest tests/games/test_grid_batched.py`` (every option set that many games;
long on the large boards, where the Python side of the comparison is slow; ``-k`` picks option sets).

Then what the harness does not reach: the env's sparse observation buffer (``observe_rows``) across
auto-resets and ``set_state``; the deal's distribution; ``determinize`` (every property of
``tests/test_determinize.py``, the same scheduling verdicts as ``HandFacts.consistent``, and the same
distribution as the Python redeal); ``rollout``.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any

import numpy as np
import pytest

from jericho_env import make_batched, make_rules
from jericho_env.core.kernels import row_seeds
from jericho_env.envs.batched import BatchedEnv, random_actions
from jericho_env.games.grid import batched as kernels
from jericho_env.games.grid.batched import MAX_HISTORY, GridBatched, capacity
from jericho_env.games.grid.knowledge import NONE, SOME, HandFacts
from jericho_env.games.grid.rules import GridRules
from jericho_env.games.grid.state import GridState

try:
    from tests.batched_harness import play_both
    from tests.test_determinize import _states
except ImportError:  # pragma: no cover
    from batched_harness import play_both  # type: ignore[no-redef]
    from test_determinize import _states  # type: ignore[no-redef]

FULL = int(os.environ.get("JERICHO_BATCHED_GAMES", "0"))
RULES = GridRules()
SIZES = list(range(3, 102, 2))


def games(default: int) -> int:
    """``default`` games, or the full count when ``JERICHO_BATCHED_GAMES`` is set."""
    return FULL or default


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return np.array_equal(
        np.asarray(a, dtype=np.float32).view(np.uint32), np.asarray(b, dtype=np.float32).view(np.uint32)
    )


# ---------------------------------------------------------------------------------------------- equality
@pytest.mark.slow
def test_the_default_game_plays_the_same_through_kernels_and_rules() -> None:
    counts = play_both("grid", {}, games(1000), seed=0)
    assert counts["steps"] > counts["games"] * 30


@pytest.mark.parametrize("frontier", [True, False])
def test_the_harness_compares_allowed_on_frontier_cells_only(monkeypatch: pytest.MonkeyPatch, frontier: bool) -> None:
    """A mask changed on a frontier cell fails the comparison; one on any other cell means nothing and passes."""
    real = GridBatched.from_batched

    def changed(self: GridBatched, states: np.ndarray, row: int) -> GridState:
        state = real(self, states, row)
        cells = [c for c in range(len(state.allowed)) if (c in state.frontier) == frontier]
        state.allowed[cells[0]] ^= 1
        return state

    monkeypatch.setattr(GridBatched, "from_batched", changed)
    if frontier:
        with pytest.raises(AssertionError, match="differs in game"):
            play_both("grid", {}, 2, seed=0)
    else:
        play_both("grid", {}, 2, seed=0)


def _games_for(size: int) -> int:
    """Fewer games on large boards, where the Python side of the comparison costs the most."""
    return max(10, min(400, 40_000 // (size * size)))


@pytest.mark.parametrize("size", [s for s in SIZES if s < 21])
def test_every_small_board_size_plays_the_same(size: int) -> None:
    play_both("grid", {"board_size": size}, games(_games_for(size) // 2), seed=size)  # half: the fast tier


@pytest.mark.slow
@pytest.mark.parametrize("size", [s for s in SIZES if s > 21])
def test_every_large_board_size_plays_the_same(size: int) -> None:
    play_both("grid", {"board_size": size}, games(_games_for(size)), seed=size)


def test_two_record_capacities_serve_every_board_size() -> None:
    assert {capacity(s * s) for s in SIZES} == {21 * 21, 101 * 101}
    assert GridBatched(GridRules(board_size=3)).dtype == GridBatched(GridRules()).dtype


# ---------------------------------------------------------------------------------------------- states
def _sample_states(count: int, seed: int, **options: Any) -> list[GridState]:
    return [rules.clone(state) for rules, state in _states("grid", options, count, seed)]


def test_states_round_trip_through_the_records_mid_chain_and_at_the_end() -> None:
    rules = make_rules("grid")
    game = GridBatched(rules)
    states = _sample_states(800, seed=3)
    rows = game.new_states(len(states))
    for i, s in enumerate(states):
        game.to_batched(s, rows, i)
    assert any(s.in_chain for s in states) and any(rules.is_terminal(s) for s in states)
    for i, s in enumerate(states):
        back = game.from_batched(rows, i)
        assert rules.to_dict(back) == rules.to_dict(s)
        assert back.frontier == s.frontier
        assert all(back.allowed[c] == s.allowed[c] for c in s.frontier)
        assert back.nbrs == s.nbrs and back.board == s.board


def test_a_history_longer_than_play_makes_is_refused() -> None:
    rules = make_rules("grid")
    game = GridBatched(rules)
    state = rules.initial_state(np.random.default_rng(0))
    data = rules.to_dict(state)
    data["history"] = [["draw 1"] * (MAX_HISTORY + 1), []]
    with pytest.raises(ValueError, match=f"play never makes more than {MAX_HISTORY}"):
        game.to_batched(rules.from_dict(data, strict=False), game.new_states(1), 0)


def test_seats_other_than_0_and_1_are_refused_before_any_kernel_runs() -> None:
    env = make_batched("grid", 2, compiled=True)
    env.reset(seed=0)
    out = np.zeros((2, env.observation_size), dtype=np.float32)
    for seats in ([0, -1], [2, 0]):
        with pytest.raises(ValueError, match="grid seats are 0 and 1"):
            env.game.observe(env.states, env.rows, np.array(seats), out)
        with pytest.raises(ValueError, match="grid seats are 0 and 1"):
            env.game.observe_rows(env.states, env.rows, np.array(seats), out)
    assert not out.any()


# ---------------------------------------------------------------------------------------------- the env's buffers
def _check_rows(env: BatchedEnv, obs: np.ndarray, mask: np.ndarray, player: np.ndarray) -> None:
    rules = env.rules
    for i in range(env.num_envs):
        state = env.get_state(i)
        seat = rules.current_player(state)
        assert player[i] == seat >= 0
        assert same_bits(obs[i], rules.observe(state, seat)), f"game {i}"
        assert np.array_equal(mask[i], rules.legal_mask(state))


@pytest.mark.parametrize(
    "size", [pytest.param(3, marks=pytest.mark.slow), 21, pytest.param(23, marks=pytest.mark.slow)]
)
def test_the_envs_observation_buffer_is_the_rules_observation_every_step(size: int) -> None:
    """``observe_rows`` rewrites only what changed: after steps, auto-resets and ``set_state``, rows stay exact."""
    env = make_batched("grid", 12, compiled=True, copy=False, board_size=size)
    rules = env.rules
    rng = np.random.default_rng(size)
    others = _sample_states(300, seed=size, board_size=size)
    others = [s for s in others if not rules.is_terminal(s)]
    obs, mask, player = env.reset(seed=size)
    _check_rows(env, obs, mask, player)
    resets = sets = 0
    for step in range(250 if size <= 21 else 60):  # the large records: each Python observation costs the most
        if step % 7 == 3:  # another game's position, mid-game, into a row
            i = int(rng.integers(env.num_envs))
            env.set_state(i, others[int(rng.integers(len(others)))])
            sets += 1
            obs, mask, player = env._obs, env._mask, env._player
            _check_rows(env, obs, mask, player)
        obs, mask, player, _, terminated = env.step(random_actions(mask, rng))
        resets += int(terminated.sum())
        _check_rows(env, obs, mask, player)
    assert resets > 0 and sets > 0


def test_observe_rows_writes_a_buffer_it_has_not_written_in_full() -> None:
    env = make_batched("grid", 6, compiled=True, copy=False)
    env.reset(seed=1)
    for _ in range(30):
        env.step(random_actions(env._mask, np.random.default_rng(2)))
    want = env.observations(env._player)
    other = np.full_like(env._obs, 0.5)  # garbage: every float must be written
    env.game.observe_rows(env.states, env.rows, env._player, other)
    assert same_bits(other, want)
    env.game.observe_rows(env.states, env.rows[::-1].copy(), env._player[::-1].copy(), other)  # rows in any order
    assert same_bits(other, want)


# ---------------------------------------------------------------------------------------------- deal
def test_the_deal_is_uniform_over_hands_base_and_first_seat() -> None:
    rules = make_rules("grid", board_size=5)
    game = GridBatched(rules)
    n = 20_000
    states = game.new_states(n)
    rows = np.arange(n, dtype=np.int64)
    game.deal(states, rows, row_seeds(np.random.default_rng(0), n))
    hands = states["hands"][:, 0, :]
    assert (np.diff(hands, axis=1) > 0).all(), "hands are sorted"
    share = np.bincount(hands.ravel(), minlength=52) / n  # each card 5/52 of the time
    assert np.abs(share - 5 / 52).max() < 5 * np.sqrt(5 / 52 * (1 - 5 / 52) / n)
    base = np.bincount(states["base_card"], minlength=52) / n
    assert np.abs(base - 1 / 52).max() < 5 * np.sqrt(1 / 52 / n)
    assert abs(states["to_move"].mean() - 0.5) < 5 * np.sqrt(0.25 / n)
    for i in range(0, n, 997):
        s = game.from_batched(states, i)
        assert rules.to_dict(rules.from_dict(rules.to_dict(s))) == rules.to_dict(s)


# ---------------------------------------------------------------------------------------------- determinize
def _opponent_facts(rules: GridRules, state: GridState, opp: int) -> HandFacts:
    facts = HandFacts(state.hist[opp], len(state.hands[opp]))
    if state.to_move == opp and state.in_chain and state.passes_in_row < 2:
        facts.add_current(SOME, rules._capture_mask(state))
    return facts


def _determinized(game: GridBatched, states: list[GridState], seats: list[int], seed: int) -> list[GridState]:
    rows = game.new_states(len(states))
    for i, s in enumerate(states):
        game.to_batched(s, rows, i)
    before = rows.copy()
    out = game.new_states(len(states))
    index = np.arange(len(states), dtype=np.int64)
    game.determinize(rows, index, np.array(seats), row_seeds(np.random.default_rng(seed), len(states)), out)
    assert rows.tobytes() == before.tobytes(), "determinize changed the real states"
    return [game.from_batched(out, i) for i in range(len(states))]


def test_every_compiled_copy_is_playable_indistinguishable_and_consistent() -> None:
    """The properties of tests/test_determinize.py, on the compiled copies of thousands of states."""
    rules = make_rules("grid")
    game = GridBatched(rules)
    states = _sample_states(2000, seed=12)
    seats = [i % 2 for i in range(len(states))]
    copies = _determinized(game, states, seats, seed=5)
    with_facts = chains = 0
    for state, seat, copy in zip(states, seats, copies, strict=True):
        opp = 1 - seat
        assert rules.is_terminal(copy) == rules.is_terminal(state)
        assert rules.current_player(copy) == rules.current_player(state)
        assert rules.is_terminal(copy) or rules.legal_actions(copy)
        assert same_bits(rules.observe(copy, seat), rules.observe(state, seat))
        if rules.current_player(state) == seat:
            assert np.array_equal(rules.legal_mask(copy), rules.legal_mask(state))
        zones = sorted(c for zone in rules.card_zones(copy).values() for c in zone)
        assert zones == rules.all_cards()
        data = rules.to_dict(copy)
        json.dumps(data)
        assert rules.to_dict(rules.from_dict(data, strict=True)) == data
        facts = _opponent_facts(rules, state, opp)
        assert facts.consistent(copy.hands[opp])
        with_facts += bool(facts.facts)
        if not rules.is_terminal(state) and state.in_chain and state.to_move == opp:
            fits = rules._capture_mask(state)
            assert any(fits >> c & 1 for c in copy.hands[opp])
            chains += 1
        # only the hidden cards moved: the seat's hand, the table and the public piles are the state's
        assert copy.hands[seat] == state.hands[seat] and copy.faceup == state.faceup
        assert copy.discard == state.discard and copy.captured == state.captured
    assert with_facts > 100 and chains > 10


def test_compiled_copies_depend_only_on_what_the_seat_has_seen() -> None:
    rules = make_rules("grid")
    game = GridBatched(rules)
    states = [s for s in _sample_states(400, seed=7) if not rules.is_terminal(s)]
    seats = [i % 2 for i in range(len(states))]
    twins = _determinized(game, states, seats, seed=1)  # the hidden cards moved
    a = _determinized(game, states, seats, seed=2)
    b = _determinized(game, twins, seats, seed=2)
    assert [rules.to_dict(x) for x in a] == [rules.to_dict(x) for x in b]
    varied = sum(
        rules.to_dict(x) != rules.to_dict(y) for x, y in zip(a, _determinized(game, states, seats, 3), strict=True)
    )
    assert varied >= 0.9 * len(states)


def test_when_rejection_gives_up_both_engines_draw_among_every_consistent_hand(monkeypatch: Any) -> None:
    """With no rejection draws at all (``knowledge.MAX_TRIES`` and ``GridBatched.tries`` 0) both engines go through
    every hand: on late positions (few unseen cards) each copy's opponent hand is consistent, and the copies of
    each engine come up with every consistent hand (a rare one never stops a search)."""
    import itertools

    from jericho_env.games.grid import knowledge

    monkeypatch.setattr(knowledge, "MAX_TRIES", 0)
    rules = make_rules("grid")
    game = GridBatched(rules)
    game.tries = 0
    rng = np.random.default_rng(8)
    tried = with_facts = 0
    for state in _sample_states(3000, seed=33):
        if rules.is_terminal(state) or len(state.draw) > 6 or tried >= 12:
            continue
        seat = 1 - state.to_move
        opp = state.to_move
        facts = _opponent_facts(rules, state, opp)
        pool = sorted([*state.hands[opp], *state.draw, state.base_card])
        every = {h for h in itertools.combinations(pool, len(state.hands[opp])) if facts.consistent(list(h))}
        if len(every) > 20:
            continue
        python = {tuple(sorted(rules.determinize(state, seat, rng).hands[opp])) for _ in range(200)}
        compiled = {tuple(sorted(c.hands[opp])) for c in _determinized(game, [state] * 200, [seat] * 200, tried)}
        assert python == compiled == every, (every, python, compiled)
        tried += 1
        with_facts += bool(facts.facts)
    assert tried == 12 and with_facts >= 3, (tried, with_facts)


def test_the_compiled_schedule_test_gives_handfacts_verdicts() -> None:
    """``_consistent`` against ``HandFacts.consistent`` on the real hands and on random hands of the unseen cards."""
    rules = make_rules("grid")
    game = GridBatched(rules)
    states = [s for s in _sample_states(3000, seed=21) if not rules.is_terminal(s)]
    rows = game.new_states(len(states))
    rng = np.random.default_rng(0)
    verdicts = {True: 0, False: 0}
    for i, state in enumerate(states):
        game.to_batched(state, rows, i)
        opp = (i + 1) % 2
        facts = _opponent_facts(rules, state, opp)
        if not facts.facts:
            continue
        current = rules._capture_mask(state) if state.to_move == opp and state.in_chain else 0
        arrays = kernels._facts_of(rows[i], opp, current)
        pool = sorted([*state.hands[opp], *state.draw, state.base_card])
        size = len(state.hands[opp])
        for k in range(10):
            hand = state.hands[opp] if k == 0 else sorted(rng.choice(pool, size=size, replace=False).tolist())
            want = facts.consistent(hand)
            got = kernels._consistent(np.array(hand + [0] * (5 - size), dtype=np.int64), size, *arrays)
            assert got == want, (rules.to_dict(state), opp, hand)
            verdicts[want] += 1
    assert verdicts[True] > 1000 and verdicts[False] > 200


def _hidden_shares(copies: list[GridState], opp: int) -> tuple[np.ndarray, np.ndarray]:
    hand = np.zeros(52)
    base = np.zeros(52)
    for c in copies:
        hand[c.hands[opp]] += 1
        base[c.base_card] += 1
    return hand / len(copies), base / len(copies)


@functools.cache
def _positions_with_facts(rules: GridRules) -> list[tuple[GridState, int]]:
    """Constrained redeals: the facts reject many hands of the unseen cards; the opponent in a chain."""
    rng = np.random.default_rng(0)
    rejecting: tuple[float, Any] = (0.0, None)
    chain = None
    for state in _sample_states(4000, seed=31):
        if rules.is_terminal(state) or len(state.draw) < 5:
            continue
        for seat in (0, 1):
            opp = 1 - seat
            facts = _opponent_facts(rules, state, opp)
            if not facts.facts:
                continue
            pool = [*state.hands[opp], *state.draw, state.base_card]
            size = len(state.hands[opp])
            if state.in_chain and state.to_move == opp:
                fitting = sum(rules._capture_mask(state) >> c & 1 for c in pool)
                if size >= 3 and 3 <= fitting <= len(pool) // 3:  # hands hold 1, 2, 3... fitting cards
                    chain = chain or (state, seat)
                continue
            hands = [rng.choice(pool, size=size, replace=False).tolist() for _ in range(40)]
            rejected = sum(not facts.consistent(h) for h in hands) / len(hands)
            if rejected > rejecting[0]:
                rejecting = (rejected, (state, seat))
    assert rejecting[0] >= 0.2 and chain
    plain = rules.initial_state(np.random.default_rng(4))
    return [rejecting[1], chain, (plain, 0)]


@pytest.mark.parametrize("which", [0, 1, 2], ids=["facts", "chain", "deal"])
def test_compiled_copies_have_the_python_redeals_distribution(which: int) -> None:
    """Over many copies of one position: how often each hidden card is in the opponent's hand, and is the base."""
    rules = RULES
    game = GridBatched(rules)
    state, seat = _positions_with_facts(rules)[which]
    opp = 1 - seat
    n = 4000
    compiled = _determinized(game, [state] * n, [seat] * n, seed=9)
    rng = np.random.default_rng(10)
    python = [rules.determinize(state, seat, rng) for _ in range(n)]
    for got, want in zip(_hidden_shares(compiled, opp), _hidden_shares(python, opp), strict=True):
        se = np.sqrt(np.maximum(want * (1 - want), 1 / n) * 2 / n)
        assert (np.abs(got - want) < 5 * se).all(), (got - want)[np.abs(got - want) >= 5 * se]
    facts = _opponent_facts(rules, state, opp)
    assert all(facts.consistent(c.hands[opp]) for c in compiled)


# ---------------------------------------------------------------------------------------------- rollout
def test_rollouts_end_games_as_the_rules_score_them() -> None:
    rules = make_rules("grid")
    game = GridBatched(rules)
    states = [s for s in _sample_states(600, seed=41) if not rules.is_terminal(s)]
    rows = game.new_states(len(states))
    for i, s in enumerate(states):
        game.to_batched(s, rows, i)
    returns = np.empty((len(states), 2))
    index = np.arange(len(states), dtype=np.int64)
    game.rollout(rows, index, row_seeds(np.random.default_rng(0), len(states)), returns)
    seen = {"discard": 0, NONE: 0, SOME: 0}
    for i in range(len(states)):
        end = game.from_batched(rows, i)
        assert rules.is_terminal(end)
        assert returns[i].tolist() == rules.returns(end)
        assert rules.to_dict(rules.from_dict(rules.to_dict(end))) == rules.to_dict(end)
        seen["discard"] += bool(end.discard)
        text = json.dumps(rules.to_dict(end)["history"])
        seen[NONE] += '"none ' in text
        seen[SOME] += '"some ' in text
    assert all(v > 5 for v in seen.values()), seen  # random play reaches cut-offs and both chain facts


def test_rollouts_score_like_python_random_playouts() -> None:
    rules = make_rules("grid")
    game = GridBatched(rules)
    state = rules.initial_state(np.random.default_rng(8))
    n = 3000
    rows = game.new_states(n)
    for i in range(n):
        game.to_batched(state, rows, i)
    returns = np.empty((n, 2))
    game.rollout(rows, np.arange(n, dtype=np.int64), row_seeds(np.random.default_rng(1), n), returns)
    rng = np.random.default_rng(2)
    python = []
    for _ in range(n):
        s = rules.clone(state)
        while not rules.is_terminal(s):
            legal = rules.legal_actions(s)
            rules.apply_unchecked(s, legal[int(rng.integers(len(legal)))])
        python.append(rules.returns(s)[0])
    got, want = returns[:, 0], np.array(python)
    se = np.sqrt((got.var() + want.var()) / n)
    assert abs(got.mean() - want.mean()) < 4 * se
    assert abs((got == 0).mean() - (want == 0).mean()) < 0.05
