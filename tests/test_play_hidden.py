"""Terminal play shows a seat only what that seat may know.

Each test plays a seeded game, then builds a second game that differs only in cards the human seat
never sees (same public history: the same moves as that seat sees them) and drives
``jericho_env.play.TerminalGame`` through both, the human seat typing its moves. The two full
transcripts (boards, narration of the other seats' moves, final table, result) must be identical.
The swap is validated by replaying the second game through the rules before any transcript is made.
"""

from __future__ import annotations

import io
from bisect import insort
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from jericho_env.envs.aec import JerichoEnv
from jericho_env.games.walls.actions import SUPPLY_BASE
from jericho_env.games.walls.cards import SCORING
from jericho_env.games.walls.state import Phase as WallsPhase
from jericho_env.play import TerminalGame


class _Recorder(TerminalGame):
    """A terminal game whose moves come from a script; it notes where each move's output begins."""

    def __init__(self, env: JerichoEnv, seat: int, moves: list[int], out: io.StringIO) -> None:
        self._moves: Iterator[int] = iter(moves)
        self.marks: list[tuple[Any, int]] = []  # (state before the move, output offset)
        opponents = {s: self for s in range(env.rules.info.num_players) if s != seat}
        super().__init__(env, seat, opponents, out, self._read)
        self._out = out

    def _mark(self) -> None:
        self.marks.append((self.rules.clone(self.env.state), len(self._out.getvalue())))

    def human_turn(self) -> bool:
        self._mark()
        return super().human_turn()

    def act(self, obs: dict[str, np.ndarray]) -> int:
        self._mark()
        return next(self._moves)

    def _read(self, prompt: str) -> str:
        # the move's number in the listed moves (a code such as castles' "7" would read as a number too)
        line = str(self.rules.legal_actions(self.env.state).index(next(self._moves)) + 1)
        self._out.write(prompt + line + "\n")  # as a piped session echoes its input
        return line


def transcript(game: str, options: dict[str, Any], state: Any, moves: list[int], seat: int) -> tuple[str, _Recorder]:
    """The full terminal transcript of ``seat`` playing ``moves`` (every seat's, in order) from ``state``."""
    env = JerichoEnv(game, **options)
    env.reset(seed=0)
    env.load_state({"game_id": game, "options": dict(env.rules.options), "state": env.rules.to_dict(state)})
    out = io.StringIO()
    rec = _Recorder(env, seat, moves, out)
    assert rec.play() == 0
    assert env.rules.is_terminal(env.state)
    return out.getvalue(), rec


def random_game(rules: Any, seed: int) -> tuple[Any, list[int], list[Any]]:
    """A seeded game with random legal moves: initial state, moves, and the state before each move."""
    rng = np.random.default_rng(seed)
    state = rules.initial_state(rng)
    start, before, moves = rules.clone(state), [], []
    while not rules.is_terminal(state):
        before.append(rules.clone(state))
        action = int(rng.choice(rules.legal_actions(state)))
        moves.append(action)
        rules.apply(state, action)
    before.append(state)
    return start, moves, before


def replay(rules: Any, state: Any, moves: list[int]) -> list[int]:
    """Play ``moves`` from a copy of ``state``, checking each is legal; return the seat of each mover."""
    s = rules.clone(state)
    movers = []
    for a in moves:
        assert a in rules.legal_actions(s), "the swapped game must accept the same moves"
        movers.append(rules.current_player(s))
        rules.apply(s, a)
    assert rules.is_terminal(s)
    return movers


def assert_same_transcript(game: str, options: dict[str, Any], seat: int, one: Any, two: Any) -> str:
    """Both (state, moves) games give ``seat`` the identical transcript; the games do differ in hidden cards."""
    (s1, m1), (s2, m2) = one, two
    t1, _ = transcript(game, options, s1, m1, seat)
    t2, _ = transcript(game, options, s2, m2, seat)
    rules = JerichoEnv(game, **options).rules
    assert rules.to_dict(s1) != rules.to_dict(s2) or m1 != m2
    assert t1 == t2
    return t1


# ----------------------------------------------------------------------------------------- castles
def _castles_swap(rules: Any, seed: int, human: int) -> tuple[Any, list[int], Any, list[int]] | None:
    """The opponent saves a card it never turns over; in the second game it saved an undrawn deck card instead."""
    start, moves, before = random_game(rules, seed)
    end = before[-1]
    opp = 1 - human
    kept = [r for r, n in enumerate(end.saves[opp]) if n]
    undrawn = end.decks[opp]  # the bottom of the deck, never drawn: start.decks[opp][: len(undrawn)]
    for a in kept:
        for pos, b in enumerate(undrawn):
            if b == a:
                continue
            save_a = rules.actions.save(a)
            idx = max(i for i, m in enumerate(moves) if m == save_a and before[i].to_move == opp)
            s2 = rules.clone(start)
            s2.hands[opp][a] -= 1
            s2.hands[opp][b] += 1
            s2.decks[opp][pos] = a
            m2 = [*moves[:idx], rules.actions.save(b), *moves[idx + 1 :]]
            replay(rules, s2, m2)
            return start, moves, s2, m2
    return None


@pytest.mark.parametrize("human", [0, 1])
def test_castles_transcript_hides_the_opponents_saves(human: int) -> None:
    rules = JerichoEnv("castles").rules
    found = next((r for seed in range(200) if (r := _castles_swap(rules, seed, human)) is not None), None)
    assert found is not None, "no seed gave a save that stays face down to the end"
    s1, m1, s2, m2 = found
    text = assert_same_transcript("castles", {}, human, (s1, m1), (s2, m2))
    assert f"player_{1 - human} plays a save face down" in text
    assert "plays save " not in text


# ------------------------------------------------------------------------------------------- walls
def _walls_supply_events(rules: Any, moves: list[int], before: list[Any]) -> list[tuple[int, int, int, int, Any]]:
    """Every card an opponent put into the supply: (move index, seat, card type, round, where it came from).

    Where it came from is the last time that seat took a card of that type before the move: a deck
    position (the draw pile is a list, top last) or ``"hand"`` for the deal.
    """
    taken: dict[tuple[int, int], Any] = {}  # (seat, type) -> last source
    events = []
    for i, a in enumerate(moves):
        s, nxt = before[i], before[i + 1]
        seat = s.to_move
        if a >= SUPPLY_BASE:
            card = a - SUPPLY_BASE
            events.append((i, seat, card, s.scored, taken.get((seat, card), "hand")))
        for pos in range(len(nxt.deck), len(s.deck)):  # the cards drawn by this move, bottom to top
            if s.deck[pos] != SCORING:
                taken[(seat, s.deck[pos])] = pos
    return events


def _move_card(state: Any, seat: int, source: Any, old: int, new: int) -> None:
    if source == "hand":
        state.hands[seat][old] -= 1
        state.hands[seat][new] += 1
    else:
        assert state.deck[source] == old
        state.deck[source] = new


def _walls_swap(rules: Any, seed: int, human: int, opening_only: bool) -> tuple[Any, list[int], Any, list[int]] | None:
    """Two opponents' face-down supply cards of one round trade places (hand or pile) between the games."""
    start, moves, before = random_game(rules, seed)
    events = [e for e in _walls_supply_events(rules, moves, before) if e[1] != human]
    # the opening's supply cards, or those of later turns and donations (drawn cards included)
    events = [e for e in events if (before[e[0]].phase == WallsPhase.OPEN_SUPPLY) == opening_only]
    for k, (i1, o1, c1, r1, src1) in enumerate(events):
        for i2, o2, c2, r2, src2 in events[k + 1 :]:
            if o1 == o2 or c1 == c2 or r1 != r2:
                continue
            s2 = rules.clone(start)
            _move_card(s2, o1, src1, c1, c2)
            _move_card(s2, o2, src2, c2, c1)
            m2 = list(moves)
            m2[i1], m2[i2] = SUPPLY_BASE + c2, SUPPLY_BASE + c1
            try:
                replay(rules, s2, m2)
            except AssertionError:
                continue  # that pair changed what a seat could play: try another
            return start, moves, s2, m2
    return None


@pytest.mark.parametrize("players", [3, 4, 5])
def test_walls_transcript_hides_face_down_supply_cards(players: int) -> None:
    rules = JerichoEnv("walls", num_players=players).rules
    for opening_only in (True, False):
        found = next((r for seed in range(50) if (r := _walls_swap(rules, seed, 0, opening_only)) is not None), None)
        assert found is not None
        s1, m1, s2, m2 = found
        text = assert_same_transcript("walls", {"num_players": players}, 0, (s1, m1), (s2, m2))
        assert "plays a card face down into the supply" in text
        assert "plays supply-" not in text


def _opening_transcript(options: dict[str, Any], state: Any, moves: list[int]) -> str:
    """The transcript of seat 0 up to the reveal: the output of every move made in the opening phases."""
    text, rec = transcript("walls", options, state, moves, 0)
    offsets = [off for _, off in rec.marks] + [len(text)]
    opening = [
        text[offsets[k] : offsets[k + 1]]
        for k, (s, _) in enumerate(rec.marks)
        if s.phase in (WallsPhase.OPEN_WALL, WallsPhase.OPEN_SUPPLY)
    ]
    return text[: offsets[0]] + "".join(opening)


@pytest.mark.parametrize("players", [3, 5])
def test_walls_opening_hides_the_first_wall_cards_until_the_reveal(players: int) -> None:
    options = {"num_players": players}
    rules = JerichoEnv("walls", **options).rules
    for seed in range(50):
        start, moves, before = random_game(rules, seed)
        laid = {
            b.to_move: (i, a)
            for i, (a, b) in enumerate(zip(moves, before[:-1], strict=True))
            if b.phase == WallsPhase.OPEN_WALL
        }
        pairs = [(o1, o2) for o1 in laid for o2 in laid if 0 < o1 < o2 and laid[o1][1] != laid[o2][1]]
        if not pairs:
            continue
        o1, o2 = pairs[0]
        (i1, c1), (i2, c2) = laid[o1], laid[o2]
        s2 = rules.clone(start)
        _move_card(s2, o1, "hand", c1, c2)
        _move_card(s2, o2, "hand", c2, c1)
        m2 = list(moves)
        m2[i1], m2[i2] = c2, c1
        # the openings differ, so the games part at the reveal: play the swapped one up to there only
        reveal = next(i for i, b in enumerate(before) if b.phase == WallsPhase.PLAY)
        one = _opening_transcript(options, start, moves)
        two = _opening_transcript(options, s2, m2[:reveal] + _random_tail(rules, s2, m2[:reveal]))
        assert one == two
        assert one.count("plays a first wall card face down") == players - 1
        return
    pytest.fail("no seed gave two opponents different first wall cards")


def _random_tail(rules: Any, state: Any, head: list[int]) -> list[int]:
    """Legal moves that finish the game after ``head`` (the transcript needs a game that ends)."""
    s = rules.clone(state)
    for a in head:
        rules.apply(s, a)
    rng = np.random.default_rng(0)
    tail = []
    while not rules.is_terminal(s):
        a = int(rng.choice(rules.legal_actions(s)))
        tail.append(a)
        rules.apply(s, a)
    return tail


# -------------------------------------------------------------------------------------------- grid
def _grid_swap(rules: Any, seed: int, human: int) -> tuple[Any, list[int], Any, list[int]] | None:
    """The face-down base trades places with a card never drawn; the opponent's unplayed hand card likewise."""
    start, moves, before = random_game(rules, seed)
    end = before[-1]
    opp = 1 - human
    if len(end.draw) < 2:
        return None
    texts = [rules.action_to_str(b, a) for a, b in zip(moves, before[:-1], strict=True)]
    undrawn = end.draw  # the bottom of the pile: start.draw[: len(undrawn)]
    held = [c for c in end.hands[opp] if c in start.hands[opp]]  # dealt to the opponent and never placed
    s2 = rules.clone(start)
    s2.base_card, s2.draw[0] = undrawn[0], start.base_card
    if held:
        x = held[0]
        s2.hands[opp].remove(x)
        insort(s2.hands[opp], undrawn[1])
        s2.draw[1] = x
    m2 = _moves_from_text(rules, s2, texts)
    if m2 is None:
        return None
    return start, moves, s2, m2


def _moves_from_text(rules: Any, state: Any, texts: list[str]) -> list[int] | None:
    """The same moves by their text (slots follow the sorted hand); ``None`` if one is no longer legal."""
    s = rules.clone(state)
    out = []
    for t in texts:
        try:
            a = rules.str_to_action(s, t)
        except ValueError:
            return None
        out.append(a)
        rules.apply(s, a)
    return out if rules.is_terminal(s) else None


@pytest.mark.parametrize("human", [0, 1])
def test_grid_transcript_hides_the_base_the_pile_and_the_opponents_hand(human: int) -> None:
    rules = JerichoEnv("grid", board_size=9).rules
    found = next((r for seed in range(100) if (r := _grid_swap(rules, seed, human)) is not None), None)
    assert found is not None
    s1, m1, s2, m2 = found
    assert s1.base_card != s2.base_card
    assert_same_transcript("grid", {"board_size": 9}, human, (s1, m1), (s2, m2))


# ---------------------------------------------------------------------------------- public text
def _check_public_text(game: str, options: dict[str, Any], hidden: Callable[[Any, int], bool]) -> None:
    """Over random games: another seat sees a hidden move's text identical for every legal choice."""
    rules = JerichoEnv(game, **options).rules
    for seed in range(5):
        _, moves, before = random_game(rules, seed)
        for a, s in zip(moves, before[:-1], strict=True):
            mover = s.to_move
            assert rules.public_action_to_str(s, a, mover) == rules.action_to_str(s, a)
            assert rules.public_action_to_str(s, a, None) == rules.action_to_str(s, a)
            for other in range(rules.info.num_players):
                if other == mover:
                    continue
                seen = {rules.public_action_to_str(s, b, other) for b in rules.legal_actions(s) if hidden(s, b)}
                assert len(seen) <= 1
                if not hidden(s, a):
                    assert rules.public_action_to_str(s, a, other) == rules.action_to_str(s, a)


def test_public_text_castles() -> None:
    rules = JerichoEnv("castles").rules
    save, play_save = rules.actions.save_base, rules.actions.play_save_base
    _check_public_text("castles", {}, lambda s, a: save <= a < play_save)


def test_public_text_walls() -> None:
    _check_public_text("walls", {"num_players": 4}, lambda s, a: s.phase == WallsPhase.OPEN_WALL or a >= SUPPLY_BASE)


def test_public_text_grid_every_move_is_public() -> None:
    _check_public_text("grid", {"board_size": 9}, lambda s, a: False)
