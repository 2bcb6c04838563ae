"""Cards are small ints inside the engines; these codecs turn them into text and back.

A standard 52-card deck: ``card = suit * 13 + rank_index`` with ranks ``A 2 3 ... 9 T J Q K``
(index 0..12) and suits ``c d h s`` (index 0..3). ``"Ah"`` is the ace of hearts, ``"Td"`` the
ten of diamonds. ``"10d"`` is accepted on input too.
"""

from __future__ import annotations

from collections.abc import Iterable

RANKS = "A23456789TJQK"
SUITS = "cdhs"
SUIT_SYMBOLS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
NUM_CARDS = 52
CARD_TEXT: tuple[str, ...] = tuple(RANKS[c % 13] + SUITS[c // 13] for c in range(NUM_CARDS))  # "Ac" ... "Ks"


def make_card(rank_index: int, suit_index: int) -> int:
    """The card of rank index 0..12 (A..K) and suit index 0..3 (c, d, h, s)."""
    return suit_index * 13 + rank_index


def rank_of(card: int) -> int:
    """Rank index 0..12 (A..K)."""
    return card % 13


def suit_of(card: int) -> int:
    """Suit index 0..3 (c, d, h, s)."""
    return card // 13


def card_to_str(card: int) -> str:
    """``"Ah"``, ``"Td"``, ``"Ks"``..."""
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card {card} is out of range 0..51")
    return CARD_TEXT[card]


def str_to_card(text: str) -> int:
    """Parse ``"Ah"``, ``"td"``, ``"10h"``; ``ValueError`` naming the accepted forms otherwise."""
    t = text.strip()
    if t[:2] == "10":
        t = "T" + t[2:]
    if len(t) != 2 or t[0].upper() not in RANKS or t[1].lower() not in SUITS:
        raise ValueError(
            f"{text!r} is not a card: write rank {' '.join(RANKS)} then suit {' '.join(SUITS)}, e.g. 'Ah', 'Td'"
        )
    return make_card(RANKS.index(t[0].upper()), SUITS.index(t[1].lower()))


def cards_to_str(cards: Iterable[int]) -> str:
    """Cards as space-separated text."""
    return " ".join(card_to_str(c) for c in cards)


def parse_cards(text: str) -> list[int]:
    """Space-separated cards, e.g. ``"Ah Td 2c"``."""
    return [str_to_card(t) for t in text.split()]
