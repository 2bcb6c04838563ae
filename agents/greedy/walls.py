"""``greedy`` for walls: the move that most raises the cards this seat would hold if a scoring came now.

Heuristic. Every legal move is simulated on the observed table (a trumpet on every wall of the named
colour, the fallen cards into the supply, walls of trumpets only collapsing, the trumpet joining our
wall) and scored by the cards this seat would then hold: its cards won, 1.5 per value-1 card in its
walls (won at the end), and, per colour where its wall is longest (shared when tied), the supply of
that colour: the cards it knows of (face up, its own face-down ones), the others' face-down cards in
proportion to the unseen cards of each colour, and 0.1 per draw expected before the next scoring. A
value-1 card put into the supply costs 1 (it is worth building). Opening: the lowest card of the
colour with the most value in hand; the opening supply card and the donations go through the same
scoring (so into a colour this seat leads). Only the observation is read, decoded through the
game's layout, and actions through the game's action encoding (``jericho_env.games.walls.actions``);
no lookahead, so ties go to the first legal action. How the weights were chosen, how strong it plays
and how long ``act`` takes: ``docs/agents.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import jericho_env
from agents.base import BaseAgent
from jericho_env.games.walls.actions import WallsActions
from jericho_env.games.walls.cards import COPIES, NUM_TRUMPETS, TRUMPET, TYPE_VALUE, VALUES
from jericho_env.games.walls.observation import MAX_HAND, MAX_WALL_LENGTH, WINDOW_SCALE
from jericho_env.games.walls.state import Phase

NUM_CARDS = 110
_VALUES_DESC = (4, 3, 2, 1, 0)


class GreedyAgent(BaseAgent):
    """Walls heuristic: simulate each legal move on the observed walls and supply, keep the best."""

    name = "greedy"
    # weight of the best rival's expected cards against this seat's own
    rival_weight = 0.0
    # expected supply cards of each colour still to come before the scoring, per draw left
    future_rate = 0.1
    # worth of a value-1 card in a wall (it is won at the end unless a trumpet knocks it down)
    one_weight = 1.5
    # cost of putting a wall card of value 1, 3, 4, 5, 7 into the supply: a 1 kept is a card won by building it
    supply_cost: tuple[float, ...] = (1.0, 0.0, 0.0, 0.0, 0.0)

    def __init__(self, game_id: str, seed: int | None = None, **game_options: Any) -> None:
        super().__init__(game_id, seed, **game_options)
        if game_id != "walls":
            raise ValueError(f"this greedy agent plays walls, not {game_id!r}")
        rules: Any = jericho_env.make_rules("walls", **game_options)
        self.observation_size = rules.layout.size
        self.n = n = int(rules.options["num_players"])
        self.actions: WallsActions = rules.actions
        layout = rules.layout
        sl = layout.slices
        # the divisor of every entry, so that obs * unscale gives back the raw counts
        per_type = [float(c) for c in COPIES[:26]]
        wall = ([float(c) for c in COPIES[:5]] + [float(NUM_TRUMPETS), float(MAX_WALL_LENGTH)]) * 5
        parts = {
            "hand": per_type,
            "own_opening": [1.0] * 26,
            "own_supply": per_type,
            "hand_sizes": [float(MAX_HAND)] * n,
            "opening_laid": [1.0] * n,
            "supply_face_down": [float(NUM_CARDS)] * n,
            "walls": wall * n,
            "won": per_type[:25] * n,
            "supply_public": per_type[:25],
            "supply_size": [float(NUM_CARDS)],
            "deck_size": [float(NUM_CARDS)],
            "scoring_window": [float(WINDOW_SCALE)] * 2,
            "round": [1.0] * 3,
            "phase": [1.0] * 4,
            "to_move": [1.0] * n,
        }
        unscale = np.empty(layout.size, dtype=np.float64)
        for f in layout.fields:
            unscale[sl[f.name]] = parts.get(f.name, 1.0)  # version 1's fields (what the seat infers): not read
        self.unscale = unscale
        self.sl = dict(sl)

    # ----------------------------------------------------------------- reading the observation
    def _raw(self, obs: np.ndarray) -> np.ndarray:
        """The observation as raw integer counts."""
        return np.rint(obs * self.unscale).astype(np.int64)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """The heuristic's choice among the legal actions of ``observation``."""
        legal = self.legal(observation).tolist()
        if len(legal) == 1:
            return int(legal[0])
        best_score, best = -1e18, legal[0]
        for act, score in self.action_values(observation, legal):
            if score > best_score + 1e-9:  # ties go to the first legal action
                best_score, best = score, act
        return int(best)

    def action_values(self, observation: dict[str, np.ndarray], legal: Any) -> list[tuple[int, float]]:
        """(action, score) of every action in ``legal``, in its order; ``act`` plays the first best one.

        In play the score is the cards this seat would hold if a scoring came after the move (the module's
        heuristic). For the first wall card it is minus the move's rank in greedy's order (colour with the
        most value in hand first, then the lowest card), so the order, not the size of the gaps, counts there.
        """
        legal = [int(a) for a in legal]
        raw = self._raw(observation["observation"])
        phase = Phase(int(raw[self.sl["phase"]].argmax()))  # the observation's one-hot is in Phase order
        if phase == Phase.OPEN_WALL:
            return self._opening_wall(raw, legal)
        return self._evaluate(raw, legal, phase)

    def scores(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        """Per action, ``exp(score - best score)`` in (0, 1] for the legal actions, else 0 (1: the best moves).

        A move that leaves this seat one expected card worse off than the best gets 0.37, two cards 0.14.
        The hint of ``--prior greedy-scores`` (``agents.prior``).
        """
        out = np.zeros(len(observation["action_mask"]), dtype=np.float32)
        legal = self.legal(observation)
        values = self.action_values(observation, legal) if len(legal) > 1 else [(int(legal[0]), 0.0)]
        v = np.array([x for _, x in values])
        out[[a for a, _ in values]] = np.exp(v - v.max())
        return out

    def _opening_wall(self, raw: np.ndarray, legal: list[int]) -> list[tuple[int, float]]:
        """First wall card: the lowest card of the colour with the most value in hand (high cards are kept)."""
        hand = raw[self.sl["hand"]][:25].reshape(5, 5)
        colour_value = (hand * np.array(VALUES)).sum(axis=1).tolist()

        decode = self.actions.decode

        def key(act: int) -> tuple[int, int]:
            card = decode(act).card  # a wall card (build), or the trumpet from a hand of seven trumpets
            c, v = divmod(card, 5)
            return (colour_value[c] if c < 5 else -1, -v)

        order = sorted({key(a) for a in legal}, reverse=True)
        rank = {k: i for i, k in enumerate(order)}
        return [(a, -float(rank[key(a)])) for a in legal]

    def _evaluate(self, raw: np.ndarray, legal: list[int], phase: Phase) -> list[tuple[int, float]]:
        """Score every legal move by simulating it on the observed walls and supply."""
        n = self.n
        sl = self.sl
        walls = raw[sl["walls"]].reshape(n, 5, 7)
        if phase == Phase.OPEN_SUPPLY:  # our own face-down first wall card counts as built
            op = raw[sl["own_opening"]]
            if op[:25].any():
                c, v = divmod(int(op[:25].argmax()), 5)
                walls = walls.copy()
                walls[0, c, v] += 1
                walls[0, c, 6] += VALUES[v]
        pub = raw[sl["supply_public"]].reshape(5, 5).sum(axis=1)
        own_sup = raw[sl["own_supply"]]
        hand = raw[sl["hand"]]
        known = pub + own_sup[:25].reshape(5, 5).sum(axis=1)
        seen_types = (
            raw[sl["supply_public"]].reshape(5, 5)
            + own_sup[:25].reshape(5, 5)
            + hand[:25].reshape(5, 5)
            + walls[:, :, :5].sum(axis=0)
            + raw[sl["won"]].reshape(n, 5, 5).sum(axis=0)
        )
        unseen = 17 - seen_types.sum(axis=1)
        unseen_trumpets = NUM_TRUMPETS - hand[TRUMPET] - own_sup[TRUMPET] - walls[:, :, 5].sum()
        pool = unseen.sum() + max(0, unseen_trumpets)
        hidden_others = raw[sl["supply_face_down"]][1:].sum()
        before, left = raw[sl["scoring_window"]].tolist()
        future = self.future_rate * (before + 0.5 * left)
        supply = (known + (hidden_others / pool if pool else 0.0) * unseen + future).tolist()
        won = raw[sl["won"]].reshape(n, 25).sum(axis=1).tolist()
        by_colour = walls.transpose(1, 0, 2).tolist()  # [colour][seat][7]: value counts, trumpets, length
        value = self._colour_value
        contrib = [value(by_colour[c], supply[c]) for c in range(5)]  # [colour][seat]
        totals = [won[k] + sum(contrib[c][k] for c in range(5)) for k in range(n)]
        rival = self.rival_weight

        out: list[tuple[int, float]] = []
        decode = self.actions.decode
        for act in legal:
            extra = 0.0
            move = decode(act)
            if move.kind == "build":
                c, v = divmod(move.card, 5)
                counts = by_colour[c][:]
                mine = counts[0] = counts[0][:]
                mine[v] += 1
                mine[6] += VALUES[v]
                new = value(counts, supply[c])
            elif move.kind == "trumpet":
                c = move.colour
                counts, fallen = self._trumpet(by_colour[c])
                new = value(counts, supply[c] + fallen)
            elif move.card == TRUMPET:
                c = -1  # a trumpet into the supply changes nothing: it is discarded at the scoring
            else:
                c, v = divmod(move.card, 5)
                new = value(by_colour[c], supply[c] + 1)
                extra = -self.supply_cost[v]
            if c < 0:
                tot = totals
            else:
                old = contrib[c]
                tot = [totals[k] - old[k] + new[k] for k in range(n)]
            out.append((act, tot[0] - rival * max(tot[1:]) + extra))
        return out

    def _colour_value(self, counts: list[list[int]], supply: float) -> list[float]:
        """Each seat's cards from one colour if it scored now: longest wall(s) share the supply, plus 1s in walls."""
        w1 = self.one_weight
        lens = [cnt[6] for cnt in counts]
        top = max(lens)
        if top <= 0:
            return [w1 * cnt[0] for cnt in counts]
        share = supply / lens.count(top)
        return [(share if x == top else 0.0) + w1 * cnt[0] for x, cnt in zip(lens, counts, strict=True)]

    def _trumpet(self, walls: list[list[int]]) -> tuple[list[list[int]], int]:
        """One colour's walls after our trumpet naming it, and the cards fallen into the supply."""
        counts = [w[:] for w in walls]
        fallen = 0
        for vi in _VALUES_DESC:
            if any(cnt[vi] for cnt in counts):
                for cnt in counts:
                    k = cnt[vi]
                    if k:
                        fallen += k
                        cnt[vi] = 0
                        cnt[6] -= k * VALUES[vi]
                        if cnt[6] == 2 * cnt[5]:  # only trumpets left: the wall collapses
                            cnt[5] = 0
                            cnt[6] = 0
                break
        if counts[0][6]:  # the trumpet joins our wall if it still stands
            counts[0][5] += 1
            counts[0][6] += TYPE_VALUE[TRUMPET]
        return counts, fallen
