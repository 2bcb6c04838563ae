"""The page's boards, drawn for many positions and boxes: text and targets large enough, inside the drawing.

Over seeded random games of each game (walls for 3, 4 and 5 players), from each seat and the full
view, for boxes from a small phone's to a large screen's: every text of the SVG is at least
``MIN_TEXT`` px (``Pen.text`` refuses smaller, so a board that tried fails here), every target at
least ``MIN_TARGET`` px a side and inside the drawing, every legal move's path made of targets
drawn, and a board no wider than its box unless it is grid's table grown past it (which the page
pans). The view's ``labels`` name every box, and the reasons for refused choices come in words.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from jericho_env.registry import make_rules
from jericho_env.web.boards import MIN_TARGET
from jericho_env.web.boards.pen import MIN_TEXT
from jericho_env.web.tables import CHOOSE_FIRST, table_for

CASES = [("grid", {}), ("castles", {}), ("walls", {"num_players": 3}), ("walls", {"num_players": 4}),
         ("walls", {"num_players": 5})]  # fmt: skip
BOXES = [(320, 560), (374, 700), (690, 505), (1200, 800)]


def positions(game: str, options: dict[str, Any], seed: int, every: int) -> list[Any]:
    """Every ``every``-th position of a seeded random game, and its last."""
    rules = make_rules(game, **options)
    rng = np.random.default_rng(seed)
    state = rules.initial_state(rng)
    out = [rules.clone(state)]
    while not rules.is_terminal(state):
        rules.apply(state, int(rng.choice(rules.legal_actions(state))))
        if len(out) % every == 0 or rules.is_terminal(state):
            out.append(rules.clone(state))
        else:
            out.append(None)
    return [s for s in out if s is not None]


@pytest.mark.parametrize(("game", "options"), CASES, ids=["grid", "castles", "walls3", "walls4", "walls5"])
def test_boards_keep_text_and_targets_large_enough_on_every_box(game: str, options: dict[str, Any]) -> None:
    rules = make_rules(game, **options)
    table = table_for(game)
    drawn = 0
    for state in positions(game, options, seed=3, every=3):
        over = rules.is_terminal(state)
        mover = -1 if over else rules.current_player(state)
        for seat in [None, *range(rules.info.num_players)]:
            for w, h in BOXES:
                d = table.draw(rules, state, seat, clickable=seat == mover, width=w, height=h)
                sizes = [int(s) for s in re.findall(r'font-size="(\d+)"', d.svg)]
                assert sizes and min(sizes) >= MIN_TEXT
                if game != "grid":
                    assert d.width <= w, f"{game} drawn {d.width} px wide for a box of {w}"
                for key, boxes in d.targets.items():
                    assert len(d.labels[key]) == len(boxes) and all(d.labels[key]), key
                    for x, y, bw, bh in boxes:
                        assert min(bw, bh) >= MIN_TARGET, f"{key} is {bw}x{bh} in a box of {w}"
                        assert x >= 0 and y >= 0 and x + bw <= d.width + 0.5 and y + bh <= d.height + 0.5, key
                if seat == mover and seat is not None:
                    for a in rules.legal_actions(state):
                        assert all(k in d.targets for k in table.keys(rules, state, a)), (game, a)
                drawn += 1
    assert drawn > 80


def test_grid_table_keeps_its_cells_large_and_pans_when_it_outgrows_a_phone() -> None:
    rules = make_rules("grid")
    table = table_for("grid")
    state = positions("grid", {}, seed=1, every=1000)[-1]  # a finished game: the table at its widest
    narrow = table.draw(rules, state, 0, clickable=False, width=374, height=700)
    wide = table.draw(rules, state, 0, clickable=False, width=690, height=505)
    assert narrow.width >= 374 and wide.width <= 690 + 2 * 52  # at most a few cells past a laptop's box
    small = positions("grid", {}, seed=1, every=1)[2]  # a few cards in: the table fits a phone
    assert table.draw(rules, small, 0, clickable=False, width=374, height=700).width == 374


def test_refused_choices_say_why_in_the_games_words() -> None:
    rules = make_rules("castles")
    table = table_for("castles")
    found = 0
    for state in positions("castles", {}, seed=5, every=1):
        if rules.is_terminal(state):
            continue
        seat = rules.current_player(state)
        d = table.draw(rules, state, seat, clickable=True)
        paths = [table.keys(rules, state, a) for a in rules.legal_actions(state)]
        refusals, hints = table.explain(rules, state, seat, d.targets, paths)
        assert not hints  # one choice makes a castles move
        for key, why in refusals.items():
            assert why and "\n" not in why and not re.search(r"\bT\b", why), why  # a ten is 10, as on the cards
            if key.startswith("hand:") and state.phase == 1:
                assert "does not beat" in why or "you must" in why, why
                found += 1
    assert found > 3
    grid = make_rules("grid")
    state = positions("grid", {}, seed=2, every=1)[0]
    seat = grid.current_player(state)
    gt = table_for("grid")
    d = gt.draw(grid, state, seat, clickable=True)
    refusals, hints = gt.explain(
        grid, state, seat, d.targets, [gt.keys(grid, state, a) for a in grid.legal_actions(state)]
    )
    assert refusals and all(why == CHOOSE_FIRST for key, why in refusals.items() if key.startswith("cell:"))
    assert set(hints) == {f"hand:{i}" for i in range(5)} and "cannot go there" in hints["hand:0"]
