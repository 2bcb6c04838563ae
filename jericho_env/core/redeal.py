"""Drawing hidden hands under constraints that forced moves revealed: shared by the games' ``determinize``.

A hidden hand is drawn from a pool of unseen cards. Every pool card falls in some of a few
*classes* (sets of cards, given as predicates), and the public history may say "at least ``m``
hand cards belong to class ``c``". ``draw_hand`` draws uniformly among the hands (sets of pool
cards, copies of a rank told apart) that meet every such bound: it counts the hands per pattern of
class memberships exactly (binomial products), draws a pattern by its count, then the cards of each
pattern uniformly. The result depends only on the pool, the bounds and ``rng``, never on which
hidden card lies where in the real state.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from math import comb

import numpy as np

from jericho_env.core.rules import JerichoError


class NoConsistentDealError(JerichoError):
    """No deal of the unseen cards agrees with what the seat has seen (a hand-made, impossible state)."""


def draw_hand(
    pool: Sequence[int],
    size: int,
    bounds: Sequence[tuple[Callable[[int], bool], int]],
    rng: np.random.Generator,
) -> tuple[list[int], list[int]]:
    """``size`` cards of ``pool`` such that, for each ``(in_class, m)``, at least ``m`` satisfy ``in_class``.

    Uniform over the qualifying subsets of pool positions. Returns (hand, rest), both in pool order.
    """
    bounds = [(f, m) for f, m in bounds if m > 0]
    if size > len(pool):
        raise NoConsistentDealError(f"a hand of {size} cannot be drawn from {len(pool)} unseen cards")
    if not bounds:
        pick = set(rng.choice(len(pool), size=size, replace=False).tolist()) if size else set()
        return [c for i, c in enumerate(pool) if i in pick], [c for i, c in enumerate(pool) if i not in pick]
    # group pool positions by their membership pattern (one bit per bound)
    groups: dict[int, list[int]] = {}
    for i, c in enumerate(pool):
        key = sum(1 << j for j, (f, _) in enumerate(bounds) if f(c))
        groups.setdefault(key, []).append(i)
    keys = sorted(groups)
    sizes = [len(groups[k]) for k in keys]
    patterns: list[tuple[int, ...]] = []
    weights: list[int] = []
    for xs in itertools.product(*(range(min(s, size) + 1) for s in sizes)):
        if sum(xs) != size:
            continue
        if all(sum(x for k, x in zip(keys, xs, strict=True) if k >> j & 1) >= m for j, (_, m) in enumerate(bounds)):
            w = 1
            for s, x in zip(sizes, xs, strict=True):
                w *= comb(s, x)
            patterns.append(xs)
            weights.append(w)
    if not patterns:
        raise NoConsistentDealError(
            f"no hand of {size} from the {len(pool)} unseen cards meets what the other players' moves revealed"
        )
    total = sum(weights)
    u = int(rng.integers(total)) if total < 2**62 else int(rng.random() * total)
    chosen_at = len(patterns) - 1
    for i, w in enumerate(weights):
        if u < w:
            chosen_at = i
            break
        u -= w
    xs = patterns[chosen_at]
    chosen: set[int] = set()
    for k, x in zip(keys, xs, strict=True):
        if x:
            chosen.update(rng.choice(groups[k], size=x, replace=False).tolist())
    return [c for i, c in enumerate(pool) if i in chosen], [c for i, c in enumerate(pool) if i not in chosen]


def shuffled(cards: Sequence[int], rng: np.random.Generator) -> list[int]:
    """``cards`` in a uniformly random order (``cards`` is read in its given, canonical order)."""
    return [cards[i] for i in rng.permutation(len(cards)).tolist()]
