"""castles greedy's one implementation (``agents.greedy.castles.choose``) against its readable version, and its batch.

``GreedyAgent.act`` chooses exactly as the plain Python of ``tests/greedy_oracles.py``, and ``BatchGreedyCastles``
chooses, row by row, exactly what ``GreedyAgent.act`` chooses.

Decision points come from seeded castles games under several deck options, each game played by random and
greedy moves in a fixed proportion (from all-greedy to all-random), so that set-up, plays, jokers, stuck
turns with and without a short deck and late-game counts all appear.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

import jericho_env
from agents.batch import make_batch_policy
from agents.greedy.castles import BatchGreedyCastles, GreedyAgent
from tests.greedy_oracles import castles_act

OPTIONS = [{}, {"small_deck": True}, {"reversed_order": True}, {"small_deck": True, "reversed_order": True},
           {"ranks": 13}, {"ranks": 5, "small_deck": True}]  # fmt: skip
MIN_DECISIONS = 3000
RANDOM_SHARES = (0.0, 0.3, 0.7, 1.0)


@functools.cache
def decisions(key: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Observations (R, D) float32, masks (R, A) bool and each decision's kind of every decision of seeded games."""
    options = OPTIONS[int(key)]
    rules: Any = jericho_env.make_rules("castles", **options)
    greedy = GreedyAgent("castles", **options)
    rng = np.random.default_rng(500 + int(key))
    observations: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    kinds: list[str] = []
    game = 0
    while len(observations) < MIN_DECISIONS:
        share = RANDOM_SHARES[game % len(RANDOM_SHARES)]
        game += 1
        state = rules.initial_state(rng)
        while not rules.is_terminal(state):
            seat = rules.current_player(state)
            legal = rules.legal_actions(state)
            obs = rules.observe(state, seat)
            mask = np.zeros(rules.info.num_actions, dtype=bool)
            mask[legal] = True
            observations.append(obs)
            masks.append(mask)
            kinds.append(rules.actions.decode(legal[0]).kind)
            if rng.random() < share:
                action = int(rng.choice(legal))
            else:
                action = greedy.act({"observation": obs, "action_mask": mask.astype(np.int8)})
            rules.apply(state, action)
    return np.array(observations), np.array(masks), kinds


@pytest.mark.parametrize("key", [str(k) for k in range(len(OPTIONS))])
def test_batch_greedy_chooses_what_the_agent_chooses(key: str) -> None:
    options = OPTIONS[int(key)]
    obs, masks, kinds = decisions(key)
    agent = GreedyAgent("castles", **options)
    m8 = masks.astype(np.int8)
    want = np.array([agent.act({"observation": obs[i], "action_mask": m8[i]}) for i in range(len(obs))])
    readable = [castles_act(agent, {"observation": obs[i], "action_mask": m8[i]}) for i in range(len(obs))]
    assert want.tolist() == readable
    batch = BatchGreedyCastles("castles", **options)
    got = batch(obs, masks)
    assert got.dtype == np.int64
    bad = np.flatnonzero(got != want)
    assert not len(bad), f"row {bad[0]} ({kinds[bad[0]]}): batch {got[bad[0]]}, agent {want[bad[0]]}"
    for start in range(0, 40):  # batches of one and of a few rows give the same as the whole
        assert batch(obs[start : start + 1], masks[start : start + 1])[0] == want[start]
    # every rule was exercised, and plays with several legal ranks (the scored choice) are many
    assert {"play", "save", "play_save"} <= set(kinds)
    copies = batch.copies
    several = sum(1 for i in range(len(obs)) if kinds[i] == "play" and len(set(np.flatnonzero(masks[i]) // copies)) > 2)
    assert several > 300


def test_discards_appear_and_match() -> None:
    """Short-deck discards are rare: gather them over every option set's decisions."""
    count = 0
    for key in range(len(OPTIONS)):
        obs, masks, kinds = decisions(str(key))
        rows = [i for i, k in enumerate(kinds) if k == "discard"]
        count += len(rows)
        agent = GreedyAgent("castles", **OPTIONS[key])
        batch = BatchGreedyCastles("castles", **OPTIONS[key])
        m8 = masks.astype(np.int8)
        want = [agent.act({"observation": obs[i], "action_mask": m8[i]}) for i in rows]
        assert batch(obs[rows], masks[rows]).tolist() == want
        assert want == [castles_act(agent, {"observation": obs[i], "action_mask": m8[i]}) for i in rows]
    assert count > 20


def test_make_batch_policy_gives_the_compiled_greedy_and_a_row_without_moves_is_named() -> None:
    policy = make_batch_policy("greedy", "castles", seed=0, small_deck=True)
    assert isinstance(policy, BatchGreedyCastles)
    obs, masks, _ = decisions("1")
    empty = masks[:2].copy()
    empty[1] = False
    with pytest.raises(ValueError, match="no legal action"):
        policy(obs[:2], empty)


def test_every_deck_shares_one_params_record_so_the_choice_compiles_once() -> None:
    from agents.greedy.castles import choose, params_for

    decks = [{"ranks": r, "small_deck": small} for r in (5, 10, 13) for small in (False, True)]
    records = [params_for(jericho_env.make_rules("castles", **options)) for options in decks]
    assert len({r.dtype for r in records}) == 1
    assert len({(int(r[0]["actions"]), int(r[0]["codes"])) for r in records}) == len(decks)
    compiled = 0
    for key in ("0", "4", "5"):  # the default deck, then ranks 13 and 5: no new compile
        obs, masks, _ = decisions(key)
        BatchGreedyCastles("castles", **OPTIONS[int(key)])(obs[:5], masks[:5])
        compiled = compiled or len(choose.signatures)
    assert len(choose.signatures) == compiled, choose.signatures
