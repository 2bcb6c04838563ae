"""Tianshou 2.0 on a jericho-env game: masked random rollouts, then a short masked DQN training run.

    python examples/tianshou_dqn.py castles --epochs 2
    python examples/tianshou_dqn.py walls --learners 0 1 2 --option num_players=3   # a DQN in every seat
    python examples/tianshou_dqn.py all

Needs the ``tianshou`` extra (its own venv: ``bash scripts/test-ecosystem.sh tianshou``). The env is
Tianshou's ``PettingZooEnv`` (``jericho_env.wrappers.tianshou``); the recipe is ``docs/ecosystem.md``.
Every env uses ``illegal_action="raise"``: an unmasked action would stop the run.
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np
import torch
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.trainer import OffPolicyTrainerParams

import jericho_env
from jericho_env.core.rules import parse_option_text
from jericho_env.wrappers.tianshou import make_env, marl_algorithm


def run(game: str, learners: list[int], epochs: int, steps: int, options: dict[str, object], seed: int = 0) -> None:
    """Masked random rollouts in every seat, then ``epochs`` of off-policy DQN training for ``learners``."""
    np.random.seed(seed)
    torch.manual_seed(seed)
    env_fn = partial(make_env, game, **options)
    envs = DummyVectorEnv([env_fn for _ in range(4)])
    envs.seed(seed)
    random_play = marl_algorithm(env_fn(), learners=[])
    stats = Collector[CollectStats](random_play, envs).collect(n_episode=4, reset_before_collect=True)
    print(f"{game}: masked random play, {stats.n_collected_episodes} games, {stats.n_collected_steps} steps")

    algo = marl_algorithm(env_fn(), learners=learners)
    train = Collector[CollectStats](algo, envs, VectorReplayBuffer(20_000, len(envs)), exploration_noise=True)
    test = Collector[CollectStats](algo, DummyVectorEnv([env_fn for _ in range(2)]), exploration_noise=True)
    train.reset()
    train.collect(n_step=256)
    start = time.perf_counter()
    seat = learners[0]
    result = algo.run_training(
        OffPolicyTrainerParams(
            training_collector=train,
            test_collector=test,
            max_epochs=epochs,
            epoch_num_steps=steps,
            collection_step_num_env_steps=16,
            test_step_num_episodes=4,
            batch_size=64,
            update_step_num_gradient_steps_per_sample=0.25,
            test_in_training=False,
            multi_agent_return_reduction=lambda rews: rews[:, seat],
            show_progress=False,
        )
    )
    print(
        f"{game}: trained {epochs} epochs, {result.train_step} env steps, {result.update_step} updates, "
        f"seat {seat} test return {result.best_reward:+.2f}, {time.perf_counter() - start:.0f} s",
        flush=True,
    )


def main() -> None:
    """Command-line entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("game", choices=[*jericho_env.GAME_IDS, "all"])
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--steps", type=int, default=500, help="env steps per epoch")
    p.add_argument("--learners", type=int, nargs="+", default=[0], help="seats played by a DQN (others: random)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="game option")
    args = p.parse_args()
    torch.set_num_threads(1)  # more threads only contend for the cores at these sizes
    options = dict(parse_option_text(o) for o in args.option)
    for game in jericho_env.GAME_IDS if args.game == "all" else (args.game,):
        run(game, args.learners, args.epochs, args.steps, options)


if __name__ == "__main__":
    main()
