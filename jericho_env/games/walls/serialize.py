"""A walls state to and from a JSON-able dictionary, with cards as text (``"red-5"``, ``"T"``, ``"S"``).

Walls are lists of their cards, a trumpet in a wall written ``"T-<colour>"``; the draw pile is
listed from the top down. Derived figures (hand sizes, wall lengths, supply size) are not stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jericho_env.core.rules import StateFormatError
from jericho_env.games.walls.cards import (
    COLOURS,
    COPIES,
    NUM_SCORING,
    NUM_WALL_TYPES,
    SCORING,
    TRUMPET,
    TYPE_VALUE,
    card_to_str,
    counts_to_cards,
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
)


def wall_to_text(wall: list[int]) -> list[str]:
    """One seat's walls as card text, colour by colour, trumpets as ``T-<colour>``."""
    out: list[str] = []
    for colour in range(5):
        base = colour * WALL_STRIDE
        for vi in range(5):
            out += [card_to_str(colour * 5 + vi)] * wall[base + vi]
        out += ["T-" + COLOURS[colour]] * wall[base + TRUMPETS_AT]
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
        "hands": [_texts(counts_to_cards(h)) for h in s.hands],
        "opening": [card_to_str(c) if c >= 0 else None for c in s.opening],
        "walls": [wall_to_text(w) for w in s.walls],
        "won": [_texts(counts_to_cards(w)) for w in s.won],
        "supply_public": _texts(counts_to_cards(s.supply_public)),
        "supply_hidden": [_texts(counts_to_cards(h)) for h in s.supply_hidden],
        "discard": s.discard,
        "deck": _texts(reversed(s.deck)),
        "trumpet_log": [None if log is None else [list(e[:3]) + ([list(e[3])] if len(e) > 3 else []) for e in log]
                        for log in s.trumpet_log],
    }  # fmt: skip


def _texts(cards: Any) -> list[str]:
    return [card_to_str(c) for c in cards]


def from_dict(data: Mapping[str, Any], n: int) -> WallsState:
    """Rebuild a state; ``StateFormatError`` naming the first problem found."""
    try:
        return _from_dict(data, n)
    except StateFormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        raise StateFormatError(f"not a walls state: {e}") from e


def _int(data: Mapping[str, Any], key: str, lo: int, hi: int) -> int:
    v = data[key]
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise StateFormatError(f"walls state: {key} must be an int in {lo}..{hi}, got {v!r}")
    return v


def _seat_lists(data: Mapping[str, Any], key: str, n: int) -> list[Any]:
    v = data[key]
    if not isinstance(v, list) or len(v) != n:
        raise StateFormatError(f"walls state: {key} must be a list with one entry per seat ({n})")
    return v


def _counts(texts: Any, key: str, allowed: range, size: int) -> list[int]:
    if not isinstance(texts, list):
        raise StateFormatError(f"walls state: {key} must be a list of cards, got {texts!r}")
    counts = [0] * size
    for t in texts:
        c = str_to_card(t)
        if c not in allowed:
            raise StateFormatError(f"walls state: {key} cannot hold {t!r}")
        counts[c] += 1
    return counts


def _parse_wall(texts: Any, key: str) -> list[int]:
    if not isinstance(texts, list):
        raise StateFormatError(f"walls state: {key} must be a list of cards, got {texts!r}")
    wall = [0] * (5 * WALL_STRIDE)
    for t in texts:
        if isinstance(t, str) and t.lower().startswith("t-") and t[2:].lower() in COLOURS:
            base = COLOURS.index(t[2:].lower()) * WALL_STRIDE
            wall[base + TRUMPETS_AT] += 1
            wall[base + LENGTH_AT] += 2
            continue
        c = str_to_card(t)
        if c >= NUM_WALL_TYPES:
            raise StateFormatError(f"walls state: {key} holds {t!r}; a trumpet in a wall is written T-<colour>")
        base = (c // 5) * WALL_STRIDE
        wall[base + c % 5] += 1
        wall[base + LENGTH_AT] += TYPE_VALUE[c]
    for colour in range(5):
        base = colour * WALL_STRIDE
        if wall[base + TRUMPETS_AT] and not any(wall[base : base + 5]):
            raise StateFormatError(f"walls state: {key} has a {COLOURS[colour]} wall of trumpets only")
    return wall


def _from_dict(data: Mapping[str, Any], n: int) -> WallsState:
    if not isinstance(data, Mapping):
        raise StateFormatError(f"walls state must be a dict, got {type(data).__name__}")
    missing = [k for k in KEYS if k not in data]
    if missing:
        raise StateFormatError(f"walls state is missing {', '.join(missing)}; expected keys {', '.join(KEYS)}")
    if data["num_players"] != n:
        raise StateFormatError(f"walls state is for {data['num_players']!r} players, these rules for {n}")
    if data["phase"] not in PHASE_NAMES:
        raise StateFormatError(f"walls state: phase must be one of {', '.join(PHASE_NAMES)}, got {data['phase']!r}")
    s = WallsState(n)
    s.phase = Phase(PHASE_NAMES.index(data["phase"]))
    over = s.phase == Phase.OVER
    s.to_move = _int(data, "to_move", -1 if over else 0, -1 if over else n - 1)
    s.first_player = _int(data, "first_player", 0, n - 1)
    s.drawer = _int(data, "drawer", -1, n - 1)
    s.phase_left = _int(data, "phase_left", 0, n)
    s.scored = _int(data, "scorings", 0, NUM_SCORING)
    if (s.scored == NUM_SCORING) != over:
        raise StateFormatError("walls state: the game is over exactly when all 3 scorings are done")
    hand_types = range(TRUMPET + 1)
    s.hands = [_counts(h, f"hands[{i}]", hand_types, 26) for i, h in enumerate(_seat_lists(data, "hands", n))]
    s.hand_size = [sum(h) for h in s.hands]
    s.opening = []
    for i, t in enumerate(_seat_lists(data, "opening", n)):
        c = -1 if t is None else str_to_card(t)
        if c == SCORING:
            raise StateFormatError(f"walls state: opening[{i}] cannot be a scoring card")
        s.opening.append(c)
    s.walls = [_parse_wall(w, f"walls[{i}]") for i, w in enumerate(_seat_lists(data, "walls", n))]
    wall_types = range(NUM_WALL_TYPES)
    s.won = [_counts(w, f"won[{i}]", wall_types, 25) for i, w in enumerate(_seat_lists(data, "won", n))]
    s.supply_public = _counts(data["supply_public"], "supply_public", wall_types, 25)
    s.supply_hidden = [
        _counts(h, f"supply_hidden[{i}]", hand_types, 26) for i, h in enumerate(_seat_lists(data, "supply_hidden", n))
    ]
    s.hidden_count = [sum(h) for h in s.supply_hidden]
    s.supply_size = sum(s.supply_public) + sum(s.hidden_count)
    s.discard = _int(data, "discard", 0, COPIES[TRUMPET])
    deck = data["deck"]
    if not isinstance(deck, list):
        raise StateFormatError("walls state: deck must be a list of cards, top first")
    s.deck = [str_to_card(t) for t in reversed(deck)]
    if s.deck.count(SCORING) != NUM_SCORING - s.scored:
        raise StateFormatError(
            f"walls state: the deck must hold {NUM_SCORING - s.scored} scoring card(s) after {s.scored} scorings"
        )
    s.trumpet_log = _trumpet_log(data.get("trumpet_log", [None] * n), n)
    _check_conservation(s)
    return s


def _trumpet_log(v: Any, n: int) -> list[Any]:
    """The optional per-seat log of a player dealt seven trumpets (None for the others; see ``WallsState``)."""
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
    counts[TRUMPET] += s.discard
    counts[SCORING] += s.scored
    for c in s.deck:
        counts[c] += 1
    wrong = [
        f"{card_to_str(c)}: {counts[c]} (should be {COPIES[c]})" for c in range(len(COPIES)) if counts[c] != COPIES[c]
    ]
    if wrong:
        raise StateFormatError("walls state: the cards do not add up to the game's 110: " + "; ".join(wrong))
