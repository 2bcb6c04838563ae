"""Training throughput against the env's own speed: ``python -m experiments.studies.bench_training [GAME ...]``.

For each game: a short ``experiments.train`` run at the game's preset (snapshots joining the pool from
the first fifth of the run, evaluations included), whose ``training.json`` gives the learner steps per
second over the whole training phase; then, right after, on the same machine, the AEC loop of uniformly
random play through the public API (``experiments.bench``'s "AEC" row, agent steps per second). Prints
both, their ratio and the ratio that the self-play issue set as the target, and writes them to
``--json`` if given. The run folders go to a temporary directory unless ``--out`` names one.

``--ceiling`` adds the learner's own ceiling: the same preset trained on observations recorded once from
the self-play env and replayed at no cost (``replay_vec_env``), so its steps/s is what MaskablePPO's
forward passes, buffer and updates allow when the games and the opponents cost nothing; the table then
gives training's share of it ("training / alone").

On a machine that other work shares, wall clock undercounts both; the "per CPU s" columns count learner
steps per CPU second of every process of the run (the training process and its shard workers, which
play the games while it computes the learner's moves), which load distorts far less. On two cores a run
that keeps both busy is bound by that CPU time: it is the figure to lower.

Examples:
    python -m experiments.studies.bench_training
    python -m experiments.studies.bench_training castles --timesteps 500000
    python -m experiments.studies.bench_training walls grid --ceiling
"""

from __future__ import annotations

import functools
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from experiments.cli import cli_parser, positive_float, positive_int

# the training steps/s each game should reach, as a share of its AEC random-play steps/s (batched self-play's bar)
TARGETS = {"castles": 0.25, "walls": 0.20, "grid": 0.08}
DEFAULT_STEPS = {"castles": 600_000, "walls": 400_000, "grid": 150_000}


def training_speed(game: str, timesteps: int, folder: Path) -> dict[str, Any]:
    """Train ``game`` for ``timesteps`` at its preset (snapshots early) and read back training.json."""
    from experiments import train

    every = max(timesteps // 5, 1)
    argv = [game, "--timesteps", str(timesteps), "--snapshot-every", str(every), "--eval-every", str(every * 2)]
    argv += ["--checkpoint-every", str(timesteps), "--final-deals", "2", "--workers", "1", "--out", str(folder)]
    if train.main([*argv, "--quiet"]) != 0:
        raise RuntimeError(f"training {game} failed (see above)")
    summary = json.loads((folder / "training.json").read_text(encoding="utf-8"))
    steps = int(summary["steps"])
    cpu = summary["cpu_seconds_this_session"]
    return {
        "steps": steps,
        "steps_per_second": float(summary["steps_per_second"]),
        "cpu_seconds": cpu,
        # every process of the run: the training process (the learner's passes and updates) and the shard
        # workers (the games and opponents), which share the cores
        "steps_per_cpu_second": steps / max(cpu["training_process"] + cpu.get("shard_workers", 0.0), 1e-9),
    }


def learner_ceiling(game: str, timesteps: int) -> dict[str, float]:
    """Learner steps/s of the game's preset on replayed observations (``replay_vec_env``: games cost nothing).

    Wall clock (``steps_per_second``) and this process's CPU time (``steps_per_cpu_second``); the updates
    run on the preset's ``update_threads`` as in ``experiments.train``.
    """
    import time

    import torch

    from agents.checkpoint import PolicySpec
    from experiments.train import make_config
    from experiments.training.ppo.model import PPO_SETTINGS, make_model, update_with_threads
    from experiments.training.ppo.pool import opponent_pool
    from experiments.training.ppo.selfplay import make_vec_env

    cfg = make_config(game, shards=1)  # replayed in this process: nothing to split
    torch.set_num_threads(1)  # as experiments.train
    torch.distributions.Distribution.set_default_validate_args(False)
    pool = opponent_pool(game, cfg.pool.split(","), cfg.seed, cfg.options)
    games = make_vec_env(game, cfg.n_envs, pool, cfg.prior, cfg.seed, options=cfg.options, prior_seed=cfg.seed)
    vec = replay_vec_env(games, cfg.n_steps)
    network = PolicySpec(cfg.policy, cfg.net, cfg.prior, cfg.prior_weight)
    model = make_model(vec, game, network, {k: getattr(cfg, k) for k in PPO_SETTINGS}, cfg.seed, cfg.options)
    update_with_threads(model, cfg.update_threads)  # as experiments.train
    model.learn(cfg.n_envs * cfg.n_steps)  # warm-up: first allocations
    t0, cpu0 = time.perf_counter(), time.process_time()
    model.learn(timesteps, reset_num_timesteps=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return {"steps_per_second": timesteps / wall, "steps_per_cpu_second": timesteps / cpu}


def replay_vec_env(vec: Any, steps: int) -> Any:
    """``vec``'s first ``steps`` rounds (random learner moves) replayed in a loop at no cost.

    A ``SelfPlayVecEnv`` whose games are not played: ``step`` ignores the actions and hands back the next
    recorded round (observations, masks, rewards, dones, infos).
    """
    import numpy as np

    from jericho_env.envs.sb3 import SelfPlayVecEnv

    class ReplayVecEnv(SelfPlayVecEnv):
        def __init__(self) -> None:  # the recorded env's attributes, none of its work
            self.__dict__.update(vec.__dict__)
            rng = np.random.default_rng(0)
            self.rounds: list[tuple[Any, ...]] = []
            obs = vec.reset()
            for _ in range(steps):
                masks = vec.action_masks()
                actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
                step = vec.step(actions)
                self.rounds.append((obs, masks, *step[1:]))
                obs = step[0]
            self.t = 0

        def reset(self) -> Any:
            self.t = 0
            return self.rounds[0][0]

        def step_async(self, actions: Any) -> None:
            pass

        def step_wait(self) -> Any:
            _, _, rewards, dones, infos = self.rounds[self.t]
            self.t = (self.t + 1) % len(self.rounds)
            return self.rounds[self.t][0], rewards, dones, infos

        def action_masks(self) -> Any:
            return self.rounds[self.t][1]

        def env_method(self, method_name: str, *args: Any, indices: Any = None, **kw: Any) -> list[Any]:
            if method_name == "action_masks":
                return list(self.action_masks()[list(self._get_indices(indices))])
            return super().env_method(method_name, *args, indices=indices, **kw)

    return ReplayVecEnv()


def aec_speed(game: str, seconds: float) -> float:
    """Agent steps/s of uniformly random play through the AEC API (the best of three turns)."""
    import jericho_env
    from experiments.bench import aec_loop, timed

    loop = aec_loop(functools.partial(jericho_env.make, game))
    loop()
    return max(timed(loop, seconds / 3)[0] / (seconds / 3) for _ in range(3))


def table(results: dict[str, Any], ceiling: bool) -> str:
    """The results as a markdown table (wall clock, and CPU time where the machine's load distorts it)."""
    head = "| game | training steps/s | per CPU s | AEC random play steps/s | ratio | target |"
    rule = "| --- | ---: | ---: | ---: | ---: | ---: |"
    if ceiling:
        head += " learner alone steps/s | per CPU s | its ratio | training / alone | per CPU s |"
        rule += " ---: | ---: | ---: | ---: | ---: |"
    lines = ["", head, rule]
    for game, row in results.items():
        target = f"{row['target_ratio']:.2f}" if row["target_ratio"] is not None else "-"
        line = (
            f"| {game} | {row['steps_per_second']:,.0f} | {row['steps_per_cpu_second']:,.0f} | "
            f"{row['aec_steps_per_second']:,.0f} | {row['ratio']:.3f} | {target} |"
        )
        if ceiling:
            line += (
                f" {row['learner_ceiling_steps_per_second']:,.0f} | {row['learner_ceiling_steps_per_cpu_second']:,.0f}"
                f" | {row['ceiling_ratio']:.3f} | {row['of_ceiling']:.2f} | {row['of_ceiling_cpu']:.2f} |"
            )
        lines.append(line)
    lines.append(
        "\n(per CPU s: learner steps per CPU second of all the run's processes, the training process and its "
        "shard workers; each one's CPU time is in --json)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    from jericho_env.registry import GAME_IDS

    p = cli_parser("experiments.studies.bench_training", __doc__)
    p.add_argument("games", nargs="*", help=f"games (default all: {', '.join(GAME_IDS)})")
    p.add_argument("--timesteps", type=positive_int, default=None, help=f"learner steps (default {DEFAULT_STEPS})")
    p.add_argument("--seconds", type=positive_float, default=6.0, help="seconds of AEC random play (default 6)")
    p.add_argument("--out", default=None, help="keep the run folders here (default: a temporary directory)")
    p.add_argument("--json", default=None, help="also write the results to this JSON file")
    p.add_argument(
        "--ceiling", action="store_true", help="also measure the learner alone on replayed observations (slower)"
    )
    args = p.parse_args(argv)
    bad = [g for g in args.games if g not in GAME_IDS]
    if bad:
        p.error(f"unknown game(s) {', '.join(bad)}; choose from {', '.join(GAME_IDS)}")
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(args.out or scratch)
        for game in args.games or list(GAME_IDS):
            steps = args.timesteps or DEFAULT_STEPS[game]
            row = training_speed(game, steps, root / game)
            row["aec_steps_per_second"] = aec_speed(game, args.seconds)
            row["ratio"] = row["steps_per_second"] / row["aec_steps_per_second"]
            row["target_ratio"] = TARGETS.get(game)
            if args.ceiling:
                ceiling = learner_ceiling(game, steps)
                row["learner_ceiling_steps_per_second"] = ceiling["steps_per_second"]
                row["learner_ceiling_steps_per_cpu_second"] = ceiling["steps_per_cpu_second"]
                row["ceiling_ratio"] = row["learner_ceiling_steps_per_second"] / row["aec_steps_per_second"]
                row["of_ceiling"] = row["steps_per_second"] / ceiling["steps_per_second"]
                row["of_ceiling_cpu"] = row["steps_per_cpu_second"] / ceiling["steps_per_cpu_second"]
            results[game] = row
    print(table(results, args.ceiling))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
