"""The learner's games: the batched self-play vec env of ``experiments.train`` (``make_vec_env``), the learner in
one seat of each game against opponents of the pool (``experiments.training.ppo.pool``), and its evaluations."""

from __future__ import annotations

from typing import Any

from experiments.training.ppo.pool import OpponentPool


def make_vec_env(
    game_id: str,
    n_envs: int,
    pool: OpponentPool,
    prior: str = "none",
    seed: int = 0,
    shards: int = 1,
    options: dict[str, Any] | None = None,
    prior_seed: int | None = None,
) -> Any:
    """``n_envs`` self-play games against ``pool``, in this process or split over ``shards`` worker processes (each
    building its opponents and prior); game ``i`` is seeded with ``seed + i`` whatever shard holds it."""
    from jericho_env.envs.sb3 import ShardedVecEnv, shard_sizes

    options = dict(options or {})
    if shards == 1:
        return _shard(game_id, pool, prior, prior_seed, seed, options, 0, n_envs)
    sizes = shard_sizes(n_envs, shards)
    offsets = [sum(sizes[:k]) for k in range(shards)]

    def make_shard(k: int) -> Any:  # in a worker process: one thread, as the training process's rollouts
        import torch
        from threadpoolctl import threadpool_limits

        torch.set_num_threads(1)
        # numpy's BLAS too (the snapshots' moves): its threads would spin on the other shards' and learner's cores
        threadpool_limits(1, user_api="blas")
        return _shard(game_id, pool, prior, prior_seed, seed + offsets[k], options, k, sizes[k])

    # every shard in a worker, none here (experiments.training.ppo.model.pipeline_rollouts)
    return ShardedVecEnv(make_shard, sizes, local=False, preload=("agents.*", "experiments.*"))


def _shard(
    game_id: str,
    pool: OpponentPool,
    prior: str,
    prior_seed: int | None,
    seed: int,
    options: dict[str, Any],
    k: int,
    n: int,
) -> Any:
    """The ``SelfPlayVecEnv`` of shard ``k``: ``n`` games (the first seeded with ``seed``), its opponents and prior."""
    from agents.prior import SHARD_SEED_STRIDE, make_prior
    from jericho_env.envs.sb3 import SelfPlayVecEnv

    opponents = pool.policies(k)
    # shard k's prior draws another stream, as Prior.for_shard(k) would make it (shard 0: prior_seed itself)
    stream = None if prior_seed is None else prior_seed + SHARD_SEED_STRIDE * k
    scores = make_prior(prior, game_id, seed=stream, **options)
    size = scores.size if scores is not None else 0  # the env's hint: the floats appended to the learner's observations
    return SelfPlayVecEnv(game_id, n, opponents=opponents, seed=seed, hint=scores, hint_size=size, **options)


def evaluate(
    policy: Any,
    game_id: str,
    opponent: str,
    deals: int,
    seed: int,
    prior: Any = None,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``policy``'s (``model.policy``, with its ``prior``) most probable moves against the baseline ``opponent`` on
    ``deals`` seat-swapped deals drawn from ``seed``: training.json's evaluation row (score, Wilson ci95, games)."""
    from agents.batch import NetworkBatchPolicy, make_batch_policy, play_matches
    from experiments.play.tournament import wilson_interval

    options = dict(options or {})
    learner = NetworkBatchPolicy(policy, deterministic=True, hint=prior)
    rival = make_batch_policy(opponent, game_id, seed=seed, **options)
    score, _, _, games = play_matches(game_id, learner, rival, deals, seed, options)
    lo, hi = wilson_interval(score * games, games)
    return {"opponent": opponent, f"vs_{opponent}": score, "ci95": [lo, hi], "games": games}
