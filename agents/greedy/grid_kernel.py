"""grid greedy's scoring of one decision as one compiled function (Numba), on flat arrays.

``GreedyAgent.action_values`` (``agents.greedy.grid``) reads the observation into a dict of cells and
scores every legal move in Python; this module computes the same scores from the observation array in
one call of ``values``, compiled by Numba when it is installed (the ``train`` extra brings it). The
arithmetic is the same, step for step: ``read``, ``captured_by``, ``cut_off``, ``frontier``, ``danger``,
``setup``, ``evaluate_capture`` and ``evaluate_quiet`` (with its per-cell sharing), on an ``int64``
array of cells (-1 empty, ``BASE`` the base, else the card) and card sets as ``int64`` bit masks (52
bits). Only sums over a set of cells may add in another order (the dict version follows a Python
set's order), so a score may differ in its last bits; ``tests/test_greedy_grid_kernel.py`` compares
the two on thousands of positions.

Without Numba the functions run as plain Python (slower than the dict version; the agent then keeps the
dict version), so the same code is tested either way. ``KERNEL`` says whether the compiled one is
available. The compiled code is cached on disk beside this file (Numba's ``cache=True``), so a process
compiles it once per machine, not once per run.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from agents._numba import KERNEL as KERNEL  # re-exported: GreedyAgent reads it
from agents._numba import njit
from jericho_env.core.cards import NUM_CARDS
from jericho_env.games.grid.state import BASE, COMPAT, HAND_SIZE, POINTS

MAX_CHANGED = 12  # a quiet placement changes at most 4 neighbours x 3 cells beyond them


_TABLES: dict[tuple[int, Any], Tables] = {}


def tables_for(agent: Any) -> Tables:
    """The ``Tables`` of ``agent``'s board, built once per board size (and risk function) in a process."""
    key = (agent.board.size, agent._risk_table)
    t = _TABLES.get(key)
    if t is None:
        t = _TABLES[key] = Tables(agent)
    return t


class Tables:
    """The constant arrays one ``GreedyAgent`` passes to ``values`` (its board, actions and layout)."""

    def __init__(self, agent: Any) -> None:
        board, actions = agent.board, agent.actions
        n = board.cells
        self.nb = np.full((n, 4), -1, dtype=np.int64)
        self.nbn = np.zeros(n, dtype=np.int64)
        for cell, around in enumerate(board.neighbours):
            self.nb[cell, : len(around)] = around
            self.nbn[cell] = len(around)
        self.compat = np.array(COMPAT, dtype=np.int64)
        self.points = np.array(POINTS, dtype=np.int64)
        self.rankmax = rank_max_points()
        self.dist = np.array(board.distance, dtype=np.int64)
        a = np.arange(actions.num_actions)
        self.a_slot = np.where(a < actions.pass_action, a // n, -1).astype(np.int64)
        self.a_cell = np.where(a < actions.pass_action, a % n, -1).astype(np.int64)
        self.risk = risk_tables(agent._risk_table)
        sl = agent.layout_slices
        self.offsets = np.array(
            [
                sl["hand"].start,
                sl["own_captured"].start,
                sl["opp_captured"].start,
                sl["table_cards"].start,
                sl["discard"].start,
                sl["table_occupied"].start,
                sl["table_base"].start,
                sl["table_suit"].start,
                sl["table_rank"].start,
                sl["opp_hand_size"].start,
                sl["in_chain"].start,
            ],
            dtype=np.int64,
        )
        self.pass_action = int(actions.pass_action)
        # ``values``' constant arguments after ``soft``, in its order
        self.args = (
            self.offsets,
            self.nb,
            self.nbn,
            self.compat,
            self.points,
            self.rankmax,
            self.dist,
            self.a_slot,
            self.a_cell,
            self.risk,
            self.pass_action,
        )

    def weights(self, agent: Any) -> np.ndarray:
        """The agent's weights, read at every call (a subclass or a test may change them)."""
        return np.array(
            [agent.risk_weight, agent.setup_weight, agent.card_weight, agent.distance_weight], dtype=np.float64
        )


@lru_cache(maxsize=1)
def rank_max_points() -> np.ndarray:
    """Per 13-bit set of ranks, the most points a card of those ranks is worth (points depend on the rank only)."""
    by_rank = [POINTS[r] for r in range(13)]
    if any(POINTS[c] != by_rank[c % 13] for c in range(NUM_CARDS)):
        raise AssertionError("grid points must depend on the rank alone")
    out = np.zeros(1 << 13, dtype=np.int64)
    for m in range(1, 1 << 13):
        out[m] = max(by_rank[r] for r in range(13) if m >> r & 1)
    return out


def risk_tables(risk_table: Any) -> np.ndarray:
    """``risk[u, h, k]``: ``GreedyAgent._risk_table`` for ``u`` unseen cards and an opponent hand of ``h``."""
    out = np.zeros((NUM_CARDS + 1, HAND_SIZE + 1, NUM_CARDS + 1), dtype=np.float64)
    for u in range(NUM_CARDS + 1):
        for h in range(HAND_SIZE + 1):
            out[u, h] = risk_table((1 << u) - 1, h)  # the risk depends on the number of unseen cards only
    return out


# ----------------------------------------------------------------------------------------------- kernel
@njit(cache=True)
def _popcount(x: int) -> int:
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    x = x + (x >> 8)  # byte sums by shifts, not a multiply: no overflow in plain Python on numpy ints
    x = x + (x >> 16)
    x = x + (x >> 32)
    return x & 0x7F


@njit(cache=True)
def _max_points(mask: int, rankmax: np.ndarray) -> int:
    return rankmax[(mask | (mask >> 13) | (mask >> 26) | (mask >> 39)) & 0x1FFF]


@njit(cache=True)
def _around(table: np.ndarray, nb: np.ndarray, nbn: np.ndarray, cell: int) -> int:
    """Occupied neighbours of ``cell``."""
    full = 0
    for k in range(nbn[cell]):
        if table[nb[cell, k]] >= 0:
            full += 1
    return full


@njit(cache=True)
def _parts(table: np.ndarray, nb: np.ndarray, nbn: np.ndarray, e: int, compat: np.ndarray, points: np.ndarray) -> Any:
    """``GreedyAgent._parts``: (points a placement on the empty ``e`` takes, whether it is a hole, cards allowed)."""
    pts = 0
    occupied = 0
    allow = compat[BASE]
    for k in range(nbn[e]):
        q = nb[e, k]
        c = table[q]
        if c < 0:
            continue
        occupied += 1
        if c != BASE:
            allow &= compat[c]
            if nbn[q] == 4 and _around(table, nb, nbn, q) == 3:
                pts += points[c]
    return pts, occupied == 4, allow


@njit(cache=True)
def _threat_pts(pts: int, hole: bool, allow: int, cards: int, rankmax: np.ndarray) -> Any:
    """``_threat``: (points captured, cards of ``cards`` that fit) or (0, 0)."""
    fit = cards & allow
    if not (pts or hole) or not fit:
        return 0, 0
    if hole:
        pts += _max_points(fit, rankmax)
    return pts, fit


@njit(cache=True)
def _danger(table, cells, ncells, unseen, risk, nb, nbn, compat, points, rankmax):  # type: ignore[no-untyped-def]
    total = 0.0
    for j in range(ncells):
        pts, hole, allow = _parts(table, nb, nbn, cells[j], compat, points)
        pts, fit = _threat_pts(pts, hole, allow, unseen, rankmax)
        if pts:
            total += risk[_popcount(fit)] * pts
    return total


@njit(cache=True)
def _setup(table, cells, ncells, mine, unseen, risk, soft, nb, nbn, compat, points, rankmax):  # type: ignore[no-untyped-def]
    best = 0.0
    for j in range(ncells):
        pts, hole, allow = _parts(table, nb, nbn, cells[j], compat, points)
        pts, _ = _threat_pts(pts, hole, allow, mine, rankmax)
        if pts:
            k = _popcount(allow & unseen)  # allow is ``allowed``: the base accepts every card
            if k and not soft:
                continue
            v = pts * (1.0 - risk[k])
            if v > best:
                best = v
    return best


@njit(cache=True)
def _frontier(table: np.ndarray, nb: np.ndarray, nbn: np.ndarray, out: np.ndarray) -> int:
    """Empty cells beside a card, into ``out``; their number."""
    m = 0
    for e in range(table.shape[0]):
        if table[e] >= 0:
            continue
        for k in range(nbn[e]):
            if table[nb[e, k]] >= 0:
                out[m] = e
                m += 1
                break
    return m


@njit(cache=True)
def _after_turn(table: np.ndarray, nb: np.ndarray, nbn: np.ndarray) -> None:
    """``after_turn(table, True)`` in place: cards not joined to the base are removed."""
    n = table.shape[0]
    joined = np.zeros(n, dtype=np.bool_)
    stack = np.empty(n, dtype=np.int64)
    top = 0
    for c in range(n):
        if table[c] == BASE:
            joined[c] = True
            stack[top] = c
            top += 1
    while top:
        top -= 1
        cell = stack[top]
        for k in range(nbn[cell]):
            q = nb[cell, k]
            if table[q] >= 0 and not joined[q]:
                joined[q] = True
                stack[top] = q
                top += 1
    for c in range(n):
        if table[c] >= 0 and not joined[c]:
            table[c] = -1


@njit(cache=True)
def values(  # type: ignore[no-untyped-def]
    obs,
    legal,
    weigh_pass,
    weights,
    soft,
    offsets,
    nb,
    nbn,
    compat,
    points,
    rankmax,
    dist,
    a_slot,
    a_cell,
    risk_tab,
    pass_action,
):
    """(actions, scores) of ``GreedyAgent.action_values(observation, legal, weigh_pass)``, as two arrays."""
    rw, sw, cw, dw = weights[0], weights[1], weights[2], weights[3]
    n = nbn.shape[0]
    hand_at, own_cap, opp_cap, on_table, discard, occ_at, base_at, suit_at, rank_at, opp_at, chain_at = offsets
    # ---- read (GreedyAgent.read)
    table = np.full(n, -1, dtype=np.int64)
    for c in range(n):
        if obs[base_at + c] != 0:
            table[c] = BASE
        elif obs[occ_at + c] != 0:
            s, best = 0, obs[suit_at + c]
            for k in range(1, 4):
                if obs[suit_at + k * n + c] > best:
                    s, best = k, obs[suit_at + k * n + c]
            r, best = 0, obs[rank_at + c]
            for k in range(1, 13):
                if obs[rank_at + k * n + c] > best:
                    r, best = k, obs[rank_at + k * n + c]
            table[c] = s * 13 + r
    hand = np.empty(NUM_CARDS, dtype=np.int64)
    nhand = 0
    hand_mask = 0
    unseen = 0
    for c in range(NUM_CARDS):
        if obs[hand_at + c] != 0:
            hand[nhand] = c
            nhand += 1
            hand_mask |= 1 << c
        seen = obs[hand_at + c] + obs[own_cap + c] + obs[opp_cap + c] + obs[on_table + c] + obs[discard + c]
        if seen == 0:
            unseen |= 1 << c
    opp = int(np.floor(np.float64(obs[opp_at]) * HAND_SIZE + 0.5))
    in_chain = obs[chain_at] > 0.5
    risk = risk_tab[_popcount(unseen), opp]

    out_a = np.empty(legal.shape[0] + 1, dtype=np.int64)
    out_v = np.empty(legal.shape[0] + 1, dtype=np.float64)
    m = 0
    front = np.empty(n, dtype=np.int64)
    have_base = False
    base_danger = 0.0
    if in_chain:  # "end": the risk of the table as the turn would leave it
        end = table.copy()
        _after_turn(end, nb, nbn)
        nf = _frontier(end, nb, nbn, front)
        out_a[m] = pass_action
        out_v[m] = -rw * _danger(end, front, nf, unseen, risk, nb, nbn, compat, points, rankmax)
        m += 1
    elif weigh_pass and legal.shape[0] and legal[legal.shape[0] - 1] == pass_action:
        nf = _frontier(table, nb, nbn, front)
        base_danger = _danger(table, front, nf, unseen, risk, nb, nbn, compat, points, rankmax)
        have_base = True
        out_a[m] = pass_action
        out_v[m] = -rw * base_danger
        m += 1

    # per cell, what every card placed there shares (evaluate_quiet's cache)
    shared = np.zeros(n, dtype=np.bool_)
    changed = np.empty((n, MAX_CHANGED), dtype=np.int64)
    nchanged = np.zeros(n, dtype=np.int64)
    before = np.zeros(n, dtype=np.float64)
    far = np.zeros((n, MAX_CHANGED, 3), dtype=np.int64)  # pts, hole, allow; hole = -1 marks a cell beside
    danger_at = np.full(n, np.nan)  # danger of one empty cell on the table as it is
    captured = np.empty(5, dtype=np.int64)
    single = np.empty(1, dtype=np.int64)
    for j in range(legal.shape[0]):
        a = legal[j]
        if a_slot[a] < 0:
            continue
        cell = a_cell[a]
        card = hand[a_slot[a]]
        mine = hand_mask & ~(1 << card)
        # ---- captured_by
        ncap = 0
        if _around(table, nb, nbn, cell) == 4:
            captured[ncap] = cell
            ncap += 1
        for k in range(nbn[cell]):
            q = nb[cell, k]
            c = table[q]
            if c >= 0 and c != BASE and _around(table, nb, nbn, q) == 3:
                captured[ncap] = q
                ncap += 1
        if ncap or in_chain:  # ---- evaluate_capture
            after = table.copy()
            after[cell] = card
            gained = 0
            for k in range(ncap):
                gained += points[after[captured[k]]]
                after[captured[k]] = -1
            _after_turn(after, nb, nbn)
            nf = _frontier(after, nb, nbn, front)
            value = gained - rw * _danger(after, front, nf, unseen, risk, nb, nbn, compat, points, rankmax)
            if sw:
                value += sw * _setup(after, front, nf, mine, unseen, risk, soft, nb, nbn, compat, points, rankmax)
        else:  # ---- evaluate_quiet
            if not have_base:
                nf = _frontier(table, nb, nbn, front)
                base_danger = _danger(table, front, nf, unseen, risk, nb, nbn, compat, points, rankmax)
                have_base = True
            if not shared[cell]:
                shared[cell] = True
                cnt = 0
                for k in range(nbn[cell]):
                    q = nb[cell, k]
                    if table[q] < 0:
                        cnt = _add_cell(changed, cell, cnt, q)
                    else:
                        for kk in range(nbn[q]):
                            r = nb[q, kk]
                            if table[r] < 0 and r != cell:
                                cnt = _add_cell(changed, cell, cnt, r)
                nchanged[cell] = cnt
                total = 0.0
                for k in range(cnt):  # the danger there before the placement
                    e = changed[cell, k]
                    if np.isnan(danger_at[e]):
                        single[0] = e
                        danger_at[e] = _danger(table, single, 1, unseen, risk, nb, nbn, compat, points, rankmax)
                    total += danger_at[e]
                before[cell] = total
                table[cell] = BASE  # any occupant: the cells not beside ``cell`` read only that it is occupied
                for k in range(cnt):
                    e = changed[cell, k]
                    beside = False
                    for kk in range(nbn[cell]):
                        if nb[cell, kk] == e:
                            beside = True
                    if beside:
                        far[cell, k, 1] = -1
                    else:
                        p, h, al = _parts(table, nb, nbn, e, compat, points)
                        far[cell, k, 0] = p
                        far[cell, k, 1] = 1 if h else 0
                        far[cell, k, 2] = al
                table[cell] = -1
            after_sum = 0.0
            best = 0.0
            table[cell] = card
            for k in range(nchanged[cell]):
                if far[cell, k, 1] < 0:
                    pts, hole, allow = _parts(table, nb, nbn, changed[cell, k], compat, points)
                else:
                    pts, hole, allow = far[cell, k, 0], far[cell, k, 1] == 1, far[cell, k, 2]
                if not (pts or hole):
                    continue
                fit = unseen & allow
                if fit:
                    after_sum += risk[_popcount(fit)] * (pts + _max_points(fit, rankmax) if hole else pts)
                if sw:
                    own = mine & allow
                    if own:
                        kk = _popcount(allow & unseen)
                        if kk and not soft:
                            continue
                        v = (pts + _max_points(own, rankmax) if hole else pts) * (1.0 - risk[kk])
                        if v > best:
                            best = v
            table[cell] = -1
            value = -rw * (base_danger + after_sum - before[cell]) + sw * best
        out_a[m] = a
        out_v[m] = value - (cw * points[card] + dw * dist[cell])
        m += 1
    return out_a[:m], out_v[:m]


@njit(cache=True)
def _add_cell(changed: np.ndarray, cell: int, cnt: int, e: int) -> int:
    """Add ``e`` to ``cell``'s changed cells unless already there; the new count."""
    for k in range(cnt):
        if changed[cell, k] == e:
            return cnt
    changed[cell, cnt] = e
    return cnt + 1


@njit(cache=True)
def scores_rows(  # type: ignore[no-untyped-def]
    obs,
    masks,
    score_at,
    weights,
    soft,
    offsets,
    nb,
    nbn,
    compat,
    points,
    rankmax,
    dist,
    a_slot,
    a_cell,
    risk_tab,
    pass_action,
):
    """``GreedyAgent.scores`` of every row of ``obs`` (b, size) with its legal ``masks`` (b, actions) bool.

    A row without a legal action (a finished game) scores 0 everywhere. ``score_at``: the positions of the
    two players' points in a row (a pass is weighed when they differ, as ``scores`` does).
    """
    b, num_actions = masks.shape
    out = np.zeros((b, num_actions), dtype=np.float32)
    for j in range(b):
        legal = np.flatnonzero(masks[j])
        if len(legal) == 0:
            continue
        if len(legal) == 1:
            out[j, legal[0]] = 1.0
            continue
        row = obs[j]
        weigh = row[score_at[0]] != row[score_at[1]]
        acts, v = values(
            row, legal, weigh, weights, soft, offsets, nb, nbn, compat, points, rankmax, dist, a_slot, a_cell,
            risk_tab, pass_action,
        )  # fmt: skip
        best = v.max()
        for i in range(len(acts)):
            out[j, acts[i]] = np.exp(v[i] - best)
    return out


@njit(cache=True)
def best_rows(  # type: ignore[no-untyped-def]
    obs,
    masks,
    weigh_pass,
    weights,
    soft,
    offsets,
    nb,
    nbn,
    compat,
    points,
    rankmax,
    dist,
    a_slot,
    a_cell,
    risk_tab,
    pass_action,
):
    """The actions ``GreedyAgent.act`` chooses among, for every row of ``obs`` with its legal ``masks``.

    Returns (ties (b, actions) int64, counts (b,)): row ``j``'s candidates are ``ties[j, :counts[j]]``, in
    the order ``act`` collects them (a single legal action is its only candidate; a row without a legal
    action has none). ``act`` draws one of several candidates with its generator.
    """
    b, num_actions = masks.shape
    ties = np.zeros((b, num_actions), dtype=np.int64)
    counts = np.zeros(b, dtype=np.int64)
    for j in range(b):
        legal = np.flatnonzero(masks[j])
        if len(legal) == 0:
            continue
        if len(legal) == 1:
            ties[j, 0] = legal[0]
            counts[j] = 1
            continue
        acts, v = values(
            obs[j], legal, weigh_pass, weights, soft, offsets, nb, nbn, compat, points, rankmax, dist, a_slot,
            a_cell, risk_tab, pass_action,
        )  # fmt: skip
        # act's scan: a value above the best by more than 1e-9 starts the ties again, one within 1e-9 joins them
        ties[j, 0] = pass_action
        n = 1
        best_value = -1e9
        for i in range(len(acts)):
            if v[i] > best_value + 1e-9:
                best_value = v[i]
                ties[j, 0] = acts[i]
                n = 1
            elif v[i] > best_value - 1e-9:
                ties[j, n] = acts[i]
                n += 1
        counts[j] = n
    return ties, counts
