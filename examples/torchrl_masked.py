"""TorchRL on a jericho-env game: masked random rollouts, then a short masked REINFORCE training loop.

    python examples/torchrl_masked.py castles --iterations 3
    python examples/torchrl_masked.py walls --grouping per_seat --option num_players=3
    python examples/torchrl_masked.py all

Needs the ``torchrl`` extra (its own venv: ``bash scripts/test-ecosystem.sh torchrl``). The env is
TorchRL's ``PettingZooWrapper(..., use_mask=True)`` (``jericho_env.wrappers.torchrl``); the recipe is
``docs/ecosystem.md``. Every env here uses ``illegal_action="raise"``: an unmasked action would stop it.
"""

from __future__ import annotations

import argparse
import time

import torch
from tensordict.nn import TensorDictSequential

try:
    from torchrl.collectors import Collector  # torchrl >= 0.14
except ImportError:  # older torchrl
    from torchrl.collectors import SyncDataCollector as Collector

import jericho_env
from jericho_env.core.rules import parse_option_text
from jericho_env.wrappers.torchrl import GROUPINGS, make_env, masked_policy, reinforce_loss


def run(game: str, grouping: str, iterations: int, frames: int, options: dict[str, object], seed: int = 0) -> None:
    """Random rollouts with the spec's mask, then ``iterations`` REINFORCE updates of one actor per group."""
    torch.manual_seed(seed)
    env = make_env(game, grouping=grouping, seed=seed, **options)
    td = env.rollout(frames, break_when_any_done=False)  # env.rand_action samples under the action mask
    print(f"{game}: random rollout of {td.shape[0]} steps, {int(td['next', 'done'].sum())} games ended")
    actors = {group: masked_policy(env, group) for group in env.group_map}
    policy = TensorDictSequential(*actors.values())
    optim = torch.optim.Adam(policy.parameters(), lr=1e-3)
    collector = Collector(env, policy, frames_per_batch=frames, total_frames=frames * iterations)
    start = time.perf_counter()
    for i, batch in enumerate(collector, start=1):
        loss = sum(reinforce_loss(actor, batch, group) for group, actor in actors.items())
        optim.zero_grad()
        loss.backward()
        optim.step()
        print(
            f"{game} iteration {i}: loss {loss.item():+.4f}, games ended {int(batch['next', 'done'].sum())}, "
            f"{time.perf_counter() - start:.0f} s",
            flush=True,
        )
    collector.shutdown()


def main() -> None:
    """Command-line entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("game", choices=[*jericho_env.GAME_IDS, "all"])
    p.add_argument("--iterations", type=int, default=3)
    p.add_argument("--frames", type=int, default=256, help="env steps per iteration")
    p.add_argument("--grouping", choices=GROUPINGS, default="shared", help="one actor for all seats, or one each")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="game option")
    args = p.parse_args()
    torch.set_num_threads(1)  # more threads only contend for the cores at these sizes
    options = dict(parse_option_text(o) for o in args.option)
    for game in jericho_env.GAME_IDS if args.game == "all" else (args.game,):
        run(game, args.grouping, args.iterations, args.frames, options)


if __name__ == "__main__":
    main()
