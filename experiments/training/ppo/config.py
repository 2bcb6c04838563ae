"""The config of an ``experiments.train`` run (``TrainConfig``): the three learners' idiom
(``experiments.training.config.RunConfig``), its defaults in ``experiments.training.presets.PPO``, checked once."""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Mapping
from typing import Any, ClassVar

from agents.nets import POLICY_NAMES, describe_policies
from agents.prior import PRIORS, prior_size
from agents.registry import training_agents
from experiments import cli
from experiments.training import presets
from experiments.training.config import Compat, RunConfig, flag
from jericho_env.registry import make_rules


@dataclasses.dataclass
class TrainConfig(RunConfig):
    """Everything a PPO run depends on, every value concrete; config.json records it."""

    timesteps: int = flag("learner steps to train for", cli.positive_int)
    seed: int = flag("seeds torch, numpy, the games, the opponents and the final tournament", cli.training_seed)
    n_envs: int = flag("games played at once, in lockstep, feeding PPO (held in memory at once)", cli.int_in(1, 10**5))
    shards: int = flag("processes the games are split over (1: all in the training process)", cli.int_in(1, 256))
    update_threads: int = flag("torch threads for PPO's update (rollouts use one)", cli.int_in(1, 256))
    policy: str = flag(f"the network ({describe_policies()}; auto: the preset's)", choices=(*POLICY_NAMES, "auto"))
    net: str = flag("mlp layer sizes: the first shared by the policy and value heads, the rest per head")
    learning_rate: float = flag("Adam's learning rate (its start, with the linear schedule)", cli.positive_float)
    lr_schedule: str = flag("constant, or linear: down to 0 at the end", choices=("constant", "linear"))
    n_steps: int = flag("rollout length per game between updates", cli.positive_int)
    # PPO normalises each minibatch's advantages: a minibatch of one sample has none to normalise
    batch_size: int = flag("PPO minibatch size (2 to --n-envs x --n-steps)", cli.int_in(2, 10**9))
    n_epochs: int = flag("PPO epochs per update", cli.positive_int)
    gamma: float = flag("discount (rewards come only at the end of a game)", cli.fraction)
    gae_lambda: float = flag("GAE's lambda", cli.fraction)
    ent_coef: float = flag("entropy bonus, >= 0", cli.nonnegative_float)
    prior: str = flag("the prior the policy starts from (agents.prior; none: from scratch)", choices=PRIORS)
    prior_weight: float = flag("initial logit bonus of the prior's move (trained with the rest)", cli.finite_float)
    init: str | None = flag("a checkpoint whose policy weights start the run (same game, --policy)", metavar="CKPT")
    pool: str = flag("fixed opponents, comma-separated (a name twice: twice the share); snapshots join them")
    snapshot_every: int = flag("steps between frozen copies of the learner joining the pool", cli.positive_int)
    max_snapshots: int = flag("the latest snapshots the pool keeps", cli.positive_int)
    eval_every: int = flag("steps between evaluations", cli.positive_int)
    eval_opponent: str = flag("the baseline the evaluations play (greedy, where the game has one)")
    eval_deals: int = flag("deals per evaluation (each played in every seat arrangement)", cli.int_in(1, 10**5))
    checkpoint_every: int = flag("steps between checkpoints", cli.positive_int)
    final_deals: int = flag("deals per pair in the final tournament", cli.int_in(1, 10**6))
    workers: int = flag("processes for the final tournament", cli.positive_int)

    COMMAND: ClassVar[str] = "experiments.train"
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = presets.PPO
    BUDGET: ClassVar[str] = "timesteps"
    # vec: the single-agent route (before the batched self-play env); shaping: retired (docs/history/retired.md)
    COMPAT: ClassVar[Compat] = Compat(retired={"vec": "selfplay", "shaping": 0.0}, noted=("vec",))
    RUN_FLAGS: ClassVar[tuple[str, ...]] = (
        *RunConfig.RUN_FLAGS, "--record", "--trust-checkpoint", "--backend", "--ray-address",
    )  # fmt: skip

    @classmethod
    def given(cls, args: argparse.Namespace) -> dict[str, Any]:
        """The flags given; ``--policy auto`` is the preset's network, as not giving it."""
        given = super().given(args)
        if given.get("policy") == "auto":
            given["policy"] = None
        return given

    @classmethod
    def resolve(cls, game: str, options: dict[str, Any], values: dict[str, Any], explicit: set[str]) -> dict[str, Any]:
        """The agents checked against the game, the preset's opponents it lacks dropped, the sizes settled."""
        if values["init"] == "":  # config.json of runs before the presets wrote "" for no checkpoint
            values["init"] = None
        if values["policy"] == "auto":
            values["policy"] = cls.preset(game)["policy"]
        if "shards" not in explicit:  # the preset's split, where it applies
            values["shards"] = min(values["shards"], values["n_envs"])
        if values["shards"] > values["n_envs"]:
            raise ValueError(
                f"--shards {values['shards']} is more than the {values['n_envs']} games (--n-envs) to split"
            )
        num_actions = make_rules(game, **options).info.num_actions
        agents = training_agents(game, num_actions, values, {"pool", "eval_opponent"} - explicit)
        if agents.dropped:
            print(f"{game}: agents it lacks are dropped from the preset: {'; '.join(agents.dropped)}")
        values["pool"], values["eval_opponent"] = agents.pool, agents.eval_opponent
        check_rollout(game, values, options, prior=agents.prior_size)
        rollout = values["n_envs"] * values["n_steps"]
        if "batch_size" in explicit:  # asked for: refused if one rollout holds fewer samples
            check_minibatch(values["batch_size"], values["n_envs"], values["n_steps"])
        elif values["batch_size"] > rollout:  # a small run: one minibatch per rollout
            print(f"{game}: batch_size {values['batch_size']} -> {rollout}, the samples of one rollout")
            values["batch_size"] = rollout
        return values

    @classmethod
    def from_args(cls, args: argparse.Namespace, game: str) -> TrainConfig:
        """The run's config; a new run's ``--init`` checkpoint loaded once here (an error before the run starts)."""
        from agents.checkpoint import load_policy

        cfg = super().from_args(args, game)
        if cfg.init and not getattr(args, "resume", None):
            load_policy(cfg.init, trust=getattr(args, "trust_checkpoint", False), game_id=game, options=cfg.options)
        return cfg


make_config = TrainConfig.make  # the game's preset with the given values that are not None on top, checked
config_from_args = TrainConfig.from_args  # --resume's config.json, or the flags on the game's preset, checked


def check_minibatch(batch_size: int, n_envs: int, n_steps: int) -> None:
    """A clear ``ValueError`` if ``--batch-size`` asks for more samples than one rollout holds."""
    if batch_size > n_envs * n_steps:
        raise ValueError(
            f"--batch-size {batch_size} is more than one rollout holds: --n-envs {n_envs} x --n-steps {n_steps} "
            f"= {n_envs * n_steps} samples (lower --batch-size, or raise --n-envs or --n-steps)"
        )


def physical_memory() -> int | None:
    """This machine's memory in bytes, where the system tells it (``os.sysconf``), else None."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def check_rollout(
    game_id: str,
    values: Mapping[str, Any],
    options: Mapping[str, Any] | None = None,
    memory: int | None = None,
    prior: int | None = None,
) -> None:
    """A clear ``ValueError`` if one rollout (``n_envs`` x ``n_steps`` samples) is one sample or exceeds ``memory``."""
    samples = values["n_envs"] * values["n_steps"]
    flags = f"--n-envs {values['n_envs']} x --n-steps {values['n_steps']}"
    if samples < 2:
        raise ValueError(f"{flags} is one sample per rollout: PPO needs at least 2 (raise either)")
    info = make_rules(game_id, **dict(options or {})).info
    if prior is None:
        prior = prior_size(values["prior"], info.num_actions)
    floats = info.observation_size + prior + info.num_actions
    need = 4 * floats * samples
    memory = physical_memory() if memory is None else memory
    if memory is not None and need > memory:
        raise ValueError(
            f"{flags} = {samples} samples per rollout need about {need / 2**30:.1f} GB for PPO's buffer "
            f"({floats} floats each), more than this machine's {memory / 2**30:.1f} GB: lower --n-envs or --n-steps"
        )
