"""walls greedy's one implementation (``agents.greedy.walls``) against its readable version, and its batch twin.

``GreedyAgent`` scores exactly as the plain Python of ``tests/greedy_oracles.py`` (the same floats), and
``BatchGreedyWalls`` chooses, row by row, exactly what ``GreedyAgent.act`` chooses, and scores as it does.
Decision points come from seeded walls games, each game played by random and greedy moves in a fixed
proportion (from all-greedy to all-random), so that every phase and late-game tables appear.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import jericho_env
from agents.greedy.walls import TIE, BatchGreedyWalls, GreedyAgent
from jericho_env.core.kernels import NUMBA
from jericho_env.games.walls.actions import NUM_ACTIONS
from tests.greedy_oracles import walls_act, walls_scores, walls_values

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


def oracle_actions(agent: GreedyAgent, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The readable version's ``act`` on every row."""
    m8 = masks.astype(np.int8)
    return np.array([walls_act(agent, {"observation": obs[i], "action_mask": m8[i]}) for i in range(len(obs))])


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
    np.testing.assert_array_equal(got, expected)
    assert (got[~masks] == 0).all() and (got[masks] > 0).all()
    np.testing.assert_allclose(got.max(axis=1), 1.0)


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_the_agent_scores_as_the_readable_version_bit_for_bit(n: int) -> None:
    """``GreedyAgent.action_values`` and ``scores`` are the readable version's floats; ``act`` its choice."""
    obs, masks, phases = decisions(n)
    agent = GreedyAgent("walls", num_players=n)
    m8 = masks.astype(np.int8)
    for i in range(len(obs)):
        view = {"observation": obs[i], "action_mask": m8[i]}
        legal = np.flatnonzero(masks[i])
        assert agent.action_values(view, legal) == walls_values(agent, view, legal)
        assert np.array_equal(agent.scores(view), walls_scores(agent, view))
    np.testing.assert_array_equal(scalar_actions(agent, obs, masks), oracle_actions(agent, obs, masks))
    assert set(np.unique(phases).tolist()) == {0, 1, 2, 3}


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
        np.testing.assert_array_equal(
            batch.scores(obs[i : i + 1], masks[i : i + 1])[0],
            greedy.scores({"observation": obs[i], "action_mask": masks[i].astype(np.int8)}),
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
    np.testing.assert_array_equal(got, oracle_actions(greedy, obs, masks))
    np.testing.assert_array_equal(batch.scores(obs, masks), scalar_scores(greedy, obs, masks))
    assert (got != own_only).sum() > 20  # the weight changes choices: the rival path was exercised


def test_act_keeps_the_first_of_near_ties_as_its_loop() -> None:
    """Moves whose scores lie within ``TIE`` of the best: ``act`` keeps the first that beat the running best."""
    obs, masks, _ = decisions(4)
    agent = GreedyAgent("walls", num_players=4)
    near = 0
    for i in range(len(obs)):
        view = {"observation": obs[i], "action_mask": masks[i].astype(np.int8)}
        values = [v for _, v in agent.action_values(view, np.flatnonzero(masks[i]))]
        if len(values) > 1 and sum(v > max(values) - 2 * TIE for v in values) > 1:
            near += 1
            assert agent.act(view) == walls_act(agent, view)
    assert near > 50


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
    """``make_batch_policy("greedy", "walls")`` (compiled: the batch itself, else the agent row by row)."""
    from agents.batch import make_batch_policy

    obs, masks, _ = decisions(3)
    policy = make_batch_policy("greedy", "walls", seed=0, num_players=3)
    assert isinstance(policy, BatchGreedyWalls) == NUMBA
    agent = GreedyAgent("walls", num_players=3)
    picks = np.random.default_rng(rows).permutation(len(obs))[: 40 * rows].reshape(40, rows)
    for pick in picks:
        np.testing.assert_array_equal(policy(obs[pick], masks[pick]), scalar_actions(agent, obs[pick], masks[pick]))


def test_every_option_set_shares_one_params_record_so_the_scoring_compiles_once() -> None:
    from agents.greedy.walls import params_for

    records = [params_for(jericho_env.make_rules("walls", num_players=n)) for n in (2, 3, 4, 5)]
    records.append(params_for(jericho_env.make_rules("walls", num_players=4, obs_version=1)))
    assert len({r.dtype for r in records}) == 1 and len({int(r[0]["size"]) for r in records}) == 5
