"""``dmc-search``: a Deep Monte-Carlo network inside information-set PUCT (``exit-search``'s search).

The search is ``agents.exit.ExitSearchAgent``'s: information-set PUCT from the seat's information view (or
policy rollouts, ``search="rollouts"``), the move the most visited. What guides it is a dmc network
(``agents.dmc``; ``path="A.zip+B.zip"`` an ensemble's mean Q) through ``agents.dmc.QEvaluator``: the prior
of a node is ``softmax(Q / prior_temperature)`` over its player's legal actions and its value the highest
legal Q. A Q network values the seat to move only, so the search negates it for the other seat: two-player
zero-sum games (castles, grid). Without ``path`` it plays the zoo's ``dmc`` network for the game.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.dmc import DEFAULT_PRIOR_TEMPERATURE, DmcAgent, QEvaluator
from agents.exit import ExitSearchAgent
from agents.pretrained import zoo_network_unfit


class DmcSearchAgent(ExitSearchAgent):
    """``dmc-search``: information-set PUCT with a dmc network's Q as prior (softmax) and value (the highest)."""

    name = "dmc-search"

    def __init__(
        self,
        game_id: str,
        path: str | Path | Sequence[str | Path] | None = None,
        prior_temperature: float = DEFAULT_PRIOR_TEMPERATURE,
        **kwargs: Any,
    ) -> None:
        t = prior_temperature
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t < math.inf:
            raise ValueError(f"dmc-search: prior_temperature must be a finite number above 0, got {t!r}")
        self.prior_temperature = float(t)
        super().__init__(game_id, path=path, **kwargs)  # type: ignore[arg-type]

    def _evaluator(
        self, game_id: str, path: Any, model: Any, trust: bool, seed: int | None, game_options: dict[str, Any]
    ) -> QEvaluator:
        from jericho_env.registry import make_rules

        info = make_rules(game_id, **game_options).info
        if not (info.num_players == 2 and info.zero_sum):
            raise ValueError(
                f"dmc-search: {game_id} is not a two-player zero-sum game; a Q network values the seat to move "
                "only, so dmc-search plays castles and grid"
            )
        if model is not None:
            raise ValueError("dmc-search: give path= (a dmc checkpoint, or A.zip+B.zip); model= is exit-search's")
        if path is None:
            reason = zoo_network_unfit(game_id, game_options)
            if reason:
                raise ValueError(f"dmc-search: {reason}; give path= a network learned in self-play")
        net = DmcAgent(game_id, path=path, seed=seed, **game_options)
        self.path, self.meta, self.policy = net.path, net.meta, None
        return QEvaluator(net.plan, self.prior_temperature)


# the network's Q counts as this many visits in a search teacher's targets: at castles' 1,000 simulations the
# targets' best move is then the search's most visited one in 93% of positions (the search's mean alone: 83%;
# 10: 86%, 30: 89%, 300: 86%; docs/dmc.md)
DEFAULT_PRIOR_VISITS = 100.0


class _ViewTeacher:
    """What the search teachers share: a ``DmcSearchAgent`` of one search, the network's Q counted as
    ``prior_visits`` visits beside the search's means, and the information views of the next call's rows."""

    uses_views = True
    search_name = "puct"

    def __init__(self, agent: DmcSearchAgent, prior_visits: float) -> None:
        if agent.search_name != self.search_name:
            raise ValueError(f"a {type(self).__name__} needs search={self.search_name}")
        k = prior_visits
        if isinstance(k, bool) or not isinstance(k, (int, float)) or not 0 <= k < math.inf:
            raise ValueError(f"prior_visits must be a finite number >= 0, got {k!r}")
        self.prior_visits = float(k)
        self.agent = agent
        self._views: list[Any] | None = None
        self.searched = 0  # positions searched (profiling)

    def observe_views(self, views: list[Any]) -> None:
        """The information views of the next call's rows, one per row."""
        self._views = list(views)

    def _search(self, rows: int) -> list[Any]:
        """The search's result for each of the ``rows`` positions whose views ``observe_views`` gave."""
        views, self._views = self._views, None
        if views is None or len(views) != rows:
            raise ValueError(f"{type(self).__name__}: needs one information view per row (observe_views) first")
        rules = self.agent.rules
        self.searched += len(views)
        return self.agent.search.search(views, [rules.current_player(v) for v in views])


class SearchTeacher(_ViewTeacher):
    """``dmc-search`` as a distillation teacher (``experiments.dmc --teacher A.zip --teacher-search SETTINGS``).

    ``q_all`` gives Q of every action for positions handed with their information views (``observe_views``,
    as ``experiments.training.dmc_actors.Actors`` does): for each legal action, the mean value the search found
    under it (the mover's, as the search's root ``q``) and the network's own Q counted as ``prior_visits``
    visits, ``(n q + k Q) / (n + k)``; the network's Q off the legal actions and where nothing was visited
    (``prior_visits`` 0: the search's mean alone wherever it visited). A move the search visited a few times has
    a noisy mean; the network's Q holds it until the visits outweigh it.
    """

    def __init__(self, agent: DmcSearchAgent, prior_visits: float | None = None) -> None:
        """``prior_visits`` None: ``DEFAULT_PRIOR_VISITS``. The search is PUCT (grid's rollouts: RolloutTeacher)."""
        super().__init__(agent, DEFAULT_PRIOR_VISITS if prior_visits is None else prior_visits)

    def q_all(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Q of every action (B, A) float32: the search's mean value where it visited, the network's elsewhere."""
        results = self._search(len(obs))
        q = np.array(self.agent.evaluator.plan.q_all(obs, masks), dtype=np.float32)
        k = self.prior_visits
        for row, result in enumerate(results):
            seen = result.visits > 0
            legal = np.asarray(result.legal)[seen]
            n = result.visits[seen].astype(np.float64)
            mean = np.asarray(result.q, dtype=np.float64)[seen]
            q[row, legal] = (n * mean + k * q[row, legal]) / (n + k)
        return q


class RolloutTeacher(_ViewTeacher):
    """``dmc-search`` with ``search="rollouts"`` as a distillation teacher of grid's pair networks
    (``experiments.dmc grid --teacher A.zip --teacher-search search=rollouts,...``).

    ``rollout_values`` gives, for positions handed with their information views (``observe_views``), the legal
    actions the search rolled out (every one, or the network's ``top`` most probable) and each one's value: the
    mean final return of its rollouts (the seat's to move, ``agents.search.rollout_search``) with the network's
    own Q counted as ``prior_visits`` rollouts, ``(n q + k Q) / (n + k)``, as ``SearchTeacher`` blends. With
    ``prior_visits`` equal to the rollouts per action (the default) the values rank the actions as the search
    plays them: its move is the highest ``Q / temperature + q / temperature`` when both temperatures are
    equal (the defaults). A pair network stores one row per (position, action): each action rolled out becomes
    a row labelled with its value.
    """

    search_name = "rollouts"

    def __init__(self, agent: DmcSearchAgent, prior_visits: float | None = None) -> None:
        """``prior_visits`` None: the search's rollouts per action."""
        rollouts = getattr(agent.search, "rollouts", 0)
        super().__init__(agent, float(rollouts) if prior_visits is None else prior_visits)

    def rollout_values(self, obs: np.ndarray, masks: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per row of ``obs`` (the movers' observations of the last ``observe_views``, ``masks`` their legal
        actions): the actions rolled out (int64) and their values (float32)."""
        from agents.dmc import legal_q

        results = self._search(len(obs))
        q = legal_q(self.agent.evaluator.plan, obs, masks) if self.prior_visits else None
        k = self.prior_visits
        out = []
        for row, result in enumerate(results):
            seen = result.visits > 0
            acts = np.asarray(result.legal, dtype=np.int64)[seen]
            n = result.visits[seen].astype(np.float64)
            mean = np.asarray(result.q, dtype=np.float64)[seen]
            values = mean if q is None else (n * mean + k * q[row, acts].astype(np.float64)) / (n + k)
            out.append((acts, values.astype(np.float32)))
        return out
