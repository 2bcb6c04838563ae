"""The greedy agents as search's row policies (``agents.search.compiled.greedy_row_policy``).

Over observations of seeded random games, the policy's prior weights are exactly ``GreedyAgent.scores`` at the
legal actions (given in any order), and its rollout move is ``GreedyAgent.act``'s (grid: one of the moves it
draws among when scores tie). Castles' greedy has no scores: its policy has no prior.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import jericho_env
from agents.greedy import make_greedy
from agents.search.compiled import greedy_row_policy
from jericho_env.core.kernels import row_seeds

CASES = [
    ("grid", {"board_size": 9}, 30),
    ("grid", {}, 6),
    ("walls", {}, 12),
    ("walls", {"num_players": 3}, 8),
    ("castles", {}, 30),
]


def _ties(agent: Any, obs: dict[str, np.ndarray], legal: list[int]) -> list[int]:
    """The moves grid greedy's ``act`` draws among (its scan of the scores)."""
    best_value, ties = -1e9, [agent.pass_action]
    for a, value in agent.action_values(obs, legal, agent.allow_pass):
        if value > best_value + 1e-9:
            best_value, ties = value, [a]
        elif value > best_value - 1e-9:
            ties.append(a)
    return ties


@pytest.mark.parametrize(("game", "options", "games"), CASES)
def test_the_row_policy_gives_greedys_scores_and_moves(game: str, options: dict[str, Any], games: int) -> None:
    rules = jericho_env.make_rules(game, **options)
    policy = greedy_row_policy(rules)
    assert policy is not None and (policy.prior is None) == (game == "castles")
    greedy: Any = make_greedy(game, seed=0, **options)
    rng = np.random.default_rng(1)
    stream = row_seeds(rng, 1)
    weights = np.zeros(rules.info.num_actions, dtype=np.float64)
    checked = several = 0
    for _ in range(games):
        s = rules.initial_state(rng)
        while not rules.is_terminal(s):
            legal = rules.legal_actions(s)
            if len(legal) > 1:
                seat = rules.current_player(s)
                obs = {"observation": rules.observe(s, seat), "action_mask": rules.legal_mask(s)}
                shuffled = np.array(legal, dtype=np.int64)[rng.permutation(len(legal))]
                if policy.prior is not None:
                    policy.prior(obs["observation"], shuffled, len(legal), policy.params, stream, 0, weights)
                    want = greedy.scores(obs).astype(np.float64)
                    assert np.array_equal(weights[: len(legal)], want[shuffled]), (game, legal)
                move = int(policy.rollout(obs["observation"], shuffled, len(legal), policy.params, stream, 0, weights))
                if game == "grid":
                    ties = _ties(greedy, obs, legal)
                    assert move in ties
                    several += len(ties) > 1
                else:
                    assert move == greedy.act(obs)
                checked += 1
            rules.apply(s, legal[int(rng.integers(len(legal)))])
    assert checked > 100
    if game == "grid":
        assert several > 0  # ties happen: the draw among them is exercised
