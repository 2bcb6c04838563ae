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
"""

from __future__ import annotations

from typing import Any

import numpy as np

import jericho_env
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
