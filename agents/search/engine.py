"""Information-set Monte Carlo tree search over the rules engines (Cowling, Powley and Whitehouse 2012).

One tree per move, its nodes keyed by the seat and observation of the player to move, so positions that player
cannot tell apart share a node. Each simulation draws a determinization of the searching seat's information
state (``Redeal``), walks down choosing the best UCB score among the actions legal there (ascending; an action's
exploration term counts how often it was available), adds one node, plays on with the rollout policy, and
credits every node on the path with the return of the player who moved there. The most visited root action is
played.

This is the readable search; ``agents.search.compiled`` runs the same one compiled. Both draw every random number
from one SplitMix64 stream in the same order and call the same greedy functions (``RowPolicy``), so a seed gives
the same moves in each (``tests/test_search_twins.py``). The search never changes the state it is given.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from jericho_env.core.kernels import NUMBA, below, next_u64, row_seeds
from jericho_env.core.redeal import NoConsistentDealError
from jericho_env.core.rules import Rules
from jericho_env.core.validate import require_generator


class RowPolicy(NamedTuple):
    """A policy over observation rows, for the tree's prior and for rollouts (``agents.greedy.row_functions``).

    Both take ``(obs, legal, n, params, stream, k, weights) -> action``: ``prior`` writes a weight for each of
    ``legal[:n]`` into ``weights[:n]`` (None for a policy without one); ``rollout`` returns the action to play,
    drawing any tie-break from ``stream[k]``. ``params``: the one-element record array both read.
    """

    prior: Any
    rollout: Any
    params: np.ndarray


def compiled_kernels(rules: Rules[Any]) -> tuple[Any, Any] | None:
    """The game's compiled rules and row kernels, or None (no Numba, or the game has none): search in Python then."""
    if not NUMBA:
        return None
    from jericho_env.registry import batched_game

    game = batched_game(rules)
    kernels = game.row_kernels() if game.compiled else None
    return None if kernels is None else (game, kernels)


class Redeal:
    """Determinizations of root positions, drawn from one SplitMix64 stream per root as the compiled search draws.

    With the game's row kernels a draw is the kernels' ``determinize`` of the root's row from ``stream[k]``; without
    them, ``Rules.determinize`` with a generator seeded from the stream's next number.
    """

    def __init__(self, rules: Rules[Any], found: tuple[Any, Any] | None = None) -> None:
        self.rules = rules
        self.found = found if found is not None else compiled_kernels(rules)
        self.roots: Any = None

    def set_roots(self, states: Sequence[Any]) -> None:
        """The positions the next draws redeal (root ``k`` is ``states[k]``)."""
        if self.found is None:
            self.roots = list(states)
            return
        game = self.found[0]
        self.roots, self.work = game.new_states(len(states)), game.new_states(len(states))
        for k, state in enumerate(states):
            game.to_batched(state, self.roots, k)

    def draw(self, k: int, seat: int, stream: np.ndarray) -> Any:
        """Root ``k`` with what ``seat`` cannot see redealt, from ``stream[k]``."""
        if self.found is None:
            return self.rules.determinize(self.roots[k], seat, np.random.default_rng(int(next_u64(stream, k))))
        game, kern = self.found
        if not kern.determinize(self.roots, k, kern.params, seat, self.work, k, stream, k):
            raise NoConsistentDealError("no deal of the unseen cards meets what the searching seat saw")
        return game.from_batched(self.work, k)


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_real(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def check_settings(
    who: str, simulations: Any, time_limit: Any, uct_c: Any, rollout_depth: Any = None
) -> tuple[int | None, float | None, float, int | None]:
    """The search settings as plain numbers, or ``ValueError`` naming the argument and what is allowed.

    ``simulations`` an int >= 1, ``time_limit`` finite seconds > 0 (each may be None), ``uct_c`` finite >= 0,
    ``rollout_depth`` None or an int >= 1: a search given ``nan`` or ``inf`` would never return.
    """
    if simulations is not None and not (_is_int(simulations) and simulations >= 1):
        raise ValueError(f"{who}: simulations={simulations!r} is not allowed: an int >= 1 (simulations per move)")
    if time_limit is not None and not (_is_real(time_limit) and math.isfinite(time_limit) and time_limit > 0):
        raise ValueError(
            f"{who}: time_limit={time_limit!r} is not allowed: a finite number of seconds per move above 0"
        )
    if not (_is_real(uct_c) and math.isfinite(uct_c) and uct_c >= 0):
        raise ValueError(f"{who}: uct_c={uct_c!r} is not allowed: a finite number >= 0 (the exploration constant)")
    if rollout_depth is not None and not (_is_int(rollout_depth) and rollout_depth >= 1):
        raise ValueError(
            f"{who}: rollout_depth={rollout_depth!r} is not allowed: an int >= 1 (moves before the evaluation), "
            "or None (rollouts play to the end)"
        )
    return (
        None if simulations is None else int(simulations),
        None if time_limit is None else float(time_limit),
        float(uct_c),
        None if rollout_depth is None else int(rollout_depth),
    )


class _Node:
    """Per action: visits, summed return of the node's player, and how often it was available."""

    __slots__ = ("avail", "prior", "visits", "wins")

    def __init__(self) -> None:
        self.visits: dict[int, int] = {}
        self.wins: dict[int, float] = {}
        self.avail: dict[int, int] = {}
        self.prior: dict[int, float] = {}


class ISMCTS:
    """Single-tree ISMCTS keyed by the mover's observation, with a simulation count and/or a time budget."""

    def __init__(
        self,
        rules: Rules[Any],
        simulations: int | None = 300,
        time_limit: float | None = None,
        rollout: RowPolicy | None = None,
        uct_c: float = 0.7,
        rng: np.random.Generator | None = None,
        rollout_depth: int | None = None,
        evaluate: Callable[[Any], list[float]] | None = None,
        prior: RowPolicy | None = None,
        found: tuple[Any, Any] | None = None,
    ) -> None:
        simulations, time_limit, uct_c, rollout_depth = check_settings(
            "ISMCTS", simulations, time_limit, uct_c, rollout_depth
        )
        if simulations is None and time_limit is None:
            raise ValueError("ISMCTS needs a budget: simulations, time_limit or both")
        self.rules = rules
        self.simulations = simulations
        self.time_limit = time_limit
        self.uct_c = uct_c
        self.rng = require_generator(rng) if rng is not None else np.random.default_rng()
        self.rollout = rollout  # None: uniformly random
        self.redeal = Redeal(rules, found)
        if (rollout_depth is None) != (evaluate is None):
            raise ValueError("ISMCTS: rollout_depth and evaluate go together (cut rollouts short, then evaluate)")
        self.rollout_depth = rollout_depth
        self.evaluate = evaluate
        self.prior = prior
        # large observations (grid: 8,731 floats) are keyed by a 16-byte digest, small ones by their bytes
        self._digest = rules.info.observation_size > 512
        self.last_simulations = 0
        self.last_visits: dict[int, int] = {}  # the last search's root visits per action (empty: one legal action)
        self.last_wins: dict[int, float] = {}  # and their summed returns

    def _key(self, state: Any, player: int) -> tuple[int, bytes]:
        raw = self.rules.observe(state, player).tobytes()
        return (player, hashlib.blake2b(raw, digest_size=16).digest() if self._digest else raw)

    def search(self, state: Any, seat: int, started: float | None = None) -> int:
        """The action to play for ``seat`` (to move in ``state``), from determinizations of its information state.

        With a time limit, counted from ``started`` (default now), no simulation starts that would end after it.
        """
        if started is None:
            started = time.perf_counter()
        rules = self.rules
        legal = rules.legal_actions(state)
        if rules.current_player(state) != seat or not legal:
            raise ValueError(f"ISMCTS: seat {seat} is not to move in this state")
        if len(legal) == 1:
            self.last_simulations, self.last_visits, self.last_wins = 0, {}, {}
            return legal[0]
        tree: dict[tuple[int, bytes], _Node] = {}
        root_key = self._key(state, seat)
        deadline = None if self.time_limit is None else started + self.time_limit
        done = 0
        first = time.perf_counter()
        stream = row_seeds(self.rng, 1)
        self.redeal.set_roots([state])
        with np.errstate(over="ignore"):  # the stream's arithmetic wraps, as compiled, where Numba is missing
            while self.simulations is None or done < self.simulations:
                if deadline is not None and done:
                    now = time.perf_counter()
                    if now + (now - first) / done >= deadline:
                        break
                self._simulate(self.redeal.draw(0, seat, stream), root_key, tree, stream)
                done += 1
        self.last_simulations = done
        root = tree[root_key]
        self.last_visits = {a: int(root.visits.get(a, 0)) for a in legal}
        self.last_wins = {a: float(root.wins.get(a, 0.0)) for a in legal}
        return max(legal, key=lambda a: (root.visits.get(a, 0), root.wins.get(a, 0.0) / max(1, root.visits.get(a, 0))))

    def _simulate(
        self, s: Any, root_key: tuple[int, bytes], tree: dict[tuple[int, bytes], _Node], stream: np.ndarray
    ) -> None:
        rules = self.rules
        path: list[tuple[_Node, int, int]] = []
        key: tuple[int, bytes] | None = root_key
        expanded = False
        depth = 0
        cut = False
        while not rules.is_terminal(s):
            player = rules.current_player(s)
            legal = rules.legal_actions(s)
            if expanded:  # past the new node: the rollout policy plays on
                if self.rollout_depth is not None and depth >= self.rollout_depth:
                    cut = True
                    break
                if self.rollout is None:
                    action = legal[below(stream, 0, len(legal))]
                else:
                    action = int(self._policy(self.rollout.rollout, s, player, legal, stream)[0])
                rules.apply(s, action)
                depth += 1
                continue
            if key is None:
                key = self._key(s, player)
            node = tree.get(key)
            if node is None:
                node = tree[key] = _Node()
                expanded = True
                if self.prior is not None:  # the prior policy's weights over the node's legal actions, normalised
                    weights = self._policy(self.prior.prior, s, player, legal, stream)[1]
                    total = 0.0
                    for w in weights:  # summed in order, as compiled (Python's sum() compensates)
                        total += w
                    node.prior = {a: w / (total or 1.0) for a, w in zip(legal, weights, strict=True)}
            action = self._select(node, legal, stream) if self.prior is None else self._select_prior(node, legal)
            path.append((node, action, player))
            rules.apply(s, action)
            key = None
        returns = self.evaluate(s) if cut and self.evaluate is not None else rules.returns(s)
        for node, action, player in path:
            node.visits[action] = node.visits.get(action, 0) + 1
            node.wins[action] = node.wins.get(action, 0.0) + returns[player]

    def _policy(self, fn: Any, s: Any, player: int, legal: list[int], stream: np.ndarray) -> tuple[int, list[float]]:
        """A ``RowPolicy`` function on the player's observation: (its action, its weights over ``legal``)."""
        assert self.rollout is not None or self.prior is not None
        params = (self.prior or self.rollout).params  # type: ignore[union-attr]
        weights, obs = np.zeros(len(legal)), self.rules.observe(s, player)
        action = fn(obs, np.array(legal, dtype=np.int64), len(legal), params, stream, 0, weights)
        return action, weights.tolist()

    def _select_prior(self, node: _Node, legal: list[int]) -> int:
        """PUCT with the prior policy's weights: ``Q + c * P * sqrt(availability) / (1 + visits)``."""
        prior, avail, visits, wins, c = node.prior, node.avail, node.visits, node.wins, self.uct_c
        best, best_score = legal[0], -math.inf
        for a in legal:
            avail[a] = avail.get(a, 0) + 1
            n = visits.get(a, 0)
            q = wins[a] / n if n else 0.0
            score = q + c * prior[a] * math.sqrt(avail[a]) / (1 + n)
            if score > best_score:
                best, best_score = a, score
        return best

    def _select(self, node: _Node, legal: list[int], stream: np.ndarray) -> int:
        """An untried legal action at random, else the best UCB score among the legal ones."""
        avail, visits = node.avail, node.visits
        for a in legal:
            avail[a] = avail.get(a, 0) + 1
        untried = [a for a in legal if a not in visits]
        if untried:
            return untried[below(stream, 0, len(untried))]
        c, wins = self.uct_c, node.wins
        best, best_score = legal[0], -math.inf
        for a in legal:
            n = visits[a]
            score = wins[a] / n + c * math.sqrt(math.log(avail[a]) / n)
            if score > best_score:
                best, best_score = a, score
        return best
