"""Train MaskablePPO on the batched self-play env, with your own opponents, in a dozen lines.

    python examples/selfplay_ppo.py castles --timesteps 200000

``SelfPlayVecEnv`` plays ``num_envs`` games in lockstep; each opponent policy is called once per round
for every game waiting on it (``agents.batch.make_batch_policy`` builds one from any agent; a plain
function of (observations, masks) works too). Snapshots of the learner join the pool as it trains.
"""

from __future__ import annotations

import argparse
import copy

import numpy as np
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback

from agents.batch import NetworkBatchPolicy, make_batch_policy, play_matches
from jericho_env.envs.sb3 import SelfPlayVecEnv


def lowest_legal(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A hand-written opponent: the lowest legal action of every game in the batch."""
    return np.argmax(masks, axis=1)


class Snapshots(BaseCallback):
    """Every ``every`` steps, a frozen copy of the learner joins the opponent pool (the 3 latest kept)."""

    def __init__(self, env: SelfPlayVecEnv, every: int) -> None:
        super().__init__()
        self.env, self.every, self.next = env, every, every

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next:
            frozen = NetworkBatchPolicy(copy.deepcopy(self.model.policy), seed=self.num_timesteps)
            self.env.add_opponent(frozen, max_added=3)
            self.next += self.every
        return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game", nargs="?", default="castles")
    parser.add_argument("--timesteps", type=int, default=200_000)
    args = parser.parse_args()
    opponents = [make_batch_policy("random", args.game), make_batch_policy("greedy", args.game), lowest_legal]
    env = SelfPlayVecEnv(args.game, num_envs=64, opponents=opponents, seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=2048, n_epochs=3, learning_rate=1e-3, seed=0)
    model.learn(args.timesteps, callback=Snapshots(env, every=50_000))
    learner = NetworkBatchPolicy(model.policy, deterministic=True)
    for name in ("random", "greedy"):
        score, _, _, games = play_matches(args.game, learner, make_batch_policy(name, args.game), 200, seed=1)
        print(f"{args.game}: the trained policy scores {100 * score:.1f}% against {name} ({games} games)")


if __name__ == "__main__":
    main()
