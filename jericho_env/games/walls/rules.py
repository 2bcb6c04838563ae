"""Rules of walls (Tom Lehmann's Jericho, Abacus Spiele 2006) as a state machine.

The action encoding is ``actions.py``; the state and its phases ``state.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import compress
from typing import Any

import numpy as np

from jericho_env.core.layout import ObsLayout
from jericho_env.core.redeal import draw_hand
from jericho_env.core.rules import GameInfo, Rules, int_option, obs_version_option
from jericho_env.core.validate import require_generator
from jericho_env.games.walls import render, serialize
from jericho_env.games.walls.actions import NUM_ACTIONS, SUPPLY_BASE, TRUMPET_BASE, WallsActions
from jericho_env.games.walls.cards import (
    NUM_CARDS,
    NUM_SCORING,
    NUM_WALL_TYPES,
    SCORING,
    TRUMPET,
    TYPE_VALUE,
    VALUES,
    all_cards,
    card_to_str,
    counts_to_cards,
)
from jericho_env.games.walls.observation import (
    OBS_VERSIONS,
    build_layout,
    build_scale,
    encode,
    encode_into,
    raw_counts,
)
from jericho_env.games.walls.state import LENGTH_AT, TRUMPETS_AT, WALL_STRIDE, Phase, WallsState, trumpet_floor

HAND_SIZE = 7
POTENTIAL_SCALE = 20.0  # cards of lead that count as a potential of 1
NUM_PILES = 6
_TRUMPET_ACTIONS = list(range(TRUMPET_BASE, SUPPLY_BASE))
_WALL_ACTIONS = range(NUM_WALL_TYPES)  # a wall card's action is its type
_SUPPLY_ACTIONS = range(SUPPLY_BASE, SUPPLY_BASE + 26)  # a supply action per card type, trumpet last
_VALUES_DESC = (4, 3, 2, 1, 0)
# Phase members as module globals: the hot path compares against them every step, and a global is
# several times cheaper to read than an attribute of the enum class.
_OPEN_WALL, _OPEN_SUPPLY, _PLAY, _DONATE, _OVER = (
    Phase.OPEN_WALL,
    Phase.OPEN_SUPPLY,
    Phase.PLAY,
    Phase.DONATE,
    Phase.OVER,
)


def pile_sizes(n: int) -> list[int]:
    """Sizes of the six draw piles from the top, scoring cards included (piles 2, 4 and 6 hold one)."""
    rest = NUM_CARDS - NUM_SCORING - HAND_SIZE * n
    base, extra = divmod(rest, NUM_PILES)
    return [base + (1 if p < extra else 0) + (p % 2) for p in range(NUM_PILES)]


class WallsRules(Rules[WallsState]):
    """Jericho for 3-5 players (2 as an unpublished variant): build walls, blow trumpets, win the supply."""

    game_id = "walls"
    version = 1  # v1: trumpets of a collapsed wall go into the supply (v0 discarded them)
    batched = "jericho_env.games.walls.batched:WallsBatched"  # compiled rules for the batched env
    OPTIONS = (
        int_option(
            "num_players",
            4,
            "number of players: 3-5 as published, 2 as a variant not in the published rules",
            "an int in 2..5 (3-5 published, 2 a variant)",
            lambda v: 2 <= v <= 5,
        ),
        obs_version_option(OBS_VERSIONS, "observation version: 0 (the first) or 1 (0 plus what the seat can infer)"),
    )

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        n = self.n = int(self.options["num_players"])
        self._belief = self.observation_version >= 1
        self._scale = build_scale(n, self.observation_version)
        self._orders = [[(seat + k) % n for k in range(n)] for seat in range(n)]
        self.piles = pile_sizes(n)
        self.deck_size = sum(self.piles)
        # Range of positions (counted from the top of the initial pile) of piles 2, 4 and 6.
        starts = [sum(self.piles[:p]) for p in range(NUM_PILES)]
        self.scoring_piles = [(starts[p], starts[p] + self.piles[p]) for p in (1, 3, 5)]

    # ----------------------------------------------------------------- metadata
    def build_parts(self) -> None:
        """The action encoding (the same for every number of players)."""
        self.actions = WallsActions()

    def build_layout(self) -> ObsLayout:
        """The observation layout for the chosen number of players."""
        return build_layout(int(self.options["num_players"]), self.options["obs_version"])

    def build_info(self) -> GameInfo:
        """Metadata; the length bound counts opening, donations and one draw per play turn."""
        n = int(self.options["num_players"])
        deck = NUM_CARDS - HAND_SIZE * n
        # 2n opening steps, 2n donations, and play turns: each draws one card, the two scoring
        # cards that are not last draw two, so at most deck - 2 play turns.
        max_len = 4 * n + deck - 2
        return GameInfo(
            "walls", self.version, n, self.actions.num_actions, max_len, self.layout.size, options=dict(self.options)
        )

    # ----------------------------------------------------------------- set-up
    def initial_state(self, rng: np.random.Generator) -> WallsState:
        """Shuffle, deal 7 each, stack six piles with a scoring card in piles 2, 4, 6, draw a first player."""
        require_generator(rng)
        n = self.n
        cards = [c for c in all_cards() if c != SCORING]
        order = rng.permutation(len(cards))
        shuffled = [cards[int(i)] for i in order]
        s = WallsState(n)
        for seat in range(n):
            for c in shuffled[seat * HAND_SIZE : (seat + 1) * HAND_SIZE]:
                s.hands[seat][c] += 1
            s.hand_size[seat] = HAND_SIZE
        rest = shuffled[n * HAND_SIZE :]
        top_down: list[int] = []
        at = 0
        for p, size in enumerate(self.piles):
            if p % 2:
                pile = rest[at : at + size - 1]
                pile.insert(int(rng.integers(size)), SCORING)
                at += size - 1
            else:
                pile = rest[at : at + size]
                at += size
            top_down += pile
        s.deck = top_down[::-1]
        s.first_player = s.to_move = int(rng.integers(n))
        return s

    # ----------------------------------------------------------------- state machine
    def current_player(self, state: WallsState) -> int:
        """The seat to act, -1 when the game is over."""
        return -1 if state.phase == _OVER else state.to_move

    def is_terminal(self, state: WallsState) -> bool:
        """The game ends at the third scoring."""
        return state.phase == _OVER

    def legal_actions(self, state: WallsState) -> list[int]:
        """Legal actions of the seat to move, ascending."""
        phase = state.phase
        if phase == _OVER:
            return []
        h = state.hands[state.to_move]
        # compress(numbers, hand) keeps the numbers of the card types held, in one C loop
        if phase == _PLAY:
            out = list(compress(_WALL_ACTIONS, h))
            if h[TRUMPET]:
                out += _TRUMPET_ACTIONS
            out += compress(_SUPPLY_ACTIONS, h)
            return out
        if phase == _OPEN_WALL:
            out = list(compress(_WALL_ACTIONS, h))
            # A hand of seven trumpets lays a trumpet; it collapses at the reveal (see seeds/walls.md).
            return out or [TRUMPET]
        return list(compress(_SUPPLY_ACTIONS, h))

    def is_legal(self, state: WallsState, action: int) -> bool:
        """Whether ``action`` is legal now, from the hand of the seat to move (no list built)."""
        phase = state.phase
        if phase == _OVER or not 0 <= action < NUM_ACTIONS:
            return False
        h = state.hands[state.to_move]
        if phase == _PLAY:
            if action < TRUMPET_BASE:
                return h[action] > 0
            return h[TRUMPET if action < SUPPLY_BASE else action - SUPPLY_BASE] > 0
        if phase == _OPEN_WALL:
            if action < TRUMPET_BASE:
                return h[action] > 0
            return action == TRUMPET_BASE and not any(h[:NUM_WALL_TYPES])
        return action >= SUPPLY_BASE and h[action - SUPPLY_BASE] > 0

    def apply_unchecked(self, state: WallsState, action: int) -> None:
        """Play ``action`` for the seat to move without checking it (see ``Rules.apply_unchecked``)."""
        s = state
        seat = s.to_move
        phase = s.phase
        if phase == _PLAY:
            if action < TRUMPET_BASE:
                self._build(s, seat, action)
            elif action < SUPPLY_BASE:
                self._trumpet(s, seat, action - TRUMPET_BASE)
            else:
                self._to_supply(s, seat, action - SUPPLY_BASE)
            self._draw(s, seat)
        elif phase == _OPEN_WALL:
            s.hands[seat][action] -= 1
            s.hand_size[seat] -= 1
            s.opening[seat] = action
            s.phase = _OPEN_SUPPLY
        else:
            self._to_supply(s, seat, action - SUPPLY_BASE)
            s.hand_size[seat] -= 1  # no draw after an opening supply card or a donation
            s.phase_left -= 1
            s.to_move = (seat + 1) % s.n
            if phase == _OPEN_SUPPLY:
                if s.phase_left:
                    s.phase = _OPEN_WALL
                else:
                    self._reveal_openings(s)
                    s.phase = _PLAY
            elif not s.phase_left:
                s.phase = _PLAY  # the donation went round once: the drawer's left neighbour plays

    def _build(self, s: WallsState, seat: int, card: int) -> None:
        s.hands[seat][card] -= 1
        self._add_to_wall(s, seat, card)

    def _add_to_wall(self, s: WallsState, seat: int, card: int) -> None:
        wall = s.walls[seat]
        base = (card // 5) * WALL_STRIDE
        wall[base + card % 5] += 1
        wall[base + LENGTH_AT] += TYPE_VALUE[card]

    def _trumpet(self, s: WallsState, seat: int, colour: int) -> None:
        s.hands[seat][TRUMPET] -= 1
        log = s.trumpet_log[seat]
        if log is not None:
            s.trumpet_log[seat] = (*log, ("blow",))
        base = colour * WALL_STRIDE
        walls = s.walls
        for vi in _VALUES_DESC:
            hit = False
            for wall in walls:
                k = wall[base + vi]
                if k:
                    hit = True
                    wall[base + vi] = 0
                    wall[base + LENGTH_AT] -= k * VALUES[vi]
                    s.supply_public[colour * 5 + vi] += k
                    s.supply_size += k
                    if wall[base + LENGTH_AT] == 2 * wall[base + TRUMPETS_AT]:
                        # no wall card left: the trumpets alone cannot stand and go, face up, into the
                        # supply (seeds/walls.md, decision 9); its scoring throws them out
                        t = wall[base + TRUMPETS_AT]
                        s.supply_trumpets += t
                        s.supply_size += t
                        wall[base + TRUMPETS_AT] = 0
                        wall[base + LENGTH_AT] = 0
            if hit:
                break
        own = walls[seat]
        if own[base + LENGTH_AT]:
            own[base + TRUMPETS_AT] += 1
            own[base + LENGTH_AT] += 2
        else:
            s.discard += 1

    def _to_supply(self, s: WallsState, seat: int, card: int) -> None:
        s.hands[seat][card] -= 1
        s.supply_hidden[seat][card] += 1
        s.hidden_count[seat] += 1
        s.supply_size += 1

    def _draw(self, s: WallsState, seat: int) -> None:
        card = s.deck.pop()
        if card != SCORING:
            s.hands[seat][card] += 1
            s.to_move = (seat + 1) % s.n
            return
        s.scored += 1
        s.drawer = seat
        if s.scored < NUM_SCORING:
            s.hands[seat][s.deck.pop()] += 1  # the replacement (a scoring card is never next to another)
        else:
            s.hand_size[seat] -= 1  # the game ends at once: no replacement
        self._score(s)
        if s.scored == NUM_SCORING:
            self._end_bonus(s)
            s.phase = _OVER
            s.to_move = -1
        else:
            s.phase = _DONATE
            s.phase_left = s.n
            s.to_move = (seat + 1) % s.n

    def _reveal_openings(self, s: WallsState) -> None:
        for seat, card in enumerate(s.opening):
            if card == TRUMPET:
                s.discard += 1  # a trumpet-only wall collapses at once
                s.trumpet_log[seat] = ()  # everyone now knows it was dealt seven trumpets
            elif card >= 0:
                self._add_to_wall(s, seat, card)
            s.opening[seat] = -1

    def _score(self, s: WallsState) -> None:
        """Reveal the supply, discard its trumpets, give each colour to its longest wall(s)."""
        pub = s.supply_public
        if any(log is not None for log in s.trumpet_log):
            each = tuple(h[TRUMPET] for h in s.supply_hidden)
            for seat, log in enumerate(s.trumpet_log):
                if log is not None:
                    s.trumpet_log[seat] = (*log, ("scoring", s.hidden_count[seat], sum(each), each))
        for seat in range(s.n):
            hidden = s.supply_hidden[seat]
            for k in range(NUM_WALL_TYPES):
                if hidden[k]:
                    pub[k] += hidden[k]
                    hidden[k] = 0
            s.discard += hidden[TRUMPET]
            hidden[TRUMPET] = 0
            s.hidden_count[seat] = 0
        s.discard += s.supply_trumpets
        s.supply_trumpets = 0
        for colour in range(5):
            base = colour * WALL_STRIDE + LENGTH_AT
            lengths = [w[base] for w in s.walls]
            best = max(lengths)
            if best == 0:
                continue  # nobody builds this colour: its cards stay in the supply
            winners = [seat for seat, length in enumerate(lengths) if length == best]
            pool: list[int] = []
            for vi in _VALUES_DESC:
                pool += [colour * 5 + vi] * pub[colour * 5 + vi]
            share = len(pool) // len(winners)
            # Values never score, so which cards each winner takes does not matter: hand them out
            # from the highest value down, in seat order; the remainder (lowest values) stays.
            for i in range(share * len(winners)):
                card = pool[i]
                s.won[winners[i % len(winners)]][card] += 1
                pub[card] -= 1
        s.supply_size = sum(pub)

    def _end_bonus(self, s: WallsState) -> None:
        """Value-1 cards leave the walls for the won cards; walls left with trumpets only are discarded."""
        for seat in range(s.n):
            wall = s.walls[seat]
            for colour in range(5):
                base = colour * WALL_STRIDE
                ones = wall[base]
                if not ones:
                    continue
                s.won[seat][colour * 5] += ones
                wall[base] = 0
                wall[base + LENGTH_AT] -= ones
                if wall[base + LENGTH_AT] == 2 * wall[base + TRUMPETS_AT]:
                    s.discard += wall[base + TRUMPETS_AT]
                    wall[base + TRUMPETS_AT] = 0
                    wall[base + LENGTH_AT] = 0

    # ----------------------------------------------------------------- outcome
    def won_count(self, state: WallsState, seat: int) -> int:
        """Cards ``seat`` has won so far (after the game: including the value-1 wall cards)."""
        return sum(state.won[seat])

    def wall_card_count(self, state: WallsState, seat: int) -> int:
        """Cards in ``seat``'s walls, trumpets included (the tie-break)."""
        wall = state.walls[seat]
        return sum(sum(wall[c * WALL_STRIDE : c * WALL_STRIDE + LENGTH_AT]) for c in range(5))

    def ranking_keys(self, state: WallsState) -> list[tuple[int, int]]:
        """Each seat's (cards won, cards in walls): the larger key ranks higher."""
        return [(self.won_count(state, seat), self.wall_card_count(state, seat)) for seat in range(state.n)]

    def winners(self, state: WallsState) -> list[int]:
        """Seats sharing the best key (the game's winners once it is over)."""
        keys = self.ranking_keys(state)
        best = max(keys)
        return [seat for seat, key in enumerate(keys) if key == best]

    def potential(self, state: WallsState, seat: int) -> float:
        """``seat``'s lead in cards won over the best other seat / 20, clipped to [-1, 1] (see ``Rules.potential``).

        Cards won decide the game (wall cards only break ties); ``--target margin`` learns its final value.
        """
        mine = self.won_count(state, seat)
        best_other = max(self.won_count(state, o) for o in range(state.n) if o != seat)
        return max(-1.0, min(1.0, (mine - best_other) / POTENTIAL_SCALE))

    def returns(self, state: WallsState) -> list[float]:
        """Winners share +1, the others share -1; all 0 if everyone ties or before the end."""
        n = state.n
        if state.phase != _OVER:
            return [0.0] * n
        win = self.winners(state)
        if len(win) == n:
            return [0.0] * n
        lose = -1.0 / (n - len(win))
        gain = 1.0 / len(win)
        return [gain if seat in win else lose for seat in range(n)]

    # ----------------------------------------------------------------- text
    def action_to_str(self, state: WallsState, action: int) -> str:
        """``red-5`` (build, first wall card), ``T-red`` (trumpet), ``supply-red-5``; ``T`` in the opening."""
        return self.actions.to_str(action, opening=state.phase == Phase.OPEN_WALL)

    def public_action_to_str(self, state: WallsState, action: int, observer: int | None = None) -> str:
        """As ``action_to_str``, except for another seat's face-down cards.

        Its first wall card in the opening is ``"a first wall card face down"`` (the reveal shows it
        later, on the table), and a card it puts into the supply (opening, play or donation) is
        ``"a card face down into the supply"``: scorings reveal the supply as a whole, never who gave what.
        """
        if observer is None or observer == state.to_move:
            return self.action_to_str(state, action)
        if state.phase == Phase.OPEN_WALL:
            return "a first wall card face down"
        if action >= SUPPLY_BASE:
            return "a card face down into the supply"
        return self.action_to_str(state, action)

    def describe_short(self, action: int) -> str:
        """The short text of ``action`` outside the opening."""
        return self.actions.to_str(action)

    def describe_action(self, action: int) -> str:
        """A state-free name of ``action``."""
        return self.actions.describe(action)

    def illegal_reason(self, state: WallsState, action: int) -> str | None:
        """Why ``action`` is illegal, in words."""
        h = state.hands[state.to_move]
        phase = state.phase
        move = self.actions.decode(action)
        card = move.card
        if phase == Phase.OPEN_WALL:
            if move.kind == "supply":
                return "in the opening you first lay your face-down first wall card; the supply card comes next"
            if move.kind == "trumpet" and action != self.actions.opening_trumpet and not any(h[:NUM_WALL_TYPES]):
                return "with no wall card in hand you lay a trumpet face down: action 25 ('T')"
            if move.kind == "trumpet" and any(h[:NUM_WALL_TYPES]):
                return "the first wall card must be a wall card, not a trumpet (you hold one)"
        elif phase in (Phase.OPEN_SUPPLY, Phase.DONATE):
            what = "the opening" if phase == Phase.OPEN_SUPPLY else "the round-start donation"
            if move.kind != "supply":
                return f"in {what} you put a card face down into the supply (a supply-... action)"
        if not h[card]:
            return f"you hold no {'trumpet' if card == TRUMPET else card_to_str(card)}"
        return None

    def render_text(self, state: WallsState, seat: int | None) -> str:
        """The table as text from ``seat``'s point of view (``None``: everything face up)."""
        return render.render_text(state, seat, self.scoring_window(state))

    def render_image(self, state: WallsState, seat: int | None) -> np.ndarray:
        """The table as an RGB array whose size depends only on the number of players."""
        winners = self.winners(state) if state.phase == Phase.OVER else []
        return render.render_image(state, seat, self.scoring_window(state), winners)

    # ----------------------------------------------------------------- observation
    def observe(self, state: WallsState, seat: int) -> np.ndarray:
        """The observation of ``seat`` (see the layout table on the game page)."""
        return encode(state, seat, self._orders[seat], self._scale, self.scoring_window(state), self._belief)

    def observe_into(self, out: np.ndarray, states: Sequence[WallsState], seats: Sequence[int]) -> None:
        """Row ``j`` of ``out``: the observation of ``seats[j]`` in ``states[j]`` (one conversion for all rows)."""
        raw: list[int] = []
        orders, window, belief = self._orders, self.scoring_window, self._belief
        for state, seat in zip(states, seats, strict=True):
            raw += raw_counts(state, seat, orders[seat], window(state), belief)
        encode_into(out, raw, self._scale)

    def scoring_window(self, state: WallsState) -> tuple[int, int]:
        """(cards to draw before the pile of the next scoring card begins, cards left in that pile)."""
        if state.scored >= NUM_SCORING:
            return (0, 0)
        start, end = self.scoring_piles[state.scored]
        drawn = self.deck_size - len(state.deck)
        return (min(max(0, start - drawn), 40), min(max(0, end - max(start, drawn)), 40))

    # ----------------------------------------------------------------- copies and hidden information
    def clone(self, state: WallsState) -> WallsState:
        """An independent copy."""
        return state.copy()

    def determinize(self, state: WallsState, seat: int, rng: np.random.Generator) -> WallsState:
        """A copy with what ``seat`` cannot see redealt: others' hands, face-down openings and supply cards, the pile.

        The unseen cards are pooled in card order and dealt anew, sizes kept: a face-down first wall
        card is a wall card (a player holding one must lay one), scoring cards lie anywhere in the
        undrawn part of their piles. No move in walls is forced, so nothing else is revealed, except
        for a player shown at the reveal to have opened with a trumpet (it was dealt seven): it still
        holds at least ``T`` trumpets among its hand and face-down supply cards and ``S`` of them in the
        supply, replayed from ``trumpet_log`` as ``seat`` knows it (``_trumpet_floor``). Hands meeting
        these bounds are drawn uniformly among those that do. Every copy is a reachable state with the
        same public history; the others' free choices are not weighted by any model of their play.
        The result depends only on what ``seat`` has seen and ``rng``.
        """
        require_generator(rng)
        s = state.copy()
        n = s.n
        others = [o for o in range(n) if o != seat]
        pool: list[int] = []
        for o in others:
            pool += counts_to_cards(s.hands[o])
            pool += counts_to_cards(s.supply_hidden[o])
            if s.opening[o] >= 0:
                pool.append(s.opening[o])
        pool += [c for c in s.deck if c != SCORING]
        pool.sort()  # canonical: the copy depends on what the seat has seen, not on where hidden cards lie
        pool = [pool[int(i)] for i in rng.permutation(len(pool))]
        # Face-down first wall cards are wall cards (a trumpet only from a hand of trumpets): one of the pool's
        # wall cards drawn uniformly, so the rest of the pool stays a uniform shuffle (taking the first wall card
        # would leave the trumpets before it at the front, where the next zone is dealt from)
        for o in others:
            if s.opening[o] >= 0:
                walls = [i for i, c in enumerate(pool) if c != TRUMPET]
                pick = walls[int(rng.integers(len(walls)))] if walls else 0
                s.opening[o] = pool.pop(pick)
        for o in others:
            floor = self._trumpet_floor(state, o, seat)
            if floor is None:
                hidden_cards, pool = pool[: s.hidden_count[o]], pool[s.hidden_count[o] :]
                hand_cards, pool = pool[: s.hand_size[o]], pool[s.hand_size[o] :]
            else:
                total, in_supply = floor
                hidden_cards, pool = draw_hand(pool, s.hidden_count[o], [(_is_trumpet, in_supply)], rng)
                need = total - hidden_cards.count(TRUMPET)
                hand_cards, pool = draw_hand(pool, s.hand_size[o], [(_is_trumpet, need)], rng)
            h = [0] * 26
            for c in hand_cards:
                h[c] += 1
            s.hands[o] = h
            hidden = [0] * 26
            for c in hidden_cards:
                hidden[c] += 1
            s.supply_hidden[o] = hidden
        s.deck = self._restack(s, pool, rng)
        return s

    @staticmethod
    def _trumpet_floor(s: WallsState, player: int, observer: int) -> tuple[int, int] | None:
        """(T, S) for a player dealt seven trumpets, as ``observer`` knows them (``state.trumpet_floor``)."""
        return trumpet_floor(s.trumpet_log[player], observer)

    def _restack(self, s: WallsState, cards: list[int], rng: np.random.Generator) -> list[int]:
        """A draw pile of ``cards`` whose scoring cards lie anywhere in the undrawn part of their piles."""
        size = len(s.deck)
        drawn = self.deck_size - size
        top_down: list[int] = [-1] * size
        ranges = []
        for k in range(s.scored, NUM_SCORING):
            start, end = self.scoring_piles[k]
            ranges.append((max(start, drawn) - drawn, end - drawn))
        if all(0 <= lo < hi <= size for lo, hi in ranges):
            for lo, hi in ranges:
                top_down[int(rng.integers(lo, hi))] = SCORING
        else:  # a hand-made pile that does not follow the set-up: leave its scoring cards where they are
            for i, c in enumerate(reversed(s.deck)):
                if c == SCORING:
                    top_down[i] = SCORING
        it = iter(cards)
        return [c if c >= 0 else next(it) for c in top_down][::-1]

    # ----------------------------------------------------------------- serialisation and cards
    def to_dict(self, state: WallsState) -> dict[str, Any]:
        """A JSON-able dictionary with cards as text (see ``serialize``)."""
        return serialize.to_dict(state)

    def from_dict(self, data: Mapping[str, Any], strict: bool = True) -> WallsState:
        """Rebuild a state from ``to_dict``'s output; ``StateFormatError`` naming the problem (see ``serialize``)."""
        state = serialize.from_dict(data, self.n, self.piles, strict)
        return self.require_playable(state) if strict else state

    def card_zones(self, state: WallsState) -> dict[str, list[int]]:
        """Every card by zone: hands, face-down openings, walls, won, supply, discard, scoring cards, pile."""
        s = state
        zones: dict[str, list[int]] = {}
        for seat in range(s.n):
            zones[f"hand_{seat}"] = counts_to_cards(s.hands[seat])
            zones[f"opening_{seat}"] = [s.opening[seat]] if s.opening[seat] >= 0 else []
            zones[f"wall_{seat}"] = wall_cards(s.walls[seat])
            zones[f"won_{seat}"] = counts_to_cards(s.won[seat])
            zones[f"supply_hidden_{seat}"] = counts_to_cards(s.supply_hidden[seat])
        zones["supply_public"] = counts_to_cards(s.supply_public) + [TRUMPET] * s.supply_trumpets
        zones["discard"] = [TRUMPET] * s.discard
        zones["scoring_aside"] = [SCORING] * s.scored
        zones["deck"] = s.deck[:]
        return zones

    def all_cards(self) -> list[int]:
        """The 110 cards, sorted."""
        return all_cards()


def wall_cards(wall: list[int]) -> list[int]:
    """The cards of one seat's walls (trumpets as ``TRUMPET``), colour by colour."""
    out: list[int] = []
    for colour in range(5):
        base = colour * WALL_STRIDE
        for vi in range(5):
            out += [colour * 5 + vi] * wall[base + vi]
        out += [TRUMPET] * wall[base + TRUMPETS_AT]
    return out


def _is_trumpet(card: int) -> bool:
    return card == TRUMPET
