"""What each start method of worker processes costs: a tournament's pool and training's shards, started and run.

    python -m experiments.studies.worker_start --methods forkserver fork spawn --repeats 3

For each start method (``jericho_env.processes``), in a fresh process that has run torch on two threads and made a
``ppo`` agent first (as the commands have), it times a first tournament of ``--start-deals`` deals on two workers
(which starts the pool) and the games/s of a second of ``--deals`` deals, then the start of a ``ShardedVecEnv`` of
two castles shards and its steps/s over ``--steps`` random steps. It prints one row per method and repeat, then the
best of the repeats (the least disturbed on a shared machine).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

from experiments.cli import cli_parser, positive_int, run_cli


def _shard(k: int) -> Any:
    from jericho_env.envs.sb3 import SelfPlayVecEnv

    return SelfPlayVecEnv("castles", 128, opponents="random", seed=1000 * k)


def measure(deals: int, start_deals: int, steps: int) -> dict[str, float]:
    """One method's figures, in this process (its start method from ``JERICHO_START_METHOD``)."""
    import numpy as np
    import torch

    import agents
    from experiments.play.tournament import AgentSpec, run_games
    from jericho_env.envs.sb3 import ShardedVecEnv

    torch.set_num_threads(2)
    torch.ones(300, 300) @ torch.ones(300, 300)  # this process's OpenMP pool is up, as a training process's
    agents.make("ppo", "castles")  # the command checks its agents first
    specs = [AgentSpec("random", "random"), AgentSpec("greedy", "greedy"), AgentSpec("ppo", "ppo")]
    t0 = time.perf_counter()
    run_games("castles", specs, deals=start_deals, seed=0, workers=2)
    pool_start = time.perf_counter() - t0
    t0 = time.perf_counter()
    games = len(run_games("castles", specs, deals=deals, seed=1, workers=2))
    games_per_second = games / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    env = ShardedVecEnv(_shard, [128, 128], local=False)
    try:
        env.reset()
        shard_start = time.perf_counter() - t0
        rng = np.random.default_rng(0)
        t0 = time.perf_counter()
        for _ in range(steps):
            env.step(np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()]))
        steps_per_second = steps * env.num_envs / (time.perf_counter() - t0)
    finally:
        env.close()
    return {
        "pool_start": pool_start,
        "games_per_second": games_per_second,
        "shard_start": shard_start,
        "steps_per_second": steps_per_second,
    }


def run(method: str, args: argparse.Namespace) -> dict[str, float]:
    """``measure`` in a fresh process started with ``method``."""
    env = {**os.environ, "JERICHO_START_METHOD": method}
    argv = [sys.executable, "-m", "experiments.studies.worker_start", "--one", "--deals", str(args.deals)]
    argv += ["--start-deals", str(args.start_deals), "--steps", str(args.steps)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"{method}: {(done.stderr.strip().splitlines() or [done.returncode])[-1]}")
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def row(method: str, label: str, f: dict[str, float]) -> str:
    return (
        f"| {method} | {label} | {f['pool_start']:.2f} | {f['games_per_second']:,.0f} | {f['shard_start']:.2f} "
        f"| {f['steps_per_second']:,.0f} |"
    )


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    p = cli_parser("experiments.studies.worker_start", __doc__)
    p.add_argument("--methods", nargs="+", default=["forkserver", "fork", "spawn"], help="start methods to measure")
    p.add_argument("--repeats", type=positive_int, default=1, help="rounds over the methods (default 1)")
    p.add_argument("--deals", type=positive_int, default=100, help="deals of the timed tournament (default 100)")
    p.add_argument("--start-deals", type=positive_int, default=2, help="deals of the first tournament (default 2)")
    p.add_argument("--steps", type=positive_int, default=300, help="steps of the sharded games (default 300)")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # one method, in this process: JSON
    return p


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = build_parser()
    args = parser.parse_args(argv)

    def body() -> None:
        from jericho_env.processes import start_method

        if args.one:
            print(json.dumps(measure(args.deals, args.start_deals, args.steps)))
            return
        for method in args.methods:
            start_method(method)  # one this platform has, before any work
        print("| start method | run | tournament start (s) | games/s | shards start (s) | steps/s |")
        print("| --- | --- | ---: | ---: | ---: | ---: |")
        best: dict[str, dict[str, float]] = {}
        for k in range(args.repeats):
            for method in args.methods:
                f = run(method, args)
                print(row(method, str(k + 1), f), flush=True)
                b = best.setdefault(method, dict(f))
                for key in ("pool_start", "shard_start"):
                    b[key] = min(b[key], f[key])
                for key in ("games_per_second", "steps_per_second"):
                    b[key] = max(b[key], f[key])
        for method, f in best.items():
            print(row(method, "best", f))

    return run_cli(parser, body)


if __name__ == "__main__":
    raise SystemExit(main())
