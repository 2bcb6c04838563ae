"""Each game's row kernels (``BatchedGame.row_kernels``: the rules of one row, for compiled search) against its rules.

Over seeded random games, at every step: the seat to move and the returns (``status``), the legal set
(``legal``), every seat's observation bit for bit (``observe``) and the state after each move (``apply``, through
``from_batched`` and ``to_dict``) equal the Python rules'; ``determinize`` gives, for the mover, a state whose
observation and legal actions for that seat are the same, which the rules accept (``to_dict`` / ``from_dict``),
and, from the same random stream, the same state as the game's batched ``determinize`` (tested against the
Python rules' distribution in ``tests/games/test_<game>_batched.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import jericho_env
from agents.search.compiled import compiled_kernels
from jericho_env.core.kernels import row_seeds

CASES = [
    ("toy", {"pile": 20}, 150),
    ("castles", {}, 60),
    ("castles", {"ranks": 5, "small_deck": True}, 40),
    ("castles", {"ranks": 13, "reversed_order": True}, 40),
    ("grid", {"board_size": 9}, 20),
    ("grid", {}, 8),
    ("walls", {}, 10),
    ("walls", {"num_players": 2}, 10),
    ("walls", {"num_players": 5}, 6),
]


@pytest.mark.parametrize(("game_id", "options", "games"), CASES, ids=lambda v: str(v))
def test_row_kernels_play_like_the_rules(game_id: str, options: dict[str, Any], games: int) -> None:
    rules = jericho_env.make_rules(game_id, **options)
    found = compiled_kernels(rules)
    assert found is not None, f"{game_id} has row kernels"
    game, k = found
    info = rules.info
    rng = np.random.default_rng(0)
    rows = game.new_states(3)  # row 1 plays; rows 0 and 2 must stay untouched
    untouched = rows[0].tobytes(), rows[2].tobytes()
    buf = np.zeros(info.num_actions, dtype=np.int64)
    obs = np.zeros(info.observation_size, dtype=np.float32)
    ret = np.zeros(info.num_players, dtype=np.float64)
    det = game.new_states(2)
    steps = dets = 0
    for _ in range(games):
        state = rules.initial_state(rng)
        game.to_batched(state, rows, 1)
        while True:
            seat = int(k.status(rows, 1, k.params, ret))
            assert seat == rules.current_player(state)
            assert ret.tolist() == ([0.0] * info.num_players if seat >= 0 else rules.returns(state))
            if seat < 0:
                break
            n = int(k.legal(rows, 1, k.params, buf))
            assert sorted(buf[:n].tolist()) == sorted(rules.legal_actions(state))
            for p in range(info.num_players):
                k.observe(rows, 1, k.params, p, obs)
                assert np.array_equal(obs.view(np.uint32), rules.observe(state, p).view(np.uint32))
            if steps % 3 == 0:
                stream = row_seeds(rng, 1)
                again = stream.copy()
                assert k.determinize(rows, 1, k.params, seat, det, 0, stream, 0)
                drawn = game.from_batched(det, 0)
                rules.from_dict(rules.to_dict(drawn))
                assert np.array_equal(rules.observe(drawn, seat), rules.observe(state, seat))
                assert rules.legal_actions(drawn) == rules.legal_actions(state)
                if game_id != "toy":  # the toy game's batched determinize is the row function itself
                    game.determinize(rows, np.array([1]), np.array([seat]), again, det[1:])
                    assert det[0].tobytes() == det[1].tobytes()
                dets += 1
            action = int(buf[int(rng.integers(n))])
            k.apply(rows, 1, k.params, action)
            rules.apply(state, action)
            assert rules.to_dict(game.from_batched(rows, 1)) == rules.to_dict(state)
            steps += 1
    assert (rows[0].tobytes(), rows[2].tobytes()) == untouched
    assert steps > games * 5 and dets > games


def test_grids_compiled_position_value_is_the_python_evaluator() -> None:
    from agents.search.ismcts import EVALUATORS
    from agents.search.row_values import grid_points

    rules = jericho_env.make_rules("grid", board_size=9)
    found = compiled_kernels(rules)
    assert found is not None
    game, k = found
    value = grid_points(rules, game)
    rows = game.new_states(1)
    out = np.zeros(2, dtype=np.float64)
    rng = np.random.default_rng(3)
    leads = set()
    for _ in range(6):
        state = rules.initial_state(rng)
        while not rules.is_terminal(state):
            game.to_batched(state, rows, 0)
            value(rows, 0, k.params, out)
            # the same float up to its last bit (Numba's tanh is the C library's, numpy's its own)
            assert np.allclose(out, EVALUATORS["grid"](state), rtol=1e-15, atol=0)
            leads.add(state.points[0] - state.points[1])
            legal = rules.legal_actions(state)
            rules.apply(state, legal[int(rng.integers(len(legal)))])
    assert len(leads) > 5  # positions with different leads, both signs
