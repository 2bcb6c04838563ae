"""The Python and compiled searches are twins held equal: the same seed gives the same moves, move for move.

Real games of every game are played to the end; at every decision with a choice both engines search the
position from the same seed and must give the same move and the same root statistics (visits and summed
returns, bit for bit: they draw from one random stream, in the same order, and call the same greedy
functions), then the game goes on with that move. ISMCTS runs at each game's settings (greedy's prior and
rollouts, rollouts cut short and valued, random rollouts); PUCT with hidden cards redealt, Dirichlet noise
at the roots and either value layout, on a batch of the game's positions at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import agents
import jericho_env
from agents.search.compiled import CompiledPUCT, compiled_kernels
from agents.search.puct import PUCTSearch

ISMCTS_CASES = [  # (game, options, settings, games)
    ("toy", {"pile": 20}, {"simulations": 60}, 3),
    ("castles", {}, {"simulations": 60}, 2),
    ("castles", {"small_deck": True}, {"simulations": 40, "rollout": "greedy"}, 2),
    ("grid", {"board_size": 9}, {"simulations": 20}, 2),
    ("grid", {"board_size": 9}, {"simulations": 20, "rollout": "random", "prior": "none"}, 1),
    ("grid", {}, {"simulations": 10}, 1),
    ("walls", {"num_players": 3}, {"simulations": 20}, 1),
    ("walls", {}, {"simulations": 15, "rollout": "random", "prior": "none"}, 1),
]


def _both(game: str, options: dict[str, Any], settings: dict[str, Any], seed: int) -> tuple[Any, Any]:
    made = [agents.make("ismcts", game, seed=seed, engine=e, **settings, **options) for e in ("python", "compiled")]
    assert [a.engine_used for a in made] == ["python", "compiled"]  # type: ignore[attr-defined]
    return made[0].search, made[1].search  # type: ignore[attr-defined]


@pytest.mark.parametrize(("game", "options", "settings", "games"), ISMCTS_CASES)
def test_ismcts_engines_choose_alike_move_for_move(
    game: str, options: dict[str, Any], settings: dict[str, Any], games: int
) -> None:
    rules = jericho_env.make_rules(game, **options)
    rng = np.random.default_rng(5)
    compared = 0
    for g in range(games):
        state = rules.initial_state(rng)
        while not rules.is_terminal(state):
            legal = rules.legal_actions(state)
            seat = rules.current_player(state)
            if len(legal) > 1:
                python, compiled = _both(game, options, settings, seed=100 * g + compared)
                move = python.search(state, seat)
                assert compiled.search(state, seat) == move, (game, g, compared)
                assert python.last_visits == compiled.last_visits
                assert python.last_simulations == compiled.last_simulations == settings["simulations"]
                assert python.last_wins == compiled.last_wins  # the same floats: summed in the same order
                compared += 1
            else:
                move = legal[0]
            rules.apply(state, move)
    assert compared >= 10


def _any_evaluator(obs: np.ndarray, masks: np.ndarray, movers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Deterministic for any game: priors from the action numbers, values from a fixed projection of the rows."""
    weights = np.cos(np.arange(obs.shape[1]) * 0.7)
    x = obs.astype(np.float64) @ weights
    priors = (masks * (1.0 + np.arange(masks.shape[1]) % 3)[None, :] * (1.0 + 0.1 * np.tanh(x))[:, None]).astype(
        np.float32
    )
    return priors, np.tanh(x).astype(np.float32)


PUCT_CASES = [  # (game, options, value_rows): "mover" negates the mover's value for the other seat (two players)
    ("toy", {"pile": 20}, "mover"),
    ("castles", {}, "mover"),
    ("castles", {}, "all"),
    ("grid", {"board_size": 9}, "mover"),
    ("walls", {"num_players": 3}, "all"),
]


@pytest.mark.parametrize(("game", "options", "value_rows"), PUCT_CASES)
def test_puct_engines_choose_alike_move_for_move(game: str, options: dict[str, Any], value_rows: str) -> None:
    rules = jericho_env.make_rules(game, **options)
    found = compiled_kernels(rules)
    assert found is not None
    rng = np.random.default_rng(9)
    states = [rules.initial_state(rng) for _ in range(4)]
    compared = 0
    for turn in range(1000):
        live = [s for s in states if not rules.is_terminal(s)]
        if not live:
            break
        seats = [rules.current_player(s) for s in live]
        settings = (_any_evaluator, 12, 1.5, value_rows)
        python = PUCTSearch(rules, *settings, np.random.default_rng(turn), 0.5, 0.25)  # type: ignore[arg-type]
        compiled = CompiledPUCT(rules, *found, *settings, np.random.default_rng(turn), 0.5, 0.25)  # type: ignore[arg-type]
        want, got = python.search(live, seats), compiled.search(live, seats)
        for w, g, s in zip(want, got, live, strict=True):
            assert g.legal == w.legal and g.visits.tolist() == w.visits.tolist()
            assert g.q.tolist() == w.q.tolist() and g.value == w.value and g.prior.tolist() == w.prior.tolist()
            compared += len(w.legal) > 1
            rules.apply(s, w.best())
    assert compared >= 40
