"""Masked multi-agent PPO on a jericho-env game with Ray RLlib (new API stack), env checking on.

    python examples/rllib_ppo.py castles --iterations 3            # one module shared by every seat
    python examples/rllib_ppo.py walls --modules per_seat --option num_players=3
    python examples/rllib_ppo.py all --iterations 3                # every game in turn

Needs the ``rllib`` extra (its own venv: ``bash scripts/test-ecosystem.sh rllib`` creates
``.venv-rllib``). The env creator, observation adapter and config are ``jericho_env.wrappers.rllib``;
the recipe is ``docs/ecosystem.md``.
"""

from __future__ import annotations

import argparse
import time

import ray

import jericho_env
from jericho_env.core.rules import parse_option_text
from jericho_env.wrappers.rllib import MODULE_CHOICES, ppo_config


def train(game: str, iterations: int, modules: str, options: dict[str, object]) -> None:
    """Build the PPO algorithm for ``game`` and print a line per training iteration."""
    algo = ppo_config(game, modules=modules, **options).build_algo()
    start = time.perf_counter()
    try:
        for i in range(1, iterations + 1):
            r = algo.train()["env_runners"]
            print(
                f"{game} iteration {i}: env steps {int(r['num_env_steps_sampled_lifetime'])}, "
                f"games {int(r['num_episodes_lifetime'])}, mean game length {r.get('episode_len_mean', 0):.1f}, "
                f"illegal-action games {int(r.get('illegal_action_games', 0))}, "
                f"{time.perf_counter() - start:.0f} s",
                flush=True,
            )
    finally:
        algo.stop()


def main() -> None:
    """Command-line entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("game", choices=[*jericho_env.GAME_IDS, "all"])
    p.add_argument("--iterations", type=int, default=3)
    p.add_argument("--modules", choices=MODULE_CHOICES, default="shared", help="one module for all seats, or one each")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="game option")
    args = p.parse_args()
    options = dict(parse_option_text(o) for o in args.option)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    games = jericho_env.GAME_IDS if args.game == "all" else (args.game,)
    for game in games:
        train(game, args.iterations, args.modules, options)
    ray.shutdown()


if __name__ == "__main__":
    main()
