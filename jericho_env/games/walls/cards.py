"""The walls deck as small ints, and their text.

A card is its *type*: ``colour * 5 + value_index`` for the 85 wall cards (types 0..24), ``25`` for
a trumpet and ``26`` for a scoring card. Copies of one type are interchangeable, so hands and
piles are counts over the 27 types. Text: ``"red-5"``, ``"T"`` (trumpet), ``"S"`` (scoring card);
a trumpet standing in a wall is written ``"T-red"``.
"""

from __future__ import annotations

from collections.abc import Iterable

COLOURS: tuple[str, ...] = ("brown", "yellow", "blue", "red", "white")
VALUES: tuple[int, ...] = (1, 3, 4, 5, 7)
COPIES_PER_VALUE: tuple[int, ...] = (4, 5, 4, 3, 1)
NUM_COLOURS = 5
NUM_VALUES = 5
NUM_WALL_TYPES = NUM_COLOURS * NUM_VALUES  # 25
TRUMPET = 25
SCORING = 26
NUM_TYPES = 27
NUM_TRUMPETS = 22
NUM_SCORING = 3
TRUMPET_VALUE = 2

#: how many physical copies of each card type the game has
COPIES: tuple[int, ...] = (*(COPIES_PER_VALUE[t % 5] for t in range(NUM_WALL_TYPES)), NUM_TRUMPETS, NUM_SCORING)
#: the value of each wall card type (trumpets count 2 in a wall)
TYPE_VALUE: tuple[int, ...] = (*(VALUES[t % 5] for t in range(NUM_WALL_TYPES)), TRUMPET_VALUE, 0)
NUM_CARDS = sum(COPIES)  # 110


def wall_card(colour: int, value_index: int) -> int:
    """The type of the wall card of colour 0..4 and value index 0..4 (values 1, 3, 4, 5, 7)."""
    return colour * NUM_VALUES + value_index


def colour_of(card: int) -> int:
    """Colour index 0..4 of a wall card type."""
    return card // NUM_VALUES


def value_of(card: int) -> int:
    """Face value of a wall card (1, 3, 4, 5 or 7), 2 for a trumpet."""
    return TYPE_VALUE[card]


CARD_TEXT: tuple[str, ...] = (*(f"{COLOURS[c // 5]}-{VALUES[c % 5]}" for c in range(NUM_WALL_TYPES)), "T", "S")


def card_to_str(card: int) -> str:
    """``"red-5"``, ``"T"`` or ``"S"``."""
    if not 0 <= card < NUM_TYPES:
        raise ValueError(f"card {card} is out of range 0..{NUM_TYPES - 1}")
    return CARD_TEXT[card]


def str_to_card(text: str) -> int:
    """Parse ``"red-5"``, ``"T"``, ``"S"`` (case-insensitive); ``ValueError`` naming the forms otherwise."""
    t = text.strip().lower()
    if t == "t":
        return TRUMPET
    if t == "s":
        return SCORING
    colour, _, value = t.partition("-")
    if colour in COLOURS and value.isdigit() and int(value) in VALUES:
        return wall_card(COLOURS.index(colour), VALUES.index(int(value)))
    raise ValueError(
        f"{text!r} is not a walls card: write colour-value with colour one of {', '.join(COLOURS)} and value one of "
        f"{', '.join(map(str, VALUES))} (e.g. 'red-5'), 'T' for a trumpet or 'S' for a scoring card"
    )


def cards_to_str(cards: Iterable[int]) -> str:
    """Cards as space-separated text."""
    return " ".join(card_to_str(c) for c in cards)


def parse_cards(text: str) -> list[int]:
    """Space-separated cards, e.g. ``"red-5 T yellow-1"``."""
    return [str_to_card(t) for t in text.split()]


def counts_to_cards(counts: Iterable[int]) -> list[int]:
    """A count vector over card types as a sorted list of cards."""
    out: list[int] = []
    for card, k in enumerate(counts):
        if k:
            out.extend([card] * k)
    return out


def all_cards() -> list[int]:
    """The 110 cards of the game, sorted."""
    return counts_to_cards(COPIES)
