"""Policy-rollout search: one step of policy improvement by Monte-Carlo rollouts of a network's own play.

For a position and the seat to move, each legal action ``a`` is valued by ``rollouts`` games played to the end
from it: the seat's information state is determinized, ``a`` is played, then every seat plays the network's most
probable legal move from its own observation. The same determinizations serve every action (common random
numbers). ``Q(a)`` is the seat's mean final return; the improved policy is ``softmax(log prior + Q /
temperature)`` over the legal actions, the prior being the network's own policy at the position.

The rollout algorithm of Bertsekas, Tsitsiklis and Wu (1997) and Tesauro and Galperin (1996), and for hidden
information SPARTA's single-agent search (Lerer et al. 2020). Many positions are searched at once: their
rollouts run in lockstep in one array of game rows (``jericho_env.registry.batched_game``), and each round asks
the network once for every row still playing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from jericho_env.core.kernels import row_seeds
from jericho_env.core.rules import Rules

DEFAULT_ROLLOUTS = 16  # games per legal action when none is given


def improved_logits(prior: np.ndarray, q: np.ndarray, temperature: float) -> np.ndarray:
    """``log prior + Q / temperature`` over one position's legal actions (the improved policy's logits)."""
    return np.log(np.maximum(np.asarray(prior, np.float64), 1e-12)) + np.asarray(q, np.float64) / temperature


@dataclasses.dataclass
class RolloutResult:
    """One position: its legal actions, the rollouts' mean return per action, the improved policy, the move."""

    legal: list[int]
    q: np.ndarray  # mean final return of the seat per legal action (zeros when not searched)
    improved: np.ndarray  # the improved policy over ``legal``
    visits: np.ndarray  # rollouts per legal action (zeros when there is one legal action: not searched)
    prior: np.ndarray  # the network's policy over ``legal``

    def policy(self, num_actions: int) -> np.ndarray:
        """The improved policy over all ``num_actions`` (float32, zeros off the legal actions)."""
        out = np.zeros(num_actions, dtype=np.float32)
        out[self.legal] = self.improved
        return out

    def best(self) -> int:
        """The most probable action of the improved policy (ties: the lower action)."""
        return int(self.legal[int(np.argmax(self.improved))])


class PolicyRolloutSearch:
    """Policy-rollout search over a batch of positions; see the module docstring.

    ``evaluator`` (``agents.exit.NetworkEvaluator``) gives the priors and plays every rollout move; ``rollouts``
    games per legal action; ``temperature`` > 0 scales returns against the prior's log-probabilities. ``fixed``: a
    batch policy playing every seat but the searching one in the rollouts (None: the network plays them all).
    ``top``: search only the ``top`` legal actions the evaluator's ``scores(obs, masks)`` (B, A) rank highest
    (ties: the lower action); the others leave the position's result (None: every legal action).
    """

    def __init__(
        self, rules: Rules[Any], evaluator: Any, rollouts: int, temperature: float, rng: np.random.Generator,
        fixed: Any = None, top: int | None = None,
    ) -> None:  # fmt: skip
        from jericho_env.registry import batched_game

        if not isinstance(rollouts, int) or isinstance(rollouts, bool) or rollouts < 1:
            raise ValueError(f"rollouts must be an int >= 1, got {rollouts!r}")
        if not (isinstance(temperature, (int, float)) and np.isfinite(temperature) and temperature > 0):
            raise ValueError(f"temperature must be a finite number > 0, got {temperature!r}")
        if top is not None and (isinstance(top, bool) or not isinstance(top, int) or top < 1):
            raise ValueError(f"top must be an int >= 1 or None, got {top!r}")
        if top is not None and not callable(getattr(evaluator, "scores", None)):
            raise ValueError("top needs an evaluator that ranks the legal actions (a scores(obs, masks) method)")
        self.fixed, self.top = fixed, top
        self.rules, self.evaluator = rules, evaluator
        self.rollouts, self.temperature, self.rng = int(rollouts), float(temperature), rng
        self.game = batched_game(rules)
        self.rows_played = 0  # rollout moves asked of the network (profiling)
        self._greedy: Any = None  # the network's most probable moves (made on first use)

    def search(self, states: Sequence[Any], movers: Sequence[int]) -> list[RolloutResult]:
        """The improved policy of each position (``movers[j]`` to move in ``states[j]``)."""
        rules, m = self.rules, self.rollouts
        legal = [[int(a) for a in rules.legal_actions(s)] for s in states]
        for j, (s, p) in enumerate(zip(states, movers, strict=True)):
            if rules.current_player(s) != p or not legal[j]:
                raise ValueError(f"rollout search: seat {p} is not to move in position {j}")
        obs = np.stack([rules.observe(s, p) for s, p in zip(states, movers, strict=True)]).astype(np.float32)
        masks = np.stack([rules.legal_mask(s).astype(bool) for s in states])
        priors, _ = self.evaluator(obs, masks, np.ones(len(states), dtype=bool))
        if self.top is not None:
            legal = self._candidates(obs, masks, legal)
        searched = [j for j in range(len(states)) if len(legal[j]) > 1]
        q = {j: np.zeros(len(legal[j])) for j in range(len(states))}
        if searched:
            self._rollouts(states, movers, legal, searched, q)
        out = []
        for j in range(len(states)):
            n = len(legal[j])
            prior = priors[j, legal[j]].astype(np.float64)
            if n == 1:
                out.append(RolloutResult(legal[j], q[j], np.ones(1), np.zeros(1, dtype=np.int64), prior))
                continue
            z = improved_logits(prior, q[j], self.temperature)
            improved = np.exp(z - z.max())
            out.append(RolloutResult(legal[j], q[j], improved / improved.sum(), np.full(n, m, dtype=np.int64), prior))
        return out

    def _candidates(self, obs: np.ndarray, masks: np.ndarray, legal: list[list[int]]) -> list[list[int]]:
        """Each position's ``top`` legal actions by the evaluator's scores, in action order."""
        scores = np.asarray(self.evaluator.scores(obs, masks), np.float64)
        out = []
        for j, acts in enumerate(legal):
            order = np.argsort(-scores[j, acts], kind="stable")[: self.top]  # stable: ties keep the lower action
            out.append(sorted(acts[i] for i in order))
        return out

    def _rollouts(
        self, states: Sequence[Any], movers: Sequence[int], legal: list[list[int]], searched: list[int],
        q: dict[int, np.ndarray],
    ) -> None:  # fmt: skip
        game, m = self.game, self.rollouts
        roots = game.new_states(len(searched))
        for k, j in enumerate(searched):
            game.to_batched(states[j], roots, k)
        # m determinizations of each searched position, shared by all its actions
        det_src = np.repeat(np.arange(len(searched), dtype=np.int64), m)
        seats = np.repeat(np.array([movers[j] for j in searched], dtype=np.int64), m)
        dets = game.new_states(len(det_src))
        game.determinize(roots, det_src, seats, row_seeds(self.rng, len(det_src)), dets)
        # one row per (position, determinization, action)
        src: list[int] = []
        acts: list[int] = []
        owner: list[int] = []
        col: list[int] = []
        seat_of: list[int] = []
        for k, j in enumerate(searched):
            n = len(legal[j])
            for d in range(m):
                src.extend([k * m + d] * n)
                acts.extend(legal[j])
                owner.extend([j] * n)
                col.extend(range(n))
                seat_of.extend([movers[j]] * n)
        src_a = np.array(src, dtype=np.int64)
        rows = game.new_states(len(src_a))
        if game.compiled:
            rows[:] = dets[src_a]
        else:
            for r, i in enumerate(src_a.tolist()):
                game.to_batched(dets[i], rows, r)
        everyone = np.arange(len(rows), dtype=np.int64)
        game.apply(rows, everyone, np.array(acts, dtype=np.int64))
        seat_a = np.array(seat_of, dtype=np.int64)
        final = self._play_out(rows, seat_a)
        mine = final[everyone, seat_a]
        owner_a, col_a = np.array(owner, dtype=np.int64), np.array(col, dtype=np.int64)
        for j in searched:
            sel = owner_a == j
            sums = np.bincount(col_a[sel], weights=mine[sel], minlength=len(legal[j]))
            q[j] = sums / m

    def _moves(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The network's most probable legal action per row (``agents.batch.NetworkBatchPolicy``: no value pass).

        An evaluator with ``best_moves`` (``agents.dmc.QEvaluator``: the highest Q) gives its own.
        """
        if hasattr(self.evaluator, "best_moves"):
            return np.asarray(self.evaluator.best_moves(obs, masks), dtype=np.int64)
        if self._greedy is None:
            from agents.batch import NetworkBatchPolicy

            self._greedy = NetworkBatchPolicy(self.evaluator.policy, deterministic=True, hint=self.evaluator.prior)
        return np.asarray(self._greedy(obs, masks), dtype=np.int64)

    def _play_out(self, rows: np.ndarray, searchers: np.ndarray) -> np.ndarray:
        """Every row played to the end by the network's most probable moves (``fixed``'s in the seats other than
        the row's searching seat, ``searchers``); the final returns (rows, seats)."""
        game, info = self.game, self.rules.info
        n = len(rows)
        final = np.zeros((n, info.num_players), dtype=np.float64)
        live = np.arange(n, dtype=np.int64)
        current = np.empty(n, dtype=np.int64)
        returns = np.zeros((n, info.num_players), dtype=np.float64)
        masks8 = np.zeros((n, info.num_actions), dtype=np.int8)
        obs = np.zeros((n, info.observation_size), dtype=np.float32)
        while len(live):
            k = len(live)
            game.status(rows, live, current[:k], returns[:k])
            over = current[:k] < 0
            if over.any():
                final[live[over]] = returns[:k][over]
                keep = ~over
                live, seats = live[keep], current[:k][keep]
            else:
                seats = current[:k]
            k = len(live)
            if not k:
                break
            game.masks(rows, live, masks8[:k])
            game.observe(rows, live, seats, obs[:k])
            masks = masks8[:k].astype(bool)
            if self.fixed is None:
                actions = self._moves(obs[:k], masks)
            else:  # the fixed agent's seats, then the searching seats
                actions = np.empty(k, dtype=np.int64)
                theirs = seats != searchers[live]
                for rows_of, play in ((theirs, self.fixed), (~theirs, self._moves)):
                    if rows_of.any():
                        actions[rows_of] = np.asarray(play(obs[:k][rows_of], masks[rows_of]), dtype=np.int64)
            self.rows_played += k
            game.apply(rows, live, actions)
        return final


__all__ = ["PolicyRolloutSearch", "RolloutResult"]
