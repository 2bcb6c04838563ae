"""Deep Monte-Carlo self-play: Q(s, a) regressed on game outcomes by many epsilon-greedy actors (docs/dmc.md).

The config: ``experiments.training.dmc.config.DmcConfig``; the algorithm: ``experiments.training.dmc.learner``. The
run folder holds ``config.json``, ``checkpoints/`` (a kill loses at most ``--checkpoint-seconds``), ``training.json``
and ``final.zip`` (``--agents dmc=PATH`` plays it).

Examples:
    python -m experiments.dmc castles
    python -m experiments.dmc grid --positions 200000 --eval-every 100000 --out runs/dmc/grid-try
    python -m experiments.dmc castles --resume runs/dmc/castles-20261204-030000 --positions 20000000
    python -m experiments.dmc grid --init runs/dmc/grid-TIME/final.zip --versus greedy,ppo   # on from a network,
                                                        # half its games against greedy, half against the shipped ppo
    python -m experiments.dmc castles --backend ray --actors 2   # the actors as Ray actors (docs/ray.md)
    python -m experiments.dmc castles --teacher A/final.zip+B/final.zip+C/final.zip --positions 3000000
                                                        # one network learns three networks' mean Q
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from experiments.cli import positive_int, progress_bar, run_cli
from experiments.play.backends import Backend
from experiments.training.dmc.config import DmcConfig
from experiments.training.run_folder import read_json


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface: a flag per ``DmcConfig`` field, its default from the game's preset."""
    resume = "continue the run in this folder (its config; --positions may set a new budget)"
    p = DmcConfig.parser(__doc__, resume=resume, quiet="no progress bar")
    add_ray_flags(p)
    return p


def rates_text(stats: dict[str, Any]) -> str:
    """Positions generated and learned, per second, and the actors' and learner's shares of the time."""
    from experiments.training.dmc.learner import rates

    r = rates(stats)
    return (f"generated {stats['positions_generated']:,} ({r['generated_per_second']:,.0f}/s), learned "
            f"{stats['positions_learned']:,} ({r['learned_per_second']:,.0f}/s); actor {100 * r['actor_share']:.0f}%, "
            f"learner {100 * r['learner_share']:.0f}%")  # fmt: skip


def add_ray_flags(parser: argparse.ArgumentParser) -> None:
    """``--ray-address`` and ``--actors``: where Ray is and how many actors (``--backend`` is the config's)."""
    parser.add_argument("--ray-address", default=None, metavar="HOST:PORT", help="a running Ray cluster (default: "
                        "Ray's RAY_ADDRESS, else a local Ray with --actors CPUs)")  # fmt: skip
    parser.add_argument("--actors", type=positive_int, default=None, metavar="N", help="Ray actors, each playing "
                        "--envs games (--backend ray; default: the Ray cluster's CPUs minus one for the learner, at "
                        "least 1; a local Ray: this machine's CPUs minus one)")  # fmt: skip


def backend_of(name: str, address: str | None, actors: int | None) -> Backend:
    """The ``Backend`` of the run's ``--backend`` and the Ray flags; ``ValueError`` where they disagree."""
    if actors is not None and name != "ray":
        raise ValueError(f"--actors {actors} is for --backend ray, not {name}")
    return Backend(name, address)


def progress(cfg: DmcConfig, quiet: bool) -> Any:
    """A bar over the positions budget with the rates, the loss and the last evaluation (printed when quiet)."""
    bar, shown = progress_bar(cfg.positions, f"dmc {cfg.game}", quiet, unit="pos"), [0]

    def update(stats: dict[str, Any], new: int, result: dict[str, Any] | None = None) -> None:
        bar.update(stats["positions_generated"] - shown[0])  # a resumed run's first update: the positions before it
        shown[0] = stats["positions_generated"]
        text = rates_text(stats) + ("" if stats.get("loss") is None else f"; loss {stats['loss']:.3g}")
        if stats["evals"]:
            text += f"; vs {stats['evals'][-1]['opponent']} {100 * stats['evals'][-1]['score']:.1f}%"
        if hasattr(bar, "set_postfix_str"):
            bar.set_postfix_str(text, refresh=False)
        if result is not None and quiet:
            print(text, flush=True)

    return update


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    from experiments.training.dmc.learner import check_start, run_dmc

    parser = build_parser()
    args = parser.parse_args(argv)  # an unknown game: refused with the config, in one line

    def body() -> None:
        def check(cfg: DmcConfig, resume: bool) -> Backend:  # before a new run's folder is made
            backend = backend_of(cfg.backend, args.ray_address, args.actors)
            if not resume:
                check_start(cfg)
            return backend

        cfg, folder, resume, backend = DmcConfig.start(args, argv, check)
        print(f"deep Monte-Carlo on {cfg.game}: {cfg.positions:,} positions; run folder {folder}/")
        t0 = time.perf_counter()
        try:
            final = run_dmc(cfg, folder, resume, progress(cfg, args.quiet), backend, args.actors)
        except KeyboardInterrupt:
            print(f"\ninterrupted: what was saved is kept. Resume with:\n  python -m experiments.dmc {cfg.game} "
                  f"--resume {folder}")  # fmt: skip
            raise
        stats = read_json(folder / "training.json", "training.json")
        print(f"\n## {cfg.game}: dmc ({time.perf_counter() - t0:.0f} s this session)\n\npositions {rates_text(stats)}")
        for e in stats["evals"]:
            lo, hi = e["ci95"]
            print(f"  {e['positions_generated']:>12,} positions: vs {e['opponent']} {100 * e['score']:.1f}% "
                  f"[{100 * lo:.1f}, {100 * hi:.1f}] ({e['games']} games)")  # fmt: skip
        print(f"\noutputs in {folder}/ (final.zip: {final.name}, training.json, checkpoints/)")

    return run_cli(parser, body)


if __name__ == "__main__":
    sys.exit(main())
