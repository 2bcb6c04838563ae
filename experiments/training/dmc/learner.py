"""Deep Monte-Carlo self-play (Zha et al. 2021, DouZero): action values regressed on game outcomes, at scale.

One process alternates two phases until ``positions`` decisions have been generated:

1. **actors** (``experiments.training.dmc.actors.Actors``): ``envs`` games of the batched engine in lockstep
   play ``rounds`` steps, every seat epsilon-greedy on a numpy snapshot of the network; each decision
   enters the replay buffer, labelled with the seat's final return when its game ends;
2. **learner**: minibatches of ``batch_size`` labelled positions drawn uniformly from the buffer (the
   latest ``buffer`` positions), squared error of Q(s, a) to the return, Adam, gradients clipped to
   ``clip``; as many updates as keep positions learned at ``replay_ratio`` times positions generated.
   Then the actors' snapshot is refreshed.

With ``--backend ray`` the actors are Ray actors (``experiments.training.dmc.ray_actors``): each phase is one actor's,
taken as it comes, and the actors play on while the learner learns.

Every ``eval_every`` positions generated the network is saved (``checkpoints/pos_N.zip``) and plays
``eval_deals`` seat-swapped deals against greedy with the tournament code; every ``checkpoint_seconds``
and at the end, ``checkpoints/latest.zip`` (network, optimizer, every counter) and ``training.json``
are written (temporary file, then rename). ``--resume`` continues from ``latest.zip`` with every counter
and the evaluation history; the replay buffer is not saved (it is the latest positions, refilled in
seconds) and the resumed session's actors draw from a new stream (``seed`` and the session's number).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

# Presets as data: "default", then what each game changes. Sized on 2 loaded cores (docs in the CLI's --help).
PRESETS: dict[str, dict[str, Any]] = {
    "default": {
        "seed": 0,
        "positions": 10_000_000,
        "envs": 512,
        "rounds": 16,
        "epsilon": 0.05,
        "buffer": 400_000,
        "batch_size": 1024,
        "learning_rate": 5e-4,
        "learning_rate_end": None,
        "anneal": 1.0,
        "clip": 10.0,
        "net": "512,512,256",
        "features": "game",
        "prior": "none",
        "versus_greedy": 0.0,
        "versus": "greedy",
        "lam": 1.0,
        "replay_ratio": 1.0,
        "eval_every": 1_000_000,
        "eval_deals": 200,
        "checkpoint_seconds": 120.0,
        "init": None,
        "teacher": None,
        # the level of the teacher's Q weighs a tenth of the differences between actions: in castles above the
        # plain squared error from a fresh network and from one of the teacher's (docs/dmc.md)
        "teacher_level": 0.1,
    },
    # lambda-returns (0.8): at 10^7 positions above the outcome alone in every seed; the learning rate falling
    # to 5e-5 over the last fifth of the budget: above a constant one (docs/dmc.md)
    "castles": {"lam": 0.8, "learning_rate_end": 5e-5, "anneal": 0.2},
    # greedy's scores as an input: at every point measured above the observation alone; lambda-returns
    # (0.8): they climb with data where the outcome alone fell (docs/dmc.md)
    "walls": {"prior": "greedy-scores", "lam": 0.8},
    # the same, and every game one learning seat against greedy: self-play left greedy's level (docs/dmc.md)
    "grid": {
        "envs": 256,
        "rounds": 8,
        "buffer": 200_000,
        "net": "256,256",
        "batch_size": 512,
        "prior": "greedy-scores",
        "lam": 0.8,
        "versus_greedy": 1.0,
    },
}
STAT_KEYS = (
    "positions_generated",
    "positions_learned",
    "updates",
    "agent_steps",
    "games",
    "seconds_actor",
    "seconds_learner",
    "seconds_eval",
    "seconds",
)


@dataclasses.dataclass
class DmcConfig:
    """Everything a run depends on (the game's preset with the given values on top); config.json records it."""

    game: str
    options: dict[str, Any]
    seed: int
    positions: int
    envs: int
    rounds: int
    epsilon: float
    buffer: int
    batch_size: int
    learning_rate: float
    clip: float
    net: str
    features: str
    prior: str
    versus_greedy: float
    versus: str  # the fixed agents of the versus_greedy share, comma-separated registered names
    lam: float
    replay_ratio: float
    eval_every: int
    eval_deals: int
    checkpoint_seconds: float
    init: str | None = None  # a dmc checkpoint whose network the run starts from (same architecture)
    learning_rate_end: float | None = None  # the learning rate at the end of the budget (None: constant)
    anneal: float = 1.0  # the share of the budget, at its end, over which it falls to learning_rate_end
    teacher: str | None = None  # dmc checkpoints (A.zip+B.zip+...) whose mean Q every position learns instead
    teacher_level: float = 0.1  # the weight of the level of the teacher's Q against the differences between actions


def make_config(game: str, options: dict[str, Any] | None = None, **given: Any) -> DmcConfig:
    """The game's preset with the ``given`` values that are not None on top; values checked."""
    from agents.nets.dmc import ACTION_FEATURE_KINDS, PRIOR_KINDS, parse_hidden
    from agents.prior import SCORE_GAMES

    values = {**PRESETS["default"], **PRESETS.get(game, {})}
    values.update({k: v for k, v in given.items() if v is not None})
    cfg = DmcConfig(game=game, options=dict(options or {}), **values)
    parse_hidden(cfg.net)
    if cfg.features not in ACTION_FEATURE_KINDS:
        raise ValueError(f"--features takes one of {', '.join(ACTION_FEATURE_KINDS)}, got {cfg.features!r}")
    if cfg.prior not in PRIOR_KINDS:
        raise ValueError(f"--prior takes one of {', '.join(PRIOR_KINDS)}, got {cfg.prior!r}")
    if cfg.prior != "none" and game not in SCORE_GAMES:
        raise ValueError(f"--prior {cfg.prior} is for {', '.join(SCORE_GAMES)} only, not {game!r}")
    if not 0 <= cfg.versus_greedy <= 1:
        raise ValueError(f"--versus-greedy must be in 0..1, got {cfg.versus_greedy}")
    cfg.versus = ",".join(versus_agents(cfg.versus, game, options or {}))
    if not 0 <= cfg.lam <= 1:
        raise ValueError(f"--lam must be in 0..1, got {cfg.lam}")
    if not 0 <= cfg.epsilon <= 1:
        raise ValueError(f"--epsilon must be in 0..1, got {cfg.epsilon}")
    if cfg.learning_rate_end is not None and not 0 < cfg.learning_rate_end <= cfg.learning_rate:
        raise ValueError(f"--learning-rate-end must be in (0, --learning-rate {cfg.learning_rate}], "
                         f"got {cfg.learning_rate_end}")  # fmt: skip
    if not 0 < cfg.anneal <= 1:
        raise ValueError(f"--anneal must be in (0, 1], got {cfg.anneal}")
    if cfg.batch_size > cfg.buffer:
        raise ValueError(f"--batch-size {cfg.batch_size} exceeds --buffer {cfg.buffer}")
    return cfg


def versus_agents(names: str, game: str, options: dict[str, Any]) -> list[str]:
    """The agents of ``--versus`` (comma-separated): registered agents that play ``game`` with no argument
    from its observation (searching agents are refused).

    Each is made once here, so that a network the zoo lacks (``ppo`` for these options) fails before the run.
    """
    import agents
    from agents.registry import AGENT_NAMES, available

    listed = [n.strip() for n in str(names).split(",") if n.strip()]
    unknown = [n for n in listed if n not in AGENT_NAMES]
    if not listed or unknown:
        raise ValueError(f"--versus takes registered agents, comma-separated ({', '.join(AGENT_NAMES)}), "
                         f"got {names!r}")  # fmt: skip
    missing = [n for n in listed if not available(n, game)]
    if missing:
        raise ValueError(f"--versus: {', '.join(missing)} does not play {game!r}")
    for name in dict.fromkeys(listed):
        agent = agents.make(name, game, **options)  # the zoo's error where no network is shipped for these options
        if callable(getattr(agent, "observe_view", None)):
            raise ValueError(f"--versus: {name} searches the information views, which the actors do not give; "
                             "choose agents that read the observation (random, greedy, ppo, exit, dmc)")  # fmt: skip
    return listed


def fresh_stats() -> dict[str, Any]:
    """The counters of a new run (``STAT_KEYS`` at 0), its evaluations and sessions."""
    return {**dict.fromkeys(STAT_KEYS, 0), "evals": [], "sessions": [], "loss": None}


def rates(stats: dict[str, Any]) -> dict[str, float]:
    """Positions generated and learned per second of the run, and the actor's and learner's shares of it."""
    seconds = max(float(stats["seconds"]), 1e-9)
    busy = max(float(stats["seconds_actor"]) + float(stats["seconds_learner"]), 1e-9)
    return {
        "generated_per_second": stats["positions_generated"] / seconds,
        "learned_per_second": stats["positions_learned"] / seconds,
        "agent_steps_per_second": stats["agent_steps"] / seconds,
        "actor_share": stats["seconds_actor"] / busy,
        "learner_share": stats["seconds_learner"] / busy,
    }


class DmcRun:
    """One run folder: config.json, checkpoints/latest.zip, checkpoints/pos_N.zip, training.json, final.zip."""

    def __init__(self, cfg: DmcConfig, folder: Path) -> None:
        self.cfg, self.folder = cfg, folder
        self.ckpt = folder / "checkpoints"
        self.ckpt.mkdir(parents=True, exist_ok=True)

    def save(self, network: Any, optimizer: Any, stats: dict[str, Any], path: Path | None = None) -> Path:
        """The network, optimizer and counters to ``path`` (default latest.zip), then training.json (last)."""
        from agents.dmc import save_dmc
        from experiments.training.run_folder import write_atomic

        training = {"algorithm": "dmc", "dmc": dataclasses.asdict(self.cfg), "stats": stats}
        out = save_dmc(path or self.ckpt / "latest.zip", network, self.cfg.game, self.cfg.options, training, optimizer)
        if path is None:
            write_atomic(self.folder / "training.json", json.dumps({**stats, "rates": rates(stats)}, indent=1))
        return out

    def restore(self) -> tuple[Any, Any, dict[str, Any]]:
        """(network, optimizer state, counters) of latest.zip, for ``--resume``."""
        from agents.dmc import load_dmc

        network, meta, optimizer_state = load_dmc(self.ckpt / "latest.zip", self.cfg.game, self.cfg.options)
        stats = meta.get("training", {}).get("stats")
        if not isinstance(stats, dict) or any(not isinstance(stats.get(k), (int, float)) for k in STAT_KEYS):
            raise ValueError(f"--resume: {self.ckpt / 'latest.zip'} records no dmc counters")
        network.train()
        return network, optimizer_state, stats


def start_from(network: Any, cfg: DmcConfig) -> None:
    """Copy the network of the dmc checkpoint ``cfg.init`` into ``network`` (the run's own architecture).

    The checkpoint must be for the run's game and options and have the same layers (``--net``,
    ``--features``, ``--prior``); the optimizer and counters start afresh.
    """
    from agents.checkpoint import CheckpointError
    from agents.dmc import load_dmc

    try:
        source, _, _ = load_dmc(cfg.init, cfg.game, cfg.options)
    except (CheckpointError, FileNotFoundError) as e:
        raise ValueError(f"--init {cfg.init!r}: {e}") from None
    mine, theirs = network.state_dict(), source.state_dict()
    differ = sorted(k for k in set(mine) | set(theirs) if k not in mine or k not in theirs
                    or mine[k].shape != theirs[k].shape)  # fmt: skip
    if differ:
        raise ValueError(
            f"--init {cfg.init!r}: its network is not this run's (--net {cfg.net}, --features {cfg.features}, "
            f"--prior {cfg.prior}); layers that differ: {', '.join(differ[:4])}"
        )
    network.load_state_dict(theirs)


def check_init(cfg: DmcConfig) -> None:
    """Fail before the run starts when ``--init`` cannot start this run's network (``start_from``'s errors)."""
    if cfg.init:
        from agents.dmc import build_network

        start_from(build_network(cfg.game, cfg.options, cfg.net, cfg.features, cfg.prior), cfg)


def teacher_plan(cfg: DmcConfig) -> Any:
    """The plan of ``cfg.teacher`` (one dmc network, or the mean Q of several: ``agents.dmc.DmcAgent``), None
    without one; ``ValueError`` naming what is wrong (a missing file, another game's network, ...)."""
    if not cfg.teacher:
        return None
    from agents.checkpoint import CheckpointError
    from agents.dmc import DmcAgent

    try:
        return DmcAgent(cfg.game, path=cfg.teacher, **cfg.options).plan
    except (CheckpointError, OSError, ValueError) as e:
        raise ValueError(f"--teacher {cfg.teacher!r}: {e}") from None


def one_blas_thread() -> None:
    """numpy's BLAS on one thread: the actors' small matrix products run 5-10x slower on a loaded machine when
    OpenBLAS spreads them over threads that wait for each other (measured on grid's trunk: 77 ms against 6)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with the train extra
        return
    threadpool_limits(1, user_api="blas")


def learning_rate_at(cfg: DmcConfig, positions: float) -> float:
    """The learning rate after ``positions`` generated: ``learning_rate``, then over the last ``anneal`` share of
    the budget a straight line down to ``learning_rate_end`` (constant where that is None)."""
    if cfg.learning_rate_end is None:
        return cfg.learning_rate
    start = (1.0 - cfg.anneal) * cfg.positions
    done = min(max((positions - start) / max(cfg.positions - start, 1.0), 0.0), 1.0)
    return cfg.learning_rate + done * (cfg.learning_rate_end - cfg.learning_rate)


def learn_step(
    network: Any, optimizer: Any, batch: tuple[np.ndarray, ...], clip: float, level_weight: float = 1.0
) -> float:
    """One Adam step of squared error between Q(s, a) and the returns; the loss.

    A batch of taught positions (``ReplayBuffer.sample`` with a teacher: the teacher's Q of every action and the
    legal actions as well) learns the teacher's Q of every legal action instead: the mean squared error over them,
    split into the error of each position's mean over its legal actions (the level, weighted ``level_weight``)
    and the errors around it (the differences between actions, which alone decide the move); at
    ``level_weight`` 1 it is the plain mean squared error.
    """
    import torch

    if len(batch) == 5:
        obs, _, _, taught, legal = batch
        keep = torch.from_numpy(legal).float()
        error = (network(torch.from_numpy(obs)) - torch.from_numpy(taught)) * keep  # 0 on illegal actions
        count = keep.sum(dim=1)
        level = error.sum(dim=1) / count  # each position's mean error over its legal actions
        spread = ((error - level[:, None]) * keep).square().sum()  # the errors in the differences between actions
        loss = (spread + level_weight * (count * level.square()).sum()) / count.sum()
    else:
        obs, actions, targets = batch
        q = network.q_stored(torch.from_numpy(obs), torch.from_numpy(actions))
        loss = torch.nn.functional.mse_loss(q, torch.from_numpy(targets))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(network.parameters(), clip)
    optimizer.step()
    return float(loss.detach())


def evaluate_against_greedy(cfg: DmcConfig, path: Path, seed: int) -> dict[str, Any]:
    """The network at ``path`` against greedy (random where greedy does not play) on seat-swapped deals."""
    from agents.registry import available
    from experiments.play.deals import AgentSpec
    from experiments.play.tournament import run_games, tabulate

    opponent = "greedy" if available("greedy", cfg.game) else "random"
    specs = [AgentSpec("dmc", "dmc", {"path": str(path)}), AgentSpec(opponent, opponent, {})]
    records = run_games(cfg.game, specs, cfg.eval_deals, seed, 1, cfg.options)
    cell = tabulate(records, ["dmc", opponent])[("dmc", opponent)]
    lo, hi = cell.interval
    return {"opponent": opponent, "score": cell.win_rate, "ci95": [lo, hi], "games": cell.games}


def make_actors(cfg: DmcConfig, buffer: Any, seed: Any) -> Any:
    """The run's ``Actors`` (its game, envs, epsilon) writing into ``buffer``: here, or in a Ray actor."""
    from experiments.training.dmc.actors import Actors

    versus = tuple(cfg.versus.split(","))
    return Actors(
        cfg.game,
        cfg.options,
        cfg.envs,
        cfg.epsilon,
        buffer,
        seed,
        cfg.versus_greedy,
        cfg.lam,
        versus,
        teacher_plan(cfg),
    )


class LocalActors:
    """The actors in this process (``--backend local``): ``rounds`` steps of ``Actors`` a phase, on the latest plan."""

    def __init__(self, cfg: DmcConfig, network: Any, buffer: Any, session: int) -> None:
        self.actors = make_actors(cfg, buffer, [cfg.seed, session])
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


def actor_source(
    cfg: DmcConfig, network: Any, buffer: Any, session: int, backend: Any, actors: int | None
) -> contextlib.AbstractContextManager[Any]:
    """Where the positions come from: ``LocalActors``, or Ray actors (``experiments.training.dmc.ray_actors``)."""
    if backend is None or not backend.is_ray:
        return contextlib.nullcontext(LocalActors(cfg, network, buffer, session))
    from experiments.training.dmc.ray_actors import ray_actors

    return ray_actors(cfg, make_actors, network, buffer, session, backend, actors)


def run_dmc(
    cfg: DmcConfig,
    folder: Path,
    resume: bool,
    quiet: bool = False,
    progress: Any = None,
    backend: Any = None,
    actors: int | None = None,
) -> Path:
    """Run (or continue) training in ``folder`` until ``cfg.positions`` are generated; returns final.zip.

    ``backend`` (``experiments.play.backends.Backend``; None: local) says where the actors run; ``actors``:
    how many Ray actors (``experiments.training.dmc.ray_actors``).
    """
    import torch

    from agents.dmc import build_network, save_dmc
    from experiments.training.dmc.actors import ReplayBuffer

    torch.set_num_threads(1)
    one_blas_thread()
    run = DmcRun(cfg, folder)
    if resume:
        network, optimizer_state, stats = run.restore()
    else:
        torch.manual_seed(cfg.seed)
        network, optimizer_state, stats = (
            build_network(cfg.game, cfg.options, cfg.net, cfg.features, cfg.prior),
            None,
            fresh_stats(),
        )
        if cfg.init:
            start_from(network, cfg)
        network.train()
    optimizer = torch.optim.Adam(network.parameters(), lr=cfg.learning_rate)
    if optimizer_state:
        optimizer.load_state_dict(optimizer_state)
    session = len(stats["sessions"])
    stats["sessions"].append({"started_at_positions": stats["positions_generated"], "seconds": 0.0})
    taught = network.spec.num_actions if cfg.teacher and cfg.game != "grid" else 0  # grid: no row of every action
    buffer = ReplayBuffer(cfg.buffer, network.stored_width, taught)
    positions_from = actor_source(cfg, network, buffer, session, backend, actors)
    rng = np.random.default_rng([cfg.seed, session, 1])
    with positions_from as source:  # Ray's start is not the run's time
        owed = 0.0  # positions the learner owes the actors (replay_ratio times those generated)
        start, last_save, losses = time.perf_counter(), time.perf_counter(), []
        base_seconds = float(stats["seconds"])
        next_eval = (int(stats["positions_generated"]) // cfg.eval_every + 1) * cfg.eval_every

        def tick() -> None:
            now = time.perf_counter() - start
            stats["seconds"] = base_seconds + now
            stats["sessions"][-1]["seconds"] = now

        stats["sessions"][-1].update(source.describe())  # Ray runs: the backend and the actors
        while stats["positions_generated"] < cfg.positions:
            new, steps, games, actor_seconds, learner_seconds = source.collect()
            t1 = time.perf_counter()
            stats["positions_generated"] += new
            stats["agent_steps"] += steps
            stats["games"] += games
            owed += cfg.replay_ratio * new
            known = buffer.known() if owed >= cfg.batch_size else None
            for group in optimizer.param_groups:
                group["lr"] = learning_rate_at(cfg, stats["positions_generated"])
            while known is not None and len(known) >= cfg.batch_size and owed >= cfg.batch_size:
                losses.append(learn_step(network, optimizer, buffer.sample(cfg.batch_size, rng, known), cfg.clip,
                                         cfg.teacher_level))  # fmt: skip
                owed -= cfg.batch_size
                stats["positions_learned"] += cfg.batch_size
                stats["updates"] += 1
            source.refresh(network)
            t2 = time.perf_counter()
            stats["seconds_actor"] += actor_seconds
            stats["seconds_learner"] += t2 - t1 + learner_seconds
            if losses:
                stats["loss"] = float(np.mean(losses[-50:]))
            tick()
            if progress is not None:
                progress(stats, new)
            if stats["positions_generated"] >= next_eval or stats["positions_generated"] >= cfg.positions:
                t3 = time.perf_counter()
                point = save_dmc(run.ckpt / f"pos_{stats['positions_generated']}.zip", network, cfg.game, cfg.options,
                                 {"algorithm": "dmc", "stats": {k: stats[k] for k in STAT_KEYS}})  # fmt: skip
                result = evaluate_against_greedy(cfg, point, 10_000 + len(stats["evals"]))
                result.update({k: stats[k] for k in ("positions_generated", "positions_learned", "seconds")})
                stats["evals"].append(result)
                stats["seconds_eval"] += time.perf_counter() - t3
                next_eval = (int(stats["positions_generated"]) // cfg.eval_every + 1) * cfg.eval_every
                tick()
                run.save(network, optimizer, stats)
                last_save = time.perf_counter()
                if progress is not None:
                    progress(stats, 0, result)
            elif time.perf_counter() - last_save >= cfg.checkpoint_seconds:
                run.save(network, optimizer, stats)
                last_save = time.perf_counter()
        tick()
    run.save(network, optimizer, stats)
    final = folder / "final.zip"
    save_dmc(final, network, cfg.game, cfg.options, {"algorithm": "dmc", "stats": {k: stats[k] for k in STAT_KEYS}})
    return final
