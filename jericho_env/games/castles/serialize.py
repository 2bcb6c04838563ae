"""A castles state to and from a JSON-able dictionary (``to_dict`` / ``from_dict``), checked on the way in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jericho_env.core.rules import StateFormatError
from jericho_env.games.castles.deck import DeckSpec
from jericho_env.games.castles.state import NO_REASON, PHASE_NAMES, REASON_NAMES, CastlesState, Phase

KEYS = (
    "hands",
    "saves",
    "decks",
    "pile",
    "discard",
    "beat",
    "beat_n",
    "beat_by",
    "first",
    "to_move",
    "phase",
    "pending",
    "winner",
    "reason",
)
# What forced moves revealed about each hand (see ``CastlesState``). Optional in ``from_dict``: a
# position written by hand has no history, so nothing is known beyond its cards.
KNOWLEDGE_KEYS = ("barred", "need_n", "need_beat")


def to_dict(s: CastlesState) -> dict[str, Any]:
    """The state as plain lists, ints and strings (decks bottom to top: the last entry is drawn next)."""
    return {
        "hands": [s.hands[0][:], s.hands[1][:]],
        "saves": [s.saves[0][:], s.saves[1][:]],
        "decks": [s.decks[0][:], s.decks[1][:]],
        "pile": [s.pile[0][:], s.pile[1][:]],
        "discard": [s.discard[0][:], s.discard[1][:]],
        "beat": s.beat,
        "beat_n": s.beat_n,
        "beat_by": s.beat_by,
        "first": s.first,
        "to_move": s.to_move,
        "phase": PHASE_NAMES[s.phase],
        "pending": s.pending,
        "winner": s.winner,
        "reason": REASON_NAMES[s.reason],
        "barred": s.barred[:],
        "need_n": s.need_n[:],
        "need_beat": s.need_beat[:],
    }


def _int(data: Mapping[str, Any], key: str, lo: int, hi: int) -> int:
    v = data[key]
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise StateFormatError(f"castles state: {key!r} must be an int in {lo}..{hi}, got {v!r}")
    return v


def _counts(data: Mapping[str, Any], key: str, k: int) -> list[list[int]]:
    v = data[key]
    ok = isinstance(v, list) and len(v) == 2
    ok = ok and all(isinstance(row, list) and len(row) == k for row in v)
    ok = ok and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for row in v for n in row)
    if not ok:
        raise StateFormatError(
            f"castles state: {key!r} must be two lists of {k} non-negative ints (counts per rank), got {v!r}"
        )
    return [list(v[0]), list(v[1])]


def _decks(data: Mapping[str, Any], k: int) -> list[list[int]]:
    v = data["decks"]
    ok = isinstance(v, list) and len(v) == 2 and all(isinstance(d, list) for d in v)
    ok = ok and all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c < k for d in v for c in d)
    if not ok:
        raise StateFormatError(f"castles state: 'decks' must be two lists of rank codes 0..{k - 1}, got {v!r}")
    return [list(v[0]), list(v[1])]


def _name(data: Mapping[str, Any], key: str, names: tuple[str, ...]) -> int:
    v = data[key]
    if v not in names:
        raise StateFormatError(f"castles state: {key!r} must be one of {list(names)}, got {v!r}")
    return names.index(v)


def from_dict(deck: DeckSpec, data: Mapping[str, Any]) -> CastlesState:
    """Rebuild a state from ``to_dict``'s output, checking every field and that no card is lost or added."""
    if not isinstance(data, Mapping):
        raise StateFormatError(f"castles state must be a dict, got {type(data).__name__}")
    missing = [key for key in KEYS if key not in data]
    if missing:
        raise StateFormatError(f"castles state is missing {', '.join(missing)}; expected keys {', '.join(KEYS)}")
    k = deck.ranks + 1
    hands, saves = _counts(data, "hands", k), _counts(data, "saves", k)
    pile, discard = _counts(data, "pile", k), _counts(data, "discard", k)
    decks = _decks(data, k)
    phase = Phase(_name(data, "phase", PHASE_NAMES))
    reason = _name(data, "reason", REASON_NAMES)
    s = CastlesState(
        hands=hands,
        saves=saves,
        decks=decks,
        pile=pile,
        discard=discard,
        beat=_int(data, "beat", -1, deck.ranks),
        beat_n=_int(data, "beat_n", 0, deck.copies),
        beat_by=_int(data, "beat_by", -1, 1),
        first=_int(data, "first", 0, 1),
        to_move=_int(data, "to_move", -1, 1),
        phase=phase,
        pending=_int(data, "pending", 0, 5),
        winner=_int(data, "winner", -1, 1),
        reason=reason,
    )
    _knowledge(deck, data, s)
    _check(deck, s)
    return s


def _pair(data: Mapping[str, Any], key: str, lo: int, hi: int, default: int) -> list[int]:
    v = data.get(key, [default, default])
    ok = isinstance(v, list) and len(v) == 2
    ok = ok and all(isinstance(n, int) and not isinstance(n, bool) and lo <= n <= hi for n in v)
    if not ok:
        raise StateFormatError(f"castles state: {key!r} must be two ints in {lo}..{hi} (one per seat), got {v!r}")
    return list(v)


def _knowledge(deck: DeckSpec, data: Mapping[str, Any], s: CastlesState) -> None:
    """The optional knowledge fields: barred ranks (bit masks) and the short-deck bound (count, rank)."""
    s.barred = _pair(data, "barred", 0, (1 << (deck.ranks + 1)) - 1, 0)
    s.need_n = _pair(data, "need_n", 0, 5, 0)
    s.need_beat = _pair(data, "need_beat", -1, deck.ranks, -1)
    for p in range(2):
        if s.need_n[p] and s.need_beat[p] < 0:
            raise StateFormatError(f"castles state: need_n[{p}] > 0 needs a rank in need_beat[{p}]")


def _check(deck: DeckSpec, s: CastlesState) -> None:
    """Cross-field consistency: every card present once, a mover that fits the phase."""
    comp = deck.composition()
    for p in range(2):
        total = [s.hands[p][r] + s.saves[p][r] + s.pile[p][r] + s.discard[p][r] for r in range(len(comp))]
        for r in s.decks[p]:
            total[r] += 1
        if total != comp:
            raise StateFormatError(
                f"castles state: player {p}'s cards (hand + saves + deck + pile + discard) count {total} per rank, "
                f"but a deck holds {comp}"
            )
        if s.save_n[p] > 3 or s.hand_n[p] > 8:
            raise StateFormatError(
                f"castles state: player {p} has {s.hand_n[p]} hand cards and {s.save_n[p]} saves (at most 8 and 3)"
            )
    over = s.phase == Phase.OVER
    if over != (s.winner >= 0) or over != (s.reason != NO_REASON) or over != (s.to_move < 0):
        raise StateFormatError("castles state: phase 'over' goes with a winner, a reason and to_move -1, and only it")
    if not over and s.phase != Phase.CHOOSE_SAVES and (s.beat < 0 or s.beat_by < 0 or s.beat_n < 1):
        raise StateFormatError(
            f"castles state: phase {PHASE_NAMES[s.phase]!r} needs card(s) to beat (beat, beat_n, beat_by)"
        )
    if s.phase in (Phase.CHOOSE_SAVES, Phase.DISCARD) and s.pending < 1:
        raise StateFormatError(f"castles state: phase {PHASE_NAMES[s.phase]!r} needs pending >= 1")
    if s.phase == Phase.PLAY_SAVE and s.save_n[s.to_move] == 0:
        raise StateFormatError("castles state: phase 'play_save' but the player to move has no save")
    if s.phase == Phase.PLAY and s.hand_n[s.to_move] == 0:
        raise StateFormatError("castles state: phase 'play' but the player to move has no hand card")
