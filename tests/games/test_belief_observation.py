"""Observation version 1 (``obs_version=1``): what a seat can infer, in every game, Python and compiled.

Version 0 stays the default and its observation is version 1's first fields, bit for bit. Each new field
is checked against the true state (unseen cards are exactly the cards in the zones the seat cannot see;
what forced moves revealed holds of the real hand), the compiled kernels write every seat's version 1
observation as the rules do (whole rows, the env's incremental rows, the search row functions), and the
information tests (``tests/test_conformance.py``, ``tests/test_determinize.py``) run on version 1 too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import jericho_env
from jericho_env.core.kernels import row_seeds
from jericho_env.core.rules import OptionError, Rules
from jericho_env.envs.batched import random_actions
from jericho_env.games.castles.observation import BELIEF_FIELDS as CASTLES_BELIEF
from jericho_env.games.grid.observation import BELIEF_FIELDS as GRID_BELIEF
from jericho_env.games.walls.cards import COPIES, SCORING, TRUMPET
from jericho_env.games.walls.observation import BELIEF_FIELDS as WALLS_BELIEF
from tests.batched_harness import play_both

BELIEF = {"grid": GRID_BELIEF, "walls": WALLS_BELIEF, "castles": CASTLES_BELIEF}
OPTION_SETS: list[tuple[str, dict[str, Any]]] = [
    ("grid", {}),
    ("grid", {"board_size": 5}),
    ("walls", {}),
    ("walls", {"num_players": 2}),
    ("walls", {"num_players": 5}),
    ("castles", {}),
    ("castles", {"ranks": 5, "small_deck": True}),
    ("castles", {"ranks": 13, "reversed_order": True}),
]
IDS = [g + "".join(f"-{k}={v}" for k, v in o.items()) for g, o in OPTION_SETS]


def _states(rules: Rules[Any], games: int, seed: int) -> Iterator[Any]:
    """Every state of ``games`` games of uniformly random legal moves (grid: placing 9 times in 10)."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        state = rules.initial_state(rng)
        yield state
        while not rules.is_terminal(state):
            legal = rules.legal_actions(state)
            if rules.game_id == "grid" and len(legal) > 1 and rng.random() < 0.9:
                legal = legal[:-1]  # random grid play passes too often to reach late positions
            rules.apply(state, legal[int(rng.integers(len(legal)))])
            yield state


# ---------------------------------------------------------------------------------------------- the option
@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_version_0_is_the_default_and_version_1_appends_the_belief_fields(game: str) -> None:
    old, new = jericho_env.make_rules(game), jericho_env.make_rules(game, obs_version=1)
    assert old.options["obs_version"] == 0 and old.observation_version == 0 and new.observation_version == 1
    names = [f.name for f in new.layout.fields]
    assert names == [f.name for f in old.layout.fields] + list(BELIEF[game])
    assert new.info.observation_size == new.layout.size > old.layout.size == old.info.observation_size
    assert new.layout.markdown_table() != old.layout.markdown_table()
    env = jericho_env.make(game, obs_version=1)
    assert env.observation_space(env.possible_agents[0])["observation"].shape == (new.layout.size,)


@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_the_game_page_holds_the_generated_table_of_version_1s_fields(game: str) -> None:
    import importlib

    page = importlib.import_module(f"jericho_env.games.{game}").__doc__ or ""
    table = jericho_env.make_rules(game, obs_version=1).layout.markdown_table(BELIEF[game])
    assert table in page, "regenerate: make_rules(game, obs_version=1).layout.markdown_table(BELIEF_FIELDS)"
    assert "obs_version" in page.split("Version History")[1], "the version history names observation version 1"


@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
@pytest.mark.parametrize("bad", [2, -1, "1", True, 1.0])
def test_other_versions_are_refused_naming_the_allowed_ones(game: str, bad: Any) -> None:
    with pytest.raises(OptionError, match=r"obs_version=.* must be one of 0, 1 \(default 0\)"):
        jericho_env.make_rules(game, obs_version=bad)


@pytest.mark.parametrize(("game", "options"), OPTION_SETS, ids=IDS)
def test_version_0_is_the_prefix_of_version_1_bit_for_bit(game: str, options: dict[str, Any]) -> None:
    old = jericho_env.make_rules(game, **options)
    new = jericho_env.make_rules(game, obs_version=1, **options)
    size = old.layout.size
    for k, state in enumerate(_states(new, 8, seed=5)):
        seat = k % new.info.num_players
        a, b = old.observe(state, seat), new.observe(state, seat)
        assert np.array_equal(a.view(np.uint32), b[:size].view(np.uint32))
        assert b.dtype == np.float32 and b.min() >= 0.0 and b.max() <= 1.0


# ---------------------------------------------------------------------------------------------- each field
@pytest.mark.parametrize("size", [5, 21])
def test_grid_unseen_cards_are_the_opponents_hand_the_pile_and_the_base(size: int) -> None:
    rules = jericho_env.make_rules("grid", board_size=size, obs_version=1)
    lacked = 0
    for state in _states(rules, 60, seed=size):
        for seat in (0, 1):
            view = rules.observation_dict(state, seat)
            opp = state.hands[1 - seat]
            truth = sorted({*opp, *state.draw, state.base_card})
            assert np.flatnonzero(view["unseen"]).tolist() == truth
            suits = [sum(c // 13 == s for c in truth) / 13 for s in range(4)]
            ranks = [sum(c % 13 == r for c in truth) / 4 for r in range(13)]
            assert view["unseen_suit"].tolist() == pytest.approx(suits)
            assert view["unseen_rank"].tolist() == pytest.approx(ranks)
            assert view["unseen_count"][0] == pytest.approx(len(truth) / 47)
            gone = set(np.flatnonzero(view["opp_lacked"]).tolist())
            assert gone <= set(truth)
            assert len(gone & set(opp)) <= round(float(view["opp_lacked_room"][0]) * 5), "more lacked cards held"
            lacked += bool(gone)
            fits = {c for cell in state.frontier for c in range(52) if state.allowed[cell] >> c & 1}
            assert set(np.flatnonzero(view["fits"]).tolist()) == fits
            captures = set(np.flatnonzero(view["fits_capture"]).tolist())
            assert captures <= fits
        if not rules.is_terminal(state):
            hand = state.hands[state.to_move]
            placements = {hand[a // rules.cells] for a in rules.legal_actions(state) if a != rules.pass_action}
            mover = rules.observation_dict(state, state.to_move)
            field = "fits_capture" if state.in_chain else "fits"  # in a chain only capturing placements are legal
            assert placements == set(np.flatnonzero(mover[field]).tolist()) & set(hand)
    assert lacked > 20, "no chain ended by itself: opp_lacked was never tested"


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_walls_unseen_cards_are_the_others_hidden_cards_and_the_pile(players: int) -> None:
    rules = jericho_env.make_rules("walls", num_players=players, obs_version=1)
    copies = np.array(COPIES[:26], dtype=np.float64)
    for state in _states(rules, 12, seed=players):
        for seat in range(players):
            view = rules.observation_dict(state, seat)
            hidden: Counter[int] = Counter(c for c in state.deck if c != SCORING)
            for o in range(players):
                if o != seat:
                    hidden.update({t: state.hands[o][t] + state.supply_hidden[o][t] for t in range(26)})
                    if state.opening[o] >= 0:
                        hidden[state.opening[o]] += 1
            want = [hidden[t] for t in range(26)]
            assert np.rint(view["unseen"] * copies).astype(int).tolist() == want
            assert round(float(view["unseen_count"][0]) * 110) == sum(want)
            assert not view["known_trumpets"].any()  # nobody was dealt seven trumpets


def test_walls_known_trumpets_are_the_determinize_floor_and_hold_in_the_real_hands() -> None:
    from tests.games.test_walls_batched import rig_seven_trumpets

    rules = jericho_env.make_rules("walls", num_players=4, obs_version=1)
    rng = np.random.default_rng(3)
    known = 0
    for _ in range(30):
        state = rules.initial_state(rng)
        rig_seven_trumpets(state, [1], rng)
        while not rules.is_terminal(state):
            for seat in (0, 2, 3):
                trumpets = rules.observation_dict(state, seat)["known_trumpets"][(1 - seat) % 4 - 1]
                floor = rules._trumpet_floor(state, 1, seat) if state.trumpet_log[1] is not None else (0, 0)
                assert trumpets.tolist() == pytest.approx([floor[0] / 7, floor[1]])
                held = state.hands[1][TRUMPET] + state.supply_hidden[1][TRUMPET]
                assert held >= round(trumpets[0] * 7) and state.supply_hidden[1][TRUMPET] >= trumpets[1]
                known += trumpets[0] > 0
            legal = rules.legal_actions(state)
            rules.apply(state, legal[int(rng.integers(len(legal)))])
    assert known > 100


CASTLES_REVEALING = [{}, {"ranks": 5, "small_deck": True}, {"small_deck": True, "reversed_order": True}]


@pytest.mark.parametrize("options", CASTLES_REVEALING, ids=str)
def test_castles_own_deck_and_what_the_opponents_forced_moves_revealed(options: dict[str, Any]) -> None:
    rules = jericho_env.make_rules("castles", obs_version=1, **options)
    per_copy = np.array([1 / n for n in rules.deck.composition()])
    barred = need = 0
    for state in _states(rules, 200, seed=7):
        for seat in (0, 1):
            view = rules.observation_dict(state, seat)
            deck = Counter(state.decks[seat])
            assert view["own_deck"].tolist() == pytest.approx([deck[r] * per_copy[r] for r in range(len(per_copy))])
            opp = state.hands[1 - seat]
            for r in np.flatnonzero(view["opp_barred"]):
                assert opp[r] == 0, "a barred rank is in the real hand"
            if view["opp_need"][0]:
                beat = int(np.flatnonzero(view["opp_need_rank"])[0])
                cannot = sum(n for r, n in enumerate(opp) if not rules._answers[beat] >> r & 1)
                assert cannot >= round(float(view["opp_need"][0]) * 5)
            else:
                assert not view["opp_need_rank"].any()
            expected = view["opp_hand_expected"] / per_copy
            assert expected.sum() == pytest.approx(sum(opp) if expected.any() else 0, abs=1e-4)
            assert not (expected * view["opp_barred"]).any()
            barred += bool(view["opp_barred"].any())
            need += bool(view["opp_need"][0])
    assert barred > 0 and need > 0, "no forced move revealed anything: the fields were never tested"


# ---------------------------------------------------------------------------------------------- compiled
@pytest.mark.parametrize(("game", "options"), OPTION_SETS, ids=IDS)
def test_kernels_write_every_seats_version_1_observation_as_the_rules(game: str, options: dict[str, Any]) -> None:
    """States, masks, returns and every seat's observation bits at every step of seeded games (batched harness)."""
    games = 60 if game == "walls" else 150
    counts = play_both(game, {**options, "obs_version": 1}, games, seed=44, batch=games, all_seats=True)
    assert counts["games"] == games


@pytest.mark.parametrize("size", [5, 21])
def test_the_envs_incremental_grid_rows_write_version_1_exactly(size: int) -> None:
    env = jericho_env.make_batched("grid", 10, compiled=True, copy=False, board_size=size, obs_version=1)
    rules = env.rules
    rng = np.random.default_rng(size)
    obs, mask, player = env.reset(seed=size)
    for _ in range(200):
        for i in range(env.num_envs):
            want = rules.observe(env.get_state(i), int(player[i]))
            assert np.array_equal(obs[i].view(np.uint32), want.view(np.uint32))
        obs, mask, player, _, _ = env.step(random_actions(mask, rng))


@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_search_row_functions_observe_version_1_as_the_rules(game: str) -> None:
    rules = jericho_env.make_rules(game, obs_version=1)
    game_rows = jericho_env.make_batched(game, 1, compiled=True, obs_version=1).game
    k = game_rows.row_kernels()
    assert k is not None
    rows = game_rows.new_states(1)
    obs = np.zeros(rules.info.observation_size, dtype=np.float32)
    det = game_rows.new_states(1)
    rng = np.random.default_rng(1)
    for i, state in enumerate(_states(rules, 4, seed=2)):
        game_rows.to_batched(state, rows, 0)
        for seat in range(rules.info.num_players):
            k.observe(rows, 0, k.params, seat, obs)
            assert np.array_equal(obs.view(np.uint32), rules.observe(state, seat).view(np.uint32))
        if i % 5 == 0 and not rules.is_terminal(state):
            seat = i % rules.info.num_players
            assert k.determinize(rows, 0, k.params, seat, det, 0, row_seeds(rng, 1), 0)
            copy = game_rows.from_batched(det, 0)
            assert np.array_equal(rules.observe(copy, seat), rules.observe(state, seat))


# ---------------------------------------------------------------------------------------------- checkpoints
@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_a_checkpoint_records_the_version_it_reads_and_refuses_the_other(game: str) -> None:
    from agents.checkpoint import CheckpointError, check_game

    for version in (0, 1):
        rules = jericho_env.make_rules(game, obs_version=version)
        meta = {
            "game_id": game,
            "game_version": rules.version,
            "observation_version": rules.observation_version,
            "options": dict(rules.options),
        }
        check_game(meta, game, {"obs_version": version}, "the checkpoint")
        with pytest.raises(CheckpointError, match=f"obs_version={1 - version}"):
            check_game(meta, game, {"obs_version": 1 - version}, "the checkpoint")
    old = {"game_id": game, "game_version": rules.version, "observation_version": 0, "options": {}}
    check_game(old, game, {}, "a checkpoint from before the option")  # its options lack obs_version: version 0
    with pytest.raises(CheckpointError):
        check_game(old, game, {"obs_version": 1}, "a checkpoint from before the option")
