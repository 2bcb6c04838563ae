"""Tianshou 2.0: a jericho-env game as Tianshou's ``PettingZooEnv``, and masked DQN / random seats for it.

Tianshou wraps PettingZoo AEC envs unchanged: its ``PettingZooEnv`` reads our ``{"observation",
"action_mask"}`` dict into ``{"agent_id", "obs", "mask"}``, and its DQN and
``MARLRandomDiscreteMaskedOffPolicyAlgorithm`` choose only actions the mask allows (greedy and
epsilon-greedy alike). ``marl_algorithm`` puts one algorithm in each seat, a masked DQN where the
seat learns and masked random play elsewhere.

>>> from jericho_env.wrappers.tianshou import make_env, marl_algorithm
>>> algo = marl_algorithm(make_env("castles"), learners=[0])     # DQN in seat 0, random in seat 1

Needs ``tianshou`` (the ``tianshou`` extra: ``bash scripts/test-ecosystem.sh tianshou``). Recipe:
``docs/ecosystem.md``; a short training run: ``examples/tianshou_dqn.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.algorithm_base import OffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.utils.net.common import Net

from jericho_env.core.rules import OptionError
from jericho_env.envs.aec import make


def make_env(game_id: str, illegal_action: str = "raise", **options: Any) -> PettingZooEnv:
    """Tianshou's ``PettingZooEnv`` around ``make(game_id, illegal_action=..., **options)``."""
    return PettingZooEnv(make(game_id, illegal_action=illegal_action, **options))


def masked_dqn(env: PettingZooEnv, hidden: Sequence[int] = (128, 128), lr: float = 1e-3, eps: float = 0.1) -> DQN:
    """A DQN whose greedy and epsilon-greedy choices are restricted to the mask (Tianshou does it from ``obs.mask``)."""
    n_obs = env.observation_space["observation"].shape[0]
    n_act = int(env.action_space.n)
    net = Net(state_shape=n_obs, action_shape=n_act, hidden_sizes=list(hidden))
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=eps, eps_inference=0.0)
    return DQN(
        policy=policy, optim=AdamOptimizerFactory(lr=lr), gamma=0.99, n_step_return_horizon=1, target_update_freq=100
    )


def marl_algorithm(
    env: PettingZooEnv, learners: Sequence[int] = (0,), **dqn_kwargs: Any
) -> MultiAgentOffPolicyAlgorithm:
    """One algorithm per seat: ``masked_dqn`` for the seats in ``learners``, masked random play for the rest."""
    n = len(env.agents)
    bad = [s for s in learners if not 0 <= s < n]
    if bad:
        raise OptionError(f"learners {bad} are not seats of this game: choose among 0..{n - 1}")
    seats: list[OffPolicyAlgorithm] = [
        masked_dqn(env, **dqn_kwargs) if s in learners else MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space)
        for s in range(n)
    ]
    return MultiAgentOffPolicyAlgorithm(algorithms=seats, env=env)
