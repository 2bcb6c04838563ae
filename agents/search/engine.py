"""Information-set Monte Carlo tree search over the rules engines (Cowling, Powley and Whitehouse 2012).

One tree per move, its nodes the information states of the player to move there: a node is keyed
by that player's seat and observation, so positions its player cannot tell apart share a node.
Each simulation draws a determinization of the searching seat's information state
(``Rules.determinize``), walks down the tree choosing, among the actions legal in that
determinization, the one with the best UCB score (availability counts: an action's exploration
term uses how often it was available, not how often its node was visited), adds one node, plays
the rest of the game with the rollout policy, and credits every node on the path with the return
of the player who moved there. The move played is the most visited root action.

The search only ever reads the state it is given and copies of it: it never changes it.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from jericho_env.core.rules import Rules
from jericho_env.core.validate import require_generator

RolloutPolicy = Callable[[Any, int, list[int]], int]  # (state, player, legal actions) -> action
# (state, player, legal actions) -> a non-negative weight per legal action (normalised by the search)
PriorPolicy = Callable[[Any, int, list[int]], dict[int, float]]


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_real(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def check_settings(
    who: str, simulations: Any, time_limit: Any, uct_c: Any, rollout_depth: Any = None
) -> tuple[int | None, float | None, float, int | None]:
    """The search settings as plain numbers, or ``ValueError`` naming the argument and what is allowed.

    A budget must end: ``simulations`` an int >= 1 and ``time_limit`` a finite number of seconds > 0
    (each may be None, not both: that is for the caller to say); ``uct_c`` a finite number >= 0 (0: no
    exploration); ``rollout_depth`` None (rollouts to the end) or an int >= 1. Bools, text, ``nan`` and
    ``inf`` are refused: a search given ``nan`` or ``inf`` would never return.
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
        rollout: RolloutPolicy | None = None,
        uct_c: float = 0.7,
        rng: np.random.Generator | None = None,
        rollout_depth: int | None = None,
        evaluate: Callable[[Any], list[float]] | None = None,
        prior: PriorPolicy | None = None,
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
        self.rollout = rollout if rollout is not None else self._random_rollout
        if (rollout_depth is None) != (evaluate is None):
            raise ValueError("ISMCTS: rollout_depth and evaluate go together (cut rollouts short, then evaluate)")
        self.rollout_depth = rollout_depth
        self.evaluate = evaluate
        self.prior = prior
        # large observations (grid: 8,731 floats) are keyed by a 16-byte digest, small ones by their bytes
        self._digest = rules.info.observation_size > 512
        self.last_simulations = 0
        self.last_nodes = 0
        self.last_visits: dict[int, int] = {}  # the last search's root visits per action (empty: one legal action)

    def _random_rollout(self, state: Any, player: int, legal: list[int]) -> int:
        return legal[int(self.rng.integers(len(legal)))]

    def _key(self, state: Any, player: int) -> tuple[int, bytes]:
        raw = self.rules.observe(state, player).tobytes()
        return (player, hashlib.blake2b(raw, digest_size=16).digest() if self._digest else raw)

    def search(self, state: Any, seat: int, started: float | None = None) -> int:
        """The action to play for ``seat`` (to move in ``state``), from determinizations of its information state.

        With a time limit, the search counts from ``started`` (``time.perf_counter()``, default now) and
        starts no simulation it expects to finish after the limit (at the mean duration so far), so the
        move as a whole stays within it.
        """
        if started is None:
            started = time.perf_counter()
        rules = self.rules
        legal = rules.legal_actions(state)
        if rules.current_player(state) != seat or not legal:
            raise ValueError(f"ISMCTS: seat {seat} is not to move in this state")
        if len(legal) == 1:
            self.last_simulations, self.last_nodes, self.last_visits = 0, 0, {}
            return legal[0]
        tree: dict[tuple[int, bytes], _Node] = {}
        root_key = self._key(state, seat)
        deadline = None if self.time_limit is None else started + self.time_limit
        done = 0
        first = time.perf_counter()
        while True:
            if self.simulations is not None and done >= self.simulations:
                break
            if deadline is not None and done:
                now = time.perf_counter()
                if now + (now - first) / done >= deadline:
                    break
            self._simulate(rules.determinize(state, seat, self.rng), root_key, tree)
            done += 1
        self.last_simulations, self.last_nodes = done, len(tree)
        root = tree[root_key]
        self.last_visits = {a: int(root.visits.get(a, 0)) for a in legal}
        return max(legal, key=lambda a: (root.visits.get(a, 0), root.wins.get(a, 0.0) / max(1, root.visits.get(a, 0))))

    def _simulate(self, s: Any, root_key: tuple[int, bytes], tree: dict[tuple[int, bytes], _Node]) -> None:
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
                rules.apply(s, self.rollout(s, player, legal))
                depth += 1
                continue
            if key is None:
                key = self._key(s, player)
            node = tree.get(key)
            if node is None:
                node = tree[key] = _Node()
                expanded = True
            action = self._select(node, legal) if self.prior is None else self._select_prior(node, s, player, legal)
            path.append((node, action, player))
            rules.apply(s, action)
            key = None
        returns = self.evaluate(s) if cut and self.evaluate is not None else rules.returns(s)
        for node, action, player in path:
            node.visits[action] = node.visits.get(action, 0) + 1
            node.wins[action] = node.wins.get(action, 0.0) + returns[player]

    def _select_prior(self, node: _Node, state: Any, player: int, legal: list[int]) -> int:
        """PUCT with the prior policy's weights: ``Q + c * P * sqrt(availability) / (1 + visits)``."""
        assert self.prior is not None
        prior = node.prior
        if any(a not in prior for a in legal):  # new actions in this determinization: weigh them here
            weights = self.prior(state, player, legal)
            total = sum(weights.get(a, 0.0) for a in legal) or 1.0
            for a in legal:
                prior.setdefault(a, weights.get(a, 0.0) / total)
        avail, visits, wins, c = node.avail, node.visits, node.wins, self.uct_c
        best, best_score = legal[0], -math.inf
        for a in legal:
            avail[a] = avail.get(a, 0) + 1
            n = visits.get(a, 0)
            q = wins[a] / n if n else 0.0
            score = q + c * prior[a] * math.sqrt(avail[a]) / (1 + n)
            if score > best_score:
                best, best_score = a, score
        return best

    def _select(self, node: _Node, legal: list[int]) -> int:
        """An untried legal action at random, else the best UCB score among the legal ones."""
        avail, visits = node.avail, node.visits
        for a in legal:
            avail[a] = avail.get(a, 0) + 1
        untried = [a for a in legal if a not in visits]
        if untried:
            return untried[int(self.rng.integers(len(untried)))]
        c, wins = self.uct_c, node.wins
        best, best_score = legal[0], -math.inf
        for a in legal:
            n = visits[a]
            score = wins[a] / n + c * math.sqrt(math.log(avail[a]) / n)
            if score > best_score:
                best, best_score = a, score
        return best
