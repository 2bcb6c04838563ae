"""Deep Monte-Carlo self-play: Q(s, a) regressed on game outcomes by many epsilon-greedy actors (issue 44).

``python -m experiments.dmc GAME``. Actors play the batched engine (``jericho_env.make_batched``), every
seat with the current network (the legal action of highest Q, a random legal one with probability
``--epsilon``); each decision is labelled with its seat's final return and joins a replay buffer of the
latest ``--buffer`` positions; a learner regresses Q(s, a) on them (squared error). The network scores
every action in one pass: an MLP over the observation and one embedding per action id plus a projection
of the action's features (``agents.nets.dmc``). The algorithm: ``experiments.training.dmc``.

The run folder holds ``config.json``, ``checkpoints/latest.zip`` (network, optimizer and every counter,
written every ``--checkpoint-seconds`` and at each evaluation: a kill loses at most that much),
``checkpoints/pos_N.zip`` (the network at each evaluation), ``training.json`` (positions generated and
learned, per-second rates, actor and learner time, evaluations against greedy) and ``final.zip``.
``agents.make("dmc", GAME, path=RUN/final.zip)`` plays it, as does ``--agents dmc=RUN/final.zip`` in
``experiments.evaluate``. Every value not given comes from the game's preset
(``experiments.training.dmc.PRESETS``). ``--backend ray`` runs the actors as ``--actors`` Ray actors, on a
local Ray or a cluster, the learner staying here (``experiments.training.dmc_ray``, docs/ray.md).

Examples:
    python -m experiments.dmc castles
    python -m experiments.dmc grid --positions 200000 --eval-every 100000 --out runs/dmc/grid-try
    python -m experiments.dmc castles --resume runs/dmc/castles-20261204-030000
    python -m experiments.dmc castles --observation 1   # the belief features, where the game has them
    python -m experiments.dmc grid --init runs/dmc/grid-TIME/final.zip --versus greedy,ppo   # on from a network,
                                                        # half its games against greedy, half against the shipped ppo
    python -m experiments.dmc castles --backend ray --actors 2   # the actors as Ray actors (docs/ray.md)
    python -m experiments.dmc castles --teacher A/final.zip+B/final.zip+C/final.zip --positions 3000000
                                                        # one network learns three networks' mean Q
    python -m experiments.dmc castles --init A/final.zip --teacher A/final.zip --teacher-search ""
                                                        # one network learns its own search's values
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

from experiments.cli import (
    check_out,
    cli_parser,
    fraction,
    parse_option,
    positive_float,
    positive_int,
    run_cli,
    training_seed,
)
from experiments.training import dmc, dmc_ray
from jericho_env.registry import known_game_ids

# the game option that selects the observation version, where a game has one (the belief features, issue 44)
OBSERVATION_OPTION = "obs_version"


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface; every default not given comes from the game's preset."""
    p = cli_parser("experiments.dmc", __doc__)
    p.add_argument("game", help=f"which game: {', '.join(known_game_ids())}")

    def add(flag: str, text: str, **kw: Any) -> None:
        key = flag[2:].replace("-", "_")
        shown = dmc.PRESETS["default"][key]
        games = [f"{g}: {e[key]}" for g, e in dmc.PRESETS.items() if g != "default" and key in e]
        p.add_argument(flag, default=None, help=f"{text} (default {shown}{'; ' + ', '.join(games) if games else ''})",
                       **kw)  # fmt: skip

    add("--seed", "seed of everything (0..2**32-1)", type=training_seed)
    add("--positions", "stop after generating this many positions (decisions with 2+ legal actions)",
        type=positive_int)  # fmt: skip
    add("--envs", "games the actors play in lockstep", type=positive_int)
    add("--rounds", "steps of every game per actor phase (then the learner catches up)", type=positive_int)
    add("--epsilon", "chance of a uniformly random legal move instead of the best", type=fraction)
    add("--buffer", "positions kept in the replay buffer (the latest)", type=positive_int)
    add("--batch-size", "positions per learner update", type=positive_int)
    add("--learning-rate", "Adam's learning rate", type=positive_float)
    add("--learning-rate-end", "the learning rate at the end of --positions, reached in a straight line from "
        "--learning-rate over the last --anneal share of the budget; unset, the rate stays constant",
        type=positive_float)  # fmt: skip
    add("--anneal", "share of the --positions budget, at its end, over which the learning rate falls to "
        "--learning-rate-end; a new --positions on --resume moves it with the budget", type=fraction)  # fmt: skip
    add("--clip", "gradient norm clip", type=positive_float)
    add("--net", "hidden layer sizes of the Q network's trunk, e.g. 512,512,256")
    add("--features", "action input: game (id embedding plus the action's features) or none (id embedding alone)",
        choices=("game", "none"))  # fmt: skip
    add("--prior", "greedy-scores: greedy's score of every action as an input and a residual of Q, so that "
        "self-play starts from greedy's play (grid and walls); none: the observation alone",
        choices=("none", "greedy-scores"))  # fmt: skip
    add("--target", "what Q learns: return (the seat's final return, +-1) or margin (its final potential: grid's "
        "points lead / 100, walls' lead in cards won over the best other seat / 20; a less noisy target; grid "
        "and walls)", choices=("return", "margin"))  # fmt: skip
    add("--versus-greedy", "share of the games with one learning seat against a fixed agent in every other seat "
        "(greedy, or one of --versus drawn for each game; the rest: self-play, every seat learning)",
        type=fraction)  # fmt: skip
    add("--versus", "the fixed agents of the --versus-greedy games, comma-separated registered agents that need no "
        "checkpoint (ppo: the shipped network), e.g. greedy,ppo")  # fmt: skip
    add("--lam", "lambda of the target's lambda-return: 1 the game's outcome alone (Monte-Carlo, DouZero's), "
        "less mixes in the network's value of the seat's next decision (Peng's Q(lambda))", type=fraction)  # fmt: skip
    add("--replay-ratio", "positions learned per position generated", type=positive_float)
    add("--eval-every", "positions generated between evaluations against greedy", type=positive_int)
    add("--eval-deals", "seat-swapped deals per evaluation", type=positive_int)
    add("--checkpoint-seconds", "seconds between checkpoints (latest.zip, training.json)", type=positive_float)
    add("--init", "a dmc checkpoint (final.zip, checkpoints/pos_N.zip) whose network this new run starts from; the "
        "same game, options and layers (grid: also of an earlier observation version, the new inputs' weights "
        "0); optimizer and counters start afresh", metavar="CHECKPOINT")  # fmt: skip
    add("--teacher", "dmc checkpoints, A.zip or A.zip+B.zip+C.zip: every position learns their mean Q of every "
        "legal action instead of the game's outcome (distillation into one network; the positions are still this "
        "run's own games; --target and --lam do not apply; grid: the action taken and the teacher's best learn their "
        "mean Q)", metavar="CHECKPOINTS")  # fmt: skip
    add("--teacher-level", "with --teacher: the weight of each position's mean error over its legal actions (the "
        "level of Q) against the errors in the differences between them (which decide the move); 1: the plain "
        "squared error", type=positive_float)  # fmt: skip
    add("--teacher-search", "with --teacher: the teacher is dmc-search over those networks (information-set PUCT; "
        "castles): each position learns, for every legal action, the search's mean value under it with the "
        "networks' Q counted as prior_visits visits (default 100; 0: the search's mean alone). SETTINGS: "
        "dmc-search's comma-separated key=value plus prior_visits (simulations=200,prior_visits=30); '' for the "
        "defaults. grid: the policy rollouts over those networks (search=rollouts, with simulations rollouts per "
        "action, top the network's most probable actions rolled out and rollout_agent who plays them, e.g. "
        "search=rollouts,simulations=8,top=8 or search=rollouts,rollout_agent=greedy): "
        "every action rolled out learns its rollouts' mean return, the networks' Q counted as prior_visits "
        "rollouts (default: as many as the action's own, so the values rank the actions as the search plays)",
        metavar="SETTINGS")  # fmt: skip
    p.add_argument("--observation", type=int, default=None, metavar="VERSION",
                   help=f"observation version (game option {OBSERVATION_OPTION}; default: the game's, 0)")  # fmt: skip
    p.add_argument("--option", type=parse_option, action="append", default=[], metavar="KEY=VALUE", help="game option")
    p.add_argument("--out", default=None, help="run folder (default runs/dmc/GAME-TIME)")
    p.add_argument("--resume", default=None, metavar="RUN_FOLDER",
                   help="continue the run in this folder (its config; --positions may set a new budget)")  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    dmc_ray.add_flags(p)
    return p


def game_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--option`` pairs, with ``--observation`` as the game's observation-version option (checked by the game)."""
    from jericho_env.registry import make_rules, rules_class

    options = dict(args.option)
    if args.observation is not None:
        names = {o.name for o in rules_class(args.game).OPTIONS}
        if OBSERVATION_OPTION not in names:
            if args.observation != 0:
                raise ValueError(f"--observation {args.observation}: {args.game} has only observation version 0")
        else:
            options[OBSERVATION_OPTION] = args.observation
    make_rules(args.game, **options)  # bad options fail here, naming what is allowed
    return options


def resumed_config(folder: str, game: str, positions: int | None) -> tuple[dmc.DmcConfig, Path]:
    """The config of the run in ``folder``; ``--positions`` sets a new budget (recorded in config.json)."""
    from experiments.training.run_folder import RunFolder, read_json

    path = Path(folder)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"--resume {folder!r}: no config.json there (not a dmc run folder?)")
    saved = read_json(path / "config.json", "--resume: config")
    if not isinstance(saved, dict) or saved.get("game") != game:
        raise ValueError(f"--resume {folder!r} is not a {game!r} dmc run (its config.json says otherwise)")
    saved = dict(saved)
    saved.setdefault("prior", "none")  # runs from before --prior had none
    saved.setdefault("target", "return")  # and learned the return
    saved.setdefault("versus_greedy", 0.0)  # in self-play alone
    saved.setdefault("lam", 1.0)  # with Monte-Carlo targets
    saved.setdefault("versus", "greedy")  # against greedy alone
    saved.setdefault("init", None)  # from a fresh network
    saved.setdefault("learning_rate_end", None)  # at a constant learning rate
    saved.setdefault("anneal", 1.0)
    saved.setdefault("teacher", None)  # from outcomes, not a teacher's values
    saved.setdefault("teacher_level", 0.1)  # (used only with a teacher, which such runs do not have)
    saved.setdefault("teacher_search", None)  # a teacher's networks, not their search
    backend = {"backend": saved.pop("backend")} if "backend" in saved else {}  # Ray runs record theirs
    options, _ = saved.pop("options", {}), saved.pop("game", None)
    known = {f.name for f in dataclasses.fields(dmc.DmcConfig)} - {"game", "options"}
    if set(saved) - known or not isinstance(options, dict):
        raise ValueError(f"--resume {folder!r}: config.json is not a dmc config")
    cfg = dmc.make_config(game, options, **saved)
    for key, value in saved.items():  # make_config reads None as "the preset's": a run's None stays None
        if value is None:
            setattr(cfg, key, value)
    if positions is not None and positions != cfg.positions:
        done = _positions_done(path)
        if positions < done:
            raise ValueError(f"--positions {positions} is below the run's {done}: --resume extends, never cuts")
        cfg.positions = positions
        RunFolder(path).save_config({**dataclasses.asdict(cfg), **backend})
    return cfg, path


def _positions_done(folder: Path) -> int:
    """The positions generated by the run in ``folder``, as its latest checkpoint records them (0 without one)."""
    latest = folder / "checkpoints" / "latest.zip"
    if not latest.is_file():
        return 0
    from agents.dmc import read_dmc_meta

    return int(read_dmc_meta(latest)["training"]["stats"]["positions_generated"])


def progress(cfg: dmc.DmcConfig, quiet: bool, done: int) -> Any:
    """A bar over the positions budget: generated and learned per second, actor/learner split, loss, evaluations."""
    from experiments.cli import progress_bar

    bar = progress_bar(cfg.positions, f"dmc {cfg.game}", quiet, unit="pos")
    if done:
        bar.update(done)

    def update(stats: dict[str, Any], new: int, result: dict[str, Any] | None = None) -> None:
        bar.update(new)
        r = dmc.rates(stats)
        text = (f"gen {r['generated_per_second']:,.0f}/s learn {r['learned_per_second']:,.0f}/s "
                f"actor {100 * r['actor_share']:.0f}% learner {100 * r['learner_share']:.0f}%")  # fmt: skip
        if stats.get("loss") is not None:
            text += f" loss {stats['loss']:.3g}"
        if stats["evals"]:
            last = stats["evals"][-1]
            text += f" vs {last['opponent']} {100 * last['score']:.1f}%"
        if hasattr(bar, "set_postfix_str"):
            bar.set_postfix_str(text, refresh=False)
        if result is not None and quiet:
            print(f"{stats['positions_generated']:,} positions: {text}", flush=True)

    return update


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    from experiments.play.report import run_folder
    from experiments.training.provenance import record_session
    from experiments.training.run_folder import RunFolder, read_json

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.game not in known_game_ids():
        parser.error(f"unknown game {args.game!r}; choose one of {', '.join(known_game_ids())}")

    def body() -> None:
        given = {k: getattr(args, k) for k in dmc.PRESETS["default"]}
        resume = bool(args.resume)
        if args.resume:
            cfg, folder = resumed_config(args.resume, args.game, args.positions)
            differ = [f"--{k.replace('_', '-')} {v} (the run's: {getattr(cfg, k)})" for k, v in given.items()
                      if v is not None and k != "positions" and v != getattr(cfg, k)]  # fmt: skip
            ran_on = read_json(folder / "config.json", "config.json").get("backend", "local")  # Ray runs: ray
            if args.backend not in (None, ran_on):
                differ.append(f"--backend {args.backend} (the run's: {ran_on})")
            if differ or args.option or args.observation is not None:
                raise ValueError(
                    f"--resume continues the run as configured; these differ: {', '.join(differ) or 'options'}"
                )
            backend = dmc_ray.backend_of(ran_on, args.ray_address, args.actors)
            if not (folder / "checkpoints" / "latest.zip").is_file():
                print(f"--resume {folder}: no checkpoint was written; starting the run afresh in that folder")
                resume = False
        else:
            backend = dmc_ray.backend_of(args.backend, args.ray_address, args.actors)
            check_out(args.out, "--out", run_kind="dmc run", resume_hint=True)
            cfg = dmc.make_config(args.game, game_options(args), **given)
            dmc.check_init(cfg)
            if cfg.teacher and backend.is_ray:
                raise ValueError("--teacher runs with --backend local (the Ray actors do not send a teacher's values)")
            dmc.teacher_plan(cfg)  # a teacher that cannot be loaded fails before the run
            folder = run_folder("dmc", args.game, args.out)
            RunFolder(folder).save_config({**dataclasses.asdict(cfg), **({"backend": "ray"} if backend.is_ray else {})})
        record_session(folder, "experiments.dmc", argv)
        print(f"deep Monte-Carlo on {cfg.game}: {cfg.positions:,} positions; run folder {folder}/")
        t0 = time.perf_counter()
        done = 0
        if resume:
            done = _positions_done(folder)
        try:
            final = dmc.run_dmc(cfg, folder, resume, args.quiet, progress(cfg, args.quiet, done), backend, args.actors)
        except KeyboardInterrupt:
            print(f"\ninterrupted: what was saved is kept. Resume with:\n  python -m experiments.dmc {cfg.game} "
                  f"--resume {folder}")  # fmt: skip
            raise
        stats = read_json(folder / "training.json", "training.json")
        r = stats["rates"]
        print(f"\n## {cfg.game}: dmc ({time.perf_counter() - t0:.0f} s this session)\n")
        print(f"positions generated {stats['positions_generated']:,} ({r['generated_per_second']:,.0f}/s), "
              f"learned {stats['positions_learned']:,} ({r['learned_per_second']:,.0f}/s); actor "
              f"{100 * r['actor_share']:.0f}%, learner {100 * r['learner_share']:.0f}%")  # fmt: skip
        for e in stats["evals"]:
            lo, hi = e["ci95"]
            print(f"  {e['positions_generated']:>12,} positions: vs {e['opponent']} {100 * e['score']:.1f}% "
                  f"[{100 * lo:.1f}, {100 * hi:.1f}] ({e['games']} games)")  # fmt: skip
        print(f"\noutputs in {folder}/ (final.zip: {final.name}, training.json, checkpoints/)")

    return run_cli(parser, body)


if __name__ == "__main__":
    sys.exit(main())
