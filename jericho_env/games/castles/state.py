"""The castles game state: plain lists of counts, mutated in place by the rules, cheap to clone."""

from __future__ import annotations

from enum import IntEnum


class Phase(IntEnum):
    """Phases of the game: what the seat to move is asked to do (the observation's one-hot order)."""

    CHOOSE_SAVES = 0  # set-up: put one hand card face down as a save (three times per player)
    PLAY = 1  # play cards from hand (or, on a joker's extra turn, any card)
    DISCARD = 2  # stuck with a short deck: discard one hand card (as many times as cards left in the deck)
    PLAY_SAVE = 3  # stuck: turn over one save of your choice
    OVER = 4


#: text of each phase (``to_dict``, ``repr``), indexed by ``Phase``
PHASE_NAMES = ("choose_saves", "play", "discard", "play_save", "over")

# Why the game ended.
NO_REASON = 0
EMPTIED = 1  # the winner has no cards left in deck and hand
STUCK = 2  # the loser could not play and had no save left
REASON_NAMES = ("", "emptied", "stuck")


class CastlesState:
    """Everything about a game of castles; per-seat lists are indexed by seat, counts by rank code.

    ``decks[p]`` lists rank codes bottom to top (the top card is the last one, so a draw is a
    ``pop``). ``pile[p]`` counts seat p's cards that have been played (including the card(s) to
    beat); ``discard[p]`` those discarded when stuck. ``beat`` is the rank code of the card(s) to
    beat (-1 during set-up), ``beat_n`` how many, ``beat_by`` who played them. A joker on top
    means its player is on the extra turn and may play any card.

    What the players' forced moves revealed about a hand (public knowledge, kept for ``determinize``):
    ``barred[p]`` is a bit mask of rank codes seat p's hand cannot hold (set when p was stuck with
    an empty deck and kept its hand), and at least ``need_n[p]`` of p's hand cards cannot be played
    on rank ``need_beat[p]`` (set when p was stuck with a short deck: the cards it kept could not
    answer ``need_beat[p]``).
    """

    __slots__ = (
        "barred",
        "beat",
        "beat_by",
        "beat_n",
        "decks",
        "discard",
        "first",
        "hand_n",
        "hands",
        "need_beat",
        "need_n",
        "pending",
        "phase",
        "pile",
        "reason",
        "save_n",
        "saves",
        "to_move",
        "winner",
    )

    def __init__(
        self,
        hands: list[list[int]],
        saves: list[list[int]],
        decks: list[list[int]],
        pile: list[list[int]],
        discard: list[list[int]],
        beat: int,
        beat_n: int,
        beat_by: int,
        first: int,
        to_move: int,
        phase: Phase,
        pending: int,
        winner: int = -1,
        reason: int = NO_REASON,
        barred: list[int] | None = None,
        need_n: list[int] | None = None,
        need_beat: list[int] | None = None,
    ) -> None:
        self.hands = hands
        self.hand_n = [sum(h) for h in hands]
        self.saves = saves
        self.save_n = [sum(s) for s in saves]
        self.decks = decks
        self.pile = pile
        self.discard = discard
        self.beat = beat
        self.beat_n = beat_n
        self.beat_by = beat_by
        self.first = first
        self.to_move = to_move
        self.phase = phase
        self.pending = pending
        self.winner = winner
        self.reason = reason
        self.barred = barred if barred is not None else [0, 0]
        self.need_n = need_n if need_n is not None else [0, 0]
        self.need_beat = need_beat if need_beat is not None else [-1, -1]

    def clone(self) -> CastlesState:
        """An independent copy (lists copied one level deep: they hold ints only)."""
        new = object.__new__(CastlesState)
        new.hands = [self.hands[0][:], self.hands[1][:]]
        new.hand_n = self.hand_n[:]
        new.saves = [self.saves[0][:], self.saves[1][:]]
        new.save_n = self.save_n[:]
        new.decks = [self.decks[0][:], self.decks[1][:]]
        new.pile = [self.pile[0][:], self.pile[1][:]]
        new.discard = [self.discard[0][:], self.discard[1][:]]
        new.beat = self.beat
        new.beat_n = self.beat_n
        new.beat_by = self.beat_by
        new.first = self.first
        new.to_move = self.to_move
        new.phase = self.phase
        new.pending = self.pending
        new.winner = self.winner
        new.reason = self.reason
        new.barred = self.barred[:]
        new.need_n = self.need_n[:]
        new.need_beat = self.need_beat[:]
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CastlesState):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __getstate__(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__slots__}

    def __setstate__(self, data: dict[str, object]) -> None:
        for k, v in data.items():
            setattr(self, k, v)

    def __repr__(self) -> str:
        return f"CastlesState(phase={PHASE_NAMES[self.phase]}, to_move={self.to_move}, beat={self.beat}x{self.beat_n})"
