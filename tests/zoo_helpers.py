"""Run folders as experiments.train and experiments.exit leave them, with tiny untrained networks (zoo tests)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import jericho_env
from agents.checkpoint import CheckpointMeta, PolicySpec, attach_meta, save_checkpoint
from agents.nets import build_policy
from experiments import evaluate, exit, train
from experiments.play.tournament import AgentSpec
from experiments.training.provenance import record_session
from experiments.training.run_folder import RunFolder, write_atomic


def tiny_model(game: str, algorithm: str | None = None) -> Any:
    """An untrained MaskablePPO with a small network, its checkpoint meta attached (one update: optimizer state)."""
    from sb3_contrib import MaskablePPO

    policy, kwargs = build_policy("mlp", game, {}, "16,16")
    model = MaskablePPO(policy, jericho_env.single_agent(game), n_steps=32, batch_size=32, n_epochs=1,
                        policy_kwargs=kwargs, seed=0, device="cpu")  # fmt: skip
    model.learn(32)
    hyper = {"learning_rate": 3e-4, "lr_schedule": "constant", "seed": 0, "n_steps": 32, "batch_size": 32}
    hyper.update(n_epochs=1, gamma=0.99, gae_lambda=0.95, ent_coef=0.01)
    training: dict[str, Any] = {"hyperparameters": hyper}
    if algorithm == "exit":
        training = {"algorithm": "exit", "exit": {"c_puct": 1.5}, "iteration": 1}
    return attach_meta(model, CheckpointMeta(game, {}, PolicySpec("mlp", "16,16"), training))


def ppo_run(folder: Path, game: str = "castles") -> Path:
    """A finished experiments.train run folder: config, provenance, final.zip, training.json, the final table."""
    cfg = train.make_config(game, {}, timesteps=32, net="16,16", final_deals=2, workers=1)
    run = RunFolder(folder)
    run.save_config(dataclasses.asdict(cfg))
    record_session(folder, "experiments.train", [game, "--timesteps", "32", "--net", "16,16"])
    save_checkpoint(tiny_model(game), folder / "final.zip")
    run.save_training(32, 32, 1.5)
    specs = [AgentSpec("random", "random"), AgentSpec("greedy", "greedy"), AgentSpec("ppo", "ppo",
             {"path": str(folder / "final.zip")})]  # fmt: skip
    evaluate.evaluate(game, specs, 2, out=str(folder / "tournament"), plot=False, quiet=True)
    return folder


def exit_run(folder: Path, game: str = "castles") -> Path:
    """A finished experiments.exit run folder (exit.json in place of training.json; exit and exit-search rows)."""
    cfg = exit.make_exit_config(game, {}, iterations=1, games=2, simulations=4)
    RunFolder(folder).save_config(dataclasses.asdict(cfg))
    save_checkpoint(tiny_model(game, "exit"), folder / "final.zip")
    history = [{"iteration": 1, "games": 2, "rows": 90, "seconds_games": 3.0, "seconds_learn": 1.0,
                "seconds_eval": 2.0, "evals": {"greedy": {"score": 0.5, "ci95": [0.1, 0.9], "games": 2}}}]  # fmt: skip
    write_atomic(folder / "exit.json", json.dumps({"iterations_done": 1, "history": history}))
    final = str(folder / "final.zip")
    specs = [AgentSpec("greedy", "greedy"), AgentSpec("exit", "exit", {"path": final}),
             AgentSpec("exit-search", "exit-search", {"path": final, "simulations": 4})]  # fmt: skip
    evaluate.evaluate(game, specs, 1, out=str(folder / "tournament"), plot=False, quiet=True)
    return folder
