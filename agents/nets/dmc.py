"""Deep Monte-Carlo's action-value network: Q(s, a) for every action of the game in one forward pass.

``QNetwork``: an MLP trunk ``h(s)`` over the observation and one output per action id,
``Q(s, a) = h(s) . (E[a] + F[a] P) + b[a]``: ``E[a]`` the action's own embedding, ``F[a]`` its fixed features
(``action_features``) and ``P`` a learned projection, so what is learned about "play a 7" carries to "play two
7s". With the prior ``greedy-scores`` the trunk also reads greedy's score of every action and ``w * score[a]``
(``w`` learned from 1) is added to Q: the untrained network plays greedy's best move. ``QPlan`` is the network as
numpy arrays, the actors' snapshot. Why this shape, and grid's: docs/dmc.md, "How it works".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

ACTION_FEATURE_KINDS = ("none", "game")  # "game": the game's table (action_features), "none": ids alone
# the games whose network (kind "pairs": agents.nets.dmc_grid) scores (state, action) pairs; the rest: kind "ids"
PAIR_GAMES = ("grid",)
PRIOR_KINDS = ("none", "greedy-scores")  # greedy-scores: greedy's score of every action, an input and a residual
PRIOR_WEIGHT = 1.0  # the residual's weight at the start


def action_features(game_id: str, options: Mapping[str, Any]) -> np.ndarray:
    """The fixed features of every action id of ``game_id`` (A, d) float32, decoded from its action encoding
    (castles: kind, rank, cards; walls: kind, card, colour; grid: stop, hand slot, the cell's place from the base;
    other games: none)."""
    from jericho_env.registry import make_rules

    rules = make_rules(game_id, **dict(options))
    n = rules.info.num_actions
    decode = rules.actions.decode  # type: ignore[attr-defined]
    if game_id == "castles":
        kinds: tuple[str, ...] = ("play", "joker", "save", "play_save", "discard")
        ranks, copies = rules.actions.ranks, rules.actions.copies  # type: ignore[attr-defined]
        table = np.zeros((n, len(kinds) + ranks + 2), np.float32)
        for a in range(n):
            move = decode(a)
            table[a, kinds.index(move.kind)] = 1
            table[a, len(kinds) + move.rank] = 1
            table[a, -1] = move.n_cards / copies
        return table
    if game_id == "walls":
        kinds = ("build", "trumpet", "supply")
        table = np.zeros((n, 3 + 26 + 6), np.float32)
        for a in range(n):
            move = decode(a)
            table[a, kinds.index(move.kind)] = 1
            table[a, 3 + move.card] = 1
            table[a, 3 + 26 + (move.colour if move.colour >= 0 else 5)] = 1
        return table
    if game_id == "grid":
        side = rules.actions.board_size  # type: ignore[attr-defined]
        half = max((side - 1) / 2, 1.0)
        table = np.zeros((n, 1 + 5 + 3), np.float32)
        for a in range(n):
            move = decode(a)
            if move.kind == "stop":
                table[a, 0] = 1
                continue
            row, col = divmod(move.cell, side)  # x from the base's column, y from its row (upwards)
            x, y = col - (side - 1) // 2, (side - 1) // 2 - row
            table[a, 1 + move.slot] = 1
            table[a, 6:9] = (x / half, y / half, (abs(x) + abs(y)) / (2 * half))
        return table
    return np.zeros((n, 0), np.float32)


@dataclasses.dataclass(frozen=True)
class QSpec:
    """The network's shape: observation size, hidden layer sizes, action count, action-feature kind."""

    observation_size: int
    hidden: tuple[int, ...]
    num_actions: int
    features: str = "game"  # a key of ACTION_FEATURE_KINDS
    kind: str = "ids"  # "ids" (QNetwork) or "pairs" (agents.nets.dmc_grid.GridQNetwork)
    prior: str = "none"  # a key of PRIOR_KINDS

    def to_json(self) -> dict[str, Any]:
        """The spec as JSON (the checkpoint's ``network``)."""
        return {**dataclasses.asdict(self), "hidden": list(self.hidden)}


class QNetwork(nn.Module):
    """Q(s, ·) for every action id (module docstring); ``forward(obs) -> (B, A)``."""

    scores_every_action = True  # one pass gives every action's Q (a teacher's row of every action can be learned)

    def __init__(self, spec: QSpec, feature_table: np.ndarray, scorer: Any = None) -> None:
        super().__init__()
        if (spec.prior != "none") != (scorer is not None):
            raise ValueError(f"a network with prior {spec.prior!r} needs its scorer (and only then)")
        self.spec = spec
        self.scorer = scorer
        self.trunk, size = mlp(spec.observation_size + (spec.num_actions if scorer is not None else 0), spec.hidden)
        self.head = nn.Linear(size, spec.num_actions)
        table = feature_table if spec.features == "game" else np.zeros((spec.num_actions, 0), np.float32)
        if table.shape[0] != spec.num_actions:
            raise ValueError(f"action feature table has {table.shape[0]} rows, the game {spec.num_actions} actions")
        self.register_buffer("action_table", torch.as_tensor(np.ascontiguousarray(table), dtype=torch.float32))
        self.project = nn.Linear(table.shape[1], size, bias=False) if table.shape[1] else None
        if self.project is not None:
            nn.init.normal_(self.project.weight, std=0.01)
        nn.init.normal_(self.head.weight, std=0.01)
        nn.init.zeros_(self.head.bias)
        self.prior_weight = nn.Parameter(torch.tensor(PRIOR_WEIGHT)) if scorer is not None else None

    def action_embeddings(self) -> torch.Tensor:
        """Each action's embedding ``E[a] + F[a] P`` (A, hidden)."""
        weight = self.head.weight
        if self.project is not None:
            weight = weight + self.project(self.action_table)
        return weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Q of every action (B, A) for stored rows (B, stored_width): observations, then any prior's scores."""
        q = self.trunk(x) @ self.action_embeddings().T + self.head.bias
        if self.prior_weight is not None:
            q = q + self.prior_weight * x[:, self.spec.observation_size :]
        return q

    @property
    def stored_width(self) -> int:
        """Numbers stored per position for learning: the observation, then any prior's score of every action."""
        return self.spec.observation_size + (self.spec.num_actions if self.scorer is not None else 0)

    def q_stored(self, x: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """Q(s, a) of stored positions and the actions taken (B,): the trunk once, then those actions' embeddings."""
        h = self.trunk(x)
        emb = self.head.weight[actions]
        if self.project is not None:
            table: torch.Tensor = self.action_table  # type: ignore[assignment]
            emb = emb + self.project(table[actions])
        q = (h * emb).sum(dim=1) + self.head.bias[actions]
        if self.prior_weight is not None:
            q = q + self.prior_weight * x[:, self.spec.observation_size :].gather(1, actions[:, None]).squeeze(1)
        return q

    def plan(self) -> QPlan:
        """The network as numpy arrays (a snapshot for the actors)."""
        with torch.no_grad():
            layers = [(m.weight.numpy().T.copy(), m.bias.numpy().copy()) for m in self.trunk if type(m) is nn.Linear]
            out = (self.action_embeddings().numpy().T.copy(), self.head.bias.detach().numpy().copy())
            weight = 0.0 if self.prior_weight is None else float(self.prior_weight.detach())
        return QPlan(tuple(layers), out, self.scorer, weight)


class QPlan:
    """A ``QNetwork`` as numpy arrays; with a prior, ``best`` keeps the rows it built (the scores) for ``stored``
    right after it on the same observations."""

    def __init__(self, layers: tuple[tuple[np.ndarray, np.ndarray], ...], head: tuple[np.ndarray, np.ndarray],
                 scorer: Any = None, prior_weight: float = 0.0) -> None:  # fmt: skip
        self.layers, self.head, self.scorer, self.prior_weight = layers, head, scorer, prior_weight
        self._last: tuple[np.ndarray, np.ndarray] | None = None

    def rows(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The network's input rows: the observations, then any prior's scores of every action."""
        x = np.ascontiguousarray(obs, dtype=np.float32)
        if self.scorer is None:
            return x
        return np.concatenate([x, self.scorer(x, np.asarray(masks, dtype=bool))], axis=1)

    def q_values(self, x: np.ndarray) -> np.ndarray:
        """Q of every action (B, A) float32 of input rows (``rows``; the observations where there is no prior)."""
        x = np.ascontiguousarray(x, dtype=np.float32)
        h = x
        for weight, bias in self.layers:
            h = h @ weight
            h += bias
            np.maximum(h, 0, out=h)
        out: np.ndarray = h @ self.head[0] + self.head[1]
        if self.scorer is not None:
            out += self.prior_weight * x[:, x.shape[1] - out.shape[1] :]
        return out

    def best(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The legal action of highest Q per row (B,) int64."""
        return self.best_values(obs, masks)[0]

    def q_all(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Q of every action (B, A) float32 of observations (a teacher's values, ``experiments.dmc --teacher``)."""
        return self.q_values(self.rows(obs, masks))

    def best_values(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The legal action of highest Q per row (B,) int64 and that Q (B,) float32: the position's value."""
        x = self.rows(obs, masks)
        self._last = (obs, x)
        q = self.q_values(x)
        actions = best_actions(q, masks)
        return actions, q[np.arange(len(actions)), actions]

    def stored(self, obs: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """What to store for the positions ``obs[rows]`` where ``actions`` were taken (after ``best(obs, ...)``)."""
        if self.scorer is None:
            return np.asarray(obs)[rows]
        if self._last is None or self._last[0] is not obs:
            raise RuntimeError("QPlan.stored needs best() on the same observations first (the prior's scores)")
        return self._last[1][rows]


class MeanQPlan:
    """Several networks' plans (one game, one kind) as one: the legal action of highest mean Q (an ensemble plays,
    it is not trained: no ``stored``). Per-action-id plans share the prior's scores, computed once for all."""

    def __init__(self, plans: Sequence[Any]) -> None:
        if not plans or len({type(p) for p in plans}) > 1:
            raise ValueError("MeanQPlan needs plans of one kind (one game's networks)")
        self.plans = list(plans)

    def best(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The legal action of highest mean Q per row (B,) int64."""
        return self.best_values(obs, masks)[0]

    def best_values(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The legal action of highest mean Q per row (B,) int64 and that mean Q (B,) float32."""
        q = self.q_all(obs, masks)
        actions = best_actions(q, masks)
        return actions, q[np.arange(len(actions)), actions]

    def q_all(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The mean Q of every action (B, A) float32 (pair networks: of the legal ones, -inf elsewhere)."""
        masks = np.asarray(masks, dtype=bool)
        rows: dict[bool, np.ndarray] = {}  # the input rows, with or without the prior's scores: each built once
        values = []
        for p in self.plans:
            if not isinstance(p, QPlan):
                values.append(p.q_all(obs, masks))
                continue
            if (key := p.scorer is None) not in rows:
                rows[key] = p.rows(obs, masks)
            values.append(p.q_values(rows[key]))
        return np.asarray(np.mean(values, axis=0), dtype=np.float32)


def best_pairs(rows: np.ndarray, acts: np.ndarray, q: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each of ``n`` rows' action of highest Q among its (row, action, Q) pairs (B,) int64, and that Q (B,) float32
    (ties: the pair listed first, the lowest id)."""
    order = np.lexsort((-q, rows))  # by row, best first
    first = np.ones(len(order), bool)
    first[1:] = rows[order][1:] != rows[order][:-1]
    top = order[first]  # each row's best pair
    out = np.zeros(n, np.int64)
    values = np.zeros(n, np.float32)
    out[rows[top]] = acts[top]
    values[rows[top]] = q[top]
    return out, values


def mlp(size: int, hidden: tuple[int, ...]) -> tuple[nn.Sequential, int]:
    """Linear layers of ``hidden`` sizes on ``size`` inputs, each followed by a ReLU; and the last size."""
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [nn.Linear(size, width), nn.ReLU()]
        size = width
    return nn.Sequential(*layers), size


def best_actions(q: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The legal action of highest Q per row (B,) int64; every row needs a legal action."""
    masked = np.where(np.asarray(masks, dtype=bool), q, -np.inf)
    return np.argmax(masked, axis=1).astype(np.int64)


def parse_hidden(text: str | Sequence[int]) -> tuple[int, ...]:
    """``"512,512"`` -> (512, 512), within ``agents.nets.MAX_WIDTH`` and ``MAX_LAYERS``; ``ValueError`` otherwise."""
    from agents.nets import parse_net

    return tuple(parse_net(text if isinstance(text, str) else ",".join(str(int(x)) for x in text)))
