"""Agents as batch policies for the batched self-play env (``jericho_env.envs.selfplay``).

A batch policy is a callable ``(observations (B, D) float32, masks (B, A) bool) -> actions (B,)``.
``batch_policy(agent)`` asks a per-observation agent row by row (greedy, any ``act`` agent);
``NetworkBatchPolicy`` runs a MaskablePPO policy network once for the whole batch (the snapshot
opponents of self-play), sampling from its masked distribution or taking its most probable action.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jericho_env.envs.selfplay import RandomBatchPolicy

__all__ = ["AgentBatchPolicy", "NetworkBatchPolicy", "RandomBatchPolicy", "batch_policy"]


class AgentBatchPolicy:
    """Any agent with ``act(observation_dict)``, asked once per row."""

    uses_observation = True

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name = getattr(agent, "name", type(agent).__name__)

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        act = self.agent.act
        m8 = masks.astype(np.int8)
        return np.fromiter(
            (act({"observation": observations[j], "action_mask": m8[j]}) for j in range(len(masks))),
            dtype=np.int64,
            count=len(masks),
        )


class NetworkBatchPolicy:
    """A MaskablePPO policy (``model.policy``) as a batch policy: one forward pass per call.

    ``deterministic=False`` samples from the masked distribution (self-play opponents), ``True`` takes
    the most probable legal action (evaluation). The policy is used as given: pass a frozen copy
    (``copy.deepcopy(model.policy)``) for a snapshot.
    """

    uses_observation = True

    def __init__(self, policy: Any, deterministic: bool = False, seed: int | None = None, name: str = "ppo") -> None:
        import torch

        self._torch = torch
        self.policy = policy
        self.policy.set_training_mode(False)
        self.deterministic = deterministic
        self.name = name
        self.generator = torch.Generator().manual_seed(int(np.random.SeedSequence(seed).generate_state(1)[0]))

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        torch = self._torch
        with torch.no_grad():
            obs = torch.as_tensor(observations, dtype=torch.float32)
            logits = self.policy.action_logits(obs) if hasattr(self.policy, "action_logits") else _logits(self.policy, obs)
            logits = logits.masked_fill(~torch.as_tensor(masks, dtype=torch.bool), float("-inf"))
            if self.deterministic:
                return logits.argmax(dim=1).numpy()
            probs = torch.softmax(logits, dim=1)
            return torch.multinomial(probs, 1, generator=self.generator).squeeze(1).numpy()


def _logits(policy: Any, obs: Any) -> Any:
    """Unmasked logits of an SB3 actor-critic policy (MlpPolicy and subclasses)."""
    features = policy.extract_features(obs, policy.pi_features_extractor)
    latent_pi = policy.mlp_extractor.forward_actor(features)
    return policy.action_net(latent_pi)


def batch_policy(agent: Any) -> Any:
    """``agent`` as a batch policy: ``"random"`` -> ``RandomBatchPolicy``; agents -> ``AgentBatchPolicy``."""
    if isinstance(agent, str) and agent == "random":
        return RandomBatchPolicy()
    if getattr(agent, "name", None) == "random" and hasattr(agent, "rng"):
        return RandomBatchPolicy(int(agent.rng.integers(2**62)))
    if hasattr(agent, "act"):
        return AgentBatchPolicy(agent)
    if callable(agent):
        return agent
    raise ValueError(f"{agent!r} is neither an agent (act) nor a batch policy (callable)")
