"""Information-set PUCT: ISMCTS guided by a network's prior and value, for many positions at once.

The search of ``agents.search.engine.ISMCTS`` with AlphaZero's selection and evaluation (Silver et al. 2018;
expert iteration, Anthony, Tian and Barber 2017). A node is an information state, keyed by its player's seat
and observation, and holds its prior, visits and summed values per legal action (fixed at its creation: the
mask is part of what the player sees). Each simulation determinizes the searching seat's information state,
walks down by PUCT, ``Q(a) + c * P(a) * sqrt(N) / (1 + N(a))`` (an unvisited action's Q is the node's own
value), until a new node or the end, asks the evaluator for the new node's prior and value, and credits every
node on the path with the value of the seat that moved there.

Values: with ``value_rows="mover"`` (two-player zero-sum games) the evaluator reads the mover's observation and
the other seat gets the negated value; with ``"all"`` it reads every seat's own observation (the non-movers'
masks empty). ``search`` runs one tree per position in lockstep, so the evaluator sees one batch per round.

With ``fixed`` (a batch policy: observations and masks to actions), the search is a best response to it
(Timbers et al. 2022's search best response): ``fixed`` plays every seat but the searching one inside the
simulations, from its own observation, one batch per round, and the tree holds only the searching seat's
information states, their values from the evaluator for that seat (so any number of players). A searching
``fixed`` (``uses_views``: ``ismcts``, an exit search) is first handed each of its seats' information view,
the simulation's world redealt from that seat, as the self-play games hand it.

``agents.search.compiled.CompiledPUCT`` runs the same search (without ``fixed``) compiled; both draw each root's
determinizations from its own stream (``agents.search.engine.Redeal``) and the Dirichlet noise from the generator
after it, so a seed gives the same visits and values in each (``tests/test_search_twins.py``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.search.engine import Redeal
from jericho_env.core.kernels import row_seeds
from jericho_env.core.rules import Rules

# (observations (B, D) float32, masks (B, A) bool, movers (B,) bool) -> (priors (B, A), values (B,));
# priors are read only where movers[j] (a distribution over the row's legal actions)
Evaluator = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
VALUE_ROWS = ("mover", "all")


class _Node:
    """An information state's statistics, one entry per legal action of its player."""

    __slots__ = ("legal", "prior", "total", "value", "value_sum", "visits")

    def __init__(self, legal: list[int], prior: np.ndarray, value: float) -> None:
        self.legal = legal
        self.prior = prior  # float64, over ``legal``
        self.visits = np.zeros(len(legal), dtype=np.int64)
        self.value_sum = np.zeros(len(legal), dtype=np.float64)
        self.value = value  # the evaluator's value of the node for its player (the Q of unvisited actions)
        self.total = 0

    def select(self, c: float) -> int:
        """The index (into ``legal``) of the action with the best PUCT score; ties to the first."""
        visits = self.visits
        q = np.where(visits > 0, self.value_sum / np.maximum(visits, 1), self.value)
        u = c * self.prior * math.sqrt(max(self.total, 1)) / (1.0 + visits)
        return int(np.argmax(q + u))


@dataclass
class SearchResult:
    """A root's outcome: its legal actions, their visit counts and mean values, the root's value."""

    legal: list[int]
    visits: np.ndarray
    q: np.ndarray
    value: float
    prior: np.ndarray

    def policy(self, num_actions: int) -> np.ndarray:
        """The visit distribution over all ``num_actions`` (float32, zeros off the legal actions)."""
        out = np.zeros(num_actions, dtype=np.float32)
        total = self.visits.sum()
        if total:
            out[self.legal] = self.visits / total
        else:  # a single legal action: nothing was searched
            out[self.legal] = 1.0 / len(self.legal)
        return out

    @classmethod
    def of(
        cls, legal: Sequence[int], visits: np.ndarray, value_sum: np.ndarray, value: float, prior: np.ndarray
    ) -> SearchResult:
        """A root's result from its statistics (``value``: the Q of unvisited actions, of an unsearched root)."""
        q = np.where(visits > 0, value_sum / np.maximum(visits, 1), value)
        total = visits.sum()
        return cls([int(a) for a in legal], visits, q, float(value_sum.sum() / total) if total else float(value), prior)

    def best(self) -> int:
        """The most visited action (ties: the higher mean value, then the lower action)."""
        order = np.lexsort((-np.asarray(self.legal), self.q, self.visits))
        return int(self.legal[int(order[-1])])


def check_puct(
    rules: Rules[Any], simulations: Any, c_puct: Any, value_rows: str, dirichlet_alpha: float, dirichlet_fraction: float
) -> None:
    """``ValueError`` naming the first setting of a PUCT search (either engine's) that is not allowed."""
    if not isinstance(simulations, int) or isinstance(simulations, bool) or simulations < 1:
        raise ValueError(f"simulations must be an int >= 1, got {simulations!r}")
    if not (isinstance(c_puct, (int, float)) and math.isfinite(c_puct) and c_puct > 0):
        raise ValueError(f"c_puct must be a finite number > 0, got {c_puct!r}")
    if value_rows not in VALUE_ROWS:
        raise ValueError(f"value_rows must be one of {', '.join(VALUE_ROWS)}, got {value_rows!r}")
    if value_rows == "mover" and not (rules.info.num_players == 2 and rules.info.zero_sum):
        raise ValueError("value_rows='mover' negates the mover's value: two-player zero-sum games only")
    if not (0.0 <= dirichlet_fraction < 1.0 and dirichlet_alpha >= 0.0):
        raise ValueError("dirichlet_fraction must be in [0, 1) and dirichlet_alpha >= 0")


@dataclass
class _Sim:
    """One simulation in flight: its state, the path so far and the leaf waiting for the evaluator."""

    state: Any
    path: list[tuple[_Node, int, int]]
    leaf_key: tuple[int, bytes] | None = None
    leaf_obs: np.ndarray | None = None
    leaf_player: int = -1
    waiting: bool = False  # ``fixed`` is to move in ``state``


class PUCTSearch:
    """Information-set PUCT for a batch of positions; see the module docstring."""

    def __init__(
        self,
        rules: Rules[Any],
        evaluator: Evaluator,
        simulations: int,
        c_puct: float = 1.5,
        value_rows: str = "mover",
        rng: np.random.Generator | None = None,
        dirichlet_alpha: float = 0.0,
        dirichlet_fraction: float = 0.0,
        found: tuple[Any, Any] | None = None,
        fixed: Any = None,
    ) -> None:
        if fixed is not None and value_rows != "mover":
            raise ValueError("a search with fixed= values the searching seat only: value_rows must be 'mover'")
        # with ``fixed`` the tree holds one seat's nodes, so 'mover' needs no second, negated seat
        check_puct(rules, simulations, c_puct, "all" if fixed is not None else value_rows, dirichlet_alpha,
                   dirichlet_fraction)  # fmt: skip
        self.fixed = fixed
        self.rules = rules
        self.evaluator = evaluator
        self.simulations = simulations
        self.c_puct = float(c_puct)
        self.value_rows = value_rows
        self.rng = rng if rng is not None else np.random.default_rng()
        self.dirichlet_alpha = float(dirichlet_alpha)
        self.dirichlet_fraction = float(dirichlet_fraction)
        self._digest = rules.info.observation_size > 512
        self.evaluations = 0  # rows the evaluator was asked for (for profiling)
        self.redeal = Redeal(rules, found)  # ``found``: the (game, kernels) to redeal with, as CompiledPUCT's

    # ------------------------------------------------------------------ public
    def search(self, views: Sequence[Any], seats: Sequence[int]) -> list[SearchResult]:
        """Search each position ``views[k]`` for ``seats[k]`` (to move there); one result per position.

        ``views[k]`` may be the true state or a seat's information view: the search redraws what the
        seat cannot see in every simulation, so it learns nothing more from the true state.
        """
        rules = self.rules
        k_all = range(len(views))
        for k in k_all:
            if rules.current_player(views[k]) != seats[k]:
                raise ValueError(f"position {k}: seat {seats[k]} is not to move")
        trees: list[dict[tuple[int, bytes], _Node]] = [{} for _ in k_all]
        stream = row_seeds(self.rng, len(views))
        self.redeal.set_roots(views)
        roots = self._expand_roots(views, seats, trees)
        with np.errstate(over="ignore"):  # the stream's arithmetic wraps, as compiled, where Numba is missing
            for _ in range(self.simulations):
                sims = [self._descend(k, seats[k], roots[k], trees[k], stream) if len(roots[k].legal) > 1 else None
                        for k in k_all]  # fmt: skip
                live = [k for k in k_all if sims[k] is not None]
                if not live:
                    break
                if self.fixed is not None:
                    self._fixed_moves([sims[k] for k in live], [seats[k] for k in live], [trees[k] for k in live])  # type: ignore[misc]
                self._finish([sims[k] for k in live], [trees[k] for k in live])  # type: ignore[misc]
        return [self._result(root) for root in roots]

    # ------------------------------------------------------------------ the tree
    def _key(self, obs: np.ndarray, player: int) -> tuple[int, bytes]:
        raw = obs.tobytes()
        return (player, hashlib.blake2b(raw, digest_size=16).digest() if self._digest else raw)

    def _expand_roots(
        self, views: Sequence[Any], seats: Sequence[int], trees: list[dict[tuple[int, bytes], _Node]]
    ) -> list[_Node]:
        rules = self.rules
        sims = [_Sim(views[k], []) for k in range(len(views))]
        for sim, seat in zip(sims, seats, strict=True):
            sim.leaf_player = seat
            sim.leaf_obs = rules.observe(sim.state, seat)
            sim.leaf_key = self._key(sim.leaf_obs, seat)
        nodes = self._evaluate(sims)
        roots = []
        for k, (node, _) in enumerate(nodes):
            key = sims[k].leaf_key
            assert node is not None and key is not None
            if self.dirichlet_fraction > 0 and len(node.legal) > 1:
                noise = self.rng.dirichlet(np.full(len(node.legal), self.dirichlet_alpha))
                node.prior = (1 - self.dirichlet_fraction) * node.prior + self.dirichlet_fraction * noise
            trees[k][key] = node
            roots.append(node)
        return roots

    def _descend(self, k: int, seat: int, root: _Node, tree: dict[tuple[int, bytes], _Node], stream: Any) -> _Sim:
        """Walk a new determinization of root ``k`` down the tree until a new node, the end or ``fixed`` to move."""
        sim = _Sim(self.redeal.draw(k, seat, stream), [])
        self._walk(sim, root, seat, seat, tree)
        return sim

    def _walk(self, sim: _Sim, node: _Node, player: int, seat: int, tree: dict[tuple[int, bytes], _Node]) -> None:
        """From ``node`` (``player``'s, to move in ``sim.state``) down by PUCT until the walk stops (``_next``)."""
        rules, s, c = self.rules, sim.state, self.c_puct
        while True:
            i = node.select(c)
            sim.path.append((node, i, player))
            rules.apply_unchecked(s, node.legal[i])
            found = self._next(sim, seat, tree)
            if found is None:
                return
            node, player = found

    def _next(self, sim: _Sim, seat: int, tree: dict[tuple[int, bytes], _Node]) -> tuple[_Node, int] | None:
        """The tree's node of the player to move in ``sim.state`` and that player; None where the walk stops: the
        end, a new node (``sim``'s leaf), or a seat ``fixed`` plays (``sim.waiting``)."""
        s = sim.state
        player = self.rules.current_player(s)
        if player < 0:
            return None
        if self.fixed is not None and player != seat:
            sim.waiting = True
            return None
        obs = self.rules.observe(s, player)
        key = self._key(obs, player)
        child = tree.get(key)
        if child is None:
            sim.leaf_key, sim.leaf_obs, sim.leaf_player = key, obs, player
            return None
        return child, player

    def _fixed_moves(self, sims: list[_Sim], seats: list[int], trees: list[dict[tuple[int, bytes], _Node]]) -> None:
        """``fixed``'s moves in every waiting simulation, one batch a round, each walk going on after them."""
        rules = self.rules
        waiting = [j for j, sim in enumerate(sims) if sim.waiting]
        while waiting:
            states = [sims[j].state for j in waiting]
            players = [rules.current_player(s) for s in states]
            obs = np.stack([rules.observe(s, p) for s, p in zip(states, players, strict=True)]).astype(np.float32)
            masks = np.stack([rules.legal_mask(s).astype(bool) for s in states])
            if getattr(self.fixed, "uses_views", False):  # a searching target: its seats' views first
                redeal = rules.determinize
                self.fixed.observe_views([redeal(s, p, self.rng) for s, p in zip(states, players, strict=True)])
            actions = np.asarray(self.fixed(obs, masks), dtype=np.int64)
            for j, s, a in zip(waiting, states, actions.tolist(), strict=True):
                sims[j].waiting = False
                rules.apply_unchecked(s, a)
                found = self._next(sims[j], seats[j], trees[j])
                if found is not None:
                    self._walk(sims[j], found[0], found[1], seats[j], trees[j])
            waiting = [j for j in waiting if sims[j].waiting]

    def _finish(self, sims: list[_Sim], trees: list[dict[tuple[int, bytes], _Node]]) -> None:
        """Evaluate the simulations' leaves in one batch, add their nodes, back the values up."""
        rules = self.rules
        for sim, tree, (node, values) in zip(sims, trees, self._evaluate(sims), strict=True):
            if node is not None:
                assert sim.leaf_key is not None
                tree[sim.leaf_key] = node
            else:
                values = rules.returns(sim.state)
            for n, i, player in sim.path:
                n.visits[i] += 1
                n.value_sum[i] += values[player]
                n.total += 1

    def _evaluate(self, sims: list[_Sim]) -> list[tuple[_Node | None, list[float]]]:
        """For each simulation with a leaf: its new node and every seat's value (None, [] at the end)."""
        rules = self.rules
        n = rules.info.num_players
        rows: list[np.ndarray] = []
        masks: list[np.ndarray] = []
        movers: list[bool] = []
        owners: list[int] = []
        legal_of: dict[int, list[int]] = {}
        zero_mask = np.zeros(rules.info.num_actions, dtype=bool)
        for k, sim in enumerate(sims):
            if sim.leaf_obs is None:
                continue
            legal = rules.legal_actions(sim.state)
            legal_of[k] = legal
            mask = zero_mask.copy()
            mask[legal] = True
            rows.append(sim.leaf_obs)
            masks.append(mask)
            movers.append(True)
            owners.append(k)
            if self.value_rows == "all":
                for p in range(n):
                    if p != sim.leaf_player:
                        rows.append(rules.observe(sim.state, p))
                        masks.append(zero_mask)
                        movers.append(False)
                        owners.append(k)
        out: list[tuple[_Node | None, list[float]]] = [(None, []) for _ in sims]
        if not rows:
            return out
        self.evaluations += len(rows)
        priors, values = self.evaluator(np.stack(rows), np.stack(masks), np.array(movers))
        seat_values: dict[int, list[float]] = {k: [0.0] * n for k in legal_of}
        j = 0
        while j < len(rows):
            k = owners[j]
            sim = sims[k]
            legal = legal_of[k]
            prior = np.asarray(priors[j], dtype=np.float64)[legal]
            total = prior.sum()
            prior = prior / total if total > 0 and np.isfinite(total) else np.full(len(legal), 1.0 / len(legal))
            v = float(values[j])
            seat_values[k][sim.leaf_player] = v
            if self.value_rows == "mover":
                if n == 2:
                    seat_values[k][1 - sim.leaf_player] = -v
                j += 1
            else:
                others = [q for q in range(n) if q != sim.leaf_player]
                for q, row in zip(others, range(j + 1, j + n), strict=True):
                    seat_values[k][q] = float(values[row])
                j += n
            out[k] = (_Node(legal, prior, v), seat_values[k])
        return out

    @staticmethod
    def _result(root: _Node) -> SearchResult:
        return SearchResult.of(root.legal, root.visits.copy(), root.value_sum, root.value, root.prior.copy())


__all__ = ["VALUE_ROWS", "Evaluator", "PUCTSearch", "SearchResult", "check_puct"]
