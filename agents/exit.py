"""Expert-iteration agents: ``exit`` (the network alone) and ``exit-search`` (the network inside search).

An expert-iteration network (``experiments.exit``) is a policy-and-value network of ``agents.nets``, saved in the
safe checkpoint format with ``"algorithm": "exit"`` under ``training``. Without ``path`` both play the network
shipped for the game (``agents.pretrained``).

- ``exit`` plays the network's most probable legal action.
- ``exit-search`` runs information-set PUCT from the seat's information view (``observe_view``, as ``ismcts``)
  with the network's policy as the prior and its value at the leaves, and plays the most visited action;
  ``engine`` picks ``CompiledPUCT`` or ``PUCTSearch`` as ``ismcts``'s does. ``search="rollouts"`` plays
  policy-rollout search instead (``agents.search.rollout_search``).

``NetworkEvaluator`` turns a policy network (and its prior's floats) into the search's evaluator.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import ViewAgent
from agents.ppo import PPOAgent

DEFAULT_C_PUCT = 1.5
SEARCHES = ("puct", "rollouts")  # exit-search's searches: information-set PUCT, policy rollouts


class NetworkEvaluator:
    """A policy network as ``agents.search.puct``'s evaluator: ``(obs, masks, movers) -> (priors, values)``.

    ``prior`` appends the prior's floats (``agents.prior.make_prior``) to the observations first.
    """

    def __init__(self, policy: Any, prior: Any = None) -> None:
        import torch

        self._torch = torch
        self.policy = policy
        self.prior = prior
        self.rows = 0  # rows evaluated (profiling)

    def features(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The network's input: the observations with the prior's floats appended (when the network has one)."""
        if self.prior is None:
            return observations
        return np.concatenate([observations, self.prior(observations, masks)], axis=1)

    def __call__(
        self, observations: np.ndarray, masks: np.ndarray, movers: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        torch = self._torch
        self.rows += len(observations)
        x = self.features(observations, masks)
        priors = np.zeros(masks.shape, dtype=np.float32)
        with torch.no_grad():
            obs = torch.as_tensor(x, dtype=torch.float32)
            # rows without a legal action (non-movers) are given every action, for their value alone
            logits, numbers, values = logits_and_values(self.policy, obs, masks | ~movers[:, None])
            probs = torch.softmax(logits, dim=1).numpy()
        m = np.flatnonzero(movers)
        if numbers is None:
            priors[m] = probs[m]
        elif len(m):
            np.add.at(priors, (np.repeat(m, probs.shape[1]), numbers.numpy()[m].reshape(-1)), probs[m].reshape(-1))
        return priors, values.reshape(-1).numpy().astype(np.float32)


def logits_and_values(policy: Any, obs: Any, masks: np.ndarray) -> tuple[Any, Any, Any]:
    """One forward pass: (masked logits, each column's action number or None for all actions, values (B, 1)).

    For the networks of ``agents.nets`` (their ``_compact`` subset where it holds every legal action) and SB3's.
    """
    import torch

    mask_t = torch.as_tensor(masks, dtype=torch.bool)
    if hasattr(policy, "_run"):
        compact = policy._compact(obs, masks) if hasattr(policy, "_compact") else None
        if compact is not None:
            distribution, numbers, values = compact
            return distribution.logits, numbers, values
        logits, values = policy._run(policy.preprocess(obs))
    else:  # sb3-contrib's MaskableActorCriticPolicy ("MlpPolicy")
        features = policy.extract_features(obs)
        if isinstance(features, tuple):
            features = features[0]
        latent_pi, latent_vf = policy.mlp_extractor(features)
        logits, values = policy.action_net(latent_pi), policy.value_net(latent_vf)
    return logits.masked_fill(~mask_t, float("-inf")), None, values


def network_prior(policy: Any, game_id: str, options: dict[str, Any], seed: int | None = None) -> Any:
    """The prior a network was trained on, for batches (``agents.prior.make_prior``), or None."""
    from agents.prior import make_prior

    return make_prior(getattr(policy, "prior", None) or "none", game_id, seed=seed, **options)


class ExitAgent(PPOAgent):
    """``exit``: an expert-iteration network's most probable legal action (``PPOAgent`` reads the checkpoint)."""

    name = "exit"

    def __init__(self, game_id: str, path: str | Path | None = None, **kwargs: Any) -> None:
        super().__init__(game_id, path=path, **kwargs)  # no path and no model: the shipped network (agents.pretrained)


class ExitSearchAgent(ViewAgent):
    """``exit-search``: information-set PUCT with an expert-iteration network's prior and value."""

    name = "exit-search"

    def __init__(
        self,
        game_id: str,
        path: str | Path | None = None,
        simulations: int | None = None,
        c_puct: float | None = None,
        seed: int | None = None,
        trust: bool = False,
        model: Any = None,
        engine: str = "auto",
        search: str = "puct",
        temperature: float = 0.1,
        **game_options: Any,
    ) -> None:
        super().__init__(game_id, seed=seed, **game_options)
        from agents.search.compiled import check_engine, make_puct
        from agents.search.ismcts import FALLBACK, GAME_DEFAULTS
        from jericho_env.registry import make_rules

        check_engine(engine, self.name)
        if search not in SEARCHES:
            raise ValueError(f"{self.name}: search={search!r} is not allowed; use one of {', '.join(SEARCHES)}")
        for key, v, whole in (("simulations", simulations, True), ("c_puct", c_puct, False),
                              ("temperature", temperature, False)):  # fmt: skip
            ok = v is None or (
                not isinstance(v, bool) and isinstance(v, int if whole else (int, float))
                and (v >= 1 if whole else 0 < v < math.inf)
            )  # fmt: skip
            if not ok:
                allowed = "a whole number >= 1" if whole else "a finite number above 0"
                raise ValueError(f"{self.name}: {key} must be {allowed}, got {v!r}")
        evaluator = self._evaluator(game_id, path, model, trust, seed, game_options)
        self.evaluator = evaluator
        self.rules = make_rules(game_id, **game_options)
        self.observation_size = self.rules.info.observation_size
        self.search: Any
        if search == "rollouts":
            from agents.search.rollout_search import DEFAULT_ROLLOUTS, PolicyRolloutSearch

            count = DEFAULT_ROLLOUTS if simulations is None else simulations
            self.search = PolicyRolloutSearch(self.rules, evaluator, count, float(temperature), self.rng)
        else:
            if simulations is None:
                simulations = int(GAME_DEFAULTS.get(game_id, FALLBACK)["simulations"])
            if c_puct is None:
                c_puct = float(self.meta.get("training", {}).get("exit", {}).get("c_puct", DEFAULT_C_PUCT))
            info = self.rules.info
            rows = "mover" if info.num_players == 2 and info.zero_sum else "all"
            self.search = make_puct(self.rules, evaluator, simulations, c_puct, rows, self.rng, engine=engine)
        self.last: Any = None  # the last search's result (agents.search.puct.SearchResult)

    def _evaluator(
        self, game_id: str, path: Any, model: Any, trust: bool, seed: int | None, game_options: dict[str, Any]
    ) -> Any:
        """Load the network (``self.path``, ``self.meta``, ``self.policy``) and return the search's evaluator."""
        shipped: tuple[Any, dict[str, Any], Path] | None = None
        if path is None and model is None:  # the network shipped in the package (agents.pretrained)
            from agents.ppo import shipped_policy

            shipped = shipped_policy(self.name, game_id, game_options)
            model = shipped[0]
        net = ExitAgent(game_id, path=path, model=model, trust=trust, **game_options)
        self.path, self.meta, self.policy = net.path, net.meta, net.policy
        if shipped is not None:
            self.meta, self.path = shipped[1], str(shipped[2])
        return NetworkEvaluator(self.policy, network_prior(self.policy, game_id, game_options, seed))

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the search; forget any view."""
        super().reset(seed)
        self.search.rng = self.rng
        self._view = None

    def batch_policy(self) -> ExitSearchBatchPolicy:
        """A batch policy that searches all its rows' positions at once (``experiments.play.batched_games``' hook)."""
        return ExitSearchBatchPolicy(self)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """The most visited action of the search from the information view."""
        legal = self.legal(observation)
        view, seat = self.take_view(observation)
        if len(legal) == 1:
            return int(legal[0])
        self.last = self.search.search([view], [seat])[0]
        action = self.last.best()
        if not observation["action_mask"][action]:
            raise RuntimeError(f"{self.name} chose {action}, which the mask forbids")
        return action


class ExitSearchBatchPolicy:
    """``exit-search`` as a batch policy: one batched search over every row with a choice.

    The roots share the network's evaluations; each row's information view comes through ``observe_views``.
    """

    uses_observation = False
    uses_views = True

    def __init__(self, agent: ExitSearchAgent) -> None:
        self.agent = agent
        self.name = agent.name
        self._views: list[Any] | None = None

    def observe_views(self, views: list[Any]) -> None:
        """The information views of the next call's rows."""
        self._views = list(views)

    def __call__(self, observations: np.ndarray | None, masks: np.ndarray) -> np.ndarray:
        views, self._views = self._views, None
        if views is None or len(views) != len(masks):
            raise ValueError(f"{self.name}: needs one information view per row (observe_views) before each call")
        actions = np.empty(len(masks), dtype=np.int64)
        searched: list[int] = []
        for j, mask in enumerate(masks):
            legal = np.flatnonzero(mask)
            if len(legal) == 0:
                raise ValueError(f"{self.name}: row {j} has no legal action")
            if len(legal) == 1:
                actions[j] = legal[0]
            else:
                searched.append(j)
        if searched:
            rules = self.agent.rules
            roots = [views[j] for j in searched]
            results = self.agent.search.search(roots, [rules.current_player(v) for v in roots])
            for j, result in zip(searched, results, strict=True):
                action = result.best()
                if not masks[j][action]:
                    raise RuntimeError(f"{self.name} chose {action} in row {j}, which the mask forbids")
                actions[j] = action
        return actions
