"""What grid's public history tells about a player's hidden hand, and redealing hands consistent with it.

A chain ends by itself when the player holds no card for any capturing cell, and goes on (or is
ended by an explicit "end") only when the player holds one. So the table reveals, at such moments,
that the hand then held *no* card of a set ``M`` (the cards that fit some capturing cell) or *some*
card of it. Cards stay hidden in a hand until placed, and the hand is refilled from the shared pile
at the end of each turn, so whether a card now in the hand was already held at such a moment
depends on when it was drawn: a small scheduling problem.

Each player's public history is a persistent list (shared between clones, O(1) to extend) of
entries ``(kind, value)``: ``DRAW, n`` (the refill drew n cards), ``PLACE, card``, ``NONE, M``
(the hand held no card of mask M), ``SOME, M`` (it held at least one; only recorded when the chain
was ended by choice, since a chain placement itself shows a card of M).

``consistent`` decides whether a candidate hand admits a drawing schedule: every card entered the
hand at some refill (the deal counts as refill 0) before it was placed, each refill drew exactly
the public number of cards, and each NONE/SOME fact held for the cards in hand at its moment.
With only NONE facts this is interval scheduling (a card's refill lies in ``[lo, hi]``), decided
exactly by earliest-deadline-first; each SOME fact is met by choosing its witness card, which
tightens that card's deadline, and the choices are enumerated.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from jericho_env.core.redeal import NoConsistentDealError, draw_hand

DRAW, PLACE, NONE, SOME = 0, 1, 2, 3
KIND_NAMES = ("draw", "place", "none", "some")
MAX_TRIES = 2000  # rejection draws before redeal_hand goes through every hand

History = Any  # None, or (entry, History): a persistent linked list, newest entry first


def entries(history: History) -> list[tuple[int, int]]:
    """The entries of ``history``, oldest first."""
    out = []
    while history is not None:
        out.append(history[0])
        history = history[1]
    out.reverse()
    return out


def from_entries(items: list[tuple[int, int]]) -> History:
    """A history holding ``items`` (oldest first)."""
    h: History = None
    for item in items:
        h = (item, h)
    return h


class HandFacts:
    """One player's history, parsed: refill sizes, placements and the NONE/SOME facts with their moments."""

    def __init__(self, history: History, hand_size: int) -> None:
        self.draws: list[int] = []  # draws[j - 1]: cards drawn at refill j
        self.placed: list[tuple[int, int]] = []  # (card, refills before it was placed)
        self.facts: list[tuple[int, int, int, int]] = []  # (kind, refills so far, placements so far, mask)
        for kind, value in entries(history):
            if kind == DRAW:
                self.draws.append(value)
            elif kind == PLACE:
                self.placed.append((value, len(self.draws)))
            elif value:
                self.facts.append((kind, len(self.draws), len(self.placed), value))
        self.refills = len(self.draws)
        # the deal (refill 0) holds whatever the later refills do not account for
        self.capacity = [len(self.placed) + hand_size - sum(self.draws), *self.draws]

    def add_current(self, kind: int, mask: int) -> None:
        """A fact about the hand as it is now (the player to move in a chain holds a capturing card)."""
        if mask:
            self.facts.append((kind, self.refills, len(self.placed), mask))

    def excluded_now(self) -> int:
        """Cards the hand cannot hold now: those of a NONE fact since the last refill (no card has entered since)."""
        out = 0
        for kind, at, _, mask in self.facts:
            if kind == NONE and at == self.refills:
                out |= mask
        return out

    def consistent(self, hand: list[int]) -> bool:
        """Whether the current hand ``hand`` admits a drawing schedule meeting every fact."""
        if not self.facts:
            return True
        items = [(c, hi, i) for i, (c, hi) in enumerate(self.placed)]
        gone = len(self.placed)  # hand cards are never placed: their placement index is past every fact
        items += [(c, self.refills, gone) for c in hand]
        lo = [0] * len(items)
        hi = [it[1] for it in items]
        some: list[list[int]] = []
        for kind, at, before, mask in self.facts:
            if kind == NONE:
                for k, (c, _, idx) in enumerate(items):
                    if idx >= before and mask >> c & 1 and lo[k] <= at:
                        lo[k] = at + 1
        for k in range(len(items)):
            if lo[k] > hi[k]:
                return False
        for kind, at, before, mask in self.facts:
            if kind != SOME:
                continue
            cands = [k for k, (c, _, idx) in enumerate(items) if idx >= before and mask >> c & 1 and lo[k] <= at]
            if not cands:
                return False
            if any(hi[k] <= at for k in cands):
                continue  # already held by then in every schedule
            some.append([*cands, at])  # the last entry: the moment
        if not some:
            return self._schedulable(lo, hi)
        for choice in itertools.product(*(f[:-1] for f in some)):
            h2 = hi[:]
            for k, f in zip(choice, some, strict=True):
                h2[k] = min(h2[k], f[-1])
            if self._schedulable(lo, h2):
                return True
        return False

    def _schedulable(self, lo: list[int], hi: list[int]) -> bool:
        """Earliest deadline first: can every card get a refill in [lo, hi], each refill filled exactly?"""
        order = sorted(range(len(lo)), key=lambda k: lo[k])
        waiting: list[int] = []  # deadlines of released, unassigned cards
        nxt = 0
        for j, cap in enumerate(self.capacity):
            while nxt < len(order) and lo[order[nxt]] <= j:
                waiting.append(hi[order[nxt]])
                nxt += 1
            if cap > len(waiting):
                return False
            waiting.sort()
            del waiting[:cap]
            if waiting and waiting[0] <= j:  # a card due by refill j found no room in it
                return False
        return nxt == len(order) and not waiting


def redeal_hand(facts: HandFacts, pool: list[int], size: int, rng: np.random.Generator) -> tuple[list[int], list[int]]:
    """A hand of ``size`` from ``pool`` (canonical order) consistent with ``facts``; (hand, rest of the pool).

    Draws uniformly among the hands that avoid the cards barred now and hold a card of every SOME fact
    of the current turn, and keeps the first one ``facts.consistent`` accepts: uniform over the
    consistent hands. Where ``MAX_TRIES`` draws find none (rare positions of long runs), one of every consistent
    hand, uniformly.
    """
    barred = facts.excluded_now()
    allowed = [c for c in pool if not barred >> c & 1]
    held = [c for c in pool if barred >> c & 1]
    bounds = []
    for kind, at, before, mask in facts.facts:
        # a SOME fact since the last refill that no later placement can have met binds the hand itself
        if kind == SOME and at == facts.refills and not any(mask >> c & 1 for c, _ in facts.placed[before:]):
            bounds.append((lambda c, m=mask: bool(m >> c & 1), 1))
    for _ in range(MAX_TRIES):
        hand, rest = draw_hand(allowed, size, bounds, rng)
        if facts.consistent(hand):
            return hand, sorted(rest + held)
    # consistent hands too rare for rejection: one of all of them, uniformly
    hands = [list(h) for h in itertools.combinations(allowed, size)
             if all(any(fits(c) for c in h) for fits, _ in bounds) and facts.consistent(list(h))]  # fmt: skip
    if not hands:
        raise NoConsistentDealError(f"no hand of {size} from the unseen cards is consistent with the public history")
    hand = hands[int(rng.integers(len(hands)))]
    return hand, sorted([c for c in allowed if c not in hand] + held)
