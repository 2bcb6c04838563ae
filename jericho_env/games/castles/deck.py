"""The castles decks: rank codes, their order, what may be played on what, and card ids.

Suits play no part in the rules, so a card is its **rank code**: ``0 .. R-1`` for the ranks
A, 2, 3, ... (A..5, A..10 or A..K; ``R = ranks``) and ``R`` for the joker. Hands, saves and
piles are lists of counts indexed by rank code. Only the conservation test needs to tell the
two decks apart: there a card is ``16 * owner + rank_code`` (``owner`` the seat whose deck it
belongs to; cards never change owner). ``all_cards`` is then a multiset: 84 ints by default.
"""

from __future__ import annotations

from dataclasses import dataclass, field

RANK_LETTERS = "A23456789TJQK"
JOKER_NAME = "joker"
OWNER_STRIDE = 16  # card id = OWNER_STRIDE * owner + rank code; rank codes stay below 14


def rank_name(code: int, ranks: int) -> str:
    """``"A"``, ``"7"``, ``"T"`` (ten), ``"J"``, ``"Q"``, ``"K"``, or ``"joker"``."""
    return JOKER_NAME if code == ranks else RANK_LETTERS[code]


@dataclass(frozen=True)
class DeckSpec:
    """One player's deck under the options: rank range, copies per rank, jokers, rank order."""

    ranks: int = 10
    copies: int = 4
    jokers: int = 2
    reversed_order: bool = False
    allowed: tuple[tuple[int, ...], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # allowed[b]: the ranks (not the joker) that may be played on a top card of rank code b.
        table = tuple(tuple(r for r in range(self.ranks) if self.beats(r, b)) for b in range(self.ranks + 1))
        object.__setattr__(self, "allowed", table)

    @property
    def joker(self) -> int:
        """The joker's rank code."""
        return self.ranks

    @property
    def size(self) -> int:
        """Cards in one player's deck (42 by default)."""
        return self.ranks * self.copies + self.jokers

    def strength(self, code: int) -> int:
        """Position of rank ``code`` in the play order: 0 lowest, ``ranks - 1`` highest."""
        return self.ranks - 1 - code if self.reversed_order else code

    def beats(self, code: int, top: int) -> bool:
        """Whether rank ``code`` may be played on a top card of rank ``top`` (joker rules aside).

        Equal or higher, or the lowest rank on the highest (an Ace on a 10: the cycle restarts,
        because the Ace is then the card to beat and everything is equal or higher than it).
        """
        if top == self.joker:
            return True
        s, t = self.strength(code), self.strength(top)
        return s >= t or (s == 0 and t == self.ranks - 1)

    def composition(self) -> list[int]:
        """Copies of each rank code in one deck (jokers last)."""
        return [self.copies] * self.ranks + [self.jokers]

    def ordered_cards(self) -> list[int]:
        """One unshuffled deck as rank codes."""
        return [code for code, n in enumerate(self.composition()) for _ in range(n)]

    def name(self, code: int) -> str:
        """Text of rank ``code``."""
        return rank_name(code, self.ranks)

    def code_of(self, text: str) -> int:
        """Rank code of ``"A"``, ``"10"``/``"T"``, ``"joker"``...; ``ValueError`` listing the names otherwise."""
        t = text.strip().upper()
        if t == "10":
            t = "T"
        names = [self.name(c).upper() for c in range(self.ranks + 1)]
        if t not in names:
            known = ", ".join(self.name(c) for c in range(self.ranks + 1))
            raise ValueError(f"{text!r} is not a rank of this deck; ranks are {known}")
        return names.index(t)
