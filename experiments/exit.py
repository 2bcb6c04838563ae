"""Expert iteration: search guided by the network plays; the network learns the search's moves and outcomes.

``python -m experiments.exit GAME``. Each iteration (Anthony, Tian and Barber 2017; AlphaZero, Silver et al. 2018;
over determinizations for hidden cards):

1. **games**: ``--games`` self-play games, every seat played by information-set PUCT (``agents.search.puct``)
   guided by the current network, in worker processes (``--workers``) or Ray tasks (``--backend ray``);
2. **learn**: the rows (observation, mask, the search's visit distribution, the outcome) join a replay buffer of
   the latest ``--buffer`` rows, and the network takes ``--updates`` minibatch steps on them
   (``experiments.training.exit.learn``);
3. **evaluate**: the network alone plays seat-swapped deals against the previous iteration's, greedy and PPO.

The first network (``--start``): ``ppo`` (``--init``, else ``--ppo``'s), ``prior`` (a fresh network on greedy's
scores) or ``scratch``. ``--ppo`` is the PPO checkpoint the evaluations play; without it, the zoo's, else PPO
trained on the spot first. Defaults: ``experiments.training.presets.EXIT``. The run folder holds ``config.json``,
``checkpoints/iter_N.zip``, what ``--resume`` continues from, ``exit.json`` (every iteration's losses, times and
evaluations) and, at the end, ``final.zip`` and the final table (``tournament/``); docs/exit.md says more.

Examples:
    python -m experiments.exit castles --ppo runs/train/castles-20261202-040000/final.zip
    python -m experiments.exit grid --iterations 2 --games 20 --final-deals 10
    python -m experiments.exit walls --resume runs/exit/walls-20261202-050000
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agents.checkpoint import CheckpointMeta, PolicySpec, _weights, load_policy, resolve_path, save_checkpoint
from agents.pretrained import ZooError, shipped
from agents.prior import SCORE_GAMES, prior_size
from agents.registry import available, baselines
from experiments.cli import progress_bar, run_cli
from experiments.play.backends import LOCAL, Backend, add_backend_flags, backend_from_args
from experiments.play.report import exit_curves
from experiments.play.tournament import AgentSpec, run_games, tabulate
from experiments.training.exit.config import ExitConfig, make_exit_config
from experiments.training.ppo.config import TrainConfig
from experiments.training.run_folder import read_json, write_atomic
from jericho_env.processes import WorkerLostError
from jericho_env.registry import known_game_ids, make_rules

__all__ = ["ExitConfig", "build_parser", "main", "make_exit_config", "run_exit"]


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface: a flag per ``ExitConfig`` field, its default from the game's preset."""
    p = ExitConfig.parser(__doc__)
    add_backend_flags(p)
    return p


# ------------------------------------------------------------------------------------------------ the network
class _Model:
    """What ``agents.checkpoint.save_checkpoint`` reads of a model: the policy, its spaces and counters."""

    def __init__(self, policy: Any, steps: int, updates: int) -> None:
        self.policy = policy
        self.observation_space = policy.observation_space
        self.action_space = policy.action_space
        self.num_timesteps = steps
        self._n_updates = updates


def network_meta(cfg: ExitConfig, spec: Any, iteration: int) -> Any:
    """The checkpoint meta of the network after ``iteration``: the game, its spec, the run's settings."""
    settings = {k: v for k, v in dataclasses.asdict(cfg).items() if k not in ("game", "options")}
    training = {"algorithm": "exit", "exit": settings, "iteration": iteration}
    return CheckpointMeta(cfg.game, dict(cfg.options), spec, training)


def first_network(cfg: ExitConfig, ppo_path: str) -> tuple[Any, Any]:
    """(policy network, its ``PolicySpec``) that iteration 1 starts from (``--start``)."""
    if cfg.start == "ppo":
        path = cfg.init or ppo_path
        policy, meta = load_policy(path, game_id=cfg.game, options=cfg.options)
        if meta.get("format") == "sb3":
            raise ValueError(f"--init {path!r}: an SB3 zip; the expert-iteration network needs the safe format")
        return policy, PolicySpec.from_json(meta["policy"], path)
    train_preset = TrainConfig.preset(cfg.game)
    name = train_preset["policy"] if cfg.policy == "auto" else cfg.policy
    prior = "none"
    if cfg.start == "prior":
        prior = "greedy-scores" if cfg.game in SCORE_GAMES else "greedy"
    spec = PolicySpec(name, train_preset["net"], prior, float(train_preset["prior_weight"]))
    cls, kwargs = spec.build(cfg.game, cfg.options)
    info = make_rules(cfg.game, **cfg.options).info
    size = info.observation_size + prior_size(prior, info.num_actions)
    policy = cls(
        gym.spaces.Box(0.0, 1.0, (size,), np.float32), gym.spaces.Discrete(info.num_actions), lambda _: 0.0, **kwargs
    )
    policy.set_training_mode(False)
    return policy, spec


# ------------------------------------------------------------------------------------------------ the loop
class ExitRun:
    """One run's folder and state: the network, its optimizer, the buffer, the iterations done."""

    def __init__(self, cfg: ExitConfig, folder: Path, backend: Backend) -> None:
        self.cfg, self.folder, self.backend = cfg, folder, backend
        self.ckpt = folder / "checkpoints"
        self.ckpt.mkdir(parents=True, exist_ok=True)
        self.history: list[dict[str, Any]] = []
        self.done = 0

    # ---- state on disk
    def save(self, policy: Any, optimizer: Any, spec: Any, buffer: Any) -> None:
        """The network (with its optimizer) as iter_N.zip and latest.zip, the buffer, then exit.json, which names
        the last complete iteration (a kill at any point leaves the previous one for ``--resume``)."""
        policy.optimizer = optimizer
        model = _Model(policy, int(buffer.added), self.done * self.cfg.updates)
        meta = network_meta(self.cfg, spec, self.done)
        save_checkpoint(model, self.ckpt / f"iter_{self.done}.zip", meta)
        buffer_file = self.folder / f"buffer_{self.done}.npz"
        if not buffer_file.is_file():
            tmp = self.folder / "buffer.tmp.npz"
            np.savez(tmp, **buffer.state())
            tmp.replace(buffer_file)
        save_checkpoint(model, self.ckpt / "latest.zip", meta)
        state = {"iterations_done": self.done, "history": self.history}
        write_atomic(self.folder / "exit.json", json.dumps(state, indent=1))
        for old in self.folder.glob("buffer_*.npz"):  # only the buffer exit.json names is needed
            if old != buffer_file:
                old.unlink()

    def restore(self) -> tuple[Any, Any, Any]:
        """(policy, spec, buffer) of the last complete iteration, and the history; for ``--resume``."""
        from experiments.training.exit.learn import ReplayBuffer

        state = read_json(self.folder / "exit.json", "--resume: the run's state")
        if not isinstance(state, dict) or not isinstance(state.get("iterations_done"), int):
            raise ValueError(f"--resume: {self.folder}/exit.json is not an expert-iteration state")
        self.done, self.history = state["iterations_done"], list(state.get("history", []))
        path = self.ckpt / f"iter_{self.done}.zip"
        policy, meta = load_policy(path, game_id=self.cfg.game, options=self.cfg.options)
        weights = _weights(resolve_path(path))
        with np.load(self.folder / f"buffer_{self.done}.npz", allow_pickle=False) as data:
            buffer = ReplayBuffer.from_state(data)
        policy.optimizer_state = weights.get("optimizer")
        return policy, PolicySpec.from_json(meta["policy"], str(path)), buffer


def evaluate_iteration(cfg: ExitConfig, current: Path, opponents: dict[str, Any], seed: int, workers: int,
                       backend: Backend) -> dict[str, Any]:  # fmt: skip
    """The network alone against each opponent (spec name and kwargs) on ``cfg.eval_deals`` seat-swapped deals."""
    out: dict[str, Any] = {}
    me = AgentSpec("exit", "exit", {"path": str(current)})
    for label, (name, kwargs) in opponents.items():
        specs = [me, AgentSpec(label, name, kwargs)]
        records = run_games(cfg.game, specs, cfg.eval_deals, seed, workers, cfg.options, backend=backend)
        cell = tabulate(records, ["exit", label])[("exit", label)]
        lo, hi = cell.interval
        out[label] = {"score": cell.win_rate, "ci95": [lo, hi], "games": cell.games}
    return out


def run_exit(cfg: ExitConfig, folder: Path, resume: bool, quiet: bool, backend: Backend = LOCAL) -> Path:
    """Run (or continue) the iterations in ``folder``; returns the final network's path."""
    import torch

    from experiments.training.exit import play as exit_play
    from experiments.training.exit.learn import LearnSettings, ReplayBuffer, learn, make_optimizer
    from experiments.training.exit.play import SearchSettings, network_payload

    torch.manual_seed(cfg.seed)
    torch.set_num_threads(1)
    run = ExitRun(cfg, folder, backend)
    ppo_path = ppo_checkpoint(cfg, folder, quiet)
    learn_settings = LearnSettings(
        cfg.learning_rate, cfg.weight_decay, cfg.batch_size, cfg.updates, cfg.value_weight, cfg.target
    )
    if resume:
        policy, spec, buffer = run.restore()
        optimizer = make_optimizer(policy, learn_settings)
        if policy.optimizer_state:
            optimizer.load_state_dict(policy.optimizer_state)
        print(f"resuming after iteration {run.done} of {cfg.iterations}")
        evaluate_pending(run, ppo_path, policy, optimizer, spec, buffer)  # killed while evaluating: finish it
    else:
        policy, spec = first_network(cfg, ppo_path)
        buffer = ReplayBuffer(cfg.buffer)
        optimizer = make_optimizer(policy, learn_settings)
        policy.optimizer = None
        save_checkpoint(_Model(policy, 0, 0), run.ckpt / "iter_0.zip", network_meta(cfg, spec, 0))
    search = SearchSettings(cfg.simulations, cfg.c_puct, cfg.dirichlet_alpha, cfg.dirichlet_fraction,
                            cfg.temperature_moves, cfg.value_rows, expert=cfg.expert,
                            expert_simulations=cfg.expert_simulations,
                            expert_temperature=cfg.expert_temperature, target=cfg.target)  # fmt: skip
    while run.done < cfg.iterations:
        it = run.done + 1
        t0 = time.perf_counter()
        payload = {
            "game_id": cfg.game,
            "options": cfg.options,
            "search": dataclasses.asdict(search),
            "network": network_payload(run.ckpt / f"iter_{it - 1}.zip"),  # the network after the last iteration
        }
        seeds = np.random.SeedSequence([cfg.seed, it]).generate_state(cfg.games).tolist()
        tasks = [seeds[i : i + cfg.games_at_once] for i in range(0, cfg.games, cfg.games_at_once)]
        rows = exit_play.generate(payload, tasks, backend, cfg.workers, _bar(cfg.games, f"iteration {it} games", quiet))
        t1 = time.perf_counter()
        buffer.add(rows)
        rng = np.random.default_rng([cfg.seed, it, 1])
        stats = learn(policy, optimizer, buffer, learn_settings, rng)
        t2 = time.perf_counter()
        run.done = it
        run.history.append({"iteration": it, "games": rows.games, "moves": rows.moves, "rows": len(rows),
                            "buffer": len(buffer), **stats, "seconds_games": round(t1 - t0, 1),
                            "seconds_learn": round(t2 - t1, 1)})  # fmt: skip
        run.save(policy, optimizer, spec, buffer)
        evaluate_pending(run, ppo_path, policy, optimizer, spec, buffer)
        print(f"iteration {it}/{cfg.iterations} ({time.perf_counter() - t0:.0f} s): {run.history[-1]['summary']}")
    final = folder / "final.zip"
    shutil.copyfile(run.ckpt / f"iter_{run.done}.zip", final)
    return final


def evaluate_pending(run: ExitRun, ppo_path: str, policy: Any, optimizer: Any, spec: Any, buffer: Any) -> None:
    """Evaluate the last iteration's network if it has no evaluation yet; save; redraw the curves."""
    if not run.history or "evals" in run.history[-1]:
        return
    cfg, it = run.cfg, run.done
    t0 = time.perf_counter()
    opponents: dict[str, Any] = {"previous": ("exit", {"path": str(run.ckpt / f"iter_{it - 1}.zip")})}
    if available("greedy", cfg.game):
        opponents["greedy"] = ("greedy", {})
    opponents["ppo"] = ("ppo", {"path": ppo_path})
    evals = evaluate_iteration(cfg, run.ckpt / f"iter_{it}.zip", opponents, 10_000 + it, cfg.workers, run.backend)
    row = run.history[-1]
    scores = ", ".join(f"{k} {100 * v['score']:.1f}%" for k, v in evals.items())
    summary = f"{row['games']} games, {row['rows']} rows, policy loss {row['policy_loss']:.3f}, "
    summary += f"value loss {row['value_loss']:.3f}; network alone vs {scores}"
    row.update(evals=evals, seconds_eval=round(time.perf_counter() - t0, 1), summary=summary)
    run.save(policy, optimizer, spec, buffer)
    exit_curves(run.folder)


def _bar(total: int, desc: str, quiet: bool) -> Any:
    """A progress bar over ``total`` games, advanced by each task's rows (closed when full)."""
    bar = progress_bar(total, desc, quiet, unit="game")
    seen = [0]

    def update(rows: Any) -> None:
        bar.update(rows.games)
        seen[0] += rows.games
        if seen[0] >= total:
            bar.close()

    return update


def ppo_checkpoint(cfg: ExitConfig, folder: Path, quiet: bool) -> str:
    """The default PPO run's checkpoint: ``--ppo``, else the zoo's, else one trained now in ``folder/ppo``."""
    if cfg.ppo is not None:
        load_policy(cfg.ppo, game_id=cfg.game, options=cfg.options)  # missing, damaged or another game: now
        return cfg.ppo
    try:
        return str(shipped("ppo", cfg.game, cfg.options).path)
    except ZooError:
        pass
    trained = folder / "ppo" / "final.zip"
    if trained.is_file():
        return str(trained)
    from experiments import train

    print(f"no --ppo checkpoint and none shipped: training PPO at its default budget first (into {folder / 'ppo'})")
    tcfg = train.make_config(cfg.game, cfg.options, seed=cfg.seed)
    train.train(tcfg, folder / "ppo", quiet)
    return str(trained)


def final_table(
    cfg: ExitConfig, folder: Path, final: Path, ppo_path: str, quiet: bool, backend: Backend
) -> dict[str, Any]:
    """random, greedy, ismcts, ppo, exit and exit-search, every pair on ``cfg.final_deals`` seat-swapped deals."""
    from experiments.evaluate import evaluate

    budget = {} if cfg.final_simulations is None else {"simulations": cfg.final_simulations}
    specs = [AgentSpec(name, name) for name in baselines(cfg.game)]
    specs += [
        AgentSpec("ismcts", "ismcts", budget),
        AgentSpec("ppo", "ppo", {"path": ppo_path}),
        AgentSpec("exit", "exit", {"path": str(final)}),
        AgentSpec("exit-search", "exit-search", {"path": str(final), **budget}),
    ]
    return evaluate(cfg.game, specs, cfg.final_deals, cfg.seed, cfg.workers, cfg.options, str(folder / "tournament"),
                    quiet=quiet, backend=backend)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.game not in known_game_ids():
        parser.error(f"unknown game {args.game!r}; choose one of {', '.join(known_game_ids())}")

    def body() -> None:
        backend = backend_from_args(args)
        cfg, folder, resume, _ = ExitConfig.start(args, argv)
        t0 = time.perf_counter()
        print(f"expert iteration on {cfg.game}: {cfg.iterations} iterations of {cfg.games} games; run folder {folder}/")
        try:
            final = run_exit(cfg, folder, resume, args.quiet, backend)
        except (KeyboardInterrupt, WorkerLostError) as e:
            resume_with = f"python -m experiments.exit {cfg.game} --resume {folder}"
            why = "interrupted" if isinstance(e, KeyboardInterrupt) else "a worker process was lost"
            print(f"\n{why}: what was saved is kept. Resume with:\n  {resume_with}")
            raise
        summary = final_table(cfg, folder, final, ppo_checkpoint(cfg, folder, True), args.quiet, backend)
        wall = time.perf_counter() - t0
        print(f"\n## {cfg.game}: final table (seed {cfg.seed}, {cfg.iterations} iterations, {wall / 60:.1f} min)\n")
        print(summary["table"])
        print(f"\noutputs in {folder}/ (final.zip, exit.json, checkpoints/, tournament/, learning_curves.png)")

    return run_cli(parser, body)


if __name__ == "__main__":
    sys.exit(main())
