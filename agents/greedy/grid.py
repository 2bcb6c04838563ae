"""``greedy`` / ``greedy-capture`` for grid: capture the most points, give the opponent as little as possible.

Every legal placement is scored as the points it captures now, minus the points the opponent can
expect to capture next turn on the table it leaves (after the end-of-turn discard): for each cell
where a placement would capture, the chance that the opponent's hand holds one of the unseen cards
fitting it (unseen = not in own hand, on the table, in the discard or a capture pile; the chance is
hypergeometric in the opponent's hand size) times the points there. Small bonuses break near-ties:
a capture set up for our own next turn with a card still in hand (times the chance the opponent
cannot take it first), then keeping high cards in hand and placing near the base; exact ties are
drawn at random. In a chain the same score picks the best capture or "end"; it passes only when
nothing else is legal. It reads only the observation dict (table, hand and public piles decoded
through the layout), never the env's state, and reads actions through the game's action encoding
(``jericho_env.games.grid.actions``). Exact ties are drawn at random because a fixed order (the
lowest action id) drifts the table one way. How the weights were chosen, how strong it plays and
how long ``act`` takes: ``docs/agents.md``.

The scores are computed by ``agents.greedy.grid_kernel`` (one compiled function per decision) where
Numba is installed, else by ``_dict_values`` below, the readable reference the kernel is tested against.
"""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np

from agents.base import BaseAgent
from agents.greedy import grid_kernel
from jericho_env.core.cards import NUM_CARDS
from jericho_env.games.grid.actions import GridActions
from jericho_env.games.grid.state import ALL_CARDS_MASK, BASE, COMPAT, HAND_SIZE, POINTS

_Table = dict[int, int]  # cell -> card (or BASE) for every occupied cell


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
    # score with the compiled ``agents.greedy.grid_kernel`` (same scores) where Numba is installed
    kernel = grid_kernel.KERNEL

    def __init__(self, game_id: str, seed: int | None = None, **game_options: Any) -> None:
        super().__init__(game_id, seed=seed, **game_options)
        if game_id != "grid":
            raise ValueError(f"this greedy agent plays grid, not {game_id!r}")
        from jericho_env.registry import make_rules

        rules: Any = make_rules("grid", **game_options)
        self.observation_size = rules.layout.size
        sl = rules.layout.slices
        self.layout_slices = sl
        self._tables: grid_kernel.Tables | None = None
        self.actions: GridActions = rules.actions
        self.board = self.actions.board
        self.cells = self.actions.cells
        self.pass_action = self.actions.pass_action
        self.nb = self.board.neighbours
        self._hand = sl["hand"]
        self._seen = [sl[k] for k in ("own_captured", "opp_captured", "table_cards", "discard")]
        self._occupied = sl["table_occupied"]
        self._base = sl["table_base"]
        self._suit = sl["table_suit"]
        self._rank = sl["table_rank"]
        self._opp_hand = sl["opp_hand_size"].start
        self._in_chain = sl["in_chain"].start
        self._scores = (sl["own_score"].start, sl["opp_score"].start)

    # ----------------------------------------------------------------- reading the observation
    def read(self, obs: np.ndarray) -> tuple[list[int], _Table, int, int, bool]:
        """Own hand (sorted), the table, the unseen-card mask, the opponent's hand size, in-chain flag."""
        n = self.cells
        hand = [int(c) for c in np.flatnonzero(obs[self._hand])]
        base = np.flatnonzero(obs[self._base])
        cards = np.flatnonzero(obs[self._occupied].astype(bool) & ~obs[self._base].astype(bool))
        suits = obs[self._suit].reshape(4, n)[:, cards].argmax(axis=0)
        ranks = obs[self._rank].reshape(13, n)[:, cards].argmax(axis=0)
        table: _Table = {int(c): int(s) * 13 + int(r) for c, s, r in zip(cards, suits, ranks, strict=True)}
        for c in base:
            table[int(c)] = BASE
        seen = obs[self._hand].copy()
        for s in self._seen:
            seen += obs[s]
        unseen = 0
        for c in np.flatnonzero(seen == 0):
            unseen |= 1 << int(c)
        opp = round(float(obs[self._opp_hand]) * HAND_SIZE)
        return hand, table, unseen, opp, bool(obs[self._in_chain] > 0.5)

    # ----------------------------------------------------------------- table arithmetic
    def allowed(self, table: _Table, cell: int) -> int:
        """Mask of the cards that match every face-up neighbour of ``cell``."""
        m = ALL_CARDS_MASK
        for q in self.nb[cell]:
            c = table.get(q)
            if c is not None:
                m &= COMPAT[c]
        return m

    def captured_by(self, table: _Table, cell: int) -> list[int]:
        """Cells captured by a placement on the empty ``cell`` (the cell itself if it becomes surrounded)."""
        nb = self.nb
        out = [cell] if sum(q in table for q in nb[cell]) == 4 else []
        for q in nb[cell]:
            c = table.get(q)
            if c is not None and c != BASE and sum(r in table for r in nb[q]) == 3:
                out.append(q)
        return out

    def cut_off(self, table: _Table) -> list[int]:
        """Cards not joined to the base (discarded at the end of a turn that captured)."""
        nb = self.nb
        start = [c for c, v in table.items() if v == BASE]
        seen = set(start)
        stack = start
        while stack:
            cell = stack.pop()
            for q in nb[cell]:
                if q in table and q not in seen:
                    seen.add(q)
                    stack.append(q)
        return [c for c in table if c not in seen]

    def cell_threat(self, table: _Table, e: int, cards: int) -> tuple[int, int]:
        """(points a placement on the empty ``e`` would capture, cards of ``cards`` that fit ``e``); (0, 0) if none."""
        return _threat(self._parts(table, e), cards)

    def frontier(self, table: _Table) -> set[int]:
        """Empty cells beside a card."""
        nb = self.nb
        return {r for q in table for r in nb[q] if r not in table}

    def danger(self, table: _Table, cells: Any, unseen: int, risk: list[float]) -> float:
        """Points the opponent can expect to capture next turn from the empty ``cells`` of ``table``."""
        total = 0.0
        for e in cells:
            pts, fit = self.cell_threat(table, e, unseen)
            if pts:
                total += risk[fit.bit_count()] * pts
        return total

    def setup(self, table: _Table, cells: Any, mine: int, unseen: int, risk: list[float]) -> float:
        """Best capture among ``cells`` that our ``mine`` cards can make next turn, times the chance it survives."""
        best = 0.0
        for e in cells:
            pts, _ = self.cell_threat(table, e, mine)
            if pts:
                k = (self.allowed(table, e) & unseen).bit_count()
                if k and not self.soft_setup:
                    continue
                v = pts * (1.0 - risk[k])
                if v > best:
                    best = v
        return best

    # ----------------------------------------------------------------- decision
    def act(self, observation: dict[str, np.ndarray]) -> int:
        """The best-scoring legal action (see the module docstring)."""
        legal = self.legal(observation)
        if len(legal) == 1:
            return int(legal[0])
        best, best_value = self.pass_action, -1e9
        ties = [best]
        acts, values = self._values(observation, legal, self.allow_pass)
        for a, value in zip(acts.tolist(), values.tolist(), strict=True):
            if value > best_value + 1e-9:
                best, best_value, ties = a, value, [a]
            elif value > best_value - 1e-9:
                ties.append(a)
        # equal choices are drawn at random: a fixed order (e.g. lowest action id) drifts the table one way
        return best if len(ties) == 1 else ties[int(self.rng.integers(len(ties)))]

    def action_values(
        self, observation: dict[str, np.ndarray], legal: Any, weigh_pass: bool | None = None
    ) -> list[tuple[int, float]]:
        """(action, score) of the legal actions that the heuristic weighs, in the order of ``legal``.

        In a chain "end" comes first, valued by the risk of the table left as it is; pass at the start of a
        turn is weighed (first, valued by the risk of the table as it is) only with ``weigh_pass``, by
        default ``allow_pass`` (otherwise greedy plays it only when nothing else is legal).
        """
        if weigh_pass is None:
            weigh_pass = self.allow_pass
        acts, values = self._values(observation, legal, weigh_pass)
        return list(zip(acts.tolist(), values.tolist(), strict=True))

    def _values(
        self, observation: dict[str, np.ndarray], legal: Any, weigh_pass: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        """``action_values`` as (actions int64, scores float64): compiled where Numba is, else ``_dict_values``."""
        if not self.kernel:
            out = self._dict_values(observation, legal, weigh_pass)
            return np.array([a for a, _ in out], dtype=np.int64), np.array([v for _, v in out], dtype=np.float64)
        t = self._tables
        if t is None:
            t = self._tables = grid_kernel.tables_for(self)
        return grid_kernel.values(  # type: ignore[no-any-return]
            np.ascontiguousarray(observation["observation"], dtype=np.float32),
            np.asarray(legal, dtype=np.int64),
            bool(weigh_pass),
            t.weights(self),
            bool(self.soft_setup),
            *t.args,
        )

    def _dict_values(self, observation: dict[str, np.ndarray], legal: Any, weigh_pass: bool) -> list[tuple[int, float]]:
        """``action_values`` computed in Python on a dict of cells (the reference of the compiled kernel)."""
        hand, table, unseen, opp_hand, in_chain = self.read(observation["observation"])
        risk = self._risk_table(unseen, opp_hand)
        out: list[tuple[int, float]] = []
        distance = self.board.distance
        base_danger = None
        if in_chain:  # "end" is worth the risk of the table as it would be left now
            end = self.after_turn(table, True)
            out.append((self.pass_action, -self.risk_weight * self.danger(end, self.frontier(end), unseen, risk)))
        elif weigh_pass and self.pass_action in legal:
            base_danger = self.danger(table, self.frontier(table), unseen, risk)
            out.append((self.pass_action, -self.risk_weight * base_danger))
        cache: dict[Any, Any] = {}
        decode = self.actions.decode
        for a in legal:
            a = int(a)
            move = decode(a)
            if move.kind == "stop":
                continue
            cell = move.cell
            card = hand[move.slot]
            captured = self.captured_by(table, cell)
            mine = 0
            for c in hand:
                if c != card:
                    mine |= 1 << c
            if captured or in_chain:
                value = self.evaluate_capture(table, card, cell, captured, mine, unseen, risk)
            else:
                if base_danger is None:
                    base_danger = self.danger(table, self.frontier(table), unseen, risk)
                value = self.evaluate_quiet(table, card, cell, mine, unseen, risk, base_danger, cache)
            value -= self.card_weight * POINTS[card] + self.distance_weight * distance[cell]
            out.append((a, value))
        return out

    def scores(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        """Per action, ``exp(score - best score)`` in (0, 1] for the actions the heuristic weighs, else 0.

        1 marks the best-scoring moves; a move one point worse gets 0.37, three points worse 0.05. Passing at
        the start of a turn is scored too when the players' points differ (as with ``allow_pass``: the risk
        of the table left as it is), so the best move may be a pass where ``act`` would place a card. At
        level points it is not: an answering pass would end the game in a draw. Used as the hint of
        ``--prior greedy-scores`` (``agents.prior``). Why the pass is weighed only then: ``docs/agents.md``.
        """
        out = np.zeros(self.actions.num_actions, dtype=np.float32)
        legal = self.legal(observation)
        weigh = self.points_differ(observation)
        if len(legal) > 1:
            acts, v = self._values(observation, legal, weigh)  # never empty: a turn with a choice has a placement
        else:
            acts, v = np.array([int(legal[0])]), np.zeros(1)
        out[acts] = np.exp(v - v.max())
        return out

    def points_differ(self, observation: dict[str, np.ndarray]) -> bool:
        """Whether the two players' captured points differ (``scores`` weighs a pass only then)."""
        obs = observation["observation"]
        return bool(obs[self._scores[0]] != obs[self._scores[1]])  # both are points / TOTAL_POINTS

    def evaluate_capture(
        self, table: _Table, card: int, cell: int, captured: list[int], mine: int, unseen: int, risk: list[float]
    ) -> float:
        """Score of a capturing placement: points now minus the risk of the table left after the turn."""
        after = dict(table)
        after[cell] = card
        gained = 0
        for q in captured:
            gained += POINTS[after.pop(q)]
        after = self.after_turn(after, True)
        front = self.frontier(after)
        value = gained - self.risk_weight * self.danger(after, front, unseen, risk)
        if self.setup_weight:
            value += self.setup_weight * self.setup(after, front, mine, unseen, risk)
        return value

    def evaluate_quiet(
        self,
        table: _Table,
        card: int,
        cell: int,
        mine: int,
        unseen: int,
        risk: list[float],
        base_danger: float,
        cache: dict[Any, Any],
    ) -> float:
        """Score of a placement that captures nothing, from the few cells it changes (within 2 steps).

        The same arithmetic as ``danger`` and ``setup`` on the table with ``card`` on ``cell``, in the same
        order. ``cache`` holds, for one decision, what every card placed on ``cell`` shares: the changed
        cells, the danger there before, and the threat parts (``_parts``) of the changed cells not beside
        ``cell`` (those read only whether ``cell`` is occupied, not by which card).
        """
        shared = cache.get(cell)
        if shared is None:
            shared = cache[cell] = self._quiet_shared(table, cell, unseen, risk, cache)
        changed, before, far = shared
        table[cell] = card
        try:
            parts = [far[e] if e in far else self._parts(table, e) for e in changed]
        finally:
            del table[cell]
        after = 0.0
        best = 0.0
        setup = self.setup_weight
        soft = self.soft_setup
        for pts, hole, allow in parts:  # ``_threat`` inlined for unseen and for mine (the hot loop of greedy)
            if not (pts or hole):
                continue
            fit = unseen & allow
            if fit:
                after += risk[fit.bit_count()] * (pts + max(POINTS[c] for c in _bits(fit)) if hole else pts)
            if setup:
                own = mine & allow
                if own:
                    k = (allow & unseen).bit_count()
                    if k and not soft:
                        continue
                    v = (pts + max(POINTS[c] for c in _bits(own)) if hole else pts) * (1.0 - risk[k])
                    if v > best:
                        best = v
        return -self.risk_weight * (base_danger + after - before) + setup * best

    def _quiet_shared(
        self, table: _Table, cell: int, unseen: int, risk: list[float], cache: dict[Any, Any]
    ) -> tuple[list[int], float, dict[int, tuple[int, bool, int]]]:
        """(cells a placement on ``cell`` changes, their danger before it, the parts of those not beside it)."""
        nb = self.nb
        cells: set[int] = set()
        for q in nb[cell]:
            if q not in table:
                cells.add(q)
            else:
                cells.update(r for r in nb[q] if r not in table)
        cells.discard(cell)
        changed = list(cells)  # the set's own order, as ``danger`` iterates it
        before = 0.0
        for e in changed:
            v = cache.get(("before", e))
            if v is None:
                v = cache[("before", e)] = self.danger(table, (e,), unseen, risk)
            before += v
        beside = set(nb[cell])
        table[cell] = BASE  # any occupant: the cells not beside ``cell`` read only that it is occupied
        try:
            far = {e: self._parts(table, e) for e in changed if e not in beside}
        finally:
            del table[cell]
        return changed, before, far

    def _parts(self, table: _Table, e: int) -> tuple[int, bool, int]:
        """``cell_threat``'s parts for the empty ``e``: (points it takes, whether it is a hole, cards allowed)."""
        nb = self.nb
        pts = 0
        occupied = 0
        allow = ALL_CARDS_MASK
        for q in nb[e]:
            c = table.get(q)
            if c is None:
                continue
            occupied += 1
            if c != BASE:
                allow &= COMPAT[c]
                sides = nb[q]
                if (
                    len(sides) == 4
                    and (sides[0] in table) + (sides[1] in table) + (sides[2] in table) + (sides[3] in table) == 3
                ):
                    pts += POINTS[c]
        return pts, occupied == 4, allow

    def after_turn(self, table: _Table, captured: bool) -> _Table:
        """The table once the turn ends: cut-off cards discarded if anything was captured this turn."""
        if not captured:
            return table
        cut = self.cut_off(table)
        if not cut:
            return table
        table = dict(table)
        for c in cut:
            del table[c]
        return table

    @staticmethod
    def _risk_table(unseen: int, opp_hand: int) -> list[float]:
        """``risk[k]``: chance that a hand of ``opp_hand`` cards drawn from the unseen ones holds one of ``k``."""
        u = unseen.bit_count()
        total = comb(u, opp_hand) if u >= opp_hand else 0
        if total == 0 or opp_hand == 0:
            return [0.0] * (NUM_CARDS + 1)
        return [1.0 - comb(u - k, opp_hand) / total if k <= u else 1.0 for k in range(NUM_CARDS + 1)]


def _threat(parts: tuple[int, bool, int], cards: int) -> tuple[int, int]:
    """``cell_threat`` from a cell's ``_parts``: (points captured, the cards of ``cards`` that fit), or (0, 0)."""
    pts, hole, allow = parts
    fit = cards & allow
    if not (pts or hole) or not fit:
        return 0, 0
    if hole:  # the placed card is surrounded too: count the best card that fits
        pts += max(POINTS[c] for c in _bits(fit))
    return pts, fit


def _bits(mask: int) -> list[int]:
    """The cards of a bit mask."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class BatchGreedyGrid:
    """grid's ``GreedyAgent`` as a batch policy: the candidates of every row in one compiled call.

    ``grid_kernel.best_rows`` gives each row's best-scoring actions as ``act`` collects them; a
    row with several draws one with the agent's own generator, row after row, as ``act`` would: the
    actions equal those of asking ``agent`` row by row (a test checks it).
    """

    name = "greedy"
    uses_observation = True

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.tables = grid_kernel.tables_for(agent)
        self.score_at = np.array(agent._scores, dtype=np.int64)  # where the two scores sit in a row

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        agent, tables = self.agent, self.tables
        rows = np.ascontiguousarray(observations, dtype=np.float32)
        legal = np.ascontiguousarray(masks, dtype=np.bool_)
        weigh, soft = bool(agent.allow_pass), bool(agent.soft_setup)
        ties, counts = grid_kernel.best_rows(rows, legal, weigh, tables.weights(agent), soft, *tables.args)
        if (counts == 0).any():
            raise ValueError(f"{self.name}: row {int(np.argmin(counts))} of the masks has no legal action")
        out = ties[:, 0].copy()
        for j in np.flatnonzero(counts > 1):
            out[j] = ties[j, int(agent.rng.integers(counts[j]))]
        return out

    def scores(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``GreedyAgent.scores`` of every row in one compiled call (``grid_kernel.scores_rows``): (B, A) float32."""
        agent, tables = self.agent, self.tables
        rows = np.ascontiguousarray(observations, dtype=np.float32)
        legal = np.ascontiguousarray(masks, dtype=np.bool_)
        soft = bool(agent.soft_setup)
        return grid_kernel.scores_rows(rows, legal, self.score_at, tables.weights(agent), soft, *tables.args)  # type: ignore[no-any-return]


def batch_twin(agent: GreedyAgent, **options: Any) -> BatchGreedyGrid | None:
    """The compiled batch policy equal to ``agent`` row by row (None where Numba is missing)."""
    return BatchGreedyGrid(agent) if getattr(agent, "kernel", False) else None
