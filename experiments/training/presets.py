"""Training presets as data: a ``default`` entry and, per game, only what differs from it.

In the manner of rl-baselines3-zoo's ``hyperparams/ppo.yml``: ``resolve`` merges ``default``, the
game's entry and the values given on the command line, once, into every value a run uses (the
``experiments.train.TrainConfig`` that config.json records). Any registered game trains on
``default``; a game's entry states what its measurements changed (``docs/results.md``, "Why the
presets are what they are"). Opponents the game lacks (``greedy`` for a game without a greedy agent)
are dropped from the preset's pool and evaluation opponent, with one printed line saying so; named
explicitly, they are an error.

The table is a Python dict rather than a YAML or TOML file: no new dependency (PyYAML is not a core
dependency and ``tomllib`` arrives only with Python 3.11), and the values keep their Python types.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Collection, Mapping
from typing import Any

from agents.nets import check_policy
from agents.prior import hint_size
from agents.registry import TrainingAgents, training_agents
from jericho_env.registry import make_rules

PRESETS: dict[str, dict[str, Any]] = {
    "default": {
        "timesteps": 1_000_000,
        "seed": 0,
        "n_envs": 64,
        "shards": 2,
        "update_threads": 2,
        "policy": "mlp",
        "net": "256,128",
        "learning_rate": 3e-4,
        "lr_schedule": "constant",
        "n_steps": 64,
        "batch_size": 2048,
        "n_epochs": 4,
        "gamma": 0.997,
        "gae_lambda": 0.95,
        "ent_coef": 0.01,
        "prior": "none",
        "prior_weight": 5.0,
        "init": None,
        "pool": "random,greedy",
        "snapshot_every": 100_000,
        "max_snapshots": 5,
        "eval_every": 200_000,
        "eval_opponent": "greedy",
        "eval_deals": 50,
        "checkpoint_every": 200_000,
        "final_deals": 250,
        "workers": 2,
    },
    "grid": {
        "policy": "grid-cells",
        "prior": "greedy-scores",
        "pool": "greedy",
        "n_steps": 32,
        "batch_size": 1024,
        "n_epochs": 2,
        "snapshot_every": 200_000,
        "eval_every": 250_000,
        "checkpoint_every": 250_000,
    },
    "walls": {
        "timesteps": 4_000_000,
        "prior": "greedy-scores",
        "pool": "random,greedy,greedy",
        "n_envs": 256,
        "n_steps": 16,
        "snapshot_every": 250_000,
        "eval_every": 500_000,
        "checkpoint_every": 500_000,
    },
    "castles": {
        "timesteps": 8_000_000,
        "net": "128,64",
        "n_envs": 256,
        "n_steps": 16,
        "n_epochs": 3,
        "learning_rate": 1e-3,
        "lr_schedule": "linear",
        "pool": "random,random,greedy,greedy",
        "snapshot_every": 250_000,
        "eval_every": 500_000,
        "eval_deals": 100,
        "checkpoint_every": 500_000,
    },
}
LR_SCHEDULES = ("constant", "linear")
# settings that config.json of older runs may hold and this version no longer has
RETIRED = {"vec": "selfplay", "shaping": 0.0}


def preset(game_id: str) -> dict[str, Any]:
    """``default`` updated with the game's entry, as written in the table (not yet checked against the game)."""
    return {**PRESETS["default"], **PRESETS.get(game_id, {})}


def per_game(key: str) -> str:
    """``key``'s default and the games that change it, for ``--help``: ``"200000; grid: 150000, ..."``."""
    default = PRESETS["default"][key]
    games = [f"{g}: {entry[key]}" for g, entry in PRESETS.items() if g != "default" and key in entry]
    return ("none" if default is None else str(default)) + (f"; {', '.join(games)}" if games else "")


def resolve(
    game_id: str,
    given: Mapping[str, Any],
    options: Mapping[str, Any] | None = None,
    report: Callable[[str], object] = print,
) -> dict[str, Any]:
    """Every training value for ``game_id``: its preset, then the ``given`` values that are not None.

    Checks each value against the game (options, network, prior, pool, evaluation opponent); the
    preset's opponents that the game lacks are dropped and ``report`` says which.
    """
    make_rules(game_id, **dict(options or {}))  # unknown games and bad options fail here
    values = preset(game_id)
    unknown = sorted(set(given) - set(values))
    if unknown:
        raise ValueError(f"unknown training settings {', '.join(unknown)}; known: {', '.join(values)}")
    explicit = {k: v for k, v in given.items() if v is not None}
    values.update(explicit)
    if values["init"] == "":  # config.json of runs before the presets wrote "" for no checkpoint
        values["init"] = None
    if "shards" not in explicit and isinstance(values["n_envs"], int):  # the preset's split, where it applies
        values["shards"] = min(values["shards"], max(values["n_envs"], 1))
    agents = check(game_id, values, options, preset={"pool", "eval_opponent"} - set(explicit))
    if agents.dropped:
        report(f"{game_id}: agents it lacks are dropped from the preset: {'; '.join(agents.dropped)}")
    values["pool"], values["eval_opponent"] = agents.pool, agents.eval_opponent
    rollout = values["n_envs"] * values["n_steps"]
    if "batch_size" not in explicit and values["batch_size"] > rollout:  # a small run: one minibatch per rollout
        report(f"{game_id}: batch_size {values['batch_size']} -> {rollout}, the samples of one rollout")
        values["batch_size"] = rollout
    return values


def check_minibatch(batch_size: int, n_envs: int, n_steps: int) -> None:
    """A clear ``ValueError`` if ``--batch-size`` asks for more samples than one rollout holds."""
    if batch_size > n_envs * n_steps:
        raise ValueError(
            f"--batch-size {batch_size} is more than one rollout holds: --n-envs {n_envs} x --n-steps {n_steps} "
            f"= {n_envs * n_steps} samples (lower --batch-size, or raise --n-envs or --n-steps)"
        )


def saved_settings(config: Mapping[str, Any], where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(options, settings) of a run's config.json: unknown fields refused, retired ones dropped (with a note)."""
    config = dict(config)
    for key, only in RETIRED.items():
        if key in config and config.pop(key) != only:
            print(f"{where}: this version trains with {key} {only} only (docs/history/retired.md)")
    known = {"game", "options", *PRESETS["default"]}
    unknown = sorted(set(config) - known)
    if unknown:
        raise ValueError(
            f"{where}/config.json has unknown field(s) {', '.join(unknown)}; a training config holds "
            f"{', '.join(sorted(known))}"
        )
    options = config.pop("options", {})
    if not isinstance(options, dict):
        raise ValueError(f"{where}/config.json: options must be a JSON object, got {options!r}")
    config.pop("game", None)
    return options, config


# Numeric settings: (whole number?, test, what is allowed). The command line checks its flags with the
# same words (experiments.cli); a config.json read back by --resume is checked here.
NUMBERS: dict[str, tuple[bool, Callable[[float], bool], str]] = {
    **{
        k: (True, lambda v: v >= 1, "a whole number >= 1")
        for k in ("timesteps", "n_envs", "n_steps", "n_epochs", "snapshot_every", "max_snapshots", "eval_every")
    },
    **{
        k: (True, lambda v: v >= 1, "a whole number >= 1")
        for k in ("eval_deals", "checkpoint_every", "final_deals", "workers", "shards", "update_threads")
    },
    # PPO normalises each minibatch's advantages: a minibatch of one sample has none to normalise
    "batch_size": (True, lambda v: v >= 2, "a whole number >= 2"),
    "seed": (True, lambda v: 0 <= v < 2**32, "a whole number in 0..2**32-1 (Stable-Baselines3 seeds from 32 bits)"),
    "learning_rate": (False, lambda v: 0 < v < math.inf, "a finite number above 0"),
    "gamma": (False, lambda v: 0 < v <= 1, "a number in (0, 1]"),
    "gae_lambda": (False, lambda v: 0 <= v <= 1, "a number in [0, 1]"),
    "ent_coef": (False, lambda v: 0 <= v < math.inf, "a finite number >= 0"),
    "prior_weight": (False, math.isfinite, "a finite number"),
}


# Upper bounds, each with its reason (the memory of a rollout is checked apart: check_rollout)
LIMITS: dict[str, tuple[int, str]] = {
    "n_envs": (100_000, "games held in memory at once"),
    "eval_deals": (100_000, "games held in memory at once"),
    "final_deals": (1_000_000, "deals per pair of the final table"),
    "shards": (256, "worker processes"),
    "update_threads": (256, "torch threads"),
}


def check_numbers(values: Mapping[str, Any]) -> None:
    """A clear ``ValueError`` for the first numeric setting of the wrong type or out of range (nan included)."""
    for key, (whole, ok, allowed) in NUMBERS.items():
        v = values[key]
        number = isinstance(v, int) if whole else isinstance(v, (int, float))
        if isinstance(v, bool) or not number or not ok(float(v)) or (not whole and math.isnan(float(v))):
            raise ValueError(f"{key} (--{key.replace('_', '-')}) must be {allowed}, got {v!r}")
    for key, (most, what) in LIMITS.items():
        if values[key] > most:
            raise ValueError(f"{key} (--{key.replace('_', '-')}) must be at most {most} ({what}), got {values[key]!r}")
    for key in ("policy", "net", "lr_schedule", "prior", "pool", "eval_opponent"):
        if not isinstance(values[key], str):
            raise ValueError(f"{key} (--{key.replace('_', '-')}) must be text, got {values[key]!r}")
    if values["init"] is not None and not isinstance(values["init"], str):
        raise ValueError(f"init (--init) must be a checkpoint path or null, got {values['init']!r}")


def check(
    game_id: str, values: Mapping[str, Any], options: Mapping[str, Any] | None = None, preset: Collection[str] = ()
) -> TrainingAgents:
    """A clear ``ValueError`` for the first value that ``game_id`` (under ``options``) cannot train with.

    The agents the values name (network, prior, pool, evaluation opponent) are checked by one call,
    ``agents.registry.training_agents``, which returns them as the run uses them; the opponents among
    ``preset`` (the keys whose value came from the preset) that the game lacks are dropped there.
    """
    check_numbers(values)
    num_actions = make_rules(game_id, **dict(options or {})).info.num_actions
    agents = training_agents(game_id, num_actions, values, preset)
    if values["lr_schedule"] not in LR_SCHEDULES:
        raise ValueError(f"--lr-schedule takes one of {', '.join(LR_SCHEDULES)}, got {values['lr_schedule']!r}")
    if values["shards"] > values["n_envs"]:
        raise ValueError(f"--shards {values['shards']} is more than the {values['n_envs']} games (--n-envs) to split")
    check_rollout(game_id, values, options, hint=agents.hint_size)
    return agents


def check_rollout(
    game_id: str,
    values: Mapping[str, Any],
    options: Mapping[str, Any] | None = None,
    memory: int | None = None,
    hint: int | None = None,
) -> None:
    """A clear ``ValueError`` if one rollout (``n_envs`` x ``n_steps`` samples) cannot be held in memory.

    PPO's buffer keeps, per sample, the observation (with the prior's hint) and the action mask as
    float32; one sample alone has no advantage to normalise. ``memory``: bytes available (default: this
    machine's physical memory, where the platform says it). ``hint``: the floats the prior's hint adds to
    each sample (default: ``agents.prior.hint_size`` of ``values["prior"]``).
    """
    samples = values["n_envs"] * values["n_steps"]
    flags = f"--n-envs {values['n_envs']} x --n-steps {values['n_steps']}"
    if samples < 2:
        raise ValueError(f"{flags} is one sample per rollout: PPO needs at least 2 (raise either)")
    info = make_rules(game_id, **dict(options or {})).info
    if hint is None:
        hint = hint_size(values["prior"], info.num_actions)
    floats = info.observation_size + hint + info.num_actions
    need = 4 * floats * samples
    if memory is None and hasattr(os, "sysconf"):
        try:
            memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError):
            memory = None
    if memory is not None and need > memory:
        raise ValueError(
            f"{flags} = {samples} samples per rollout need about {need / 2**30:.1f} GB for PPO's buffer "
            f"({floats} floats each), more than this machine's {memory / 2**30:.1f} GB: lower --n-envs or --n-steps"
        )


# ----------------------------------------------------------------------------------------------------------
# Expert iteration (experiments.exit): a default entry and what each game changes, as for PPO above.
# What each value is based on: docs/results.md, "Expert iteration".
EXIT: dict[str, dict[str, Any]] = {
    "default": {
        "seed": 0,
        "iterations": 8,  # generate -> learn -> evaluate, this many times
        "games": 200,  # self-play games per iteration
        "games_at_once": 25,  # games a worker plays in lockstep (one forward pass per round for all their leaves)
        "simulations": 64,  # search simulations per self-play move
        "c_puct": 1.5,  # PUCT's exploration weight
        "dirichlet_alpha": 0.5,  # root noise in self-play (AlphaZero): Dirichlet(alpha) per legal action...
        "dirichlet_fraction": 0.25,  # ...mixed into the root prior with this weight
        "temperature_moves": 6,  # a seat's first decisions drawn from the visit distribution, then the most visited
        "start": "ppo",  # the first network: "ppo" (a PPO checkpoint), "prior" (greedy's scores), "scratch"
        "init": None,  # the checkpoint "ppo" starts from (None: --ppo's)
        "ppo": None,  # the default PPO run's checkpoint: opponent in evaluations and the final table
        "policy": "auto",  # for "prior" and "scratch": the network, as experiments.train's --policy
        "buffer": 60_000,  # training rows kept (the latest)
        "learning_rate": 3e-4,
        "weight_decay": 1e-4,
        "batch_size": 512,
        "updates": 300,  # minibatch steps per iteration
        "value_weight": 1.0,
        "eval_deals": 100,  # deals per evaluation opponent each iteration (network alone)
        "final_deals": 250,  # deals per pair in the final table
        "final_simulations": None,  # exit-search and ismcts in the final table (None: ismcts's default budget)
        "workers": 2,
        "expert": "puct",  # who plays the games and gives the targets, the network in search: "puct", or
        # "rollouts" (its own games played on from every action)
        "expert_simulations": None,  # "rollouts": games per action (None: 16)
        "expert_temperature": 0.1,  # "rollouts": its policy softmax(log prior + Q / this)
        "target": "policy",  # what the network learns at a decision: the expert's distribution, or
        # ("advantage", rollouts only) its logits regressed on log prior + centred Q / expert_temperature
    },
    "grid": {},
    "walls": {},
    "castles": {},
}
EXIT_STARTS = ("ppo", "prior", "scratch")
EXIT_EXPERTS = ("puct", "rollouts")
EXIT_TARGETS = ("policy", "advantage")


def exit_preset(game_id: str) -> dict[str, Any]:
    """Expert iteration's ``default`` entry updated with the game's."""
    return {**EXIT["default"], **EXIT.get(game_id, {})}


EXIT_NUMBERS: dict[str, tuple[bool, Callable[[float], bool], str]] = {
    **{
        k: (True, lambda v: v >= 1, "a whole number >= 1")
        for k in ("iterations", "games", "games_at_once", "simulations", "buffer", "batch_size", "updates")
    },
    **{k: (True, lambda v: v >= 1, "a whole number >= 1") for k in ("eval_deals", "final_deals", "workers")},
    "temperature_moves": (True, lambda v: v >= 0, "a whole number >= 0"),
    "seed": (True, lambda v: 0 <= v < 2**32, "a whole number in 0..2**32-1"),
    "c_puct": (False, lambda v: 0 < v < math.inf, "a finite number above 0"),
    "dirichlet_alpha": (False, lambda v: 0 < v < math.inf, "a finite number above 0"),
    "dirichlet_fraction": (False, lambda v: 0 <= v < 1, "a number in [0, 1)"),
    "learning_rate": (False, lambda v: 0 < v < math.inf, "a finite number above 0"),
    "weight_decay": (False, lambda v: 0 <= v < math.inf, "a finite number >= 0"),
    "value_weight": (False, lambda v: 0 <= v < math.inf, "a finite number >= 0"),
    "expert_temperature": (False, lambda v: 0 < v < math.inf, "a finite number above 0"),
}


def resolve_exit(game_id: str, given: Mapping[str, Any], options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Every expert-iteration value for ``game_id``: its preset, then the ``given`` values that are not None."""
    make_rules(game_id, **dict(options or {}))
    values = exit_preset(game_id)
    unknown = sorted(set(given) - set(values))
    if unknown:
        raise ValueError(f"unknown expert-iteration settings {', '.join(unknown)}; known: {', '.join(values)}")
    values.update({k: v for k, v in given.items() if v is not None})
    for key, (whole, ok, allowed) in EXIT_NUMBERS.items():
        v = values[key]
        number = isinstance(v, int) if whole else isinstance(v, (int, float))
        if isinstance(v, bool) or not number or (not whole and math.isnan(float(v))) or not ok(float(v)):
            raise ValueError(f"{key} (--{key.replace('_', '-')}) must be {allowed}, got {v!r}")
    for key in ("final_simulations", "expert_simulations"):  # None: the default budget
        v = values[key]
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise ValueError(f"{key} (--{key.replace('_', '-')}) must be a whole number >= 1, got {v!r}")
    if values["target"] not in EXIT_TARGETS:
        raise ValueError(f"--target takes one of {', '.join(EXIT_TARGETS)}, got {values['target']!r}")
    if values["expert"] not in EXIT_EXPERTS:
        raise ValueError(f"--expert takes one of {', '.join(EXIT_EXPERTS)}, got {values['expert']!r}")
    if values["target"] == "advantage" and values["expert"] != "rollouts":
        raise ValueError(
            f"--target advantage needs the action values of --expert rollouts, got --expert {values['expert']}"
        )
    if values["start"] not in EXIT_STARTS:
        raise ValueError(f"--start takes one of {', '.join(EXIT_STARTS)}, got {values['start']!r}")
    if values["policy"] != "auto":
        check_policy(values["policy"], game_id)
    for key in ("init", "ppo"):
        if values[key] is not None and not isinstance(values[key], str):
            raise ValueError(f"{key} (--{key}) must be a checkpoint path, got {values[key]!r}")
    return values
