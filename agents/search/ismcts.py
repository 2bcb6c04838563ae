"""``ismcts``: information-set Monte Carlo tree search, playing through ``act(observation)`` like every agent.

An observation does not carry the public history a search needs, so before each ``act`` the front end hands
the agent the seat's *information view* through ``observe_view(view)``: a full state whose every card the seat
cannot see is freshly redealt (``JerichoEnv.information_view``, via ``jericho_env.agent_plugins.choose_action``);
``act`` checks that it matches the observation. The search: ``agents.search.engine.ISMCTS``, or OpenSpiel's
``ISMCTSBot`` with ``backend="openspiel"`` (the ``openspiel`` extra).

Budgets: ``simulations`` per move, ``time_limit`` seconds per move, or both (whichever ends first); settings not
given come from ``GAME_DEFAULTS`` and are checked when the agent is made (``check_settings``). ``engine``:
``"compiled"`` (``agents.search.compiled.CompiledISMCTS``), ``"python"`` (``ISMCTS``) or ``"auto"`` (compiled
where Numba, the game's row kernels and what the settings need are there); a seed gives the same moves in each.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

import jericho_env
from agents.base import ViewAgent
from agents.search.compiled import check_engine
from agents.search.engine import ISMCTS, RowPolicy, check_settings

ROLLOUTS = ("random", "greedy")
BACKENDS = ("jericho", "openspiel")
PRIORS = ("none", "greedy")
# Settings each game plays with unless told otherwise; the simulation counts keep a move within 0.5 s
# of CPU on the 2-core development machine. How they were chosen: docs/results.md, "Search".
GAME_DEFAULTS: dict[str, dict[str, Any]] = {
    "castles": {"simulations": 1000, "rollout": "random", "uct_c": 0.7},
    "grid": {"simulations": 30, "rollout": "greedy", "rollout_depth": 4, "prior": "greedy", "uct_c": 1.0},
    "walls": {"simulations": 50, "rollout": "greedy", "prior": "greedy", "uct_c": 1.0},
}
FALLBACK = {"simulations": 300, "rollout": "random", "uct_c": 0.7}  # a game without an entry


class ISMCTSAgent(ViewAgent):
    """ISMCTS from the seat's information view, with a random or greedy rollout policy."""

    name = "ismcts"

    def __init__(
        self,
        game_id: str,
        seed: int | None = None,
        simulations: int | None = None,
        time_limit: float | None = None,
        rollout: str | None = None,
        uct_c: float | None = None,
        backend: str = "jericho",
        rollout_depth: int | None = None,
        prior: str | None = None,
        engine: str = "auto",
        **game_options: Any,
    ) -> None:
        super().__init__(game_id, seed, **game_options)
        self.engine = check_engine(engine, "ismcts")
        # the game's settings (GAME_DEFAULTS) fill what is not given; a time limit alone drops the simulation count
        preset = GAME_DEFAULTS.get(game_id, FALLBACK)
        if backend == "openspiel":  # ISMCTSBot rolls out at random, without a prior
            preset = {**preset, "rollout": "random", "prior": "none", "rollout_depth": None}
        if simulations is None and time_limit is None:
            simulations = preset["simulations"]
        rollout = rollout if rollout is not None else preset["rollout"]
        uct_c = uct_c if uct_c is not None else preset["uct_c"]
        prior = prior if prior is not None else preset.get("prior", "none")
        if rollout_depth is None and rollout == preset["rollout"]:
            rollout_depth = preset.get("rollout_depth")
        # budgets that end (no nan, inf, bool or text), before anything is built
        simulations, time_limit, uct_c, rollout_depth = check_settings(
            "ismcts", simulations, time_limit, uct_c, rollout_depth
        )
        if rollout not in ROLLOUTS:
            raise ValueError(f"ismcts: rollout={rollout!r} is not allowed; use one of {', '.join(ROLLOUTS)}")
        if backend not in BACKENDS:
            raise ValueError(f"ismcts: backend={backend!r} is not allowed; use one of {', '.join(BACKENDS)}")
        self.rules = jericho_env.make_rules(game_id, **game_options)
        self.simulations, self.time_limit, self.rollout_name, self.uct_c = simulations, time_limit, rollout, uct_c
        self.backend = backend
        if rollout_depth is not None and game_id not in EVALUATORS:
            raise ValueError(
                f"ismcts: rollout_depth needs a position evaluation, which only {', '.join(EVALUATORS)} has"
            )
        self.rollout_depth = rollout_depth
        if prior not in PRIORS:
            raise ValueError(f"ismcts: prior={prior!r} is not allowed; use one of {', '.join(PRIORS)}")
        self.prior_name = prior
        self._build()

    def _build(self) -> None:
        if self.backend == "openspiel":
            from jericho_env.openspiel import ismcts_bot

            self._bot = ismcts_bot(
                self.rules, self.simulations, self.time_limit, self.uct_c, self.rng, self.rollout_name
            )
            return
        policy = self._greedy_policy()
        prior = policy if self.prior_name == "greedy" else None
        rollout = policy if self.rollout_name == "greedy" else None
        compiled = self._compiled_search(prior, rollout)
        if compiled is not None:
            self.search: Any = compiled
            self.engine_used = "compiled"
            return
        self.engine_used = "python"
        evaluate = EVALUATORS[self.game_id] if self.rollout_depth is not None else None
        self.search = ISMCTS(
            self.rules, self.simulations, self.time_limit, rollout, self.uct_c, self.rng, self.rollout_depth, evaluate,
            prior,
        )  # fmt: skip

    def _greedy_policy(self) -> RowPolicy | None:
        """The game's greedy heuristic for the tree's prior (its scores) and the rollouts (its move), if asked for."""
        if "greedy" not in (self.rollout_name, self.prior_name):
            return None
        from agents.greedy import make_greedy
        from agents.search.compiled import greedy_row_policy

        policy = greedy_row_policy(self.rules)
        if policy is None:
            make_greedy(self.game_id)  # its error names the games greedy plays
        assert policy is not None
        if self.prior_name == "greedy" and policy.prior is None:
            raise ValueError(f"ismcts: prior=greedy needs a greedy agent with scores(), which {self.game_id} lacks")
        return policy

    def _compiled_search(self, prior: RowPolicy | None, rollout: RowPolicy | None) -> Any:
        """``CompiledISMCTS`` with these settings, or None (``engine="auto"``) when a piece it needs is missing."""
        if self.engine == "python":
            return None
        from agents.search import compiled as cs

        found = cs.compiled_kernels(self.rules)
        value = None
        why = None
        if found is None:
            why = "the game has no compiled row kernels (or Numba is not installed)"
        elif self.rollout_depth is not None:
            value = cs.row_value(self.rules, found[0])
            if value is None:
                why = "its position evaluation has no compiled version"
        if why is not None:
            if self.engine == "compiled":
                raise ValueError(f"ismcts: engine='compiled' is not available for {self.game_id!r}: {why}")
            return None
        assert found is not None
        game, kernels = found
        return cs.CompiledISMCTS(
            self.rules, game, kernels, self.simulations, self.time_limit, self.uct_c, self.rng, self.rollout_depth,
            value, prior, rollout,
        )  # fmt: skip

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the search's generator; forget any view."""
        super().reset(seed)
        self._view = None
        self._build()

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """The search's choice; ``ValueError`` without a fresh view matching ``observation``."""
        started = time.perf_counter()
        legal = self.legal(observation)
        view, seat = self.take_view(observation)
        if len(legal) == 1:
            return int(legal[0])
        if self.backend == "openspiel":
            action = int(self._bot.step_from_view(view, seat))
        else:
            action = self.search.search(view, seat, started)
        if not observation["action_mask"][action]:
            raise RuntimeError(f"ismcts chose {action}, which the mask forbids")
        return action


def grid_points(state: Any) -> list[float]:
    """A grid position's value to each seat: ``tanh`` of its lead in captured points over 20.

    ``math.tanh`` is the C library's, as the compiled value's (``agents.search.row_values``): the same bits.
    """
    v = math.tanh((state.points[0] - state.points[1]) / 20.0)
    return [v, -v]


# position evaluations for rollouts cut short (``rollout_depth``): they read the searched copy of the state
EVALUATORS = {"grid": grid_points}
