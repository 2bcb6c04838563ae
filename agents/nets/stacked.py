"""Several networks of one architecture run as one: their rows side by side in one batch.

``StackedPolicies(policy)`` copies a policy once and swaps each ``nn.Linear`` for a ``GroupedLinear`` loaded with
that layer of several policies (``weights``, ``module``; ``stack_policies`` does both). The copy takes ``K * M``
rows, ``M`` per policy, and computes each with its own policy's weights: one batched matrix product per layer
instead of ``K`` forward passes. A policy can be stacked (``stack_key`` not None) when every parameter sits in an
``nn.Linear`` (apart from the prior's ``prior_weight``) and its rows are computed independently
(``rows_independent``, and SB3's MLP policies in evaluation mode).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

__all__ = ["GroupedLinear", "StackedPolicies", "stack_key", "stack_policies", "stacked_linear"]


class GroupedLinear(nn.Module):
    """``K`` linear layers of one shape; row block ``k`` of the input goes through layer ``k``.

    The input's first dimension is ``K * M`` (``M`` rows per layer, in layer order); any dimensions
    between it and the features are kept, as ``nn.Linear`` keeps them. ``weight`` is (K, out, in) and
    ``bias`` (K, 1, out): the layers' own tensors stacked (``load``).
    """

    def __init__(self, layers: Sequence[nn.Linear] = ()) -> None:
        super().__init__()
        self.weight = torch.empty(0)
        self.bias = torch.empty(0)
        if layers:
            self.load(*stacked_linear(layers))

    def load(self, weight: torch.Tensor, bias: torch.Tensor) -> None:
        """Use these stacked layers."""
        self.weight, self.bias = weight, bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k, rows = self.weight.shape[0], x.shape[0]
        flat = x.reshape(k, -1, x.shape[-1])  # (K, M * ..., in)
        out = torch.baddbmm(self.bias, flat, self.weight.transpose(1, 2))
        return out.reshape(rows, *x.shape[1:-1], out.shape[-1])


def stacked_linear(layers: Sequence[nn.Linear]) -> tuple[torch.Tensor, torch.Tensor]:
    """(weights (K, out, in), biases (K, 1, out)) of ``layers`` (a layer without bias adds zeros)."""
    weight = torch.stack([layer.weight.detach() for layer in layers])
    zeros = torch.zeros(layers[0].out_features)
    bias = torch.stack([zeros if layer.bias is None else layer.bias.detach() for layer in layers])
    return weight, bias[:, None, :]


def _sb3_mlp(policy: Any) -> bool:
    """Stable-Baselines3's (and sb3-contrib's maskable) actor-critic policy itself, not a subclass."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.policies import ActorCriticPolicy

    return type(policy) in (ActorCriticPolicy, MaskableActorCriticPolicy)


def stack_key(policy: nn.Module) -> Any:
    """A key equal for policies that ``stack_policies`` can run together, or None if this one cannot be stacked."""
    if not (getattr(policy, "rows_independent", False) or _sb3_mlp(policy)):
        return None
    names = {name for name, module in policy.named_modules() if isinstance(module, nn.Linear)}
    shapes = []
    for name, parameter in policy.named_parameters():
        owner = name.rpartition(".")[0]
        if not (owner in names or name == "prior_weight"):
            return None  # a parameter outside a linear layer: not stacked
        shapes.append((name, tuple(parameter.shape)))
    buffers = tuple((name, tuple(b.shape)) for name, b in policy.named_buffers())
    options = getattr(policy, "game_options", None)
    return (type(policy), tuple(shapes), buffers, repr(sorted((options or {}).items())), getattr(policy, "prior", None))


class StackedPolicies:
    """One copy of a policy whose linear layers run several policies' weights (see the module docstring).

    ``weights(policies)`` stacks the policies' layers (a tuple to keep and reuse); ``module(weights, rows)``
    loads them into the copy for a batch of ``rows`` rows per policy and returns it. The copy is made
    once per architecture; changing the set of policies only stacks their tensors again.
    """

    def __init__(self, template: nn.Module) -> None:
        self.key = stack_key(template)
        if self.key is None:
            raise ValueError(
                "this policy cannot be stacked (parameters outside linear layers, or rows not independent)"
            )
        optimizer = getattr(template, "optimizer", None)
        memo: dict[int, Any] = {} if optimizer is None else {id(optimizer): None}  # not needed to act
        self.copy = copy.deepcopy(template, memo)
        self.linear = [name for name, m in self.copy.named_modules() if isinstance(m, nn.Linear)]
        for name in self.linear:
            parent, _, child = name.rpartition(".")
            setattr(self.copy.get_submodule(parent), child, GroupedLinear())
        self.layers: list[GroupedLinear] = [self.copy.get_submodule(name) for name in self.linear]  # type: ignore[misc]
        self.prior = "prior_weight" in self.copy._parameters
        if self.prior:
            del self.copy._parameters["prior_weight"]
        self.buffers = dict(template.named_buffers())
        self.copy.eval()
        self._loaded: tuple[Any, int] | None = None  # the weights and row count the copy holds now

    def weights(self, policies: Sequence[nn.Module]) -> tuple[Any, ...]:
        """The stacked layers of ``policies`` (each of this architecture and with its fixed buffers)."""
        for p in policies:
            if stack_key(p) != self.key:
                raise ValueError("these policies cannot be stacked: other architectures or options")
            for name, b in p.named_buffers():
                if not torch.equal(b, self.buffers[name]):
                    raise ValueError(f"these policies cannot be stacked: their fixed buffer {name} differs")
        modules = [dict(p.named_modules()) for p in policies]
        layers = tuple(stacked_linear([m[name] for m in modules]) for name in self.linear)
        prior = None
        if self.prior:
            prior = torch.stack([torch.as_tensor(p.prior_weight).detach().reshape(()) for p in policies])
        return layers, prior

    def module(self, weights: tuple[Any, ...], rows: int) -> nn.Module:
        """The copy running ``weights`` on batches of ``rows`` rows per policy."""
        if self._loaded is not None and self._loaded[0] is weights and self._loaded[1] == rows:
            return self.copy  # loaded by the previous call already
        self._loaded = (weights, rows)
        layers, prior = weights
        for layer, (w, b) in zip(self.layers, layers, strict=True):
            layer.load(w, b)
        if prior is not None:
            self.copy.prior_weight = prior.repeat_interleave(rows)[:, None]  # type: ignore[assignment]
        return self.copy


def stack_policies(policies: Sequence[nn.Module], rows: int) -> nn.Module:
    """One module computing row block ``k`` of a batch of ``rows`` rows per policy with ``policies[k]``.

    The policies must have one ``stack_key`` (not None) and equal buffers.
    """
    if any(stack_key(p) is None for p in policies):
        raise ValueError("these policies cannot be stacked (parameters outside linear layers, or rows not independent)")
    stacked = StackedPolicies(policies[0])
    return stacked.module(stacked.weights(policies), rows)
