"""The castles action encoding, written once: offsets, encode and decode helpers, and the action text.

``R`` = ``ranks``; ``C`` = copies of a rank per deck (4, or 2 with ``small_deck``); rank codes
``0..R-1`` are A..top rank and code ``R`` is the joker. Default offsets (A-10, full deck) in brackets.

| action | meaning | text |
| --- | --- | --- |
| `r*C + k-1` [0-39] | play k cards of rank r (k = 1..C) | `"7"`, `"7x2"`, `"Tx4"` |
| `R*C` [40] | play a joker | `"joker"` |
| `R*C+1 + code` [41-51] | set-up: put a card face down as a save | `"save 7"`, `"save joker"` |
| `R*C+R+2 + code` [52-62] | stuck: turn over a save | `"play save 7"` |
| `R*C+2R+3 + code` [63-73] | stuck with a short deck: discard a card | `"discard 7"` |

The rules' hot path (``legal_actions``, ``apply``) reads the offsets from here and does the
arithmetic inline; everything else goes through ``decode``.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from jericho_env.games.castles.deck import DeckSpec

MoveKind = Literal["play", "joker", "save", "play_save", "discard"]


class CastlesMove(NamedTuple):
    """A decoded castles action: what it does, the rank code it concerns and how many cards (``n_cards``).

    ``kind`` is ``"play"`` (``n_cards`` cards of ``rank`` from the hand), ``"joker"`` (play a joker),
    ``"save"`` (set-up: put ``rank`` face down as a save), ``"play_save"`` (stuck: turn over a save
    of ``rank``) or ``"discard"`` (short deck: discard a ``rank``); ``n_cards`` is 1 except for plays.
    """

    kind: MoveKind
    rank: int
    n_cards: int = 1


class CastlesActions:
    """The action encoding of castles for one deck (``ranks``, copies per rank): offsets and text."""

    __slots__ = ("copies", "deck", "discard_base", "joker", "num_actions", "play_save_base", "ranks", "save_base")

    def __init__(self, deck: DeckSpec) -> None:
        self.deck = deck
        self.ranks = deck.ranks
        self.copies = deck.copies
        self.joker = deck.ranks * deck.copies  # play a joker
        self.save_base = self.joker + 1  # + rank code: choose a save
        self.play_save_base = self.save_base + deck.ranks + 1  # + rank code: turn over a save
        self.discard_base = self.play_save_base + deck.ranks + 1  # + rank code: discard a card
        self.num_actions = self.discard_base + deck.ranks + 1

    # ----------------------------------------------------------------- encode
    def play(self, rank: int, n_cards: int = 1) -> int:
        """Play ``n_cards`` cards (1..copies) of rank code ``rank`` (0..ranks-1; the joker is ``joker``)."""
        if not 0 <= rank < self.ranks:
            raise ValueError(
                f"rank code {rank} is out of range 0..{self.ranks - 1} (a joker is played by its own action)"
            )
        if not 1 <= n_cards <= self.copies:
            raise ValueError(f"a play puts down 1..{self.copies} cards of one rank, got {n_cards}")
        return rank * self.copies + n_cards - 1

    def save(self, code: int) -> int:
        """Set-up: put a card of rank code ``code`` (the joker included) face down as a save."""
        return self.save_base + self._code(code)

    def play_save(self, code: int) -> int:
        """Stuck: turn over a save of rank code ``code``."""
        return self.play_save_base + self._code(code)

    def discard(self, code: int) -> int:
        """Stuck with a short deck: discard a hand card of rank code ``code``."""
        return self.discard_base + self._code(code)

    def _code(self, code: int) -> int:
        if not 0 <= code <= self.ranks:
            raise ValueError(f"rank code {code} is out of range 0..{self.ranks} ({self.ranks} = joker)")
        return code

    # ----------------------------------------------------------------- decode
    def decode(self, action: int) -> CastlesMove:
        """What ``action`` does; ``ValueError`` naming the range if it is no action of this encoding."""
        if not 0 <= action < self.num_actions:
            raise ValueError(f"action {action} is out of range 0..{self.num_actions - 1}")
        if action < self.joker:
            r, k = divmod(action, self.copies)
            return CastlesMove("play", r, k + 1)
        if action == self.joker:
            return CastlesMove("joker", self.ranks)
        if action < self.play_save_base:
            return CastlesMove("save", action - self.save_base)
        if action < self.discard_base:
            return CastlesMove("play_save", action - self.play_save_base)
        return CastlesMove("discard", action - self.discard_base)

    # ----------------------------------------------------------------- text
    def to_str(self, action: int) -> str:
        """Short typeable text: ``"7"``, ``"7x2"``, ``"joker"``, ``"save 7"``, ``"play save 7"``, ``"discard 7"``."""
        move = self.decode(action)
        name = self.deck.name(move.rank)
        if move.kind == "play":
            return name if move.n_cards == 1 else f"{name}x{move.n_cards}"
        if move.kind == "joker":
            return "joker"
        if move.kind == "save":
            return f"save {name}"
        if move.kind == "play_save":
            return f"play save {name}"
        return f"discard {name}"

    def describe(self, action: int) -> str:
        """State-free name of ``action``."""
        if not 0 <= action < self.num_actions:
            return f"action {action} (out of range)"
        move = self.decode(action)
        if move.kind in ("play", "joker"):
            return "play " + self.to_str(action)
        if move.kind == "save":
            return f"choose a save: {self.deck.name(move.rank)}"
        return self.to_str(action)
