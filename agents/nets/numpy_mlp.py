"""Drawing an MLP policy's moves in numpy: the same layers, without torch's cost per call on small batches.

Self-play opponents ask their networks many times per step for a few rows each, where torch's dispatch costs
several times the arithmetic. ``mlp_plan(policy)`` reads a policy's acting path as plain arrays when it is a chain
of linear layers with ReLU or tanh (SB3's MLP actor-critic, ``PriorMlpPolicy`` without a prior or with
``greedy-scores``), else None. ``logits(plan, observations)`` runs rows through it, and ``draw`` takes one legal
action per row from the masked softmax at given uniform numbers (as ``agents.nets.common.sample_rows``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

__all__ = ["MlpPlan", "draw", "logits", "mlp_plan"]


@dataclasses.dataclass(frozen=True)
class MlpPlan:
    """One policy's acting path: ``layers`` of (weight (in, out), bias (out,), activation or None).

    The network reads the observation's first ``inputs`` floats; with ``prior_weight`` set, the
    observation's last ``num_actions`` floats (greedy's scores) times it are added to the logits.
    """

    inputs: int
    layers: tuple[tuple[np.ndarray, np.ndarray, str | None], ...]
    prior_weight: float | None
    num_actions: int


def mlp_plan(policy: Any) -> MlpPlan | None:
    """``policy``'s acting path as arrays, or None when it is not a plain MLP (see the module docstring)."""
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.policies import ActorCriticPolicy
    from stable_baselines3.common.torch_layers import FlattenExtractor

    from agents.nets.common import PriorMlpPolicy, SharedLinearExtractor
    from agents.nets.stacked import stack_key

    if type(policy) not in (ActorCriticPolicy, MaskableActorCriticPolicy, PriorMlpPolicy) or policy.training:
        return None
    if stack_key(policy) is None:  # a parameter outside the linear layers (and the prior's weight)
        return None
    prior_weight = None
    if type(policy) is PriorMlpPolicy and policy.prior is not None:
        if policy.prior != "greedy-scores":
            return None
        prior_weight = float(policy.prior_weight.detach())
    extractor = policy.pi_features_extractor
    if extractor is not policy.features_extractor:
        return None
    modules: list[Any] = []
    if type(extractor) is SharedLinearExtractor and extractor.derived is None:
        modules += list(extractor.net)
    elif type(extractor) is not FlattenExtractor:
        return None
    policy_net = policy.mlp_extractor.policy_net
    if not isinstance(policy_net, torch.nn.Sequential) or not isinstance(policy.action_net, torch.nn.Linear):
        return None
    modules += [*policy_net, policy.action_net]
    layers: list[tuple[np.ndarray, np.ndarray, str | None]] = []
    for module in modules:
        if isinstance(module, torch.nn.Linear):
            bias = np.zeros(module.out_features, np.float32) if module.bias is None else _array(module.bias)
            layers.append((np.ascontiguousarray(_array(module.weight).T), bias, None))
        elif isinstance(module, (torch.nn.ReLU, torch.nn.Tanh)) and layers and layers[-1][2] is None:
            w, b, _ = layers[-1]
            layers[-1] = (w, b, "relu" if isinstance(module, torch.nn.ReLU) else "tanh")
        else:
            return None
    if not layers or layers[-1][2] is not None:
        return None
    num_actions = int(policy.action_space.n)
    if layers[-1][0].shape[1] != num_actions:
        return None
    return MlpPlan(int(layers[0][0].shape[0]), tuple(layers), prior_weight, num_actions)


def _array(tensor: Any) -> np.ndarray:
    return tensor.detach().cpu().numpy().astype(np.float32, copy=True)


def logits(plan: MlpPlan, observations: np.ndarray) -> np.ndarray:
    """Unmasked logits (M, num_actions) of observations (M, size), the prior's bonus included."""
    x = np.ascontiguousarray(observations[:, : plan.inputs], dtype=np.float32)
    for weight, bias, act in plan.layers:
        x = np.matmul(x, weight)
        x += bias
        if act == "relu":
            np.maximum(x, 0, out=x)
        elif act == "tanh":
            np.tanh(x, out=x)
    if plan.prior_weight is not None:
        x += observations[:, -plan.num_actions :] * np.float32(plan.prior_weight)
    return x


def draw(row_logits: np.ndarray, masks: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """One legal action per row of ``row_logits`` (N, A) under ``masks`` (N, A) bool, from the masked softmax.

    Row ``i`` inverts its cumulative sum at ``uniforms[i]`` (in [0, 1)): an action of probability 0 (masked)
    is never drawn; every row needs a legal action.
    """
    x = np.where(masks, row_logits.astype(np.float64), -np.inf)
    x -= x.max(axis=1, keepdims=True)
    np.exp(x, out=x)
    cdf = np.cumsum(x, axis=1, out=x)
    total = cdf[:, -1]
    u = np.minimum(uniforms * total, np.nextafter(total, 0))
    return (cdf <= u[:, None]).sum(axis=1)  # type: ignore[no-any-return]
