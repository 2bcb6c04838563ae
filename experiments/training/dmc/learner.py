"""Deep Monte-Carlo self-play (Zha et al. 2021, DouZero): action values regressed on game outcomes, at scale.

``run_dmc`` alternates the actors' phase (``experiments.training.dmc.actors``, or Ray's) and the learner's
(``learn_step``s on minibatches of labelled positions, ``replay_ratio`` positions learned per position generated);
``DmcRun`` keeps the run folder (the replay buffer is not saved: it refills in seconds).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from experiments.training.dmc.config import DmcConfig, make_config

__all__ = ["DmcConfig", "learn_step", "learning_rate_at", "make_config", "q_loss", "run_dmc"]

STAT_KEYS = ("positions_generated", "positions_learned", "updates", "agent_steps", "games", "seconds_actor",
             "seconds_learner", "seconds_eval", "seconds")  # fmt: skip


def q_loss(network: Any, batch: Any) -> Any:
    """The squared error between Q(s, a) of the actions taken and their targets (DouZero's ``compute_loss``)."""
    import torch

    q = network.q_stored(torch.from_numpy(batch.rows), torch.from_numpy(batch.actions))
    return torch.nn.functional.mse_loss(q, torch.from_numpy(batch.targets))


def learn_step(network: Any, optimizer: Any, loss: Any, clip: float) -> float:
    """One Adam step on ``loss`` (a tensor), gradients clipped to ``clip``; the loss's value."""
    import torch

    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(network.parameters(), clip)
    optimizer.step()
    return float(loss.detach())


def learning_rate_at(cfg: DmcConfig, positions: float) -> float:
    """The learning rate after ``positions`` generated: constant, then down to ``learning_rate_end`` in a straight
    line over the last ``anneal`` share of the budget (constant where that is None)."""
    if cfg.learning_rate_end is None:
        return cfg.learning_rate
    start = (1.0 - cfg.anneal) * cfg.positions
    done = min(max((positions - start) / max(cfg.positions - start, 1.0), 0.0), 1.0)
    return cfg.learning_rate + done * (cfg.learning_rate_end - cfg.learning_rate)


def rates(stats: dict[str, Any]) -> dict[str, float]:
    """Positions generated and learned per second of the run, and the actor's and learner's shares of it."""
    s, busy = max(float(stats["seconds"]), 1e-9), max(stats["seconds_actor"] + stats["seconds_learner"], 1e-9)
    return {"generated_per_second": stats["positions_generated"] / s, "actor_share": stats["seconds_actor"] / busy,
            "learned_per_second": stats["positions_learned"] / s, "learner_share": stats["seconds_learner"] / busy,
            "agent_steps_per_second": stats["agent_steps"] / s}  # fmt: skip


class DmcRun:
    """One run folder and what the run holds: the network, its Adam, the counters and this session's time."""

    def __init__(self, cfg: DmcConfig, folder: Path, resume: bool) -> None:
        import torch

        from agents.dmc import build_network, load_dmc

        self.cfg, self.folder, self.ckpt = cfg, folder, folder / "checkpoints"
        self.ckpt.mkdir(parents=True, exist_ok=True)
        state = None
        if resume:
            self.network, meta, state = load_dmc(self.ckpt / "latest.zip", cfg.game, cfg.options)
            stats = meta.get("training", {}).get("stats")
            if not isinstance(stats, dict) or any(not isinstance(stats.get(k), (int, float)) for k in STAT_KEYS):
                raise ValueError(f"--resume: {self.ckpt / 'latest.zip'} records no dmc counters")
            self.stats = stats
        else:
            torch.manual_seed(cfg.seed)
            self.network = build_network(cfg.game, cfg.options, cfg.net, cfg.features, cfg.prior)
            self.stats = {**dict.fromkeys(STAT_KEYS, 0), "evals": [], "sessions": [], "loss": None}
            if cfg.init:
                start_from(self.network, cfg)
        self.network.train()
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=cfg.learning_rate)
        if state:
            self.optimizer.load_state_dict(state)
        self.session = len(self.stats["sessions"])
        self.stats["sessions"].append({"started_at_positions": self.stats["positions_generated"], "seconds": 0.0})

    def begin(self, describe: dict[str, Any]) -> None:
        """The session's clock starts (after the actors start); ``describe`` joins its record."""
        self.stats["sessions"][-1].update(describe)
        self.base, self.start = float(self.stats["seconds"]), time.perf_counter()
        self.last_save = self.start

    def tick(self) -> None:
        """The time so far into the counters: the run's over every session, and this session's."""
        now = time.perf_counter() - self.start
        self.stats["seconds"] = self.base + now
        self.stats["sessions"][-1]["seconds"] = now

    def save(self) -> None:
        """The network, optimizer and counters to latest.zip, then training.json (last)."""
        from agents.dmc import save_dmc
        from experiments.training.run_folder import write_atomic

        stats, cfg = self.stats, self.cfg
        training = {"algorithm": "dmc", "dmc": dataclasses.asdict(cfg), "stats": stats}
        save_dmc(self.ckpt / "latest.zip", self.network, cfg.game, cfg.options, training, self.optimizer)
        write_atomic(self.folder / "training.json", json.dumps({**stats, "rates": rates(stats)}, indent=1))
        self.last_save = time.perf_counter()

    def save_network(self, path: Path) -> Path:
        """The network alone, with the counters, to ``path`` (``pos_N.zip``, ``final.zip``)."""
        from agents.dmc import save_dmc

        training = {"algorithm": "dmc", "stats": {k: self.stats[k] for k in STAT_KEYS}}
        return save_dmc(path, self.network, self.cfg.game, self.cfg.options, training)

    def evaluate(self) -> dict[str, Any]:
        """The network saved as ``pos_N.zip`` and played against greedy (else random); joins ``stats["evals"]``."""
        from agents.registry import available
        from experiments.play.deals import AgentSpec
        from experiments.play.tournament import run_games, tabulate

        t0, stats, cfg = time.perf_counter(), self.stats, self.cfg
        point = self.save_network(self.ckpt / f"pos_{stats['positions_generated']}.zip")
        opponent = "greedy" if available("greedy", cfg.game) else "random"
        specs = [AgentSpec("dmc", "dmc", {"path": str(point)}), AgentSpec(opponent, opponent, {})]
        records = run_games(cfg.game, specs, cfg.eval_deals, 10_000 + len(stats["evals"]), 1, cfg.options)
        cell = tabulate(records, ["dmc", opponent])[("dmc", opponent)]
        result = {"opponent": opponent, "score": cell.win_rate, "ci95": list(cell.interval), "games": cell.games}
        result.update({k: stats[k] for k in ("positions_generated", "positions_learned", "seconds")})
        stats["evals"].append(result)
        stats["seconds_eval"] += time.perf_counter() - t0
        return result


def start_from(network: Any, cfg: DmcConfig) -> None:
    """Copy the network of the dmc checkpoint ``cfg.init`` (the run's game, options and layers) into ``network``."""
    from agents.checkpoint import CheckpointError
    from agents.dmc import load_dmc

    try:
        source, _, _ = load_dmc(cfg.init or "", cfg.game, cfg.options)
    except (CheckpointError, FileNotFoundError) as e:
        raise ValueError(f"--init {cfg.init!r}: {e}") from None
    mine, theirs = network.state_dict(), source.state_dict()
    differ = sorted(k for k in set(mine) | set(theirs) if k not in mine or k not in theirs
                    or mine[k].shape != theirs[k].shape)  # fmt: skip
    if differ:
        raise ValueError(f"--init {cfg.init!r}: its network is not this run's (--net {cfg.net}, --features "
                         f"{cfg.features}, --prior {cfg.prior}); layers that differ: "
                         f"{', '.join(differ[:4])}")  # fmt: skip
    network.load_state_dict(theirs)


def check_start(cfg: DmcConfig) -> None:
    """Before a new run starts: ``--init`` can start its network and ``--teacher`` loads (one-line errors)."""
    from agents.dmc import build_network
    from experiments.training.dmc.distill import teacher_plan

    if cfg.init:
        start_from(build_network(cfg.game, cfg.options, cfg.net, cfg.features, cfg.prior), cfg)
    teacher_plan(cfg)


class LocalActors:
    """The actors in this process (``--backend local``): ``rounds`` steps of ``Actors`` a phase, on the latest plan."""

    def __init__(self, cfg: DmcConfig, network: Any, buffer: Any, session: int, teacher: Any) -> None:
        from experiments.training.dmc.actors import Actors

        self.actors = Actors(cfg, buffer, [cfg.seed, session], teacher)
        self.rounds = cfg.rounds
        self.plan = network.plan()

    def collect(self) -> tuple[int, int, int, float, float]:
        """One phase into the buffer: (positions, agent-steps, games, actor seconds, learner seconds)."""
        t0 = time.perf_counter()
        steps0, games0 = self.actors.steps, self.actors.games
        new = self.actors.play(self.plan, self.rounds)
        return new, self.actors.steps - steps0, self.actors.games - games0, time.perf_counter() - t0, 0.0

    def refresh(self, network: Any) -> None:
        """The actors' snapshot of the learner's network."""
        self.plan = network.plan()

    def describe(self) -> dict[str, Any]:
        """Nothing to add to the session's record (Ray's actors add the backend and their count)."""
        return {}


def run_dmc(
    cfg: DmcConfig, folder: Path, resume: bool, progress: Any = None, backend: Any = None, actors: int | None = None
) -> Path:
    """Run (or continue) training in ``folder`` until ``cfg.positions`` are generated; returns final.zip.
    ``backend`` and ``actors``: where Ray is and how many actors; ``progress(stats, new, evaluation)``: each phase."""
    import torch

    from experiments.training.dmc import distill
    from experiments.training.dmc.actors import ReplayBuffer, one_blas_thread

    torch.set_num_threads(1)
    one_blas_thread()
    run = DmcRun(cfg, folder, resume)
    network, optimizer, stats = run.network, run.optimizer, run.stats
    teacher = distill.teacher_plan(cfg)
    buffer = ReplayBuffer(cfg.buffer, network.stored_width, distill.taught_width(network, teacher))
    # the loss of the buffer's layout: every legal action's Q kept beside a position (a teacher's), or one target
    loss_of = (
        q_loss if buffer.taught is None else functools.partial(distill.distill_loss, level_weight=cfg.teacher_level)
    )

    rng = np.random.default_rng([cfg.seed, run.session, 1])
    labelled = None if teacher is None else distill.Teacher(teacher)
    sources: contextlib.AbstractContextManager[Any]  # where the positions come from
    if cfg.backend == "ray":
        from experiments.training.dmc.ray_actors import ray_actors

        sources = ray_actors(cfg, network, buffer, run.session, backend, actors)
    else:
        sources = contextlib.nullcontext(LocalActors(cfg, network, buffer, run.session, labelled))
    with sources as source:
        run.begin(source.describe())
        owed, losses, next_eval = 0.0, [], (stats["positions_generated"] // cfg.eval_every + 1) * cfg.eval_every
        while stats["positions_generated"] < cfg.positions:
            new, steps, games, actor_seconds, learner_seconds = source.collect()
            t1 = time.perf_counter()
            stats.update(positions_generated=stats["positions_generated"] + new, games=stats["games"] + games,
                         agent_steps=stats["agent_steps"] + steps)  # fmt: skip
            owed += cfg.replay_ratio * new  # positions the learner owes the actors
            known = buffer.known() if owed >= cfg.batch_size else np.zeros(0, np.int64)
            for group in optimizer.param_groups:
                group["lr"] = learning_rate_at(cfg, stats["positions_generated"])
            while len(known) >= cfg.batch_size and owed >= cfg.batch_size:
                batch = buffer.sample(cfg.batch_size, rng, known)
                losses.append(learn_step(network, optimizer, loss_of(network, batch), cfg.clip))
                owed -= cfg.batch_size
                stats["positions_learned"] += cfg.batch_size
                stats["updates"] += 1
            source.refresh(network)
            stats["seconds_actor"] += actor_seconds
            stats["seconds_learner"] += time.perf_counter() - t1 + learner_seconds
            stats["loss"] = float(np.mean(losses[-50:])) if losses else stats["loss"]
            run.tick()
            if progress is not None:
                progress(stats, new)
            if stats["positions_generated"] >= min(next_eval, cfg.positions):
                result = run.evaluate()
                next_eval = (stats["positions_generated"] // cfg.eval_every + 1) * cfg.eval_every
                run.tick()
                run.save()
                if progress is not None:
                    progress(stats, 0, result)
            elif time.perf_counter() - run.last_save >= cfg.checkpoint_seconds:
                run.save()
        run.tick()
    run.save()
    return run.save_network(folder / "final.zip")
