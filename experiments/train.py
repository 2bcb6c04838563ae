"""Train MaskablePPO by batched self-play against a pool, then print the agent-vs-agent table.

``python -m experiments.train GAME`` (``all``: every game). The learner plays one seat in each of ``--n-envs`` games
in lockstep, the others drawn from a pool of baselines and snapshots of the learner; it is evaluated and
checkpointed as it goes (``--resume RUN_FOLDER`` continues). At the end: a tournament of the baselines, the trained
agent and its starting policy. Every default comes from ``experiments.training.presets.PPO``; the config is
resolved once (``experiments.training.ppo.config.TrainConfig``) and ``train`` assembles the run from its parts
(``experiments.training.ppo``: the pool, the vec env, the model; ``experiments.training.run_folder``).

Examples:
    python -m experiments.train grid
    python -m experiments.train castles --timesteps 200000 --seed 3
    python -m experiments.train walls --option num_players=3
    python -m experiments.train grid --resume runs/train/grid-20261129-160000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from agents.checkpoint import PolicySpec, save_checkpoint
from agents.prior import make_prior
from experiments import cli
from experiments.play.backends import LOCAL, Backend, add_backend_flags, backend_from_args
from experiments.play.report import learning_curves, run_folder
from experiments.training.ppo.config import TrainConfig, config_from_args, make_config
from experiments.training.provenance import record_session
from experiments.training.run_folder import RunFolder
from jericho_env.processes import WorkerLostError
from jericho_env.registry import known_game_ids

__all__ = ["TrainConfig", "build_parser", "config_from_args", "main", "make_config", "train", "train_one"]


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface: a flag per ``TrainConfig`` field that has one, its default from the preset."""
    p = TrainConfig.parser(__doc__, ", or all", "a game option")
    replays = "the final table writes replays.jsonl: the first N deals of every pair, for python -m jericho_env.web"
    p.add_argument("--record", type=cli.positive_int, default=None, metavar="N", help=replays)
    trust = "load Stable-Baselines3 zips (--init, --resume of runs before the safe format): they unpickle code"
    p.add_argument("--trust-checkpoint", action="store_true", help=trust + "; only for files you trust")
    add_backend_flags(p)  # where the final table's games run
    return p


def train(cfg: TrainConfig, folder: Path, quiet: bool = False, resume: bool = False, trust: bool = False) -> Path:
    """Train (or continue training) in ``folder``; the final model's path. ``trust``: SB3 zips may load."""
    import torch
    from stable_baselines3.common.utils import set_random_seed

    from experiments.training.ppo.callbacks import Every, TrainCallback, eval_text
    from experiments.training.ppo.model import (
        PPO_SETTINGS,
        make_model,
        pipeline_rollouts,
        resume_model,
        training_meta,
        update_with_threads,
    )
    from experiments.training.ppo.pool import opponent_pool
    from experiments.training.ppo.selfplay import evaluate, make_vec_env

    set_random_seed(cfg.seed)
    torch.set_num_threads(1)  # more threads contend for the 2 cores (docs/research/ppo-notes.md)
    # our own masks and logits: skip torch's argument checks (a simplex test per masked Categorical, per call)
    torch.distributions.Distribution.set_default_validate_args(False)
    run = RunFolder(folder)
    done, checkpoint = run.restore(cfg.game, cfg.options, trust) if resume else (0, None)
    # the parts: the opponents, the games (with the prior's floats), the learner
    network = PolicySpec(cfg.policy, cfg.net, cfg.prior, float(cfg.prior_weight))
    ppo = {key: getattr(cfg, key) for key in PPO_SETTINGS}
    snapshots = run.snapshot_paths()
    pool = opponent_pool(cfg.game, cfg.pool.split(","), cfg.seed * 100, cfg.options, cfg.prior, snapshots, trust)
    vec = make_vec_env(cfg.game, cfg.n_envs, pool, cfg.prior, cfg.seed * 1000, cfg.shards, cfg.options, cfg.seed + 7919)
    if checkpoint is None:
        model = make_model(vec, cfg.game, network, ppo, cfg.seed, cfg.options, cfg.init, trust)
        save_checkpoint(model, run.initial)  # the starting policy joins the final tournament as "untrained"
    else:  # its own hyperparameters and tensors (the meta: for an SB3 zip of an earlier version)
        model = resume_model(checkpoint, vec, done, training_meta(cfg.game, cfg.options, network, ppo, cfg.seed), trust)
    update_with_threads(model, cfg.update_threads)
    pipeline_rollouts(model)  # with shards in workers: one shard's moves computed while the others play
    model.set_logger(run.logger(done))
    run.begin_session(done)

    def snapshot(model: Any, steps: int) -> None:
        run.save_snapshot(model, steps, cfg.max_snapshots)  # on disk for --resume; in play as a frozen copy
        vec.add_opponent(pool.frozen(model.policy, seed=steps), cfg.max_snapshots)

    def evaluation(model: Any, steps: int) -> str:
        now = make_prior(cfg.prior, cfg.game, seed=steps, **cfg.options)  # the learner's prior
        row = evaluate(model.policy, cfg.game, cfg.eval_opponent, cfg.eval_deals, 10_000 + steps, now, cfg.options)
        run.evals.append({"steps": steps, **row})
        return eval_text(row)

    every = [(cfg.snapshot_every, snapshot), (cfg.eval_every, evaluation), (cfg.checkpoint_every, run.save_checkpoint)]
    t0 = time.perf_counter()
    if cfg.timesteps > done:
        callback = TrainCallback(done, cfg.timesteps, f"train {cfg.game}", quiet, [Every(*e) for e in every])
        try:
            model.learn(cfg.timesteps - done, callback=callback, reset_num_timesteps=False)
        except (KeyboardInterrupt, WorkerLostError) as e:  # the learner is whole: save it, then stop
            run.save_checkpoint(model, model.num_timesteps)
            resume_with = f"python -m experiments.train {cfg.game} --resume {folder}"
            why = "interrupted" if isinstance(e, KeyboardInterrupt) else "a worker process was lost"
            print(f"\n{why}: checkpoint saved at {model.num_timesteps} steps. Resume with:\n  {resume_with}")
            raise
        finally:
            callback.close()
    seconds = time.perf_counter() - t0
    final = save_checkpoint(model, run.folder / "final.zip")
    run.save_checkpoint(model, model.num_timesteps)
    run.save_training(model.num_timesteps, model.num_timesteps - done, seconds, games=vec)  # closes the games first
    return final


def train_one(
    cfg: TrainConfig, folder: Path, resume: bool, quiet: bool, trust: bool = False, backend: Backend = LOCAL
) -> dict[str, Any]:
    """Train (or resume) one game, then play, print and save the final tournament (on ``backend``)."""
    from experiments.evaluate import against_baselines

    print(f"training {cfg.game} for {cfg.timesteps} steps; run folder {folder}/")
    t0 = time.perf_counter()
    final = train(cfg, folder, quiet, resume, trust)
    initial = folder / "checkpoints" / "initial.zip"  # what PPO started from (older runs: only with a prior)
    untrained = str(initial) if initial.is_file() else None
    table = (cfg.final_deals, cfg.seed, cfg.workers, cfg.options, str(folder / "tournament"), quiet)
    summary = against_baselines(cfg.game, "ppo", str(final), *table, untrained=untrained, trust=trust, backend=backend)
    wall = time.perf_counter() - t0
    learning_curves(folder)  # skipped with a note when matplotlib is missing
    print(f"\n## {cfg.game}: final table (seed {cfg.seed}, {cfg.timesteps} steps, {wall / 60:.1f} min wall time)\n")
    print(summary["table"])
    print(f"\noutputs in {folder}/ (model final.zip, tournament/, config.json, learning_curves.png, logs/progress.csv)")
    return {"folder": folder, "summary": summary, "wall_seconds": wall}


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    from experiments.replays import record_replays

    parser = build_parser()
    args = parser.parse_args(argv)
    games = list(known_game_ids()) if args.game == "all" else [args.game]
    if args.game != "all" and args.game not in known_game_ids():
        parser.error(f"unknown game {args.game!r}; choose one of {', '.join(known_game_ids())} or all")
    if args.resume and len(games) > 1:
        parser.error("--resume takes one game's run folder, not all")

    def run() -> None:
        backend = backend_from_args(args)
        outs = {g: args.out if len(games) == 1 else args.out and f"{args.out}/{g}" for g in games}
        configs = {g: config_from_args(args, g) for g in games}  # every flag and path checked before any work
        if args.resume:  # a run stopped before its first checkpoint starts afresh
            afresh = {g: RunFolder.stopped_early(args.resume) for g in games}
        else:  # so does the same command; any other run in --out is refused
            afresh = {g: RunFolder.check_new(outs[g], configs[g].to_json()) for g in games}
        for game, cfg in configs.items():
            folder = Path(args.resume) if args.resume else run_folder("train", game, outs[game])
            RunFolder(folder).begin(afresh[game], None if args.resume else cfg.to_json())
            record_session(folder, "experiments.train", argv)
            train_one(cfg, folder, bool(args.resume) and not afresh[game], args.quiet, args.trust_checkpoint, backend)
            if args.record:  # the final table's games (experiments.replays)
                path, count = record_replays(folder / "tournament", args.record)
                print(f"{count} replays in {path} (python -m jericho_env.web shows them)")

    return cli.run_cli(parser, run)


if __name__ == "__main__":
    sys.exit(main())
