"""The prior: a baseline agent's judgement given to a network, residual policy learning on top of ``greedy``.

The prior is the policy a network starts from (``--prior``, a checkpoint's ``prior`` and ``prior_weight``), given
to it as floats appended to the observation. With ``--prior greedy`` that is one float, the action greedy would
play (``action / (num_actions - 1)``), and the policy (``agents.nets.common.PriorMlpPolicy``,
``agents.nets.grid.GridConvPolicy(prior=...)``) adds a trained weight ``prior_weight`` (initially 5) to its logit,
so the untrained policy plays close to greedy and PPO learns where to depart from it. With ``--prior
greedy-scores`` (grid and walls) it is one float per action, ``exp(score - best score)`` of greedy's own scoring
(``GreedyAgent.scores``), and ``prior_weight`` times it is added to the logits.

``make_prior`` is the one place that makes the floats: a ``Prior``, a callable from observations ``(B, D)`` and
masks ``(B, A)`` to ``(B, size)`` float32 (zeros for rows without a legal action), used by training's self-play
env, the snapshot opponents and evaluations (``agents.batch.NetworkBatchPolicy(hint=...)``) and
``agents.ppo.PPOAgent``. The technique: Silver et al. (2018), "Residual Policy Learning"; Johannink et al.
(2019), "Residual Reinforcement Learning for Robot Control"; docs/selfplay.md tells more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

PriorFn = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (observations (B, D), masks (B, A)) -> (B, size) float32

PRIORS = ("none", "greedy", "greedy-scores")
# the baseline agent behind each prior: greedy for each (check_prior asks agents.greedy whether it plays a game)
PRIOR_AGENTS = {"greedy": "greedy", "greedy-scores": "greedy"}
# "greedy-scores" needs an agent with a scores(observation) method (agents.greedy.grid / greedy_walls)
SCORE_GAMES = ("grid", "walls")


def check_prior(prior: str, game_id: str | None = None) -> str:
    """``prior`` if known (and available for ``game_id``), else a clear ``ValueError``."""
    if prior not in PRIORS:
        raise ValueError(f"--prior takes one of {', '.join(PRIORS)}, got {prior!r}")
    if prior == "greedy-scores" and game_id is not None and game_id not in SCORE_GAMES:
        raise ValueError(f"--prior greedy-scores is for {', '.join(SCORE_GAMES)} only, not {game_id!r}")
    if prior != "none" and game_id is not None:
        from agents.greedy import has_greedy  # every prior is greedy's judgement (PRIOR_AGENTS)

        if not has_greedy(game_id):
            raise ValueError(f"--prior {prior} needs a {PRIOR_AGENTS[prior]} agent, and {game_id!r} has none")
    return prior


def prior_size(prior: str | None, num_actions: int) -> int:
    """Floats the prior appends to the observation: 0 without one, 1 (the move) or one score per action."""
    if prior in (None, "none"):
        return 0
    return num_actions if prior == "greedy-scores" else 1


hint_size = prior_size  # the name Stable-Baselines3 checkpoints written before it pickled (agents.prior.hint_size)


class Prior:
    """A prior's floats for a batch: ``prior(observations (B, D), masks (B, A))`` -> ``(B, size)`` float32.

    Rows without a legal action get zeros. ``key`` is set when the floats do not depend on the seed (greedy's
    scores: ``JointNetworks`` computes them once), None when they draw; ``reset(seed)`` re-seeds those draws and
    ``for_shard(k)`` is the prior seeded for shard ``k``.
    """

    def __init__(self, name: str, game_id: str, seed: int | None = None, **options: Any) -> None:
        from agents.greedy import make_greedy
        from jericho_env.registry import make_rules

        if name not in PRIOR_AGENTS:  # checked against the game once, where the config is resolved (check_prior)
            raise ValueError(f"a prior needs one of {', '.join(PRIOR_AGENTS)}, not {name!r}")
        self.name, self.game_id, self.seed, self.options = name, game_id, seed, dict(options)
        self.num_actions = make_rules(game_id, **options).info.num_actions
        self.size = prior_size(name, self.num_actions)
        self.key: tuple[str, str, str] | None = None  # equal for priors that give the same floats for the same rows
        self.agent: Any = None  # the prior's baseline agent, asked row by row (None: walls' batch scorer)
        self._batch: PriorFn | None = None  # a compiled or vectorised scorer of whole batches
        deterministic = (name, game_id, repr(sorted(options.items())))
        if name == "greedy-scores" and game_id == "walls":
            from agents.greedy.walls import BatchGreedyWalls

            self._batch, self.key = _live_rows(BatchGreedyWalls(game_id, **options).scores), deterministic
            return
        self.agent = make_greedy(game_id, seed=seed, **options)  # PRIOR_AGENTS[name], as agents.make builds it
        if name == "greedy-scores" and game_id == "grid" and getattr(self.agent, "kernel", False):
            from agents.greedy.grid import BatchGreedyGrid

            self._batch, self.key = BatchGreedyGrid(self.agent).scores, deterministic

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        if self._batch is not None:
            return self._batch(observations, masks)
        out = np.zeros((len(masks), self.size), dtype=np.float32)
        m8 = masks.astype(np.int8)
        for j in range(len(masks)):
            if masks[j].any():
                out[j] = self._row({"observation": observations[j], "action_mask": m8[j]})
        return out

    def _row(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        """The floats of one observation, from the baseline agent: its move (encoded) or its score of every action."""
        if self.name == "greedy-scores":
            return np.asarray(self.agent.scores(observation), dtype=np.float32)
        return np.array([encode_prior(self.agent.act(observation), self.num_actions)], dtype=np.float32)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the baseline agent's random tie-breaks (no effect on scores)."""
        if self.agent is not None:
            self.agent.reset(seed)

    def for_shard(self, shard: int) -> Prior:
        """This prior for shard ``shard`` (``ShardedVecEnv``): shard 0 is this one, the others draw other streams."""
        if shard == 0:
            return self
        seed = None if self.seed is None else self.seed + SHARD_SEED_STRIDE * shard
        return Prior(self.name, self.game_id, seed=seed, **self.options)


# the shards of a sharded vec env seed their random opponents and priors this far apart
SHARD_SEED_STRIDE = 1_000_003


def make_prior(prior: str, game_id: str, seed: int | None = None, **options: Any) -> Prior | None:
    """The floats of ``prior`` (a name in ``PRIORS``) for ``game_id`` under ``options``; None for ``"none"``.

    ``seed`` seeds the baseline agent's random tie-breaks (greedy's move); greedy's scores draw nothing.
    ``prior`` is checked against the game where the config is resolved (``check_prior``), not here.
    """
    if prior == "none":
        return None
    return Prior(prior, game_id, seed=seed, **options)


def _live_rows(scores: PriorFn) -> PriorFn:
    """``scores`` asked for the rows with a legal action only; the others (finished games) get zeros."""

    def live_scores(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        out = np.zeros(masks.shape, dtype=np.float32)
        live = masks.any(axis=1)
        if live.any():
            out[live] = scores(observations[live], masks[live])
        return out

    return live_scores


def encode_prior(action: int, num_actions: int) -> float:
    """The prior's floats float of ``action`` (in [0, 1], exact in float32 for any action count below 2**23)."""
    return action / max(num_actions - 1, 1)


def decode_prior(floats: Any, num_actions: int) -> Any:
    """Back from prior's floats (a torch tensor) to action indices (int64)."""
    return (floats * max(num_actions - 1, 1)).round().long().clamp(0, num_actions - 1)


def with_prior(observation: np.ndarray, floats: np.ndarray) -> np.ndarray:
    """``observation`` with the prior's floats appended (float32)."""
    return np.concatenate([observation.astype(np.float32, copy=False), floats.astype(np.float32, copy=False)])
