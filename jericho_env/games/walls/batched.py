"""Compiled batched rules of walls: ``WallsBatched``, every state a record of ``DTYPE``, Numba kernels over rows.

The kernels transcribe ``rules.py`` step for step (the same loops in the same order), so a row plays,
scores and observes exactly as the Python state does; ``tests/games/test_walls_batched.py`` plays
thousands of seeded games through both and compares every state, mask, observation and return.

One dtype serves every player count (2-5): per-seat fields have five rows, the field ``n`` says how many
are in use, and the rows of absent seats stay zero. So the kernels compile once for all option sets.

The record holds every field of ``WallsState``: counts as int8 (every count of the game is below 128),
the draw pile as ``deck[:deck_len]`` with its top card last, and the trumpet log of a player dealt seven
trumpets in a fixed form: ``log_scorings[seat]`` is -1 for no log, else how many scoring events it holds
(0-3, one per scoring after the reveal); ``log_blows[seat, k]`` how many trumpets it blew after its
``k``-th scoring event (before the first for ``k = 0``); ``log_events[seat, k]`` the ``k``-th scoring
event as (its face-down supply cards, trumpets in the supply, the trumpets each seat put there).
A log is its blows and scorings in order, so this keeps it whole.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jericho_env.core.batched import BatchedGame, RowKernels
from jericho_env.core.kernels import below, compiled_rows, njit, shuffle_prefix, uniform
from jericho_env.games.walls.cards import COPIES, NUM_CARDS, NUM_SCORING, SCORING, TRUMPET, TYPE_VALUE, VALUES
from jericho_env.games.walls.observation import OBS_VERSIONS, WINDOW_SCALE, build_scale
from jericho_env.games.walls.rules import HAND_SIZE, POTENTIAL_SCALE, WallsRules
from jericho_env.games.walls.state import TRUMPETS_AT, WALL_SIZE, WALL_STRIDE, Phase, WallsState

MAX_SEATS = 5
MAX_DECK = NUM_CARDS - HAND_SIZE * 2  # the draw pile of the 2-player variant: 96 cards
MAX_LOG_SCORINGS = NUM_SCORING

DTYPE = np.dtype(
    [
        ("n", np.int8),
        ("phase", np.int8),
        ("to_move", np.int8),
        ("first_player", np.int8),
        ("drawer", np.int8),
        ("phase_left", np.int8),
        ("scored", np.int8),
        ("supply_trumpets", np.int8),
        ("supply_size", np.int8),
        ("discard", np.int8),
        ("deck_len", np.int8),
        ("hand_size", np.int8, (MAX_SEATS,)),
        ("opening", np.int8, (MAX_SEATS,)),
        ("hidden_count", np.int8, (MAX_SEATS,)),
        ("hands", np.int8, (MAX_SEATS, 26)),
        ("walls", np.int8, (MAX_SEATS, WALL_SIZE)),
        ("won", np.int8, (MAX_SEATS, 25)),
        ("supply_public", np.int8, (25,)),
        ("supply_hidden", np.int8, (MAX_SEATS, 26)),
        ("deck", np.int8, (MAX_DECK,)),
        ("log_scorings", np.int8, (MAX_SEATS,)),
        ("log_blows", np.int8, (MAX_SEATS, MAX_LOG_SCORINGS + 1)),
        ("log_events", np.int8, (MAX_SEATS, MAX_LOG_SCORINGS, 2 + MAX_SEATS)),
    ]
)

# Phases as plain ints for the kernels (``state.Phase``).
OPEN_WALL, OPEN_SUPPLY, PLAY, DONATE, OVER = (int(p) for p in Phase)
_TYPE_VALUE = np.array(TYPE_VALUE, dtype=np.int64)
_VALUES = np.array(VALUES, dtype=np.int64)
#: the 107 cards shuffled at the deal, in card order (``rules.initial_state``'s list)
_COPIES = np.array(COPIES, dtype=np.int64)
_DEAL_CARDS = np.array([c for c, k in enumerate(COPIES) if c != SCORING for _ in range(k)], dtype=np.int8)


# ---------------------------------------------------------------------------------------------- the rules
@njit(cache=True)
def _add_to_wall(s: Any, seat: int, card: int) -> None:
    base = (card // 5) * 7
    s.walls[seat, base + card % 5] += 1
    s.walls[seat, base + 6] += _TYPE_VALUE[card]


@njit(cache=True)
def _to_supply(s: Any, seat: int, card: int) -> None:
    s.hands[seat, card] -= 1
    s.supply_hidden[seat, card] += 1
    s.hidden_count[seat] += 1
    s.supply_size += 1


@njit(cache=True)
def _trumpet(s: Any, seat: int, colour: int) -> None:
    """``WallsRules._trumpet``: every top card of ``colour`` falls, trumpet-only walls collapse, the trumpet joins."""
    s.hands[seat, TRUMPET] -= 1
    logged = s.log_scorings[seat]
    if logged >= 0:
        s.log_blows[seat, logged] += 1
    base = colour * 7
    n = s.n
    for vi in range(4, -1, -1):
        hit = False
        for o in range(n):
            k = s.walls[o, base + vi]
            if k:
                hit = True
                s.walls[o, base + vi] = 0
                s.walls[o, base + 6] -= k * _VALUES[vi]
                s.supply_public[colour * 5 + vi] += k
                s.supply_size += k
                if s.walls[o, base + 6] == 2 * s.walls[o, base + 5]:
                    t = s.walls[o, base + 5]
                    s.supply_trumpets += t
                    s.supply_size += t
                    s.walls[o, base + 5] = 0
                    s.walls[o, base + 6] = 0
        if hit:
            break
    if s.walls[seat, base + 6]:
        s.walls[seat, base + 5] += 1
        s.walls[seat, base + 6] += 2
    else:
        s.discard += 1


@njit(cache=True)
def _score(s: Any) -> None:
    """``WallsRules._score``: reveal the supply, discard its trumpets, give each colour to its longest wall(s)."""
    n = s.n
    logged = False
    for o in range(n):
        if s.log_scorings[o] >= 0:
            logged = True
    if logged:
        trumpets = 0
        for o in range(n):
            trumpets += s.supply_hidden[o, TRUMPET]
        for o in range(n):
            j = s.log_scorings[o]
            if j >= 0:
                s.log_events[o, j, 0] = s.hidden_count[o]
                s.log_events[o, j, 1] = trumpets
                for q in range(n):
                    s.log_events[o, j, 2 + q] = s.supply_hidden[q, TRUMPET]
                s.log_scorings[o] = j + 1
    for o in range(n):
        for k in range(25):
            if s.supply_hidden[o, k]:
                s.supply_public[k] += s.supply_hidden[o, k]
                s.supply_hidden[o, k] = 0
        s.discard += s.supply_hidden[o, TRUMPET]
        s.supply_hidden[o, TRUMPET] = 0
        s.hidden_count[o] = 0
    s.discard += s.supply_trumpets
    s.supply_trumpets = 0
    for colour in range(5):
        at = colour * 7 + 6
        best = 0
        for o in range(n):
            best = max(best, s.walls[o, at])
        if best == 0:
            continue
        winners = 0
        pool = 0
        for o in range(n):
            winners += s.walls[o, at] == best
        for vi in range(5):
            pool += s.supply_public[colour * 5 + vi]
        give = (pool // winners) * winners
        i = 0
        for vi in range(4, -1, -1):  # from the highest value down, one card to each winner in seat order
            card = colour * 5 + vi
            for _ in range(s.supply_public[card]):
                if i >= give:
                    break
                turn = i % winners  # the turn-th winner in seat order takes this card
                for o in range(n):
                    if s.walls[o, at] == best:
                        if turn == 0:
                            s.won[o, card] += 1
                            break
                        turn -= 1
                s.supply_public[card] -= 1
                i += 1
    size = 0
    for k in range(25):
        size += s.supply_public[k]
    s.supply_size = size


@njit(cache=True)
def _end_bonus(s: Any) -> None:
    """Value-1 cards leave the walls for the won cards; walls left with trumpets only are discarded."""
    for o in range(s.n):
        for colour in range(5):
            base = colour * 7
            ones = s.walls[o, base]
            if not ones:
                continue
            s.won[o, colour * 5] += ones
            s.walls[o, base] = 0
            s.walls[o, base + 6] -= ones
            if s.walls[o, base + 6] == 2 * s.walls[o, base + 5]:
                s.discard += s.walls[o, base + 5]
                s.walls[o, base + 5] = 0
                s.walls[o, base + 6] = 0


@njit(cache=True)
def _draw(s: Any, seat: int) -> None:
    """``WallsRules._draw``: the top card; a scoring card scores, gives a replacement, starts the donation or ends."""
    s.deck_len -= 1
    card = s.deck[s.deck_len]
    n = s.n
    if card != SCORING:
        s.hands[seat, card] += 1
        s.to_move = (seat + 1) % n
        return
    s.scored += 1
    s.drawer = seat
    if s.scored < NUM_SCORING:
        s.deck_len -= 1
        s.hands[seat, s.deck[s.deck_len]] += 1
    else:
        s.hand_size[seat] -= 1
    _score(s)
    if s.scored == NUM_SCORING:
        _end_bonus(s)
        s.phase = OVER
        s.to_move = -1
    else:
        s.phase = DONATE
        s.phase_left = n
        s.to_move = (seat + 1) % n


@njit(cache=True)
def _reveal_openings(s: Any) -> None:
    for o in range(s.n):
        card = s.opening[o]
        if card == TRUMPET:
            s.discard += 1
            s.log_scorings[o] = 0  # an empty log: everyone now knows it was dealt seven trumpets
            for k in range(MAX_LOG_SCORINGS + 1):
                s.log_blows[o, k] = 0
        elif card >= 0:
            _add_to_wall(s, o, card)
        s.opening[o] = -1


@njit(cache=True)
def _apply_one(s: Any, action: int) -> None:
    """``WallsRules.apply_unchecked`` on one record."""
    seat = np.int64(s.to_move)
    phase = s.phase
    if phase == PLAY:
        if action < 25:
            s.hands[seat, action] -= 1
            _add_to_wall(s, seat, action)
        elif action < 30:
            _trumpet(s, seat, action - 25)
        else:
            _to_supply(s, seat, action - 30)
        _draw(s, seat)
    elif phase == OPEN_WALL:
        s.hands[seat, action] -= 1
        s.hand_size[seat] -= 1
        s.opening[seat] = action
        s.phase = OPEN_SUPPLY
    else:
        _to_supply(s, seat, action - 30)
        s.hand_size[seat] -= 1
        s.phase_left -= 1
        s.to_move = (seat + 1) % s.n
        if phase == OPEN_SUPPLY:
            if s.phase_left:
                s.phase = OPEN_WALL
            else:
                _reveal_openings(s)
                s.phase = PLAY
        elif not s.phase_left:
            s.phase = PLAY


@njit(cache=True)
def _legal_into(s: Any, out: Any) -> int:
    """The legal actions of ``s`` ascending into ``out``; how many (``WallsRules.legal_actions``)."""
    phase = s.phase
    count = 0
    if phase == OVER:
        return 0
    seat = s.to_move
    if phase in (PLAY, OPEN_WALL):
        for c in range(25):
            if s.hands[seat, c]:
                out[count] = c
                count += 1
        if phase == OPEN_WALL:
            if count == 0:
                out[0] = 25
                count = 1
            return count
        if s.hands[seat, TRUMPET]:
            for a in range(25, 30):
                out[count] = a
                count += 1
    for c in range(26):
        if s.hands[seat, c]:
            out[count] = 30 + c
            count += 1
    return count


@njit(cache=True)
def _returns_into(s: Any, out: Any) -> None:
    """``WallsRules.returns`` of a finished record (winners share +1, the others -1; all 0 if all tie)."""
    n = s.n
    best_won = -1
    best_wall = -1
    won = np.zeros(MAX_SEATS, dtype=np.int64)
    wall = np.zeros(MAX_SEATS, dtype=np.int64)
    for o in range(n):
        for k in range(25):
            won[o] += s.won[o, k]
        for colour in range(5):
            for j in range(6):
                wall[o] += s.walls[o, colour * 7 + j]
        if won[o] > best_won or (won[o] == best_won and wall[o] > best_wall):
            best_won, best_wall = won[o], wall[o]
    winners = 0
    for o in range(n):
        winners += won[o] == best_won and wall[o] == best_wall
    for o in range(n):
        out[o] = 0.0
    if winners == n:
        return
    lose = -1.0 / (n - winners)
    gain = 1.0 / winners
    for o in range(n):
        out[o] = gain if (won[o] == best_won and wall[o] == best_wall) else lose


# ---------------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def _deal(states: Any, rows: Any, stream: Any, n: int, piles: Any, cards: Any) -> None:
    """``WallsRules.initial_state`` in each row: shuffle 107 cards, 7 each, six piles, scoring cards in 2, 4, 6."""
    order = np.empty(cards.shape[0], dtype=np.int8)
    top_down = np.empty(MAX_DECK, dtype=np.int8)
    for k in range(rows.shape[0]):
        s = states[rows[k]]
        _clear(s)
        s.n = n
        order[:] = cards
        shuffle_prefix(order, order.shape[0], stream, k)
        for seat in range(n):
            for j in range(seat * 7, seat * 7 + 7):
                s.hands[seat, order[j]] += 1
            s.hand_size[seat] = 7
            s.opening[seat] = -1
        at = n * 7
        size = 0
        for p in range(6):
            if p % 2:
                slot = below(stream, k, piles[p])  # the scoring card's place among the pile's cards
                for j in range(piles[p]):
                    if j == slot:
                        top_down[size] = SCORING
                    else:
                        top_down[size] = order[at]
                        at += 1
                    size += 1
            else:
                for _ in range(piles[p]):
                    top_down[size] = order[at]
                    at += 1
                    size += 1
        for j in range(size):
            s.deck[j] = top_down[size - 1 - j]
        s.deck_len = size
        s.drawer = -1
        s.phase = OPEN_WALL
        s.phase_left = n
        first = below(stream, k, n)
        s.first_player = first
        s.to_move = first


@njit(cache=True)
def _clear(s: Any) -> None:
    """Every field of the record zero, and the fields whose empty value is -1 at -1."""
    s.n = 0
    s.phase = 0
    s.to_move = 0
    s.first_player = 0
    s.drawer = 0
    s.phase_left = 0
    s.scored = 0
    s.supply_trumpets = 0
    s.supply_size = 0
    s.discard = 0
    s.deck_len = 0
    s.hand_size[:] = 0
    s.opening[:] = -1
    s.hidden_count[:] = 0
    s.hands[:, :] = 0
    s.walls[:, :] = 0
    s.won[:, :] = 0
    s.supply_public[:] = 0
    s.supply_hidden[:, :] = 0
    s.deck[:] = 0
    s.log_scorings[:] = -1
    s.log_blows[:, :] = 0
    s.log_events[:, :, :] = 0


@njit(cache=True)
def _apply(states: Any, rows: Any, actions: Any) -> None:
    for k in range(rows.shape[0]):
        _apply_one(states[rows[k]], actions[k])


@njit(cache=True)
def _status(states: Any, rows: Any, current: Any, returns: Any) -> None:
    for k in range(rows.shape[0]):
        s = states[rows[k]]
        if s.phase == OVER:
            current[k] = -1
            _returns_into(s, returns[k])
        else:
            current[k] = s.to_move
            returns[k, :] = 0.0


@njit(cache=True)
def _masks(states: Any, rows: Any, out: Any) -> None:
    """``WallsRules.legal_actions`` as masks: every entry written (no clearing pass first)."""
    for k in range(rows.shape[0]):
        s = states[rows[k]]
        row = out[k]
        phase = s.phase
        if phase == OVER:
            row[:] = 0
            continue
        hand = s.hands[s.to_move]
        build = 1 if phase in (PLAY, OPEN_WALL) else 0  # wall cards: built, or laid face down
        supply = 0 if phase == OPEN_WALL else 1
        held = 0
        for c in range(25):
            h = 1 if hand[c] > 0 else 0
            held |= h
            row[c] = h & build
            row[30 + c] = h & supply
        trumpet = 1 if hand[TRUMPET] > 0 else 0
        row[55] = trumpet & supply
        blow = trumpet if phase == PLAY else 0
        for a in range(25, 30):
            row[a] = blow
        if phase == OPEN_WALL and not held:  # a hand of seven trumpets lays a trumpet
            row[25] = 1


@njit(cache=True)
def _raw_counts(s: Any, seat: int, windows: Any, deck_size: int, raw: Any, belief: bool) -> None:
    """``observation.raw_counts`` of ``seat`` into ``raw`` (uint8, layout order); ``belief``: version 1's too."""
    n = np.int64(s.n)
    hands, hidden, walls, won = s.hands, s.supply_hidden, s.walls, s.won
    hand_size, opening, hidden_count, public = s.hand_size, s.opening, s.hidden_count, s.supply_public
    for c in range(26):
        raw[c] = hands[seat, c]
        raw[26 + c] = 0
        raw[52 + c] = hidden[seat, c]
    if opening[seat] >= 0:
        raw[26 + opening[seat]] = 1
    j = 78
    for q in range(n):
        o = seat + q
        if o >= n:
            o -= n
        raw[j + q] = hand_size[o]
        raw[j + n + q] = 1 if opening[o] >= 0 else 0
        raw[j + 2 * n + q] = hidden_count[o]
    j += 3 * n
    for q in range(n):
        o = seat + q
        if o >= n:
            o -= n
        for c in range(WALL_SIZE):
            raw[j + c] = walls[o, c]
        j += WALL_SIZE
    for q in range(n):
        o = seat + q
        if o >= n:
            o -= n
        for c in range(25):
            raw[j + c] = won[o, c]
        j += 25
    for c in range(25):
        raw[j + c] = public[c]
    j += 25
    raw[j] = s.supply_size
    raw[j + 1] = s.deck_len
    before, left = 0, 0
    if s.scored < NUM_SCORING:
        start, end = windows[s.scored, 0], windows[s.scored, 1]
        drawn = deck_size - s.deck_len
        before = min(max(0, start - drawn), WINDOW_SCALE)
        left = min(max(0, end - max(start, drawn)), WINDOW_SCALE)
    raw[j + 2] = before
    raw[j + 3] = left
    j += 4
    for i in range(7 + n):  # round, phase, seat to move: one-hot each while the game is on
        raw[j + i] = 0
    if s.phase != OVER:
        raw[j + s.scored] = 1
        raw[j + 3 + s.phase] = 1
        mover = s.to_move - seat
        if mover < 0:
            mover += n
        raw[j + 7 + mover] = 1
    if belief:
        _belief_counts(s, seat, raw, j + 7 + n)


@njit(cache=True)
def _belief_counts(s: Any, seat: int, raw: Any, j: int) -> None:
    """``observation.belief_counts`` of ``seat`` into ``raw[j:]``."""
    n = np.int64(s.n)
    seen = raw[j : j + 26]  # first the copies of each type the seat has seen (each at most 22), then unseen
    hands, hidden, public, won, walls = s.hands, s.supply_hidden, s.supply_public, s.won, s.walls  # views, once
    for t in range(26):
        seen[t] = hands[seat, t] + hidden[seat, t]
    if s.opening[seat] >= 0:
        seen[s.opening[seat]] += 1
    trumpets = np.int64(s.discard) + s.supply_trumpets
    for t in range(25):
        seen[t] += public[t]
    for o in range(n):  # seat by seat: each seat's won cards and walls read in order
        for t in range(25):
            seen[t] += won[o, t]
        for c in range(5):
            b = c * WALL_STRIDE
            for i in range(5):
                seen[c * 5 + i] += walls[o, b + i]
            trumpets += walls[o, b + TRUMPETS_AT]
    seen[25] += trumpets
    total = 0
    for t in range(26):
        u = _COPIES[t] - seen[t]
        seen[t] = u
        total += u
    raw[j + 26] = total
    j += 27
    for q in range(1, n):
        o = seat + q
        if o >= n:
            o -= n
        known, in_supply = _trumpet_floor(s, o, seat)
        raw[j] = max(known, 0)
        raw[j + 1] = max(in_supply, 0)
        j += 2


@njit(cache=True)
def _observe(
    states: Any, rows: Any, seats: Any, scale: Any, windows: Any, deck_size: int, out: Any, by_row: bool, belief: bool
) -> None:
    """Row ``k``'s observation into ``out[rows[k]]`` (``by_row``) or ``out[k]``: raw counts times ``scale``.

    ``encode`` multiplies the uint8 counts by the float32 scale: the same float32 products here.
    """
    size = scale.shape[0]
    raw = np.empty(size, dtype=np.uint8)
    for k in range(rows.shape[0]):
        _raw_counts(states[rows[k]], seats[k], windows, deck_size, raw, belief)
        row = out[rows[k] if by_row else np.int64(k)]
        for j in range(size):
            row[j] = np.float32(raw[j]) * scale[j]


@njit(cache=True)
def _rollout(states: Any, rows: Any, stream: Any, returns: Any) -> None:
    legal = np.empty(64, dtype=np.int64)
    for k in range(rows.shape[0]):
        s = states[rows[k]]
        while s.phase != OVER:
            count = _legal_into(s, legal)
            _apply_one(s, legal[below(stream, k, count)])
        _returns_into(s, returns[k])


# ---------------------------------------------------------------------------------------------- determinize
@njit(cache=True)
def _trumpet_floor(s: Any, player: int, observer: int) -> tuple[int, int]:
    """``WallsRules._trumpet_floor``: (T, S) of a player dealt seven trumpets, (-1, -1) for any other player."""
    scorings = s.log_scorings[player]
    if scorings < 0:
        return -1, -1
    total, in_supply = 6, 1
    for k in range(scorings + 1):
        for _ in range(s.log_blows[player, k]):
            total = max(in_supply, total - 1)
        if k < scorings:
            supplied = s.log_events[player, k, 0]
            trumpets = s.log_events[player, k, 1]
            mine = s.log_events[player, k, 2 + observer]
            total -= min(supplied, total, trumpets - mine)
            in_supply = 0
    return max(0, total), in_supply


@njit(cache=True)
def _comb(n: int, k: int) -> float:
    """n choose k as a float (0 outside 0 <= k <= n)."""
    if k < 0 or k > n:
        return 0.0
    k = min(k, n - k)
    out = 1.0
    for i in range(k):
        out = out * (n - i) / (i + 1)
    return out


@njit(cache=True)
def _draw_hand(pool: Any, length: int, size: int, need: int, chosen: Any, stream: Any, k: int) -> None:
    """``core.redeal.draw_hand`` with one bound, at least ``need`` trumpets: ``chosen[i]`` marks the positions taken.

    Uniform over the qualifying sets of positions: the number of trumpets ``x`` by its count of sets
    (comb(T, x) comb(N, size - x)), then ``x`` trumpet and ``size - x`` other positions uniformly.
    """
    chosen[:length] = False
    trumpets = 0
    for i in range(length):
        trumpets += pool[i] == TRUMPET
    others = length - trumpets
    if need <= 0:
        _pick(pool, length, size, np.int64(-1), chosen, stream, k)  # not literals: one compile
        return
    total = 0.0
    for x in range(need, min(trumpets, size) + 1):
        total += _comb(trumpets, x) * _comb(others, size - x)
    if total == 0.0:
        raise ValueError("walls determinize: no hand meets what the other players' moves revealed")
    u = uniform(stream, k) * total
    x = min(trumpets, size)
    for y in range(need, min(trumpets, size) + 1):
        w = _comb(trumpets, y) * _comb(others, size - y)
        if w > 0.0 and u < w:
            x = y
            break
        u -= w
    _pick(pool, length, x, np.int64(1), chosen, stream, k)
    _pick(pool, length, size - x, np.int64(0), chosen, stream, k)


@njit(cache=True)
def _pick(pool: Any, length: int, count: int, trumpet: int, chosen: Any, stream: Any, k: int) -> None:
    """Mark ``count`` positions uniformly among the unmarked ones holding a trumpet (1), not (0), or any card (-1)."""
    fits = np.empty(length, dtype=np.int64)
    m = 0
    for i in range(length):
        if not chosen[i] and (trumpet < 0 or (pool[i] == TRUMPET) == (trumpet == 1)):
            fits[m] = i
            m += 1
    for j in range(count):  # a partial Fisher-Yates: the first ``count`` of a uniform order
        r = j + below(stream, k, m - j)
        t = fits[j]
        fits[j] = fits[r]
        fits[r] = t
        chosen[fits[j]] = True


@njit(cache=True)
def _take(pool: Any, length: int, chosen: Any, counts: Any) -> int:
    """Count the marked cards of ``pool`` into ``counts``, drop them (the rest keeps its order); the new length."""
    counts[:] = 0
    kept = 0
    for i in range(length):
        if chosen[i]:
            counts[pool[i]] += 1
        else:
            pool[kept] = pool[i]
            kept += 1
    return kept


@njit(cache=True)
def _determinize(out: Any, seats: Any, stream: Any, deck_size: int, windows: Any) -> None:
    """``WallsRules.determinize`` on each record of ``out`` (copies of the rows), for ``seats[k]``."""
    pool = np.empty(NUM_CARDS, dtype=np.int8)
    chosen = np.zeros(NUM_CARDS, dtype=np.bool_)
    unseen = np.zeros(26, dtype=np.int64)
    top_down = np.empty(MAX_DECK, dtype=np.int8)
    for k in range(out.shape[0]):
        s = out[k]
        seat = seats[k]
        n = s.n
        # the unseen cards, pooled in card order, shuffled
        unseen[:] = 0
        for o in range(n):
            if o == seat:
                continue
            for c in range(26):
                unseen[c] += s.hands[o, c] + s.supply_hidden[o, c]
            if s.opening[o] >= 0:
                unseen[s.opening[o]] += 1
        for i in range(s.deck_len):
            if s.deck[i] != SCORING:
                unseen[s.deck[i]] += 1
        length = 0
        for c in range(26):
            for _ in range(unseen[c]):
                pool[length] = c
                length += 1
        shuffle_prefix(pool, length, stream, k)
        # face-down first wall cards: a wall card of the shuffled pool drawn uniformly (a trumpet only from a pool
        # of trumpets), as ``WallsRules.determinize`` takes them: the rest of the pool stays a uniform shuffle
        for o in range(n):
            if o == seat or s.opening[o] < 0:
                continue
            walls = 0
            for i in range(length):
                if pool[i] != TRUMPET:
                    walls += 1
            pick = 0
            if walls:
                target = below(stream, k, walls)
                for i in range(length):
                    if pool[i] != TRUMPET:
                        if target == 0:
                            pick = i
                            break
                        target -= 1
            s.opening[o] = pool[pick]
            for i in range(pick, length - 1):
                pool[i] = pool[i + 1]
            length -= 1
        for o in range(n):
            if o == seat:
                continue
            total, in_supply = _trumpet_floor(s, o, seat)
            if total < 0:
                s.supply_hidden[o, :] = 0
                for at in range(s.hidden_count[o]):
                    s.supply_hidden[o, pool[at]] += 1
                at = s.hidden_count[o]
                s.hands[o, :] = 0
                for i in range(s.hand_size[o]):
                    s.hands[o, pool[at + i]] += 1
                at += s.hand_size[o]
                for i in range(at, length):
                    pool[i - at] = pool[i]
                length -= at
            else:
                _draw_hand(pool, length, s.hidden_count[o], in_supply, chosen, stream, k)
                length = _take(pool, length, chosen, unseen)
                for c in range(26):
                    s.supply_hidden[o, c] = unseen[c]
                _draw_hand(pool, length, s.hand_size[o], total - unseen[TRUMPET], chosen, stream, k)
                length = _take(pool, length, chosen, unseen)
                for c in range(26):
                    s.hands[o, c] = unseen[c]
        # the pile: scoring cards anywhere in the undrawn part of their piles (``WallsRules._restack``)
        size = s.deck_len
        drawn = deck_size - size
        for i in range(size):
            top_down[i] = -1
        fits = True
        for j in range(s.scored, NUM_SCORING):
            lo = max(windows[j, 0], drawn) - drawn
            hi = windows[j, 1] - drawn
            if not (0 <= lo < hi <= size):
                fits = False
        if fits:
            for j in range(s.scored, NUM_SCORING):
                lo = max(windows[j, 0], drawn) - drawn
                hi = windows[j, 1] - drawn
                top_down[lo + below(stream, k, hi - lo)] = SCORING
        else:
            for i in range(size):
                if s.deck[size - 1 - i] == SCORING:
                    top_down[i] = SCORING
        at = 0
        for i in range(size):
            if top_down[i] < 0:
                top_down[i] = pool[at]
                at += 1
        for i in range(size):
            s.deck[i] = top_down[size - 1 - i]


# ---------------------------------------------------------------------------------------------- one row, for search
MAX_OBSERVATION = len(build_scale(MAX_SEATS, max(OBS_VERSIONS)))  # the largest observation (five players)
# The option set's tables as one record (``RowKernels.params``); the scale padded to the largest observation.
PARAMS = np.dtype(
    [
        ("scale", np.float32, (MAX_OBSERVATION,)),
        ("windows", np.int64, (NUM_SCORING, 2)),
        ("deck_size", np.int64),
        ("belief", np.int64),  # 1 under observation version 1
    ]
)


def _status_fn(states: Any, row: int, params: Any, returns: Any) -> int:
    s = states[row]
    if s.phase == OVER:
        _returns_into(s, returns)
        return -1
    returns[:] = 0.0
    return int(s.to_move)


def _legal_fn(states: Any, row: int, params: Any, out: Any) -> int:
    return _legal_into(states[row], out)  # type: ignore[no-any-return]


def _apply_fn(states: Any, row: int, params: Any, action: int) -> None:
    _apply_one(states[row], action)


def _observe_fn(states: Any, row: int, params: Any, seat: int, out: Any) -> None:
    p = params[0]
    raw = np.empty(MAX_OBSERVATION, dtype=np.uint8)
    _raw_counts(states[row], seat, p.windows, p.deck_size, raw, p.belief != 0)
    for j in range(out.shape[0]):  # ``_observe``'s float32 products
        out[j] = np.float32(raw[j]) * p.scale[j]


def _determinize_fn(
    src: Any, src_row: int, params: Any, seat: int, dst: Any, dst_row: int, stream: Any, k: int
) -> bool:
    dst[dst_row] = src[src_row]
    p = params[0]
    seats = np.full(1, seat, dtype=np.int64)
    _determinize(dst[dst_row : dst_row + 1], seats, stream[k : k + 1], p.deck_size, p.windows)
    return True


# compiled with their signatures when first used (``compiled_rows``)
_ROW_FUNCTIONS = (_status_fn, _legal_fn, _apply_fn, _observe_fn, _determinize_fn)


# ---------------------------------------------------------------------------------------------- the class
class WallsBatched(BatchedGame[WallsState]):
    """walls' rules over rows of ``DTYPE`` (see the module docstring); every option set (2-5 players)."""

    def __init__(self, rules: WallsRules) -> None:
        super().__init__(rules)
        self.n = rules.n
        self.belief = rules.observation_version >= 1
        self.scale = build_scale(self.n, rules.observation_version)
        self.piles = np.array(rules.piles, dtype=np.int64)
        self.deck_size = int(rules.deck_size)
        self.windows = np.array(rules.scoring_piles, dtype=np.int64)
        self.params = np.zeros(1, dtype=PARAMS)  # the same tables for search's row functions (row_kernels)
        self.params[0]["scale"][: len(self.scale)] = self.scale
        self.params[0]["windows"], self.params[0]["deck_size"] = self.windows, self.deck_size
        self.params[0]["belief"] = int(self.belief)

    @property
    def dtype(self) -> np.dtype[Any]:
        """``DTYPE`` (the same for every player count)."""
        return DTYPE

    def new_states(self, count: int) -> np.ndarray:
        """``count`` rows of zeros, their -1 fields at -1 and ``n`` set (not games yet)."""
        states = np.zeros(count, dtype=DTYPE)
        states["n"] = self.n
        states["opening"] = -1
        states["log_scorings"] = -1
        return states

    # ------------------------------------------------------------------ conversion
    def to_batched(self, state: WallsState, states: np.ndarray, row: int) -> None:
        """Every field of ``state`` into ``states[row]``; ``ValueError`` for a state this layout cannot hold."""
        if state.n != self.n:
            raise ValueError(f"walls to_batched: a state of {state.n} players into rows of {self.n}")
        if len(state.deck) > MAX_DECK:
            raise ValueError(f"walls to_batched: a draw pile of {len(state.deck)} cards (at most {MAX_DECK})")
        n = self.n
        r = np.zeros(1, dtype=DTYPE)[0]
        r["n"] = n
        r["phase"], r["to_move"], r["first_player"] = int(state.phase), state.to_move, state.first_player
        r["drawer"], r["phase_left"], r["scored"] = state.drawer, state.phase_left, state.scored
        r["supply_trumpets"], r["supply_size"], r["discard"] = state.supply_trumpets, state.supply_size, state.discard
        r["deck_len"] = len(state.deck)
        r["deck"][: len(state.deck)] = state.deck
        r["hand_size"][:n] = state.hand_size
        r["opening"][:] = -1
        r["opening"][:n] = state.opening
        r["hidden_count"][:n] = state.hidden_count
        r["hands"][:n] = state.hands
        r["walls"][:n] = state.walls
        r["won"][:n] = state.won
        r["supply_public"] = state.supply_public
        r["supply_hidden"][:n] = state.supply_hidden
        r["log_scorings"][:] = -1
        for seat, log in enumerate(state.trumpet_log):
            if log is not None:
                self._log_to_batched(log, r, seat)
        states[row] = r

    def _log_to_batched(self, log: tuple[tuple[Any, ...], ...], r: Any, seat: int) -> None:
        scorings = 0
        for event in log:
            if event[0] == "blow":
                r["log_blows"][seat, scorings] += 1
                continue
            if scorings == MAX_LOG_SCORINGS:
                raise ValueError(f"walls to_batched: trumpet_log[{seat}] has more than {MAX_LOG_SCORINGS} scorings")
            _, supplied, trumpets, each = event
            values = [supplied, trumpets, *each]
            if len(each) != self.n or not all(0 <= v <= 127 for v in values):
                raise ValueError(f"walls to_batched: trumpet_log[{seat}] event {event!r} is out of range")
            r["log_events"][seat, scorings, : len(values)] = values
            scorings += 1
        r["log_scorings"][seat] = scorings

    def from_batched(self, states: np.ndarray, row: int) -> WallsState:
        """The ``WallsState`` of ``states[row]`` (a new object)."""
        r = states[row]
        n = self.n
        s = WallsState(n)
        s.phase = Phase(int(r["phase"]))
        s.to_move, s.first_player, s.drawer = int(r["to_move"]), int(r["first_player"]), int(r["drawer"])
        s.phase_left, s.scored = int(r["phase_left"]), int(r["scored"])
        s.hands = r["hands"][:n].tolist()
        s.hand_size = r["hand_size"][:n].tolist()
        s.opening = r["opening"][:n].tolist()
        s.walls = r["walls"][:n].tolist()
        s.won = r["won"][:n].tolist()
        s.supply_public = r["supply_public"].tolist()
        s.supply_hidden = r["supply_hidden"][:n].tolist()
        s.hidden_count = r["hidden_count"][:n].tolist()
        s.supply_trumpets, s.supply_size, s.discard = (
            int(r["supply_trumpets"]),
            int(r["supply_size"]),
            int(r["discard"]),
        )
        s.deck = r["deck"][: int(r["deck_len"])].tolist()
        s.trumpet_log = [self._log_from_batched(r, seat) for seat in range(n)]
        return s

    def _log_from_batched(self, r: Any, seat: int) -> tuple[tuple[Any, ...], ...] | None:
        scorings = int(r["log_scorings"][seat])
        if scorings < 0:
            return None
        events: list[tuple[Any, ...]] = []
        for k in range(scorings + 1):
            events += [("blow",)] * int(r["log_blows"][seat, k])
            if k < scorings:
                e = r["log_events"][seat, k].tolist()
                events.append(("scoring", e[0], e[1], tuple(e[2 : 2 + self.n])))
        return tuple(events)

    # ------------------------------------------------------------------ the state machine
    def deal(self, states: np.ndarray, rows: np.ndarray, stream: np.ndarray) -> None:
        """``rules.initial_state``'s distribution: a uniform shuffle, uniform scoring places and first player."""
        _deal(states, rows, stream, self.n, self.piles, _DEAL_CARDS)

    def apply(self, states: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> None:
        """``rules.apply_unchecked`` in each row."""
        _apply(states, rows, actions)

    def status(self, states: np.ndarray, rows: np.ndarray, current: np.ndarray, returns: np.ndarray) -> None:
        """Seat to move (-1 once over) and ``rules.returns``."""
        _status(states, rows, current, returns)

    def potential(self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """``WallsRules.potential``: each row's seat's lead in cards won over the best other seat / 20, clipped."""
        won = states["won"][rows, : self.n].astype(np.int64).sum(axis=2)  # (rows, n)
        k = np.arange(len(rows))
        seats = np.asarray(seats, dtype=np.int64)
        mine = won[k, seats]
        won[k, seats] = np.iinfo(np.int64).min  # the best of the others
        out[: len(rows)] = np.clip((mine - won.max(axis=1)) / POTENTIAL_SCALE, -1.0, 1.0)

    def masks(self, states: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
        """``rules.legal_mask`` in each row."""
        _masks(states, rows, out)

    def observe(self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """``rules.observe`` of each row into ``out[k]``."""
        _observe(states, rows, seats, self.scale, self.windows, self.deck_size, out, False, self.belief)

    def observe_rows(self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """``rules.observe`` of each row straight into ``out[rows[k]]`` (no scratch copy)."""
        _observe(states, rows, seats, self.scale, self.windows, self.deck_size, out, True, self.belief)

    def determinize(
        self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, stream: np.ndarray, out: np.ndarray
    ) -> None:
        """``rules.determinize``'s procedure on each row (the same support and weights), drawn from ``stream``."""
        out[: len(rows)] = states[rows]
        _determinize(out[: len(rows)], seats, stream, self.deck_size, self.windows)

    def rollout(self, states: np.ndarray, rows: np.ndarray, stream: np.ndarray, returns: np.ndarray) -> None:
        """Uniformly random legal actions to the end of each row; ``returns[k]``: its returns."""
        _rollout(states, rows, stream, returns)

    def row_kernels(self) -> RowKernels:
        """The rules of one row for search (``RowKernels``), reading this player count's tables (``PARAMS``)."""
        return RowKernels(*compiled_rows(_ROW_FUNCTIONS, DTYPE, PARAMS), self.params)


__all__ = ["DTYPE", "PARAMS", "WallsBatched"]
