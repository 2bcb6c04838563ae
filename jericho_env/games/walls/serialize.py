"""A walls state to and from a JSON-able dictionary, with cards as text (``"red-5"``, ``"T"``, ``"S"``).

Walls are lists of their cards, a trumpet in a wall written ``"T-<colour>"``; the public part of the
supply holds the trumpets of collapsed walls as ``"T"``; the draw pile is listed from the top down.
Derived figures (hand sizes, wall lengths, supply size) are not stored.

``from_dict`` refuses, with a ``StateFormatError`` naming the first broken condition, any dictionary
that is malformed (a missing key, as every key is required and none is given a default, or an unknown
key; wrong types, unknown cards), that loses or adds a card, and (``strict=True``, the default) any that
play cannot reach: hand sizes, face-down openings and supply cards that do not fit the phase and round,
a phase or seat to move out of turn, scoring cards outside their piles. ``strict=False`` keeps the first
two kinds only, for positions made by hand in tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jericho_env.core.rules import StateFormatError
from jericho_env.core.validate import require_keys, require_mapping, strict_int, strict_list, text_of
from jericho_env.games.walls.cards import (
    CARD_TEXT,
    COLOURS,
    COPIES,
    NUM_CARDS,
    NUM_SCORING,
    NUM_WALL_TYPES,
    SCORING,
    TRUMPET,
    TYPE_VALUE,
    card_to_str,
    str_to_card,
)
from jericho_env.games.walls.state import LENGTH_AT, PHASE_NAMES, TRUMPETS_AT, WALL_STRIDE, Phase, WallsState

KEYS = (
    "num_players",
    "phase",
    "to_move",
    "first_player",
    "drawer",
    "phase_left",
    "scorings",
    "hands",
    "opening",
    "walls",
    "won",
    "supply_public",
    "supply_hidden",
    "discard",
    "deck",
    "trumpet_log",
)


TRUMPET_TEXT = tuple("T-" + colour for colour in COLOURS)


def wall_to_text(wall: list[int]) -> list[str]:
    """One seat's walls as card text, colour by colour, trumpets as ``T-<colour>``."""
    out: list[str] = []
    for colour in range(5):
        base = colour * WALL_STRIDE
        for vi in range(5):
            out += [CARD_TEXT[colour * 5 + vi]] * wall[base + vi]
        out += [TRUMPET_TEXT[colour]] * wall[base + TRUMPETS_AT]
    return out


def to_dict(s: WallsState) -> dict[str, Any]:
    """The state as a JSON-able dictionary."""
    return {
        "num_players": s.n,
        "phase": PHASE_NAMES[s.phase],
        "to_move": s.to_move,
        "first_player": s.first_player,
        "drawer": s.drawer,
        "phase_left": s.phase_left,
        "scorings": s.scored,
        "hands": [_count_texts(h) for h in s.hands],
        "opening": [card_to_str(c) if c >= 0 else None for c in s.opening],
        "walls": [wall_to_text(w) for w in s.walls],
        "won": [_count_texts(w) for w in s.won],
        "supply_public": _count_texts(s.supply_public) + ["T"] * s.supply_trumpets,
        "supply_hidden": [_count_texts(h) for h in s.supply_hidden],
        "discard": s.discard,
        "deck": _texts(reversed(s.deck)),
        "trumpet_log": [None if log is None else [list(e[:3]) + ([list(e[3])] if len(e) > 3 else []) for e in log]
                        for log in s.trumpet_log],
    }  # fmt: skip


def _texts(cards: Any) -> list[str]:
    return [card_to_str(c) for c in cards]


def _count_texts(counts: list[int]) -> list[str]:
    """A count vector over card types as the sorted cards' text (``_texts(counts_to_cards(counts))``)."""
    return [CARD_TEXT[card] for card, k in enumerate(counts) if k for _ in range(k)]


def from_dict(data: Mapping[str, Any], n: int, piles: list[int], strict: bool = True) -> WallsState:
    """Rebuild a state; ``StateFormatError`` naming the first problem found (see the module docstring)."""
    try:
        s = _from_dict(data, n)
        if strict:
            _check_reachable(s, piles)
        return s
    except StateFormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        raise StateFormatError(f"walls state: {e}") from e


def _fail(message: str) -> StateFormatError:
    return StateFormatError("walls state: " + message)


def _seat_lists(data: Mapping[str, Any], key: str, n: int) -> list[Any]:
    v = data[key]
    if not isinstance(v, list) or len(v) != n:
        raise _fail(f"{key} must be a list with one entry per seat ({n}), got {v!r}")
    return v


def _card(t: Any, key: str) -> int:
    return str_to_card(text_of("walls", t, key))


def _counts(texts: Any, key: str, allowed: range, size: int) -> list[int]:
    counts = [0] * size
    for t in strict_list("walls", texts, key):
        c = _card(t, key)
        if c not in allowed:
            raise _fail(f"{key} cannot hold {t!r}")
        counts[c] += 1
    return counts


def _parse_wall(texts: Any, key: str) -> list[int]:
    wall = [0] * (5 * WALL_STRIDE)
    for t in strict_list("walls", texts, key):
        if isinstance(t, str) and t.lower().startswith("t-") and t[2:].lower() in COLOURS:
            base = COLOURS.index(t[2:].lower()) * WALL_STRIDE
            wall[base + TRUMPETS_AT] += 1
            wall[base + LENGTH_AT] += 2
            continue
        c = _card(t, key)
        if c >= NUM_WALL_TYPES:
            raise _fail(f"{key} holds {t!r}; a trumpet in a wall is written T-<colour>")
        base = (c // 5) * WALL_STRIDE
        wall[base + c % 5] += 1
        wall[base + LENGTH_AT] += TYPE_VALUE[c]
    for colour in range(5):
        base = colour * WALL_STRIDE
        if wall[base + TRUMPETS_AT] and not any(wall[base : base + 5]):
            raise _fail(f"{key} has a {COLOURS[colour]} wall of trumpets only (such a wall collapses)")
    return wall


def _from_dict(data: Mapping[str, Any], n: int) -> WallsState:
    """Parse every field and check the types, ranges and card conservation."""
    data = require_mapping("walls", data)
    require_keys("walls", data, KEYS)
    if not (isinstance(data["num_players"], int) and not isinstance(data["num_players"], bool)) or (
        data["num_players"] != n
    ):
        raise _fail(f"it is for {data['num_players']!r} players, these rules for {n}")
    if data["phase"] not in PHASE_NAMES:
        raise _fail(f"phase must be one of {', '.join(PHASE_NAMES)}, got {data['phase']!r}")
    s = WallsState(n)
    s.phase = Phase(PHASE_NAMES.index(data["phase"]))
    over = s.phase == Phase.OVER
    s.to_move = strict_int("walls", data, "to_move", -1 if over else 0, -1 if over else n - 1)
    s.first_player = strict_int("walls", data, "first_player", 0, n - 1)
    s.drawer = strict_int("walls", data, "drawer", -1, n - 1)
    s.phase_left = strict_int("walls", data, "phase_left", 0, n)
    s.scored = strict_int("walls", data, "scorings", 0, NUM_SCORING)
    if (s.scored == NUM_SCORING) != over:
        raise _fail("the game is over exactly when all 3 scorings are done")
    hand_types = range(TRUMPET + 1)
    s.hands = [_counts(h, f"hands[{i}]", hand_types, 26) for i, h in enumerate(_seat_lists(data, "hands", n))]
    s.hand_size = [sum(h) for h in s.hands]
    s.opening = []
    for i, t in enumerate(_seat_lists(data, "opening", n)):
        c = -1 if t is None else _card(t, f"opening[{i}]")
        if c == SCORING:
            raise _fail(f"opening[{i}] cannot be a scoring card")
        s.opening.append(c)
    s.walls = [_parse_wall(w, f"walls[{i}]") for i, w in enumerate(_seat_lists(data, "walls", n))]
    wall_types = range(NUM_WALL_TYPES)
    s.won = [_counts(w, f"won[{i}]", wall_types, 25) for i, w in enumerate(_seat_lists(data, "won", n))]
    public = _counts(data["supply_public"], "supply_public", hand_types, 26)
    s.supply_public, s.supply_trumpets = public[:NUM_WALL_TYPES], public[TRUMPET]
    s.supply_hidden = [
        _counts(h, f"supply_hidden[{i}]", hand_types, 26) for i, h in enumerate(_seat_lists(data, "supply_hidden", n))
    ]
    s.hidden_count = [sum(h) for h in s.supply_hidden]
    s.supply_size = sum(s.supply_public) + s.supply_trumpets + sum(s.hidden_count)
    s.discard = strict_int("walls", data, "discard", 0, COPIES[TRUMPET])
    s.deck = [_card(t, "deck") for t in reversed(strict_list("walls", data["deck"], "deck"))]
    if s.deck.count(SCORING) != NUM_SCORING - s.scored:
        raise _fail(f"the deck must hold {NUM_SCORING - s.scored} scoring card(s) after {s.scored} scorings")
    s.trumpet_log = _trumpet_log(data["trumpet_log"], n)
    _check_conservation(s)
    return s


def _trumpet_log(v: Any, n: int) -> list[Any]:
    """The per-seat log of a player dealt seven trumpets (null for the others, and for every seat in a position
    written by hand; see ``WallsState``)."""
    if not isinstance(v, list) or len(v) != n:
        raise StateFormatError(f"walls state: trumpet_log must be a list of {n} entries (null or a list of events)")
    out: list[Any] = []
    for log in v:
        if log is None:
            out.append(None)
            continue
        events: list[tuple[Any, ...]] = []
        for e in log if isinstance(log, list) else [None]:
            if e == ["blow"]:
                events.append(("blow",))
            elif (
                isinstance(e, list) and len(e) == 4 and e[0] == "scoring"
                and all(isinstance(x, int) for x in e[1:3]) and isinstance(e[3], list) and len(e[3]) == n
            ):  # fmt: skip
                events.append(("scoring", e[1], e[2], tuple(e[3])))
            else:
                raise StateFormatError(
                    f"walls state: bad trumpet_log event {e!r} (['blow'] or ['scoring', n, n, [n...]])"
                )
        out.append(tuple(events))
    return out


def _check_conservation(s: WallsState) -> None:
    counts = [0] * len(COPIES)
    for seat in range(s.n):
        for c in range(26):
            counts[c] += s.hands[seat][c] + s.supply_hidden[seat][c]
        for c in range(NUM_WALL_TYPES):
            counts[c] += s.won[seat][c]
            counts[c] += s.walls[seat][(c // 5) * WALL_STRIDE + c % 5]
        counts[TRUMPET] += sum(s.walls[seat][c * WALL_STRIDE + TRUMPETS_AT] for c in range(5))
        if s.opening[seat] >= 0:
            counts[s.opening[seat]] += 1
    for c in range(NUM_WALL_TYPES):
        counts[c] += s.supply_public[c]
    counts[TRUMPET] += s.discard + s.supply_trumpets
    counts[SCORING] += s.scored
    for c in s.deck:
        counts[c] += 1
    wrong = [
        f"{card_to_str(c)}: {counts[c]} (should be {COPIES[c]})" for c in range(len(COPIES)) if counts[c] != COPIES[c]
    ]
    if wrong:
        raise _fail("the cards do not add up to the game's 110: " + "; ".join(wrong))


def _acted(s: WallsState) -> list[int]:
    """Seats that have finished the current opening or donation phase, in the order they acted."""
    start = s.first_player if s.phase in (Phase.OPEN_WALL, Phase.OPEN_SUPPLY) else (s.drawer + 1) % s.n
    return [(start + k) % s.n for k in range(s.n - s.phase_left)]


def _check_reachable(s: WallsState, piles: list[int]) -> None:
    """What every state reached by play satisfies, beyond format and conservation; the first failure raised."""
    n, phase, name = s.n, s.phase, PHASE_NAMES[s.phase]
    opening = phase in (Phase.OPEN_WALL, Phase.OPEN_SUPPLY)
    if (s.drawer >= 0) != (s.scored > 0):
        raise _fail(f"drawer must be -1 before the first scoring and a seat after it, got {s.drawer} after {s.scored}")
    if opening and s.scored:
        raise _fail(f"phase {name!r} comes before any scoring, but scorings is {s.scored}")
    if phase == Phase.DONATE and s.scored not in (1, 2):
        raise _fail(f"the donation follows scoring 1 or 2, but scorings is {s.scored}")
    counted = opening or phase == Phase.DONATE
    if counted and not 1 <= s.phase_left <= n:
        raise _fail(f"phase {name!r} needs phase_left in 1..{n}, got {s.phase_left}")
    if not counted and s.phase_left:
        raise _fail(f"phase {name!r} needs phase_left 0, got {s.phase_left}")
    acted = _acted(s) if counted else []
    if counted:
        mover = (acted[-1] + 1) % n if acted else (s.first_player if opening else (s.drawer + 1) % n)
        if s.to_move != mover:
            raise _fail(f"in phase {name!r} with phase_left {s.phase_left} seat {mover} is to move, not {s.to_move}")
    # face-down first wall cards: laid by the seats done with the opening and by the mover in its second step
    laid = set(acted) if opening else set()
    if phase == Phase.OPEN_SUPPLY:
        laid.add(s.to_move)
    for seat in range(n):
        if (s.opening[seat] >= 0) != (seat in laid):
            what = "a face-down first wall card" if seat in laid else "no face-down first wall card"
            raise _fail(f"in phase {name!r} seat {seat} has {what} to reveal, opening[{seat}] says otherwise")
        if s.opening[seat] == TRUMPET and any(s.hands[seat][:NUM_WALL_TYPES]):
            raise _fail(f"opening[{seat}] is a trumpet, laid only from a hand without wall cards")
    for seat in range(n):
        want = _hand_size(s, seat, acted)
        if s.hand_size[seat] != want:
            raise _fail(
                f"seat {seat} holds {s.hand_size[seat]} cards; in phase {name!r} after {s.scored} scorings: {want}"
            )
        low, high = _hidden_range(s, seat, acted)
        if not low <= s.hidden_count[seat] <= high:
            allowed = str(low) if low == high else f"at least {low}"
            raise _fail(
                f"seat {seat} has {s.hidden_count[seat]} face-down supply card(s); in phase {name!r}: {allowed}"
            )
    if s.scored == 0 and any(any(w) for w in s.won):
        raise _fail("no card is won before the first scoring")
    if opening and (any(any(w) for w in s.walls) or any(s.supply_public) or s.supply_trumpets or s.discard):
        raise _fail(f"in phase {name!r} no wall stands, no card is face up in the supply and no trumpet is discarded")
    if phase in (Phase.DONATE, Phase.OVER) and s.supply_trumpets:
        raise _fail(
            f"in phase {name!r} a scoring has just thrown the supply's trumpets out; it holds {s.supply_trumpets}"
        )
    if phase == Phase.OVER:
        for seat in range(n):
            if any(s.walls[seat][c * WALL_STRIDE] for c in range(5)):
                raise _fail(f"the game is over, so the value-1 cards of walls[{seat}] belong with the cards won")
    _check_deck(s, piles)


def _hand_size(s: WallsState, seat: int, acted: list[int]) -> int:
    """The hand size of ``seat`` that the phase and round imply."""
    if s.phase == Phase.OPEN_WALL:
        return 5 if seat in acted else 7
    if s.phase == Phase.OPEN_SUPPLY:
        return 5 if seat in acted else (6 if seat == s.to_move else 7)
    if s.phase == Phase.DONATE:
        return 5 - s.scored if seat in acted else 6 - s.scored
    if s.phase == Phase.OVER:
        return 2 if seat == s.drawer else 3  # the third scoring card has no replacement
    return 5 - s.scored


def _hidden_range(s: WallsState, seat: int, acted: list[int]) -> tuple[int, int]:
    """How many face-down supply cards ``seat`` can have put there since the last scoring."""
    if s.phase in (Phase.OPEN_WALL, Phase.OPEN_SUPPLY, Phase.DONATE):
        k = 1 if seat in acted else 0
        return k, k
    if s.phase == Phase.OVER:
        return 0, 0
    return 1, NUM_CARDS  # the opening or donation card, then any number of plays


def _check_deck(s: WallsState, piles: list[int]) -> None:
    """The draw pile: untouched in the opening, each scoring card still to come inside its own pile."""
    size = sum(piles)
    drawn = size - len(s.deck)
    if s.phase in (Phase.OPEN_WALL, Phase.OPEN_SUPPLY) and drawn:
        raise _fail(f"nobody draws in the opening, so the deck holds all {size} cards, not {len(s.deck)}")
    starts = [sum(piles[:p]) for p in range(len(piles))]
    ranges = [(starts[p], starts[p] + piles[p]) for p in (1, 3, 5)]
    if s.scored:
        start = ranges[s.scored - 1][0]
        need = start + (1 if s.scored == NUM_SCORING else 2)  # the scoring card and its replacement
        if drawn < need:
            raise _fail(f"scoring {s.scored} comes from the pile starting at card {start + 1}, but only {drawn} drawn")
    top_down = s.deck[::-1]
    at = [i for i, c in enumerate(top_down) if c == SCORING]
    for k, i in zip(range(s.scored, NUM_SCORING), at, strict=True):
        lo, hi = ranges[k]
        if not lo <= drawn + i < hi:
            raise _fail(
                f"scoring card {k + 1} is card {drawn + i + 1} of the deck as dealt, outside its pile "
                f"(cards {lo + 1}..{hi})"
            )
