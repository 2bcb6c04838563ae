"""Train MaskablePPO by self-play against a pool, then print the agent-vs-agent table.

``python -m experiments.train GAME`` (``all`` for every game). The learner plays one seat of the
single-agent view (``jericho_env.single_agent``); the other seats are drawn per episode from a
pool of random, greedy and frozen snapshots of the learner, a snapshot being added every
``--snapshot-every`` steps. Every ``--eval-every`` steps the learner plays seat-swapped deals
against greedy (mask-aware, through the tournament code). Checkpoints go to the run folder every
``--checkpoint-every`` steps and on Ctrl-C; ``--resume RUN_FOLDER`` continues from the last one.
At the end: a tournament of random, greedy and the trained agent (with a prior or ``--init``, also the
untrained starting policy, as "untrained"), printed and saved. With a prior
(``--prior greedy`` or ``greedy-scores``; the default for grid and walls is ``greedy-scores``) the policy starts from
greedy's judgement and learns where to depart from it (``agents.prior``). SB3's training statistics go
to ``logs/progress.csv`` in the run folder.

Examples:
    python -m experiments.train grid
    python -m experiments.train castles --timesteps 200000 --seed 3
    python -m experiments.train walls --option num_players=3
    python -m experiments.train grid --resume runs/train/grid-20261129-160000
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.prior import PRIORS, check_prior
from experiments.evaluate import cli_parser, parse_option, positive_float, positive_int, run_cli
from jericho_env.registry import GAME_IDS, make_rules

# Steps per game sized for at most ~15 minutes on a 2-core CPU (measured training speeds: grid ~350 steps/s
# with the conv network and 2 epochs, walls ~560, castles ~1,770 alone; see the README's "Results" section).
# castles at 1.5M steps (15 min) scored worse against random than at 900k (88.2% against 93.0%). grid on its
# prior: 150k steps at 1e-4 take about 16 min with the tournament (300k at 3e-4 took 31 min and scored less).
DEFAULT_TIMESTEPS = {"grid": 150_000, "walls": 400_000, "castles": 900_000}
# PPO epochs per update: 2 for grid made each step 1.8x cheaper and scored better at equal steps
# (180k steps: vs random 92.3% against 89.4% with 5); for walls 2 scored worse (78.5% against 85.0%).
DEFAULT_N_EPOCHS = {"grid": 2, "walls": 5, "castles": 5}
# Adam learning rate: castles learned much faster at 1e-3 than at SB3's 3e-4 (900k steps: vs random 93.0%
# against 88.2%, vs greedy 75.2% against 57.2%); walls did worse at 1e-3 (80.4% against 85.0% vs random).
# grid on its prior: at 3e-4 PPO spent the prior's edge over greedy (300k steps: 55.3% and 53.3% against greedy
# at seeds 0 and 1, its start 62.3% and 61.4%); at 1e-4 (150k steps) it kept it: 60.1% and 60.9%.
DEFAULT_LEARNING_RATE = {"grid": 1e-4, "walls": 3e-4, "castles": 1e-3}
# Fixed opponents per game; naming an agent twice doubles its share of episodes. More greedy helped
# castles (vs greedy 57% at 900k steps). Castles with the linear schedule: random named twice scored 95.4% against
# random and 78.4% against greedy, once 94.6% and 77.0%. Grid: see the README for the pools tried on the prior.
DEFAULT_POOL = {
    "grid": "random,greedy",
    "walls": "random,greedy,greedy",
    "castles": "random,random,greedy,greedy",
}
GRID_POLICIES = ("grid-conv", "grid-features")  # agents.networks.GridConvPolicy, without / with GridFeatures
# Learning-rate schedule: castles scored better with the rate falling linearly to 0 over the budget (900k steps:
# vs random 94.6% against 93.0%, vs greedy 77.0% against 75.2%); grid and walls were not tried with it.
DEFAULT_LR_SCHEDULE = {"grid": "constant", "walls": "constant", "castles": "linear"}
# Residual prior (agents.prior): grid and walls start from greedy's score of every move (grid: passing included).
# From scratch grid stayed far below greedy (3.1% with grid-conv, 5.5% with grid-features); on the prior it beat
# greedy (README). Walls from scratch: 85.0% against random, 1.9% alone against 3 greedy; on greedy-scores 95.9%
# and 24.4% (25% is an even share). Castles beats greedy without one.
DEFAULT_PRIOR = {"grid": "greedy-scores", "walls": "greedy-scores", "castles": "none"}
# The network behind "--policy auto": grid's convolutional body plus GridFeatures planes, else SB3's MLP.
DEFAULT_POLICY = {"grid": "grid-features", "walls": "mlp", "castles": "mlp"}
LR_SCHEDULES = ("constant", "linear")
POLICIES = ("auto", "mlp", *GRID_POLICIES, "walls-mlp")


@dataclasses.dataclass
class TrainConfig:
    """Everything a training run depends on (written to config.json in the run folder)."""

    game: str
    timesteps: int = 0  # 0: the game's default budget (DEFAULT_TIMESTEPS)
    seed: int = 0  # seeds torch, numpy, the envs, the opponents and the final tournament
    n_envs: int = 4  # parallel envs feeding PPO
    vec: str = "dummy"  # "dummy" (in-process) or "subproc" (one process per env)
    policy: str = "auto"  # "mlp", "grid-conv", "grid-features", "walls-mlp" or "auto" (DEFAULT_POLICY)
    net: str = "256,128"  # mlp hidden layers: the first is shared by policy and value heads, the rest are per head
    learning_rate: float = 0.0  # 0: the game's default (DEFAULT_LEARNING_RATE)
    # "constant", or "linear": from the learning rate down to 0 at the end of the budget; "": DEFAULT_LR_SCHEDULE
    lr_schedule: str = ""
    n_steps: int = 512  # rollout length per env between updates
    batch_size: int = 512
    n_epochs: int = 0  # PPO epochs per update; 0 = the game's default (DEFAULT_N_EPOCHS)
    gamma: float = 0.997  # rewards come only at the end of a game
    gae_lambda: float = 0.95
    ent_coef: float = 0.01
    # "greedy": residual on greedy's move, "greedy-scores" on greedy's score of every move (agents.prior),
    # "none": from scratch; "" = the game's default (DEFAULT_PRIOR)
    prior: str = ""
    prior_weight: float = 5.0  # initial logit bonus of the prior's move (trained with the rest)
    init: str = ""  # a checkpoint whose policy weights start the run (e.g. experiments.imitate's clone)
    pool: str = ""  # fixed opponents (agent names, comma-separated; "" = DEFAULT_POOL); snapshots join them
    snapshot_every: int = 40_000  # add a frozen copy of the learner to the opponent pool
    max_snapshots: int = 5  # the pool keeps random, greedy and this many latest snapshots
    eval_every: int = 50_000  # evaluate against greedy
    eval_deals: int = 40  # deals per evaluation (each played in every seat arrangement)
    checkpoint_every: int = 25_000
    final_deals: int = 250  # deals per pair in the final tournament
    workers: int = 2  # processes for the final tournament
    options: dict[str, Any] = dataclasses.field(default_factory=dict)  # game options

    def budget(self) -> int:
        """The number of learner steps to train for."""
        return self.timesteps or DEFAULT_TIMESTEPS[self.game]

    def lr(self) -> float:
        """The Adam learning rate."""
        return self.learning_rate or DEFAULT_LEARNING_RATE[self.game]

    def lr_value(self) -> Any:
        """SB3's learning_rate argument: the rate, or a schedule of the progress remaining (1 -> 0)."""
        rate = self.lr()
        if (self.lr_schedule or DEFAULT_LR_SCHEDULE[self.game]) == "linear":

            def linear_to_zero(progress_remaining: float) -> float:  # a closure: checkpoints store it by value
                # the arithmetic of SB3's LinearSchedule(rate, 0, 1), which older SB3 releases lack
                return rate + (1.0 - progress_remaining) * (0.0 - rate) / 1.0

            return linear_to_zero
        return rate

    def prior_name(self) -> str:
        """The prior's name (agents.prior.PRIORS), "none" for none; "" resolves to the game's DEFAULT_PRIOR."""
        return self.prior or DEFAULT_PRIOR[self.game]

    def resolved(self) -> TrainConfig:
        """This config with every per-game default filled in (what config.json records for a new run)."""
        return dataclasses.replace(
            self,
            timesteps=self.budget(),
            policy=resolve_policy(self.policy, self.game),
            learning_rate=self.lr(),
            lr_schedule=self.lr_schedule or DEFAULT_LR_SCHEDULE[self.game],
            n_epochs=self.n_epochs or DEFAULT_N_EPOCHS[self.game],
            prior=self.prior_name(),
            pool=self.pool or DEFAULT_POOL[self.game],
        )


class LazyPPOOpponent:
    """A frozen snapshot as an opponent: picklable (a path), loaded on first use in whatever process."""

    name = "ppo-snapshot"

    def __init__(self, game_id: str, path: str, options: dict[str, Any]) -> None:
        self.game_id, self.path, self.options = game_id, path, options
        self._agent: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {"game_id": self.game_id, "path": self.path, "options": self.options, "_agent": None}

    def reset(self, seed: int | None = None) -> None:
        self._get().reset(seed)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return self._get().act(observation)

    def _get(self) -> Any:
        if self._agent is None:
            from agents.ppo import PPOAgent

            self._agent = PPOAgent(self.game_id, path=self.path, deterministic=False, **self.options)
        return self._agent


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    p = cli_parser("experiments.train", __doc__)
    p.add_argument("game", help=f"which game: {', '.join(GAME_IDS)}, or all")
    d = TrainConfig("grid")
    p.add_argument(
        "--timesteps", type=positive_int, default=None, help=f"learner steps (default per game: {DEFAULT_TIMESTEPS})"
    )
    p.add_argument("--seed", type=int, default=d.seed, help="seed of everything (default 0)")
    p.add_argument("--n-envs", type=positive_int, default=d.n_envs, help="parallel envs (default 4)")
    p.add_argument("--vec", choices=["dummy", "subproc"], default=d.vec, help="in-process or subprocess envs")
    p.add_argument(
        "--policy",
        choices=POLICIES,
        default=d.policy,
        help="network: mlp, grid-conv (convolutional, grid only), grid-features (grid-conv plus capture and fit "
        f"planes), walls-mlp (mlp plus majority features, walls only) or auto (default per game: {DEFAULT_POLICY})",
    )
    p.add_argument(
        "--net", default=d.net, help="mlp hidden layer sizes, the first shared by both heads (default 256,128)"
    )
    p.add_argument(
        "--learning-rate",
        type=positive_float,
        default=None,
        help=f"Adam learning rate (default per game: {DEFAULT_LEARNING_RATE})",
    )
    p.add_argument(
        "--lr-schedule",
        choices=LR_SCHEDULES,
        default=d.lr_schedule,
        help=f"constant, or linear: down to 0 at the end of the budget (default per game: {DEFAULT_LR_SCHEDULE})",
    )
    p.add_argument(
        "--n-epochs",
        type=positive_int,
        default=None,
        help=f"PPO epochs per update (default per game: {DEFAULT_N_EPOCHS})",
    )
    p.add_argument("--ent-coef", type=float, default=d.ent_coef, help="entropy bonus (default 0.01)")
    p.add_argument(
        "--prior",
        choices=PRIORS,
        default=d.prior,
        help="start from greedy's move and learn where to depart (agents.prior); greedy-scores (grid, walls): "
        "from greedy's score of every move (grid: passing included); none: from scratch "
        f"(default per game: {DEFAULT_PRIOR})",
    )
    p.add_argument(
        "--prior-weight", type=float, default=d.prior_weight, help="initial logit bonus of the prior's move (default 5)"
    )
    p.add_argument(
        "--pool", default=d.pool, help=f"fixed opponents, comma-separated (default per game: {DEFAULT_POOL})"
    )
    p.add_argument(
        "--init",
        default=d.init,
        metavar="CHECKPOINT",
        help="start from this checkpoint's policy weights (same game and --policy), e.g. experiments.imitate's clone",
    )
    p.add_argument("--snapshot-every", type=positive_int, default=d.snapshot_every)
    p.add_argument("--eval-every", type=positive_int, default=d.eval_every)
    p.add_argument("--eval-deals", type=positive_int, default=d.eval_deals)
    p.add_argument("--checkpoint-every", type=positive_int, default=d.checkpoint_every)
    p.add_argument("--final-deals", type=positive_int, default=d.final_deals, help="deals per pair in the final table")
    p.add_argument("--workers", type=positive_int, default=d.workers, help="processes for the final tournament")
    p.add_argument("--option", type=parse_option, action="append", default=[], metavar="KEY=VALUE", help="game option")
    p.add_argument("--out", default=None, help="run folder (default runs/train/GAME-TIME)")
    p.add_argument("--resume", default=None, metavar="RUN_FOLDER", help="continue the run in this folder")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    return p


def resolve_policy(policy: str, game: str) -> str:
    """``"auto"`` -> the game's ``DEFAULT_POLICY``; a clear error for a policy made for another game."""
    if policy not in POLICIES:
        raise ValueError(f"--policy takes one of {', '.join(POLICIES)}, got {policy!r}")
    if policy == "auto":
        return DEFAULT_POLICY[game]
    if policy in GRID_POLICIES and game != "grid":
        raise ValueError(f"--policy {policy} is for grid only, not {game!r}")
    if policy == "walls-mlp" and game != "walls":
        raise ValueError(f"--policy walls-mlp is for walls only, not {game!r}")
    return policy


def policy_class(policy: str, game: str, prior: str = "none") -> Any:
    """The SB3 policy class: ``"MlpPolicy"``, ``PriorMlpPolicy`` or ``GridConvPolicy`` (``agents.networks``)."""
    from agents.networks import GridConvPolicy, PriorMlpPolicy

    if resolve_policy(policy, game) in GRID_POLICIES:
        return GridConvPolicy
    return "MlpPolicy" if check_prior(prior) == "none" else PriorMlpPolicy


def policy_kwargs(
    net: str, policy: str = "mlp", game: str = "grid", prior: str = "none", prior_weight: float = 5.0
) -> dict[str, Any]:
    """SB3 policy arguments: for mlp a shared first layer (``SharedLinearExtractor``), then per-head layers."""
    from agents.networks import SharedLinearExtractor, WallsExtractor

    extra = {} if check_prior(prior, game) == "none" else {"prior": prior, "prior_weight": prior_weight}
    resolved = resolve_policy(policy, game)
    if resolved == "grid-conv":
        return extra  # GridConvPolicy's own defaults (see agents/networks.py)
    if resolved == "grid-features":
        return {"features": True, **extra}  # plus agents.networks.GridFeatures planes
    sizes = parse_net(net)
    return {
        "features_extractor_class": WallsExtractor if resolved == "walls-mlp" else SharedLinearExtractor,
        "features_extractor_kwargs": {"features_dim": sizes[0]},
        "net_arch": sizes[1:],
        **extra,
    }


def parse_pool(text: str) -> list[str]:
    """``"random,greedy"`` -> ["random", "greedy"], each a known agent that needs no checkpoint."""
    from agents.registry import AGENT_NAMES

    names = [x.strip() for x in text.split(",") if x.strip()]
    bad = [n for n in names if n not in AGENT_NAMES or n == "ppo"]
    if not names or bad:
        allowed = ", ".join(a for a in AGENT_NAMES if a != "ppo")
        raise ValueError(f"--pool takes agent names from {allowed}, got {text!r}")
    return names


def parse_net(text: str) -> list[int]:
    """``"256,256"`` -> [256, 256]."""
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--net takes comma-separated layer sizes such as 256,256, got {text!r}") from None
    if not sizes or any(s < 1 for s in sizes):
        raise ValueError(f"--net needs positive layer sizes, got {text!r}")
    return sizes


# ---------------------------------------------------------------------------------------- training
class Trainer:
    """One training run: envs, model, pool, callbacks, checkpoints, final tournament."""

    def __init__(self, cfg: TrainConfig, folder: Path, quiet: bool = False) -> None:
        self.cfg, self.folder, self.quiet = cfg, folder, quiet
        self.ckpt_dir = folder / "checkpoints"
        self.snap_dir = folder / "snapshots"
        self.ckpt_dir.mkdir(parents=True, exist_ok=True)
        self.snap_dir.mkdir(parents=True, exist_ok=True)
        self.snapshots: list[str] = []
        self.evals: list[dict[str, Any]] = []

    def make_vec_env(self) -> Any:
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

        import agents
        import jericho_env

        cfg = self.cfg
        names = parse_pool(cfg.pool or DEFAULT_POOL[cfg.game])
        pool: list[Any] = [agents.make(name, cfg.game, **cfg.options) for name in names]
        pool += [LazyPPOOpponent(cfg.game, s, cfg.options) for s in self.snapshots]

        def factory(rank: int) -> Any:
            def _make() -> Any:
                env = jericho_env.single_agent(cfg.game, opponents=list(pool), seat="random", **cfg.options)
                if cfg.prior_name() != "none":
                    from agents.prior import PriorHintEnv

                    env = PriorHintEnv(env, cfg.prior_name(), cfg.game, **cfg.options)
                env.reset(seed=cfg.seed * 1000 + rank)
                return env

            return _make

        fns = [factory(i) for i in range(cfg.n_envs)]
        if cfg.vec == "subproc":
            return SubprocVecEnv(fns, start_method="fork")
        return DummyVecEnv(fns)

    def add_snapshot(self, model: Any, steps: int) -> None:
        path = str(self.snap_dir / f"step_{steps}.zip")
        model.save(path)
        self.snapshots.append(path)
        self.snapshots = self.snapshots[-self.cfg.max_snapshots :]
        model.get_env().env_method(
            "add_opponent", LazyPPOOpponent(self.cfg.game, path, self.cfg.options), self.cfg.max_snapshots
        )

    def evaluate_vs_greedy(self, model: Any, steps: int) -> dict[str, Any]:
        from experiments.tournament import AgentSpec, run_games, tabulate

        path = str(self.ckpt_dir / "eval.zip")
        model.save(path)
        specs = [AgentSpec("ppo", "ppo", {"path": path}), AgentSpec("greedy", "greedy", {})]
        recs = run_games(self.cfg.game, specs, self.cfg.eval_deals, seed=10_000 + steps, options=self.cfg.options)
        cell = tabulate(recs, ["ppo", "greedy"])[("ppo", "greedy")]
        lo, hi = cell.interval
        row = {"steps": steps, "vs_greedy": cell.win_rate, "ci95": [lo, hi], "games": cell.games}
        self.evals.append(row)
        return row

    def make_logger(self, done_steps: int) -> Any:
        """SB3's training statistics (losses, entropy, KL, clip fraction, explained variance) as logs/progress.csv.

        Without it SB3 leaves a folder in the system's temp directory for every run. A resumed run keeps
        the earlier session's file as progress.until-STEPS.csv.
        """
        from stable_baselines3.common.logger import configure

        logs = self.folder / "logs"
        logs.mkdir(exist_ok=True)
        if (logs / "progress.csv").exists() and done_steps:
            (logs / "progress.csv").replace(logs / f"progress.until-{done_steps}.csv")
        return configure(str(logs), ["csv"])

    def save_checkpoint(self, model: Any, steps: int) -> None:
        model.save(str(self.ckpt_dir / "latest.zip"))
        state = {"num_timesteps": steps, "snapshots": self.snapshots, "evals": self.evals}
        tmp = self.ckpt_dir / "state.json.tmp"
        tmp.write_text(json.dumps(state, indent=1), encoding="utf-8")
        tmp.replace(self.ckpt_dir / "state.json")

    def run(self, resume: bool = False) -> Path:
        import torch
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.utils import set_random_seed

        cfg = self.cfg
        set_random_seed(cfg.seed)
        torch.set_num_threads(1)  # measured: 2 threads on 2 busy cores ran 10x slower (contention)
        done_steps = 0
        if resume:
            state = json.loads((self.ckpt_dir / "state.json").read_text(encoding="utf-8"))
            done_steps = int(state["num_timesteps"])
            self.snapshots = [s for s in state["snapshots"] if Path(s).exists()]
            self.evals = state["evals"]
        vec = self.make_vec_env()
        if resume:
            from agents.ppo import load_model

            load_model(self.ckpt_dir / "latest.zip")  # clear error if the checkpoint is damaged
            model = MaskablePPO.load(str(self.ckpt_dir / "latest.zip"), env=vec, device="cpu")
            model.num_timesteps = done_steps
        else:
            model = MaskablePPO(
                policy_class(cfg.policy, cfg.game, cfg.prior_name()),
                vec,
                learning_rate=cfg.lr_value(),
                n_steps=cfg.n_steps,
                batch_size=cfg.batch_size,
                n_epochs=cfg.n_epochs or DEFAULT_N_EPOCHS[cfg.game],
                gamma=cfg.gamma,
                gae_lambda=cfg.gae_lambda,
                ent_coef=cfg.ent_coef,
                policy_kwargs=policy_kwargs(cfg.net, cfg.policy, cfg.game, cfg.prior_name(), cfg.prior_weight),
                seed=cfg.seed,
                device="cpu",
                verbose=0,
            )
        if cfg.init and not resume:
            start_from(model, cfg.init)
        if not resume and (cfg.init or cfg.prior_name() != "none"):
            model.save(str(self.ckpt_dir / "initial.zip"))  # the starting policy joins the final tournament
        model.set_logger(self.make_logger(done_steps))
        remaining = cfg.budget() - done_steps
        t0 = time.perf_counter()
        if remaining > 0:
            callback = _Callback(self, done_steps, cfg.budget(), self.quiet)
            try:
                model.learn(remaining, callback=callback, reset_num_timesteps=False)
            except KeyboardInterrupt:
                self.save_checkpoint(model, model.num_timesteps)
                print(
                    f"\ninterrupted: checkpoint saved at {model.num_timesteps} steps. Resume with:\n"
                    f"  python -m experiments.train {cfg.game} --resume {self.folder}"
                )
                raise
            finally:
                callback.close()
        train_seconds = time.perf_counter() - t0
        final = self.folder / "final.zip"
        model.save(str(final))
        self.save_checkpoint(model, model.num_timesteps)
        vec.close()
        steps_done = model.num_timesteps - done_steps
        (self.folder / "training.json").write_text(
            json.dumps(
                {
                    "steps": model.num_timesteps,
                    "seconds_this_session": round(train_seconds, 1),
                    "steps_per_second": round(steps_done / train_seconds, 1) if train_seconds > 0 else None,
                    "evals": self.evals,
                },
                indent=1,
            ),
            encoding="utf-8",
        )
        if train_seconds > 0:
            rate = steps_done / train_seconds
            print(f"trained {steps_done} steps in {train_seconds:.0f} s ({rate:.0f} steps/s); model: {final}")
        return final


def start_from(model: Any, path: str) -> None:
    """Copy the policy weights of the checkpoint ``path`` into ``model``; clear errors when they do not fit."""
    from agents.ppo import load_model

    source = load_model(path)
    if source.observation_space.shape != model.observation_space.shape or source.action_space != model.action_space:
        raise ValueError(
            f"--init {path!r}: its observations {source.observation_space.shape} and actions {source.action_space} "
            f"do not match this run's {model.observation_space.shape} and {model.action_space} (other game or options?)"
        )
    if type(source.policy) is not type(model.policy):
        raise ValueError(
            f"--init {path!r} holds a {type(source.policy).__name__}, this run builds a {type(model.policy).__name__}"
        )
    try:
        model.policy.load_state_dict(source.policy.state_dict())
    except RuntimeError as e:
        raise ValueError(f"--init {path!r}: the network differs from this run's (--net, --policy?): {e}") from None


class _Callback:
    """Progress bar, snapshots, evaluation and checkpoints, at step thresholds."""

    def __new__(cls, trainer: Trainer, start: int, total: int, quiet: bool) -> Any:
        from stable_baselines3.common.callbacks import BaseCallback

        class Impl(BaseCallback):
            def __init__(self) -> None:
                super().__init__()
                self.bar: Any = None
                self.next_snap = _next_multiple(start, trainer.cfg.snapshot_every)
                self.next_eval = _next_multiple(start, trainer.cfg.eval_every)
                self.next_ckpt = _next_multiple(start, trainer.cfg.checkpoint_every)
                self.last = start

            def _on_training_start(self) -> None:
                if not quiet:
                    from tqdm.auto import tqdm

                    self.bar = tqdm(
                        total=total, initial=start, desc=f"train {trainer.cfg.game}", unit="step", dynamic_ncols=True
                    )

            def _on_step(self) -> bool:
                n = self.num_timesteps
                if self.bar is not None:
                    self.bar.update(n - self.last)
                self.last = n
                if n >= self.next_snap:
                    trainer.add_snapshot(self.model, n)
                    self.next_snap += trainer.cfg.snapshot_every
                if n >= self.next_eval:
                    row = trainer.evaluate_vs_greedy(self.model, n)
                    lo, hi = row["ci95"]
                    msg = f"vs greedy {100 * row['vs_greedy']:.0f}% [{100 * lo:.0f}, {100 * hi:.0f}]"
                    if self.bar is not None:
                        self.bar.set_postfix_str(msg)
                    elif not quiet:
                        print(f"{n} steps: {msg}")
                    self.next_eval += trainer.cfg.eval_every
                if n >= self.next_ckpt:
                    trainer.save_checkpoint(self.model, n)
                    self.next_ckpt += trainer.cfg.checkpoint_every
                return True

            def close(self) -> None:
                if self.bar is not None:
                    self.bar.close()

        return Impl()


def _next_multiple(x: int, k: int) -> int:
    return (x // k + 1) * k


# ---------------------------------------------------------------------------------------- CLI
def config_from_args(args: argparse.Namespace, game: str) -> TrainConfig:
    """A TrainConfig from parsed arguments."""
    parse_net(args.net)
    resolve_policy(args.policy, game)
    prior = check_prior(args.prior or DEFAULT_PRIOR[game], game)  # "": the game's default
    if args.pool:
        parse_pool(args.pool)
    if args.init:
        from agents.ppo import load_model

        load_model(args.init)  # missing or damaged: a clear error before any work
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig) if hasattr(args, f.name)}
    given.update(game=game, options=dict(args.option))
    given.update(timesteps=args.timesteps or 0, n_epochs=args.n_epochs or 0)  # 0: the game's default
    given.update(learning_rate=args.learning_rate or 0.0)  # 0: the game's default
    given.update(lr_schedule=args.lr_schedule or DEFAULT_LR_SCHEDULE[game])  # written out in config.json
    given.update(prior=prior)  # written out resolved in config.json
    cfg = TrainConfig(**given)
    make_rules(game, **cfg.options)  # bad options fail now
    return cfg


def train_one(cfg: TrainConfig, out: str | None, resume: str | None, quiet: bool) -> dict[str, Any]:
    """Train (or resume) one game, then run and save the final tournament."""
    from experiments.evaluate import against_baselines
    from experiments.report import run_folder

    if resume:
        folder = Path(resume)
        cfg_path = folder / "config.json"
        if not cfg_path.is_file() or not (folder / "checkpoints" / "state.json").is_file():
            raise FileNotFoundError(
                f"--resume {resume!r}: no config.json and checkpoints/state.json there (not a training run folder?)"
            )
        saved = json.loads(cfg_path.read_text(encoding="utf-8"))
        if saved.get("game") != cfg.game:
            raise ValueError(f"--resume {resume!r} is a {saved.get('game')!r} run, not {cfg.game!r}")
        budget = cfg.timesteps  # --timesteps with --resume extends the run
        cfg = TrainConfig(**saved)
        if budget > cfg.budget():
            cfg.timesteps = budget
            cfg_path.write_text(json.dumps(dataclasses.asdict(cfg), indent=1), encoding="utf-8")
    else:
        folder = run_folder("train", cfg.game, out)
        cfg = cfg.resolved()  # config.json says what was used, not "the default of the day"
        (folder / "config.json").write_text(json.dumps(dataclasses.asdict(cfg), indent=1), encoding="utf-8")
    print(f"training {cfg.game} for {cfg.budget()} steps; run folder {folder}/")
    t0 = time.perf_counter()
    final = Trainer(cfg, folder, quiet).run(resume=bool(resume))
    out_dir = str(folder / "tournament")
    initial = folder / "checkpoints" / "initial.zip"  # with a prior or --init: what PPO started from
    summary = against_baselines(
        cfg.game,
        "ppo",
        str(final),
        cfg.final_deals,
        cfg.seed,
        cfg.workers,
        cfg.options,
        out_dir,
        quiet,
        untrained=str(initial) if initial.is_file() else None,
    )
    wall = time.perf_counter() - t0
    from experiments.report import learning_curves

    learning_curves(folder)
    print()
    print(f"## {cfg.game}: final table (seed {cfg.seed}, {cfg.budget()} steps, {wall / 60:.1f} min wall time)\n")
    print(summary["table"])
    print(
        f"\noutputs in {folder}/ (model final.zip, tournament/, config.json, learning_curves.png, "
        "PPO statistics logs/progress.csv)"
    )
    return {"folder": folder, "summary": summary, "wall_seconds": wall}


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = build_parser()
    args = parser.parse_args(argv)
    games = list(GAME_IDS) if args.game == "all" else [args.game]
    if args.game != "all" and args.game not in GAME_IDS:
        parser.error(f"unknown game {args.game!r}; choose one of {', '.join(GAME_IDS)} or all")
    if args.resume and len(games) > 1:
        parser.error("--resume takes one game's run folder, not all")

    def run() -> None:
        for game in games:
            cfg = config_from_args(args, game)
            out = args.out if len(games) == 1 else (f"{args.out}/{game}" if args.out else None)
            train_one(cfg, out, args.resume, args.quiet)

    return run_cli(parser, run)


if __name__ == "__main__":
    sys.exit(main())
