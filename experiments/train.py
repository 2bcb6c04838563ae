"""Train MaskablePPO by self-play against a pool, then print the agent-vs-agent table.

``python -m experiments.train GAME`` (``all`` for every game). The learner plays one seat of the
single-agent view (``jericho_env.single_agent``); the other seats are drawn per episode from a
pool of baseline agents and frozen snapshots of the learner, a snapshot being added every
``--snapshot-every`` steps. Every ``--eval-every`` steps the learner plays seat-swapped deals against
greedy, or the game's strongest baseline (mask-aware, through the tournament code). Checkpoints go
to the run folder every ``--checkpoint-every`` steps and on Ctrl-C; ``--resume RUN_FOLDER``
continues from the last one.
At the end: a tournament of the baselines, the trained agent and its starting policy (as "untrained"),
printed and saved. With a prior (``--prior greedy`` or
``greedy-scores``) the policy starts from greedy's judgement and learns where to depart from it
(``agents.prior``). Every default comes from ``experiments.presets`` (a default entry plus what each
game changes). SB3's training statistics go to ``logs/progress.csv`` in the run folder.

Examples:
    python -m experiments.train grid
    python -m experiments.train castles --timesteps 200000 --seed 3
    python -m experiments.train walls --option num_players=3
    python -m experiments.train grid --resume runs/train/grid-20261129-160000
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

from agents.nets import POLICY_NAMES, describe_policies
from agents.prior import PRIORS
from experiments import presets
from experiments.backends import LOCAL, Backend, add_backend_flags, backend_from_args
from experiments.checkpoints import RunFolder
from experiments.cli import (
    check_out,
    cli_parser,
    finite_float,
    nonnegative_float,
    parse_option,
    positive_float,
    positive_int,
    run_cli,
)
from jericho_env.registry import known_game_ids


@dataclasses.dataclass
class TrainConfig:
    """Everything a run depends on, every value concrete (``presets.resolve``); config.json records it."""

    game: str  # the game id
    options: dict[str, Any]  # the game's options as given (the game's defaults for the others)
    timesteps: int  # learner steps to train for
    seed: int  # seeds torch, numpy, the envs, the opponents and the final tournament
    n_envs: int  # games played at once (in lockstep with "selfplay") feeding PPO
    vec: str  # "selfplay" (batched games, batched opponents), or single-agent views: "dummy" or "subproc"
    shards: int  # "selfplay": processes the games are split over (1: all in the training process)
    update_threads: int  # torch threads for PPO's update (rollouts use one: small batches, shards beside)
    policy: str  # the network: a name in agents.nets.POLICIES
    net: str  # mlp layer sizes: the first shared by the policy and value heads, the rest per head
    learning_rate: float  # Adam's learning rate (its start, with the linear schedule)
    lr_schedule: str  # "constant", or "linear": down to 0 at the end of the budget
    n_steps: int  # rollout length per env between updates
    batch_size: int  # PPO minibatch size
    n_epochs: int  # PPO epochs per update
    gamma: float  # discount (rewards come only at the end of a game)
    gae_lambda: float  # GAE's lambda
    ent_coef: float  # entropy bonus
    shaping: float  # weight of the potential-based shaping reward (Rules.potential; "selfplay" vec only)
    prior: str  # "none", or the prior the policy starts from: "greedy", "greedy-scores" (agents.prior)
    prior_weight: float  # initial logit bonus of the prior's move (trained with the rest)
    init: str | None  # a checkpoint whose policy weights start the run (e.g. experiments.imitate's clone)
    pool: str  # fixed opponents, comma-separated (a name twice: twice the share); snapshots join them
    snapshot_every: int  # steps between frozen copies of the learner added to the pool
    max_snapshots: int  # the pool keeps this many latest snapshots
    eval_every: int  # steps between evaluations
    eval_opponent: str  # the baseline the evaluations play (greedy, where the game has one)
    eval_deals: int  # deals per evaluation (each played in every seat arrangement)
    checkpoint_every: int  # steps between checkpoints
    final_deals: int  # deals per pair in the final tournament
    workers: int  # processes for the final tournament


def make_config(game: str, options: dict[str, Any] | None = None, **given: Any) -> TrainConfig:
    """The game's preset (``experiments.presets``) with the ``given`` values that are not None on top."""
    options = dict(options or {})
    return TrainConfig(game=game, options=options, **presets.resolve(game, given, options))


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface; every default not given comes from the game's preset."""
    p = cli_parser("experiments.train", __doc__)
    p.add_argument("game", help=f"which game: {', '.join(known_game_ids())}, or all")

    def add(flag: str, key: str, text: str, **kw: Any) -> None:
        p.add_argument(flag, default=None, help=f"{text} (default {presets.per_game(key)})", **kw)

    add("--timesteps", "timesteps", "learner steps", type=positive_int)
    add("--seed", "seed", "seed of everything", type=int)
    add("--n-envs", "n_envs", "parallel envs", type=positive_int)
    add("--vec", "vec", "in-process or subprocess envs", choices=presets.VEC_ENVS)
    add("--shards", "shards", "processes the self-play games are split over (1: all in this one)", type=positive_int)
    add("--update-threads", "update_threads", "torch threads for PPO's update", type=positive_int)
    add("--policy", "policy", f"network ({describe_policies()}; auto: the preset's)", choices=(*POLICY_NAMES, "auto"))
    add("--net", "net", "mlp hidden layer sizes, the first shared by both heads")
    add("--learning-rate", "learning_rate", "Adam learning rate", type=positive_float)
    add("--lr-schedule", "lr_schedule", "constant, or linear: down to 0 at the end", choices=presets.LR_SCHEDULES)
    add("--n-steps", "n_steps", "rollout length per env between updates", type=positive_int)
    add("--batch-size", "batch_size", "PPO minibatch size", type=positive_int)
    add("--n-epochs", "n_epochs", "PPO epochs per update", type=positive_int)
    add("--ent-coef", "ent_coef", "entropy bonus, >= 0", type=nonnegative_float)
    prior = "start from greedy's move and learn where to depart (agents.prior); greedy-scores: from greedy's score"
    add("--prior", "prior", f"{prior} of every move (grid: passing included); none: from scratch", choices=PRIORS)
    add(
        "--shaping",
        "shaping",
        "weight of the shaping reward (the game's potential, e.g. grid's points lead)",
        type=nonnegative_float,
    )
    add("--prior-weight", "prior_weight", "initial logit bonus of the prior's move", type=finite_float)
    add("--pool", "pool", "fixed opponents, comma-separated")
    add("--init", "init", "start from this checkpoint's policy weights (same game and --policy)", metavar="CHECKPOINT")
    add("--snapshot-every", "snapshot_every", "steps between snapshots joining the pool", type=positive_int)
    add("--eval-every", "eval_every", "steps between evaluations", type=positive_int)
    add("--eval-deals", "eval_deals", "deals per evaluation", type=positive_int)
    add("--checkpoint-every", "checkpoint_every", "steps between checkpoints", type=positive_int)
    add("--final-deals", "final_deals", "deals per pair in the final table", type=positive_int)
    add("--workers", "workers", "processes for the final tournament", type=positive_int)
    p.add_argument("--option", type=parse_option, action="append", default=[], metavar="KEY=VALUE", help="game option")
    replays = "the final table writes replays.jsonl: the first N deals of every pair, for python -m jericho_env.web"
    p.add_argument("--record", type=positive_int, default=None, metavar="N", help=replays)
    p.add_argument("--out", default=None, help="run folder (default runs/train/GAME-TIME)")
    p.add_argument("--resume", default=None, metavar="RUN_FOLDER", help="continue the run in this folder")
    trust = "load Stable-Baselines3 zips (--init, --resume of runs before the safe format): they unpickle code"
    p.add_argument("--trust-checkpoint", action="store_true", help=trust + "; only for files you trust")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    add_backend_flags(p)  # where the final table's games run
    return p


def make_model(cfg: TrainConfig, vec: Any, trust: bool = False) -> Any:
    """A new MaskablePPO with the config's network, prior and hyperparameters (and ``--init``'s weights)."""
    from sb3_contrib import MaskablePPO

    from agents.checkpoint import attach_meta
    from agents.nets import build_policy
    from agents.ppo import linear_to_zero, start_from
    from agents.rollout import FlatRolloutBuffer
    from experiments.checkpoints import run_meta

    policy, kwargs = build_policy(cfg.policy, cfg.game, cfg.options, cfg.net, cfg.prior, cfg.prior_weight)
    rate = linear_to_zero(cfg.learning_rate) if cfg.lr_schedule == "linear" else cfg.learning_rate
    ppo = {k: getattr(cfg, k) for k in ("n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda", "ent_coef")}
    model = MaskablePPO(
        policy,
        vec,
        rate,
        **ppo,
        policy_kwargs=kwargs,
        seed=cfg.seed,
        device="cpu",
        rollout_buffer_class=FlatRolloutBuffer,
    )
    attach_meta(model, run_meta(dataclasses.asdict(cfg)))  # what its checkpoints record (agents.checkpoint)
    if cfg.init:
        start_from(model, cfg.init, trust)
    return model


def update_with_threads(model: Any, threads: int) -> None:
    """Run ``model``'s PPO updates on ``threads`` torch threads, and the rest (rollouts) on one.

    During an update the shards' worker processes wait for actions, so a second thread has a core of its
    own; rollouts' forward passes are small batches, which more threads only slow down.
    """
    if threads == 1:
        return
    import torch

    update = model.train

    def train() -> None:
        torch.set_num_threads(threads)
        try:
            update()
        finally:
            torch.set_num_threads(1)

    model.train = train


def train(cfg: TrainConfig, folder: Path, quiet: bool = False, resume: bool = False, trust: bool = False) -> Path:
    """Train (or continue training) in ``folder``; returns the final model's path.

    ``trust``: Stable-Baselines3 zips (``--init``, or resuming a run from before the safe format) may be
    loaded, which unpickles them (``agents.checkpoint``).
    """
    import torch
    from stable_baselines3.common.utils import set_random_seed

    from agents.checkpoint import attach_meta, load_model_for_resume, model_meta, save_checkpoint
    from experiments.callbacks import Every, TrainCallback, eval_text
    from experiments.checkpoints import run_meta
    from experiments.selfplay import add_snapshot, evaluate, make_vec_env

    set_random_seed(cfg.seed)
    torch.set_num_threads(1)  # more threads contend for the 2 cores (docs/research/ppo-notes.md)
    # torch checks every distribution's arguments (a simplex test per masked Categorical, per call); the
    # masks and logits come from our own code, so the training process skips those checks
    torch.distributions.Distribution.set_default_validate_args(False)
    run = RunFolder(folder)
    done, checkpoint = run.restore(trust) if resume else (0, None)
    vec = make_vec_env(cfg, run.snapshots, trust)
    if checkpoint is not None:
        model = load_model_for_resume(checkpoint, vec, trust)  # the saved hyperparameters and tensors
        model.num_timesteps = done
        if not hasattr(model, "_jericho_meta"):  # an SB3 zip of an earlier version: save in the safe format
            attach_meta(model, run_meta(dataclasses.asdict(cfg)))
        meta = model_meta(model)
        meta.training = {"hyperparameters": meta.training["hyperparameters"]}  # counters and run state: per save
    else:
        model = make_model(cfg, vec, trust)
        save_checkpoint(model, run.initial)  # the starting policy joins the final tournament as "untrained"
    update_with_threads(model, cfg.update_threads)
    model.set_logger(run.logger(done))
    run.begin_session(done)

    def snapshot(model: Any, steps: int) -> None:
        add_snapshot(vec, cfg, model, run.save_snapshot(model, steps, cfg.max_snapshots), steps)

    def evaluation(model: Any, steps: int) -> str:
        run.evals.append(evaluate(model, cfg, steps))
        return eval_text(run.evals[-1])

    actions = [
        Every(cfg.snapshot_every, snapshot),
        Every(cfg.eval_every, evaluation),
        Every(cfg.checkpoint_every, run.save_checkpoint),
    ]
    t0 = time.perf_counter()
    if cfg.timesteps > done:
        callback = TrainCallback(done, cfg.timesteps, f"train {cfg.game}", quiet, actions)
        try:
            model.learn(cfg.timesteps - done, callback=callback, reset_num_timesteps=False)
        except KeyboardInterrupt:
            run.save_checkpoint(model, model.num_timesteps)
            resume_with = f"python -m experiments.train {cfg.game} --resume {folder}"
            print(f"\ninterrupted: checkpoint saved at {model.num_timesteps} steps. Resume with:\n  {resume_with}")
            raise
        finally:
            callback.close()
    seconds = time.perf_counter() - t0
    final = run.folder / "final.zip"
    save_checkpoint(model, final)
    run.save_checkpoint(model, model.num_timesteps)
    vec.close()
    run.save_training(model.num_timesteps, model.num_timesteps - done, seconds)
    return final


def train_one(
    cfg: TrainConfig, folder: Path, resume: bool, quiet: bool, trust: bool = False, backend: Backend = LOCAL
) -> dict[str, Any]:
    """Train (or resume) one game, then play, print and save the final tournament (on ``backend``)."""
    from experiments.evaluate import against_baselines
    from experiments.report import learning_curves

    print(f"training {cfg.game} for {cfg.timesteps} steps; run folder {folder}/")
    t0 = time.perf_counter()
    final = train(cfg, folder, quiet, resume, trust)
    initial = folder / "checkpoints" / "initial.zip"  # what PPO started from (runs before issue 16: only with a prior)
    untrained = str(initial) if initial.is_file() else None
    table = (cfg.final_deals, cfg.seed, cfg.workers, cfg.options, str(folder / "tournament"), quiet)
    summary = against_baselines(cfg.game, "ppo", str(final), *table, untrained=untrained, trust=trust, backend=backend)
    wall = time.perf_counter() - t0
    learning_curves(folder)  # skipped with a note when matplotlib is missing
    print(f"\n## {cfg.game}: final table (seed {cfg.seed}, {cfg.timesteps} steps, {wall / 60:.1f} min wall time)\n")
    print(summary["table"])
    print(f"\noutputs in {folder}/ (model final.zip, tournament/, config.json, learning_curves.png, logs/progress.csv)")
    return {"folder": folder, "summary": summary, "wall_seconds": wall}


def config_from_args(args: argparse.Namespace, game: str) -> TrainConfig:
    """The config of a new run from the command line (the ``--init`` checkpoint checked before any work)."""
    from agents.checkpoint import load_policy

    given = {key: getattr(args, key, None) for key in presets.PRESETS["default"]}  # no flag: from the preset
    given["policy"] = None if args.policy == "auto" else args.policy
    cfg = make_config(game, dict(args.option), **given)
    if cfg.init:  # missing, damaged, unsafe or for another game: a clear error before the run folder is made
        load_policy(cfg.init, trust=getattr(args, "trust_checkpoint", False), game_id=game, options=cfg.options)
    return cfg


def resumed_config(folder: str, game: str, timesteps: int | None) -> TrainConfig:
    """The config of the run in ``folder``; a larger ``--timesteps`` extends it (and is written back)."""
    saved = RunFolder.saved_config(folder, game)
    known = {f.name for f in dataclasses.fields(TrainConfig)}
    unknown = sorted(set(saved) - known)
    if unknown:
        raise ValueError(
            f"--resume: {folder}/config.json has unknown field(s) {', '.join(unknown)}; "
            f"a training config holds {', '.join(sorted(known))}"
        )
    if not isinstance(saved.get("options", {}), dict):
        raise ValueError(f"--resume: {folder}/config.json: options must be a JSON object, got {saved['options']!r}")
    cfg = make_config(game, saved.pop("options", {}), **{k: v for k, v in saved.items() if k != "game"})
    if timesteps is not None and timesteps > cfg.timesteps:
        cfg.timesteps = timesteps
        RunFolder(Path(folder)).save_config(dataclasses.asdict(cfg))
    return cfg


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    from experiments.provenance import record_session
    from experiments.replays import record_replays
    from experiments.report import run_folder

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
        for game in games:  # every path checked before any work
            if not args.resume:
                check_out(outs[game], "--out", run_kind="training run", resume_hint=True)
        for game in games:
            if args.resume:
                cfg, folder = resumed_config(args.resume, game, args.timesteps), Path(args.resume)
            else:
                cfg = config_from_args(args, game)
                folder = run_folder("train", game, outs[game])
                RunFolder(folder).save_config(dataclasses.asdict(cfg))  # the values used, not "the preset of the day"
            record_session(folder, "experiments.train", argv)  # the command and commit (experiments.provenance)
            train_one(cfg, folder, bool(args.resume), args.quiet, args.trust_checkpoint, backend)
            if args.record:  # the final table's games (experiments.replays)
                path, count = record_replays(folder / "tournament", args.record)
                print(f"{count} replays in {path} (python -m jericho_env.web shows them)")

    return run_cli(parser, run)


if __name__ == "__main__":
    sys.exit(main())
