"""Each game's action encoding (``games/<g>/actions.py``) and phases (``state.Phase``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from jericho_env.games.castles.actions import CastlesActions, CastlesMove
from jericho_env.games.castles.state import Phase as CastlesPhase
from jericho_env.games.grid.actions import GridActions, GridMove
from jericho_env.games.walls.actions import NUM_ACTIONS, SUPPLY_BASE, TRUMPET_BASE, WallsActions, WallsMove
from jericho_env.games.walls.cards import TRUMPET, str_to_card
from jericho_env.games.walls.state import Phase as WallsPhase
from jericho_env.registry import make_rules


def re_encode(actions: Any, action: int) -> int:
    """The action that the encode helper of ``decode(action)`` gives back."""
    move = actions.decode(action)
    if isinstance(move, GridMove):
        return actions.pass_action if move.kind == "stop" else actions.place(move.slot, move.cell)
    if isinstance(move, WallsMove):
        return {"build": actions.build, "trumpet": actions.trumpet, "supply": actions.supply}[move.kind](
            move.colour if move.kind == "trumpet" else move.card
        )
    assert isinstance(move, CastlesMove)
    if move.kind == "play":
        return actions.play(move.rank, move.n_cards)
    if move.kind == "joker":
        return actions.joker
    return {"save": actions.save, "play_save": actions.play_save, "discard": actions.discard}[move.kind](move.rank)


@pytest.mark.parametrize(
    ("game", "options"),
    [("grid", {"board_size": 7}), ("walls", {}), ("castles", {}), ("castles", {"ranks": 13, "small_deck": True})],
)
def test_every_action_decodes_and_encodes_back_and_the_rules_use_the_same_encoding(game: str, options: dict) -> None:
    rules: Any = make_rules(game, **options)
    actions = rules.actions
    assert actions.num_actions == rules.info.num_actions
    for a in range(actions.num_actions):
        assert re_encode(actions, a) == a
        assert rules.describe_action(a) == actions.describe(a)
    for bad in (-1, actions.num_actions):
        with pytest.raises(ValueError, match=rf"action {bad} is out of range 0\.\.{actions.num_actions - 1}"):
            actions.decode(bad)


def test_grid_offsets_and_text() -> None:
    acts = GridActions(21)
    assert (acts.cells, acts.pass_action, acts.num_actions) == (441, 2205, 2206)
    assert acts.place(4, 440) == 2204 and acts.place_at(0, 0, 1) == 199  # the golden file's "199=2h@0,1"
    assert acts.decode(1963) == GridMove("place", 4, 199) and acts.decode(2205) == GridMove("stop")
    assert acts.to_str(1963, [27, 34, 41, 45, 48], in_chain=False) == "Ts@0,1"
    assert acts.to_str(2205, [], in_chain=True) == "end" and acts.to_str(2205, [], in_chain=False) == "pass"
    with pytest.raises(ValueError, match=r"hand slot 5 is out of range 0\.\.4"):
        acts.place(5, 0)
    with pytest.raises(ValueError, match=r"cell 441 is out of range 0\.\.440 on a 21x21 table"):
        acts.place(0, 441)


def test_walls_offsets_and_text() -> None:
    acts = WallsActions()
    assert (TRUMPET_BASE, SUPPLY_BASE, NUM_ACTIONS, acts.num_actions) == (25, 30, 56, 56)
    red5 = str_to_card("red-5")
    assert acts.build(red5) == red5 and acts.trumpet(3) == 28 and acts.supply(TRUMPET) == 55
    assert acts.decode(28) == WallsMove("trumpet", TRUMPET, 3) and acts.decode(55) == WallsMove("supply", TRUMPET, -1)
    assert acts.to_str(28) == "T-red" and acts.to_str(25) == "T-brown" and acts.to_str(25, opening=True) == "T"
    assert acts.to_str(acts.supply(red5)) == "supply-red-5" and acts.card_of(acts.supply(red5)) == red5
    with pytest.raises(ValueError, match="only wall cards"):
        acts.build(TRUMPET)
    with pytest.raises(ValueError, match=r"colour 5 is out of range 0\.\.4"):
        acts.trumpet(5)
    with pytest.raises(ValueError, match="cannot go into the supply"):
        acts.supply(26)


def test_castles_offsets_follow_the_deck() -> None:
    default: Any = make_rules("castles").actions
    assert (default.joker, default.save_base, default.play_save_base, default.discard_base) == (40, 41, 52, 63)
    assert default.num_actions == 74 and default.play(6) == 24 and default.play(8, 2) == 33  # "7", "9x2"
    assert default.to_str(33) == "9x2" and default.to_str(40) == "joker" and default.to_str(62) == "play save joker"
    assert default.decode(33) == CastlesMove("play", 8, 2) and default.decode(41) == CastlesMove("save", 0)
    small = CastlesActions(make_rules("castles", ranks=5, small_deck=True).deck)
    assert (small.joker, small.num_actions) == (10, 10 + 1 + 3 * 6)
    with pytest.raises(ValueError, match=r"a play puts down 1\.\.2 cards"):
        small.play(0, 3)
    with pytest.raises(ValueError, match=r"rank code 6 is out of range 0\.\.5"):
        small.save(6)


@pytest.mark.parametrize(("game", "phase"), [("walls", WallsPhase), ("castles", CastlesPhase)])
def test_the_state_holds_phase_members_in_the_observations_order(game: str, phase: Any) -> None:
    rules: Any = make_rules(game)
    rng = np.random.default_rng(3)
    state = rules.initial_state(rng)
    seen = set()
    while True:
        assert type(state.phase) is phase
        seen.add(state.phase)
        if rules.is_terminal(state):
            break
        one_hot = rules.observation_dict(state, rules.current_player(state))["phase"]
        assert one_hot.argmax() == state.phase and one_hot.sum() == 1  # the one-hot is in Phase order
        legal = rules.legal_actions(state)
        rules.apply(state, legal[int(rng.integers(len(legal)))])
    assert phase.OVER in seen and phase.PLAY in seen
    assert rules.from_dict(rules.to_dict(state)).phase is phase.OVER
