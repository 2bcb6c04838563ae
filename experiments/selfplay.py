"""The learner's side of ``experiments.train``: its vec env, its opponents, its snapshots and evaluations.

With ``vec="selfplay"`` (the presets' default) the learner plays ``n_envs`` games in lockstep in one
process (``jericho_env.envs.sb3.SelfPlayVecEnv``): each opponent policy is asked once per round for
all the games waiting on it (``agents.batch``; the snapshots waiting in a round share one forward
pass, ``NetworkBatchPolicy(joint=True)``), and a snapshot of the learner is an in-process copy
of its network (also saved to the run folder, from which ``--resume`` reloads it). With ``"dummy"``
or ``"subproc"`` the learner plays ``n_envs`` single-agent views (``jericho_env.single_agent``), one
game each, the opponents acting one observation at a time (the behaviour before the batched env).

Evaluations play the learner's deterministic policy against the evaluation opponent on seat-swapped
deals, batched the same way (``agents.batch.play_matches``), whatever the vec env.
"""

from __future__ import annotations

import copy
from typing import Any

SELFPLAY = "selfplay"


def hint_of(cfg: Any, seed: int | None = None) -> Any:
    """The batch hint of the run's prior (``agents.batch.batch_hint``), or None without one."""
    from agents.batch import batch_hint

    return batch_hint(cfg.prior, cfg.game, seed=seed, **cfg.options)


def make_vec_env(cfg: Any, snapshots: list[str], trust: bool = False) -> Any:
    """The learner's SB3 VecEnv: the fixed pool of ``cfg.pool`` plus the saved ``snapshots`` as opponents.

    ``trust``: snapshots saved as Stable-Baselines3 zips (runs from before ``agents.checkpoint``) may be
    unpickled.
    """
    if cfg.vec == SELFPLAY:
        return _selfplay_vec_env(cfg, snapshots, trust)
    return _single_agent_vec_env(cfg, snapshots, trust)


def _selfplay_vec_env(cfg: Any, snapshots: list[str], trust: bool) -> Any:
    """``cfg.n_envs`` games in one ``SelfPlayVecEnv``, or split over ``cfg.shards`` processes (``ShardedVecEnv``)."""
    from jericho_env.envs.sb3 import ShardedVecEnv, shard_sizes

    shards = int(getattr(cfg, "shards", 1))  # configs from before shards: one process
    if shards == 1:
        return _selfplay_shard(cfg, snapshots, trust, 0, cfg.n_envs, 0)
    sizes = shard_sizes(cfg.n_envs, shards)
    offsets = [sum(sizes[:k]) for k in range(shards)]

    def make_shard(k: int) -> Any:
        if k:  # a worker process: one torch thread, as the training process during rollouts
            import torch

            torch.set_num_threads(1)
        return _selfplay_shard(cfg, snapshots, trust, k, sizes[k], offsets[k])

    return ShardedVecEnv(make_shard, sizes)


def _selfplay_shard(cfg: Any, snapshots: list[str], trust: bool, shard: int, n_envs: int, first: int) -> Any:
    """The ``SelfPlayVecEnv`` of games ``first .. first + n_envs - 1``: shard 0 is seeded as the unsharded env."""
    from agents.batch import make_batch_policy
    from agents.prior import hint_size
    from jericho_env.envs.sb3 import SelfPlayVecEnv
    from jericho_env.registry import make_rules

    other = 1_000_003 * shard  # other shards' opponents and hints draw other random streams
    names = cfg.pool.split(",")
    pool = [
        make_batch_policy(name, cfg.game, seed=cfg.seed * 100 + k + other, **cfg.options)
        for k, name in enumerate(names)
    ]
    pool += [saved_snapshot(cfg, path, trust, shard) for path in snapshots]
    hint = hint_of(cfg, seed=cfg.seed + 7919 + other)
    size = hint_size(cfg.prior, make_rules(cfg.game, **cfg.options).info.num_actions) if hint else 0
    seed, shaping = cfg.seed * 1000 + first, cfg.shaping
    return SelfPlayVecEnv(
        cfg.game, n_envs, opponents=pool, seed=seed, hint=hint, hint_size=size, shaping=shaping, **cfg.options
    )


def _single_agent_vec_env(cfg: Any, snapshots: list[str], trust: bool) -> Any:
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    import agents
    import jericho_env
    from agents.ppo import LazyPPOOpponent
    from agents.prior import PriorHintEnv

    opponents: list[Any] = [agents.make(name, cfg.game, **cfg.options) for name in cfg.pool.split(",")]
    opponents += [LazyPPOOpponent(cfg.game, path, cfg.options, trust=trust) for path in snapshots]

    def factory(rank: int) -> Any:
        def make() -> Any:
            env = jericho_env.single_agent(cfg.game, opponents=list(opponents), seat="random", **cfg.options)
            if cfg.prior != "none":
                env = PriorHintEnv(env, cfg.prior, cfg.game, **cfg.options)
            env.reset(seed=cfg.seed * 1000 + rank)
            return env

        return make

    fns = [factory(i) for i in range(cfg.n_envs)]
    return SubprocVecEnv(fns, start_method="fork") if cfg.vec == "subproc" else DummyVecEnv(fns)


def saved_snapshot(cfg: Any, path: str, trust: bool = False, shard: int = 0) -> Any:
    """A snapshot saved in the run folder as a batch policy (sampling from its masked distribution)."""
    from agents.batch import NetworkBatchPolicy
    from agents.checkpoint import load_policy

    policy, _ = load_policy(path, trust=trust, game_id=cfg.game, options=cfg.options)
    snapshot = NetworkBatchPolicy(policy, seed=len(path), name="snapshot", hint=hint_of(cfg), joint=True)
    return snapshot.for_shard(shard) if shard else snapshot


def add_snapshot(vec: Any, cfg: Any, model: Any, path: str, steps: int) -> None:
    """Add the learner as it is now (saved at ``path``) to the opponent pool, keeping ``max_snapshots``."""
    if cfg.vec == SELFPLAY:
        from agents.batch import NetworkBatchPolicy

        frozen = copy.deepcopy(model.policy)  # an in-process copy: no reload, one forward pass per batch
        opponent = NetworkBatchPolicy(frozen, seed=steps, name="snapshot", hint=hint_of(cfg, seed=steps), joint=True)
        vec.add_opponent(opponent, cfg.max_snapshots)
    else:
        from agents.ppo import LazyPPOOpponent

        vec.env_method("add_opponent", LazyPPOOpponent(cfg.game, path, cfg.options), cfg.max_snapshots)


def evaluate(model: Any, cfg: Any, steps: int) -> dict[str, Any]:
    """The learner's deterministic policy against ``cfg.eval_opponent`` on ``cfg.eval_deals`` seat-swapped deals.

    Returns training.json's evaluation row: ``steps``, ``opponent``, ``vs_<opponent>`` (the score: wins
    plus half the draws, per game), ``ci95`` (Wilson) and ``games``.
    """
    from agents.batch import NetworkBatchPolicy, make_batch_policy, play_matches
    from experiments.tournament import wilson_interval

    learner = NetworkBatchPolicy(model.policy, deterministic=True, hint=hint_of(cfg, seed=steps))
    opponent = make_batch_policy(cfg.eval_opponent, cfg.game, seed=10_000 + steps, **cfg.options)
    score, _, _, games = play_matches(cfg.game, learner, opponent, cfg.eval_deals, 10_000 + steps, cfg.options)
    lo, hi = wilson_interval(score * games, games)
    row = {"steps": steps, "opponent": cfg.eval_opponent, f"vs_{cfg.eval_opponent}": score}
    return {**row, "ci95": [lo, hi], "games": games}
