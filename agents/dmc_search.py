"""``dmc-search``: a Deep Monte-Carlo network inside ``exit-search``'s search (``agents.exit.ExitSearchAgent``).

Information-set PUCT (or policy rollouts, ``search="rollouts"``) guided by ``agents.dmc.QEvaluator``: a node's prior
``softmax(Q / prior_temperature)`` over the legal actions, its value the highest Q, negated for the other seat (a Q
network values the seat to move only: two-player zero-sum games). Without ``path``: the zoo's ``dmc`` network.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.dmc import DEFAULT_PRIOR_TEMPERATURE, DmcAgent, QEvaluator
from agents.exit import ExitSearchAgent
from agents.pretrained import zoo_network_unfit


class DmcSearchAgent(ExitSearchAgent):
    """``dmc-search``: information-set PUCT with a dmc network's Q as prior (softmax) and value (the highest)."""

    name = "dmc-search"

    def __init__(self, game_id: str, path: str | Path | Sequence[str | Path] | None = None,
                 prior_temperature: float = DEFAULT_PRIOR_TEMPERATURE, **kwargs: Any) -> None:  # fmt: skip
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
            raise ValueError(f"dmc-search: {game_id} is not a two-player zero-sum game; a Q network values the seat "
                             "to move only, so dmc-search plays castles and grid")  # fmt: skip
        if model is not None:
            raise ValueError("dmc-search: give path= (a dmc checkpoint, or A.zip+B.zip); model= is exit-search's")
        if path is None:
            reason = zoo_network_unfit(game_id, game_options)
            if reason:
                raise ValueError(f"dmc-search: {reason}; give path= a network learned in self-play")
        net = DmcAgent(game_id, path=path, seed=seed, **game_options)
        self.path, self.meta, self.policy = net.path, net.meta, None
        return QEvaluator(net.plan, self.prior_temperature)
