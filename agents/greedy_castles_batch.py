"""``greedy`` for castles over a batch: ``GreedyAgent.act``'s choice for every row, in one compiled loop (Numba).

``BatchGreedyCastles(observations (B, D), masks (B, A)) -> actions (B,)`` returns, row by row, the action
``agents.greedy_castles.GreedyAgent.act`` returns for that observation and mask (read its docstring for the
heuristic). The kernel follows ``act`` step by step on tables built once from the agent and the action
encoding (each action's kind, rank and card count): the kind of the first legal action picks the rule; a
discard takes the first legal action of the weakest rank, a save or a turned-over save the first of the
strongest; a play takes every copy of the legal rank with the best ``-strength + PRESSURE * P(opponent
stuck)``, the first such rank on equal scores, computed with the same float64 operations in the same order
(counts rounded half to even, as Python's ``round``), so the choices are equal, not merely close. The agent
draws nothing at random, so no generator is involved.

Without Numba (``agents._numba``) ``agents.batch.make_batch_policy`` asks the agent row by row instead.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from agents._numba import KERNEL, njit
from agents.greedy_castles import PRESSURE, SETUP_DRAW, GreedyAgent

__all__ = ["KERNEL", "BatchGreedyCastles"]

_PLAY, _JOKER, _SAVE, _PLAY_SAVE, _DISCARD = range(5)  # a choice by rank from _SAVE on
_KINDS = {"play": _PLAY, "joker": _JOKER, "save": _SAVE, "play_save": _PLAY_SAVE, "discard": _DISCARD}


@njit(cache=True)
def _all_miss(misses: int, total: int, drawn: int) -> float:
    """``greedy_castles._all_miss``: the chance that ``drawn`` cards of ``total`` are all among ``misses``."""
    p = 1.0
    for i in range(drawn):
        if misses - i <= 0:
            return 0.0
        p *= (misses - i) / (total - i)
    return p


@njit(cache=True)
def _choose(  # type: ignore[no-untyped-def]
    obs, masks, kind, rank, n_cards, strength, composition, beaten_by, beaten_n, opp_out, opp_hand, copies, out
):
    codes = composition.shape[0]
    most = np.zeros(codes, dtype=np.int64)  # per rank code, the most copies legal to play (0: not legal)
    unseen = np.zeros(codes, dtype=np.int64)
    for b in range(masks.shape[0]):
        first = -1
        for a in range(masks.shape[1]):
            if masks[b, a]:
                first = a
                break
        if first < 0:
            raise ValueError("a row of the masks has no legal action")
        k = kind[first]
        if k >= _SAVE:  # save, play_save, discard: the weakest (discard) or strongest rank, the first legal one
            best, best_strength = -1, 0
            for a in range(first, masks.shape[1]):
                if not masks[b, a]:
                    continue
                s = strength[rank[a]]
                if best < 0 or (s < best_strength if k == _DISCARD else s > best_strength):
                    best, best_strength = a, s
            out[b] = best
            continue
        for r in range(codes):
            most[r] = 0
        ranks = 0
        joker = -1
        for a in range(first, masks.shape[1]):
            if not masks[b, a]:
                continue
            if kind[a] == _PLAY:
                if most[rank[a]] == 0:
                    ranks += 1
                most[rank[a]] = max(most[rank[a]], n_cards[a])
            elif kind[a] == _JOKER:
                joker = a
        if ranks == 0:
            out[b] = joker
            continue
        if ranks == 1:
            for r in range(codes):
                if most[r]:
                    out[b] = r * copies + most[r] - 1
            continue
        total = 0
        for r in range(codes):
            n = composition[r]
            unseen[r] = n - int(np.rint(np.float64(obs[b, opp_out + r]) * n))
            total += unseen[r]
        hand = int(np.rint(np.float64(obs[b, opp_hand]) * SETUP_DRAW))
        best, best_score = -1, -1e9
        for r in range(codes):  # ascending rank codes: the order act meets them in
            if most[r] == 0:
                continue
            answering = 0
            for j in range(beaten_n[r]):
                answering += unseen[beaten_by[r, j]]
            misses = total - answering
            score = -strength[r] + PRESSURE * _all_miss(misses, total, hand)
            if score > best_score:
                best, best_score = r, score
        out[b] = best * copies + most[best] - 1


class BatchGreedyCastles:
    """``GreedyAgent`` (castles) as a batch policy: ``(observations (B, D), masks (B, A)) -> actions (B,)``."""

    name: ClassVar[str] = "greedy"
    uses_observation: ClassVar[bool] = True

    def __init__(self, game_id: str = "castles", **game_options: Any) -> None:
        agent = GreedyAgent(game_id, **game_options)
        acts = agent.actions
        moves = [acts.decode(a) for a in range(acts.num_actions)]
        self.kind = np.array([_KINDS[m.kind] for m in moves], dtype=np.int64)
        self.rank = np.array([m.rank for m in moves], dtype=np.int64)
        self.n_cards = np.array([m.n_cards for m in moves], dtype=np.int64)
        self.strength = np.array(agent.strength, dtype=np.int64)
        self.composition = np.array(agent.composition, dtype=np.int64)
        width = max(len(x) for x in agent.answers)
        self.beaten_by = np.zeros((len(agent.answers), width), dtype=np.int64)  # the codes that answer rank r
        self.beaten_n = np.array([len(x) for x in agent.answers], dtype=np.int64)
        for r, codes in enumerate(agent.answers):
            self.beaten_by[r, : len(codes)] = codes
        self.opp_out = int(agent.opp_out.start)
        self.opp_hand = int(agent.opp_hand)
        self.copies = int(acts.copies)

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        out = np.empty(len(masks), dtype=np.int64)
        _choose(
            np.ascontiguousarray(observations, dtype=np.float32),
            np.ascontiguousarray(masks, dtype=np.bool_),
            self.kind,
            self.rank,
            self.n_cards,
            self.strength,
            self.composition,
            self.beaten_by,
            self.beaten_n,
            self.opp_out,
            self.opp_hand,
            self.copies,
            out,
        )
        return out
