"""``greedy`` for walls: the move that most raises the cards this seat would hold if a scoring came now.

Every legal move is simulated on the observed table (trumpets, fallen cards, collapsing walls) and scored by the
cards this seat would then hold: its cards won, 1.5 per value-1 card in its walls, and per colour where its wall
is longest (shared when tied) the expected supply of that colour, plus 0.1 per draw expected before the next
scoring; a value-1 card put into the supply costs 1. Only the observation is read, through the layout and
``jericho_env.games.walls.actions``; ties go to the first legal action. How the weights were chosen:
``docs/agents.md``.

Written once, as functions over one observation row (``move_values``, ``first_best``) on a params record
(``params_for``), compiled by Numba where it is installed and plain Python otherwise, for ``GreedyAgent``,
``BatchGreedyWalls`` and search (``row_functions``); tested bit for bit against ``tests/greedy_oracles.py``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

import jericho_env
from agents.base import BaseAgent
from jericho_env.core.kernels import NUMBA, njit
from jericho_env.games.walls.actions import NUM_ACTIONS, SUPPLY_BASE, TRUMPET_BASE
from jericho_env.games.walls.cards import COPIES, COPIES_PER_VALUE, NUM_TRUMPETS, TRUMPET, TRUMPET_VALUE, VALUES
from jericho_env.games.walls.observation import MAX_HAND, MAX_WALL_LENGTH, WINDOW_SCALE

NUM_CARDS = 110
CARDS_PER_COLOUR = sum(COPIES_PER_VALUE)  # 17
TIE = 1e-9  # ``act`` keeps the first legal action whose score beats the running best by more than this
OPEN_WALL, OPEN_SUPPLY = 0, 1  # the observation's phase one-hot, in Phase order
# the layout fields the scoring reads, in the order of the params' ``offsets``
FIELDS = ("hand", "own_opening", "own_supply", "supply_face_down", "walls", "won", "supply_public",
          "scoring_window", "phase")  # fmt: skip


# every option set's params share one record type (``unscale`` padded, ``size`` its length), so the compiled
# scoring serves every player count and observation version from one compile
OBS_CAPACITY = 512
PARAMS_DTYPE = np.dtype([("unscale", np.float64, (OBS_CAPACITY,)), ("size", np.int64),
                         ("offsets", np.int64, (len(FIELDS),)), ("n", np.int64), ("weights", np.float64, (3,)),
                         ("supply_cost", np.float64, (5,)), ("values", np.int64, (5,))], align=True)  # fmt: skip


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
        self.n = int(rules.options["num_players"])
        self.sl = dict(rules.layout.slices)
        self._params = params_for(rules).copy()

    @property
    def params(self) -> np.ndarray:
        """The params record with this agent's weights (read at every call: a subclass or a test may change them)."""
        p = self._params[0]
        p["weights"] = (self.rival_weight, self.future_rate, self.one_weight)
        p["supply_cost"] = self.supply_cost
        return self._params

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """The heuristic's choice among the legal actions of ``observation``."""
        legal = self.legal(observation)
        if len(legal) == 1:
            return int(legal[0])
        return int(first_best(_row(observation), legal.astype(np.int64), self.params))

    def action_values(self, observation: dict[str, np.ndarray], legal: Any) -> list[tuple[int, float]]:
        """(action, score) of every action in ``legal``, in its order; ``act`` plays the first best one.

        In play the score is the cards this seat would hold if a scoring came after the move (the module's
        heuristic). For the first wall card it is minus the move's rank in greedy's order (colour with the
        most value in hand first, then the lowest card), so the order, not the size of the gaps, counts there.
        """
        legal = np.asarray(legal, dtype=np.int64)
        out = np.empty(len(legal))
        move_values(_row(observation), legal, self.params, out)
        return list(zip(legal.tolist(), out.tolist(), strict=True))

    def scores(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        """Per action, ``exp(score - best score)`` in (0, 1] for the legal actions, else 0 (1: the best moves).

        A move that leaves this seat one expected card worse off than the best gets 0.37, two cards 0.14.
        The hint of ``--prior greedy-scores`` (``agents.prior``).
        """
        out = np.zeros(len(observation["action_mask"]), dtype=np.float32)
        scores_into(_row(observation), self.legal(observation).astype(np.int64), self.params, out)
        return out


def _row(observation: dict[str, np.ndarray]) -> np.ndarray:
    return np.ascontiguousarray(observation["observation"], dtype=np.float32)


_PARAMS: dict[Any, np.ndarray] = {}


def params_for(rules: Any) -> np.ndarray:
    """The one-element params record of ``rules``' layout (built once per option set), with greedy's weights."""
    key = tuple(sorted(rules.options.items()))
    if key in _PARAMS:
        return _PARAMS[key]
    n, layout = int(rules.options["num_players"]), rules.layout
    # the divisor of every entry, so that obs * unscale gives back the raw counts
    per_type = [float(c) for c in COPIES[:26]]
    wall = ([float(c) for c in COPIES[:5]] + [float(NUM_TRUMPETS), float(MAX_WALL_LENGTH)]) * 5
    parts = {
        "hand": per_type, "own_opening": [1.0] * 26, "own_supply": per_type, "hand_sizes": [float(MAX_HAND)] * n,
        "opening_laid": [1.0] * n, "supply_face_down": [float(NUM_CARDS)] * n, "walls": wall * n,
        "won": per_type[:25] * n, "supply_public": per_type[:25], "supply_size": [float(NUM_CARDS)],
        "deck_size": [float(NUM_CARDS)], "scoring_window": [float(WINDOW_SCALE)] * 2,
    }  # fmt: skip
    if layout.size > OBS_CAPACITY:
        raise ValueError(f"walls greedy: an observation of {layout.size} entries; params hold {OBS_CAPACITY}")
    params = np.zeros(1, dtype=PARAMS_DTYPE)
    p = params[0]
    p["size"] = layout.size
    for f in layout.fields:  # version 1's fields (what the seat infers) and the one-hots: not scaled
        p["unscale"][layout.slices[f.name]] = parts.get(f.name, 1.0)
    p["offsets"] = [layout.slices[f].start for f in FIELDS]
    p["n"], p["values"] = n, VALUES
    p["weights"] = (GreedyAgent.rival_weight, GreedyAgent.future_rate, GreedyAgent.one_weight)
    p["supply_cost"] = GreedyAgent.supply_cost
    _PARAMS[key] = params
    return params


# ----------------------------------------------------------------------------------------------- scoring
@njit(cache=True)
def _colour_value(counts: np.ndarray, supply: float, one_weight: float, out: np.ndarray) -> None:
    """Each seat's cards from one colour (``counts`` (seat, 7)) if it scored now: the longest wall(s) share the
    supply, plus the 1s in walls."""
    n = counts.shape[0]
    top = counts[0, 6]
    for k in range(1, n):
        top = max(top, counts[k, 6])
    tied = 0
    for k in range(n):
        tied += counts[k, 6] == top
    share = supply / tied
    for k in range(n):
        out[k] = (share if top > 0 and counts[k, 6] == top else 0.0) + one_weight * counts[k, 0]


@njit(cache=True)
def _trumpet(counts: np.ndarray) -> int:
    """One colour's walls (seat, 7) after our trumpet naming it, in place; the cards fallen into the supply."""
    fallen = 0
    for vi in range(4, -1, -1):  # the highest value on the table falls from every wall
        if counts[:, vi].any():
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
    if counts[0, 6]:  # the trumpet joins our wall if it still stands
        counts[0, 5] += 1
        counts[0, 6] += TRUMPET_VALUE
    return fallen


@njit(cache=True)
def move_values(obs: np.ndarray, legal: np.ndarray, params: np.ndarray, out: np.ndarray) -> None:
    """``GreedyAgent.action_values``' score of each action of ``legal`` (any order) into ``out``."""
    p = params[0]
    hand_at, opening_at, own_at, hidden_at, walls_at, won_at, public_at, window_at, phase_at = p["offsets"]
    n, unscale, cost = p["n"], p["unscale"], p["supply_cost"]
    rival, future_rate, one_weight = p["weights"][0], p["weights"][1], p["weights"][2]
    raw = np.empty(p["size"], dtype=np.int64)  # the observation as raw counts
    for d in range(raw.shape[0]):
        raw[d] = int(np.rint(np.float64(obs[d]) * unscale[d]))
    phase = np.argmax(raw[phase_at : phase_at + 4])
    hand = raw[hand_at : hand_at + 26]
    if phase == OPEN_WALL:  # the lowest card of the colour with the most value in hand (high cards are kept)
        keys = np.full(legal.shape[0], -1.0)  # the trumpet (25), from a hand of seven trumpets: last
        for j in range(legal.shape[0]):
            a = legal[j]
            if a < TRUMPET_BASE:  # the colour's value in hand first, then the lowest card
                colour = 0
                for v in range(5):
                    colour += hand[a // 5 * 5 + v] * VALUES[v]
                keys[j] = colour * 8 + 4 - a % 5
        for j in range(legal.shape[0]):  # minus the rank of the key among the distinct keys
            higher = 0
            for i in range(legal.shape[0]):
                higher += keys[i] > keys[j] and not (keys[:i] == keys[i]).any()
            out[j] = -float(higher)
        return
    walls = raw[walls_at : walls_at + n * 35].reshape(n, 5, 7).copy()  # value counts, trumpets, length
    if phase == OPEN_SUPPLY:  # our own face-down first wall card counts as built
        op = raw[opening_at : opening_at + 25]
        if op.any():
            c, v = divmod(np.argmax(op), 5)
            walls[0, c, v] += 1
            walls[0, c, 6] += VALUES[v]
    # the supply of each colour this seat expects at the next scoring: the cards it knows of, the others'
    # face-down cards in proportion to the unseen cards of each colour, and the draws before the scoring
    known, unseen = np.zeros(5, dtype=np.int64), np.zeros(5, dtype=np.int64)
    won = np.zeros(n, dtype=np.int64)
    trumpets_seen = hand[TRUMPET] + raw[own_at + TRUMPET]
    for c in range(5):
        seen = 0
        for t in range(c * 5, c * 5 + 5):
            known[c] += raw[public_at + t] + raw[own_at + t]
            seen += hand[t]
            for k in range(n):
                seen += walls[k, c, t - c * 5] + raw[won_at + k * 25 + t]
                won[k] += raw[won_at + k * 25 + t]
        unseen[c] = CARDS_PER_COLOUR - known[c] - seen
        for k in range(n):
            trumpets_seen += walls[k, c, 5]
    pool = unseen.sum() + max(0, NUM_TRUMPETS - trumpets_seen)
    hidden_others = raw[hidden_at + 1 : hidden_at + n].sum()
    ratio = hidden_others / pool if pool else 0.0
    future = future_rate * (raw[window_at] + 0.5 * raw[window_at + 1])
    supply = np.empty(5)
    contrib = np.empty((5, n))  # [colour][seat]: each seat's cards from the colour now
    sums = np.zeros(n)
    counts, new, tot = np.empty((n, 7), dtype=np.int64), np.empty(n), np.empty(n)
    for c in range(5):
        supply[c] = known[c] + ratio * unseen[c] + future
        counts[:] = walls[:, c]
        _colour_value(counts, supply[c], one_weight, contrib[c])
        sums += contrib[c]  # in colour order, as Python's sum
    totals = won + sums
    for j in range(legal.shape[0]):
        a = legal[j]
        extra = 0.0
        c = -1  # a trumpet into the supply changes nothing: it is discarded at the scoring
        if a < TRUMPET_BASE:  # build: our wall grows
            c, v = divmod(a, 5)
            counts[:] = walls[:, c]
            counts[0, v] += 1
            counts[0, 6] += VALUES[v]
            _colour_value(counts, supply[c], one_weight, new)
        elif a < SUPPLY_BASE:  # trumpet naming colour c
            c = a - TRUMPET_BASE
            counts[:] = walls[:, c]
            fallen = _trumpet(counts)
            _colour_value(counts, supply[c] + fallen, one_weight, new)
        elif a - SUPPLY_BASE != TRUMPET:  # a wall card into the supply
            c, v = divmod(a - SUPPLY_BASE, 5)
            counts[:] = walls[:, c]
            _colour_value(counts, supply[c] + 1, one_weight, new)
            extra = -cost[v]
        for k in range(n):
            tot[k] = totals[k] if c < 0 else totals[k] - contrib[c, k] + new[k]
        out[j] = tot[0] - rival * tot[1:].max() + extra


@njit(cache=True)
def first_best(obs: np.ndarray, legal: np.ndarray, params: np.ndarray) -> int:
    """``act``: the first action of ``legal`` (ascending) whose score beats the running best by more than ``TIE``."""
    v = np.empty(legal.shape[0])
    move_values(obs, legal, params, v)
    best, best_score = legal[0], -1e18
    for j in range(legal.shape[0]):
        if v[j] > best_score + TIE:
            best, best_score = legal[j], v[j]
    return best


@njit(cache=True)
def scores_into(obs: np.ndarray, legal: np.ndarray, params: np.ndarray, out: np.ndarray) -> None:
    """``GreedyAgent.scores`` at ``legal`` (any order) into ``out`` (one float32 per action, zeros elsewhere)."""
    if legal.shape[0] == 1:
        out[legal[0]] = 1.0
        return
    v = np.empty(legal.shape[0])
    move_values(obs, legal, params, v)
    best = v.max()
    for j in range(legal.shape[0]):
        out[legal[j]] = np.exp(v[j] - best)


# ----------------------------------------------------------------------------------------------- batches
@njit(cache=True)
def _choose_rows(obs: np.ndarray, masks: np.ndarray, params: np.ndarray) -> np.ndarray:
    out = np.empty(masks.shape[0], dtype=np.int64)
    for j in range(masks.shape[0]):
        legal = np.flatnonzero(masks[j])
        out[j] = legal[0] if legal.shape[0] == 1 else first_best(obs[j], legal, params)
    return out


@njit(cache=True)
def _scores_rows(obs: np.ndarray, masks: np.ndarray, params: np.ndarray) -> np.ndarray:
    out = np.zeros(masks.shape, dtype=np.float32)
    for j in range(masks.shape[0]):
        scores_into(obs[j], np.flatnonzero(masks[j]), params, out[j])
    return out


class BatchGreedyWalls:
    """``GreedyAgent`` (walls) as a batch policy: ``(observations (B, D), masks (B, A)) -> actions (B,)``."""

    name: ClassVar[str] = "greedy"
    uses_observation: ClassVar[bool] = True

    def __init__(self, game_id: str = "walls", **game_options: Any) -> None:
        self.agent = GreedyAgent(game_id, **game_options)
        self.n, self.observation_size = self.agent.n, self.agent.observation_size

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_players={self.n})"

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``GreedyAgent.act``'s action for every row, as int64 (B,)."""
        return _choose_rows(*self._checked(observations, masks), self.agent.params)  # type: ignore[no-any-return]

    def scores(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``GreedyAgent.scores`` for every row: ``exp(score - best)`` on legal actions, 0 elsewhere, float32 (B, A)."""
        return _scores_rows(*self._checked(observations, masks), self.agent.params)  # type: ignore[no-any-return]

    def _checked(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows as float32 and the masks as bool, C-contiguous; ``ValueError`` saying what is wrong."""
        obs, legal = np.asarray(observations), np.asarray(masks).astype(bool, copy=False)
        if obs.ndim != 2 or obs.shape[1] != self.observation_size:
            raise ValueError(
                f"observations must be a (batch, {self.observation_size}) array for {self.n}-player walls, "
                f"got shape {obs.shape}"
            )
        if legal.shape != (obs.shape[0], NUM_ACTIONS):
            raise ValueError(
                f"masks must be a (batch, {NUM_ACTIONS}) array matching the {obs.shape[0]} observations, "
                f"got shape {legal.shape}"
            )
        playable = legal.any(axis=1)
        if not playable.all():
            raise ValueError(
                f"{self.name}: rows {np.flatnonzero(~playable)[:10].tolist()} of the action masks have no legal "
                "action (every row must be a seat to move)"
            )
        return np.ascontiguousarray(obs, dtype=np.float32), np.ascontiguousarray(legal)


def batch_twin(agent: GreedyAgent, **options: Any) -> BatchGreedyWalls | None:
    """The compiled batch policy equal to ``agent`` row by row (None without Numba: the agent alone is as fast)."""
    return BatchGreedyWalls("walls", **options) if NUMBA else None


# ----------------------------------------------------------------------------------------------- search
def _prior_row(obs: Any, legal: Any, n: int, params: Any, stream: Any, k: int, weights: Any) -> int:
    """Search's prior: ``GreedyAgent.scores`` at ``legal[:n]`` (any order) into ``weights[:n]``."""
    row = np.zeros(NUM_ACTIONS, dtype=np.float32)
    scores_into(obs, legal[:n].copy(), params, row)
    for j in range(n):
        weights[j] = row[legal[j]]
    return legal[0]


def _rollout_row(obs: Any, legal: Any, n: int, params: Any, stream: Any, k: int, weights: Any) -> int:
    """Search's rollout move: ``GreedyAgent.act`` on ``legal[:n]`` (any order)."""
    return legal[0] if n == 1 else first_best(obs, np.sort(legal[:n]), params)


def row_functions(rules: Any) -> tuple[Any, Any, np.ndarray]:
    """(prior, rollout, params) for search (``agents.search.compiled.greedy_row_policy`` compiles them)."""
    return _prior_row, _rollout_row, params_for(rules)
