"""``greedy`` for castles: shed the lowest rank that keeps the opponent under pressure, keep jokers, save the strongest.

Heuristic. Set-up: save the strongest cards (jokers, then the highest ranks). On a turn: play every
copy of one legal rank, chosen by ``-strength + 5 * P(opponent stuck)``, where the probability that
the opponent holds nothing to answer it comes from a hypergeometric draw of their hand size out of
the cards of theirs not yet seen played or discarded (so it is mostly "the lowest rank", moving one
step up when that makes the opponent markedly likelier to be stuck); a joker only when nothing else
is legal. Stuck: turn over the strongest save (a joker first: it gives an extra turn); short deck:
discard the lowest cards. Only the observation and mask are read (the layout decodes them); the
actions are read through the game's action encoding (``jericho_env.games.castles.actions``).
How the choices were made and how strong it plays: ``docs/agents.md``.

``BatchGreedyCastles(observations (B, D), masks (B, A)) -> actions (B,)``, below the agent, is its compiled twin
over a batch (Numba): row by row the action ``GreedyAgent.act`` returns. Its kernel follows ``act`` step by step
on tables built once from the agent and the action encoding (each action's kind, rank and card count): the kind
of the first legal action picks the rule; a discard takes the first legal action of the weakest rank, a save or
a turned-over save the first of the strongest; a play takes every copy of the legal rank with the best
``-strength + PRESSURE * P(opponent stuck)``, the first such rank on equal scores, computed with the same float64
operations in the same order (counts rounded half to even, as Python's ``round``), so the choices are equal, not
merely close. Without Numba (``agents._numba``) ``agents.batch.make_batch_policy`` asks the agent row by row.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

import jericho_env
from agents._numba import KERNEL, njit
from agents.base import BaseAgent
from jericho_env.games.castles.actions import CastlesActions

PRESSURE = 5.0  # weight of P(opponent stuck) against one step of rank strength
SETUP_DRAW = 8  # opp_counts' hand size is scaled by the 8 cards drawn at set-up


class GreedyAgent(BaseAgent):
    """Castles heuristic: lowest rank (all copies) nudged by the opponent's chance to be stuck; jokers last."""

    name = "greedy"

    def __init__(self, game_id: str, seed: int | None = None, **game_options: Any) -> None:
        super().__init__(game_id, seed, **game_options)
        rules: Any = jericho_env.make_rules("castles", **game_options)
        self.observation_size = rules.layout.size
        deck = rules.deck
        self.actions: CastlesActions = rules.actions
        # strength of each rank code in the play order; the joker counts as the strongest card
        self.strength = [deck.strength(r) for r in range(deck.ranks)] + [deck.ranks]
        self.composition = deck.composition()
        self.answers = [(*deck.allowed[r], deck.joker) for r in range(deck.ranks)]  # what beats rank r
        sl = rules.layout.slices
        self.opp_out = sl["opp_out"]
        self.opp_hand = sl["opp_counts"].start + 1

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """The heuristic's choice among the legal actions of ``observation``."""
        legal = self.legal(observation).tolist()
        acts = self.actions
        kind = acts.decode(legal[0]).kind  # every legal action of a step is of one kind, or play and joker
        st = self.strength
        if kind == "discard":  # short deck: throw away the weakest card
            return min(legal, key=lambda a: st[acts.decode(a).rank])
        if kind in ("save", "play_save"):  # choose a save or turn one over: the strongest
            return max(legal, key=lambda a: st[acts.decode(a).rank])
        return self._play(observation["observation"], legal)

    def _play(self, obs: np.ndarray, legal: list[int]) -> int:
        """All copies of the best-scoring legal rank; the joker only if no rank is legal."""
        acts = self.actions
        most: dict[int, int] = {}  # rank -> most copies legal to play
        for a in legal:
            move = acts.decode(a)
            if move.kind == "play":
                most[move.rank] = max(most.get(move.rank, 0), move.n_cards)
        if not most:
            return acts.joker
        if len(most) == 1:
            ((r, k),) = most.items()
            return acts.play(r, k)
        out = obs[self.opp_out].tolist()
        unseen = [n - round(x * n) for n, x in zip(self.composition, out, strict=True)]
        total = sum(unseen)
        hand = round(float(obs[self.opp_hand]) * SETUP_DRAW)
        best, best_score = -1, -1e9
        for r in most:
            misses = total - sum(unseen[x] for x in self.answers[r])
            score = -self.strength[r] + PRESSURE * _all_miss(misses, total, hand)
            if score > best_score:
                best, best_score = r, score
        return acts.play(best, most[best])


def _all_miss(misses: int, total: int, drawn: int) -> float:
    """Probability that ``drawn`` cards taken from ``total`` (``misses`` of them useless) are all useless."""
    p = 1.0
    for i in range(drawn):
        if misses - i <= 0:
            return 0.0
        p *= (misses - i) / (total - i)
    return p


_PLAY, _JOKER, _SAVE, _PLAY_SAVE, _DISCARD = range(5)  # a choice by rank from _SAVE on
_KINDS = {"play": _PLAY, "joker": _JOKER, "save": _SAVE, "play_save": _PLAY_SAVE, "discard": _DISCARD}


# the kernel's copy of ``_all_miss``: the same Python, compiled
_all_miss_kernel = njit(cache=True)(_all_miss)


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
            score = -strength[r] + PRESSURE * _all_miss_kernel(misses, total, hand)
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


def batch_twin(agent: GreedyAgent, **options: Any) -> BatchGreedyCastles | None:
    """The compiled batch policy equal to ``agent`` row by row (None without Numba: the agent is faster)."""
    return BatchGreedyCastles("castles", **options) if KERNEL else None
