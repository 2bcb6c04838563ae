"""Bad input, door 1: state dictionaries. ``from_dict`` takes every state play reaches and refuses the rest.

Two halves: every state reached in seeded random play (several option sets, determinized copies too)
round-trips through JSON; and a list of single mutations per game (at least 20 each), applied to a
reachable state, is refused with a ``StateFormatError`` whose message names the problem.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from jericho_env.core.rules import Rules, StateFormatError
from jericho_env.games.walls.cards import COLOURS
from jericho_env.registry import make_rules

ROUND_TRIP_CASES: list[tuple[str, dict[str, Any]]] = [
    ("grid", {}),
    ("grid", {"board_size": 5}),
    ("walls", {"num_players": 2}),
    ("walls", {"num_players": 3}),
    ("walls", {}),
    ("walls", {"num_players": 5}),
    ("castles", {}),
    ("castles", {"ranks": 5, "small_deck": True, "reversed_order": True}),
    ("castles", {"ranks": 13}),
]


def _states(rules: Rules[Any], games: int, seed: int) -> Iterator[Any]:
    """Every state of ``games`` seeded random games, terminal ones included."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        state = rules.initial_state(rng)
        while True:
            yield state
            if rules.is_terminal(state):
                break
            legal = rules.legal_actions(state)
            state = rules.child(state, legal[int(rng.integers(len(legal)))])


@pytest.mark.parametrize(("game", "options"), ROUND_TRIP_CASES, ids=[f"{g}{o or ''}" for g, o in ROUND_TRIP_CASES])
def test_every_state_reached_in_random_play_round_trips(game: str, options: dict[str, Any]) -> None:
    rules = make_rules(game, **options)
    rng = np.random.default_rng(3)
    checked = 0
    for state in _states(rules, 25, seed=11):
        data = json.loads(json.dumps(rules.to_dict(state)))
        rebuilt = rules.from_dict(data)
        assert rules.to_dict(rebuilt) == data
        if not rules.is_terminal(state):
            assert rules.legal_actions(rebuilt) == rules.legal_actions(state)
            seat = rules.current_player(state)
            assert np.array_equal(rules.observe(rebuilt, seat), rules.observe(state, seat))
            # what a seat imagines (determinize) is a state play could reach too
            guess = rules.determinize(state, seat, rng)
            assert rules.to_dict(rules.from_dict(json.loads(json.dumps(rules.to_dict(guess))))) == rules.to_dict(guess)
        checked += 1
    assert checked > 500


# ------------------------------------------------------------------------------------------------ mutations
Mutation = tuple[str, Callable[[dict[str, Any]], Any], str]


def _find(game: str, want: Callable[[Rules[Any], Any], bool], seed: int = 5, **options: Any) -> dict[str, Any]:
    """The dict of the first state of seeded random play that satisfies ``want``."""
    rules = make_rules(game, **options)
    for state in _states(rules, 200, seed):
        if want(rules, state):
            return json.loads(json.dumps(rules.to_dict(state)))
    raise AssertionError(f"no {game} state found")  # pragma: no cover - seeds are fixed


def _move(d: dict[str, Any], src: list[Any], dst: list[Any], k: int = 1) -> None:
    for _ in range(k):
        dst.append(src.pop())


def _walls_base() -> dict[str, Any]:
    """Round 2, play phase, walls standing, cards in the supply, a trumpet discarded."""

    def want(rules: Rules[Any], s: Any) -> bool:
        return s.scored == 1 and s.phase == 2 and sum(map(sum, s.walls)) > 10 and s.discard > 0 and any(s.supply_public)

    return _find("walls", want)


def _swap_scoring_card(d: dict[str, Any]) -> None:
    deck = d["deck"]
    i = deck.index("S")
    deck[i], deck[-1] = deck[-1], deck[i]


def _empty_own_supply(d: dict[str, Any]) -> None:
    d["deck"].extend(d["supply_hidden"][0])
    d["supply_hidden"][0] = []


def _trumpet_only_wall(d: dict[str, Any]) -> None:
    colour = next(c for c in COLOURS if not any(t.endswith("-" + c) or t.startswith(c) for t in d["walls"][1]))
    d["deck"].remove("T")
    d["walls"][1].append("T-" + colour)


def _lay_opening(d: dict[str, Any]) -> None:
    card = next(c for c in d["deck"] if c not in ("S", "T"))
    d["deck"].remove(card)
    d["opening"][0] = card


WALLS: list[Mutation] = [
    ("unknown key", lambda d: d.update(bonus=1), "unknown key(s) bonus"),
    ("missing key", lambda d: d.pop("discard"), "missing discard"),
    ("other player count", lambda d: d.update(num_players=5), "for 5 players"),
    ("player count as text", lambda d: d.update(num_players="4"), "for '4' players"),
    ("unknown phase", lambda d: d.update(phase="lunch"), "phase must be one of"),
    ("phase rewound to the opening", lambda d: d.update(phase="opening-wall"), "comes before any scoring"),
    ("to_move a float", lambda d: d.update(to_move=float(d["to_move"])), "to_move must be an int"),
    ("to_move a bool", lambda d: d.update(to_move=True), "to_move must be an int"),
    ("hand of 8", lambda d: _move(d, d["deck"], d["hands"][0], 4), "seat 0 holds 8 cards"),
    ("card passed between hands", lambda d: _move(d, d["hands"][0], d["hands"][1]), "seat 0 holds 3 cards"),
    ("card added", lambda d: d["hands"][0].append("red-4"), "do not add up"),
    ("card lost", lambda d: d["deck"].pop(), "do not add up"),
    ("scoring card in a hand", lambda d: d["hands"][0].append("S"), "cannot hold 'S'"),
    ("unknown card", lambda d: d["won"][0].append("pink-9"), "not a walls card"),
    ("card as a number", lambda d: d["hands"][0].append(3), "must hold cards as text"),
    ("trumpet-only wall", lambda d: _trumpet_only_wall(d), "wall of trumpets only"),
    ("bare trumpet in a wall", lambda d: d["walls"][1].append("T"), "T-<colour>"),
    ("negative discard", lambda d: d.update(discard=-1), "discard must be an int in 0..22"),
    ("third scoring but not over", lambda d: d.update(scorings=3), "over exactly when"),
    ("no drawer after a scoring", lambda d: d.update(drawer=-1), "drawer must be -1 before the first scoring"),
    ("phase_left in play", lambda d: d.update(phase_left=2), "needs phase_left 0"),
    ("no face-down supply card", _empty_own_supply, "seat 0 has 0 face-down supply card(s)"),
    ("scoring card outside its pile", _swap_scoring_card, "outside its pile"),
    ("first wall card face down in play", _lay_opening, "seat 0 has no face-down first wall card"),
    ("hands not per seat", lambda d: d.update(hands="red-5"), "one entry per seat"),
]


def _grid_base() -> dict[str, Any]:
    """Not in a chain, draw pile not empty, four cards or more face up, nobody has passed."""

    def want(rules: Rules[Any], s: Any) -> bool:
        return len(s.faceup) >= 4 and s.draw and not s.in_chain and s.passes_in_row == 0 and not any(s.last_pass)

    return _find("grid", want)


def _grid_empty_cell_beside(d: dict[str, Any]) -> tuple[str, str]:
    """A table card and an empty cell beside it (not the base's)."""
    for name, card in d["table"].items():
        x, y = (int(t) for t in name.split(","))
        for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            cell = f"{x + dx},{y + dy}"
            if cell not in d["table"] and cell != "0,0":
                return cell, card
    raise AssertionError("no empty cell")  # pragma: no cover


def _grid_mismatch(d: dict[str, Any]) -> None:
    cell, neighbour = _grid_empty_cell_beside(d)
    card = next(c for c in d["draw_bottom_to_top"] if c[0] != neighbour[0] and c[1] != neighbour[1])
    d["draw_bottom_to_top"].remove(card)
    d["table"][cell] = card


def _grid_lonely(d: dict[str, Any]) -> None:
    d["table"]["9,9"] = d["draw_bottom_to_top"].pop()


def _grid_chain_without_capture(d: dict[str, Any]) -> None:
    p = d["to_move"]
    d["discard"] += d["captured"][p]
    d["captured"][p] = []
    d["in_chain"] = True


GRID: list[Mutation] = [
    ("unknown key", lambda d: d.update(score=3), "unknown key(s) score"),
    ("missing key", lambda d: d.pop("last_pass"), "missing last_pass"),
    ("board_size a float", lambda d: d.update(board_size=21.0), "board_size=21.0"),
    ("other board_size", lambda d: d.update(board_size=9), "board_size=9"),
    ("passes_in_row a bool", lambda d: d.update(passes_in_row=True), "passes_in_row must be an int"),
    ("passes_in_row out of range", lambda d: d.update(passes_in_row=3), "passes_in_row must be an int in 0..2"),
    ("to_move out of range", lambda d: d.update(to_move=2), "to_move must be an int in 0..1"),
    ("in_chain as text", lambda d: d.update(in_chain="yes"), "in_chain must be true or false"),
    ("last_pass as ints", lambda d: d.update(last_pass=[0, 0]), "last_pass must be two booleans"),
    ("card joined to nothing", _grid_lonely, "not joined to the base"),
    ("neighbours that do not match", _grid_mismatch, "matches neither the suit nor the rank"),
    ("hand of 2 with a draw pile", lambda d: _move(d, d["hands"][0], d["draw_bottom_to_top"], 3), "hands[0] holds 2"),
    ("hand of 6", lambda d: _move(d, d["draw_bottom_to_top"], d["hands"][1]), "hands[1] holds 6 cards"),
    ("card twice", lambda d: d["discard"].append(d["hands"][0][0]), "exactly once"),
    ("card lost", lambda d: d["draw_bottom_to_top"].pop(), "exactly once"),
    ("card on the base's cell", lambda d: d["table"].update({"0,0": d["draw_bottom_to_top"].pop()}), "base's cell"),
    ("card outside the table", lambda d: d["table"].update({"20,20": d["draw_bottom_to_top"].pop()}), "outside"),
    ("cell name", lambda d: d["table"].update({"a,b": d["draw_bottom_to_top"].pop()}), "not written x,y"),
    ("chain without a capture", _grid_chain_without_capture, "capture pile is empty"),
    ("a pass not recorded", lambda d: d.update(passes_in_row=1), "must be true"),
    ("game over without two passes", lambda d: d.update(passes_in_row=2), "last_pass must be [true, true]"),
    ("unknown card", lambda d: d.update(base="Zz"), "is not a card"),
    ("table as a list", lambda d: d.update(table=[]), "table must be a dict"),
    ("one hand", lambda d: d.update(hands=[d["hands"][0]]), "hands must be a list of 2 entries"),
    ("draw as text", lambda d: d.update(draw_bottom_to_top="Ah"), "list of cards"),
]


def _castles_base() -> dict[str, Any]:
    """Play phase, both decks not empty, the card(s) to beat not a joker."""

    def want(rules: Rules[Any], s: Any) -> bool:
        return s.phase == 1 and all(len(d) > 5 for d in s.decks) and s.beat != rules.deck.joker and s.beat_n == 1

    return _find("castles", want)


def _castles_stuck_in_play(d: dict[str, Any]) -> None:
    """Replace the state by one whose mover cannot play, marked as the play phase."""

    def want(rules: Rules[Any], s: Any) -> bool:
        return s.phase == 3 and not rules.can_play(s, s.to_move)

    d.clear()
    d.update(_find("castles", want, seed=9))
    d["phase"] = "play"


def _castles_hand_to_pile(d: dict[str, Any], p: int) -> None:
    r = next(r for r, n in enumerate(d["hands"][p]) if n)
    d["hands"][p][r] -= 1
    d["pile"][p][r] += 1


def _castles_deck_to(zone: str, k: int) -> Callable[[dict[str, Any]], None]:
    def change(d: dict[str, Any]) -> None:
        p = 1 - d["to_move"]
        for _ in range(k):
            d[zone][p][d["decks"][p].pop()] += 1

    return change


def _castles_beat_off_pile(d: dict[str, Any]) -> None:
    p, r = d["beat_by"], d["beat"]
    d["discard"][p][r] += d["pile"][p][r]
    d["pile"][p][r] = 0


def _castles_over_emptied(d: dict[str, Any]) -> None:
    d.update(phase="over", winner=0, reason="emptied", to_move=-1)


CASTLES: list[Mutation] = [
    ("unknown key", lambda d: d.update(trick=1), "unknown key(s) trick"),
    ("missing key", lambda d: d.pop("decks"), "missing decks"),
    ("unknown phase", lambda d: d.update(phase="bidding"), "'phase' must be one of"),
    ("to_move a bool", lambda d: d.update(to_move=True), "to_move must be an int"),
    ("beat out of range", lambda d: d.update(beat=99), "beat must be an int in -1..10"),
    ("hand row too short", lambda d: d["hands"][0].pop(), "two lists of 11"),
    ("negative count", lambda d: d["pile"][0].__setitem__(0, -1), "non-negative ints"),
    ("unknown rank code", lambda d: d["decks"][1].append(99), "rank codes 0..10"),
    ("card added", lambda d: d["hands"][0].__setitem__(0, d["hands"][0][0] + 1), "player 0's cards"),
    ("hand of 6 mid-game", _castles_deck_to("hands", 1), "holds 6 cards; after the set-up a hand holds at most 5"),
    ("hand not refilled", lambda d: _castles_hand_to_pile(d, 1 - d["to_move"]), "refilled to 5 while the deck lasts"),
    ("nothing playable in the play phase", _castles_stuck_in_play, "has no legal action"),
    ("winner before the end", lambda d: d.update(winner=1), "phase 'over' goes with a winner"),
    ("pending in play", lambda d: d.update(pending=2), "in phase 'play' it is 0"),
    ("mover out of turn", lambda d: d.update(to_move=d["beat_by"]), "is to move, not"),
    ("two jokers at once", lambda d: d.update(beat=10, beat_n=2), "a joker is played alone"),
    ("four saves", _castles_deck_to("saves", 4), "at most 8 and 3"),
    ("phase rewound to the set-up", lambda d: d.update(phase="choose_saves", pending=1), "nothing is played before"),
    ("emptied but holding cards", _castles_over_emptied, "won by emptying deck and hand"),
    ("first player out of range", lambda d: d.update(first=2), "first must be an int in 0..1"),
    ("discard phase with nothing to discard", lambda d: d.update(phase="discard"), "needs pending >= 1"),
    ("no mover mid-game", lambda d: d.update(to_move=-1), "phase 'over' goes with"),
    ("card(s) to beat not on the pile", _castles_beat_off_pile, "not on player"),
    ("unknown reason", lambda d: d.update(reason="resigned"), "'reason' must be one of"),
    ("pending as text", lambda d: d.update(pending="0"), "pending must be an int"),
]

MUTATIONS: dict[str, tuple[Callable[[], dict[str, Any]], list[Mutation]]] = {
    "walls": (_walls_base, WALLS),
    "grid": (_grid_base, GRID),
    "castles": (_castles_base, CASTLES),
}
CASES = [(game, m) for game, (_, muts) in MUTATIONS.items() for m in muts]


@pytest.mark.parametrize("game", list(MUTATIONS))
def test_at_least_twenty_mutations_per_game_and_the_base_state_is_accepted(game: str) -> None:
    base, mutations = MUTATIONS[game]
    assert len(mutations) >= 20
    data = base()
    rules = make_rules(game)
    assert rules.to_dict(rules.from_dict(data)) == data


@pytest.mark.parametrize(("game", "mutation"), CASES, ids=[f"{g}: {m[0]}" for g, m in CASES])
def test_a_single_mutation_is_refused_naming_the_problem(game: str, mutation: Mutation) -> None:
    base, _ = MUTATIONS[game]
    _, change, message = mutation
    data = copy.deepcopy(base())
    change(data)
    with pytest.raises(StateFormatError) as err:
        make_rules(game).from_dict(json.loads(json.dumps(data)))
    assert message in str(err.value)


@pytest.mark.parametrize("game", list(MUTATIONS))
@pytest.mark.parametrize("data", [None, [1, 2], "state", 3])
def test_a_non_dict_is_refused(game: str, data: Any) -> None:
    with pytest.raises(StateFormatError, match="must be a dict"):
        make_rules(game).from_dict(data)


# ------------------------------------------------------------------------------------------------ missing keys
KEY_CASES: list[tuple[str, dict[str, Any]]] = [
    ("grid", {}),
    ("walls", {"num_players": 3}),
    ("walls", {"num_players": 5}),
    ("castles", {}),
    ("castles", {"ranks": 5, "small_deck": True}),
]


def _mid_game(game: str, options: dict[str, Any]) -> dict[str, Any]:
    """The JSON of a state some way into a seeded random game (histories and logs not empty where play fills them)."""
    rules = make_rules(game, **options)
    states = list(_states(rules, 1, seed=21))
    return json.loads(json.dumps(rules.to_dict(states[len(states) // 3])))


@pytest.mark.parametrize(("game", "options"), KEY_CASES, ids=[f"{g}{o or ''}" for g, o in KEY_CASES])
def test_every_key_of_a_real_payload_is_required_and_named_when_missing(game: str, options: dict[str, Any]) -> None:
    """Each key of ``to_dict``'s output removed in turn: refused, naming the key (no default filled in)."""
    rules = make_rules(game, **options)
    data = _mid_game(game, options)
    rules.from_dict(data)  # the whole payload is accepted
    for key in data:
        broken = {k: v for k, v in data.items() if k != key}
        with pytest.raises(StateFormatError) as err:
            rules.from_dict(broken)
        assert f"missing {key}" in str(err.value), (key, str(err.value))
        with pytest.raises(StateFormatError, match=f"missing {key}"):
            rules.from_dict(broken, strict=False)  # hand-made positions too


@pytest.mark.parametrize(("game", "options"), KEY_CASES, ids=[f"{g}{o or ''}" for g, o in KEY_CASES])
def test_every_per_seat_entry_is_required_and_the_key_named_when_one_is_missing(
    game: str, options: dict[str, Any]
) -> None:
    """The nested level: every key holding one entry per seat, with the last seat's entry removed, is named."""
    rules = make_rules(game, **options)
    data = _mid_game(game, options)
    n = rules.info.num_players
    per_seat = [k for k, v in data.items() if isinstance(v, list) and len(v) == n and k not in ("deck",)]
    assert len(per_seat) >= 4, per_seat
    for key in per_seat:
        broken = copy.deepcopy(data)
        broken[key].pop()
        with pytest.raises(StateFormatError) as err:
            rules.from_dict(broken, strict=False)
        assert key in str(err.value), (key, str(err.value))


def test_load_state_requires_every_key_of_save_state() -> None:
    import jericho_env
    from jericho_env.core.rules import JerichoError

    env = jericho_env.raw_env("castles")
    env.reset(seed=3)
    saved = env.save_state()
    for key in saved:
        broken = {k: v for k, v in saved.items() if k != key}
        with pytest.raises(JerichoError, match=f"missing {key}"):
            env.load_state(broken)
    with pytest.raises(JerichoError, match="must be a dict"):
        env.load_state([1])  # type: ignore[arg-type]


def test_a_refused_saved_state_leaves_the_env_as_it_was() -> None:
    import jericho_env

    env = jericho_env.raw_env("grid")
    env.reset(seed=4)
    before = env.save_state()
    broken = copy.deepcopy(before)
    del broken["state"]["history"]
    with pytest.raises(StateFormatError, match="missing history"):
        env.load_state(broken)
    assert env.save_state() == before
