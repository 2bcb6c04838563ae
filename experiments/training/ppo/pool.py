"""The opponent pool of self-play: fixed baseline agents and frozen copies (snapshots) of the learner, as plain
values sent to the worker processes of a sharded vec env, which build their batch policies (``agents.batch``)::

    pool = opponent_pool("castles", ["random", "greedy"], seed=0)
    opponents = pool.policies()  # batch policies: (observations, masks) -> actions
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from typing import Any

from agents.prior import SHARD_SEED_STRIDE, make_prior


@dataclasses.dataclass
class OpponentPool:
    """Baseline agents by name and saved snapshots by path, built into batch policies where they play."""

    game_id: str
    options: dict[str, Any]  # the game's options
    baselines: list[str]  # registered agents (agents.make names); a name twice: twice the share
    seed: int  # baseline k of shard s draws from seed + k + SHARD_SEED_STRIDE * s
    prior: str = "none"  # the prior the snapshots were trained with: their observations get its prior's floats
    snapshots: list[str] = dataclasses.field(default_factory=list)  # checkpoint paths of saved snapshots
    trust: bool = False  # snapshots saved as Stable-Baselines3 zips (runs before agents.checkpoint) may load

    def policies(self, shard: int = 0) -> list[Any]:
        """The batch policies of shard ``shard``: every baseline, then every saved snapshot."""
        from agents.batch import make_batch_policy

        other = SHARD_SEED_STRIDE * shard  # other shards' opponents draw other random streams
        pool = [
            make_batch_policy(name, self.game_id, seed=self.seed + k + other, **self.options)
            for k, name in enumerate(self.baselines)
        ]
        return pool + [self.saved(path, shard) for path in self.snapshots]

    def saved(self, path: str, shard: int = 0) -> Any:
        """The snapshot saved at ``path`` as a batch policy (sampling from its masked distribution)."""
        from agents.batch import NetworkBatchPolicy
        from agents.checkpoint import load_policy

        policy, _ = load_policy(path, trust=self.trust, game_id=self.game_id, options=self.options)
        prior = make_prior(self.prior, self.game_id, seed=len(path), **self.options)
        snapshot = NetworkBatchPolicy(policy, seed=len(path), name="snapshot", hint=prior, joint=True)
        return snapshot.for_shard(shard) if shard else snapshot

    def frozen(self, network: Any, seed: int) -> Any:
        """A frozen copy of ``network`` (the learner's policy now) as a batch policy seeded with ``seed``."""
        from agents.batch import NetworkBatchPolicy

        prior = make_prior(self.prior, self.game_id, seed=seed, **self.options)
        return NetworkBatchPolicy(copy.deepcopy(network), seed=seed, name="snapshot", hint=prior, joint=True)


def opponent_pool(
    game_id: str,
    baselines: Sequence[str],
    seed: int,
    options: dict[str, Any] | None = None,
    prior: str = "none",
    snapshots: Sequence[str] = (),
    trust: bool = False,
) -> OpponentPool:
    """The pool of ``baselines`` (agent names) and the ``snapshots`` saved so far; names checked against the game."""
    from agents.prior import check_prior
    from agents.registry import pool_names

    names = pool_names(",".join(baselines), game_id)  # agents that play the game and need no checkpoint
    check_prior(prior, game_id)
    return OpponentPool(game_id, dict(options or {}), names, int(seed), prior, list(snapshots), trust)
