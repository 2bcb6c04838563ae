"""``BatchGreedyWalls`` chooses, row by row, exactly what ``GreedyAgent.act`` chooses, and scores as it does.

Decision points come from seeded walls games, each game played by random and greedy moves in a fixed
proportion (from all-greedy to all-random), so that every phase and late-game tables appear.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import jericho_env
from agents.greedy.walls import GreedyAgent
from agents.greedy.walls_batch import NUM_ACTIONS, TIE, BatchGreedyWalls, _first_best_numpy, first_best_actions

PLAYER_COUNTS = [2, 3, 4, 5]
MIN_DECISIONS = 3000
RANDOM_SHARES = (0.0, 0.3, 0.7, 1.0)  # share of random moves in a game, cycled over the games


@functools.cache
def decisions(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Observations (R, D) float32, masks (R, 56) bool and phases (R,) of every decision of seeded games."""
    rules = jericho_env.make_rules("walls", num_players=n)
    greedy = GreedyAgent("walls", num_players=n)
    rng = np.random.default_rng(1000 + n)
    observations: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    phases: list[int] = []
    game = 0
    while len(observations) < MIN_DECISIONS:
        share = RANDOM_SHARES[game % len(RANDOM_SHARES)]
        game += 1
        state = rules.initial_state(rng)
        while not rules.is_terminal(state):
            seat = rules.current_player(state)
            legal = rules.legal_actions(state)
            obs = rules.observe(state, seat)
            mask = np.zeros(NUM_ACTIONS, dtype=bool)
            mask[legal] = True
            observations.append(obs)
            masks.append(mask)
            phases.append(state.phase)
            if rng.random() < share:
                action = int(rng.choice(legal))
            else:
                action = greedy.act({"observation": obs, "action_mask": mask.astype(np.int8)})
            rules.apply(state, action)
    return np.array(observations), np.array(masks), np.array(phases)


def scalar_actions(agent: GreedyAgent, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """``agent.act`` on every row."""
    m8 = masks.astype(np.int8)
    return np.array([agent.act({"observation": obs[i], "action_mask": m8[i]}) for i in range(len(obs))])


def scalar_scores(agent: GreedyAgent, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """``agent.scores`` on every row."""
    m8 = masks.astype(np.int8)
    return np.array([agent.scores({"observation": obs[i], "action_mask": m8[i]}) for i in range(len(obs))])


def loop_first_best(values: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """``GreedyAgent.act``'s selection loop, row by row."""
    out = []
    for row, mask in zip(values, legal, strict=True):
        best_score, best = -1e18, -1
        for a in np.flatnonzero(mask):
            if row[a] > best_score + TIE:
                best_score, best = float(row[a]), int(a)
        out.append(best)
    return np.array(out)


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_decisions_cover_every_phase(n: int) -> None:
    obs, _, phases = decisions(n)
    assert len(obs) >= MIN_DECISIONS
    counts = np.bincount(phases, minlength=4)
    # opening wall card, opening supply card, play, donation: every game has n of each opening step and 2n donations
    assert counts[0] >= 3 * n and counts[1] >= 3 * n and counts[2] > MIN_DECISIONS // 2 and counts[3] >= 6 * n
    # late-game tables: rows after the second scoring (round one-hot index 2)
    layout = jericho_env.make_rules("walls", num_players=n).layout
    assert (obs[:, layout.slices["round"]][:, 2] == 1).sum() > 100


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_actions_equal_greedy_act_on_every_row(n: int) -> None:
    obs, masks, phases = decisions(n)
    expected = scalar_actions(GreedyAgent("walls", num_players=n), obs, masks)
    batch = BatchGreedyWalls("walls", num_players=n)
    got = batch(obs, masks)
    assert got.dtype == np.int64 and got.shape == (len(obs),)
    mismatched = np.flatnonzero(got != expected)
    assert len(mismatched) == 0, f"{len(mismatched)} of {len(obs)} rows differ, first {mismatched[:10].tolist()}"
    # the same in batches of 64: a row's action does not depend on the rest of its batch
    chunked = np.concatenate([batch(obs[i : i + 64], masks[i : i + 64]) for i in range(0, len(obs), 64)])
    np.testing.assert_array_equal(chunked, expected)
    # every phase was in the comparison
    assert set(np.unique(phases).tolist()) == {0, 1, 2, 3}


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_scores_equal_greedy_scores_on_every_row(n: int) -> None:
    obs, masks, _ = decisions(n)
    expected = scalar_scores(GreedyAgent("walls", num_players=n), obs, masks)
    got = BatchGreedyWalls("walls", num_players=n).scores(obs, masks)
    assert got.dtype == np.float32 and got.shape == (len(obs), NUM_ACTIONS)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    assert (got[~masks] == 0).all() and (got[masks] > 0).all()
    np.testing.assert_allclose(got.max(axis=1), 1.0)


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_the_compiled_scores_are_the_numpy_floats(n: int) -> None:
    """``greedy_walls_kernel.play_values`` (the default path) gives numpy's play scores bit for bit."""
    from agents.greedy.walls_kernel import KERNEL

    obs, masks, _ = decisions(n)
    batch = BatchGreedyWalls("walls", num_players=n)
    assert (batch._kernel is not None) == KERNEL  # compiled wherever Numba is installed (rival weight 0)
    raw, _, phase = batch._read(obs, masks)
    assert set(np.unique(phase).tolist()) == {0, 1, 2, 3}
    got = batch._play_values(raw.copy(), phase)
    expected = batch._play_values_numpy(raw.copy(), phase)
    assert got.dtype == np.float64 and got.shape == expected.shape == (NUM_ACTIONS, len(obs))
    np.testing.assert_array_equal(got, expected)
    assert batch._play_values(raw[:, :0].copy(), phase[:0]).shape == (NUM_ACTIONS, 0)


@pytest.mark.parametrize("n", [2, 4])
def test_batch_of_one(n: int) -> None:
    obs, masks, phases = decisions(n)
    greedy = GreedyAgent("walls", num_players=n)
    batch = BatchGreedyWalls("walls", num_players=n)
    rows = np.concatenate([np.flatnonzero(phases == p)[:15] for p in range(4)])
    for i in rows.tolist():
        got = batch(obs[i : i + 1], masks[i : i + 1])
        assert got.shape == (1,)
        assert int(got[0]) == greedy.act({"observation": obs[i], "action_mask": masks[i].astype(np.int8)})
        np.testing.assert_allclose(
            batch.scores(obs[i : i + 1], masks[i : i + 1])[0],
            greedy.scores({"observation": obs[i], "action_mask": masks[i].astype(np.int8)}),
            atol=1e-5,
        )


@pytest.mark.parametrize("n", [3, 5])
def test_rows_with_a_single_legal_action(n: int) -> None:
    obs, masks, phases = decisions(n)
    rows = np.concatenate([np.flatnonzero(phases == p)[:50] for p in range(4)])
    obs = obs[rows]
    only = np.array([np.flatnonzero(m)[-1] for m in masks[rows]])  # the last legal action, never the default first
    single = np.zeros((len(rows), NUM_ACTIONS), dtype=bool)
    single[np.arange(len(rows)), only] = True
    batch = BatchGreedyWalls("walls", num_players=n)
    np.testing.assert_array_equal(batch(obs, single), only)
    np.testing.assert_array_equal(batch(obs, single), scalar_actions(GreedyAgent("walls", num_players=n), obs, single))
    np.testing.assert_array_equal(batch.scores(obs, single), single.astype(np.float32))
    # mixed with rows of many legal actions in one batch
    mixed = masks[rows].copy()
    mixed[::2] = single[::2]
    np.testing.assert_array_equal(batch(obs, mixed), scalar_actions(GreedyAgent("walls", num_players=n), obs, mixed))


def test_masks_may_be_int8() -> None:
    obs, masks, _ = decisions(4)
    batch = BatchGreedyWalls("walls", num_players=4)
    np.testing.assert_array_equal(batch(obs[:200], masks[:200].astype(np.int8)), batch(obs[:200], masks[:200]))


@pytest.mark.parametrize("n", [2, 5])
def test_a_positive_rival_weight_is_followed(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    obs, masks, _ = decisions(n)
    obs, masks = obs[:1500], masks[:1500]
    own_only = BatchGreedyWalls("walls", num_players=n)(obs, masks)
    monkeypatch.setattr(GreedyAgent, "rival_weight", 0.5)
    greedy = GreedyAgent("walls", num_players=n)
    batch = BatchGreedyWalls("walls", num_players=n)
    got = batch(obs, masks)
    np.testing.assert_array_equal(got, scalar_actions(greedy, obs, masks))
    np.testing.assert_allclose(batch.scores(obs, masks), scalar_scores(greedy, obs, masks), atol=1e-5)
    assert (got != own_only).sum() > 20  # the weight changes choices: the rival path was exercised


def test_first_best_actions_follows_the_loop_on_near_ties() -> None:
    rng = np.random.default_rng(7)
    rows = 4000
    # scores on a grid of steps around the 1e-9 margin, plus exact ties and clear gaps
    steps = np.array([0.0, 0.3e-9, 0.6e-9, 0.9e-9, 1.0e-9, 1.1e-9, 1.6e-9, 2.5e-9, 1e-3, 1.0])
    values = 10.0 + rng.choice(steps, size=(rows, NUM_ACTIONS)) * rng.choice([-1.0, 1.0], size=(rows, NUM_ACTIONS))
    values += rng.integers(0, 2, size=(rows, 1)) * 1e-3 * rng.integers(0, 3, size=(rows, NUM_ACTIONS))
    legal = rng.random((rows, NUM_ACTIONS)) < 0.2
    legal[np.arange(rows), rng.integers(0, NUM_ACTIONS, rows)] = True
    expected = loop_first_best(values, legal)
    np.testing.assert_array_equal(first_best_actions(values, legal), expected)
    # the numpy rule too (used where Numba is absent)
    np.testing.assert_array_equal(_first_best_numpy(values.T, legal.T), expected)
    # these rows need the loop: the first legal action within the margin of the best is not always its answer
    masked = np.where(legal, values, -np.inf)
    within = (masked >= masked.max(axis=1, keepdims=True) - 0.5 * TIE).argmax(axis=1)
    assert (within != expected).sum() > 50
    # well separated scores and exact ties take the vectorised rule: the first legal best
    clear = np.round(values, 3)
    np.testing.assert_array_equal(first_best_actions(clear, legal), np.where(legal, clear, -np.inf).argmax(axis=1))
    np.testing.assert_array_equal(_first_best_numpy(clear.T, legal.T), np.where(legal, clear, -np.inf).argmax(axis=1))


def test_bad_input_is_rejected_with_what_is_allowed() -> None:
    batch = BatchGreedyWalls("walls", num_players=3)
    obs, masks, _ = decisions(3)
    with pytest.raises(ValueError, match=r"observations must be a \(batch, 306\) array"):
        batch(obs[:4, :-1], masks[:4])
    with pytest.raises(ValueError, match=r"masks must be a \(batch, 56\) array"):
        batch(obs[:4], masks[:3])
    empty = masks[:4].copy()
    empty[2] = False
    with pytest.raises(ValueError, match=r"rows \[2\] of the action masks have no legal action"):
        batch(obs[:4], empty)
    with pytest.raises(ValueError, match="walls"):
        BatchGreedyWalls("grid")


def test_batch_policy_attributes() -> None:
    batch = BatchGreedyWalls("walls")  # 4 players by default, as the game
    assert batch.name == "greedy" and batch.uses_observation is True
    assert batch.n == 4
    assert "num_players=4" in repr(batch)


@pytest.mark.parametrize("rows", [1, 2, 7])
def test_the_registered_batch_policy_chooses_as_the_agent(rows: int) -> None:
    """``make_batch_policy("greedy", "walls")`` (compiled: the batch itself, else small batches to the agent)."""
    from agents.batch import make_batch_policy
    from agents.greedy.walls_kernel import KERNEL

    obs, masks, _ = decisions(3)
    policy = make_batch_policy("greedy", "walls", seed=0, num_players=3)
    assert isinstance(policy, BatchGreedyWalls) == KERNEL
    agent = GreedyAgent("walls", num_players=3)
    picks = np.random.default_rng(rows).permutation(len(obs))[: 40 * rows].reshape(40, rows)
    for pick in picks:
        np.testing.assert_array_equal(policy(obs[pick], masks[pick]), scalar_actions(agent, obs[pick], masks[pick]))
