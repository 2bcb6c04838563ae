"""Observation of walls: one flat float32 array from a seat's point of view.

Built as a Python list of raw counts in layout order, then scaled by a fixed vector: one numpy
allocation per call, no per-element numpy writes.

Version 1 (option ``obs_version=1``) appends what the seat can infer (``BELIEF_FIELDS``): the cards it
has not seen, by type, and the trumpets the others are known to hold (``trumpet_floor``).
"""

from __future__ import annotations

import numpy as np

from jericho_env.core.layout import Field, ObsLayout
from jericho_env.games.walls.cards import COPIES, NUM_CARDS, NUM_TRUMPETS
from jericho_env.games.walls.state import TRUMPETS_AT, WALL_SIZE, WALL_STRIDE, Phase, WallsState, trumpet_floor

MAX_HAND = 7
MAX_WALL_LENGTH = 57 + 2 * NUM_TRUMPETS  # every card of one colour and every trumpet: 101
WINDOW_SCALE = 40  # longer than any stretch of the pile the window field measures
_ONE_HOT_26 = [[1 if i == k else 0 for i in range(26)] for k in range(26)]
_ZERO_26 = [0] * 26
_OVER = Phase.OVER  # a module global: cheaper to read per call than the enum attribute


OBS_VERSIONS = (0, 1)
BELIEF_FIELDS = ("unseen", "unseen_count", "known_trumpets")
SEVEN_TRUMPETS = 7  # the hand of a player seen to open with a trumpet
_WALL_TYPE_AT = [c * WALL_STRIDE + i for c in range(5) for i in range(5)]  # wall card type t's count in a wall
_TRUMPETS_AT = [c * WALL_STRIDE + TRUMPETS_AT for c in range(5)]


def build_layout(n: int, version: int = 0) -> ObsLayout:
    """The observation layout for ``n`` players; ``version`` 1 appends ``BELIEF_FIELDS``."""
    belief = [
        Field(
            "unseen",
            (26,),
            "cards of each type this seat has not seen (in others' hands, face-down openings and supply cards, "
            "or the draw pile) / copies",
        ),
        Field("unseen_count", (1,), f"cards this seat has not seen, scoring cards aside / {NUM_CARDS}"),
        Field(
            "known_trumpets",
            (n - 1, 2),
            "each other seat, (seat+k)%n for k >= 1: trumpets it is known to hold in hand and face-down supply "
            "cards / 7, and 1 if one of them is known to be in the supply (only a seat seen to open with a trumpet)",
        ),
    ]
    return ObsLayout(
        [
            Field("hand", (26,), "own hand: count of each card type (25 wall cards colour-major, then T) / copies"),
            Field("own_opening", (26,), "own face-down first wall card before the reveal (one-hot by type)"),
            Field("own_supply", (26,), "cards this seat put face down into the supply since the last scoring / copies"),
            Field("hand_sizes", (n,), "hand size of each seat, self first then (seat+k)%n / 7"),
            Field("opening_laid", (n,), "1 if that seat has a face-down first wall card not yet revealed"),
            Field("supply_face_down", (n,), "face-down supply cards each seat put there since the last scoring / 110"),
            Field(
                "walls",
                (n, 5, 7),
                "each seat's wall of each colour: counts of values 1,3,4,5,7 / copies, trumpets / 22, length / 101",
            ),
            Field("won", (n, 25), "wall cards each seat has won, by type / copies"),
            Field(
                "supply_public",
                (25,),
                "supply cards everyone has seen (fallen from walls, left after a scoring) / copies",
            ),
            Field("supply_size", (1,), "cards in the supply, the trumpets of collapsed walls included / 110"),
            Field("deck_size", (1,), "cards in the draw pile / 110"),
            Field(
                "scoring_window",
                (2,),
                "cards to draw before the pile holding the next scoring card begins, and cards left in that pile / 40",
            ),
            Field("round", (3,), "round 1, 2, 3 (one-hot)"),
            Field("phase", (4,), "opening wall card, opening supply card, play, donation (one-hot)"),
            Field("to_move", (n,), "seat to move, self first then (seat+k)%n (one-hot)"),
            *(belief if version >= 1 else []),
        ]
    )


def build_scale(n: int, version: int = 0) -> np.ndarray:
    """Per-entry divisors turning raw counts into [0, 1], in layout order (``version`` as ``build_layout``)."""
    per_type = [1.0 / c for c in COPIES[:26]]
    wall = []
    for _ in range(5):
        wall += [1.0 / c for c in COPIES[:5]] + [1.0 / NUM_TRUMPETS, 1.0 / MAX_WALL_LENGTH]
    scale = (
        per_type
        + [1.0] * 26
        + per_type
        + [1.0 / MAX_HAND] * n
        + [1.0] * n
        + [1.0 / NUM_CARDS] * n
        + wall * n
        + per_type[:25] * n
        + per_type[:25]
        + [1.0 / NUM_CARDS] * 2
        + [1.0 / WINDOW_SCALE] * 2
        + [1.0] * (3 + 4 + n)
    )
    if version >= 1:
        scale += per_type + [1.0 / NUM_CARDS] + [1.0 / SEVEN_TRUMPETS, 1.0] * (n - 1)
    assert len(wall) == WALL_SIZE
    return np.array(scale, dtype=np.float32)


def encode(
    s: WallsState, seat: int, order: list[int], scale: np.ndarray, window: tuple[int, int], belief: bool = False
) -> np.ndarray:
    """The observation of ``seat`` (``order`` lists the seats self first, ``window`` the scoring window).

    ``belief``: version 1, with ``BELIEF_FIELDS`` (``scale`` must then be version 1's).
    """
    # every raw count is below 256, so bytearray() converts the list in one C loop (faster than np.array)
    return np.frombuffer(bytearray(raw_counts(s, seat, order, window, belief)), dtype=np.uint8) * scale


def encode_into(out: np.ndarray, raw: list[int], scale: np.ndarray) -> None:
    """Write ``raw`` (the ``raw_counts`` of ``len(out)`` observations, one after another) into ``out``, scaled.

    One conversion and one multiplication for the whole batch: the same floats as ``encode`` per row.
    """
    np.multiply(np.frombuffer(bytearray(raw), dtype=np.uint8).reshape(out.shape), scale, out=out)


def raw_counts(s: WallsState, seat: int, order: list[int], window: tuple[int, int], belief: bool = False) -> list[int]:
    """The unscaled counts of ``seat``'s observation, in layout order (each below 256); ``belief`` as ``encode``."""
    raw = s.hands[seat][:]
    op = s.opening[seat]
    raw += _ONE_HOT_26[op] if op >= 0 else _ZERO_26
    raw += s.supply_hidden[seat]
    raw += [s.hand_size[o] for o in order]
    raw += [1 if s.opening[o] >= 0 else 0 for o in order]
    raw += [s.hidden_count[o] for o in order]
    for o in order:
        raw += s.walls[o]
    for o in order:
        raw += s.won[o]
    raw += s.supply_public
    raw += [s.supply_size, len(s.deck), window[0], window[1]]
    rnd = [0, 0, 0]
    phase = [0, 0, 0, 0]
    to_move = [0] * s.n
    if s.phase != _OVER:
        rnd[s.scored] = 1
        phase[s.phase] = 1  # one-hot in Phase order
        to_move[(s.to_move - seat) % s.n] = 1
    raw += rnd
    raw += phase
    raw += to_move
    if belief:
        raw += belief_counts(s, seat, order)
    return raw


def belief_counts(s: WallsState, seat: int, order: list[int]) -> list[int]:
    """The unscaled counts of version 1's fields: ``unseen``, ``unseen_count``, ``known_trumpets``.

    A card is seen when it lies in the seat's hand, its face-down opening or its face-down supply cards,
    in any wall, among any seat's won cards, in the public supply, or among the trumpets out of the game
    or face up in the supply; every other card of the type is unseen.
    """
    walls = s.walls
    # per wall card type: the public copies (supply, every seat's won cards and walls), summed column-wise
    public = map(sum, zip(s.supply_public, *s.won, *([w[i] for i in _WALL_TYPE_AT] for w in walls), strict=True))
    trumpets = s.discard + s.supply_trumpets + sum(w[i] for w in walls for i in _TRUMPETS_AT)
    seen = zip(s.hands[seat], s.supply_hidden[seat], [*public, trumpets], strict=True)
    unseen = [c - h - d - p for c, (h, d, p) in zip(COPIES[:26], seen, strict=True)]
    if s.opening[seat] >= 0:
        unseen[s.opening[seat]] -= 1
    out = [*unseen, sum(unseen)]
    for o in order[1:]:
        floor = trumpet_floor(s.trumpet_log[o], seat)
        out += [floor[0], floor[1]] if floor is not None else [0, 0]
    return out
