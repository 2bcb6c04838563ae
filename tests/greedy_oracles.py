"""The greedy heuristics as readable Python: the references ``agents.greedy``'s functions are tested equal to.

Each game's heuristic is written once in ``agents.greedy`` (functions over flat arrays, compiled by Numba).
These are the same heuristics in plain Python over dicts, lists and Python ints, as the agents were first
written, kept so that the compiled arithmetic can be read and checked against something obvious. They read
the agent they shadow for its weights and its game's tables, and follow the same order of every sum (grid's
frontier ascending, a placement's changed cells in the order they are met), so their scores are the same
floats, not merely close ones: ``tests/test_greedy_*.py`` compare them bit for bit on thousands of seeded
positions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.greedy.grid import risk_table
from jericho_env.games.grid.state import ALL_CARDS_MASK, BASE, COMPAT, HAND_SIZE, POINTS
from jericho_env.games.walls.cards import NUM_TRUMPETS, TRUMPET, TYPE_VALUE, VALUES
from jericho_env.games.walls.state import Phase
from jericho_env.registry import make_rules

TIE = 1e-9
_Table = dict[int, int]  # cell -> card (or BASE) for every occupied cell


# ----------------------------------------------------------------------------------------------- grid
class GridGreedy:
    """grid's greedy over a dict of cells: ``values`` are ``GreedyAgent.action_values``, ``act`` its move."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent  # its weights are read at every call
        rules: Any = make_rules("grid", **agent.game_options)
        self.actions, self.board, sl = rules.actions, rules.actions.board, rules.layout.slices
        self.nb, self.pass_action = self.board.neighbours, rules.actions.pass_action
        self._hand, self._occupied, self._base = sl["hand"], sl["table_occupied"], sl["table_base"]
        self._suit, self._rank = sl["table_suit"], sl["table_rank"]
        self._seen = [sl[k] for k in ("own_captured", "opp_captured", "table_cards", "discard")]
        self._opp_hand, self._in_chain = sl["opp_hand_size"].start, sl["in_chain"].start

    def read(self, obs: np.ndarray) -> tuple[list[int], _Table, int, int, bool]:
        """Own hand (sorted), the table, the unseen-card mask, the opponent's hand size, in-chain flag."""
        n = self.board.cells
        hand = [int(c) for c in np.flatnonzero(obs[self._hand])]
        cards = np.flatnonzero(obs[self._occupied].astype(bool) & ~obs[self._base].astype(bool))
        suits = obs[self._suit].reshape(4, n)[:, cards].argmax(axis=0)
        ranks = obs[self._rank].reshape(13, n)[:, cards].argmax(axis=0)
        table: _Table = {int(c): int(s) * 13 + int(r) for c, s, r in zip(cards, suits, ranks, strict=True)}
        for c in np.flatnonzero(obs[self._base]):
            table[int(c)] = BASE
        seen = obs[self._hand].copy()
        for s in self._seen:
            seen += obs[s]
        unseen = sum(1 << int(c) for c in np.flatnonzero(seen == 0))
        opp = round(float(obs[self._opp_hand]) * HAND_SIZE)
        return hand, table, unseen, opp, bool(obs[self._in_chain] > 0.5)

    def allowed(self, table: _Table, cell: int) -> int:
        """Mask of the cards that match every face-up neighbour of ``cell``."""
        m = ALL_CARDS_MASK
        for q in self.nb[cell]:
            if q in table:
                m &= COMPAT[table[q]]
        return m

    def captured_by(self, table: _Table, cell: int) -> list[int]:
        """Cells captured by a placement on the empty ``cell`` (the cell itself if it becomes surrounded)."""
        nb = self.nb
        out = [cell] if sum(q in table for q in nb[cell]) == 4 else []
        for q in nb[cell]:
            if table.get(q, BASE) != BASE and sum(r in table for r in nb[q]) == 3:
                out.append(q)
        return out

    def after_turn(self, table: _Table) -> _Table:
        """The table once a turn that captured ends: cards not joined to the base are discarded."""
        stack = [c for c, v in table.items() if v == BASE]
        joined = set(stack)
        while stack:
            for q in self.nb[stack.pop()]:
                if q in table and q not in joined:
                    joined.add(q)
                    stack.append(q)
        return {c: v for c, v in table.items() if c in joined}

    def frontier(self, table: _Table) -> list[int]:
        """Empty cells beside a card, ascending."""
        return sorted({r for q in table for r in self.nb[q] if r not in table})

    def parts(self, table: _Table, e: int) -> tuple[int, bool, int]:
        """For the empty ``e``: (points a placement there takes, whether it is a hole, the cards it allows)."""
        pts, allow = 0, ALL_CARDS_MASK
        for q in self.nb[e]:
            if q in table and table[q] != BASE:
                allow &= COMPAT[table[q]]
                if len(self.nb[q]) == 4 and sum(r in table for r in self.nb[q]) == 3:
                    pts += POINTS[table[q]]
        return pts, sum(q in table for q in self.nb[e]) == 4, allow

    def cell_threat(self, table: _Table, e: int, cards: int) -> tuple[int, int]:
        """(points a placement on the empty ``e`` would capture, cards of ``cards`` that fit ``e``); (0, 0) if none."""
        pts, hole, allow = self.parts(table, e)
        fit = cards & allow
        if not (pts or hole) or not fit:
            return 0, 0
        return pts + (max(POINTS[c] for c in range(52) if fit >> c & 1) if hole else 0), fit

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
            k = (self.allowed(table, e) & unseen).bit_count()
            if pts and not (k and not self.agent.soft_setup):
                best = max(best, pts * (1.0 - risk[k]))
        return best

    def changed(self, table: _Table, cell: int) -> list[int]:
        """The empty cells whose threat a placement on ``cell`` changes (within 2 steps), in the order met."""
        out: dict[int, None] = {}
        for q in self.nb[cell]:
            for r in [q] if q not in table else self.nb[q]:
                if r not in table and r != cell:
                    out[r] = None
        return list(out)

    def evaluate_quiet(self, table: _Table, card: int, cell: int, mine: int, unseen: int, risk: list[float],
                       base: float) -> float:  # fmt: skip
        """A placement that captures nothing: danger and set-up change only on the cells it changes."""
        cells = self.changed(table, cell)
        before = 0.0
        for e in cells:
            before += self.danger(table, [e], unseen, risk)
        after_table = {**table, cell: card}
        a = self.agent
        after = self.danger(after_table, cells, unseen, risk)
        return -a.risk_weight * (base + after - before) + a.setup_weight * self.setup(after_table, cells, mine,
                                                                                      unseen, risk)  # fmt: skip

    def values(self, observation: dict[str, np.ndarray], legal: Any, weigh_pass: bool) -> list[tuple[int, float]]:
        """``GreedyAgent.action_values``: (action, score) of the legal actions greedy weighs."""
        a = self.agent
        hand, table, unseen, opp, in_chain = self.read(observation["observation"])
        risk = risk_table(unseen.bit_count(), opp)
        out: list[tuple[int, float]] = []
        base = self.danger(table, self.frontier(table), unseen, risk)
        if in_chain:  # "end" is worth the risk of the table as it would be left now
            end = self.after_turn(table)
            out.append((self.pass_action, -a.risk_weight * self.danger(end, self.frontier(end), unseen, risk)))
        elif weigh_pass and self.pass_action in legal:
            out.append((self.pass_action, -a.risk_weight * base))
        for action in legal:
            move = self.actions.decode(int(action))
            if move.kind == "stop":
                continue
            cell, card = move.cell, hand[move.slot]
            mine = sum(1 << c for c in hand if c != card)
            captured = self.captured_by(table, cell)
            if captured or in_chain:  # points now minus the risk of the table left after the turn
                after = {**table, cell: card}
                gained = sum(POINTS[after.pop(q)] for q in captured)
                after = self.after_turn(after)
                front = self.frontier(after)
                value = gained - a.risk_weight * self.danger(after, front, unseen, risk)
                if a.setup_weight:
                    value += a.setup_weight * self.setup(after, front, mine, unseen, risk)
            else:
                value = self.evaluate_quiet(table, card, cell, mine, unseen, risk, base)
            tie_breaks = a.card_weight * POINTS[card] + a.distance_weight * self.board.distance[cell]
            out.append((int(action), value - tie_breaks))
        return out

    def act(self, observation: dict[str, np.ndarray], rng: np.random.Generator) -> int:
        """``GreedyAgent.act``: the best score, ties within ``TIE`` drawn with ``rng``."""
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 1:
            return int(legal[0])
        best_value, ties = -1e9, [self.pass_action]
        for action, value in self.values(observation, legal, self.agent.allow_pass):
            if value > best_value + TIE:
                best_value, ties = value, [action]
            elif value > best_value - TIE:
                ties.append(action)
        return ties[0] if len(ties) == 1 else ties[int(rng.integers(len(ties)))]

    def scores(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        """``GreedyAgent.scores``: ``exp(score - best)`` of the weighed actions (a pass when the points differ)."""
        out = np.zeros(self.actions.num_actions, dtype=np.float32)
        legal = np.flatnonzero(observation["action_mask"])
        values = self.values(observation, legal, self.agent.points_differ(observation)) if len(legal) > 1 else [
            (int(legal[0]), 0.0)]  # fmt: skip
        v = np.array([x for _, x in values])
        out[[x for x, _ in values]] = np.exp(v - v.max())
        return out


# ----------------------------------------------------------------------------------------------- walls
def walls_values(agent: Any, observation: dict[str, np.ndarray], legal: Any) -> list[tuple[int, float]]:
    """walls' ``GreedyAgent.action_values``: the opening's minus rank, else each move simulated and scored."""
    legal = [int(a) for a in legal]
    p = agent.params[0]
    raw = np.rint(observation["observation"] * p["unscale"][: p["size"]]).astype(np.int64)
    sl, n = agent.sl, agent.n
    phase = Phase(int(raw[sl["phase"]].argmax()))
    if phase == Phase.OPEN_WALL:  # the lowest card of the colour with the most value in hand
        colour_value = (raw[sl["hand"]][:25].reshape(5, 5) * np.array(VALUES)).sum(axis=1).tolist()
        keys = {a: (colour_value[a // 5], -(a % 5)) if a < 25 else (-1, 0) for a in legal}
        rank = {k: i for i, k in enumerate(sorted(set(keys.values()), reverse=True))}
        return [(a, -float(rank[keys[a]])) for a in legal]
    walls = raw[sl["walls"]].reshape(n, 5, 7).copy()  # value counts, trumpets, length
    op = raw[sl["own_opening"]][:25]
    if phase == Phase.OPEN_SUPPLY and op.any():  # our own face-down first wall card counts as built
        c, v = divmod(int(op.argmax()), 5)
        walls[0, c, v] += 1
        walls[0, c, 6] += VALUES[v]
    own, hand = raw[sl["own_supply"]], raw[sl["hand"]]
    known = raw[sl["supply_public"]].reshape(5, 5).sum(axis=1) + own[:25].reshape(5, 5).sum(axis=1)
    seen = raw[sl["supply_public"]].reshape(5, 5) + own[:25].reshape(5, 5) + hand[:25].reshape(5, 5)
    seen = seen + walls[:, :, :5].sum(axis=0) + raw[sl["won"]].reshape(n, 5, 5).sum(axis=0)
    unseen = 17 - seen.sum(axis=1)
    pool = unseen.sum() + max(0, NUM_TRUMPETS - hand[TRUMPET] - own[TRUMPET] - walls[:, :, 5].sum())
    hidden_others = raw[sl["supply_face_down"]][1:].sum()
    before, left = raw[sl["scoring_window"]].tolist()
    supply = known + (hidden_others / pool if pool else 0.0) * unseen + agent.future_rate * (before + 0.5 * left)
    won = raw[sl["won"]].reshape(n, 25).sum(axis=1).tolist()
    by_colour = walls.transpose(1, 0, 2).tolist()  # [colour][seat][7]
    value = lambda counts, s: _colour_value(agent.one_weight, counts, s)  # noqa: E731
    contrib = [value(by_colour[c], supply[c]) for c in range(5)]  # [colour][seat]
    totals = [won[k] + sum(contrib[c][k] for c in range(5)) for k in range(n)]
    out = []
    for a in legal:
        extra, c = 0.0, -1  # a trumpet into the supply changes nothing: it is discarded at the scoring
        if a < 25:  # build
            c, v = divmod(a, 5)
            counts = [w[:] for w in by_colour[c]]
            counts[0][v] += 1
            counts[0][6] += VALUES[v]
            new = value(counts, supply[c])
        elif a < 30:  # trumpet naming colour a - 25
            c = a - 25
            counts, fallen = _trumpet(by_colour[c])
            new = value(counts, supply[c] + fallen)
        elif a != 30 + TRUMPET:  # a wall card into the supply
            c, v = divmod(a - 30, 5)
            new = value(by_colour[c], supply[c] + 1)
            extra = -agent.supply_cost[v]
        tot = totals if c < 0 else [totals[k] - contrib[c][k] + new[k] for k in range(n)]
        out.append((a, tot[0] - agent.rival_weight * max(tot[1:]) + extra))
    return out


def _colour_value(one_weight: float, counts: list[list[int]], supply: float) -> list[float]:
    """Each seat's cards from one colour if it scored now: longest wall(s) share the supply, plus 1s in walls."""
    lens = [cnt[6] for cnt in counts]
    top = max(lens)
    if top <= 0:
        return [one_weight * cnt[0] for cnt in counts]
    share = supply / lens.count(top)
    return [(share if x == top else 0.0) + one_weight * cnt[0] for x, cnt in zip(lens, counts, strict=True)]


def _trumpet(walls: list[list[int]]) -> tuple[list[list[int]], int]:
    """One colour's walls after our trumpet naming it, and the cards fallen into the supply."""
    counts = [w[:] for w in walls]
    fallen = 0
    for vi in (4, 3, 2, 1, 0):
        if any(cnt[vi] for cnt in counts):
            for cnt in counts:
                k = cnt[vi]
                if k:
                    fallen += k
                    cnt[vi] = 0
                    cnt[6] -= k * VALUES[vi]
                    if cnt[6] == 2 * cnt[5]:  # only trumpets left: the wall collapses
                        cnt[5] = cnt[6] = 0
            break
    if counts[0][6]:  # the trumpet joins our wall if it still stands
        counts[0][5] += 1
        counts[0][6] += TYPE_VALUE[TRUMPET]
    return counts, fallen


def walls_act(agent: Any, observation: dict[str, np.ndarray]) -> int:
    """walls' ``GreedyAgent.act``: the first legal action whose score beats the running best by more than ``TIE``."""
    legal = np.flatnonzero(observation["action_mask"])
    if len(legal) == 1:
        return int(legal[0])
    best_score, best = -1e18, int(legal[0])
    for action, score in walls_values(agent, observation, legal):
        if score > best_score + TIE:
            best_score, best = score, action
    return best


def walls_scores(agent: Any, observation: dict[str, np.ndarray]) -> np.ndarray:
    """walls' ``GreedyAgent.scores``: ``exp(score - best)`` of the legal actions."""
    out = np.zeros(len(observation["action_mask"]), dtype=np.float32)
    legal = np.flatnonzero(observation["action_mask"])
    values = walls_values(agent, observation, legal) if len(legal) > 1 else [(int(legal[0]), 0.0)]
    v = np.array([x for _, x in values])
    out[[a for a, _ in values]] = np.exp(v - v.max())
    return out


# ----------------------------------------------------------------------------------------------- castles
def castles_act(agent: Any, observation: dict[str, np.ndarray]) -> int:
    """castles' ``GreedyAgent.act``: a rule per kind of step; in play, the rank of the best pressure score."""
    rules: Any = make_rules("castles", **agent.game_options)
    acts, deck, sl = rules.actions, rules.deck, rules.layout.slices
    strength = [deck.strength(r) for r in range(deck.ranks)] + [deck.ranks]  # the joker the strongest
    legal = np.flatnonzero(observation["action_mask"]).tolist()
    kind = acts.decode(legal[0]).kind  # every legal action of a step is of one kind, or play and joker
    if kind == "discard":  # short deck: throw away the weakest card
        return int(min(legal, key=lambda a: strength[acts.decode(a).rank]))
    if kind in ("save", "play_save"):  # choose a save or turn one over: the strongest
        return int(max(legal, key=lambda a: strength[acts.decode(a).rank]))
    most: dict[int, int] = {}  # rank -> most copies legal to play
    for a in legal:
        move = acts.decode(a)
        if move.kind == "play":
            most[move.rank] = max(most.get(move.rank, 0), move.n_cards)
    if not most:
        return int(acts.joker)
    obs = observation["observation"]
    unseen = [n - round(x * n) for n, x in zip(deck.composition(), obs[sl["opp_out"]].tolist(), strict=True)]
    total, hand = sum(unseen), round(float(obs[sl["opp_counts"].start + 1]) * 8)
    best, best_score = -1, -1e9
    for r in most:
        misses = total - sum(unseen[x] for x in (*deck.allowed[r], deck.joker))
        score = -strength[r] + 5.0 * _all_miss(misses, total, hand)
        if score > best_score:
            best, best_score = r, score
    return int(acts.play(best, most[best]))


def _all_miss(misses: int, total: int, drawn: int) -> float:
    """Probability that ``drawn`` cards taken from ``total`` (``misses`` of them useless) are all useless."""
    p = 1.0
    for i in range(drawn):
        if misses - i <= 0:
            return 0.0
        p *= (misses - i) / (total - i)
    return p
