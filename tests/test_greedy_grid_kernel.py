"""grid greedy's one implementation (``agents.greedy.grid``) against its readable dict version, position by position.

The functions run compiled where Numba is installed (the ``train`` extra, which the test command's setup
installs) and as plain Python otherwise, so these tests check the same arithmetic either way. The dict version
(``tests/greedy_oracles.GridGreedy``) adds its sums in the same order, so the scores are compared bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.greedy import grid as greedy_grid
from agents.greedy.grid import GreedyAgent
from jericho_env.registry import make_rules
from tests.greedy_oracles import GridGreedy


def positions(board_size: int = 21, deals: int = 6, seed: int = 3) -> list[tuple[np.ndarray, np.ndarray]]:
    """(observation, legal actions) at every decision of ``deals`` games, half played by greedy, half at random."""
    rules = make_rules("grid", board_size=board_size)
    greedy = GreedyAgent("grid", seed=seed, board_size=board_size)
    rng = np.random.default_rng(seed)
    out = []
    for deal in range(deals):
        state = rules.initial_state(rng)
        while not rules.is_terminal(state):
            obs = rules.observe(state, rules.current_player(state))
            legal = np.flatnonzero(rules.legal_mask(state))
            out.append((obs, legal))
            if deal % 2:
                action = greedy.act({"observation": obs, "action_mask": rules.legal_mask(state).astype(np.int8)})
            else:
                action = int(rng.choice(legal))
            rules.apply(state, action)
    return out


def compare(agent: GreedyAgent, cases: list[tuple[np.ndarray, np.ndarray]], weigh_pass: bool) -> int:
    """Assert both scorings give the same actions in the same order and the same scores; the number compared."""
    oracle = GridGreedy(agent)
    compared = 0
    for obs, legal in cases:
        view = {"observation": obs, "action_mask": np.isin(np.arange(agent.actions.num_actions), legal).astype(np.int8)}
        ref = oracle.values(view, legal, weigh_pass)
        got = agent.action_values(view, legal, weigh_pass)
        assert [a for a, _ in got] == [a for a, _ in ref]
        assert [v for _, v in got] == [v for _, v in ref]  # the same floats
        compared += len(ref)
    return compared


def as_batch(cases: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The positions as one batch: (observations (b, size), legal masks (b, actions) bool)."""
    masks = np.zeros((len(cases), make_rules("grid").info.num_actions), dtype=bool)
    for j, (_, legal) in enumerate(cases):
        masks[j, legal] = True
    return np.stack([o for o, _ in cases]), masks


@pytest.fixture(scope="module")
def cases() -> list[tuple[np.ndarray, np.ndarray]]:
    return positions()


def test_the_kernel_scores_every_move_as_the_dict_version(cases: list[tuple[np.ndarray, np.ndarray]]) -> None:
    agent = GreedyAgent("grid", seed=0)
    in_chain = make_rules("grid").layout.slices["in_chain"].start
    chains = sum(1 for obs, _ in cases if obs[in_chain] > 0.5)
    assert chains > 0, "the positions should include capture chains"
    assert compare(agent, cases, weigh_pass=False) > 5_000
    assert compare(agent, cases, weigh_pass=True) > 5_000


def test_the_kernel_reads_the_agents_weights_and_switches(cases: list[tuple[np.ndarray, np.ndarray]]) -> None:
    agent = GreedyAgent("grid", seed=0)
    agent.risk_weight, agent.setup_weight, agent.card_weight, agent.distance_weight = 0.5, 0.0, 0.1, 0.02
    agent.soft_setup = False
    compare(agent, cases[::3], weigh_pass=True)
    agent.setup_weight = 0.7
    compare(agent, cases[::3], weigh_pass=False)


def test_the_kernel_on_a_smaller_table() -> None:
    agent = GreedyAgent("grid", seed=0, board_size=9)
    assert compare(agent, positions(board_size=9, deals=4), weigh_pass=True) > 1000


def test_act_and_scores_agree_with_the_dict_version(cases: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """The same moves and the same prior scores; ties are drawn from the same generator in the same order."""
    fast = GreedyAgent("grid", seed=5)
    slow, rng = GridGreedy(GreedyAgent("grid")), np.random.default_rng(5)
    n = fast.actions.num_actions
    for obs, legal in cases[::2]:
        view = {"observation": obs, "action_mask": np.isin(np.arange(n), legal).astype(np.int8)}
        assert fast.act(view) == slow.act(view, rng)
        assert np.array_equal(fast.scores(view), slow.scores(view))


def test_popcount_and_best_points_of_a_card_set() -> None:
    rng = np.random.default_rng(0)
    rankmax = greedy_grid.params_for(make_rules("grid"))[0]["rankmax"]
    for _ in range(300):
        mask = int(rng.integers(0, 1 << 52))
        assert greedy_grid._popcount(mask) == mask.bit_count()
        cards = [c for c in range(52) if mask >> c & 1]
        best = max((min(c % 13 + 1, 10) for c in cards), default=0)
        assert greedy_grid._max_points(mask, rankmax) == best


def test_a_batch_of_scores_is_greedys_scores_row_by_row(cases: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """The prior's batch (one compiled call) against ``GreedyAgent.scores`` per row."""
    from agents.prior import make_prior

    obs, masks = as_batch(cases)
    num_actions = masks.shape[1]
    masks[::17] = False  # rows of finished games: no legal action, no score
    hint = make_prior("greedy-scores", "grid", seed=0)
    assert hint is not None
    got = hint(obs, masks)
    agent = GreedyAgent("grid", seed=0)
    oracle = GridGreedy(agent)
    for j in range(len(cases)):
        view = {"observation": obs[j], "action_mask": masks[j].astype(np.int8)}
        want = agent.scores(view) if masks[j].any() else 0
        assert np.array_equal(got[j], np.zeros(num_actions) + want)
        if masks[j].any() and j % 5 == 0:  # the dict version scores the same
            assert np.array_equal(got[j], oracle.scores(view))


def test_greedy_as_a_batch_policy_chooses_as_the_agent_row_by_row(cases: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """``BatchGreedyGrid`` (one compiled call, ties drawn with the agent's generator) against ``act`` per row."""
    from agents.batch import AgentBatchPolicy, make_batch_policy
    from agents.greedy.grid import BatchGreedyGrid

    obs, masks = as_batch(cases)
    batch = make_batch_policy("greedy", "grid", seed=4)
    assert isinstance(batch, BatchGreedyGrid)
    rows = AgentBatchPolicy(GreedyAgent("grid", seed=4))
    for start in range(0, len(cases), 13):  # batches of several sizes, the generators advancing alike
        block = slice(start, start + 1 + start % 13)
        got, want = batch(obs[block], masks[block]), rows(obs[block], masks[block])
        np.testing.assert_array_equal(got, want)
    for seed in range(3):  # positions with tied best moves draw as the agent does
        batch, rows = make_batch_policy("greedy", "grid", seed=seed), AgentBatchPolicy(GreedyAgent("grid", seed=seed))
        np.testing.assert_array_equal(batch(obs, masks), rows(obs, masks))
    _, counts = greedy_grid._best_rows(obs, masks, batch.agent.params)
    assert (counts > 1).sum() > 0  # some positions have tied best moves: the draws were compared too
    empty = masks[:3].copy()
    empty[1] = False
    with pytest.raises(ValueError, match="row 1 of the masks has no legal action"):
        batch(obs[:3], empty)


def test_the_board_sizes_of_one_capacity_share_one_params_record_so_the_scoring_compiles_once() -> None:
    records = {size: greedy_grid.params_for(make_rules("grid", board_size=size)) for size in (3, 5, 9, 15, 21, 23, 31)}
    assert len({records[s].dtype for s in (3, 5, 9, 15, 21)}) == 1 and records[23].dtype == records[31].dtype
    assert records[21].dtype != records[23].dtype  # the two capacities of the kernels' records
    assert all(int(records[s][0]["cells"]) == s * s for s in records)
    positions(board_size=5, deals=2)  # greedy scores moves on two board sizes of one capacity
    positions(board_size=9, deals=2)
    for helper in (greedy_grid.values, greedy_grid._danger, greedy_grid._setup):  # at most one per capacity
        assert len(helper.signatures) <= 2, helper.signatures
