"""Castles' compiled batched rules: ``rules.py`` as Numba kernels over rows of one structured array.

A row (``DTYPE``) holds every field of ``CastlesState``: counts per rank code (``hands``, ``saves``, ``pile``,
``discard``; 14 slots, enough for A-K and the joker), each deck bottom to top in ``decks`` with its length
in ``deck_n`` (slots above it are zero, so a state has one byte layout), the scalars, and what forced moves
revealed (``barred``, ``need_n``, ``need_beat``). One dtype serves every option set: the kernels take the
deck's numbers (``cfg``) and its tables (``answers``, ``comp``, the observation scales) as arguments, so
they are compiled once.

Each kernel follows its Python counterpart step by step (``CastlesRules.apply_unchecked`` and its helpers,
``legal_actions``, ``ObsEncoder.encode``, ``determinize``), with the same arithmetic for observation values
(float64 products with the same reciprocals, then a cast to float32), so the results are equal bit for bit
(``tests/games/test_castles_batched.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jericho_env.core.batched import BatchedGame, RowKernels
from jericho_env.core.kernels import below, compiled_rows, njit, shuffle_prefix
from jericho_env.core.redeal import NoConsistentDealError
from jericho_env.games.castles.deck import RANK_LETTERS
from jericho_env.games.castles.observation import BELIEF_FIELDS, HAND_SIZE, NUM_SAVES, SETUP_DRAW
from jericho_env.games.castles.rules import CastlesRules
from jericho_env.games.castles.state import EMPTIED, STUCK, CastlesState, Phase

K_MAX = len(RANK_LETTERS) + 1  # rank codes A..K and the joker
DECK_MAX = len(RANK_LETTERS) * 4 + 2  # the largest deck: A-K in four suits and two jokers (54)

DTYPE = np.dtype(
    [
        ("hands", np.int8, (2, K_MAX)),
        ("saves", np.int8, (2, K_MAX)),
        ("pile", np.int8, (2, K_MAX)),
        ("discard", np.int8, (2, K_MAX)),
        ("decks", np.int8, (2, DECK_MAX)),
        ("deck_n", np.int8, (2,)),
        ("hand_n", np.int8, (2,)),
        ("save_n", np.int8, (2,)),
        ("barred", np.int32, (2,)),
        ("need_n", np.int8, (2,)),
        ("need_beat", np.int8, (2,)),
        ("beat", np.int8),
        ("beat_n", np.int8),
        ("beat_by", np.int8),
        ("first", np.int8),
        ("to_move", np.int8),
        ("phase", np.int8),
        ("pending", np.int8),
        ("winner", np.int8),
        ("reason", np.int8),
    ]
)

# Phases and end reasons as plain ints for the kernels.
_CHOOSE_SAVES, _PLAY, _DISCARD, _PLAY_SAVE, _OVER = (int(p) for p in Phase)
_EMPTIED, _STUCK = EMPTIED, STUCK

# Slots of ``cfg``, the deck's numbers (int64).
_RANKS, _COPIES, _JOKER_ACTION, _SAVE, _PLAY_SAVE_BASE, _DISCARD_BASE, _NUM_ACTIONS = range(7)
# Slots of ``scales`` (float64): the encoder's reciprocals.
_DECK_SCALE, _PER_SAVE, _BEAT_SCALE = range(3)
# Slots of ``off``, the observation's field offsets, in the layout's order.
(
    _O_HAND,
    _O_SAVES,
    _O_COUNTS,
    _O_OUT,
    _O_OPP_COUNTS,
    _O_OPP_OUT,
    _O_BEAT,
    _O_BEAT_N,
    _O_BEAT_BY,
    _O_JOKER_TURN,
    _O_PHASE,
    _O_PENDING,
    _O_TO_MOVE,
    _O_FIRST,
    _O_OWN_DECK,
    _O_OPP_BARRED,
    _O_OPP_NEED,
    _O_OPP_NEED_RANK,
    _O_OPP_EXPECTED,
) = range(19)
_FIELDS = (
    "own_hand",
    "own_saves",
    "own_counts",
    "own_out",
    "opp_counts",
    "opp_out",
    "to_beat",
    "to_beat_count",
    "to_beat_by",
    "joker_turn",
    "phase",
    "pending",
    "to_move",
    "first_player",
    *BELIEF_FIELDS,  # observation version 1 only: their offsets are -1 under version 0
)


# ---------------------------------------------------------------------------------------------- one row
@njit(cache=True)
def _refill(s: Any, p: int) -> None:
    while s.hand_n[p] < HAND_SIZE and s.deck_n[p] > 0:
        n = s.deck_n[p] - 1
        s.hands[p, s.decks[p, n]] += 1
        s.decks[p, n] = 0
        s.deck_n[p] = n
        s.hand_n[p] += 1


@njit(cache=True)
def _can_play(s: Any, p: int, ranks: int, answers: np.ndarray) -> bool:
    bits = answers[s.beat]
    for r in range(ranks + 1):  # noqa: SIM110 - a plain loop: Numba compiles it, not any() over a generator
        if s.hands[p, r] and bits >> r & 1:
            return True
    return False


@njit(cache=True)
def _finish(s: Any, winner: int, reason: int) -> None:
    s.phase = _OVER
    s.winner = winner
    s.reason = reason
    s.pending = 0
    s.to_move = -1


@njit(cache=True)
def _start_turn(s: Any, p: int, ranks: int, answers: np.ndarray) -> None:
    s.to_move = p
    if _can_play(s, p, ranks, answers):
        s.phase = _PLAY
    elif s.save_n[p] == 0:
        _finish(s, 1 - p, _STUCK)
    else:
        left = s.deck_n[p]
        if left >= HAND_SIZE or left == 0:
            if left:
                for r in range(ranks + 1):
                    s.discard[p, r] += s.hands[p, r]
                    s.hands[p, r] = 0
                s.hand_n[p] = 0
                _refill(s, p)
                s.barred[p] = 0
                s.need_n[p] = 0
            else:
                s.barred[p] |= answers[s.beat]
            s.phase = _PLAY_SAVE
        else:
            s.phase = _DISCARD
            s.pending = min(left, s.hand_n[p])
            s.need_n[p] = s.hand_n[p]
            s.need_beat[p] = s.beat


@njit(cache=True)
def _put_on_table(s: Any, p: int, r: int, k: int, ranks: int, answers: np.ndarray) -> None:
    s.pile[p, r] += k
    s.beat = r
    s.beat_n = k
    s.beat_by = p
    _refill(s, p)
    if s.hand_n[p] == 0:
        _finish(s, p, _EMPTIED)
    elif r == ranks:
        s.phase = _PLAY
        s.to_move = p
    else:
        _start_turn(s, 1 - p, ranks, answers)


@njit(cache=True)
def _play_from_hand(s: Any, p: int, r: int, k: int, ranks: int, answers: np.ndarray) -> None:
    s.hands[p, r] -= k
    s.hand_n[p] -= k
    if s.need_n[p] and not answers[s.need_beat[p]] >> r & 1:
        s.need_n[p] = max(0, s.need_n[p] - k)
    _put_on_table(s, p, r, k, ranks, answers)


@njit(cache=True)
def _choose_save(s: Any, p: int, r: int, ranks: int, answers: np.ndarray) -> None:
    s.hands[p, r] -= 1
    s.hand_n[p] -= 1
    s.saves[p, r] += 1
    s.save_n[p] += 1
    s.pending -= 1
    if s.pending:
        return
    if p == s.first:
        s.to_move = 1 - p
        s.pending = NUM_SAVES
        return
    f = s.first
    n = s.deck_n[f] - 1
    top = s.decks[f, n]
    s.decks[f, n] = 0
    s.deck_n[f] = n
    s.pile[f, top] += 1
    s.beat = top
    s.beat_n = 1
    s.beat_by = f
    if top == ranks:
        s.phase = _PLAY
        s.to_move = f
    else:
        _start_turn(s, 1 - f, ranks, answers)


@njit(cache=True)
def _discard_one(s: Any, p: int, r: int) -> None:
    s.hands[p, r] -= 1
    s.hand_n[p] -= 1
    s.need_n[p] -= 1
    s.discard[p, r] += 1
    s.pending -= 1
    if s.pending == 0:
        while s.deck_n[p] > 0:
            n = s.deck_n[p] - 1
            s.hands[p, s.decks[p, n]] += 1
            s.decks[p, n] = 0
            s.deck_n[p] = n
            s.hand_n[p] += 1
        s.phase = _PLAY_SAVE


@njit(cache=True)
def _apply_one(s: Any, action: int, cfg: np.ndarray, answers: np.ndarray) -> None:
    p = s.to_move
    ranks = cfg[_RANKS]
    if action < cfg[_JOKER_ACTION]:
        _play_from_hand(s, p, action // cfg[_COPIES], action % cfg[_COPIES] + 1, ranks, answers)
    elif action == cfg[_JOKER_ACTION]:
        _play_from_hand(s, p, ranks, 1, ranks, answers)
    elif action < cfg[_PLAY_SAVE_BASE]:
        _choose_save(s, p, action - cfg[_SAVE], ranks, answers)
    elif action < cfg[_DISCARD_BASE]:
        r = action - cfg[_PLAY_SAVE_BASE]
        s.saves[p, r] -= 1
        s.save_n[p] -= 1
        _put_on_table(s, p, r, 1, ranks, answers)
    else:
        _discard_one(s, p, action - cfg[_DISCARD_BASE])


@njit(cache=True)
def _legal(s: Any, cfg: np.ndarray, answers: np.ndarray, out: np.ndarray) -> int:
    """The legal actions of the seat to move into ``out``, ascending; their count."""
    phase = s.phase
    if phase == _OVER:
        return 0
    p = s.to_move
    ranks = cfg[_RANKS]
    n = 0
    if phase == _PLAY:
        copies = cfg[_COPIES]
        bits = answers[s.beat]
        for r in range(ranks):
            if bits >> r & 1:
                for j in range(s.hands[p, r]):
                    out[n] = r * copies + j
                    n += 1
        if s.hands[p, ranks]:
            out[n] = cfg[_JOKER_ACTION]
            n += 1
        return n
    if phase == _PLAY_SAVE:
        base = cfg[_PLAY_SAVE_BASE]
        for r in range(ranks + 1):
            if s.saves[p, r]:
                out[n] = base + r
                n += 1
        return n
    base = cfg[_SAVE] if phase == _CHOOSE_SAVES else cfg[_DISCARD_BASE]
    for r in range(ranks + 1):
        if s.hands[p, r]:
            out[n] = base + r
            n += 1
    return n


@njit(cache=True, inline="always")
def _observe_row(
    s: Any,
    seat: int,
    out: np.ndarray,
    j: int,
    ranks: int,
    off: np.ndarray,
    per_copy: np.ndarray,
    scales: np.ndarray,
    comp: np.ndarray,
) -> None:
    """``ObsEncoder.encode`` into ``out[j]``: the same float64 operations, each value cast to float32 once.

    Counts are written whatever their value (a zero count gives +0.0, the encoder's untouched zero), without
    a branch per rank: on random hands such branches are mispredicted and cost more than the whole row.
    """
    k = ranks + 1
    per_save = scales[_PER_SAVE]
    oh, osv = off[_O_HAND], off[_O_SAVES]
    for r in range(k):
        out[j, oh + r] = s.hands[seat, r] * per_copy[r]
        out[j, osv + r] = s.saves[seat, r] * per_save
    for side in range(2):
        who = seat if side == 0 else 1 - seat
        b = off[_O_COUNTS] if side == 0 else off[_O_OPP_COUNTS]
        out[j, b] = s.deck_n[who] * scales[_DECK_SCALE]
        out[j, b + 1] = s.hand_n[who] / SETUP_DRAW
        out[j, b + 2] = s.save_n[who] * per_save
        b = off[_O_OUT] if side == 0 else off[_O_OPP_OUT]
        for r in range(k):
            out[j, b + r] = (s.pile[who, r] + s.discard[who, r]) * per_copy[r]
    out[j, off[_O_BEAT] :] = 0.0  # to_beat and every field after it: one-hots and flags, set below
    over = s.phase == _OVER
    if s.beat >= 0:
        out[j, off[_O_BEAT] + s.beat] = 1.0
        out[j, off[_O_BEAT_N]] = s.beat_n * scales[_BEAT_SCALE]
        out[j, off[_O_BEAT_BY] + (0 if s.beat_by == seat else 1)] = 1.0
        if s.beat == ranks and not over:
            out[j, off[_O_JOKER_TURN]] = 1.0
    if not over:
        out[j, off[_O_PHASE] + s.phase] = 1.0
        out[j, off[_O_PENDING]] = s.pending / HAND_SIZE
        out[j, off[_O_TO_MOVE] + (0 if s.to_move == seat else 1)] = 1.0
    out[j, off[_O_FIRST] + (0 if s.first == seat else 1)] = 1.0
    if off[_O_OWN_DECK] >= 0:
        _belief_row(s, seat, out, j, k, off, per_copy, comp)


@njit(cache=True, inline="always")
def _belief_row(
    s: Any, seat: int, out: np.ndarray, j: int, k: int, off: np.ndarray, per_copy: np.ndarray, comp: np.ndarray
) -> None:
    """``ObsEncoder.encode_belief`` into ``out[j]`` (its fields already zero: they follow ``to_beat``)."""
    opp = 1 - seat
    b = off[_O_OWN_DECK]
    for r in range(k):
        n = comp[r] - s.hands[seat, r] - s.saves[seat, r] - s.pile[seat, r] - s.discard[seat, r]
        out[j, b + r] = n * per_copy[r]
    barred = s.barred[opp]
    b = off[_O_OPP_BARRED]
    for r in range(k):
        if barred >> r & 1:
            out[j, b + r] = 1.0
    if s.need_n[opp] > 0 and s.need_beat[opp] >= 0:
        out[j, off[_O_OPP_NEED]] = s.need_n[opp] / HAND_SIZE
        out[j, off[_O_OPP_NEED_RANK] + s.need_beat[opp]] = 1.0
    total = 0
    for r in range(k):
        if not barred >> r & 1:
            total += comp[r] - s.pile[opp, r] - s.discard[opp, r]
    hand_n = np.int64(s.hand_n[opp])
    if total > 0 and hand_n > 0:
        b = off[_O_OPP_EXPECTED]
        for r in range(k):
            if not barred >> r & 1:
                unseen = comp[r] - s.pile[opp, r] - s.discard[opp, r]
                out[j, b + r] = np.float64(hand_n * unseen) / total * per_copy[r]


@njit(cache=True, inline="always")
def _mask_row(s: Any, out: np.ndarray, j: int, cfg: np.ndarray, answers: np.ndarray) -> None:
    """``rules.legal_mask`` into ``out[j]``: the actions of ``_legal``, set without a branch per card."""
    out[j, :] = 0
    phase = s.phase
    if phase == _OVER:
        return
    p = s.to_move
    ranks = cfg[_RANKS]
    if phase == _PLAY:
        copies = cfg[_COPIES]
        bits = answers[s.beat]
        for r in range(ranks):
            held = s.hands[p, r] if bits >> r & 1 else 0
            for c in range(copies):
                out[j, r * copies + c] = c < held  # play c + 1 cards of rank r
        out[j, cfg[_JOKER_ACTION]] = s.hands[p, ranks] > 0
    elif phase == _PLAY_SAVE:
        base = cfg[_PLAY_SAVE_BASE]
        for r in range(ranks + 1):
            out[j, base + r] = s.saves[p, r] > 0
    else:
        base = cfg[_SAVE] if phase == _CHOOSE_SAVES else cfg[_DISCARD_BASE]
        for r in range(ranks + 1):
            out[j, base + r] = s.hands[p, r] > 0


# ---------------------------------------------------------------------------------------------- kernels over rows
@njit(cache=True)
def _deal(states: np.ndarray, rows: np.ndarray, stream: np.ndarray, ordered: np.ndarray) -> None:
    size = ordered.shape[0]
    for k in range(rows.shape[0]):
        s = states[rows[k]]
        for p in range(2):
            s.decks[p, :] = 0
            s.decks[p, :size] = ordered
            shuffle_prefix(s.decks[p], size, stream, k)
        s.first = below(stream, k, 2)
        s.hands[:, :] = 0
        s.saves[:, :] = 0
        s.pile[:, :] = 0
        s.discard[:, :] = 0
        for p in range(2):
            s.deck_n[p] = size
            s.hand_n[p] = 0
            for _ in range(SETUP_DRAW):
                n = s.deck_n[p] - 1
                s.hands[p, s.decks[p, n]] += 1
                s.decks[p, n] = 0
                s.deck_n[p] = n
                s.hand_n[p] += 1
            s.save_n[p] = 0
            s.barred[p] = 0
            s.need_n[p] = 0
            s.need_beat[p] = -1
        s.beat = -1
        s.beat_n = 0
        s.beat_by = -1
        s.to_move = s.first
        s.phase = _CHOOSE_SAVES
        s.pending = NUM_SAVES
        s.winner = -1
        s.reason = 0


@njit(cache=True)
def _apply(states: np.ndarray, rows: np.ndarray, actions: np.ndarray, cfg: np.ndarray, answers: np.ndarray) -> None:
    for k in range(rows.shape[0]):
        _apply_one(states[rows[k]], actions[k], cfg, answers)


@njit(cache=True)
def _status(states: np.ndarray, rows: np.ndarray, current: np.ndarray, returns: np.ndarray) -> None:
    for k in range(rows.shape[0]):
        s = states[rows[k]]
        if s.phase == _OVER:
            current[k] = -1
            returns[k, 0] = 1.0 if s.winner == 0 else -1.0
            returns[k, 1] = -returns[k, 0]
        else:
            current[k] = s.to_move
            returns[k, 0] = 0.0
            returns[k, 1] = 0.0


@njit(cache=True)
def _masks(states: np.ndarray, rows: np.ndarray, out: np.ndarray, cfg: np.ndarray, answers: np.ndarray) -> None:
    for k in range(rows.shape[0]):
        _mask_row(states[rows[k]], out, k, cfg, answers)


@njit(cache=True)
def _observe(
    states: np.ndarray,
    rows: np.ndarray,
    seats: np.ndarray,
    out: np.ndarray,
    at_row: bool,
    ranks: int,
    off: np.ndarray,
    per_copy: np.ndarray,
    scales: np.ndarray,
    comp: np.ndarray,
) -> None:
    """Observations into ``out[k]``, or into ``out[rows[k]]`` when ``at_row``."""
    for k in range(rows.shape[0]):
        i = rows[k]
        _observe_row(states[i], seats[k], out, i if at_row else k, ranks, off, per_copy, scales, comp)


@njit(cache=True)
def _rollout(
    states: np.ndarray, rows: np.ndarray, stream: np.ndarray, returns: np.ndarray, cfg: np.ndarray, answers: np.ndarray
) -> None:
    legal = np.empty(cfg[_NUM_ACTIONS], dtype=np.int64)
    for k in range(rows.shape[0]):
        s = states[rows[k]]
        while s.phase != _OVER:
            n = _legal(s, cfg, answers, legal)
            _apply_one(s, legal[below(stream, k, n)], cfg, answers)
        returns[k, 0] = 1.0 if s.winner == 0 else -1.0
        returns[k, 1] = -returns[k, 0]


# ---------------------------------------------------------------------------------------------- determinize
@njit(cache=True)
def _comb(n: int, x: int) -> int:
    if x < 0 or x > n:
        return 0
    c = 1
    for i in range(x):
        c = c * (n - i) // (i + 1)
    return c


@njit(cache=True)
def _pattern_weight(sizes: np.ndarray, xs: np.ndarray, need: np.ndarray) -> int:
    """Hands holding ``xs[g]`` cards of each group ``g`` (bit j of ``g``: in bound j's class); 0 if a bound fails."""
    for j in range(2):
        got = 0
        for g in range(4):
            if g >> j & 1:
                got += xs[g]
        if got < need[j]:
            return 0
    w = 1
    for g in range(4):
        w *= _comb(sizes[g], xs[g])
    return w


@njit(cache=True)
def _draw_pattern(sizes: np.ndarray, size: int, need: np.ndarray, xs: np.ndarray, stream: np.ndarray, k: int) -> bool:
    """``xs``: cards per group, drawn with probability proportional to its number of hands; False if none."""
    total = 0
    for pass_ in range(2):
        u = below(stream, k, total) if pass_ else 0
        for x0 in range(min(sizes[0], size) + 1):
            for x1 in range(min(sizes[1], size - x0) + 1):
                for x2 in range(min(sizes[2], size - x0 - x1) + 1):
                    x3 = size - x0 - x1 - x2
                    if x3 > sizes[3]:
                        continue
                    xs[0], xs[1], xs[2], xs[3] = x0, x1, x2, x3
                    w = _pattern_weight(sizes, xs, need)
                    if pass_ == 0:
                        total += w
                    elif u < w:
                        return True
                    else:
                        u -= w
        if total == 0:
            return False
    return False  # not reached: the second pass stops at the drawn pattern


@njit(cache=True)
def _determinize(
    out: np.ndarray,
    seats: np.ndarray,
    stream: np.ndarray,
    cfg: np.ndarray,
    answers: np.ndarray,
    comp: np.ndarray,
    ok: np.ndarray,
) -> None:
    """``rules.determinize`` of each row of ``out`` in place (a copy of the state); ``ok[k]`` False if no deal fits."""
    ranks = cfg[_RANKS]
    kk = ranks + 1
    cards = np.empty(DECK_MAX, dtype=np.int8)
    rest = np.empty(DECK_MAX, dtype=np.int8)
    group = np.empty(DECK_MAX, dtype=np.int8)
    sizes = np.zeros(4, dtype=np.int64)
    xs = np.zeros(4, dtype=np.int64)
    need = np.zeros(2, dtype=np.int64)
    key = np.zeros(K_MAX, dtype=np.int64)
    for k in range(out.shape[0]):
        s = out[k]
        seat = seats[k]
        # the seat's own deck: what it has not seen, in a new order
        n = 0
        for r in range(kk):
            for _ in range(comp[r] - s.hands[seat, r] - s.saves[seat, r] - s.pile[seat, r] - s.discard[seat, r]):
                cards[n] = r
                n += 1
        shuffle_prefix(cards, n, stream, k)
        s.decks[seat, :n] = cards[:n]
        # the opponent's unseen cards: a hand meeting what its moves revealed, then saves and deck
        o = 1 - seat
        barred = s.barred[o]
        if s.phase == _OVER and s.reason == _STUCK and s.winner == seat:
            barred |= answers[s.beat]
        need[0] = s.need_n[o]
        need[1] = 1 if s.phase == _PLAY and s.to_move == o else 0
        unfit = answers[s.need_beat[o]] if need[0] else 0  # bound 0's class: ranks that do not answer need_beat
        fit = answers[s.beat] if need[1] else 0  # bound 1's class: ranks that answer the card to beat
        sizes[:] = 0
        for r in range(kk):
            key[r] = (0 if not need[0] or unfit >> r & 1 else 1) | (2 if need[1] and fit >> r & 1 else 0)
            if not barred >> r & 1:
                sizes[key[r]] += comp[r] - s.pile[o, r] - s.discard[o, r]
        hand_size = s.hand_n[o]
        if not _draw_pattern(sizes, hand_size, need, xs, stream, k):
            ok[k] = False
            continue
        ok[k] = True
        s.hands[o, :] = 0
        m = 0  # cards of the rest (not in the hand)
        for g in range(4):
            count = 0
            for r in range(kk):
                if key[r] == g and not barred >> r & 1:
                    for _ in range(comp[r] - s.pile[o, r] - s.discard[o, r]):
                        group[count] = r
                        count += 1
            shuffle_prefix(group, count, stream, k)  # the first xs[g] go to the hand
            for j in range(count):
                if j < xs[g]:
                    s.hands[o, group[j]] += 1
                else:
                    rest[m] = group[j]
                    m += 1
        for r in range(kk):
            if barred >> r & 1:
                for _ in range(comp[r] - s.pile[o, r] - s.discard[o, r]):
                    rest[m] = r
                    m += 1
        shuffle_prefix(rest, m, stream, k)
        s.saves[o, :] = 0
        saves = s.save_n[o]
        for j in range(saves):
            s.saves[o, rest[j]] += 1
        s.decks[o, :] = 0
        s.decks[o, : m - saves] = rest[saves:m]


# ---------------------------------------------------------------------------------------------- one row, for search
# The option set's tables as one record (``RowKernels.params``): the kernels' arrays, padded to K_MAX ranks (a
# rank code indexes them, and every rank code of an option set is below its own length).
PARAMS = np.dtype(
    [
        ("cfg", np.int64, (7,)),
        ("answers", np.int64, (K_MAX,)),
        ("comp", np.int64, (K_MAX,)),
        ("off", np.int64, (len(_FIELDS),)),
        ("per_copy", np.float64, (K_MAX,)),
        ("scales", np.float64, (3,)),
    ]
)


def _status_fn(states: np.ndarray, row: int, params: np.ndarray, returns: np.ndarray) -> int:
    s = states[row]
    if s.phase == _OVER:
        returns[0] = 1.0 if s.winner == 0 else -1.0
        returns[1] = -returns[0]
        return -1
    returns[0] = 0.0
    returns[1] = 0.0
    return int(s.to_move)


def _legal_fn(states: np.ndarray, row: int, params: np.ndarray, out: np.ndarray) -> int:
    p = params[0]
    return _legal(states[row], p.cfg, p.answers, out)


def _apply_fn(states: np.ndarray, row: int, params: np.ndarray, action: int) -> None:
    p = params[0]
    _apply_one(states[row], action, p.cfg, p.answers)


def _observe_fn(states: np.ndarray, row: int, params: np.ndarray, seat: int, out: np.ndarray) -> None:
    p = params[0]
    out2 = out.reshape((1, out.shape[0]))
    _observe_row(states[row], seat, out2, 0, p.cfg[_RANKS], p.off, p.per_copy, p.scales, p.comp)


def _determinize_fn(
    src: np.ndarray,
    src_row: int,
    params: np.ndarray,
    seat: int,
    dst: np.ndarray,
    dst_row: int,
    stream: np.ndarray,
    k: int,
) -> bool:
    dst[dst_row] = src[src_row]
    p = params[0]
    ok = np.empty(1, dtype=np.bool_)
    seats = np.full(1, seat, dtype=np.int64)
    _determinize(dst[dst_row : dst_row + 1], seats, stream[k : k + 1], p.cfg, p.answers, p.comp, ok)
    return bool(ok[0])


# compiled with their signatures when first used (``compiled_rows``)
_ROW_FUNCTIONS = (_status_fn, _legal_fn, _apply_fn, _observe_fn, _determinize_fn)


# ---------------------------------------------------------------------------------------------- the class
class CastlesBatched(BatchedGame[CastlesState]):
    """Castles' rules over rows of ``DTYPE`` (any option set; see the module docstring)."""

    def __init__(self, rules: CastlesRules) -> None:
        super().__init__(rules)
        self.rules: CastlesRules = rules
        d, a, enc = rules.deck, rules.actions, rules.encoder
        self.ranks = d.ranks
        self.cfg = np.array(
            [d.ranks, d.copies, a.joker, a.save_base, a.play_save_base, a.discard_base, a.num_actions], dtype=np.int64
        )
        self.answers = np.array(rules._answers, dtype=np.int64)  # ranks (joker included) that go on each rank
        self.comp = np.array(d.composition(), dtype=np.int64)
        self.ordered = np.array(d.ordered_cards(), dtype=np.int8)
        self.off = np.array([enc.off.get(name, -1) for name in _FIELDS], dtype=np.int64)
        self.per_copy = np.array(enc.per_copy, dtype=np.float64)
        self.scales = np.array([enc.deck_scale, enc.per_save, enc.beat_scale], dtype=np.float64)
        self.params = np.zeros(1, dtype=PARAMS)  # the same tables for search's row functions (row_kernels)
        p = self.params[0]
        p["cfg"], p["off"], p["scales"] = self.cfg, self.off, self.scales
        for name in ("answers", "comp", "per_copy"):
            p[name][: len(getattr(self, name))] = getattr(self, name)

    @property
    def dtype(self) -> np.dtype[Any]:
        """``DTYPE`` (the same for every option set)."""
        return DTYPE

    def to_batched(self, state: CastlesState, states: np.ndarray, row: int) -> None:
        """Every field of ``state`` into ``states[row]`` (unused slots zero)."""
        states[row] = np.zeros((), dtype=DTYPE)
        r = states[row]  # a view of the row: writes go through
        k = self.ranks + 1
        for p in range(2):
            r["hands"][p, :k] = state.hands[p]
            r["saves"][p, :k] = state.saves[p]
            r["pile"][p, :k] = state.pile[p]
            r["discard"][p, :k] = state.discard[p]
            r["decks"][p, : len(state.decks[p])] = state.decks[p]
        r["deck_n"] = [len(state.decks[0]), len(state.decks[1])]
        r["hand_n"], r["save_n"] = state.hand_n, state.save_n
        r["barred"], r["need_n"], r["need_beat"] = state.barred, state.need_n, state.need_beat
        for name in ("beat", "beat_n", "beat_by", "first", "to_move", "pending", "winner", "reason"):
            r[name] = getattr(state, name)
        r["phase"] = int(state.phase)

    def from_batched(self, states: np.ndarray, row: int) -> CastlesState:
        """The ``CastlesState`` of ``states[row]``."""
        # one conversion of the whole row, its fields in DTYPE's order (CastlesState recounts hand_n and save_n)
        hands, saves, pile, discard, decks, deck_n, _, _, barred, need_n, need_beat, *scalars = states[row].item()
        beat, beat_n, beat_by, first, to_move, phase, pending, winner, reason = (int(v) for v in scalars)
        k = self.ranks + 1
        s = CastlesState(
            hands=hands[:, :k].tolist(),
            saves=saves[:, :k].tolist(),
            decks=[decks[0, : deck_n[0]].tolist(), decks[1, : deck_n[1]].tolist()],
            pile=pile[:, :k].tolist(),
            discard=discard[:, :k].tolist(),
            beat=beat,
            beat_n=beat_n,
            beat_by=beat_by,
            first=first,
            to_move=to_move,
            phase=Phase(phase),
            pending=pending,
            winner=winner,
            reason=reason,
            barred=barred.tolist(),
            need_n=need_n.tolist(),
            need_beat=need_beat.tolist(),
        )
        return s

    def deal(self, states: np.ndarray, rows: np.ndarray, stream: np.ndarray) -> None:
        """Both decks shuffled, eight cards drawn each, the first player drawn: as ``rules.initial_state``."""
        _deal(states, rows, stream, self.ordered)

    def apply(self, states: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> None:
        """``rules.apply_unchecked`` on each row."""
        _apply(states, rows, actions, self.cfg, self.answers)

    def status(self, states: np.ndarray, rows: np.ndarray, current: np.ndarray, returns: np.ndarray) -> None:
        """Seat to move (-1 once over) and returns (+1 winner, -1 loser)."""
        _status(states, rows, current, returns)

    def masks(self, states: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
        """``rules.legal_mask`` of each row."""
        _masks(states, rows, out, self.cfg, self.answers)

    def observe(self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """``rules.observe`` of each row from its seat, into ``out[k]``."""
        _observe(states, rows, seats, out, False, self.ranks, self.off, self.per_copy, self.scales, self.comp)

    def observe_rows(self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """As ``observe``, written straight into ``out[rows[k]]``."""
        _observe(states, rows, seats, out, True, self.ranks, self.off, self.per_copy, self.scales, self.comp)

    def determinize(
        self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, stream: np.ndarray, out: np.ndarray
    ) -> None:
        """``rules.determinize`` compiled: the same support and weights, drawn from ``stream``."""
        n = len(rows)
        out[:n] = states[rows]
        ok = np.empty(n, dtype=np.bool_)
        _determinize(out[:n], np.asarray(seats, dtype=np.int64), stream, self.cfg, self.answers, self.comp, ok)
        if not ok.all():
            k = int(np.flatnonzero(~ok)[0])
            raise NoConsistentDealError(
                f"castles: no deal of the unseen cards in row {int(rows[k])} meets what seat {int(seats[k])} saw "
                "(a hand-made, impossible state)"
            )

    def rollout(self, states: np.ndarray, rows: np.ndarray, stream: np.ndarray, returns: np.ndarray) -> None:
        """Uniformly random legal actions to the end of each row's game; its returns."""
        _rollout(states, rows, stream, returns, self.cfg, self.answers)

    def row_kernels(self) -> RowKernels:
        """The rules of one row for search (``RowKernels``), reading this option set's tables (``PARAMS``)."""
        return RowKernels(*compiled_rows(_ROW_FUNCTIONS, DTYPE, PARAMS), self.params)


__all__ = ["DTYPE", "PARAMS", "CastlesBatched"]
