"""``greedy`` / ``greedy-capture`` for grid: capture the most points, give the opponent as little as possible.

Every legal placement is scored as the points it captures now, minus the points the opponent can expect to
capture next turn on the table it leaves (for each cell where a placement would capture, the hypergeometric
chance that the opponent's hand holds an unseen card fitting it, times the points there). Small bonuses break
near-ties: a capture set up for our own next turn, keeping high cards in hand, placing near the base; exact ties
are drawn at random (a fixed order drifts the table one way). In a chain the same score picks the best capture
or "end"; it passes only when nothing else is legal. It reads only the observation, decoded through the layout,
and actions through ``jericho_env.games.grid.actions``. How the weights were chosen: ``docs/agents.md``.

Written once, as functions over one observation row (``values``, ``best_moves``, ``scores_into``) on flat arrays
and one params record (``params_for``), compiled by Numba where it is installed and plain Python otherwise, for
``GreedyAgent``, ``BatchGreedyGrid`` and search (``row_functions``). The readable version they are tested
against, bit for bit, is ``tests/greedy_oracles.py``.
"""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np

from agents.base import BaseAgent
from jericho_env.core.cards import NUM_CARDS
from jericho_env.core.kernels import NUMBA, below, njit
from jericho_env.games.grid.batched import capacity
from jericho_env.games.grid.state import BASE, COMPAT, HAND_SIZE, POINTS

MAX_CHANGED = 12  # a quiet placement changes at most 4 neighbours x 3 cells beyond them
TIE = 1e-9  # scores within this of the best are ties
# the layout fields the scoring reads, in the order of the params' ``offsets``
FIELDS = ("hand", "own_captured", "opp_captured", "table_cards", "discard", "table_occupied", "table_base",
          "table_suit", "table_rank", "opp_hand_size", "in_chain", "own_score", "opp_score")  # fmt: skip


class GreedyAgent(BaseAgent):
    """Greedy-capture for grid: most points now, least expected for the opponent next turn."""

    name = "greedy"
    # weight of the opponent's expected next-turn capture points against points captured now
    risk_weight = 1.0
    # weight of a capture set up for our own next turn (see soft_setup)
    setup_weight = 0.3
    # weight against the points of the card placed (keep high cards in hand while ties remain)
    card_weight = 0.01
    # weight against a placement's (Chebyshev) distance from the base: keep the table compact
    distance_weight = 0.001
    # count a set-up the opponent might take first, times the chance it cannot (else only unfillable ones)
    soft_setup = True
    # pass at the start of a turn when every placement scores below passing (off: the rule)
    allow_pass = False
    # whether the scoring runs compiled (Numba installed) rather than as plain Python
    kernel = NUMBA

    def __init__(self, game_id: str, seed: int | None = None, **game_options: Any) -> None:
        super().__init__(game_id, seed=seed, **game_options)
        if game_id != "grid":
            raise ValueError(f"this greedy agent plays grid, not {game_id!r}")
        from jericho_env.registry import make_rules

        rules: Any = make_rules("grid", **game_options)
        self.observation_size = rules.layout.size
        self.actions = rules.actions
        self.board, self.cells, self.pass_action = self.actions.board, self.actions.cells, self.actions.pass_action
        self._params = params_for(rules).copy()

    @property
    def params(self) -> np.ndarray:
        """The params record with this agent's weights (read at every call: a subclass or a test may change them)."""
        p = self._params[0]
        p["weights"] = (self.risk_weight, self.setup_weight, self.card_weight, self.distance_weight)
        p["soft"], p["allow_pass"] = self.soft_setup, self.allow_pass
        return self._params

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """The best-scoring legal action (see the module docstring)."""
        legal = self.legal(observation)
        if len(legal) == 1:
            return int(legal[0])
        ties = np.empty(len(legal) + 1, dtype=np.int64)
        count = best_moves(_row(observation), legal.astype(np.int64), self.params, ties)
        # equal choices are drawn at random: a fixed order (e.g. lowest action id) drifts the table one way
        return int(ties[0] if count == 1 else ties[int(self.rng.integers(count))])

    def action_values(
        self, observation: dict[str, np.ndarray], legal: Any, weigh_pass: bool | None = None
    ) -> list[tuple[int, float]]:
        """(action, score) of the legal actions that the heuristic weighs, in the order of ``legal`` (ascending).

        In a chain "end" comes first, valued by the risk of the table left as it is; pass at the start of a
        turn is weighed (first, valued by the risk of the table as it is) only with ``weigh_pass``, by
        default ``allow_pass`` (otherwise greedy plays it only when nothing else is legal).
        """
        weigh = self.allow_pass if weigh_pass is None else weigh_pass
        acts, v = values(_row(observation), np.asarray(legal, dtype=np.int64), bool(weigh), self.params)
        return list(zip(acts.tolist(), v.tolist(), strict=True))

    def scores(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        """Per action, ``exp(score - best score)`` in (0, 1] for the actions the heuristic weighs, else 0.

        A pass at the start of a turn is scored too when the players' points differ (the risk of the table left as it
        is); at level points an answering pass would end the game in a draw. The hint of ``--prior greedy-scores``.
        """
        out = np.zeros(self.actions.num_actions, dtype=np.float32)
        scores_into(_row(observation), self.legal(observation).astype(np.int64), self.params, out)
        return out

    def points_differ(self, observation: dict[str, np.ndarray]) -> bool:
        """Whether the two players' captured points differ (``scores`` weighs a pass only then)."""
        at = self._params[0]["offsets"]
        obs = observation["observation"]
        return bool(obs[at[11]] != obs[at[12]])  # both are points / TOTAL_POINTS


def _row(observation: dict[str, np.ndarray]) -> np.ndarray:
    return np.ascontiguousarray(observation["observation"], dtype=np.float32)


# ----------------------------------------------------------------------------------------------- tables
def risk_table(unseen: int, opp_hand: int) -> list[float]:
    """``risk[k]``: chance that a hand of ``opp_hand`` cards drawn from ``unseen`` cards holds one of ``k`` of them."""
    total = comb(unseen, opp_hand) if unseen >= opp_hand else 0
    if total == 0 or opp_hand == 0:
        return [0.0] * (NUM_CARDS + 1)
    return [1.0 - comb(unseen - k, opp_hand) / total if k <= unseen else 1.0 for k in range(NUM_CARDS + 1)]


_PARAMS: dict[Any, np.ndarray] = {}


def params_dtype(cap: int) -> np.dtype[Any]:
    """The params record of boards of up to ``cap`` cells (the kernels' record capacities): one record type, so one
    compile of the scoring, serves every board size of a capacity; ``cells`` is the board's own size."""
    return np.dtype([
        ("offsets", np.int64, (len(FIELDS),)), ("cells", np.int64), ("nb", np.int64, (cap, 4)),
        ("nbn", np.int64, (cap,)), ("compat", np.int64, (len(COMPAT),)), ("points", np.int64, (len(POINTS),)),
        ("rankmax", np.int64, (1 << 13,)), ("dist", np.int64, (cap,)), ("a_slot", np.int64, (HAND_SIZE * cap + 1,)),
        ("a_cell", np.int64, (HAND_SIZE * cap + 1,)),
        ("risk", np.float64, (NUM_CARDS + 1, HAND_SIZE + 1, NUM_CARDS + 1)), ("weights", np.float64, (4,)),
        ("pass_action", np.int64), ("soft", np.bool_), ("allow_pass", np.bool_),
    ], align=True)  # fmt: skip


def params_for(rules: Any) -> np.ndarray:
    """The one-element params record of ``rules``' board, layout and actions (built once per option set)."""
    key = tuple(sorted(rules.options.items()))
    if key in _PARAMS:
        return _PARAMS[key]
    board, actions, sl = rules.actions.board, rules.actions, rules.layout.slices
    n, a = board.cells, np.arange(actions.num_actions)
    params = np.zeros(1, dtype=params_dtype(capacity(n)))
    p = params[0]
    p["cells"] = n
    p["offsets"] = [sl[f].start for f in FIELDS]
    p["nb"] = -1
    p["a_slot"] = p["a_cell"] = -1
    for cell, around in enumerate(board.neighbours):
        p["nb"][cell, : len(around)] = around
        p["nbn"][cell] = len(around)
    p["compat"], p["points"], p["dist"][:n] = COMPAT, POINTS, board.distance
    by_rank = [POINTS[r] for r in range(13)]  # the most points of a card of a 13-bit set of ranks
    if any(POINTS[c] != by_rank[c % 13] for c in range(NUM_CARDS)):
        raise AssertionError("grid points must depend on the rank alone")
    p["rankmax"] = [0] + [max(by_rank[r] for r in range(13) if m >> r & 1) for m in range(1, 1 << 13)]
    p["a_slot"][: len(a)] = np.where(a < actions.pass_action, a // n, -1)
    p["a_cell"][: len(a)] = np.where(a < actions.pass_action, a % n, -1)
    for u in range(NUM_CARDS + 1):  # the risk depends on the number of unseen cards only
        for h in range(HAND_SIZE + 1):
            p["risk"][u, h] = risk_table(u, h)
    p["pass_action"] = actions.pass_action
    p["weights"] = (GreedyAgent.risk_weight, GreedyAgent.setup_weight, GreedyAgent.card_weight,
                    GreedyAgent.distance_weight)  # fmt: skip
    p["soft"], p["allow_pass"] = GreedyAgent.soft_setup, GreedyAgent.allow_pass
    _PARAMS[key] = params
    return params


# ----------------------------------------------------------------------------------------------- scoring
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
    """The most points of a card in ``mask`` (points depend on the rank only)."""
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
    """For the empty ``e``: (points a placement there takes, whether it is a hole, the cards it allows)."""
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
def _threat(pts: int, hole: bool, allow: int, cards: int, rankmax: np.ndarray) -> Any:
    """(points captured on a cell of these parts by a card of ``cards``, the cards of ``cards`` that fit) or (0, 0)."""
    fit = cards & allow
    if not (pts or hole) or not fit:
        return 0, 0
    if hole:  # the placed card is surrounded too: count the best card that fits
        pts += _max_points(fit, rankmax)
    return pts, fit


@njit(cache=True)
def _danger(table, cells, ncells, unseen, risk, nb, nbn, compat, points, rankmax):  # type: ignore[no-untyped-def]
    """Points the opponent can expect to capture next turn from the empty ``cells[:ncells]``."""
    total = 0.0
    for j in range(ncells):
        pts, hole, allow = _parts(table, nb, nbn, cells[j], compat, points)
        pts, fit = _threat(pts, hole, allow, unseen, rankmax)
        if pts:
            total += risk[_popcount(fit)] * pts
    return total


@njit(cache=True)
def _setup(table, cells, ncells, mine, unseen, risk, soft, nb, nbn, compat, points, rankmax):  # type: ignore[no-untyped-def]
    """Best capture among ``cells[:ncells]`` our ``mine`` cards can make next turn, times the chance it survives."""
    best = 0.0
    for j in range(ncells):
        pts, hole, allow = _parts(table, nb, nbn, cells[j], compat, points)
        pts, _ = _threat(pts, hole, allow, mine, rankmax)
        if pts:
            k = _popcount(allow & unseen)  # the cards matching every neighbour (the base accepts every card)
            if k and not soft:
                continue
            v = pts * (1.0 - risk[k])
            if v > best:
                best = v
    return best


@njit(cache=True)
def _frontier(table: np.ndarray, nb: np.ndarray, nbn: np.ndarray, out: np.ndarray) -> int:
    """Empty cells beside a card, ascending, into ``out``; their number."""
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
    """The table once a turn that captured ends, in place: cards not joined to the base are discarded."""
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
def _add_cell(changed: np.ndarray, cell: int, cnt: int, e: int) -> int:
    """Add ``e`` to ``cell``'s changed cells unless already there; the new count."""
    for k in range(cnt):
        if changed[cell, k] == e:
            return cnt
    changed[cell, cnt] = e
    return cnt + 1


@njit(cache=True)
def values(obs: np.ndarray, legal: np.ndarray, weigh_pass: bool, params: np.ndarray) -> Any:
    """(actions, scores) of the legal actions the heuristic weighs, ``legal`` ascending (see ``action_values``)."""
    p = params[0]
    nb, nbn, compat, points, rankmax = p["nb"], p["nbn"], p["compat"], p["points"], p["rankmax"]
    dist, a_slot, a_cell, pass_action = p["dist"], p["a_slot"], p["a_cell"], p["pass_action"]
    rw, sw, cw, dw = p["weights"][0], p["weights"][1], p["weights"][2], p["weights"][3]
    soft = p["soft"]
    hand_at, own_cap, opp_cap, on_table, discard, occ_at, base_at, suit_at, rank_at, opp_at, chain_at, _, _ = p[
        "offsets"
    ]
    n = p["cells"]
    # ---- read the observation: the table, the hand, the unseen cards, the opponent's hand size, a chain
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
    unseen = np.int64(0)  # not a literal: one compile of the helpers it is passed to
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
    risk = p["risk"][_popcount(unseen), opp]

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

    # per cell, what every card placed there without capturing shares: the cells it changes (within 2 steps),
    # the danger there before, and the parts of the changed cells not beside it (they read only that it is full)
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
        # ---- the cells the placement captures (the cell itself if it becomes surrounded)
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
        if ncap or in_chain:  # ---- a capture: points now minus the risk of the table left after the turn
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
        else:  # ---- quiet: danger and set-up change only on the changed cells
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
                        danger_at[e] = _danger(
                            table, single, np.int64(1), unseen, risk, nb, nbn, compat, points, rankmax
                        )
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
                        pts, hole, allow = _parts(table, nb, nbn, e, compat, points)
                        far[cell, k, 0] = pts
                        far[cell, k, 1] = 1 if hole else 0
                        far[cell, k, 2] = allow
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
def best_moves(obs: np.ndarray, legal: np.ndarray, params: np.ndarray, ties: np.ndarray) -> int:
    """``act``'s candidates into ``ties``, their number: the best-scoring actions of ``legal`` (ascending).

    A single legal action is its own candidate. Otherwise the scan of the scores keeps a score above the
    best by more than ``TIE`` as the new best and adds one within ``TIE`` to the ties.
    """
    if legal.shape[0] == 1:
        ties[0] = legal[0]
        return 1
    acts, v = values(obs, legal, params[0]["allow_pass"], params)
    ties[0] = params[0]["pass_action"]
    count = 1
    best_value = -1e9
    for i in range(acts.shape[0]):
        if v[i] > best_value + TIE:
            best_value = v[i]
            ties[0] = acts[i]
            count = 1
        elif v[i] > best_value - TIE:
            ties[count] = acts[i]
            count += 1
    return count


@njit(cache=True)
def scores_into(obs: np.ndarray, legal: np.ndarray, params: np.ndarray, out: np.ndarray) -> None:
    """``GreedyAgent.scores`` into ``out`` (one float32 per action, zeros set by the caller), ``legal`` ascending."""
    if legal.shape[0] == 1:
        out[legal[0]] = 1.0
        return
    at = params[0]["offsets"]
    acts, v = values(obs, legal, obs[at[11]] != obs[at[12]], params)  # a pass is weighed when the points differ
    best = v.max()
    for i in range(acts.shape[0]):
        out[acts[i]] = np.exp(v[i] - best)


# ----------------------------------------------------------------------------------------------- batches
@njit(cache=True)
def _scores_rows(obs: np.ndarray, masks: np.ndarray, params: np.ndarray) -> np.ndarray:
    out = np.zeros(masks.shape, dtype=np.float32)
    for j in range(masks.shape[0]):
        legal = np.flatnonzero(masks[j])
        if legal.shape[0]:  # a row without a legal action (a finished game) scores 0 everywhere
            scores_into(obs[j], legal, params, out[j])
    return out


@njit(cache=True)
def _best_rows(obs: np.ndarray, masks: np.ndarray, params: np.ndarray) -> Any:
    ties = np.zeros(masks.shape, dtype=np.int64)
    counts = np.zeros(masks.shape[0], dtype=np.int64)
    for j in range(masks.shape[0]):
        legal = np.flatnonzero(masks[j])
        if legal.shape[0]:
            counts[j] = best_moves(obs[j], legal, params, ties[j])
    return ties, counts


class BatchGreedyGrid:
    """grid's ``GreedyAgent`` as a batch policy: the candidates of every row in one compiled call.

    A row with several best moves draws one with the agent's own generator, row after row, as ``act``
    would: the actions equal those of asking ``agent`` row by row (a test checks it).
    """

    name = "greedy"
    uses_observation = True

    def __init__(self, agent: GreedyAgent) -> None:
        self.agent = agent

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        rows = np.ascontiguousarray(observations, dtype=np.float32)
        ties, counts = _best_rows(rows, np.ascontiguousarray(masks, dtype=np.bool_), self.agent.params)
        if (counts == 0).any():
            raise ValueError(f"{self.name}: row {int(np.argmin(counts))} of the masks has no legal action")
        out = ties[:, 0].copy()
        for j in np.flatnonzero(counts > 1):
            out[j] = ties[j, int(self.agent.rng.integers(counts[j]))]
        return out

    def scores(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``GreedyAgent.scores`` of every row (B, A) float32; zeros for a row without a legal action."""
        rows = np.ascontiguousarray(observations, dtype=np.float32)
        return _scores_rows(rows, np.ascontiguousarray(masks, dtype=np.bool_), self.agent.params)  # type: ignore[no-any-return]


def batch_twin(agent: GreedyAgent, **options: Any) -> BatchGreedyGrid | None:
    """The compiled batch policy equal to ``agent`` row by row (None without Numba: the agent alone is as fast)."""
    return BatchGreedyGrid(agent) if NUMBA else None


# ----------------------------------------------------------------------------------------------- search
def _prior_row(obs: Any, legal: Any, n: int, params: Any, stream: Any, k: int, weights: Any) -> int:
    """Search's prior: ``GreedyAgent.scores`` at ``legal[:n]`` (any order) into ``weights[:n]``."""
    row = np.zeros(params[0]["a_slot"].shape[0], dtype=np.float32)
    scores_into(obs, np.sort(legal[:n]), params, row)
    for j in range(n):
        weights[j] = row[legal[j]]
    return legal[0]


def _rollout_row(obs: Any, legal: Any, n: int, params: Any, stream: Any, k: int, weights: Any) -> int:
    """Search's rollout move: ``GreedyAgent.act`` on ``legal[:n]`` (any order), a tie drawn from ``stream[k]``."""
    ties = np.empty(n + 1, dtype=np.int64)
    count = best_moves(obs, np.sort(legal[:n]), params, ties)
    return ties[0] if count == 1 else ties[below(stream, k, count)]


def row_functions(rules: Any) -> tuple[Any, Any, np.ndarray]:
    """(prior, rollout, params) for search (``agents.search.compiled.greedy_row_policy`` compiles them)."""
    return _prior_row, _rollout_row, params_for(rules)
