"""walls ``greedy``'s play scores of a batch in one compiled loop (Numba): ``BatchGreedyWalls``'s fast path.

``play_values`` computes, row by row, what ``BatchGreedyWalls._play_values`` computes with numpy over the
whole batch (see ``agents/greedy/walls_batch.py`` for the heuristic and the 35 variants of one colour's
walls): the same operations on the same numbers in the same order, in float64, so the scores are the same
floats. numpy pays a fixed cost per array operation, which dominates on the small batches self-play asks
for; here a row costs a few hundred arithmetic operations. Only this seat's cards are scored
(``rival_weight`` 0, ``GreedyAgent``'s setting); a positive ``rival_weight`` keeps the numpy path.

Without Numba (``agents._numba``) the function runs as plain Python: its tests check the same arithmetic
either way, and ``BatchGreedyWalls`` then keeps numpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents._numba import KERNEL, njit
from jericho_env.games.walls.cards import COPIES_PER_VALUE, NUM_TRUMPETS

CARDS_PER_COLOUR = float(sum(COPIES_PER_VALUE))  # 17
TRUMPETS = float(NUM_TRUMPETS)

__all__ = ["KERNEL", "first_best", "play_values"]


@njit(cache=True)
def _own_value(mine: float, ones: float, rivals: float, tied: float, supply: float) -> float:
    """This seat's cards from one colour: its share of the supply if its wall is (one of) the longest, plus 1s."""
    top = max(mine, rivals)
    longest = mine == top
    share = 0.0
    if top > 0:
        share = supply / ((1.0 if longest else 0.0) + (tied if rivals == top else 0.0))
    return (share if longest else 0.0) + ones


@njit(cache=True)
def _longest_rival(length: Any, c: int, n: int) -> tuple[float, float]:
    """(the longest rival wall of colour ``c`` in ``length`` (seat, colour), how many rivals have it)."""
    rivals = -1.0
    tied = 0.0
    for k in range(1, n):
        if length[k, c] > rivals:
            rivals, tied = length[k, c], 1.0
        elif length[k, c] == rivals:
            tied += 1.0
    return rivals, tied


@njit(cache=True)
def play_values(
    raw: Any,
    phase: Any,
    n: int,
    at: Any,
    future_rate: float,
    one_weight: float,
    trumpet_value: float,
    values: Any,
    extra: Any,
    action_variant: Any,
) -> Any:
    """Scores (A, B) float64 of every action of every row, as ``BatchGreedyWalls._play_values`` (rival weight 0).

    ``raw`` (D, B) float32: the rows' counts, feature-major; ``phase`` (B,): each row's phase index (1: the
    opening supply card, where our face-down first wall card counts as built); ``at``: the offsets of the
    fields hand, own_opening, own_supply, supply_face_down, walls, won, supply_public, scoring_window;
    ``values`` the five card values; ``extra`` (A,) what each action adds last; ``action_variant`` (A,) the
    variant (0..35) each action reads.
    """
    hand_at, opening_at, own_at, hidden_at, walls_at, won_at, public_at, window_at = (
        at[0],
        at[1],
        at[2],
        at[3],
        at[4],
        at[5],
        at[6],
        at[7],
    )
    rows = raw.shape[1]
    actions = extra.shape[0]
    out = np.empty((actions, rows))
    counts = np.empty((n, 5, 5))
    trumpets = np.empty((n, 5))
    length = np.empty((n, 5))
    ones = np.empty(5)  # our 1s' worth per colour (only our own cards are scored)
    rivals = np.empty(5)
    tied = np.empty(5)
    after = np.empty((n, 5))
    supply = np.empty(5)
    unseen = np.empty(5)
    known = np.empty(5)
    contrib = np.empty(5)
    value = np.empty(36)
    for b in range(rows):
        for k in range(n):
            for c in range(5):
                base = walls_at + (k * 5 + c) * 7
                for v in range(5):
                    counts[k, c, v] = raw[base + v, b]
                trumpets[k, c] = raw[base + 5, b]
                length[k, c] = raw[base + 6, b]
        if phase[b] == 1:  # the opening supply card: our face-down first wall card counts as built
            for t in range(25):
                x = float(raw[opening_at + t, b])
                if x != 0.0:
                    counts[0, t // 5, t % 5] += x
                    length[0, t // 5] += x * values[t % 5]
        for c in range(5):
            ones[c] = one_weight * counts[0, c, 0]

        # the supply of each colour this seat expects at the next scoring (integer sums: exact in any order)
        pool = 0.0
        table_trumpets = 0.0
        for c in range(5):
            kn = 0.0
            seen = 0.0
            for v in range(5):
                t = c * 5 + v
                kn += raw[public_at + t, b] + raw[own_at + t, b]
                seen += raw[hand_at + t, b]
                for k in range(n):
                    seen += counts[k, c, v] + raw[won_at + k * 25 + t, b]
            known[c] = kn
            unseen[c] = CARDS_PER_COLOUR - (kn + seen)
            pool += unseen[c]
            for k in range(n):
                table_trumpets += trumpets[k, c]
        unseen_trumpets = TRUMPETS - raw[hand_at + 25, b] - raw[own_at + 25, b] - table_trumpets
        pool += max(unseen_trumpets, 0.0)
        hidden_others = 0.0
        for k in range(1, n):
            hidden_others += raw[hidden_at + k, b]
        ratio = hidden_others / pool if pool != 0.0 else 0.0
        future = future_rate * (float(raw[window_at, b]) + 0.5 * raw[window_at + 1, b])
        for c in range(5):
            supply[c] = known[c] + ratio * unseen[c] + future

        # now: each colour's longest rival wall, how many rivals have it, and our cards from it
        won = 0.0
        for t in range(25):
            won += raw[won_at + t, b]
        for c in range(5):
            rivals[c], tied[c] = _longest_rival(length, c, n)
            contrib[c] = _own_value(length[0, c], ones[c], rivals[c], tied[c], supply[c])
        totals = won + ((((contrib[0] + contrib[1]) + contrib[2]) + contrib[3]) + contrib[4])

        for c in range(5):
            base = totals - contrib[c]
            # builds of this colour: our wall grows by the card's value, a 1 adds to our 1s
            for v in range(5):
                bonus = one_weight if v == 0 else 0.0
                value[c * 5 + v] = base + _own_value(
                    length[0, c] + values[v], ones[c] + bonus, rivals[c], tied[c], supply[c]
                )
            # a card of this colour into the supply
            value[30 + c] = base + _own_value(length[0, c], ones[c], rivals[c], tied[c], supply[c] + 1.0)
            # our trumpet naming this colour: the highest value on the table falls, trumpet-only walls collapse
            hit = 4
            for v in range(4, -1, -1):
                present = 0.0
                for k in range(n):
                    present += counts[k, c, v]
                if present > 0:
                    hit = v
                    break
            fallen = 0.0
            for k in range(n):
                fall = counts[k, c, hit]
                fallen += fall
                after[k, c] = length[k, c] - fall * values[hit]
                if fall > 0 and after[k, c] == 2.0 * trumpets[k, c]:
                    after[k, c] = 0.0
            if after[0, c] != 0:
                after[0, c] += trumpet_value
            rivals_after, tied_after = _longest_rival(after, c, n)
            ones_after = 0.0 if hit == 0 else ones[c]
            value[25 + c] = base + _own_value(after[0, c], ones_after, rivals_after, tied_after, supply[c] + fallen)
        value[35] = totals  # a trumpet into the supply changes nothing
        for a in range(actions):
            out[a, b] = value[action_variant[a]] + extra[a]
    return out


@njit(cache=True)
def first_best(values: Any, legal: Any, tie: float) -> Any:
    """Per column of ``values`` (A, B), the action ``GreedyAgent.act``'s loop keeps among the ``legal`` (A, B) ones.

    The loop itself: the first legal action whose score beats the running best by more than ``tie``
    (-1 for a column without a legal action).
    """
    actions, rows = values.shape
    out = np.empty(rows, dtype=np.int64)
    for b in range(rows):
        best_score = -1e18
        best = -1
        for a in range(actions):
            if legal[a, b] and values[a, b] > best_score + tie:
                best_score = values[a, b]
                best = a
        out[b] = best
    return out
