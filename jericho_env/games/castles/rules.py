"""Castles (Working Title): rules engine (state machine, determinize); the action encoding is ``actions.py``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from jericho_env.core.layout import ObsLayout
from jericho_env.core.redeal import draw_hand, shuffled
from jericho_env.core.rules import GameInfo, Rules, choice_option, obs_version_option
from jericho_env.core.validate import require_generator
from jericho_env.games.castles import serialize
from jericho_env.games.castles.actions import CastlesActions
from jericho_env.games.castles.deck import OWNER_STRIDE, DeckSpec
from jericho_env.games.castles.observation import (
    HAND_SIZE,
    NUM_SAVES,
    OBS_VERSIONS,
    SETUP_DRAW,
    ObsEncoder,
    build_layout,
)
from jericho_env.games.castles.render import render, render_image
from jericho_env.games.castles.state import EMPTIED, STUCK, CastlesState, Phase

# Phase members as module globals: the hot path compares against them every step, and a global is
# several times cheaper to read than an attribute of the enum class.
_CHOOSE_SAVES, _PLAY, _DISCARD, _PLAY_SAVE, _OVER = (
    Phase.CHOOSE_SAVES,
    Phase.PLAY,
    Phase.DISCARD,
    Phase.PLAY_SAVE,
    Phase.OVER,
)


class CastlesRules(Rules[CastlesState]):
    """Castles (Working Title): a two-player shedding race, each player with an own deck and three saves."""

    game_id = "castles"
    version = 0
    batched = "jericho_env.games.castles.batched:CastlesBatched"  # compiled rules for make_batched
    OPTIONS = (
        choice_option("ranks", 10, "ranks per suit: 5 (A-5), 10 (A-10, the base game) or 13 (A-K)", (5, 10, 13)),
        choice_option("small_deck", False, "the smaller deck: two cards of each rank and one joker", (False, True)),
        choice_option(
            "reversed_order", False, "reversed order: A highest, top rank lowest (and playable on an A)", (False, True)
        ),
        obs_version_option(OBS_VERSIONS, "observation version: 0 (the first) or 1 (0 plus what the seat can infer)"),
    )

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)  # validates the options, then calls build_parts, build_layout, build_info
        self.encoder = ObsEncoder(self.deck, self.layout)

    # ----------------------------------------------------------------- metadata
    def build_parts(self) -> None:
        """The deck under the options and its action encoding."""
        o = self.options
        small = o["small_deck"]
        self.deck = DeckSpec(o["ranks"], 2 if small else 4, 1 if small else 2, o["reversed_order"])
        self.actions = CastlesActions(self.deck)
        self.num_actions = self.actions.num_actions
        # the offsets bound on the rules for the hot path (legal_actions, apply): one attribute read each
        a = self.actions
        self._joker, self._copies = a.joker, a.copies
        self._save, self._play_save, self._discard = a.save_base, a.play_save_base, a.discard_base
        # answers[b]: bit mask of the rank codes (joker included) that may be played on a top card of rank b
        d = self.deck
        self._answers = [sum(1 << r for r in d.allowed[b]) | 1 << d.joker for b in range(d.ranks + 1)]

    def build_layout(self) -> ObsLayout:
        """The observation layout for the deck."""
        return build_layout(self.deck, self.options["obs_version"])

    def build_info(self) -> GameInfo:
        """Metadata; ``max_game_length`` is a proven bound (see ``seeds/castles.md``)."""
        # Per player: 3 save choices + at most one step per card that passes through the hand
        # (each play or discard step removes at least one of the deck's size - 3 non-save cards)
        # + at most 3 save plays. Automatic discards take no step.
        per_player = NUM_SAVES + (self.deck.size - NUM_SAVES) + NUM_SAVES
        return GameInfo(
            self.game_id,
            self.version,
            2,
            self.num_actions,
            2 * per_player,
            self.layout.size,
            options=dict(self.options),
        )

    # ----------------------------------------------------------------- set-up
    def initial_state(self, rng: np.random.Generator) -> CastlesState:
        """Shuffle both decks, draw 8 each, choose the first player; saves are chosen next."""
        require_generator(rng)
        d = self.deck
        ordered = d.ordered_cards()
        decks = [[ordered[i] for i in rng.permutation(d.size)] for _ in range(2)]
        first = int(rng.integers(2))
        hands = [[0] * (d.ranks + 1) for _ in range(2)]
        for p in range(2):
            for _ in range(SETUP_DRAW):
                hands[p][decks[p].pop()] += 1
        zero = [0] * (d.ranks + 1)
        return CastlesState(
            hands=hands,
            saves=[zero[:], zero[:]],
            decks=decks,
            pile=[zero[:], zero[:]],
            discard=[zero[:], zero[:]],
            beat=-1,
            beat_n=0,
            beat_by=-1,
            first=first,
            to_move=first,
            phase=_CHOOSE_SAVES,
            pending=NUM_SAVES,
        )

    # ----------------------------------------------------------------- queries
    def current_player(self, state: CastlesState) -> int:
        """The seat to act, -1 once over."""
        return -1 if state.phase == _OVER else state.to_move

    def is_terminal(self, state: CastlesState) -> bool:
        """Whether someone has won."""
        return state.phase == _OVER

    def returns(self, state: CastlesState) -> list[float]:
        """+1 for the winner, -1 for the loser (there are no draws); zeros before the end."""
        if state.phase != _OVER:
            return [0.0, 0.0]
        return [1.0, -1.0] if state.winner == 0 else [-1.0, 1.0]

    def can_play(self, state: CastlesState, seat: int) -> bool:
        """Whether ``seat`` holds a card that may go on the card(s) to beat."""
        hand = state.hands[seat]
        if hand[self.deck.joker]:
            return True
        return any(hand[r] for r in self.deck.allowed[state.beat])

    def legal_actions(self, state: CastlesState) -> list[int]:
        """Legal actions of the seat to move, ascending."""
        phase = state.phase
        p = state.to_move
        if phase == _PLAY:
            hand = state.hands[p]
            c = self._copies
            out: list[int] = []
            for r in self.deck.allowed[state.beat]:
                n = hand[r]
                if n:
                    out.extend(range(r * c, r * c + n))  # play 1..n cards of rank r
            if hand[self.deck.joker]:
                out.append(self._joker)
            return out
        if phase == _OVER:
            return []
        if phase == _CHOOSE_SAVES:
            base, counts = self._save, state.hands[p]
        elif phase == _PLAY_SAVE:
            base, counts = self._play_save, state.saves[p]
        else:
            base, counts = self._discard, state.hands[p]
        return [base + r for r, n in enumerate(counts) if n]

    # ----------------------------------------------------------------- transitions
    def is_legal(self, state: CastlesState, action: int) -> bool:
        """Whether ``action`` is legal now, from the counts of the seat to move (no list built)."""
        phase = state.phase
        p = state.to_move
        if phase == _PLAY:
            if 0 <= action < self._joker:
                r, k = divmod(action, self._copies)
                return state.hands[p][r] > k and r in self.deck.allowed[state.beat]
            return action == self._joker and state.hands[p][self.deck.joker] > 0
        if phase == _CHOOSE_SAVES:
            base, end, counts = self._save, self._play_save, state.hands[p]
        elif phase == _PLAY_SAVE:
            base, end, counts = self._play_save, self._discard, state.saves[p]
        elif phase == _DISCARD:
            base, end, counts = self._discard, self.num_actions, state.hands[p]
        else:
            return False
        return base <= action < end and counts[action - base] > 0

    def apply_unchecked(self, state: CastlesState, action: int) -> None:
        """Play ``action`` for the seat to move without checking it (see ``Rules.apply_unchecked``)."""
        p = state.to_move
        if action < self._joker:
            r, k = divmod(action, self._copies)
            self._play_from_hand(state, p, r, k + 1)
        elif action == self._joker:
            self._play_from_hand(state, p, self.deck.joker, 1)
        elif action < self._play_save:
            self._choose_save(state, p, action - self._save)
        elif action < self._discard:
            r = action - self._play_save
            state.saves[p][r] -= 1
            state.save_n[p] -= 1
            self._put_on_table(state, p, r, 1)
        else:
            self._discard_one(state, p, action - self._discard)

    def _play_from_hand(self, s: CastlesState, p: int, r: int, k: int) -> None:
        s.hands[p][r] -= k
        s.hand_n[p] -= k
        if s.need_n[p] and not self._answers[s.need_beat[p]] >> r & 1:
            # these cards may have been among the ones kept when stuck: fewer of those need remain in hand
            s.need_n[p] = max(0, s.need_n[p] - k)
        self._put_on_table(s, p, r, k)

    def _put_on_table(self, s: CastlesState, p: int, r: int, k: int) -> None:
        """Cards of rank ``r`` become the card(s) to beat; then the turn ends."""
        s.pile[p][r] += k
        s.beat, s.beat_n, s.beat_by = r, k, p
        self._refill(s, p)
        if s.hand_n[p] == 0:  # the refill found the deck empty too
            self._finish(s, p, EMPTIED)
        elif r == self.deck.joker:
            s.phase = _PLAY  # extra turn: any card may follow a joker
            s.to_move = p
        else:
            self._start_turn(s, 1 - p)

    def _refill(self, s: CastlesState, p: int) -> None:
        """Draw back up to five from the own deck while it lasts."""
        deck, hand = s.decks[p], s.hands[p]
        while s.hand_n[p] < HAND_SIZE and deck:
            hand[deck.pop()] += 1
            s.hand_n[p] += 1

    def _start_turn(self, s: CastlesState, p: int) -> None:
        """Seat ``p`` answers the card(s) to beat; if it cannot, the save sequence starts (or it loses)."""
        s.to_move = p
        if self.can_play(s, p):
            s.phase = _PLAY
        elif s.save_n[p] == 0:
            self._finish(s, 1 - p, STUCK)
        else:
            left = len(s.decks[p])
            if left >= HAND_SIZE or left == 0:
                # Discard the hand and draw 5; with an empty deck there is nothing to swap, so
                # the hand is kept ("discard up to the number of cards remaining in the deck").
                if left:
                    self._discard_hand(s, p)
                    self._refill(s, p)
                    s.barred[p], s.need_n[p] = 0, 0  # a fresh hand: nothing is known about it
                else:
                    s.barred[p] |= self._answers[s.beat]  # the kept hand holds nothing that answers s.beat
                s.phase = _PLAY_SAVE
            else:
                s.phase = _DISCARD  # short deck: the player chooses which cards to swap out
                s.pending = min(left, s.hand_n[p])
                s.need_n[p], s.need_beat[p] = s.hand_n[p], s.beat  # no card of this hand answers s.beat

    def _discard_hand(self, s: CastlesState, p: int) -> None:
        hand, disc = s.hands[p], s.discard[p]
        for r, n in enumerate(hand):
            if n:
                disc[r] += n
                hand[r] = 0
        s.hand_n[p] = 0

    def _discard_one(self, s: CastlesState, p: int, r: int) -> None:
        s.hands[p][r] -= 1
        s.hand_n[p] -= 1
        s.need_n[p] -= 1  # the discarded card was one that could not answer: the rest still cannot
        s.discard[p][r] += 1
        s.pending -= 1
        if s.pending == 0:
            deck, hand = s.decks[p], s.hands[p]
            while deck:  # draw the rest of the deck
                hand[deck.pop()] += 1
                s.hand_n[p] += 1
            s.phase = _PLAY_SAVE

    def _choose_save(self, s: CastlesState, p: int, r: int) -> None:
        s.hands[p][r] -= 1
        s.hand_n[p] -= 1
        s.saves[p][r] += 1
        s.save_n[p] += 1
        s.pending -= 1
        if s.pending:
            return
        if p == s.first:
            s.to_move = 1 - p
            s.pending = NUM_SAVES
            return
        # Both have chosen: the first player turns over the top card of their deck as their play.
        f = s.first
        top = s.decks[f].pop()
        s.pile[f][top] += 1
        s.beat, s.beat_n, s.beat_by = top, 1, f
        if top == self.deck.joker:
            s.phase, s.to_move = _PLAY, f  # a turned-over joker is a joker play: f plays again
        else:
            self._start_turn(s, 1 - f)

    def _finish(self, s: CastlesState, winner: int, reason: int) -> None:
        s.phase = _OVER
        s.winner = winner
        s.reason = reason
        s.pending = 0
        s.to_move = -1

    # ----------------------------------------------------------------- text
    def describe_action(self, action: int) -> str:
        """State-free name of ``action``."""
        return self.actions.describe(action)

    def action_to_str(self, state: CastlesState, action: int) -> str:
        """Short typeable text: ``"7"``, ``"7x2"``, ``"joker"``, ``"save 7"``, ``"play save 7"``, ``"discard 7"``."""
        return self.actions.to_str(action)

    def public_action_to_str(self, state: CastlesState, action: int, observer: int | None = None) -> str:
        """As ``action_to_str``, except that another seat's save choice shows only as ``"a save face down"``."""
        if observer is not None and observer != state.to_move and self._save <= action < self._play_save:
            return "a save face down"
        return self.actions.to_str(action)

    def illegal_reason(self, state: CastlesState, action: int) -> str | None:
        """Why ``action`` is illegal in ``state``, in words."""
        d, p, phase = self.deck, state.to_move, state.phase
        wanted = {
            Phase.CHOOSE_SAVES: "choose a save card (set-up)",
            Phase.PLAY: "play from your hand",
            Phase.DISCARD: f"discard {state.pending} more card(s) (you cannot play and your deck is short)",
            Phase.PLAY_SAVE: "turn over one of your saves (you cannot play)",
        }[phase]
        move = self.actions.decode(action)
        if _PHASE_OF_KIND[move.kind] != phase:
            return f"you must {wanted} now"
        if move.kind == "joker":
            return "you hold no joker"
        if move.kind == "play":
            r, k = move.rank, move.n_cards
            have = state.hands[p][r]
            if have < k:
                return f"you hold {have} card(s) of rank {d.name(r)}, not {k}"
            ok = " ".join(d.name(x) for x in d.allowed[state.beat])
            return f"{d.name(r)} does not beat {d.name(state.beat)}: play one of {ok}, or a joker"
        if move.kind == "play_save":
            return f"you have no save of rank {d.name(move.rank)}"
        return f"you hold no {d.name(move.rank)}"

    def render_text(self, state: CastlesState, seat: int | None) -> str:
        """The table from ``seat``'s view (``None``: everything, deck order included)."""
        return render(self.deck, state, seat)

    def render_image(self, state: CastlesState, seat: int | None) -> np.ndarray:
        """The table as an RGB array of fixed size (760 x 440) from ``seat``'s view (``None``: all shown)."""
        return render_image(self.deck, state, seat)

    # ----------------------------------------------------------------- copies, hidden information
    def clone(self, state: CastlesState) -> CastlesState:
        """An independent copy."""
        return state.clone()

    def determinize(self, state: CastlesState, seat: int, rng: np.random.Generator) -> CastlesState:
        """A copy with what ``seat`` cannot see redealt: its own deck's order; the opponent's hand, saves and deck.

        The opponent's unseen cards (its deck less what it played or discarded) are split anew into
        hand, saves and deck, keeping their sizes and every constraint its moves revealed: a hand kept
        when stuck with an empty deck holds no rank of ``barred``, and the hand of an opponent that lost
        stuck no card answering the last card to beat; after a stuck turn with a short deck, at least
        ``need_n`` hand cards cannot answer ``need_beat``; an opponent to move in the
        play phase holds a card that answers the card to beat (it was not stuck). Among the splits
        meeting these constraints the hand is drawn uniformly (copies of a rank told apart), then
        saves and deck uniformly from the rest. Every copy is a state the game can reach with the
        same public history; the opponent's own choices (which cards it kept, which save it turned)
        are not weighted by any model of its play, so this is the support of the posterior, not its
        exact weights (see ``seeds/castles.md``, D21). The result depends only on what ``seat`` has
        seen and on ``rng``.
        """
        require_generator(rng)
        d = self.deck
        comp = d.composition()
        new = state.clone()
        mine = [comp[r] - state.hands[seat][r] - state.saves[seat][r] - state.pile[seat][r] - state.discard[seat][r]
                for r in range(d.ranks + 1)]  # fmt: skip
        new.decks[seat] = shuffled([r for r, n in enumerate(mine) for _ in range(n)], rng)
        o = 1 - seat
        pool = [r for r in range(d.ranks + 1) for _ in range(comp[r] - state.pile[o][r] - state.discard[o][r])]
        barred = state.barred[o]
        if state.phase == _OVER and state.reason == STUCK and state.winner == seat:
            barred |= self._answers[state.beat]  # the opponent lost stuck: nothing in its hand answered
        allowed_pool = [r for r in pool if not barred >> r & 1]
        bounds: list[tuple[Any, int]] = []
        if state.need_n[o]:
            answers = self._answers[state.need_beat[o]]
            bounds.append((lambda r: not answers >> r & 1, state.need_n[o]))
        if state.phase == _PLAY and state.to_move == o:
            answers_now = self._answers[state.beat]
            bounds.append((lambda r: answers_now >> r & 1, 1))
        hand_cards, rest = draw_hand(allowed_pool, state.hand_n[o], bounds, rng)
        rest = shuffled(sorted(rest + [r for r in pool if barred >> r & 1]), rng)
        k = d.ranks + 1
        hand, saves = [0] * k, [0] * k
        for r in hand_cards:
            hand[r] += 1
        for r in rest[: state.save_n[o]]:
            saves[r] += 1
        new.hands[o], new.saves[o] = hand, saves
        new.decks[o] = rest[state.save_n[o] :]
        return new

    def observe(self, state: CastlesState, seat: int) -> np.ndarray:
        """The observation of ``seat`` (see the game page for the layout)."""
        return self.encoder.encode(state, seat)

    # ----------------------------------------------------------------- dicts and cards
    def to_dict(self, state: CastlesState) -> dict[str, Any]:
        """A JSON-able dict (decks bottom to top, counts per rank code; see ``serialize``)."""
        return serialize.to_dict(state)

    def from_dict(self, data: Mapping[str, Any], strict: bool = True) -> CastlesState:
        """Rebuild a state; ``StateFormatError`` saying what is wrong otherwise (see ``serialize``)."""
        state = serialize.from_dict(self.deck, data, strict)
        return self.require_playable(state) if strict else state

    def card_zones(self, state: CastlesState) -> dict[str, list[int]]:
        """Every card by zone, as ``16 * owner + rank code``."""
        zones: dict[str, list[int]] = {}
        for p in range(2):
            base = OWNER_STRIDE * p
            for name, counts in (
                ("hand", state.hands[p]),
                ("saves", state.saves[p]),
                ("pile", state.pile[p]),
                ("discard", state.discard[p]),
            ):
                zones[f"{name}_{p}"] = [base + r for r, n in enumerate(counts) for _ in range(n)]
            zones[f"deck_{p}"] = [base + r for r in state.decks[p]]
        return zones

    def all_cards(self) -> list[int]:
        """Both decks as ``16 * owner + rank code`` (84 cards by default), sorted."""
        one = self.deck.ordered_cards()
        return sorted(one + [OWNER_STRIDE + r for r in one])


# The phase in which each kind of action is played.
_PHASE_OF_KIND: dict[str, Phase] = {
    "play": Phase.PLAY,
    "joker": Phase.PLAY,
    "save": Phase.CHOOSE_SAVES,
    "play_save": Phase.PLAY_SAVE,
    "discard": Phase.DISCARD,
}
