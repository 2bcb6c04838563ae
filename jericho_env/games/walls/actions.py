"""The walls action encoding, written once: offsets, encode and decode helpers, and the action text.

56 actions, whatever the number of players. A wall card's type is ``colour * 5 + value index``
(values 1, 3, 4, 5, 7; colours brown, yellow, blue, red, white); ``TRUMPET`` (25) is the trumpet.

| actions | meaning | text |
| --- | --- | --- |
| 0..24 | build the wall card of type `a`; in the opening: lay it face down as the first wall card | `red-5` |
| 25 | opening, from a hand of seven trumpets only: lay a trumpet face down (it collapses at the reveal) | `T` |
| 25..29 | trumpet naming colour `a-25` | `T-red` |
| 30..55 | a card of type `a-30` (then 55 = trumpet) face down into the supply; also the opening | `supply-red-5` |
| | supply card and the round-start donations | `supply-T` |

The rules' hot path (``legal_actions``, ``apply``) uses the module constants below directly; the
rest goes through ``WallsActions``.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from jericho_env.games.walls.cards import COLOURS, NUM_COLOURS, NUM_WALL_TYPES, TRUMPET, card_to_str

BUILD_BASE = 0  # actions 0..24: build the wall card of type a (the first wall card in the opening)
TRUMPET_BASE = 25  # actions 25..29: trumpet naming colour a-25; 25 is also the opening's face-down trumpet
SUPPLY_BASE = 30  # actions 30..55: card type a-30 (wall card types, then the trumpet) into the supply
NUM_ACTIONS = SUPPLY_BASE + TRUMPET + 1  # 56
OPENING_TRUMPET = TRUMPET_BASE  # in the opening wall step, action 25 lays a trumpet face down


class WallsMove(NamedTuple):
    """A decoded walls action: what it does, the card type that leaves the hand and the colour it names or builds.

    ``colour`` is -1 for a trumpet put into the supply. Action 25 decodes as a trumpet naming brown;
    in the opening it lays a trumpet face down instead (``WallsActions.to_str(25, opening=True)``).
    """

    kind: Literal["build", "trumpet", "supply"]
    card: int
    colour: int


class WallsActions:
    """The action encoding of walls (the same for every number of players)."""

    __slots__ = ()

    num_actions = NUM_ACTIONS
    build_base = BUILD_BASE
    trumpet_base = TRUMPET_BASE
    supply_base = SUPPLY_BASE
    opening_trumpet = OPENING_TRUMPET

    # ----------------------------------------------------------------- encode
    def build(self, card: int) -> int:
        """Build (or, in the opening, lay face down) the wall card of type ``card`` (0..24)."""
        if not 0 <= card < NUM_WALL_TYPES:
            raise ValueError(f"only wall cards (types 0..{NUM_WALL_TYPES - 1}) are built, got card type {card}")
        return BUILD_BASE + card

    def trumpet(self, colour: int) -> int:
        """Blow a trumpet naming ``colour`` (0..4)."""
        if not 0 <= colour < NUM_COLOURS:
            raise ValueError(f"colour {colour} is out of range 0..{NUM_COLOURS - 1} ({', '.join(COLOURS)})")
        return TRUMPET_BASE + colour

    def supply(self, card: int) -> int:
        """Put a card of type ``card`` (0..24, or 25 for a trumpet) face down into the supply."""
        if not 0 <= card <= TRUMPET:
            raise ValueError(f"card type {card} cannot go into the supply: types are 0..{TRUMPET} (25 = trumpet)")
        return SUPPLY_BASE + card

    # ----------------------------------------------------------------- decode
    def decode(self, action: int) -> WallsMove:
        """What ``action`` does; ``ValueError`` naming the range if it is no action of this encoding."""
        if not 0 <= action < NUM_ACTIONS:
            raise ValueError(f"action {action} is out of range 0..{NUM_ACTIONS - 1}")
        if action < TRUMPET_BASE:
            return WallsMove("build", action, action // 5)
        if action < SUPPLY_BASE:
            return WallsMove("trumpet", TRUMPET, action - TRUMPET_BASE)
        card = action - SUPPLY_BASE
        return WallsMove("supply", card, card // 5 if card < NUM_WALL_TYPES else -1)

    def card_of(self, action: int) -> int:
        """The card type that ``action`` takes from the hand (``TRUMPET`` for a trumpet)."""
        return self.decode(action).card

    # ----------------------------------------------------------------- text
    def to_str(self, action: int, opening: bool = False) -> str:
        """``red-5`` (build, first wall card), ``T-red`` (trumpet), ``supply-red-5``; ``T`` for 25 in the opening."""
        move = self.decode(action)
        if move.kind == "build":
            return card_to_str(move.card)
        if move.kind == "trumpet":
            return "T" if opening and action == OPENING_TRUMPET else "T-" + COLOURS[move.colour]
        return "supply-" + card_to_str(move.card)

    def describe(self, action: int) -> str:
        """A state-free name of ``action`` with what it does."""
        if not 0 <= action < NUM_ACTIONS:
            return f"action {action} (out of range 0..{NUM_ACTIONS - 1})"
        move = self.decode(action)
        if move.kind == "build":
            return f"{card_to_str(move.card)}: build it (in the opening: first wall card)"
        if move.kind == "trumpet":
            return f"T-{COLOURS[move.colour]}: trumpet naming {COLOURS[move.colour]}"
        return f"supply-{card_to_str(move.card)}: put it face down into the supply"
