"""TorchRL: a jericho-env game as TorchRL's ``PettingZooWrapper`` with the action mask, and a masked policy.

TorchRL wraps PettingZoo AEC envs unchanged: ``PettingZooWrapper(env, use_mask=True)`` reads our
``action_mask`` into each group's ``("<group>", "action_mask")`` and into the action spec's mask
(so ``env.rand_action`` and ``env.rollout()`` without a policy play legal moves), and writes which
agent acts into ``("<group>", "mask")``. ``make_env`` adds the choice of grouping; ``masked_policy``
builds a ``ProbabilisticActor`` over a ``MaskedCategorical``, the usual way to sample legal actions.

>>> from jericho_env.wrappers.torchrl import make_env, masked_policy
>>> env = make_env("castles", seed=0)                  # one group "agents" holding every seat
>>> td = env.rollout(200, masked_policy(env), break_when_any_done=False)

Needs ``torchrl`` (the ``torchrl`` extra: ``bash scripts/test-ecosystem.sh torchrl``). Recipe and the
short REINFORCE loop: ``docs/ecosystem.md`` and ``examples/torchrl_masked.py``.
"""

from __future__ import annotations

from typing import Any

import torch
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import MarlGroupMapType
from torchrl.modules import MaskedCategorical, ProbabilisticActor

from jericho_env.core.rules import OptionError
from jericho_env.envs.aec import make

GROUPINGS = ("shared", "per_seat")


def make_env(
    game_id: str, grouping: str = "shared", seed: int | None = None, illegal_action: str = "raise", **options: Any
) -> PettingZooWrapper:
    """``PettingZooWrapper(make(game_id, ...), use_mask=True)``; ``grouping``: one group ``agents`` or one per seat."""
    if grouping not in GROUPINGS:
        raise OptionError(f"grouping={grouping!r} is not allowed: use one of {', '.join(GROUPINGS)}")
    group_map = MarlGroupMapType.ALL_IN_ONE_GROUP if grouping == "shared" else MarlGroupMapType.ONE_GROUP_PER_AGENT
    env = make(game_id, illegal_action=illegal_action, **options)
    return PettingZooWrapper(env, use_mask=True, group_map=group_map, categorical_actions=True, seed=seed)


def masked_policy(env: PettingZooWrapper, group: str = "agents", hidden: int = 128) -> ProbabilisticActor:
    """A small MLP actor for ``group`` whose ``MaskedCategorical`` samples only legal actions (log-prob kept)."""
    obs_key = (group, "observation", "observation")
    n_obs = env.observation_spec[obs_key].shape[-1]
    n_act = int(env.full_action_spec[group, "action"].space.n)
    net = nn.Sequential(nn.Linear(n_obs, hidden), nn.Tanh(), nn.Linear(hidden, n_act))
    module = TensorDictModule(net, in_keys=[obs_key], out_keys=[(group, "logits")])
    return ProbabilisticActor(
        module,
        in_keys={"logits": (group, "logits"), "mask": (group, "action_mask")},
        out_keys=[(group, "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        log_prob_key=(group, "action_log_prob"),
        spec=env.full_action_spec[group, "action"],
    )


def reinforce_loss(actor: ProbabilisticActor, td: Any, group: str = "agents") -> torch.Tensor:
    """REINFORCE on collected steps: ``actor``'s log-prob of each acting step times its agent's return.

    Rewards come at the end of a game, so the return of a step is the sum of the agent's rewards
    until the game's ``done``; a batch-mean baseline reduces variance. Steps where the agent does not
    act (``("<group>", "mask")`` false) carry no gradient. Log-probs are recomputed with gradients
    (collectors sample without them), under the mask stored with each step.
    """
    reward = td["next", group, "reward"].squeeze(-1)  # [T, n]
    done = td["next", "done"].squeeze(-1).float()  # [T]
    returns = torch.zeros_like(reward)
    running = torch.zeros_like(reward[0])
    for t in range(reward.shape[0] - 1, -1, -1):
        running = reward[t] + running * (1.0 - done[t])
        returns[t] = running
    acting = td[group, "mask"].float()  # [T, n]
    logp = actor.get_dist(td.clone(False)).log_prob(td[group, "action"])  # [T, n]
    adv = returns - (returns * acting).sum() / acting.sum().clamp(min=1.0)
    return -(logp * adv * acting).sum() / acting.sum().clamp(min=1.0)
