"""A castles state to and from a JSON-able dictionary (``to_dict`` / ``from_dict``), checked on the way in.

``from_dict`` refuses, with a ``StateFormatError`` naming the first broken condition, any dictionary
that is malformed (a missing key, as every key is required and none is given a default, or an unknown
key; wrong types or ranges) or whose zones do not hold each player's deck exactly, and (``strict=True``,
the default) any that play cannot reach: hand and save counts that do not fit the phase (8 cards while
choosing saves, at most 5 afterwards and 5 whenever the own deck is not empty), a seat to move that does
not follow the card(s) to beat, an ``over`` without its reason holding. ``strict=False`` keeps the first
two kinds only, for positions made by hand in tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jericho_env.core.rules import StateFormatError
from jericho_env.core.validate import is_int, require_keys, require_mapping, strict_int
from jericho_env.games.castles.deck import DeckSpec
from jericho_env.games.castles.observation import HAND_SIZE, NUM_SAVES, SETUP_DRAW
from jericho_env.games.castles.state import EMPTIED, NO_REASON, PHASE_NAMES, REASON_NAMES, CastlesState, Phase

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
    # what forced moves revealed about each hand (see ``CastlesState``); a position written by hand,
    # where nothing is known beyond the cards, gives barred [0, 0], need_n [0, 0], need_beat [-1, -1]
    "barred",
    "need_n",
    "need_beat",
)


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


def _fail(message: str) -> StateFormatError:
    return StateFormatError("castles state: " + message)


def _counts(data: Mapping[str, Any], key: str, k: int) -> list[list[int]]:
    v = data[key]
    ok = isinstance(v, list) and len(v) == 2
    ok = ok and all(isinstance(row, list) and len(row) == k for row in v)
    ok = ok and all(is_int(n) and n >= 0 for row in v for n in row)
    if not ok:
        raise _fail(f"{key!r} must be two lists of {k} non-negative ints (counts per rank), got {v!r}")
    return [list(v[0]), list(v[1])]


def _decks(data: Mapping[str, Any], k: int) -> list[list[int]]:
    v = data["decks"]
    ok = isinstance(v, list) and len(v) == 2 and all(isinstance(d, list) for d in v)
    ok = ok and all(is_int(c) and 0 <= c < k for d in v for c in d)
    if not ok:
        raise _fail(f"'decks' must be two lists of rank codes 0..{k - 1}, got {v!r}")
    return [list(v[0]), list(v[1])]


def _name(data: Mapping[str, Any], key: str, names: tuple[str, ...]) -> int:
    v = data[key]
    if not isinstance(v, str) or v not in names:
        raise _fail(f"{key!r} must be one of {list(names)}, got {v!r}")
    return names.index(v)


def from_dict(deck: DeckSpec, data: Mapping[str, Any], strict: bool = True) -> CastlesState:
    """Rebuild a state from ``to_dict``'s output, checking every field and that no card is lost or added."""
    data = require_mapping("castles", data)
    require_keys("castles", data, KEYS)
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
        beat=strict_int("castles", data, "beat", -1, deck.ranks),
        beat_n=strict_int("castles", data, "beat_n", 0, deck.copies),
        beat_by=strict_int("castles", data, "beat_by", -1, 1),
        first=strict_int("castles", data, "first", 0, 1),
        to_move=strict_int("castles", data, "to_move", -1, 1),
        phase=phase,
        pending=strict_int("castles", data, "pending", 0, 5),
        winner=strict_int("castles", data, "winner", -1, 1),
        reason=reason,
    )
    _knowledge(deck, data, s)
    _check(deck, s)
    if strict:
        _check_reachable(deck, s)
    return s


def _pair(data: Mapping[str, Any], key: str, lo: int, hi: int) -> list[int]:
    v = data[key]
    ok = isinstance(v, list) and len(v) == 2
    ok = ok and all(isinstance(n, int) and not isinstance(n, bool) and lo <= n <= hi for n in v)
    if not ok:
        raise StateFormatError(f"castles state: {key!r} must be two ints in {lo}..{hi} (one per seat), got {v!r}")
    return list(v)


def _knowledge(deck: DeckSpec, data: Mapping[str, Any], s: CastlesState) -> None:
    """The knowledge fields: barred ranks (bit masks) and the short-deck bound (count, rank)."""
    s.barred = _pair(data, "barred", 0, (1 << (deck.ranks + 1)) - 1)
    s.need_n = _pair(data, "need_n", 0, 5)
    s.need_beat = _pair(data, "need_beat", -1, deck.ranks)
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
            raise _fail(
                f"player {p}'s cards (hand + saves + deck + pile + discard) count {total} per rank, "
                f"but a deck holds {comp}"
            )
        if s.save_n[p] > NUM_SAVES or s.hand_n[p] > SETUP_DRAW:
            raise _fail(f"player {p} has {s.hand_n[p]} hand cards and {s.save_n[p]} saves (at most 8 and 3)")
    over = s.phase == Phase.OVER
    if over != (s.winner >= 0) or over != (s.reason != NO_REASON) or over != (s.to_move < 0):
        raise _fail("phase 'over' goes with a winner, a reason and to_move -1, and only it")
    if not over and s.phase != Phase.CHOOSE_SAVES and (s.beat < 0 or s.beat_by < 0 or s.beat_n < 1):
        raise _fail(f"phase {PHASE_NAMES[s.phase]!r} needs card(s) to beat (beat, beat_n, beat_by)")
    if s.phase in (Phase.CHOOSE_SAVES, Phase.DISCARD) and s.pending < 1:
        raise _fail(f"phase {PHASE_NAMES[s.phase]!r} needs pending >= 1")
    if s.phase == Phase.PLAY_SAVE and s.save_n[s.to_move] == 0:
        raise _fail("phase 'play_save' but the player to move has no save")
    if s.phase == Phase.PLAY and s.hand_n[s.to_move] == 0:
        raise _fail("phase 'play' but the player to move has no hand card")


def _check_reachable(deck: DeckSpec, s: CastlesState) -> None:
    """What every state reached by play satisfies, beyond format and conservation; the first failure raised."""
    name = PHASE_NAMES[s.phase]
    if s.phase == Phase.CHOOSE_SAVES:
        _check_setup(deck, s)
        return
    if s.phase not in (Phase.CHOOSE_SAVES, Phase.DISCARD) and s.pending:
        raise _fail(f"pending counts saves to choose or cards to discard; in phase {name!r} it is 0, not {s.pending}")
    if s.beat == deck.joker and s.beat_n != 1:
        raise _fail(f"a joker is played alone, so beat_n is 1 on a joker, not {s.beat_n}")
    if s.pile[s.beat_by][s.beat] < s.beat_n:
        raise _fail(f"the {s.beat_n} card(s) to beat are not on player {s.beat_by}'s pile")
    for p in range(2):
        if s.hand_n[p] > HAND_SIZE:
            raise _fail(f"player {p} holds {s.hand_n[p]} cards; after the set-up a hand holds at most {HAND_SIZE}")
        short = s.phase == Phase.DISCARD and p == s.to_move  # discarding one card at a time before drawing
        if s.decks[p] and not short and s.hand_n[p] != HAND_SIZE and s.phase != Phase.OVER:
            raise _fail(
                f"player {p} holds {s.hand_n[p]} cards with {len(s.decks[p])} left in their deck: hands are "
                f"refilled to {HAND_SIZE} while the deck lasts"
            )
    if s.phase == Phase.OVER:
        _check_over(deck, s)
        return
    joker_turn = s.beat == deck.joker
    if joker_turn != (s.to_move == s.beat_by):
        who = "the joker's player (an extra turn)" if joker_turn else f"player {1 - s.beat_by}, who answers it"
        raise _fail(f"with {deck.name(s.beat)} to beat from player {s.beat_by}, {who} is to move, not {s.to_move}")
    if joker_turn and s.phase != Phase.PLAY:
        raise _fail(f"after a joker its player plays again (phase 'play'), not {name!r}")
    if s.phase == Phase.DISCARD:
        left = len(s.decks[s.to_move])
        if not 0 < left < HAND_SIZE or s.pending > min(left, s.hand_n[s.to_move]):
            raise _fail(
                f"phase 'discard' comes with a short deck (1..4 cards, here {left}) and pending at most "
                f"min(deck, hand) = {min(left, s.hand_n[s.to_move])}, got {s.pending}"
            )


def _check_setup(deck: DeckSpec, s: CastlesState) -> None:
    """The set-up: the first player chooses three saves from eight cards, then the other."""
    if s.beat != -1 or s.beat_n or s.beat_by != -1:
        raise _fail("nothing is played before both players chose their saves: beat -1, beat_n 0, beat_by -1")
    if any(any(s.pile[p]) or any(s.discard[p]) for p in range(2)):
        raise _fail("no card is played or discarded before both players chose their saves")
    if s.pending > NUM_SAVES:
        raise _fail(f"pending counts the saves still to choose, at most {NUM_SAVES}, got {s.pending}")
    chooser, f = s.to_move, s.first
    for p in range(2):
        # the chooser has chosen 3 - pending; the other all 3 if it went first, else none yet
        saves = NUM_SAVES - s.pending if p == chooser else (NUM_SAVES if p == f else 0)
        if s.save_n[p] != saves or s.hand_n[p] != SETUP_DRAW - saves or len(s.decks[p]) != deck.size - SETUP_DRAW:
            raise _fail(
                f"while player {chooser} chooses saves (pending {s.pending}, first player {f}), player {p} holds "
                f"{SETUP_DRAW - saves} cards, {saves} saves and {deck.size - SETUP_DRAW} in the deck, not "
                f"{s.hand_n[p]}, {s.save_n[p]} and {len(s.decks[p])}"
            )


def _check_over(deck: DeckSpec, s: CastlesState) -> None:
    """How the game ended: the winner emptied deck and hand, or the loser was stuck without a save."""
    w = s.winner
    if s.reason == EMPTIED and (s.hand_n[w] or s.decks[w]):
        raise _fail(f"player {w} won by emptying deck and hand, but holds {s.hand_n[w]} and {len(s.decks[w])}")
    if s.reason != EMPTIED:
        loser = 1 - w
        stuck = not (s.hands[loser][deck.joker] or any(s.hands[loser][r] for r in deck.allowed[s.beat]))
        if s.save_n[loser] or not stuck:
            raise _fail(f"player {loser} lost stuck, so holds no save and nothing that beats the card(s) to beat")
