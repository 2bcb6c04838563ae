"""The config of a ``experiments.train`` run: every value concrete, resolved and checked once, before any work.

``TrainConfig`` is what a run depends on (config.json records it); each field with a flag carries its help and
argparse type (``flag``), from which ``experiments.train.build_parser`` makes the command line.
``make_config`` resolves a game's preset under the given values (``experiments.training.presets.resolve``:
every check, the prior's against the game included, happens there once); ``config_from_args`` reads the flags,
or a run's config.json for ``--resume`` (where a flag that differs from the run's config is refused, naming
it: only a larger ``--timesteps`` extends the run).
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from agents.nets import POLICY_NAMES, describe_policies
from agents.prior import PRIORS
from experiments import cli
from experiments.training import presets
from experiments.training.run_folder import RunFolder
from jericho_env.registry import make_rules


def flag(text: str, kind: Any = None, **argparse_kw: Any) -> Any:
    """A ``TrainConfig`` field that is also the flag ``--field-name``: its help and its argparse type."""
    return dataclasses.field(metadata={"help": text, "type": kind, **argparse_kw})


@dataclasses.dataclass
class TrainConfig:
    """Everything a run depends on, every value concrete (``presets.resolve``); config.json records it."""

    game: str  # the game id
    options: dict[str, Any]  # the game's options as given (--option KEY=VALUE; the game's defaults for the others)
    timesteps: int = flag("learner steps to train for", cli.positive_int)
    seed: int = flag("seeds torch, numpy, the games, the opponents and the final tournament", cli.training_seed)
    n_envs: int = flag("games played at once, in lockstep, feeding PPO", cli.positive_int)
    shards: int = flag("processes the games are split over (1: all in the training process)", cli.positive_int)
    update_threads: int = flag("torch threads for PPO's update (rollouts use one)", cli.positive_int)
    policy: str = flag(f"the network ({describe_policies()}; auto: the preset's)", choices=(*POLICY_NAMES, "auto"))
    net: str = flag("mlp layer sizes: the first shared by the policy and value heads, the rest per head")
    learning_rate: float = flag("Adam's learning rate (its start, with the linear schedule)", cli.positive_float)
    lr_schedule: str = flag("constant, or linear: down to 0 at the end", choices=presets.LR_SCHEDULES)
    n_steps: int = flag("rollout length per game between updates", cli.positive_int)
    batch_size: int = flag("PPO minibatch size (at most --n-envs x --n-steps)", cli.positive_int)
    n_epochs: int = flag("PPO epochs per update", cli.positive_int)
    gamma: float  # discount (rewards come only at the end of a game)
    gae_lambda: float  # GAE's lambda
    ent_coef: float = flag("entropy bonus, >= 0", cli.nonnegative_float)
    prior: str = flag("the prior the policy starts from (agents.prior; none: from scratch)", choices=PRIORS)
    prior_weight: float = flag("initial logit bonus of the prior's move (trained with the rest)", cli.finite_float)
    init: str | None = flag("a checkpoint whose policy weights start the run (same game, --policy)", metavar="CKPT")
    pool: str = flag("fixed opponents, comma-separated (a name twice: twice the share); snapshots join them")
    snapshot_every: int = flag("steps between frozen copies of the learner joining the pool", cli.positive_int)
    max_snapshots: int  # the pool keeps this many latest snapshots
    eval_every: int = flag("steps between evaluations", cli.positive_int)
    eval_opponent: str  # the baseline the evaluations play (greedy, where the game has one)
    eval_deals: int = flag("deals per evaluation (each played in every seat arrangement)", cli.positive_int)
    checkpoint_every: int = flag("steps between checkpoints", cli.positive_int)
    final_deals: int = flag("deals per pair in the final tournament", cli.positive_int)
    workers: int = flag("processes for the final tournament", cli.positive_int)


def make_config(game: str, options: dict[str, Any] | None = None, **given: Any) -> TrainConfig:
    """The game's preset (``experiments.training.presets``) with the ``given`` values that are not None on top."""
    return TrainConfig(game=game, options=dict(options or {}), **presets.resolve(game, given, options))


def config_from_args(args: argparse.Namespace, game: str) -> TrainConfig:
    """The run's config, checked before any work: ``--resume``'s config.json, or the flags on the game's preset."""
    from agents.checkpoint import load_policy

    if getattr(args, "resume", None):  # a larger --timesteps extends the run (written back); other flags must agree
        options, saved = presets.saved_settings(RunFolder.saved_config(args.resume, game), f"--resume: {args.resume}")
        cfg = make_config(game, options, **saved)
        check_resume_flags(args, cfg)
        if args.timesteps is not None and args.timesteps > cfg.timesteps:
            cfg.timesteps = args.timesteps
            RunFolder(Path(args.resume)).save_config(dataclasses.asdict(cfg))
        return cfg
    given = {key: getattr(args, key, None) for key in presets.PRESETS["default"]}  # no flag: from the preset
    given["policy"] = None if args.policy == "auto" else args.policy
    cfg = make_config(game, dict(args.option or []), **given)
    if args.batch_size is not None:  # asked for: refused if one rollout holds fewer samples
        presets.check_minibatch(args.batch_size, cfg.n_envs, cfg.n_steps)
    if cfg.init:  # missing, damaged, unsafe or for another game: a clear error before the run folder is made
        load_policy(cfg.init, trust=getattr(args, "trust_checkpoint", False), game_id=game, options=cfg.options)
    return cfg


def check_resume_flags(args: argparse.Namespace, cfg: TrainConfig) -> None:
    """``ValueError`` naming the first flag given beside ``--resume`` that differs from the run's config.json."""
    if args.timesteps is not None and args.timesteps < cfg.timesteps:
        raise ValueError(
            f"--timesteps {args.timesteps} is below the run's {cfg.timesteps}: --resume extends, never cuts"
        )
    given = {f.name: getattr(args, f.name, None) for f in dataclasses.fields(TrainConfig) if f.metadata}
    given["policy"] = None if args.policy == "auto" else args.policy
    if args.option:  # compared as the game resolves them (an option given at its default changes nothing)
        saved = make_rules(cfg.game, **cfg.options).options
        if make_rules(cfg.game, **{**cfg.options, **dict(args.option)}).options != saved:
            raise ValueError(
                f"--option {' '.join(f'{k}={v}' for k, v in args.option)} differs from the run's config.json "
                f"(options {dict(saved)!r}): --resume continues the run as it was configured; start a new run to "
                "change it"
            )
    for key, value in given.items():
        if value is not None and key != "timesteps" and value != getattr(cfg, key):
            raise ValueError(
                f"--{key.replace('_', '-')} {value!r} differs from the run's config.json ({getattr(cfg, key)!r}): "
                "--resume continues the run as it was configured (only a larger --timesteps extends it); "
                "start a new run to change it"
            )
