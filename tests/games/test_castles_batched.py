"""Castles' compiled batched rules (``jericho_env/games/castles/batched.py``) against its Python rules.

The equality runs (``play_both``, ``tests/batched_harness.py``) play 2,000 seeded games per option set, each in
two halves of 1,000 (marked slow, still run by the test command); the full check plays 10,000 per option set:
``JERICHO_BATCHED_GAMES=10000 pytest tests/games/test_castles_batched.py -k like_the_python_rules -n 2``
(``JERICHO_BATCHED_GAMES=N``: N per option set). The compiled determinization is checked for the
properties ``tests/test_determinize.py`` checks on the Python one and for its distribution against
Python's; the deal and the random rollout for theirs.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import pytest

import jericho_env
from jericho_env.core.batched import PythonBatchedGame
from jericho_env.core.kernels import row_seeds
from jericho_env.core.redeal import NoConsistentDealError
from jericho_env.games.castles.batched import DTYPE, CastlesBatched
from jericho_env.games.castles.state import Phase
from tests.batched_harness import play_both
from tests.test_determinize import _castles_facts_hold, _states

GAMES = int(os.environ.get("JERICHO_BATCHED_GAMES", "2000"))

OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"ranks": 5},
    {"ranks": 13},
    {"small_deck": True},
    {"reversed_order": True},
    {"ranks": 5, "small_deck": True},
    {"ranks": 13, "reversed_order": True},
    {"ranks": 5, "small_deck": True, "reversed_order": True},
    {"ranks": 13, "small_deck": True, "reversed_order": True},
]


def _game(**options: Any) -> CastlesBatched:
    game = jericho_env.make_batched("castles", 1, compiled=True, **options).game
    assert isinstance(game, CastlesBatched)
    return game


@pytest.mark.slow
@pytest.mark.parametrize("half", [0, 1])
@pytest.mark.parametrize("options", OPTION_SETS, ids=str)
def test_kernels_play_every_game_like_the_python_rules(options: dict[str, Any], half: int) -> None:
    """States, seats, legal actions, observation bits and returns equal at every step of GAMES seeded games."""
    games = GAMES // 2 + (GAMES % 2 if half else 0)
    counts = play_both("castles", options, games, seed=1000 * OPTION_SETS.index(options) + half)
    assert counts["games"] == games and counts["steps"] > 15 * games


def test_the_harness_fails_on_a_kernel_that_breaks_a_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule broken inside the kernels' tables (an Ace no longer goes on a 10) is caught."""
    real_init = CastlesBatched.__init__

    def broken(self: CastlesBatched, rules: Any) -> None:
        real_init(self, rules)
        self.answers = self.answers.copy()
        self.answers[self.ranks - 1] &= ~1  # the top rank's answers without the Ace

    monkeypatch.setattr(CastlesBatched, "__init__", broken)
    with pytest.raises(AssertionError, match="differs"):
        play_both("castles", {}, 300, seed=0)


# ---------------------------------------------------------------------------------------------- layout


@pytest.mark.parametrize("options", OPTION_SETS[:5], ids=str)
def test_states_convert_both_ways_exactly(options: dict[str, Any]) -> None:
    """Python state -> row -> Python state is the same state; row -> Python state -> row the same bytes."""
    env = jericho_env.make_batched("castles", 64, compiled=True, **options)
    rules, game = env.rules, env.game
    rng = np.random.default_rng(0)
    states = np.zeros(1, dtype=DTYPE)
    seen_over = 0
    for _, state in _states("castles", options, 1500, seed=4):
        game.to_batched(state, states, 0)
        assert rules.to_dict(game.from_batched(states, 0)) == rules.to_dict(state)
        seen_over += rules.is_terminal(state)
    assert seen_over > 5
    _, mask, _ = env.reset(seed=1)
    again = np.zeros(64, dtype=DTYPE)
    for _ in range(120):  # rows the kernels played (auto-reset deals new games in some of them)
        for i in range(64):
            game.to_batched(game.from_batched(env.states, i), again, i)
        assert again.tobytes() == env.states.tobytes()
        _, mask, *_ = env.step(jericho_env.envs.batched.random_actions(mask, rng))


# ---------------------------------------------------------------------------------------------- deal


@pytest.mark.parametrize("options", [{}, {"ranks": 5, "small_deck": True}], ids=str)
def test_deals_are_valid_games_with_the_distribution_of_initial_state(options: dict[str, Any]) -> None:
    """Every deal is a state the rules accept; first player, hand ranks and deck order are uniform."""
    game = _game(**options)
    rules = game.rules
    n = 20000
    states = game.new_states(n)
    game.deal(states, np.arange(n, dtype=np.int64), row_seeds(np.random.default_rng(0), n))
    for i in range(0, n, 97):
        state = game.from_batched(states, i)
        assert rules.to_dict(rules.from_dict(rules.to_dict(state))) == rules.to_dict(state)
    comp = np.array(rules.deck.composition())
    size = comp.sum()
    k = len(comp)
    first = states["first"].astype(float)
    assert abs(first.mean() - 0.5) < 4 * 0.5 / np.sqrt(n)
    for p in range(2):
        hands = states["hands"][:, p, :k].astype(float)  # a hypergeometric count per rank
        p_r = comp / size
        var = 8 * p_r * (1 - p_r) * (size - 8) / (size - 1)
        assert np.all(np.abs(hands.mean(axis=0) - 8 * p_r) < 5 * np.sqrt(var / n) + 1e-12)
        for depth in (0, size - 9):  # the next card drawn, and the bottom one
            top = states["decks"][np.arange(n), p, states["deck_n"][:, p] - 1 - depth]
            share = np.bincount(top, minlength=k) / n
            assert np.all(np.abs(share - p_r) < 5 * np.sqrt(p_r * (1 - p_r) / n))


# ---------------------------------------------------------------------------------------------- determinize


def _determinize_all(game: CastlesBatched, states: list[Any], seats: list[int], seed: int) -> np.ndarray:
    rows = game.new_states(len(states))
    for i, s in enumerate(states):
        game.to_batched(s, rows, i)
    before = rows.copy()
    out = game.new_states(len(states))
    idx = np.arange(len(states), dtype=np.int64)
    game.determinize(rows, idx, np.array(seats), row_seeds(np.random.default_rng(seed), len(states)), out)
    assert rows.tobytes() == before.tobytes(), "determinize changed the real states"
    return out


def _cards(rules: Any, state: Any) -> list[int]:
    return sorted(c for zone in rules.card_zones(state).values() for c in zone)


@pytest.mark.parametrize(
    "options", [*OPTION_SETS, {"obs_version": 1}, {"ranks": 5, "small_deck": True, "obs_version": 1}], ids=str
)
def test_every_compiled_copy_is_playable_indistinguishable_and_keeps_what_was_revealed(options: dict[str, Any]) -> None:
    """The properties of tests/test_determinize.py, on the kernels' copies of 2,000 positions per option set."""
    game = _game(**options)
    rules = game.rules
    pairs = list(_states("castles", options, 2000, seed=21))
    states = [s for _, s in pairs]
    seats = [i % 2 for i in range(len(states))]
    out = _determinize_all(game, states, seats, seed=5)
    revealed = 0
    for i, (state, seat) in enumerate(zip(states, seats, strict=True)):
        copy = game.from_batched(out, i)
        data = rules.to_dict(copy)
        assert rules.to_dict(rules.from_dict(json.loads(json.dumps(data)), strict=True)) == data
        assert rules.is_terminal(copy) == rules.is_terminal(state)
        assert rules.current_player(copy) == rules.current_player(state)
        assert rules.is_terminal(copy) or rules.legal_actions(copy)
        assert np.array_equal(rules.observe(copy, seat), rules.observe(state, seat))
        if rules.current_player(state) == seat:
            assert np.array_equal(rules.legal_mask(copy), rules.legal_mask(state))
        assert _cards(rules, copy) == sorted(rules.all_cards())
        _castles_facts_hold(rules, copy, 1 - seat)
        if rules.is_terminal(state) and state.reason == 2:  # redealt by the winner: the loser held no answer
            by_winner = _determinize_all(game, [state], [state.winner], i)
            _castles_facts_hold(rules, game.from_batched(by_winner, 0), 1 - state.winner)
        revealed += bool(state.barred[1 - seat] or state.need_n[1 - seat])
    assert revealed > 0


def _position(kind: str) -> tuple[Any, int]:
    """A default-options position whose hidden cards are bound by ``kind``'s constraint, and the seat to redeal for.

    Only positions where the Python copies vary in what the opponent holds (a hand or saves to redeal) count.
    """
    rules = jericho_env.make_rules("castles")
    rng = np.random.default_rng(0)

    def bound(state: Any, seat: int) -> bool:
        o = 1 - seat
        if kind == "mover":
            if not (state.phase == Phase.PLAY and state.to_move == o and state.hand_n[o] == 5):
                return False
            fits = sum(n for r, n in enumerate(state.hands[o]) if rules._answers[state.beat] >> r & 1)
            return fits == 1  # a tight bound: one answering card among five
        if kind == "short":
            return state.need_n[o] >= 2 and state.phase != Phase.OVER
        if kind == "barred":
            return bool(state.barred[o]) and state.phase != Phase.OVER
        return state.phase == Phase.OVER and state.reason == 2 and state.winner == seat  # "lost"

    def varies(state: Any, seat: int) -> bool:
        o = 1 - seat
        seen = {json.dumps([c.hands[o], c.saves[o]]) for c in (rules.determinize(state, seat, rng) for _ in range(8))}
        return len(seen) > 1

    for _, state in _states("castles", {}, 60000, seed=31):
        for seat in (0, 1):
            if bound(state, seat) and varies(state, seat):
                return rules.clone(state), seat
    raise AssertionError(f"no {kind!r} position met: the test would check nothing")


def _zones(rules: Any, copy: Any, seat: int) -> np.ndarray:
    """What a copy redealt, as numbers: opponent's hand and saves per rank, the top cards of both decks."""
    k = rules.deck.ranks + 1
    o = 1 - seat
    tops = np.zeros(2 * k)
    if copy.decks[o]:
        tops[copy.decks[o][-1]] = 1
    if copy.decks[seat]:
        tops[k + copy.decks[seat][-1]] = 1
    return np.concatenate([copy.hands[o], copy.saves[o], tops]).astype(float)


@pytest.mark.parametrize("kind", ["mover", "short", "barred", "lost"])
def test_compiled_copies_have_the_distribution_of_the_python_ones(kind: str) -> None:
    """Over 4,000 draws each, every hidden zone's count of every rank agrees within 5 standard errors."""
    state, seat = _position(kind)
    game = _game()
    rules = game.rules
    n = 4000
    out = _determinize_all(game, [state] * n, [seat] * n, seed=8)
    kernel = np.array([_zones(rules, game.from_batched(out, i), seat) for i in range(n)])
    rng = np.random.default_rng(9)
    python = np.array([_zones(rules, rules.determinize(state, seat, rng), seat) for _ in range(n)])
    se = np.sqrt(kernel.var(axis=0) / n + python.var(axis=0) / n)
    gap = np.abs(kernel.mean(axis=0) - python.mean(axis=0))
    assert np.all(gap <= 5 * se + 1e-12), (kind, gap / np.maximum(se, 1e-12))
    assert (se[: 2 * (rules.deck.ranks + 1)] > 0).sum() >= 2  # the opponent's hand and saves were redealt


def test_compiled_determinize_refuses_a_position_no_deal_fits() -> None:
    """A hand-made state whose opponent's hand is barred from every rank: the same error as the Python rules."""
    rules = jericho_env.make_rules("castles")
    state = rules.initial_state(np.random.default_rng(0))
    while state.phase != Phase.PLAY:
        rules.apply(state, rules.legal_actions(state)[0])
    data = rules.to_dict(state)
    data["barred"] = [0, 0]
    data["barred"][1 - state.to_move] = (1 << (rules.deck.ranks + 1)) - 1
    impossible = rules.from_dict(data, strict=False)
    seat = state.to_move
    with pytest.raises(NoConsistentDealError):
        rules.determinize(impossible, seat, np.random.default_rng(0))
    with pytest.raises(NoConsistentDealError, match="row 0"):
        _determinize_all(_game(), [impossible], [seat], seed=0)


# ---------------------------------------------------------------------------------------------- rollout


def test_rollouts_end_in_valid_games_as_often_won_as_python_rollouts() -> None:
    """From a mid-game position, 4,000 compiled and 4,000 Python random playouts end alike (who wins, how)."""
    game = _game()
    rules = game.rules
    state = next(s for i, (_, s) in enumerate(_states("castles", {}, 400, seed=2)) if i >= 12 and s.phase == Phase.PLAY)
    n = 4000
    rows = game.new_states(n)
    for i in range(n):
        game.to_batched(state, rows, i)
    returns = np.empty((n, 2))
    game.rollout(rows, np.arange(n, dtype=np.int64), row_seeds(np.random.default_rng(0), n), returns)
    assert np.all(returns.sum(axis=1) == 0) and set(np.unique(returns[:, 0])) <= {-1.0, 1.0}
    for i in range(0, n, 50):
        end = game.from_batched(rows, i)
        assert rules.is_terminal(end) and rules.returns(end) == returns[i].tolist()
        assert rules.to_dict(rules.from_dict(rules.to_dict(end))) == rules.to_dict(end)
    python_game = PythonBatchedGame(rules)
    py_rows = python_game.new_states(n)
    for i in range(n):
        python_game.to_batched(state, py_rows, i)
    py_returns = np.empty((n, 2))
    python_game.rollout(py_rows, np.arange(n, dtype=np.int64), row_seeds(np.random.default_rng(1), n), py_returns)
    emptied = np.array([game.from_batched(rows, i).reason == 1 for i in range(n)])
    py_emptied = np.array([py_rows[i].reason == 1 for i in range(n)])
    for ours, theirs in ((returns[:, 0] > 0, py_returns[:, 0] > 0), (emptied, py_emptied)):
        k, p = ours.mean(), theirs.mean()
        assert abs(k - p) < 5 * np.sqrt((k * (1 - k) + p * (1 - p)) / n), (k, p)
