"""walls (Jericho): invariants over thousands of seeded random games, on the bare rules engine.

The fast tier plays ``GAMES`` games per player count; the slow-marked cases ``MORE_GAMES`` more, on other seeds.
"""

from __future__ import annotations

import numpy as np
import pytest

from jericho_env.games.walls.cards import COPIES, SCORING, TRUMPET, TYPE_VALUE, all_cards
from jericho_env.games.walls.rules import WallsRules
from jericho_env.games.walls.state import Phase, WallsState

GAMES = 500
MORE_GAMES = 1500


def type_totals(s: WallsState) -> list[int]:
    """How many cards of each type the state holds, over every zone."""
    tot = [sum(col) for col in zip(*s.hands, *s.supply_hidden, strict=True)] + [0]
    won = [sum(col) for col in zip(*s.won, s.supply_public, strict=True)]
    for c in range(25):
        tot[c] += won[c]
    for wall in s.walls:
        for colour in range(5):
            base = colour * 7
            for vi in range(5):
                tot[colour * 5 + vi] += wall[base + vi]
            tot[TRUMPET] += wall[base + 5]
    for c in s.opening:
        if c >= 0:
            tot[c] += 1
    for c in s.deck:
        tot[c] += 1
    tot[TRUMPET] += s.discard + s.supply_trumpets  # trumpets of collapsed walls wait in the supply (walls v1)
    tot[SCORING] += s.scored
    return tot


def check_walls(s: WallsState) -> None:
    """Each wall's stored length is its sum, and no wall holds trumpets only."""
    for wall in s.walls:
        for colour in range(5):
            base = colour * 7
            cards = sum(wall[base : base + 5])
            assert wall[base + 6] == sum(wall[base + vi] * TYPE_VALUE[vi] for vi in range(5)) + 2 * wall[base + 5]
            assert cards or not wall[base + 5], "a trumpet-only wall stands"


@pytest.mark.parametrize(
    ("n", "games", "seed"),
    [
        *[(n, GAMES, 1000 + n) for n in (3, 4, 5)],
        *[pytest.param(n, MORE_GAMES, 2000 + n, marks=pytest.mark.slow) for n in (3, 4, 5)],
    ],
)
def test_random_games_keep_every_invariant(n: int, games: int, seed: int) -> None:
    rules = WallsRules(num_players=n)
    rng = np.random.default_rng(seed)
    copies = list(COPIES)
    lengths = []
    wins = [0.0] * n
    for game in range(games):
        s = rules.initial_state(rng)
        full_zones = game % 25 == 0  # the official card_zones on every step of some games (slower)
        steps = 0
        while True:
            assert type_totals(s) == copies, f"cards not conserved, game {game} step {steps}"
            if full_zones:
                assert sorted(c for z in rules.card_zones(s).values() for c in z) == all_cards()
                check_walls(s)
            if rules.is_terminal(s):
                break
            seat = rules.current_player(s)
            assert 0 <= seat < n
            legal = rules.legal_actions(s)
            assert legal and legal == sorted(set(legal))
            if s.phase == Phase.PLAY:
                assert s.hand_size == [5 - s.scored] * n, "hands are 5 / 4 / 3 in rounds 1 / 2 / 3"
            assert rules.returns(s) == [0.0] * n
            last_round_top = s.scored == 2 and s.phase == Phase.PLAY and s.deck[-1] == SCORING
            rules.apply(s, legal[int(rng.integers(len(legal)))])
            steps += 1
            assert steps <= rules.info.max_game_length
            assert (s.phase == Phase.OVER) == last_round_top, "the game ends exactly at the third scoring"
        assert s.scored == 3 and rules.current_player(s) == -1 and rules.legal_actions(s) == []
        ret = rules.returns(s)
        assert abs(sum(ret)) < 1e-9 and all(-1.0 <= r <= 1.0 for r in ret)
        assert max(ret) > 0 or ret == [0.0] * n
        assert all(wall[c * 7] == 0 for wall in s.walls for c in range(5)), "value-1 cards left the walls"
        check_walls(s)
        lengths.append(steps)
        wins = [w + r for w, r in zip(wins, ret, strict=True)]
    assert max(lengths) <= rules.info.max_game_length
    assert 80 < float(np.mean(lengths)) < 100
    assert all(abs(w) / games < 0.2 for w in wins), "no seat should dominate random play"
