"""Agents as batch policies for the batched self-play env (``jericho_env.envs.selfplay``).

A batch policy is a callable ``(observations (B, D) float32, masks (B, A) bool) -> actions (B,)``.
``make_batch_policy(name, game_id)`` builds the cheapest one for a registered agent: ``random`` reads
only the masks, walls ``greedy`` is vectorised over the batch (``agents.greedy_walls_batch``), any other
agent is asked row by row (``AgentBatchPolicy``). ``NetworkBatchPolicy`` runs a MaskablePPO policy
network once for the whole batch (the snapshot opponents of self-play). ``batch_hint`` gives a prior's
hint floats (``agents.prior``) for a batch, so that networks trained on a prior can be batch policies.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from jericho_env.envs.selfplay import RandomBatchPolicy

__all__ = [
    "AgentBatchPolicy",
    "NetworkBatchPolicy",
    "RandomBatchPolicy",
    "batch_hint",
    "batch_policy",
    "make_batch_policy",
    "play_matches",
]

Hint = Callable[[np.ndarray, np.ndarray], np.ndarray]


class AgentBatchPolicy:
    """Any agent with ``act(observation_dict)``, asked once per row.

    An agent that searches (it defines ``observe_view``, as ``ismcts`` does) makes the policy ask the
    batched env for each row's information view (``uses_views``); each row's view is handed to the
    agent before its ``act``, as ``jericho_env.agent_plugins.choose_action`` does for one game.
    """

    uses_observation = True

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name = getattr(agent, "name", type(agent).__name__)
        self.uses_views = callable(getattr(agent, "observe_view", None))
        self._views: list[Any] | None = None

    def observe_views(self, views: list[Any]) -> None:
        """The information views of the next call's rows (the batched env calls this for searching agents)."""
        self._views = list(views)

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        act = self.agent.act
        m8 = masks.astype(np.int8)
        views, self._views = self._views, None
        if self.uses_views and (views is None or len(views) != len(masks)):
            raise ValueError(f"{self.name}: needs one information view per row (observe_views) before each call")

        def row(j: int) -> int:
            if views is not None:
                self.agent.observe_view(views[j])
            return act({"observation": observations[j], "action_mask": m8[j]})

        return np.fromiter((row(j) for j in range(len(masks))), dtype=np.int64, count=len(masks))


class _SmallBatchFallback:
    """A vectorised policy that hands batches of one or two rows to the per-row agent (cheaper there)."""

    uses_observation = True

    def __init__(self, vectorised: Any, agent: Any) -> None:
        self.vectorised = vectorised
        self.rows = AgentBatchPolicy(agent)
        self.name = vectorised.name

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        if len(masks) <= 2:
            return self.rows(observations, masks)
        return np.asarray(self.vectorised(observations, masks), dtype=np.int64)


def make_batch_policy(name: str, game_id: str, seed: int | None = None, **options: Any) -> Any:
    """The batch policy of the registered agent ``name`` (``agents.make``'s names and arguments)."""
    import agents

    if name == "random":
        agents.make(name, game_id, **options)  # the usual errors for an unknown game or option
        return RandomBatchPolicy(seed)
    agent = agents.make(name, game_id, seed=seed, **options)
    if name == "greedy" and game_id == "walls":
        from agents.greedy_walls_batch import BatchGreedyWalls

        return _SmallBatchFallback(BatchGreedyWalls(game_id, **options), agent)
    return AgentBatchPolicy(agent)


def batch_hint(prior: str, game_id: str, seed: int | None = None, **options: Any) -> Hint | None:
    """The hint floats of ``prior`` (``agents.prior``) for a batch, or None for ``"none"``."""
    from agents.prior import Prior, check_prior

    if check_prior(prior, game_id) == "none":
        return None
    if prior == "greedy-scores" and game_id == "walls":
        from agents.greedy_walls_batch import BatchGreedyWalls

        scorer = BatchGreedyWalls(game_id, **options)

        def walls_scores(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
            out = np.zeros(masks.shape, dtype=np.float32)
            live = masks.any(axis=1)  # finished games have no move to score
            if live.any():
                out[live] = scorer.scores(observations[live], masks[live])
            return out

        return walls_scores
    from jericho_env.registry import make_rules

    num_actions = make_rules(game_id, **options).info.num_actions
    one = Prior(prior, game_id, num_actions, seed=seed, **options)
    if prior == "greedy-scores" and game_id == "grid" and getattr(one.agent, "kernel", False):
        return _grid_scores(one.agent)

    def rows(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        out = np.zeros((len(masks), one.size), dtype=np.float32)
        m8 = masks.astype(np.int8)
        for j in range(len(masks)):
            if masks[j].any():
                out[j] = one.hint({"observation": observations[j], "action_mask": m8[j]})
        return out

    return rows


def _grid_scores(agent: Any) -> Hint:
    """grid greedy's ``scores`` of a whole batch in one compiled call (``greedy_grid_kernel.scores_rows``)."""
    from agents import greedy_grid_kernel

    tables = greedy_grid_kernel.tables_for(agent)
    score_at = np.array(agent._scores, dtype=np.int64)

    def grid_scores(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        rows = np.ascontiguousarray(observations, dtype=np.float32)
        legal = np.ascontiguousarray(masks, dtype=np.bool_)
        weights = tables.weights(agent)
        return greedy_grid_kernel.scores_rows(rows, legal, score_at, weights, bool(agent.soft_setup), *tables.args)  # type: ignore[no-any-return]

    return grid_scores


class NetworkBatchPolicy:
    """A MaskablePPO policy (``model.policy``) as a batch policy: one forward pass per call.

    ``deterministic=False`` samples from the masked distribution (self-play opponents), ``True`` takes
    the most probable legal action (evaluation). The policy is used as given: pass a frozen copy
    (``copy.deepcopy(model.policy)``) for a snapshot. ``hint`` appends a prior's hint floats to the
    observations first, for policies trained on a prior (``batch_hint``).
    """

    uses_observation = True

    def __init__(
        self,
        policy: Any,
        deterministic: bool = False,
        seed: int | None = None,
        name: str = "ppo",
        hint: Hint | None = None,
    ) -> None:
        import torch

        self._torch = torch
        self.policy = policy
        self.policy.set_training_mode(False)
        self.deterministic = deterministic
        self.name = name
        self.hint = hint
        self.seed = seed
        self.generator = self._generator(seed)

    def _generator(self, entropy: Any) -> Any:
        return self._torch.Generator().manual_seed(int(np.random.SeedSequence(entropy).generate_state(1)[0]))

    def for_shard(self, shard: int) -> NetworkBatchPolicy:
        """This policy with a generator of its own for shard ``shard`` (``ShardedVecEnv``); the network is shared."""
        other = copy.copy(self)
        other.generator = self._generator(None if self.seed is None else [int(self.seed), int(shard)])
        return other

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        from agents.nets.common import sample_rows

        torch = self._torch
        if self.hint is not None:
            observations = np.concatenate([observations, self.hint(observations, masks)], axis=1)
        with torch.no_grad():
            obs = torch.as_tensor(observations, dtype=torch.float32)
            # a policy that scores only a subset of the actions holding every legal one (grid-cells) chooses
            # among those: the same choice, without normalising thousands of masked actions
            compact = self.policy._compact(obs, masks) if hasattr(self.policy, "_compact") else None
            if compact is not None:
                distribution, numbers, _ = compact
                logits = distribution.logits
            else:
                numbers = None
                has_logits = hasattr(self.policy, "action_logits")
                logits = self.policy.action_logits(obs) if has_logits else _mlp_logits(self.policy, obs)
                logits = logits.masked_fill(~torch.as_tensor(masks, dtype=torch.bool), float("-inf"))
            if self.deterministic:
                choice = logits.argmax(dim=1)
            else:
                choice = sample_rows(torch.softmax(logits, dim=1), self.generator)
            return (choice if numbers is None else numbers.gather(1, choice[:, None]).squeeze(1)).numpy()


def _mlp_logits(policy: Any, obs: Any) -> Any:
    """Unmasked logits of an SB3 actor-critic policy (``MlpPolicy`` and its subclasses)."""
    features = policy.extract_features(obs, policy.pi_features_extractor)
    latent_pi = policy.mlp_extractor.forward_actor(features)
    return policy.action_net(latent_pi)


def batch_policy(agent: Any) -> Any:
    """``agent`` as a batch policy: ``"random"`` -> ``RandomBatchPolicy``; agents -> ``AgentBatchPolicy``."""
    if isinstance(agent, str) and agent == "random":
        return RandomBatchPolicy()
    if hasattr(agent, "act"):
        return AgentBatchPolicy(agent)
    if callable(agent):
        return agent
    raise ValueError(f"{agent!r} is neither an agent (act) nor a batch policy (callable)")


def play_matches(
    game_id: str,
    learner: Any,
    opponent: Any,
    deals: int,
    seed: int,
    options: dict[str, Any] | None = None,
) -> tuple[float, int, int, int]:
    """``learner`` alone against copies of ``opponent`` (batch policies), on ``deals`` deals in every seat.

    Returns (score, wins, draws, games), the score counting a draw as half a win and a shared win as a win,
    as the tournament tables do (``experiments.tournament``). The same deals are
    played with the learner in each seat, so seat and card luck cancel as in ``experiments.tournament``.
    """
    from jericho_env.envs.selfplay import SelfPlayVector

    options = dict(options or {})
    probe = SelfPlayVector(game_id, 1, **options)
    n = probe.num_players
    wins = draws = games = 0
    for seat in range(n):
        vector = SelfPlayVector(game_id, deals, opponents=[opponent], seat=seat, seed=seed, rules=probe.rules)
        obs, masks = vector.reset()
        finished = np.zeros(deals, dtype=bool)
        while not finished.all():
            obs, rewards, dones, _ = vector.step(learner(obs, masks))
            masks = vector.action_masks()
            for i in np.flatnonzero(dones & ~finished):
                finished[i] = True
                wins += int(rewards[i] > 1e-9)
                draws += int(abs(rewards[i]) <= 1e-9)
        games += deals
    score = (wins + 0.5 * draws) / games
    return score, wins, draws, games
