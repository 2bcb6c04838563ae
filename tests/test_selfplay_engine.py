"""The batched self-play env on the compiled kernels plays exactly the games it plays on the Python rules.

``SelfPlayVector(compiled=True)`` holds its games as rows of the game's compiled state and steps, observes
and masks them with the kernels; ``compiled=False`` runs the same loop on the Python rules
(``PythonBatchedGame``). With the same seeds both must return the same observations (bit for bit), masks,
rewards, dones and infos at every step, over many auto-resets, whatever the opponents read: deterministic
and sampling policies, observations or information views, with and without shaping.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from agents.batch import AgentBatchPolicy, make_batch_policy
from jericho_env import IllegalActionError
from jericho_env.envs.selfplay import RandomBatchPolicy, SelfPlayVector

CASES = [
    ("castles", {}, 500),
    ("castles", {"small_deck": True, "reversed_order": True}, 400),
    ("walls", {}, 300),
    ("walls", {"num_players": 3}, 300),
    ("walls", {"num_players": 5}, 200),
    ("grid", {"board_size": 11}, 300),
    ("grid", {}, 120),
]


def by_observation(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Deterministic, and reads every float of the observation: the legal action nearest a hash of it."""
    out = np.empty(len(masks), dtype=np.int64)
    weights = np.arange(1, observations.shape[1] + 1, dtype=np.float64)
    for j in range(len(masks)):
        legal = np.flatnonzero(masks[j])
        out[j] = legal[int(abs(observations[j].astype(np.float64) @ weights) * 7919) % len(legal)]
    return out


class ViewReader:
    """A searching agent's stand-in: plays the legal action picked by a hash of its information view."""

    name = "view-reader"

    def __init__(self, rules: Any) -> None:
        self.rules = rules
        self.view: Any = None

    def observe_view(self, view: Any) -> None:
        self.view = view

    def act(self, observation: dict[str, np.ndarray]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        text = json.dumps(self.rules.to_dict(self.view), sort_keys=True, default=str)
        return int(legal[sum(text.encode()) % len(legal)])


def pool(game: str, options: dict[str, Any], rules: Any) -> list[Any]:
    """Opponents of every kind, built afresh (each vector gets its own generators, seeded alike)."""
    return [
        by_observation,  # deterministic, reads observations
        RandomBatchPolicy(seed=11),  # samples, reads masks only
        make_batch_policy("greedy", game, seed=5, **options),  # the training pool's baseline
        AgentBatchPolicy(ViewReader(rules)),  # information views (uses_views)
    ]


def assert_same_step(a: tuple[Any, ...], b: tuple[Any, ...], step: int) -> None:
    (obs_a, rew_a, done_a, infos_a), (obs_b, rew_b, done_b, infos_b) = a, b
    assert obs_a.dtype == obs_b.dtype == np.float32
    assert np.array_equal(obs_a.view(np.uint32), obs_b.view(np.uint32)), f"observations differ at step {step}"
    assert rew_a.dtype == rew_b.dtype and np.array_equal(rew_a.view(np.uint32), rew_b.view(np.uint32)), step
    assert np.array_equal(done_a, done_b), step
    for i, (x, y) in enumerate(zip(infos_a, infos_b, strict=True)):
        assert x.keys() == y.keys(), (step, i)
        if x:
            last_x, last_y = x["terminal_observation"], y["terminal_observation"]
            assert last_x.dtype == last_y.dtype == np.float32
            assert np.array_equal(last_x.view(np.uint32), last_y.view(np.uint32)), (step, i)
            assert (x["seat"], x["returns"]) == (y["seat"], y["returns"]), (step, i)
            assert (x["episode"]["r"], x["episode"]["l"]) == (y["episode"]["r"], y["episode"]["l"]), (step, i)


def play_side_by_side(game: str, options: dict[str, Any], steps: int, shaping: float, n: int = 12) -> dict[str, int]:
    """Step a compiled and a Python vector with the same seeds and learner actions, comparing every output."""
    vectors = []
    for compiled in (True, False):
        vector = SelfPlayVector(game, n, seed=40, shaping=shaping, compiled=compiled, **options)
        vector.set_opponents(pool(game, options, vector.rules))
        vectors.append(vector)
    fast, slow = vectors
    assert fast.compiled and not slow.compiled
    (obs_a, masks_a), (obs_b, masks_b) = fast.reset(), slow.reset()
    assert np.array_equal(obs_a.view(np.uint32), obs_b.view(np.uint32)) and np.array_equal(masks_a, masks_b)
    chooser = np.random.default_rng(3)
    episodes = 0
    for step in range(steps):
        actions = np.array([chooser.choice(np.flatnonzero(m)) for m in masks_a])
        out_a, out_b = fast.step(actions), slow.step(actions)
        assert_same_step(out_a, out_b, step)
        masks_a, masks_b = fast.action_masks(), slow.action_masks()
        assert masks_a.dtype == masks_b.dtype == np.bool_ and np.array_equal(masks_a, masks_b), step
        episodes += int(out_a[2].sum())
        if step % 50 == 0:  # the games themselves, every field
            rules = fast.rules
            assert [rules.to_dict(s) for s in fast.states] == [rules.to_dict(s) for s in slow.states], step
    assert np.array_equal(fast.seats, slow.seats) and np.array_equal(fast.deal_seeds, slow.deal_seeds)
    assert (fast.opponent_calls, fast.opponent_decisions) == (slow.opponent_calls, slow.opponent_decisions)
    return {"episodes": episodes, "decisions": fast.opponent_decisions}


@pytest.mark.parametrize(("game", "options", "steps"), CASES)
def test_compiled_games_equal_the_python_rules_step_for_step(game: str, options: dict[str, Any], steps: int) -> None:
    counts = play_side_by_side(game, options, steps, shaping=0.0)
    assert counts["episodes"] >= 12 and counts["decisions"] > steps  # auto-resets, opponents of every kind


@pytest.mark.parametrize(
    ("game", "options"), [("grid", {"board_size": 11}), ("walls", {"num_players": 4}), ("castles", {})]
)
def test_shaping_rewards_are_equal_on_both_engines(game: str, options: dict[str, Any]) -> None:
    """grid's points lead and walls' cards-won lead (computed from the rows), and a game without a potential."""
    counts = play_side_by_side(game, options, 300, shaping=1.5)
    assert counts["episodes"] >= 12


@pytest.mark.parametrize(
    ("game", "options"),
    [("grid", {"board_size": 11}), ("walls", {"num_players": 3}), ("walls", {"num_players": 5})],
)
def test_the_potential_of_the_rows_is_the_rules_potential(game: str, options: dict[str, Any]) -> None:
    vector = SelfPlayVector(game, 16, seed=2, **options)
    _, masks = vector.reset()
    policy = RandomBatchPolicy(seed=0)
    seen = set()
    for _ in range(300):
        vector.step(policy(None, masks))
        masks = vector.action_masks()
        out = np.empty(vector.num_envs)
        for seat in range(vector.num_players):
            seats = np.full(vector.num_envs, seat)
            vector.game.potential(vector.batch, vector.rows, seats, out)
            want = [vector.rules.potential(s, seat) for s in vector.states]
            assert out.tolist() == want
            seen.update(want)
    assert len(seen) > 20  # leads of many sizes, both signs


def test_an_illegal_opponent_answer_changes_no_game() -> None:
    def cheat(observations: Any, masks: np.ndarray) -> np.ndarray:
        out = np.argmax(masks, axis=1)
        out[-1] = np.argmin(masks[-1])  # the last game's move is illegal, the others legal
        return out

    cheat.name = "cheat"  # type: ignore[attr-defined]
    vector = SelfPlayVector("walls", 6, opponents=[cheat], seed=0, compiled=True)
    vector._rngs = [np.random.default_rng(i) for i in range(6)]  # deal without playing, to look before the error
    vector._new_episodes(vector.rows)
    waiting = vector._waiting(vector.rows)
    assert len(waiting) >= 2
    before = vector.batch.copy()
    with pytest.raises(IllegalActionError, match=rf"'cheat' chose illegal action \d+ .* in game {waiting[-1]}"):
        vector._advance(vector.rows)
    assert np.array_equal(vector.batch, before)


class Logged:
    """A batch policy that logs the inputs of every call (observations' bytes, masks, views) before answering."""

    def __init__(self, policy: Any, name: str, log: list[Any], rules: Any, joint: Any = None) -> None:
        self.policy, self.name, self.log, self.rules, self.joint = policy, name, log, rules, joint
        self.uses_observation = getattr(policy, "uses_observation", True)
        self.uses_views = getattr(policy, "uses_views", False)

    def observe_views(self, views: list[Any]) -> None:
        self.log.append((self.name, [json.dumps(self.rules.to_dict(v), sort_keys=True, default=str) for v in views]))
        self.policy.observe_views(views)

    def __call__(self, observations: np.ndarray | None, masks: np.ndarray) -> np.ndarray:
        self.log.append((self.name, None if observations is None else observations.tobytes(), masks.tobytes()))
        return self.policy(observations, masks)  # type: ignore[no-any-return]


class Together:
    """A joint: asks each of its policies in turn, in one call (as ``JointNetworks`` does for snapshots)."""

    def __call__(self, parts: list[tuple[Any, Any, np.ndarray]]) -> list[np.ndarray]:
        return [policy(obs, masks) for policy, obs, masks in parts]


def logged_pool(game: str, options: dict[str, Any], rules: Any, log: list[Any]) -> list[Any]:
    together = Together()
    plain = [
        ("by-observation", by_observation, None),
        ("random", RandomBatchPolicy(seed=11), None),
        ("greedy", make_batch_policy("greedy", game, seed=5, **options), None),
        ("views-a", AgentBatchPolicy(ViewReader(rules)), None),
        ("views-b", AgentBatchPolicy(ViewReader(rules)), None),  # two searchers: the views' order matters
        ("joint-a", RandomBatchPolicy(seed=12), together),
        ("joint-b", by_observation, together),
    ]
    return [Logged(policy, name, log, rules, joint) for name, policy, joint in plain]


@pytest.mark.parametrize(
    ("game", "options", "steps", "shaping"),
    [
        ("castles", {}, 300, 0.0),
        ("walls", {}, 120, 0.0),
        ("walls", {"num_players": 3}, 120, 0.0),
        ("grid", {"board_size": 11}, 150, 2.0),
    ],
)
def test_the_engine_plays_what_the_loop_before_it_played(
    game: str, options: dict[str, Any], steps: int, shaping: float
) -> None:
    """Against the loop before the engine (``tests/selfplay_reference.py``): games, rewards, infos and inputs."""
    from tests.selfplay_reference import ReferenceSelfPlayVector

    logs: list[list[Any]] = [[], []]
    fast = SelfPlayVector(game, 10, seed=21, shaping=shaping, compiled=True, **options)
    fast.set_opponents(logged_pool(game, options, fast.rules, logs[0]))
    before = ReferenceSelfPlayVector(game, 10, seed=21, shaping=shaping, **options)
    before.set_opponents(logged_pool(game, options, before.rules, logs[1]))
    (obs_a, masks_a), (obs_b, masks_b) = fast.reset(), before.reset()
    assert np.array_equal(obs_a.view(np.uint32), obs_b.view(np.uint32)) and np.array_equal(masks_a, masks_b)
    chooser = np.random.default_rng(8)
    episodes = 0
    for step in range(steps):
        actions = np.array([chooser.choice(np.flatnonzero(m)) for m in masks_a])
        out_a, out_b = fast.step(actions), before.step(actions)
        assert_same_step(out_a, out_b, step)
        masks_a, masks_b = fast.action_masks(), before.action_masks()
        assert np.array_equal(masks_a, masks_b), step
        episodes += int(out_a[2].sum())
    rules = fast.rules
    assert [rules.to_dict(s) for s in fast.states] == [rules.to_dict(s) for s in before.states]
    assert len(logs[0]) == len(logs[1]) and logs[0] == logs[1]  # every call, in order, with the same inputs
    names = {entry[0] for entry in logs[0]}
    assert names == {"by-observation", "random", "greedy", "views-a", "views-b", "joint-a", "joint-b"}
    assert (fast.opponent_calls, fast.opponent_decisions) == (before.opponent_calls, before.opponent_decisions)
    assert episodes >= 10


def test_a_dropped_opponent_finishes_its_games_and_is_then_let_go() -> None:
    calls = {"b": 0}

    def b_policy(observations: Any, masks: np.ndarray) -> np.ndarray:
        calls["b"] += 1
        return np.argmax(masks, axis=1)

    vector = SelfPlayVector("castles", 16, opponents=[by_observation], seed=4, compiled=True)
    vector.add_opponent(b_policy, max_added=1)
    _, masks = vector.reset()  # games drawn from [by_observation, b_policy]
    assert any(b_policy in row for row in vector.opponents)
    vector.add_opponent(RandomBatchPolicy(seed=0), max_added=1)  # b_policy leaves the pool
    assert b_policy not in vector.pool and b_policy in vector._policies  # still playing its games
    before = calls["b"]
    for _ in range(400):
        vector.step(np.argmax(masks, axis=1))
        masks = vector.action_masks()
    assert calls["b"] > before  # it finished the games it was in
    assert not any(b_policy in row for row in vector.opponents)
    vector.add_opponent(RandomBatchPolicy(seed=1), max_added=1)
    assert b_policy not in vector._policies  # no game holds it any more: let go


def test_the_default_potential_asks_the_rules_on_each_row() -> None:
    """A game whose rules define a potential but whose kernels do not: the rows' Python states are asked."""
    from jericho_env.games.castles.rules import CastlesRules

    class Leaning(CastlesRules):
        def potential(self, state: Any, seat: int) -> float:
            return (sum(state.hands[seat]) - 2 * sum(state.saves[1 - seat])) / 10.0

    vector = SelfPlayVector("castles", 8, seed=1, rules=Leaning(), shaping=1.0, compiled=True)
    _, masks = vector.reset()
    values = set()
    for _ in range(60):
        vector.step(np.argmax(masks, axis=1))
        masks = vector.action_masks()
        out = np.empty(8)
        vector.game.potential(vector.batch, vector.rows, vector.seats, out)
        want = [vector.rules.potential(s, int(seat)) for s, seat in zip(vector.states, vector.seats, strict=True)]
        assert out.tolist() == want
        values.update(want)
    assert len(values) > 3
