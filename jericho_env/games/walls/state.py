"""The walls game state: counts over card types, kept up to date on every action."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from jericho_env.games.walls.cards import NUM_COLOURS


class Phase(IntEnum):
    """Phases of the game, in the order a round goes through them (the observation's one-hot order)."""

    OPEN_WALL = 0  # opening: the seat to move lays its first wall card face down
    OPEN_SUPPLY = 1  # opening: the same seat puts a card face down into the supply
    PLAY = 2  # ordinary turns: play one card, draw one
    DONATE = 3  # start of rounds 2 and 3: every seat puts one card face down into the supply
    OVER = 4


#: text of each phase (render, ``to_dict``), indexed by ``Phase``
PHASE_NAMES: tuple[str, ...] = ("opening-wall", "opening-supply", "play", "donation", "over")

# A seat's walls are one flat list: colour c occupies [c*7, c*7+7) holding the counts of values
# 1, 3, 4, 5, 7, then the number of trumpets, then the wall's length (sum of values, trumpets 2).
WALL_STRIDE = 7
TRUMPETS_AT = 5
LENGTH_AT = 6
WALL_SIZE = NUM_COLOURS * WALL_STRIDE


class WallsState:
    """A position of walls (mutable; ``WallsRules.apply`` changes it in place).

    Hands, hidden supply contributions, won cards and the public part of the supply are count
    vectors over card types (the public trumpets of the supply a count of their own); the draw pile
    is a list with its top card last.
    """

    __slots__ = (
        "deck",
        "discard",
        "drawer",
        "first_player",
        "hand_size",
        "hands",
        "hidden_count",
        "n",
        "opening",
        "phase",
        "phase_left",
        "scored",
        "supply_hidden",
        "supply_public",
        "supply_size",
        "supply_trumpets",
        "to_move",
        "trumpet_log",
        "walls",
        "won",
    )

    def __init__(self, n: int) -> None:
        self.n = n
        self.phase = Phase.OPEN_WALL
        self.to_move = 0
        self.first_player = 0
        self.drawer = -1  # seat that drew the latest scoring card (-1 before the first)
        self.phase_left = n  # seats still to act in the current opening or donation phase
        self.scored = 0  # scoring cards drawn so far (the round is scored + 1)
        self.hands: list[list[int]] = [[0] * 26 for _ in range(n)]
        self.hand_size: list[int] = [0] * n
        self.opening: list[int] = [-1] * n  # face-down first wall card of each seat, -1 if none
        self.walls: list[list[int]] = [[0] * WALL_SIZE for _ in range(n)]
        self.won: list[list[int]] = [[0] * 25 for _ in range(n)]
        self.supply_public: list[int] = [0] * 25  # supply cards everyone has seen (fallen or left after a scoring)
        self.supply_hidden: list[list[int]] = [[0] * 26 for _ in range(n)]  # face-down cards each seat put there
        self.hidden_count: list[int] = [0] * n
        self.supply_trumpets = 0  # trumpets of collapsed walls, face up in the supply until the next scoring
        self.supply_size = 0
        self.discard = 0  # trumpets out of the game
        self.deck: list[int] = []
        # per seat: None, or (after the reveal showed it opened with a trumpet, i.e. was dealt seven
        # trumpets) the public events that bear on how many of those trumpets it still holds: ("blow",)
        # and ("scoring", its face-down supply cards, trumpets in the whole supply, trumpets each seat put
        # there). Tuples, so copies share them.
        self.trumpet_log: list[tuple[tuple[Any, ...], ...] | None] = [None] * n

    def copy(self) -> WallsState:
        """An independent copy (lists copied one level deep, which is all there is)."""
        new = WallsState.__new__(WallsState)
        new.n = self.n
        new.phase = self.phase
        new.to_move = self.to_move
        new.first_player = self.first_player
        new.drawer = self.drawer
        new.phase_left = self.phase_left
        new.scored = self.scored
        new.hands = [h[:] for h in self.hands]
        new.hand_size = self.hand_size[:]
        new.opening = self.opening[:]
        new.walls = [w[:] for w in self.walls]
        new.won = [w[:] for w in self.won]
        new.supply_public = self.supply_public[:]
        new.supply_hidden = [h[:] for h in self.supply_hidden]
        new.hidden_count = self.hidden_count[:]
        new.supply_trumpets = self.supply_trumpets
        new.supply_size = self.supply_size
        new.discard = self.discard
        new.deck = self.deck[:]
        new.trumpet_log = self.trumpet_log[:]
        return new


def trumpet_floor(log: tuple[tuple[Any, ...], ...] | None, observer: int) -> tuple[int, int] | None:
    """(T, S) for a player dealt seven trumpets whose ``trumpet_log`` is ``log``, as ``observer`` knows them.

    ``None`` for any other player (``log`` None). After the opening it held 5 in hand and 1 in the supply
    (T=6, S=1). Blowing one may use a known trumpet (T-1, never below S). At a scoring its supply cards
    leave: at most min(its supply cards, T, trumpets in the whole supply less those ``observer`` put there)
    of the known ones went with them, and none is known to be in the supply any more (S=0).
    """
    if log is None:
        return None
    total, in_supply = 6, 1
    for event in log:
        if event[0] == "blow":
            total = max(in_supply, total - 1)
        else:
            _, supplied, trumpets, each = event
            total -= min(supplied, total, trumpets - each[observer])
            in_supply = 0
    return max(0, total), in_supply
