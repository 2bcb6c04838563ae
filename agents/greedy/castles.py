"""``greedy`` for castles: shed the lowest rank that keeps the opponent under pressure, keep jokers, save the strongest.

Set-up: save the strongest cards (jokers, then the highest ranks). On a turn: play every copy of the legal rank
with the best ``-strength + PRESSURE * P(opponent stuck)`` (the first on equal scores), the probability from a
hypergeometric draw of the opponent's hand out of their cards not yet seen; a joker only when nothing else is
legal. Stuck: turn over the strongest save (a joker first); short deck: discard the lowest cards. Only the
observation and mask are read, through the layout and ``jericho_env.games.castles.actions``. How strong it
plays: ``docs/agents.md``.

Written once, as ``choose`` over one observation row on tables built once (``params_for``), compiled by Numba
where it is installed and plain Python otherwise, for ``GreedyAgent``, ``BatchGreedyCastles`` and search's
rollouts (``row_functions``); tested against the readable version in ``tests/greedy_oracles.py``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

import jericho_env
from agents.base import BaseAgent
from jericho_env.core.kernels import NUMBA, njit

PRESSURE = 5.0  # weight of P(opponent stuck) against one step of rank strength
SETUP_DRAW = 8  # opp_counts' hand size is scaled by the 8 cards drawn at set-up
_PLAY, _JOKER, _SAVE, _PLAY_SAVE, _DISCARD = range(5)  # a choice by rank from _SAVE on
_KINDS = {"play": _PLAY, "joker": _JOKER, "save": _SAVE, "play_save": _PLAY_SAVE, "discard": _DISCARD}


class GreedyAgent(BaseAgent):
    """Castles heuristic: lowest rank (all copies) nudged by the opponent's chance to be stuck; jokers last."""

    name = "greedy"

    def __init__(self, game_id: str, seed: int | None = None, **game_options: Any) -> None:
        super().__init__(game_id, seed, **game_options)
        rules: Any = jericho_env.make_rules("castles", **game_options)
        self.observation_size = rules.layout.size
        self.actions = rules.actions
        self.params = params_for(rules)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """The heuristic's choice among the legal actions of ``observation``."""
        self.legal(observation)  # checks the observation and that a move is legal
        obs = np.ascontiguousarray(observation["observation"], dtype=np.float32)
        return int(choose(obs, np.asarray(observation["action_mask"], dtype=np.bool_), self.params))


_PARAMS: dict[Any, np.ndarray] = {}
# every option set's params share one record type (arrays padded, ``actions`` and ``codes`` their lengths), so
# the compiled choice serves every deck from one compile
ACTIONS, CODES = 128, 16
PARAMS_DTYPE = np.dtype([("kind", np.int64, (ACTIONS,)), ("rank", np.int64, (ACTIONS,)),
                         ("n_cards", np.int64, (ACTIONS,)),
                         ("strength", np.int64, (CODES + 1,)), ("composition", np.int64, (CODES + 1,)),
                         ("beaten_by", np.int64, (CODES, CODES + 1)), ("beaten_n", np.int64, (CODES,)),
                         ("actions", np.int64), ("codes", np.int64), ("opp_out", np.int64), ("opp_hand", np.int64),
                         ("copies", np.int64)], align=True)  # fmt: skip


def params_for(rules: Any) -> np.ndarray:
    """The one-element params record of ``rules``' deck and actions (built once per option set)."""
    key = tuple(sorted(rules.options.items()))
    if key in _PARAMS:
        return _PARAMS[key]
    deck, acts, sl = rules.deck, rules.actions, rules.layout.slices
    moves = [acts.decode(a) for a in range(acts.num_actions)]
    answers = [(*deck.allowed[r], deck.joker) for r in range(deck.ranks)]  # what beats rank r
    a, codes = len(moves), deck.ranks
    if a > ACTIONS or codes > CODES:
        raise ValueError(f"castles greedy: {a} actions and {codes} rank codes; params hold {ACTIONS} and {CODES}")
    params = np.zeros(1, dtype=PARAMS_DTYPE)
    p = params[0]
    p["actions"], p["codes"] = a, codes
    p["kind"][:a] = [_KINDS[m.kind] for m in moves]
    p["rank"][:a], p["n_cards"][:a] = [m.rank for m in moves], [m.n_cards for m in moves]
    # strength of each rank code in the play order; the joker counts as the strongest card
    p["strength"][: codes + 1] = [deck.strength(r) for r in range(codes)] + [codes]
    p["composition"][: codes + 1] = deck.composition()
    for r, x in enumerate(answers):
        p["beaten_by"][r, : len(x)] = x
        p["beaten_n"][r] = len(x)
    p["opp_out"], p["opp_hand"], p["copies"] = sl["opp_out"].start, sl["opp_counts"].start + 1, acts.copies
    _PARAMS[key] = params
    return params


@njit(cache=True)
def _all_miss(misses: int, total: int, drawn: int) -> float:
    """Probability that ``drawn`` cards taken from ``total`` (``misses`` of them useless) are all useless."""
    p = 1.0
    for i in range(drawn):
        if misses - i <= 0:
            return 0.0
        p *= (misses - i) / (total - i)
    return p


@njit(cache=True)
def choose(obs: np.ndarray, mask: np.ndarray, params: np.ndarray) -> int:
    """``GreedyAgent.act``'s action for one observation row and its legal ``mask`` (bool, one per action)."""
    p = params[0]
    kind, rank, strength, composition = p["kind"], p["rank"], p["strength"], p["composition"]
    first = 0  # the first legal action: every legal action of a step is of its kind, or play and joker
    while first < mask.shape[0] and not mask[first]:
        first += 1
    if first == mask.shape[0]:
        raise ValueError("a row of the masks has no legal action")
    k = kind[first]
    if k >= _SAVE:  # save or turn a save over: the strongest; short deck's discard: the weakest
        pick = first
        for a in range(first + 1, mask.shape[0]):
            s, b = strength[rank[a]], strength[rank[pick]]
            if mask[a] and ((s < b) if k == _DISCARD else (s > b)):
                pick = a
        return pick
    codes = p["codes"] + 1  # the ranks' codes and the joker's
    most = np.zeros(codes, dtype=np.int64)  # per rank code, the most copies legal to play (0: not legal)
    joker, ranks, best = -1, 0, -1
    for a in range(first, mask.shape[0]):
        if mask[a] and kind[a] == _PLAY:
            ranks += most[rank[a]] == 0
            most[rank[a]] = max(most[rank[a]], p["n_cards"][a])
            best = rank[a] if best < 0 else best  # the lowest legal rank
        elif mask[a] and kind[a] == _JOKER:
            joker = a
    if ranks == 0:  # the joker only if no rank is legal
        return joker
    if ranks > 1:  # the rank of best -strength + PRESSURE * P(opponent stuck), the first on equal scores
        unseen = np.empty(codes, dtype=np.int64)
        for c in range(codes):
            unseen[c] = composition[c] - int(np.rint(np.float64(obs[p["opp_out"] + c]) * composition[c]))
        total = unseen.sum()
        hand = int(np.rint(np.float64(obs[p["opp_hand"]]) * SETUP_DRAW))
        best_score = -1e9
        for r in range(codes):  # ascending rank codes
            if most[r] == 0:
                continue
            answering = 0
            for j in range(p["beaten_n"][r]):
                answering += unseen[p["beaten_by"][r, j]]
            score = -strength[r] + PRESSURE * _all_miss(total - answering, total, hand)
            if score > best_score:
                best, best_score = r, score
    return best * p["copies"] + most[best] - 1  # all copies of the rank


@njit(cache=True)
def _choose_rows(obs: np.ndarray, masks: np.ndarray, params: np.ndarray) -> np.ndarray:
    out = np.empty(masks.shape[0], dtype=np.int64)
    for j in range(masks.shape[0]):
        out[j] = choose(obs[j], masks[j], params)
    return out


class BatchGreedyCastles:
    """``GreedyAgent`` (castles) as a batch policy: ``(observations (B, D), masks (B, A)) -> actions (B,)``."""

    name: ClassVar[str] = "greedy"
    uses_observation: ClassVar[bool] = True

    def __init__(self, game_id: str = "castles", **game_options: Any) -> None:
        self.params = params_for(jericho_env.make_rules(game_id, **game_options))
        self.copies = int(self.params[0]["copies"])

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs = np.ascontiguousarray(observations, dtype=np.float32)
        return _choose_rows(obs, np.ascontiguousarray(masks, dtype=np.bool_), self.params)  # type: ignore[no-any-return]


def batch_twin(agent: GreedyAgent, **options: Any) -> BatchGreedyCastles | None:
    """The compiled batch policy equal to ``agent`` row by row (None without Numba: the agent alone is as fast)."""
    return BatchGreedyCastles("castles", **options) if NUMBA else None


# ----------------------------------------------------------------------------------------------- search
def _rollout_row(obs: Any, legal: Any, n: int, params: Any, stream: Any, k: int, weights: Any) -> int:
    """Search's rollout move: ``GreedyAgent.act`` on ``legal[:n]`` (any order)."""
    mask = np.zeros(params[0]["actions"], dtype=np.bool_)
    for j in range(n):
        mask[legal[j]] = True
    return choose(obs, mask, params)


def row_functions(rules: Any) -> tuple[Any, Any, np.ndarray]:
    """(prior, rollout, params) for search: castles' greedy has no scores, so no prior (None)."""
    return None, _rollout_row, params_for(rules)
