"""The walls image's game-over line names the winner and the tie-break that decided, as the rules rank seats."""

from __future__ import annotations

import numpy as np

import jericho_env
from jericho_env.games.walls import render


def finished_games(count: int):  # type: ignore[no-untyped-def]
    rules = jericho_env.make_rules("walls")
    for seed in range(count):
        rng = np.random.default_rng(seed)
        state = rules.initial_state(rng)
        while not rules.is_terminal(state):
            rules.apply(state, int(rng.choice(rules.legal_actions(state))))
        yield rules, state


def test_the_result_line_gives_the_winner_and_the_tie_break_when_it_decided() -> None:
    tie_breaks = 0
    for rules, state in finished_games(60):
        winners = rules.winners(state)
        keys = rules.ranking_keys(state)
        line = render.result_line(state, winners)
        best = keys[winners[0]][0]
        assert line.startswith(" and ".join(f"player_{w}" for w in winners)), line
        tied = [p for p in range(state.n) if keys[p][0] == best]
        if len(tied) == 1:
            assert line.endswith(f"most cards won ({best})"), line
        else:
            tie_breaks += 1
            assert "tie-break by cards in walls" in line, line
            for p in tied:
                assert f"player_{p} {rules.wall_card_count(state, p)}" in line, line
    assert tie_breaks > 0, "60 random games hold at least one tie on cards won"
