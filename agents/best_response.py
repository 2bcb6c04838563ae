"""A search best response: each decision valued by rollouts against a fixed agent whose policy it knows.

At each decision with a choice, the searching seat redeals what it cannot see ``determinizations`` times, plays
each legal action in each world, and lets the games run to their end with the fixed agent in every other seat
and ``rollout`` (the fixed agent unless given) in its own; it plays the action of highest mean return (ties: the
rollout policy's own move). With ``top``, only the ``top`` legal actions of highest Q under the rollout network
(a dmc network) are played: the network narrows the search and its rollouts continue it. This is
``PolicyRolloutSearch`` with ``fixed=`` the target, after Timbers et al. (2022, "Approximate exploitability"): its
score is a lower bound on the target's exploitability (``experiments.exploit``).

With ``simulations``, the search is information-set PUCT instead (``agents.search.puct.PUCTSearch`` with
``fixed=`` the target): only the seat's own information states are nodes, the target plays every other seat
inside the simulations (a searching target, ``ismcts``, from its views of the simulation's world), and the
rollout network's Q gives each new node's prior (softmax at ``dmc-search``'s temperature) and value (the
highest Q).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from agents.base import BaseAgent

if TYPE_CHECKING:
    from agents.exit import ExitSearchAgent

DEFAULT_DETERMINIZATIONS = 16
DEFAULT_MARGIN = 0.0  # how much higher another move's mean return must be to leave the rollout policy's own
TIE = 1e-6  # the own move's log-prior lead at margin 0: a tie of mean returns keeps the rollout policy's move


class _Continuation:
    """The evaluator ``PolicyRolloutSearch`` asks: the rollout policy's moves for the searching seat, and a prior
    ``exp(margin)`` times likelier on its own move than on any other legal one (at temperature 1, the search leaves
    that move for another only where the other's mean return is higher by more than ``margin``, and keeps it on a
    tie); ``scores``, the legal actions' Q under the rollout policy's network (a dmc network's plan), ranks them
    for ``top``."""

    def __init__(self, policy: Any, margin: float) -> None:
        self.best_moves, self.margin = policy, margin

    def scores(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Q of each legal action under the rollout policy's network (B, A), -inf elsewhere."""
        from agents.dmc import legal_q

        return legal_q(self.best_moves.plan, np.asarray(obs, np.float32), masks)

    def __call__(self, obs: np.ndarray, masks: np.ndarray, movers: np.ndarray) -> tuple[np.ndarray, None]:
        prior = np.asarray(masks, np.float64)
        prior[np.arange(len(prior)), self.best_moves(obs, masks)] *= np.exp(max(self.margin, TIE))
        return prior / np.maximum(prior.sum(axis=1, keepdims=True), 1e-12), None


class SearchBestResponse(BaseAgent):
    """Rollouts against ``target`` (an agent spec that plays from its observation: ``greedy``, ``ppo=PATH``,
    ``dmc``...) from ``determinizations`` redeals of the seat's information view per decision, or with
    ``simulations`` a tree of that many simulations (whose target may search: ``ismcts``); see the module."""

    name = "search-br"

    def __init__(self, game_id: str, target: str, determinizations: int = DEFAULT_DETERMINIZATIONS,
                 rollout: str | None = None, margin: float = DEFAULT_MARGIN, top: int | None = None,
                 simulations: int | None = None, seed: int | None = None, **game_options: Any) -> None:  # fmt: skip
        from agents.batch import make_batch_policy
        from agents.search.rollout_search import PolicyRolloutSearch
        from jericho_env.registry import make_rules

        super().__init__(game_id, seed=seed, **game_options)
        n = determinizations
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"{self.name}: determinizations must be a whole number >= 1, got {n!r}")
        fixed = make_batch_policy(target, game_id, seed=seed, **game_options)
        plays = fixed if rollout is None else make_batch_policy(rollout, game_id, seed=seed, **game_options)
        searching = [spec for p, spec in ((plays, rollout or target), (fixed, target))
                     if getattr(p, "uses_views", False) and (p is plays or simulations is None)]  # fmt: skip
        if searching:
            raise ValueError(f"{self.name}: {searching[0]} searches the information views; the rollouts ask "
                             "agents that play from their observation (the tree search, simulations=, takes a "
                             "searching target)")  # fmt: skip
        self.rules = make_rules(game_id, **game_options)
        if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 <= margin < np.inf:
            raise ValueError(f"{self.name}: margin must be a finite number >= 0, got {margin!r}")
        if top is not None and getattr(plays, "plan", None) is None:
            raise ValueError(
                f"{self.name}: top ranks the legal actions by a dmc network's Q; the rollout policy "
                f"{rollout or target!r} has none (give a dmc network as the rollout: dmc, dmc=PATH)"
            )
        if simulations is not None:
            self.search = self._tree(plays, fixed, simulations, top, rollout or target)
        else:
            evaluator = _Continuation(plays, float(margin))
            self.search = PolicyRolloutSearch(self.rules, evaluator, n, 1.0, self.rng, fixed=fixed, top=top)
        self._view: Any = None

    def _tree(self, plays: Any, fixed: Any, simulations: Any, top: int | None, name: str) -> Any:
        """Information-set PUCT with ``fixed`` in the other seats, ``plays``'s dmc network as prior and value."""
        from agents.dmc import DEFAULT_PRIOR_TEMPERATURE, QEvaluator
        from agents.exit import DEFAULT_C_PUCT
        from agents.search.puct import PUCTSearch

        if getattr(plays, "plan", None) is None:
            raise ValueError(f"{self.name}: the tree search takes its prior and values from a dmc network's Q; "
                             f"{name!r} has none (give a dmc network as the rollout: dmc, dmc=PATH)")  # fmt: skip
        if top is not None:
            raise ValueError(f"{self.name}: top narrows the rollout search; the tree search (simulations) has none")
        evaluator: Any = QEvaluator(plays.plan, DEFAULT_PRIOR_TEMPERATURE)  # Evaluator's call, typed loosely
        return PUCTSearch(self.rules, evaluator, simulations, DEFAULT_C_PUCT, "mover", self.rng, fixed=fixed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the search; forget any view."""
        super().reset(seed)
        self.search.rng, self._view = self.rng, None

    def observe_view(self, view: Any) -> None:
        """Take the seat's information view for the next ``act``."""
        self._view = view

    def batch_policy(self) -> Any:
        """Every row's position searched at once (``agents.exit.ExitSearchBatchPolicy``: views, then one search)."""
        from agents.exit import ExitSearchBatchPolicy

        searcher = SimpleNamespace(name=self.name, rules=self.rules, search=self.search)  # what the policy reads
        return ExitSearchBatchPolicy(cast("ExitSearchAgent", searcher))

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """The searched move from the information view (``observe_view`` first)."""
        if self._view is None:
            raise ValueError(f"{self.name}: no information view; call observe_view(env.information_view(agent)) first")
        policy = self.batch_policy()
        policy.observe_views([self._view])
        self._view = None
        return int(policy(None, np.asarray(observation["action_mask"], bool)[None])[0])


__all__ = ["DEFAULT_DETERMINIZATIONS", "SearchBestResponse"]
