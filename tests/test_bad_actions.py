"""Bad input, door 2: actions given to ``rules.apply``. It refuses them, says why, and leaves the state as it was.

``apply`` checks legality through each game's ``is_legal`` (cheaper than the list of legal actions);
the test checks that ``is_legal`` agrees with ``legal_actions`` on every action of many states, and
that ``apply_unchecked`` (the envs' and search's fast path) plays legal actions exactly as ``apply``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from jericho_env.core.rules import ActionTypeError, IllegalActionError, Rules
from jericho_env.registry import make_rules

CASES: list[tuple[str, dict[str, Any]]] = [
    ("grid", {"board_size": 7}),
    ("walls", {"num_players": 3}),
    ("walls", {}),
    ("castles", {}),
    ("castles", {"ranks": 5, "small_deck": True}),
    ("toy", {}),
]
IDS = [f"{g}{o or ''}" for g, o in CASES]


def _states(rules: Rules[Any], games: int, seed: int) -> Iterator[Any]:
    rng = np.random.default_rng(seed)
    for _ in range(games):
        state = rules.initial_state(rng)
        while not rules.is_terminal(state):
            yield state
            legal = rules.legal_actions(state)
            state = rules.child(state, legal[int(rng.integers(len(legal)))])
        yield state


@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
def test_is_legal_agrees_with_the_legal_actions_on_every_action(game: str, options: dict[str, Any]) -> None:
    rules = make_rules(game, **options)
    n = rules.info.num_actions
    for state in _states(rules, 8, seed=2):
        legal = set(rules.legal_actions(state))
        assert {a for a in range(-3, n + 3) if rules.is_legal(state, a)} == legal


@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
def test_every_illegal_action_is_refused_with_a_reason_and_the_state_is_unchanged(
    game: str, options: dict[str, Any]
) -> None:
    rules = make_rules(game, **options)
    n = rules.info.num_actions
    rng = np.random.default_rng(0)
    refused = 0
    for i, state in enumerate(_states(rules, 3, seed=7)):
        before = json.dumps(rules.to_dict(state), sort_keys=True)
        legal = set(rules.legal_actions(state))
        illegal = [a for a in range(n) if a not in legal]
        every = i % 10 == 0 or len(illegal) < 3
        tried = illegal if every else [illegal[int(k)] for k in rng.integers(len(illegal), size=3)]
        for a in [*tried, -1, n, n + 1000]:
            with pytest.raises(IllegalActionError) as err:
                rules.apply(state, a)
            message = str(err.value)
            assert f"cannot play {a}" in message and "the state is unchanged" in message
            assert message.split(": ", 2)[-1].strip(), "a reason follows"
            refused += 1
        assert json.dumps(rules.to_dict(state), sort_keys=True) == before
    assert refused > 30


@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
@pytest.mark.parametrize("action", ["3", 2.0, None, True, [1], np.float32(1.0)], ids=repr)
def test_an_action_that_is_not_an_integer_is_refused(game: str, options: dict[str, Any], action: Any) -> None:
    rules = make_rules(game, **options)
    state = rules.initial_state(np.random.default_rng(1))
    before = json.dumps(rules.to_dict(state), sort_keys=True)
    with pytest.raises(ActionTypeError, match=r"an action is an int in \[0, \d+\), got"):
        rules.apply(state, action)
    assert json.dumps(rules.to_dict(state), sort_keys=True) == before


@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
def test_numpy_integers_are_actions_and_unchecked_apply_plays_legal_moves_alike(
    game: str, options: dict[str, Any]
) -> None:
    rules = make_rules(game, **options)
    rng = np.random.default_rng(4)
    a_state = rules.initial_state(np.random.default_rng(9))
    b_state = rules.clone(a_state)
    while not rules.is_terminal(a_state):
        legal = rules.legal_actions(a_state)
        action = legal[int(rng.integers(len(legal)))]
        rules.apply(a_state, np.int64(action))
        rules.apply_unchecked(b_state, action)
        assert rules.to_dict(a_state) == rules.to_dict(b_state)


def test_the_issues_examples() -> None:
    """walls apply(illegal) left a hand count at -1; castles apply(-1) and apply(num_actions) broke the game."""
    walls = make_rules("walls")
    s = walls.initial_state(np.random.default_rng(0))
    missing = next(a for a in range(25) if not walls.is_legal(s, a))
    with pytest.raises(IllegalActionError, match="you hold no"):
        walls.apply(s, missing)
    assert s.hand_size == [7, 7, 7, 7] and min(min(h) for h in s.hands) == 0
    castles = make_rules("castles")
    c = castles.initial_state(np.random.default_rng(0))
    for bad in (-1, castles.info.num_actions):
        with pytest.raises(IllegalActionError, match=r"actions are integers in \[0, 74\)"):
            castles.apply(c, bad)
    assert sorted(x for z in castles.card_zones(c).values() for x in z) == castles.all_cards()


@pytest.mark.parametrize(
    ("returns", "error", "message"),
    [
        (None, ActionTypeError, "opponent 'broken' in seat 1 returned None: player_1: action must be an int"),
        ("3", ActionTypeError, "opponent 'broken' in seat 1 returned '3'"),
        (10_000, ActionTypeError, "opponent 'broken' in seat 1 returned 10000: player_1: action 10000 is outside"),
        (-1, ActionTypeError, "returned -1"),
    ],
)
def test_an_opponent_that_returns_no_action_is_named(returns: Any, error: type[Exception], message: str) -> None:
    import jericho_env

    def broken(observation: dict[str, np.ndarray]) -> Any:
        return returns

    env = jericho_env.single_agent("grid", opponents=[broken], seat=0)

    def play() -> None:
        for seed in range(20):  # the opponent moves first in some deals, later in the others
            env.reset(seed=seed)
            env.step(int(np.flatnonzero(env.action_masks())[-1]))  # pass

    with pytest.raises(error) as err:
        play()
    assert message in str(err.value)


def test_an_opponent_that_plays_an_illegal_action_is_named() -> None:
    import jericho_env

    def cheat(observation: dict[str, np.ndarray]) -> int:
        return int(np.flatnonzero(observation["action_mask"] == 0)[0])

    env = jericho_env.single_agent("castles", opponents=[cheat], seat=0)

    def play() -> None:
        for seed in range(20):
            env.reset(seed=seed)
            env.step(int(np.flatnonzero(env.action_masks())[0]))

    with pytest.raises(IllegalActionError, match="opponent 'cheat' in seat 1 returned"):
        play()
