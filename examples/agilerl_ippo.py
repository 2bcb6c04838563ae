"""AgileRL on a jericho-env game: IPPO with one shared network, masked rollouts of whole games, then learning.

    python examples/agilerl_ippo.py castles --iterations 3
    python examples/agilerl_ippo.py walls --option num_players=3
    python examples/agilerl_ippo.py all

Needs the ``agilerl`` extra (its own venv: ``bash scripts/test-ecosystem.sh agilerl``). The env is
``jericho_env.wrappers.agilerl.ParallelTurns`` (the turn-based game as a PettingZoo parallel env); the
recipe is ``docs/ecosystem.md``. The AEC env under it uses ``illegal_action="raise"``: an unmasked action
would stop the run, and each iteration prints how many moves fell outside the mask (0 when masked).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import jericho_env
from jericho_env.core.rules import parse_option_text
from jericho_env.wrappers.agilerl import ParallelTurns, collect, make_ippo


def run(game: str, iterations: int, games: int, options: dict[str, object], seed: int = 0) -> None:
    """``iterations`` rounds of: play ``games`` whole games with IPPO in every seat, then ``IPPO.learn`` on them."""
    np.random.seed(seed)
    torch.manual_seed(seed)
    env = ParallelTurns(game, **options)
    agent = make_ippo(env)
    for i in range(iterations):
        t0 = time.perf_counter()
        experiences, stats = collect(env, agent, games=games, seed=seed + i * games)
        losses = agent.learn(experiences)
        loss = ", ".join(f"{k} {v:.4f}" for k, v in losses.items())
        print(
            f"{game}: iteration {i + 1}, {games} games, {stats['decisions']} decisions, "
            f"illegal moves {stats['illegal']}, loss {loss}, {time.perf_counter() - t0:.1f} s"
        )


def main() -> None:
    """Parse the command line and train on one game or all."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("game", choices=[*jericho_env.GAME_IDS, "all"])
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--games", type=int, default=8, help="whole games per iteration")
    parser.add_argument("--option", action="append", default=[], help="a game option KEY=VALUE (repeatable)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    options = dict(parse_option_text(o) for o in args.option)
    torch.set_num_threads(1)
    for game in jericho_env.GAME_IDS if args.game == "all" else [args.game]:
        run(game, args.iterations, args.games, options if args.game != "all" else {}, args.seed)


if __name__ == "__main__":
    main()
