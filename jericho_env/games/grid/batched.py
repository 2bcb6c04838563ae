"""Compiled batched rules of grid (``jericho_env.make_batched("grid", n)``): the Python rules as Numba kernels.

One game is one record of ``GridBatched.dtype``; the kernels follow ``rules.py`` and ``state.py`` step
for step (the same neighbour counts, frontier and allowed-card masks, the same capture order, discard
order and history entries), so a game played here and through ``GridRules`` gives the same states,
legal actions, observations and returns (``tests/games/test_grid_batched.py`` plays thousands of
seeded games through both). Card sets are ``int64`` bit masks of the 52 cards.

The record of a game (``N``: its room for cells, ``capacity(board_size**2)``: 21 x 21 for tables up to that
size, else 101 x 101; cells past the table's are never read). The kernels take records, which Numba passes
by reference, and are compiled once per record type: two compilations serve every board size.

| field | what |
| --- | --- |
| ``board``, ``nbrs`` (N,) | per cell: ``EMPTY``, ``BASE`` or the card; occupied neighbours |
| ``front``, ``allowed``, ``front_len`` | the frontier (any order); per entry, the cards matching its neighbours |
| ``fpos`` (N,) | each cell's place in ``front`` (-1: not on the frontier) |
| ``card_cell`` (52,) | the cell of each face-up card, -1 for cards elsewhere |
| ``hands`` (2, 5), ``hand_len`` | each hand sorted ascending |
| ``draw``, ``draw_len`` | the draw pile, top last |
| ``discard``, ``captured`` and their lengths | the piles in the order their cards arrived |
| ``points``, ``base_card``, ``to_move``, ``in_chain``, ``passes_in_row``, ``last_pass`` | as in ``GridState`` |
| ``hist_kind``, ``hist_val``, ``hist_len`` | each seat's public history (``knowledge``), oldest first |

Observations: ``observe`` writes whole rows; ``observe_rows`` (what the batched env calls every step)
rewrites only what changed in each row of the env's buffer since its previous call, because a row is
8,731 floats at the default size and nearly all of them are zeros that stay zeros: it keeps per row
the cell where each card's table bits were written and the positions of the other non-zeros.

``determinize`` redeals the opponent's hand uniformly among the hands the public history allows
(``knowledge.HandFacts.consistent``, compiled with the same scheduling test), proposed as
``knowledge.redeal_hand`` proposes them, then the draw pile and base uniformly from the rest.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jericho_env.core.batched import BatchedGame, RowKernels
from jericho_env.core.cards import NUM_CARDS
from jericho_env.core.kernels import below, compiled_rows, njit, shuffle_prefix
from jericho_env.core.redeal import NoConsistentDealError
from jericho_env.core.rules import StateFormatError
from jericho_env.games.grid.knowledge import DRAW, MAX_TRIES, NONE, PLACE, SOME, entries, from_entries
from jericho_env.games.grid.observation import BELIEF_FIELDS, MAX_DRAW, MAX_UNSEEN
from jericho_env.games.grid.state import BASE, COMPAT, EMPTY, HAND_SIZE, POINTS, TOTAL_POINTS, GridState

# Each seat's history holds at most 3 entries per card it placed (the placement, and per placing turn one
# refill and one chain fact), and the two seats place at most the 51 cards that are not the base.
MAX_HISTORY = 3 * (NUM_CARDS - 1)
MAX_FRONTIER = 4 * (NUM_CARDS + 1)  # every frontier cell touches one of the at most 53 cards on the table
MAX_DISCARD = NUM_CARDS - 1
MAX_OTHER_NONZEROS = NUM_CARDS - 1 + 2 * HAND_SIZE + 8  # see _observe_rows: cards once each, slots, scalars
# Records of every board size up to 21 hold 21 x 21 cells, larger ones 101 x 101: the kernels are compiled
# once per record type, so two compilations serve every size (and the default's records stay small).
CAPACITIES = (21 * 21, 101 * 101)
ALL = (1 << NUM_CARDS) - 1

# Indices of the layout offsets in the ``offs`` array the observation kernels take.
(
    O_HAND, O_SLOT, O_OWN_CAP, O_OWN_SCORE, O_OPP_HAND, O_OPP_CAP, O_OPP_SCORE, O_OPP_PASSED,
    O_OCC, O_BASE, O_SUIT, O_RANK, O_TABLE_CARDS, O_DISCARD, O_DRAW_SIZE, O_IN_CHAIN, O_TO_MOVE,
    O_UNSEEN, O_UNSEEN_SUIT, O_UNSEEN_RANK, O_UNSEEN_COUNT, O_LACKED, O_LACKED_ROOM, O_FITS, O_FITS_CAPTURE,
) = range(25)  # fmt: skip
LAYOUT_FIELDS = (
    "hand", "hand_slots", "own_captured", "own_score", "opp_hand_size", "opp_captured", "opp_score",
    "opp_passed", "table_occupied", "table_base", "table_suit", "table_rank", "table_cards", "discard",
    "draw_size", "in_chain", "to_move",
    *BELIEF_FIELDS,  # observation version 1 only (the last fields): offsets -1 under version 0
)  # fmt: skip


def capacity(cells: int) -> int:
    """The cells a record holds for a table of ``cells`` cells: the first of ``CAPACITIES`` that fits."""
    return next(c for c in CAPACITIES if c >= cells)


def grid_dtype(capacity: int) -> np.dtype[Any]:
    """The record of one game, with room for ``capacity`` cells (see the module docstring); 8-byte fields first."""
    return np.dtype(
        [
            ("allowed", np.int64, (MAX_FRONTIER,)),
            ("hist_val", np.int64, (2, MAX_HISTORY)),
            ("board", np.int8, (capacity,)),
            ("nbrs", np.int8, (capacity,)),
            ("fpos", np.int16, (capacity,)),
            ("front", np.int16, (MAX_FRONTIER,)),
            ("front_len", np.int16),
            ("card_cell", np.int16, (NUM_CARDS,)),
            ("hist_len", np.int16, (2,)),
            ("points", np.int16, (2,)),
            ("hist_kind", np.int8, (2, MAX_HISTORY)),
            ("hands", np.int8, (2, HAND_SIZE)),
            ("hand_len", np.int8, (2,)),
            ("draw", np.int8, (MAX_DRAW,)),
            ("draw_len", np.int8),
            ("discard", np.int8, (MAX_DISCARD,)),
            ("discard_len", np.int8),
            ("captured", np.int8, (2, MAX_DISCARD)),
            ("cap_len", np.int8, (2,)),
            ("base_card", np.int8),
            ("to_move", np.int8),
            ("in_chain", np.int8),
            ("passes_in_row", np.int8),
            ("last_pass", np.int8, (2,)),
        ]
    )


# ============================================================================================ row kernels
@njit(cache=True)
def _front_set(s: Any, q: int, allowed: int) -> None:
    """``q`` on the frontier (appended if new) with ``allowed`` as its allowed cards."""
    i = s.fpos[q]
    if i < 0:
        i = s.front_len
        s.front[i] = q
        s.fpos[q] = i
        s.front_len = i + 1
    s.allowed[i] = allowed


@njit(cache=True)
def _front_discard(s: Any, q: int) -> None:
    """``q`` off the frontier (the last entry takes its place)."""
    i = s.fpos[q]
    if i >= 0:
        n = s.front_len - 1
        last = s.front[n]
        s.front[i] = last
        s.allowed[i] = s.allowed[n]
        s.fpos[last] = i
        s.fpos[q] = -1
        s.front_len = n


@njit(cache=True)
def _place(s: Any, cell: int, card: int, nb: np.ndarray, nbn: np.ndarray, compat: np.ndarray) -> None:
    """``state.place``: ``card`` (or ``BASE``) on the empty ``cell``; its empty neighbours updated."""
    board, nbrs = s.board, s.nbrs
    board[cell] = card
    if card != BASE:
        s.card_cell[card] = cell
    _front_discard(s, cell)
    cm = compat[card]
    for j in range(nbn[cell]):
        q = nb[cell, j]
        nbrs[q] += 1
        if board[q] == EMPTY:
            if nbrs[q] == 1:
                _front_set(s, q, cm)
            else:
                s.allowed[s.fpos[q]] &= cm


@njit(cache=True)
def _recompute(s: Any, q: int, nb: np.ndarray, nbn: np.ndarray, compat: np.ndarray) -> None:
    """The empty cell ``q`` after removals: off the frontier if nothing touches it, else its allowed cards anew."""
    board = s.board
    if board[q] != EMPTY:
        return
    if s.nbrs[q] == 0:
        _front_discard(s, q)
        return
    m = ALL
    for j in range(nbn[q]):
        c = board[nb[q, j]]
        if c >= 0:
            m &= compat[c]
    _front_set(s, q, m)


@njit(cache=True)
def _remove(s: Any, cells: np.ndarray, n: int, nb: np.ndarray, nbn: np.ndarray, compat: np.ndarray) -> None:
    """``state.remove``: empty ``cells[:n]`` (face-up cards) at once, then recompute the cells around them."""
    board, nbrs = s.board, s.nbrs
    for i in range(n):
        cell = cells[i]
        s.card_cell[board[cell]] = -1
        board[cell] = EMPTY
        for j in range(nbn[cell]):
            nbrs[nb[cell, j]] -= 1
    for i in range(n):
        cell = cells[i]
        _recompute(s, cell, nb, nbn, compat)
        for j in range(nbn[cell]):
            _recompute(s, nb[cell, j], nb, nbn, compat)


@njit(cache=True)
def _captures_at(s: Any, cell: int, nb: np.ndarray, nbn: np.ndarray) -> bool:
    """``state.captures_at``: a placement on the empty ``cell`` surrounds it or a neighbouring card."""
    nbrs, board = s.nbrs, s.board
    if nbrs[cell] == 4:
        return True
    for j in range(nbn[cell]):
        q = nb[cell, j]
        if nbrs[q] == 3 and 0 <= board[q] < BASE:
            return True
    return False


@njit(cache=True)
def _capture_mask(s: Any, nb: np.ndarray, nbn: np.ndarray) -> int:
    """``GridRules._capture_mask``: the cards that fit some capturing cell."""
    m = 0
    for i in range(s.front_len):
        if _captures_at(s, s.front[i], nb, nbn):
            m |= s.allowed[i]
    return m


@njit(cache=True)
def _hist_add(s: Any, p: int, kind: int, value: int) -> None:
    n = s.hist_len[p]
    s.hist_kind[p, n] = kind
    s.hist_val[p, n] = value
    s.hist_len[p] = n + 1


@njit(cache=True)
def _cut_off(s: Any, center: int, nb: np.ndarray, nbn: np.ndarray, out: np.ndarray) -> int:
    """``state.disconnected_cells`` into ``out`` (ascending cells); how many."""
    board = s.board
    seen = np.zeros(NUM_CARDS, dtype=np.bool_)
    stack = np.empty(NUM_CARDS + 1, dtype=np.int64)
    stack[0] = center
    top = 1
    while top:
        top -= 1
        cell = stack[top]
        for j in range(nbn[cell]):
            q = nb[cell, j]
            c = board[q]
            if 0 <= c < BASE and not seen[c]:
                seen[c] = True
                stack[top] = q
                top += 1
    n = 0
    for c in range(NUM_CARDS):
        cell = s.card_cell[c]
        if cell >= 0 and not seen[c]:
            k = n  # insertion by cell
            while k > 0 and out[k - 1] > cell:
                out[k] = out[k - 1]
                k -= 1
            out[k] = cell
            n += 1
    return n


@njit(cache=True)
def _end_turn(s: Any, captured: bool, center: int, nb: np.ndarray, nbn: np.ndarray, compat: np.ndarray) -> None:
    """``GridRules._end_turn``: discard what is cut off, refill the hand to 5, pass the turn."""
    p = s.to_move
    if captured:
        cut = np.empty(NUM_CARDS, dtype=np.int64)
        n = _cut_off(s, center, nb, nbn, cut)
        if n:
            d = s.discard_len
            for i in range(n):
                s.discard[d + i] = s.board[cut[i]]
            s.discard_len = d + n
            _remove(s, cut, n, nb, nbn, compat)
    drawn = 0
    hand = s.hands[p]
    while s.hand_len[p] < HAND_SIZE and s.draw_len > 0:
        top = s.draw_len - 1
        c = s.draw[top]
        s.draw_len = top
        k = s.hand_len[p]  # insort
        while k > 0 and hand[k - 1] > c:
            hand[k] = hand[k - 1]
            k -= 1
        hand[k] = c
        s.hand_len[p] += 1
        drawn += 1
    if drawn:
        _hist_add(s, p, DRAW, drawn)
    s.in_chain = 0
    s.passes_in_row = 0
    s.last_pass[p] = 0
    s.to_move = 1 - p


@njit(cache=True)
def _apply_row(  # type: ignore[no-untyped-def]
    s, action, cells, center, nb, nbn, compat, points
) -> None:
    """``GridRules.apply_unchecked`` on game ``r``."""
    p = s.to_move
    if action == HAND_SIZE * cells:
        if s.in_chain:
            _hist_add(s, p, SOME, _capture_mask(s, nb, nbn))
            _end_turn(s, True, center, nb, nbn, compat)
        else:
            s.passes_in_row += 1
            s.last_pass[p] = 1
            s.to_move = 1 - p
        return
    slot = action // cells
    cell = action - slot * cells
    hand = s.hands[p]
    card = hand[slot]
    n = s.hand_len[p] - 1
    for i in range(slot, n):
        hand[i] = hand[i + 1]
    s.hand_len[p] = n
    _hist_add(s, p, PLACE, card)
    _place(s, cell, card, nb, nbn, compat)
    board, nbrs = s.board, s.nbrs
    k = 1 if nbrs[cell] == 4 else 0
    for j in range(nbn[cell]):
        q = nb[cell, j]
        if nbrs[q] == 4 and 0 <= board[q] < BASE:
            k += 1
    if k:  # the captured cards in the rules' order: the placed card, then its neighbours
        got = np.empty(k, dtype=np.int64)
        k = 0
        if nbrs[cell] == 4:
            got[0] = cell
            k = 1
        for j in range(nbn[cell]):
            q = nb[cell, j]
            if nbrs[q] == 4 and 0 <= board[q] < BASE:
                got[k] = q
                k += 1
        c0 = s.cap_len[p]
        for i in range(k):
            c = board[got[i]]
            s.captured[p, c0 + i] = c
            s.points[p] += points[c]
        s.cap_len[p] = c0 + k
        _remove(s, got, k, nb, nbn, compat)
        s.in_chain = 1
        if n:
            fits = _capture_mask(s, nb, nbn)
            hm = 0
            for i in range(n):
                hm |= 1 << np.int64(hand[i])
            if fits & hm:
                return
            if fits:
                _hist_add(s, p, NONE, fits)
    _end_turn(s, s.in_chain != 0, center, nb, nbn, compat)


@njit(cache=True)
def _deal_row(  # type: ignore[no-untyped-def]
    s, stream, k, cells, center, nb, nbn, compat
) -> None:
    """``GridRules.initial_state``: shuffle, 5 cards each (sorted), the base, the draw pile; random first seat."""
    deck = np.arange(NUM_CARDS, dtype=np.int8)
    shuffle_prefix(deck, NUM_CARDS, stream, k)
    s.board[:cells] = EMPTY
    s.nbrs[:cells] = 0
    s.fpos[:cells] = -1
    s.front_len = 0
    s.card_cell[:] = -1
    for p in range(2):
        hand = s.hands[p]
        for i in range(HAND_SIZE):
            c = deck[p * HAND_SIZE + i]
            j = i
            while j > 0 and hand[j - 1] > c:
                hand[j] = hand[j - 1]
                j -= 1
            hand[j] = c
        s.hand_len[p] = HAND_SIZE
        s.cap_len[p] = 0
        s.points[p] = 0
        s.last_pass[p] = 0
        s.hist_len[p] = 0
    s.base_card = deck[2 * HAND_SIZE]
    for i in range(MAX_DRAW):
        s.draw[i] = deck[2 * HAND_SIZE + 1 + i]
    s.draw_len = MAX_DRAW
    s.discard_len = 0
    s.to_move = below(stream, k, 2)
    s.in_chain = 0
    s.passes_in_row = 0
    _place(s, center, BASE, nb, nbn, compat)


@njit(cache=True)
def _status_row(s: Any, k: int, current: np.ndarray, returns: np.ndarray) -> None:
    returns[k, 0] = 0.0
    returns[k, 1] = 0.0
    if s.passes_in_row < 2:
        current[k] = s.to_move
        return
    current[k] = -1
    if s.points[0] != s.points[1]:
        returns[k, 0] = 1.0 if s.points[0] > s.points[1] else -1.0
        returns[k, 1] = -returns[k, 0]


@njit(cache=True)
def _legal_row(s: Any, cells: int, nb: np.ndarray, nbn: np.ndarray, out: np.ndarray) -> int:
    """The legal actions of one record into ``out`` (placements in frontier order, then pass/end); how many."""
    if s.passes_in_row >= 2:
        return 0
    n = 0
    p = s.to_move
    hl = s.hand_len[p]
    if hl:
        hand = s.hands[p]
        chain = s.in_chain != 0
        for i in range(s.front_len):
            cell = s.front[i]
            if chain and not _captures_at(s, cell, nb, nbn):
                continue
            m = s.allowed[i]
            for j in range(hl):
                if m >> np.int64(hand[j]) & 1:
                    out[n] = j * cells + cell
                    n += 1
    out[n] = HAND_SIZE * cells
    return n + 1


@njit(cache=True)
def _mask_row(s: Any, cells: int, nb: np.ndarray, nbn: np.ndarray, row: np.ndarray) -> None:
    row[:] = 0
    if s.passes_in_row >= 2:
        return
    p = s.to_move
    hl = s.hand_len[p]
    if hl:
        hand = s.hands[p]
        chain = s.in_chain != 0
        for i in range(s.front_len):
            cell = s.front[i]
            if chain and not _captures_at(s, cell, nb, nbn):
                continue
            m = s.allowed[i]
            for j in range(hl):
                if m >> np.int64(hand[j]) & 1:
                    row[j * cells + cell] = 1
    row[HAND_SIZE * cells] = 1


@njit(cache=True)
def _observe_row(s: Any, seat: int, o: np.ndarray, offs: np.ndarray, cells: int, center: int) -> None:
    """``Encoder.encode`` into the zeroed row ``o``."""
    opp = 1 - seat
    o[offs[O_OCC] + center] = 1.0
    o[offs[O_BASE] + center] = 1.0
    hand = s.hands[seat]
    for i in range(s.hand_len[seat]):
        c = hand[i]
        o[offs[O_HAND] + c] = 1.0
        o[offs[O_SLOT] + i * 17 + c // 13] = 1.0
        o[offs[O_SLOT] + i * 17 + 4 + c % 13] = 1.0
    for i in range(s.cap_len[seat]):
        o[offs[O_OWN_CAP] + s.captured[seat, i]] = 1.0
    for i in range(s.cap_len[opp]):
        o[offs[O_OPP_CAP] + s.captured[opp, i]] = 1.0
    for i in range(s.discard_len):
        o[offs[O_DISCARD] + s.discard[i]] = 1.0
    for c in range(NUM_CARDS):
        cell = s.card_cell[c]
        if cell >= 0:
            o[offs[O_OCC] + cell] = 1.0
            o[offs[O_SUIT] + (c // 13) * cells + cell] = 1.0
            o[offs[O_RANK] + (c % 13) * cells + cell] = 1.0
            o[offs[O_TABLE_CARDS] + c] = 1.0
    o[offs[O_OWN_SCORE]] = s.points[seat] / TOTAL_POINTS
    o[offs[O_OPP_SCORE]] = s.points[opp] / TOTAL_POINTS
    o[offs[O_OPP_HAND]] = s.hand_len[opp] / HAND_SIZE
    o[offs[O_DRAW_SIZE]] = s.draw_len / MAX_DRAW
    if s.last_pass[opp]:
        o[offs[O_OPP_PASSED]] = 1.0
    if s.passes_in_row < 2 and s.to_move == seat:
        o[offs[O_TO_MOVE]] = 1.0
        if s.in_chain:
            o[offs[O_IN_CHAIN]] = 1.0


@njit(cache=True)
def _belief_row(s: Any, seat: int, o: np.ndarray, offs: np.ndarray, nb: np.ndarray, nbn: np.ndarray) -> None:
    """``Encoder._belief_ones`` and ``_belief_counts``: version 1's fields into ``o`` (zeros there)."""
    seen = 0
    for i in range(s.hand_len[seat]):
        seen |= np.int64(1) << np.int64(s.hands[seat, i])
    for c in range(NUM_CARDS):  # face up: without a branch per card
        seen |= np.int64(s.card_cell[c] >= 0) << c
    for i in range(s.discard_len):
        seen |= np.int64(1) << np.int64(s.discard[i])
    for p in range(2):
        for i in range(s.cap_len[p]):
            seen |= np.int64(1) << np.int64(s.captured[p, i])
    unseen = ALL & ~seen
    opp = 1 - seat
    lacked = 0
    drawn = 0
    for i in range(s.hist_len[opp] - 1, -1, -1):  # newest first, as ``latest_lack`` walks
        kind = s.hist_kind[opp, i]
        if kind == DRAW:
            drawn += s.hist_val[opp, i]
        elif kind == NONE and s.hist_val[opp, i] != 0:
            lacked = s.hist_val[opp, i]
            break
    fits = 0
    capture = 0
    for i in range(s.front_len):
        fits |= s.allowed[i]
        if _captures_at(s, s.front[i], nb, nbn):
            capture |= s.allowed[i]
    lacked_unseen = lacked & unseen
    o_unseen, o_lacked, o_fits, o_capture = offs[O_UNSEEN], offs[O_LACKED], offs[O_FITS], offs[O_FITS_CAPTURE]
    o_suit, o_rank = offs[O_UNSEEN_SUIT], offs[O_UNSEEN_RANK]
    count = 0
    for k in range(4):  # every bit written, 0 or 1, without a branch per card (random bits mispredict)
        in_suit = 0
        for r in range(13):
            c = 13 * k + r
            u = (unseen >> c) & 1
            o[o_unseen + c] = u
            o[o_lacked + c] = (lacked_unseen >> c) & 1
            o[o_fits + c] = (fits >> c) & 1
            o[o_capture + c] = (capture >> c) & 1
            o[o_rank + r] += u  # a count (exact small floats), divided below
            in_suit += u
        o[o_suit + k] = np.float64(in_suit) / 13  # in float64, then float32: the Python encoder's value
        count += in_suit
    for r in range(13):
        o[o_rank + r] = np.float64(o[o_rank + r]) / 4
    o[offs[O_UNSEEN_COUNT]] = count / MAX_UNSEEN
    if lacked:
        o[offs[O_LACKED_ROOM]] = min(drawn, np.int64(s.hand_len[opp])) / HAND_SIZE


@njit(cache=True)
def _put(o: np.ndarray, nz: np.ndarray, n: int, at: int, value: float) -> int:
    o[at] = value
    nz[n] = at
    return n + 1


@njit(cache=True)
def _observe_changes(  # type: ignore[no-untyped-def]
    s, r, seat, o, shown, nz, nz_len, offs, cells, center
) -> None:
    """Row ``o`` (last written by this function with ``shown[r]``, ``nz[r]``) rewritten as ``_observe_row`` writes it.

    The table planes and ``table_cards`` change only where a card came or went: ``shown[r, c]`` is the cell
    whose bits card ``c`` has set (-1: none). Every other non-zero (hand, piles, scalars) is cleared and
    written again, its positions kept in ``nz[r, :nz_len[r]]`` (at most ``MAX_OTHER_NONZEROS``).
    """
    z = nz[r]
    for i in range(nz_len[r]):
        o[z[i]] = 0.0
    seen = shown[r]
    card_cell = s.card_cell
    for c in range(NUM_CARDS):
        old = seen[c]
        if old >= 0 and old != card_cell[c]:
            o[offs[O_OCC] + old] = 0.0
            o[offs[O_SUIT] + (c // 13) * cells + old] = 0.0
            o[offs[O_RANK] + (c % 13) * cells + old] = 0.0
            o[offs[O_TABLE_CARDS] + c] = 0.0
    for c in range(NUM_CARDS):
        cell = card_cell[c]
        if cell >= 0 and seen[c] != cell:
            o[offs[O_OCC] + cell] = 1.0
            o[offs[O_SUIT] + (c // 13) * cells + cell] = 1.0
            o[offs[O_RANK] + (c % 13) * cells + cell] = 1.0
            o[offs[O_TABLE_CARDS] + c] = 1.0
        seen[c] = cell
    opp = 1 - seat
    n = 0
    hand = s.hands[seat]
    for i in range(s.hand_len[seat]):
        c = hand[i]
        n = _put(o, z, n, offs[O_HAND] + c, 1.0)
        n = _put(o, z, n, offs[O_SLOT] + i * 17 + c // 13, 1.0)
        n = _put(o, z, n, offs[O_SLOT] + i * 17 + 4 + c % 13, 1.0)
    for i in range(s.cap_len[seat]):
        n = _put(o, z, n, offs[O_OWN_CAP] + s.captured[seat, i], 1.0)
    for i in range(s.cap_len[opp]):
        n = _put(o, z, n, offs[O_OPP_CAP] + s.captured[opp, i], 1.0)
    for i in range(s.discard_len):
        n = _put(o, z, n, offs[O_DISCARD] + s.discard[i], 1.0)
    n = _put(o, z, n, offs[O_OWN_SCORE], s.points[seat] / TOTAL_POINTS)
    n = _put(o, z, n, offs[O_OPP_SCORE], s.points[opp] / TOTAL_POINTS)
    n = _put(o, z, n, offs[O_OPP_HAND], s.hand_len[opp] / HAND_SIZE)
    n = _put(o, z, n, offs[O_DRAW_SIZE], s.draw_len / MAX_DRAW)
    if s.last_pass[opp]:
        n = _put(o, z, n, offs[O_OPP_PASSED], 1.0)
    if s.passes_in_row < 2 and s.to_move == seat:
        n = _put(o, z, n, offs[O_TO_MOVE], 1.0)
        if s.in_chain:
            n = _put(o, z, n, offs[O_IN_CHAIN], 1.0)
    nz_len[r] = n


# ============================================================================================ determinize
@njit(cache=True)
def _comb(n: int, r: int) -> int:
    if r < 0 or r > n:
        return 0
    out = 1
    for i in range(r):
        out = out * (n - i) // (i + 1)
    return out


@njit(cache=True)
def _schedulable(lo: np.ndarray, hi: np.ndarray, count: int, capacity: np.ndarray, refills: int) -> bool:
    """``HandFacts._schedulable``: each item gets a refill in ``[lo, hi]``, refill ``j`` taking ``capacity[j]`` exactly.

    Earliest deadline first, with the waiting items counted by deadline (deadlines lie in ``0..refills``).
    """
    for k in range(count):
        if lo[k] > refills:
            return False  # never released
    waiting = np.zeros(refills + 1, dtype=np.int64)
    total = 0
    for j in range(refills + 1):
        for k in range(count):
            if lo[k] == j:
                waiting[hi[k]] += 1
                total += 1
        cap = capacity[j]
        if cap > total:
            return False
        total -= cap
        d = 0
        while cap:
            take = min(cap, waiting[d])
            waiting[d] -= take
            cap -= take
            d += 1
        for d in range(j + 1):
            if waiting[d]:
                return False  # a card due by refill j found no room in it
    return total == 0


@njit(cache=True)
def _consistent(  # type: ignore[no-untyped-def]
    hand, size, placed, placed_hi, n_placed, facts, n_facts, capacity, refills
) -> bool:
    """``HandFacts.consistent``: the hand ``hand[:size]`` admits a drawing schedule meeting every fact.

    ``facts[i]`` is (kind, refills so far, placements so far, mask); ``placed_hi[i]`` the refills before
    placement ``i``.
    """
    if n_facts == 0:
        return True
    count = n_placed + size
    card = np.empty(count, dtype=np.int64)
    idx = np.empty(count, dtype=np.int64)
    lo = np.zeros(count, dtype=np.int64)
    hi = np.empty(count, dtype=np.int64)
    for i in range(n_placed):
        card[i], hi[i], idx[i] = placed[i], placed_hi[i], i
    for i in range(size):
        card[n_placed + i], hi[n_placed + i], idx[n_placed + i] = hand[i], refills, n_placed
    for f in range(n_facts):
        if facts[f, 0] == NONE:
            at, before, mask = facts[f, 1], facts[f, 2], facts[f, 3]
            for k in range(count):
                if idx[k] >= before and mask >> card[k] & 1 and lo[k] <= at:
                    lo[k] = at + 1
    for k in range(count):
        if lo[k] > hi[k]:
            return False
    # the SOME facts no schedule meets by itself: each needs a witness, chosen among its candidates
    cand = np.empty(n_facts * count, dtype=np.int64)
    start = np.zeros(n_facts + 1, dtype=np.int64)
    when = np.empty(n_facts, dtype=np.int64)
    n_some = 0
    used = 0
    for f in range(n_facts):
        if facts[f, 0] != SOME:
            continue
        at, before, mask = facts[f, 1], facts[f, 2], facts[f, 3]
        first = used
        met = False
        for k in range(count):
            if idx[k] >= before and mask >> card[k] & 1 and lo[k] <= at:
                cand[used] = k
                used += 1
                if hi[k] <= at:
                    met = True
        if used == first:
            return False
        if met:
            used = first
            continue
        start[n_some] = first
        when[n_some] = at
        n_some += 1
        start[n_some] = used
    if n_some == 0:
        return _schedulable(lo, hi, count, capacity, refills)
    pick = np.zeros(n_some, dtype=np.int64)
    h2 = np.empty(count, dtype=np.int64)
    while True:
        h2[:] = hi
        for f in range(n_some):
            k = cand[start[f] + pick[f]]
            h2[k] = min(h2[k], when[f])
        if _schedulable(lo, h2, count, capacity, refills):
            return True
        f = n_some - 1  # the next choice (the last fact's candidate varies fastest, as itertools.product)
        while f >= 0:
            pick[f] += 1
            if pick[f] < start[f + 1] - start[f]:
                break
            pick[f] = 0
            f -= 1
        if f < 0:
            return False


@njit(cache=True)
def _draw_hand(  # type: ignore[no-untyped-def]
    allowed, n_allowed, size, bounds, n_bounds, stream, k, chosen
) -> bool:
    """``redeal.draw_hand`` with bounds "at least one card of mask ``bounds[b]``": ``chosen[i]`` marks the hand.

    Uniform over the subsets of ``allowed[:n_allowed]`` of ``size`` that meet every bound: the subsets are
    counted per pattern of group sizes (cards grouped by the bounds they belong to), a pattern drawn by its
    count, then the cards of each group uniformly. False if no subset meets the bounds.
    """
    chosen[:n_allowed] = False
    pos = np.arange(n_allowed)
    if n_bounds == 0:
        if size > n_allowed:
            return False
        for i in range(size):
            j = i + below(stream, k, n_allowed - i)
            pos[i], pos[j] = pos[j], pos[i]
            chosen[pos[i]] = True
        return True
    key = np.zeros(n_allowed, dtype=np.int64)
    for i in range(n_allowed):
        for b in range(n_bounds):
            if bounds[b] >> allowed[i] & 1:
                key[i] |= 1 << b
    keys = np.unique(key[:n_allowed])
    groups = keys.shape[0]
    members = np.empty(n_allowed, dtype=np.int64)  # pool positions grouped by key
    gstart = np.zeros(groups + 1, dtype=np.int64)
    n = 0
    for g in range(groups):
        gstart[g] = n
        for i in range(n_allowed):
            if key[i] == keys[g]:
                members[n] = i
                n += 1
    gstart[groups] = n
    xs = np.zeros(groups, dtype=np.int64)
    total = 0
    for rnd in range(2):  # the total count, then the pattern at a uniform position below it
        u = below(stream, k, total) if rnd else 0
        xs[:] = 0
        while True:
            got = 0
            for g in range(groups):
                got += xs[g]
            ok = got == size
            for b in range(n_bounds):
                if not ok:
                    break
                held = 0
                for g in range(groups):
                    if keys[g] >> b & 1:
                        held += xs[g]
                ok = held >= 1
            if ok:
                w = 1
                for g in range(groups):
                    w *= _comb(gstart[g + 1] - gstart[g], xs[g])
                if rnd == 0:
                    total += w
                elif u < w:
                    break
                else:
                    u -= w
            g = groups - 1  # the next pattern
            while g >= 0:
                xs[g] += 1
                if xs[g] <= min(gstart[g + 1] - gstart[g], size):
                    break
                xs[g] = 0
                g -= 1
            if g < 0:
                break
        if total == 0:
            return False
    for g in range(groups):
        a, m = gstart[g], gstart[g + 1] - gstart[g]
        for i in range(xs[g]):
            j = i + below(stream, k, m - i)
            members[a + i], members[a + j] = members[a + j], members[a + i]
            chosen[members[a + i]] = True
    return True


@njit(cache=True)
def _facts_of(s: Any, opp: int, current: int) -> Any:
    """``HandFacts(state.hist[opp], len(hand))`` plus ``add_current(SOME, current)``, as arrays."""
    n = s.hist_len[opp]
    placed = np.empty(n + 1, dtype=np.int64)
    placed_hi = np.empty(n + 1, dtype=np.int64)
    facts = np.empty((n + 1, 4), dtype=np.int64)
    capacity = np.zeros(n + 2, dtype=np.int64)
    refills = n_placed = n_facts = drawn = 0
    for i in range(n):
        kind, value = s.hist_kind[opp, i], s.hist_val[opp, i]
        if kind == DRAW:
            refills += 1
            capacity[refills] = value
            drawn += value
        elif kind == PLACE:
            placed[n_placed] = value
            placed_hi[n_placed] = refills
            n_placed += 1
        elif value:
            facts[n_facts, 0], facts[n_facts, 1], facts[n_facts, 2], facts[n_facts, 3] = kind, refills, n_placed, value
            n_facts += 1
    if current:
        facts[n_facts, 0], facts[n_facts, 1], facts[n_facts, 2], facts[n_facts, 3] = SOME, refills, n_placed, current
        n_facts += 1
    capacity[0] = n_placed + s.hand_len[opp] - drawn
    return placed, placed_hi, n_placed, facts, n_facts, capacity, refills


@njit(cache=True)
def _hand_of(chosen: np.ndarray, allowed: np.ndarray, n_allowed: int, hand: np.ndarray) -> None:
    """The cards ``chosen`` marks among ``allowed[:n_allowed]`` into ``hand``, in card order."""
    h = 0
    for i in range(n_allowed):
        if chosen[i]:
            hand[h] = allowed[i]
            h += 1


@njit(cache=True)
def _enumerate_hand(  # type: ignore[no-untyped-def]
    allowed,
    n_allowed,
    size,
    bounds,
    n_bounds,
    placed,
    placed_hi,
    n_placed,
    facts,
    n_facts,
    capacity,
    refills,
    stream,
    k,
    chosen,
) -> bool:
    """``knowledge.redeal_hand``'s last resort: every hand of ``size`` from ``allowed`` in turn, one of those that meet
    the bounds and the facts kept uniformly (reservoir), marked in ``chosen``. False if none does."""
    if size > n_allowed:
        return False
    idx = np.arange(size)
    keep = np.empty(size, dtype=np.int64)
    hand = np.empty(HAND_SIZE, dtype=np.int64)
    found = 0
    while True:
        ok = True
        for b in range(n_bounds):
            hit = False
            for i in range(size):
                if bounds[b] >> allowed[idx[i]] & 1:
                    hit = True
            ok = ok and hit
        if ok:
            for i in range(size):
                hand[i] = allowed[idx[i]]
            if _consistent(hand, size, placed, placed_hi, n_placed, facts, n_facts, capacity, refills):
                found += 1
                if below(stream, k, found) == 0:
                    keep[:] = idx[:size]
        i = size - 1  # the next combination in lexicographic order
        while i >= 0 and idx[i] == n_allowed - size + i:
            i -= 1
        if i < 0:
            break
        idx[i] += 1
        for j in range(i + 1, size):
            idx[j] = idx[j - 1] + 1
    if found == 0:
        return False
    chosen[:n_allowed] = False
    for i in range(size):
        chosen[keep[i]] = True
    return True


@njit(cache=True)
def _determinize_row(  # type: ignore[no-untyped-def]
    s: Any, seat: int, stream: np.ndarray, k: int, nb: np.ndarray, nbn: np.ndarray, tries: int
) -> bool:
    """``GridRules.determinize`` on the copy ``s``: the opponent's hand, the draw pile and the base redealt (``tries``
    rejection draws, then every hand in turn)."""
    opp = 1 - seat
    current = 0
    if s.to_move == opp and s.in_chain and s.passes_in_row < 2:
        current = _capture_mask(s, nb, nbn)
    placed, placed_hi, n_placed, facts, n_facts, capacity, refills = _facts_of(s, opp, current)
    barred = 0
    for f in range(n_facts):
        if facts[f, 0] == NONE and facts[f, 1] == refills:
            barred |= facts[f, 3]
    bounds = np.empty(n_facts, dtype=np.int64)
    n_bounds = 0
    for f in range(n_facts):
        if facts[f, 0] == SOME and facts[f, 1] == refills:
            mask = facts[f, 3]
            later = False
            for i in range(facts[f, 2], n_placed):
                if mask >> placed[i] & 1:
                    later = True
            if not later:
                bounds[n_bounds] = mask
                n_bounds += 1
    size = s.hand_len[opp]
    pool = 0  # the unseen cards as a mask, read in card order
    for i in range(size):
        pool |= 1 << np.int64(s.hands[opp, i])
    for i in range(s.draw_len):
        pool |= 1 << np.int64(s.draw[i])
    pool |= 1 << np.int64(s.base_card)
    allowed = np.empty(NUM_CARDS, dtype=np.int64)
    rest = np.empty(NUM_CARDS, dtype=np.int64)
    n_allowed = n_rest = 0
    for c in range(NUM_CARDS):
        if pool >> c & 1:
            if barred >> c & 1:
                rest[n_rest] = c
                n_rest += 1
            else:
                allowed[n_allowed] = c
                n_allowed += 1
    chosen = np.empty(NUM_CARDS, dtype=np.bool_)
    hand = np.empty(HAND_SIZE, dtype=np.int64)
    found = False
    for _ in range(tries):
        if not _draw_hand(allowed, n_allowed, size, bounds, n_bounds, stream, k, chosen):
            return False
        _hand_of(chosen, allowed, n_allowed, hand)
        if _consistent(hand, size, placed, placed_hi, n_placed, facts, n_facts, capacity, refills):
            found = True
            break
    if not found:  # consistent hands too rare for rejection: draw among all of them
        if not _enumerate_hand(allowed, n_allowed, size, bounds, n_bounds, placed, placed_hi, n_placed, facts,
                               n_facts, capacity, refills, stream, k, chosen):  # fmt: skip
            return False
        _hand_of(chosen, allowed, n_allowed, hand)
    for i in range(size):
        s.hands[opp, i] = hand[i]  # ascending: allowed is in card order
    for i in range(n_allowed):
        if not chosen[i]:
            rest[n_rest] = allowed[i]
            n_rest += 1
    shuffle_prefix(rest, n_rest, stream, k)
    for i in range(n_rest - 1):
        s.draw[i] = rest[i]
    s.base_card = rest[n_rest - 1]
    return True


# ============================================================================================ drivers over rows
@njit(cache=True)
def _apply(states, rows, actions, cells, center, nb, nbn, compat, points):  # type: ignore[no-untyped-def]
    for k in range(rows.shape[0]):
        _apply_row(states[rows[k]], actions[k], cells, center, nb, nbn, compat, points)


@njit(cache=True)
def _deal(states, rows, stream, cells, center, nb, nbn, compat):  # type: ignore[no-untyped-def]
    for k in range(rows.shape[0]):
        _deal_row(states[rows[k]], stream, k, cells, center, nb, nbn, compat)


@njit(cache=True)
def _status(states, rows, current, returns):  # type: ignore[no-untyped-def]
    for k in range(rows.shape[0]):
        _status_row(states[rows[k]], k, current, returns)


@njit(cache=True)
def _masks(states, rows, out, cells, nb, nbn):  # type: ignore[no-untyped-def]
    for k in range(rows.shape[0]):
        _mask_row(states[rows[k]], cells, nb, nbn, out[k])


@njit(cache=True)
def _observe(states, rows, seats, out, offs, cells, center, nb, nbn):  # type: ignore[no-untyped-def]
    for k in range(rows.shape[0]):
        out[k, :] = 0.0
        _observe_row(states[rows[k]], seats[k], out[k], offs, cells, center)
        if offs[O_UNSEEN] >= 0:
            _belief_row(states[rows[k]], seats[k], out[k], offs, nb, nbn)


@njit(cache=True)
def _observe_rows(states, rows, seats, out, shown, nz, nz_len, fresh, offs, cells, center, nb, nbn):  # type: ignore[no-untyped-def]
    for k in range(rows.shape[0]):
        r = rows[k]
        o = out[r]
        if fresh[r]:  # not written by this object yet: all of it, once
            o[:] = 0.0
            o[offs[O_OCC] + center] = 1.0
            o[offs[O_BASE] + center] = 1.0
            shown[r, :] = -1
            nz_len[r] = 0
            fresh[r] = False
        _observe_changes(states[r], r, seats[k], o, shown, nz, nz_len, offs, cells, center)
        if offs[O_UNSEEN] >= 0:  # version 1's fields, the last ones: rewritten whole
            o[offs[O_UNSEEN] :] = 0.0
            _belief_row(states[r], seats[k], o, offs, nb, nbn)


@njit(cache=True)
def _rollout(states, rows, stream, returns, cells, center, nb, nbn, compat, points):  # type: ignore[no-untyped-def]
    legal = np.empty(HAND_SIZE * MAX_FRONTIER + 1, dtype=np.int64)
    current = np.empty(rows.shape[0], dtype=np.int64)
    for k in range(rows.shape[0]):
        s = states[rows[k]]
        while True:
            n = _legal_row(s, cells, nb, nbn, legal)
            if n == 0:
                break
            _apply_row(s, legal[below(stream, k, n)], cells, center, nb, nbn, compat, points)
        _status_row(s, k, current, returns)


@njit(cache=True)
def _determinize(out, seats, stream, failed, nb, nbn, tries):  # type: ignore[no-untyped-def]
    for k in range(seats.shape[0]):
        failed[k] = not _determinize_row(out[k], seats[k], stream, k, nb, nbn, tries)


def _seats(seats: np.ndarray) -> np.ndarray:
    """``seats`` as int64, each 0 or 1 (the kernels index the two seats' fields with them); ValueError otherwise."""
    seats = np.asarray(seats, dtype=np.int64)
    if len(seats) and (seats.min() < 0 or seats.max() > 1):
        raise ValueError(f"grid seats are 0 and 1, got seats {np.unique(seats).tolist()}")
    return seats


# ============================================================================================ one row, for search
def params_dtype(capacity: int) -> np.dtype[Any]:
    """The board's tables as one record (``RowKernels.params``), neighbour tables padded to the record's capacity."""
    return np.dtype(
        [
            ("nb", np.int64, (capacity, 4)),
            ("nbn", np.int64, (capacity,)),
            ("compat", np.int64, (len(COMPAT),)),
            ("points", np.int64, (len(POINTS),)),
            ("offs", np.int64, (len(LAYOUT_FIELDS),)),
            ("cells", np.int64),
            ("center", np.int64),
        ]
    )


def _status_fn(states: Any, row: int, params: Any, returns: Any) -> int:
    s = states[row]
    returns[0] = 0.0
    returns[1] = 0.0
    if s.passes_in_row < 2:
        return int(s.to_move)
    if s.points[0] != s.points[1]:
        returns[0] = 1.0 if s.points[0] > s.points[1] else -1.0
        returns[1] = -returns[0]
    return -1


def _legal_fn(states: Any, row: int, params: Any, out: Any) -> int:
    p = params[0]
    return _legal_row(states[row], p.cells, p.nb, p.nbn, out)  # type: ignore[no-any-return]


def _apply_fn(states: Any, row: int, params: Any, action: int) -> None:
    p = params[0]
    _apply_row(states[row], action, p.cells, p.center, p.nb, p.nbn, p.compat, p.points)


def _observe_fn(states: Any, row: int, params: Any, seat: int, out: Any) -> None:
    p = params[0]
    out[:] = 0.0
    _observe_row(states[row], seat, out, p.offs, p.cells, p.center)
    if p.offs[O_UNSEEN] >= 0:
        _belief_row(states[row], seat, out, p.offs, p.nb, p.nbn)


def _determinize_fn(
    src: Any, src_row: int, params: Any, seat: int, dst: Any, dst_row: int, stream: Any, k: int
) -> bool:
    dst[dst_row] = src[src_row]
    p = params[0]
    return _determinize_row(dst[dst_row], seat, stream, k, p.nb, p.nbn, MAX_TRIES)  # type: ignore[no-any-return]


_ROW_FUNCTIONS = (_status_fn, _legal_fn, _apply_fn, _observe_fn, _determinize_fn)


def row_functions(capacity: int) -> tuple[Any, ...]:
    """The five row functions compiled for records of ``capacity`` cells (``compiled_rows``: when first asked for)."""
    return compiled_rows(_ROW_FUNCTIONS, grid_dtype(capacity), params_dtype(capacity))


# ============================================================================================ the class
class GridBatched(BatchedGame[GridState]):
    """grid's rules over rows of ``grid_dtype(capacity(board_size**2))``; see the module docstring."""

    def __init__(self, rules: Any) -> None:
        super().__init__(rules)
        board = rules.board
        self.board = board
        self.cells = board.cells
        self.center = board.center
        self._dtype = grid_dtype(capacity(board.cells))
        self.nb = np.full((board.cells, 4), -1, dtype=np.int64)
        self.nbn = np.zeros(board.cells, dtype=np.int64)
        for cell, around in enumerate(board.neighbours):
            self.nb[cell, : len(around)] = around
            self.nbn[cell] = len(around)
        self.compat = np.array(COMPAT, dtype=np.int64)
        self.points = np.array(POINTS, dtype=np.int64)
        slices = rules.layout.slices
        self.offs = np.array([slices[name].start if name in slices else -1 for name in LAYOUT_FIELDS], dtype=np.int64)
        # observe_rows' record of what it wrote into the rows of one buffer (see _observe_changes)
        self._written: tuple[int, tuple[int, ...]] | None = None
        self._shown = np.empty((0, NUM_CARDS), dtype=np.int16)
        self._nz = np.empty((0, MAX_OTHER_NONZEROS), dtype=np.int64)
        self._nz_len = np.empty(0, dtype=np.int64)
        self._fresh = np.empty(0, dtype=np.bool_)
        self.tries = MAX_TRIES  # determinize's rejection draws before it goes through every hand

    @property
    def dtype(self) -> np.dtype[Any]:
        """``grid_dtype`` of this board size's capacity."""
        return self._dtype

    # ------------------------------------------------------------------ states
    def to_batched(self, state: GridState, states: np.ndarray, row: int) -> None:
        """Every field of ``state`` into ``states[row]`` (the frontier listed by cell)."""
        hist = [entries(state.hist[0]), entries(state.hist[1])]
        if max(len(h) for h in hist) > MAX_HISTORY:
            raise StateFormatError(
                f"grid state: a seat's history holds {max(len(h) for h in hist)} entries; "
                f"play never makes more than {MAX_HISTORY}"
            )
        if len(state.draw) > MAX_DRAW or len(state.frontier) > MAX_FRONTIER:
            raise StateFormatError(
                f"grid state: a draw pile of {len(state.draw)} cards (at most {MAX_DRAW} after the deal) or "
                f"a frontier of {len(state.frontier)} cells (at most {MAX_FRONTIER}) cannot arise in play"
            )
        n = self.cells
        r = np.zeros((), dtype=self._dtype)
        r["board"][:n] = state.board
        r["nbrs"][:n] = state.nbrs
        r["fpos"][:n] = -1
        front = sorted(state.frontier)
        r["front"][: len(front)] = front
        r["front_len"] = len(front)
        for i, cell in enumerate(front):
            r["fpos"][cell] = i
            r["allowed"][i] = state.allowed[cell]
        r["card_cell"] = -1
        for cell, card in state.faceup.items():
            r["card_cell"][card] = cell
        for p in range(2):
            r["hands"][p, : len(state.hands[p])] = state.hands[p]
            r["hand_len"][p] = len(state.hands[p])
            r["captured"][p, : len(state.captured[p])] = state.captured[p]
            r["cap_len"][p] = len(state.captured[p])
            r["points"][p] = state.points[p]
            r["last_pass"][p] = state.last_pass[p]
            r["hist_len"][p] = len(hist[p])
            for i, (kind, value) in enumerate(hist[p]):
                r["hist_kind"][p, i] = kind
                r["hist_val"][p, i] = value
        r["draw"][: len(state.draw)] = state.draw
        r["draw_len"] = len(state.draw)
        r["discard"][: len(state.discard)] = state.discard
        r["discard_len"] = len(state.discard)
        r["base_card"] = state.base_card
        r["to_move"] = state.to_move
        r["in_chain"] = state.in_chain
        r["passes_in_row"] = state.passes_in_row
        states[row] = r

    def from_batched(self, states: np.ndarray, row: int) -> GridState:
        """The ``GridState`` of ``states[row]`` (face-up cards listed by cell)."""
        r = states[row]
        n = self.cells
        board = r["board"][:n].tolist()
        front = r["front"][: int(r["front_len"])].tolist()
        allowed = [0] * n
        for i, cell in enumerate(front):
            allowed[cell] = int(r["allowed"][i])
        card_cell = r["card_cell"].tolist()
        faceup = dict(sorted((cell, c) for c, cell in enumerate(card_cell) if cell >= 0))

        def cards(a: np.ndarray, n: Any) -> list[int]:
            return a[: int(n)].tolist()  # type: ignore[no-any-return]

        hist = []
        for p in range(2):
            h = int(r["hist_len"][p])
            kinds, values = r["hist_kind"][p, :h].tolist(), r["hist_val"][p, :h].tolist()
            hist.append(from_entries(list(zip(kinds, values, strict=True))))
        return GridState(
            board,
            r["nbrs"][:n].tolist(),
            allowed,
            set(front),
            faceup,
            [cards(r["hands"][0], r["hand_len"][0]), cards(r["hands"][1], r["hand_len"][1])],
            cards(r["draw"], r["draw_len"]),
            cards(r["discard"], r["discard_len"]),
            [cards(r["captured"][0], r["cap_len"][0]), cards(r["captured"][1], r["cap_len"][1])],
            r["points"].tolist(),
            int(r["base_card"]),
            int(r["to_move"]),
            bool(r["in_chain"]),
            int(r["passes_in_row"]),
            [bool(v) for v in r["last_pass"]],
            hist,
        )

    # ------------------------------------------------------------------ the state machine
    def deal(self, states: np.ndarray, rows: np.ndarray, stream: np.ndarray) -> None:
        """Shuffle the deck, 5 cards to each hand, the base, the draw pile; the first seat at random."""
        _deal(states, rows, stream, self.cells, self.center, self.nb, self.nbn, self.compat)

    def apply(self, states: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> None:
        """Place a card (capturing, chaining, ending the turn) or pass / end the chain."""
        _apply(states, rows, actions, self.cells, self.center, self.nb, self.nbn, self.compat, self.points)

    def status(self, states: np.ndarray, rows: np.ndarray, current: np.ndarray, returns: np.ndarray) -> None:
        """Seat to move (-1 after two passes in a row) and returns (+1 / -1 by points, 0 on equal points)."""
        _status(states, rows, current, returns)

    def masks(self, states: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
        """Placements on the frontier (capturing cells only in a chain) matching every face-up neighbour, pass/end."""
        _masks(states, rows, out, self.cells, self.nb, self.nbn)

    def observe(self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """``rules.observe`` of each row for its seat, whole rows written."""
        _observe(states, rows, _seats(seats), out, self.offs, self.cells, self.center, self.nb, self.nbn)

    def observe_rows(self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """As ``observe`` into ``out[rows]``, rewriting only what changed since this object last wrote each row.

        The object remembers which buffer it writes (its address and shape): a row it has not written in
        that buffer yet is written in full once, and a new buffer starts every row afresh.
        """
        key = (out.__array_interface__["data"][0], out.shape)
        if self._written != key:
            self._written = key
            n = out.shape[0]
            self._shown = np.full((n, NUM_CARDS), -1, dtype=np.int16)
            self._nz = np.zeros((n, MAX_OTHER_NONZEROS), dtype=np.int64)
            self._nz_len = np.zeros(n, dtype=np.int64)
            self._fresh = np.ones(n, dtype=np.bool_)
        _observe_rows(
            states,
            rows,
            _seats(seats),
            out,
            self._shown,
            self._nz,
            self._nz_len,
            self._fresh,
            self.offs,
            self.cells,
            self.center,
            self.nb,
            self.nbn,
        )

    def potential(self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        """``GridRules.potential``: the points lead of each row's seat / 100, clipped to [-1, 1]."""
        seats = _seats(seats)
        points = states["points"][rows].astype(np.int64)
        k = np.arange(len(rows))
        out[: len(rows)] = np.clip((points[k, seats] - points[k, 1 - seats]) / 100.0, -1.0, 1.0)

    # ------------------------------------------------------------------ search
    def determinize(
        self, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, stream: np.ndarray, out: np.ndarray
    ) -> None:
        """The opponent's hand redealt as the public history allows (``GridRules.determinize``), then draw and base."""
        out[: len(rows)] = states[rows]
        failed = np.zeros(len(rows), dtype=np.bool_)
        _determinize(out[: len(rows)], _seats(seats), stream, failed, self.nb, self.nbn, self.tries)
        if failed.any():
            k = int(np.flatnonzero(failed)[0])
            raise NoConsistentDealError(
                f"grid row {int(rows[k])}: no opponent hand is consistent with the public history (none among every "
                "hand the unseen cards make)"
            )

    def rollout(self, states: np.ndarray, rows: np.ndarray, stream: np.ndarray, returns: np.ndarray) -> None:
        """Uniformly random legal actions to the end of each row's game; its returns."""
        _rollout(states, rows, stream, returns, self.cells, self.center, self.nb, self.nbn, self.compat, self.points)

    def row_kernels(self) -> RowKernels:
        """The rules of one row for search (``RowKernels``), reading this board's tables (``params_dtype``)."""
        cap = capacity(self.cells)
        params = np.zeros(1, dtype=params_dtype(cap))
        p = params[0]
        p["nb"][: self.cells] = self.nb
        p["nbn"][: self.cells] = self.nbn
        p["compat"], p["points"], p["offs"] = self.compat, self.points, self.offs
        p["cells"], p["center"] = self.cells, self.center
        status, legal, apply, observe, determinize = row_functions(cap)
        return RowKernels(status, legal, apply, observe, determinize, params)


__all__ = ["GridBatched", "grid_dtype", "params_dtype"]
