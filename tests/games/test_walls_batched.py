"""walls' compiled batched rules (``games/walls/batched.py``) against its Python rules, bit for bit.

``play_both`` plays seeded games through the kernels and the Python rules for every player count and
compares every state, seat to move, legal-action set, observation and return. The fast tier plays
``GAMES`` games for the default options; the slow-marked tests play ``MORE_GAMES`` more of them (other
seeds) and ``SLOW_GAMES`` for each other player count;
``JERICHO_BATCHED_GAMES=10000`` plays that many per option set instead, the issue's full count:
``JERICHO_BATCHED_GAMES=10000 pytest tests/games/test_walls_batched.py -k equal_the_python_rules -n 2``.
Then: rigged deals of seven trumpets (the trumpet log), scripted edge positions, the deal's distribution,
the compiled ``determinize`` (sound copies; the same distribution as the Python rules'), and the compiled
rollout.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import pytest

import jericho_env
from jericho_env.core.kernels import row_seeds
from jericho_env.envs.batched import BatchedEnv, random_actions
from jericho_env.games.walls.batched import DTYPE, WallsBatched
from jericho_env.games.walls.cards import COPIES, SCORING, TRUMPET, all_cards
from jericho_env.games.walls.rules import WallsRules
from jericho_env.games.walls.state import Phase, WallsState

try:
    from tests.batched_harness import play_both
    from tests.games.test_walls_rules import position
except ImportError:  # pragma: no cover
    from batched_harness import play_both  # type: ignore[no-redef]
    from test_walls_rules import position  # type: ignore[no-redef]

FULL = int(os.environ.get("JERICHO_BATCHED_GAMES", "0"))
GAMES = FULL or 300  # the default option set (4 players)
MORE_GAMES = FULL or 1200  # the default option set again, other deals (slow-marked)
SLOW_GAMES = FULL or 1000  # each other player count (slow-marked)


def game_of(n: int) -> WallsBatched:
    game = jericho_env.make_batched("walls", 1, compiled=True, num_players=n).game
    assert isinstance(game, WallsBatched)
    return game


def one_row(game: WallsBatched, state: WallsState) -> np.ndarray:
    states = game.new_states(1)
    game.to_batched(state, states, 0)
    return states


ROW = np.zeros(1, dtype=np.int64)


# ---------------------------------------------------------------------------------------------- equality
def test_kernels_equal_the_python_rules_default_options() -> None:
    counts = play_both("walls", {}, GAMES, seed=0)
    assert counts["games"] == GAMES and counts["steps"] > 80 * GAMES


@pytest.mark.slow
def test_kernels_equal_the_python_rules_default_options_on_more_deals() -> None:
    counts = play_both("walls", {}, MORE_GAMES, seed=4)  # seeds 2, 3 and 5 play the other player counts
    assert counts["games"] == MORE_GAMES and counts["steps"] > 80 * MORE_GAMES


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 3, 5])
def test_kernels_equal_the_python_rules_every_player_count(n: int) -> None:
    counts = play_both("walls", {"num_players": n}, SLOW_GAMES, seed=n)
    assert counts["games"] == SLOW_GAMES


def rig_seven_trumpets(state: WallsState, seats: list[int], rng: np.random.Generator) -> None:
    """Give each of ``seats`` seven trumpets, swapping its wall cards with trumpets of the pile or other hands."""
    for seat in seats:
        for card in range(TRUMPET):
            while state.hands[seat][card]:
                in_deck = [i for i, c in enumerate(state.deck) if c == TRUMPET]
                if in_deck:
                    state.deck[in_deck[int(rng.integers(len(in_deck)))]] = card
                else:
                    other = next(o for o in range(state.n) if o not in seats and state.hands[o][TRUMPET])
                    state.hands[other][TRUMPET] -= 1
                    state.hands[other][card] += 1
                state.hands[seat][card] -= 1
                state.hands[seat][TRUMPET] += 1


@pytest.mark.parametrize("version", [0, 1])
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_kernels_equal_the_python_rules_when_players_are_dealt_seven_trumpets(
    n: int, version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Half the games start from the Python deal: there one or two seats hold seven trumpets (trumpet log).

    Under observation version 1 every seat's observation is compared: its ``known_trumpets`` read the log.
    """
    deal = WallsRules.initial_state

    def rigged(self: WallsRules, rng: np.random.Generator) -> WallsState:
        state = deal(self, rng)
        seats = [int(s) for s in rng.permutation(n)[: 1 + int(rng.integers(2))]]
        rig_seven_trumpets(state, seats, rng)
        return state

    monkeypatch.setattr(WallsRules, "initial_state", rigged)
    options = {"num_players": n, "obs_version": version}
    counts = play_both("walls", options, 60, seed=50 + n, batch=60, all_seats=version == 1)
    assert counts["games"] == 60


SCRIPTS: list[tuple[int, dict[str, Any], list[str]]] = [
    # trumpet: a tie for the highest, several from one wall, the trumpeter's own wall; then the same seat again
    (
        3,
        {
            "hands": ["T red-1 red-3 T T", "T T T T T", "T T T T T"],
            "walls": [
                "yellow-4 yellow-3 yellow-3 T-yellow yellow-1",
                "yellow-4 yellow-4 yellow-4 yellow-1",
                "yellow-3 yellow-3 T-yellow yellow-1 yellow-1",
            ],
            "to_move": 2,
        },
        ["T-yellow", "T-yellow", "T-yellow", "T-yellow"],
    ),
    # a wall collapses to trumpets (into the supply), then a scoring throws them out
    (
        3,
        {
            "hands": ["T red-1 red-3 T T", "T T T T T", "T T T T T"],
            "walls": ["red-3", "red-7 T-red T-red", ""],
            "deck_top": "white-1 S blue-3",
        },
        ["T-red", "supply-T"],
    ),
    # scoring: a tie for the longest wall with a remainder, a colour nobody builds
    (
        4,
        {
            "hands": ["white-1 T T T T", "T T T T T", "T T T T T", "T T T T T"],
            "walls": ["red-5 red-3", "red-4 red-4", "red-1", "yellow-3"],
            "supply_public": "red-7 red-5",
            "supply_hidden": ["red-3 red-1", "red-4 T", "blue-5 blue-3", "yellow-1"],
            "deck_top": "S brown-3",
            "to_move": 2,
        },
        ["supply-T"],
    ),
    # the third scoring: value-1 bonus, a trumpet-only wall discarded, the tie-break
    (
        4,
        {
            "hands": ["T T T", "T T T", "T T T", "yellow-3 T T"],
            "walls": ["red-5 red-1 red-1 T-red", "blue-4 blue-3", "white-7 white-5 white-4 white-1", "brown-1 T-brown"],
            "won": [
                "yellow-5 yellow-5",
                "yellow-4 yellow-4 yellow-4 yellow-4",
                "yellow-7 yellow-1 yellow-1",
                "yellow-1",
            ],
            "deck_top": "S",
            "scorings": 2,
        },
        ["supply-T"],
    ),
    # a shared win, and (next) everyone tied
    (
        4,
        {
            "hands": ["T T T"] * 4,
            "walls": ["red-5", "blue-4", "white-7", "brown-3"],
            "won": ["yellow-5", "yellow-4", "", ""],
            "deck_top": "S",
            "scorings": 2,
        },
        ["supply-T"],
    ),
    (
        4,
        {"hands": ["T T T"] * 4, "walls": ["red-5", "blue-4", "white-7", "brown-3"], "deck_top": "S", "scorings": 2},
        ["supply-T"],
    ),
    # trumpets naming a colour nobody builds, and one whose only wall is the trumpeter's
    (
        3,
        {"hands": ["T T red-1 red-3 T", "T T T T T", "T T T T T"], "walls": ["blue-5", "blue-4", "blue-1"]},
        ["T-red", "T-yellow", "T-blue", "T-blue", "T-blue", "T-blue"],
    ),
]


@pytest.mark.parametrize(("n", "where", "script"), SCRIPTS)
def test_scripted_edge_positions_play_the_same_then_random_moves(
    n: int, where: dict[str, Any], script: list[str]
) -> None:
    rules = WallsRules(num_players=n)
    game = game_of(n)
    rng = np.random.default_rng(len(script))
    state = position(rules, **where)
    states = one_row(game, state)
    current = np.empty(1, dtype=np.int64)
    returns = np.empty((1, n))
    mask = np.empty((1, 56), dtype=np.int8)
    obs = np.empty((1, rules.layout.size), dtype=np.float32)
    moves = 0
    # hand-made positions keep their unnamed scoring cards at the bottom of the pile, which play never
    # reaches: 40 random moves after the script stay clear of them
    while moves < len(script) + 40:
        assert rules.to_dict(game.from_batched(states, 0)) == rules.to_dict(state), f"after {moves} moves"
        game.status(states, ROW, current, returns)
        if rules.is_terminal(state):
            assert current[0] == -1 and returns[0].tolist() == rules.returns(state)
            break
        seat = rules.current_player(state)
        game.masks(states, ROW, mask)
        game.observe(states, ROW, np.array([seat]), obs)
        assert current[0] == seat and np.flatnonzero(mask[0]).tolist() == rules.legal_actions(state)
        assert np.array_equal(obs[0].view(np.uint32), rules.observe(state, seat).view(np.uint32))
        if moves < len(script):
            action = rules.str_to_action(state, script[moves])
        else:
            legal = rules.legal_actions(state)
            action = legal[int(rng.integers(len(legal)))]
        rules.apply(state, action)
        game.apply(states, ROW, np.array([action]))
        moves += 1
    assert moves >= len(script)


# ---------------------------------------------------------------------------------------------- conversion
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_states_convert_both_ways_exactly(n: int) -> None:
    """Every state of seeded Python games (trumpet logs included) survives to_batched then from_batched."""
    rules = WallsRules(num_players=n)
    game = game_of(n)
    rng = np.random.default_rng(n)
    states = game.new_states(3)
    logs = 0
    for g in range(20):
        state = rules.initial_state(rng)
        if g % 2:
            rig_seven_trumpets(state, [g % n], rng)
        while True:
            game.to_batched(state, states, 1)
            back = game.from_batched(states, 1)
            assert rules.to_dict(back) == rules.to_dict(state)
            assert back.trumpet_log == state.trumpet_log and back.supply_size == state.supply_size
            logs += any(log for log in state.trumpet_log)
            if rules.is_terminal(state):
                break
            legal = rules.legal_actions(state)
            rules.apply(state, legal[int(rng.integers(len(legal)))])
    assert logs > 100, "no state with a non-empty trumpet log was converted"
    assert states["deck_len"][[0, 2]].tolist() == [0, 0], "to_batched wrote outside its row"


def test_to_batched_refuses_what_its_rows_cannot_hold() -> None:
    rules = WallsRules(num_players=3)
    state = rules.initial_state(np.random.default_rng(0))
    with pytest.raises(ValueError, match="3 players into rows of 4"):
        game_of(4).to_batched(state, game_of(4).new_states(1), 0)
    state.trumpet_log[1] = (("scoring", 1, 0, (0, 0, 0)),) * 4
    with pytest.raises(ValueError, match="more than 3 scorings"):
        game_of(3).to_batched(state, game_of(3).new_states(1), 0)
    state.trumpet_log[1] = (("scoring", 1, 300, (0, 0, 0)),)
    with pytest.raises(ValueError, match="out of range"):
        game_of(3).to_batched(state, game_of(3).new_states(1), 0)


# ---------------------------------------------------------------------------------------------- deal
@pytest.mark.parametrize("n", [2, 4, 5])
def test_deals_are_reachable_states_with_initial_states_distribution(n: int) -> None:
    """Card types in hands, the first player and each scoring card's place in its pile: uniform, as the Python deal."""
    rules = WallsRules(num_players=n)
    game = game_of(n)
    count = 6000
    states = game.new_states(count)
    rows = np.arange(count, dtype=np.int64)
    game.deal(states, rows, row_seeds(np.random.default_rng(n), count))
    for i in range(0, count, 600):
        data = rules.to_dict(game.from_batched(states, i))
        assert rules.to_dict(rules.from_dict(data, strict=True)) == data
    first = np.bincount(states["first_player"], minlength=n)
    assert first.sum() == count and np.all(np.abs(first - count / n) < 5 * np.sqrt(count / n))
    # each hand card type: 7 per seat drawn from 107 cards without replacement
    held = states["hands"][:, :n, :].sum(axis=1).astype(np.float64)
    for card in range(26):
        p = COPIES[card] / 107
        mean, sd = 7 * n * p, np.sqrt(7 * n * p * (1 - p))
        assert abs(held[:, card].mean() - mean) < 5 * sd / np.sqrt(count), card
    # the scoring cards: one uniformly placed in each of piles 2, 4 and 6
    top_down = states["deck"][:, : rules.deck_size][:, ::-1]
    for start, end in rules.scoring_piles:
        where = np.argmax(top_down[:, start:end] == SCORING, axis=1)
        assert np.all(top_down[np.arange(count), start + where] == SCORING)
        per = np.bincount(where, minlength=end - start)
        assert np.all(np.abs(per - count / (end - start)) < 5 * np.sqrt(count / (end - start)))


# ---------------------------------------------------------------------------------------------- determinize
def positions(n: int, count: int, seed: int, rigged: bool = False) -> list[WallsState]:
    """``count`` states of seeded random Python games, terminal ones included (``rigged``: seven trumpets dealt)."""
    rules = WallsRules(num_players=n)
    rng = np.random.default_rng(seed)
    out: list[WallsState] = []
    while len(out) < count:
        state = rules.initial_state(rng)
        if rigged:
            rig_seven_trumpets(state, [int(rng.integers(n))], rng)
        while len(out) < count:
            out.append(state.copy())
            if rules.is_terminal(state):
                break
            legal = rules.legal_actions(state)
            rules.apply(state, legal[int(rng.integers(len(legal)))])
    return out


def determinized(game: WallsBatched, state: WallsState, seats: list[int], seed: int) -> list[WallsState]:
    """One compiled copy of ``state`` per seat of ``seats``."""
    states = one_row(game, state)
    rows = np.zeros(len(seats), dtype=np.int64)
    out = game.new_states(len(seats))
    game.determinize(
        states, rows, np.array(seats, dtype=np.int64), row_seeds(np.random.default_rng(seed), len(seats)), out
    )
    assert game.rules.to_dict(game.from_batched(states, 0)) == game.rules.to_dict(state), "the real state changed"
    return [game.from_batched(out, k) for k in range(len(seats))]


@pytest.mark.parametrize(
    ("n", "rigged", "version"),
    [
        *[(2, False, 0), (3, False, 0), (4, False, 0), (5, False, 0), (4, True, 0), (3, True, 0)],
        *[(4, True, 1), (3, False, 1)],  # observation version 1
    ],
)
def test_compiled_copies_are_sound(n: int, rigged: bool, version: int) -> None:
    """Same observation (and mask for the mover), cards conserved, strict-valid, the seat's cards and the table kept."""
    rules = WallsRules(num_players=n, obs_version=version)
    game = game_of(n)
    floors = 0
    for i, state in enumerate(positions(n, 600, seed=10 + n, rigged=rigged)):
        seats = list(range(n))
        for seat, copy in zip(seats, determinized(game, state, seats, seed=i), strict=True):
            assert np.array_equal(rules.observe(copy, seat), rules.observe(state, seat))
            if rules.current_player(state) == seat:
                assert rules.legal_actions(copy) == rules.legal_actions(state)
            assert sorted(c for z in rules.card_zones(copy).values() for c in z) == all_cards()
            data = rules.to_dict(copy)
            assert rules.to_dict(rules.from_dict(json.loads(json.dumps(data)), strict=True)) == data
            assert copy.hands[seat] == state.hands[seat] and copy.supply_hidden[seat] == state.supply_hidden[seat]
            assert copy.walls == state.walls and copy.won == state.won and copy.trumpet_log == state.trumpet_log
            for o in range(n):
                if o != seat and copy.opening[o] >= 0:
                    assert copy.opening[o] != TRUMPET or not any(c != TRUMPET for c in _unseen(state, seat))
                floor = rules._trumpet_floor(state, o, seat)
                if o != seat and floor is not None:
                    total, in_supply = floor
                    assert copy.supply_hidden[o][TRUMPET] >= in_supply
                    assert copy.hands[o][TRUMPET] + copy.supply_hidden[o][TRUMPET] >= total
                    floors += total > 0
    assert not rigged or floors > 100, "the trumpet floors were never tested"


def _unseen(state: WallsState, seat: int) -> list[int]:
    cards = [c for c in state.deck if c != SCORING]
    for o in range(state.n):
        if o != seat:
            cards += [c for c in range(26) for _ in range(state.hands[o][c] + state.supply_hidden[o][c])]
            cards += [state.opening[o]] if state.opening[o] >= 0 else []
    return cards


def features(state: WallsState, seat: int) -> np.ndarray:
    """What a copy redeals, as numbers: each other seat's hand, supply cards and opening by card type, the pile's
    top ten cards by type, and where (from the top) each scoring card lies."""
    parts: list[Any] = []
    for o in range(state.n):
        if o != seat:
            parts += [
                state.hands[o],
                state.supply_hidden[o],
                np.eye(27)[state.opening[o]] if state.opening[o] >= 0 else [0] * 27,
            ]
    top = state.deck[::-1]
    parts.append(np.bincount(top[:10], minlength=27))
    where = np.zeros(100)
    where[[i for i, c in enumerate(top) if c == SCORING]] = 1
    parts.append(where)
    return np.concatenate([np.asarray(p, dtype=np.float64) for p in parts])


def _position_after(n: int, seed: int, moves: int, rigged: bool = False) -> WallsState:
    rules = WallsRules(num_players=n)
    rng = np.random.default_rng(seed)
    state = rules.initial_state(rng)
    if rigged:
        rig_seven_trumpets(state, [1], rng)
    for _ in range(moves):
        legal = rules.legal_actions(state)
        rules.apply(state, legal[int(rng.integers(len(legal)))])
    return state


# (name, state, observer): in the opening (face-down first wall cards redealt), mid-game, after a scoring in
# the donation, and with a seat known to have been dealt seven trumpets (its trumpet floor)
DISTRIBUTION_CASES = [
    ("opening", lambda: _position_after(4, 1, 6), 3),
    ("opening-5", lambda: _position_after(5, 2, 7), 0),
    ("play", lambda: _position_after(3, 3, 30), 1),
    ("donation", lambda: next(s for s in positions(4, 400, seed=4) if s.phase == Phase.DONATE), 2),
    ("seven-trumpets", lambda: _position_after(4, 5, 20, rigged=True), 0),
]


@pytest.mark.parametrize(("name", "make", "seat"), DISTRIBUTION_CASES, ids=[c[0] for c in DISTRIBUTION_CASES])
def test_compiled_copies_have_the_python_determinizations_distribution(name: str, make: Any, seat: int) -> None:
    """Over 3,000 copies each: the mean count of every card type in every redealt zone agrees within 5 SE."""
    state = make()
    n = state.n
    rules = WallsRules(num_players=n)
    game = game_of(n)
    draws = 3000
    rng = np.random.default_rng(99)
    python = np.array([features(rules.determinize(state, seat, rng), seat) for _ in range(draws)])
    states = one_row(game, state)
    out = game.new_states(draws)
    game.determinize(
        states, np.zeros(draws, dtype=np.int64), np.full(draws, seat), row_seeds(np.random.default_rng(7), draws), out
    )
    compiled = np.array([features(game.from_batched(out, k), seat) for k in range(draws)])
    se = np.sqrt((python.var(axis=0) + compiled.var(axis=0)) / draws)
    gap = np.abs(python.mean(axis=0) - compiled.mean(axis=0))
    worst = int(np.argmax(gap - 5 * se))
    assert np.all(gap <= 5 * se + 2 / draws), (
        f"{name}: feature {worst}: python {python[:, worst].mean():.4f}, kernels {compiled[:, worst].mean():.4f}"
    )
    if name == "seven-trumpets":
        assert rules._trumpet_floor(state, 1, seat)[0] > 0, "the position has no trumpet floor to test"


def test_compiled_copies_depend_only_on_what_the_seat_has_seen() -> None:
    """Two states the seat cannot tell apart give the same copy from the same stream."""
    rules = WallsRules(num_players=4)
    game = game_of(4)
    for i, state in enumerate(positions(4, 200, seed=21)):
        seat = i % 4
        twin = rules.determinize(state, seat, np.random.default_rng(i))
        a = determinized(game, state, [seat], seed=1000 + i)[0]
        b = determinized(game, twin, [seat], seed=1000 + i)[0]
        assert rules.to_dict(a) == rules.to_dict(b)


# ---------------------------------------------------------------------------------------------- rollout
def test_rollouts_end_games_with_the_python_returns_of_their_final_states() -> None:
    rules = WallsRules(num_players=4)
    game = game_of(4)
    starts = positions(4, 300, seed=8)[::3]
    states = game.new_states(len(starts))
    for k, state in enumerate(starts):
        game.to_batched(state, states, k)
    returns = np.empty((len(starts), 4))
    game.rollout(
        states, np.arange(len(starts), dtype=np.int64), row_seeds(np.random.default_rng(0), len(starts)), returns
    )
    finals = set()
    for k in range(len(starts)):
        final = game.from_batched(states, k)
        assert rules.is_terminal(final) and returns[k].tolist() == rules.returns(final)
        data = rules.to_dict(final)
        assert rules.to_dict(rules.from_dict(data, strict=True)) == data
        finals.add(json.dumps(data))
    assert len(finals) == len(starts)


def test_rollouts_play_uniformly_random_legal_moves_as_python_random_play_does() -> None:
    """From one position, 3,000 compiled rollouts and 3,000 Python random playouts: the same mean outcomes."""
    rules = WallsRules(num_players=3)
    game = game_of(3)
    state = _position_after(3, 12, 60)
    assert not rules.is_terminal(state)
    draws = 3000

    def outcome(final: WallsState, returns: Any) -> list[float]:
        keys = rules.ranking_keys(final)
        return [*returns, *(k[0] for k in keys), *(k[1] for k in keys), final.discard, len(final.deck)]

    rng = np.random.default_rng(3)
    python = []
    for _ in range(draws):
        s = state.copy()
        while not rules.is_terminal(s):
            legal = rules.legal_actions(s)
            rules.apply_unchecked(s, legal[int(rng.integers(len(legal)))])
        python.append(outcome(s, rules.returns(s)))
    states = game.new_states(draws)
    for k in range(draws):
        game.to_batched(state, states, k)
    returns = np.empty((draws, 3))
    game.rollout(states, np.arange(draws, dtype=np.int64), row_seeds(np.random.default_rng(4), draws), returns)
    compiled = [outcome(game.from_batched(states, k), returns[k].tolist()) for k in range(draws)]
    p, c = np.array(python), np.array(compiled)
    se = np.sqrt((p.var(axis=0) + c.var(axis=0)) / draws)
    assert np.all(np.abs(p.mean(axis=0) - c.mean(axis=0)) <= 5 * se + 1e-9), (p.mean(axis=0), c.mean(axis=0))


def test_batched_env_plays_walls_with_auto_reset_and_the_rules_views() -> None:
    env = BatchedEnv("walls", 8, compiled=True, num_players=3)
    rules = env.rules
    rng = np.random.default_rng(0)
    obs, mask, player = env.reset(seed=1)
    ended = 0
    for _ in range(300):
        obs, mask, player, rewards, terminated = env.step(random_actions(mask, rng))
        ended += int(terminated.sum())
        for i in range(8):
            state = env.get_state(i)
            assert np.array_equal(obs[i], rules.observe(state, int(player[i])))
            assert np.array_equal(mask[i], rules.legal_mask(state))
        assert np.allclose(rewards[terminated].sum(axis=1), 0.0) and not rewards[~terminated].any()
    assert ended > 8
    assert env.states.dtype == DTYPE
