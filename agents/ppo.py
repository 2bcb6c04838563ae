"""``ppo``: a MaskablePPO policy (sb3-contrib) loaded from a checkpoint saved by ``experiments.train``.

Without ``path`` (and ``model``) it plays the network shipped for the game (``agents.pretrained``). Checkpoints
are read by ``agents.checkpoint`` (a Stable-Baselines3 zip only with ``trust=True``) and must match the game, its
options and observation version. Acts greedily unless ``deterministic=False``, never picking a masked action; a
policy trained with a prior (``agents.prior``) is handed that prior's floats, as in training. ``start_from``
serves ``experiments.train --init``.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import BaseAgent
from agents.checkpoint import linear_to_zero  # noqa: F401 - experiments.train imports it from here
from agents.prior import Prior, make_prior, with_prior


def load_model(path: str | Path, trust: bool = False) -> Any:
    """A Stable-Baselines3 MaskablePPO zip, only with ``trust`` (``UnsafeCheckpointError`` otherwise): it unpickles."""
    from agents.checkpoint import CheckpointError, UnsafeCheckpointError, _sb3_refusal, kind, load_sb3, resolve_path

    p = resolve_path(path)
    if kind(p) != "sb3":
        raise CheckpointError(f"{str(p)!r} is in the safe format: load it with agents.checkpoint.load_policy")
    if not trust:
        raise UnsafeCheckpointError(_sb3_refusal(p))
    return load_sb3(p)


def trained_game(policy: Any) -> str | None:
    """The game id a policy's network was built for, when the checkpoint records it (``agents.nets``)."""
    for part in (policy, getattr(policy, "features_extractor", None)):
        game_id = getattr(part, "game_id", None)
        if isinstance(game_id, str):
            return game_id
    return None


def start_from(model: Any, path: str | Path, trust: bool = False) -> None:
    """Copy the policy weights of the checkpoint ``path`` into ``model``; clear errors when they do not fit."""
    from agents.checkpoint import load_policy

    source, _ = load_policy(path, trust=trust)
    if source.observation_space.shape != model.observation_space.shape or source.action_space != model.action_space:
        raise ValueError(
            f"--init {str(path)!r}: its observations {source.observation_space.shape} and actions "
            f"{source.action_space} do not match this run's {model.observation_space.shape} and "
            f"{model.action_space} (other game or options?)"
        )
    if type(source) is not type(model.policy):
        raise ValueError(
            f"--init {str(path)!r} holds a {type(source).__name__}, this run builds a {type(model.policy).__name__}"
        )
    try:
        model.policy.load_state_dict(source.state_dict())
    except RuntimeError as e:
        raise ValueError(f"--init {str(path)!r}: the network differs from this run's (--net, --policy?): {e}") from None


_loaded: dict[tuple[str, int, int, str], tuple[Any, dict[str, Any]]] = {}
_lock = threading.Lock()


def shipped_policy(
    agent: str, game_id: str, options: Mapping[str, Any] | None = None
) -> tuple[Any, dict[str, Any], Path]:
    """(policy network, checkpoint meta, path) of the network ``agent`` plays for ``game_id``, loaded once per process.

    The file must match its card's SHA-256 (``ZooError`` otherwise); it is loaded with ``load_policy``.
    """
    from agents.checkpoint import load_policy
    from agents.pretrained import check_sha, shipped

    entry = shipped(agent, game_id, options)
    stat = entry.path.stat()
    key = (str(entry.path.resolve()), stat.st_size, stat.st_mtime_ns, repr(sorted(dict(options or {}).items())))
    with _lock:
        hit = _loaded.get(key)
        if hit is None:
            check_sha(entry)
            hit = _loaded[key] = load_policy(entry.path, game_id=game_id, options=dict(options or {}))
    return hit[0], hit[1], entry.path


class PPOAgent(BaseAgent):
    """A trained MaskablePPO policy as an agent."""

    name = "ppo"

    def __init__(
        self,
        game_id: str,
        path: str | Path | None = None,
        model: Any = None,
        deterministic: bool = True,
        seed: int | None = None,
        trust: bool = False,
        **game_options: Any,
    ) -> None:
        super().__init__(game_id, seed=seed, **game_options)
        self.path = str(path) if path is not None else None
        self.meta: dict[str, Any] = {}
        if model is not None:
            policy = model.policy if hasattr(model, "policy") else model  # a model or its policy network
        elif path is None:  # the network shipped in the package (agents.pretrained)
            policy, self.meta, shipped_path = shipped_policy(self.name, game_id, game_options)
            self.path = str(shipped_path)
        else:
            from agents.checkpoint import load_policy

            # checks the game, its options and the observation version recorded with the checkpoint
            policy, self.meta = load_policy(path, trust=trust, game_id=game_id, options=game_options)
        self.deterministic = deterministic
        from jericho_env.registry import make_rules

        size = self.observation_size = make_rules(game_id, **game_options).info.observation_size
        self.prior: Prior | None = make_prior(getattr(policy, "prior", None) or "none", game_id, seed, **game_options)
        if self.prior is not None:
            size += self.prior.size
        trained_on = trained_game(policy)
        if trained_on is not None and trained_on != game_id:
            raise ValueError(f"checkpoint {self.path!r} was trained on {trained_on!r}, not {game_id!r}")
        expected = policy.observation_space.shape
        if expected != (size,):
            raise ValueError(
                f"checkpoint {self.path!r} expects observations of shape {expected}, but {game_id} with options "
                f"{game_options or '{}'} gives ({size},): was it trained on another game or options?"
            )
        import torch

        self._torch = torch
        self.policy = policy
        self.policy.set_training_mode(False)

    @property
    def prior_name(self) -> str:
        """The prior the policy was trained with (``agents.prior``), or "none"."""
        return "none" if self.prior is None else self.prior.name

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the agent (and its prior)."""
        super().reset(seed)
        if self.prior is not None:
            self.prior.reset(seed)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """The policy's choice among the legal actions."""
        torch = self._torch
        self.check_observation(observation)
        mask = observation["action_mask"].astype(bool)
        if not mask.any():
            raise ValueError("ppo: the action mask has no legal action (is it this agent's turn?)")
        x = observation["observation"]
        if self.prior is not None:  # the floats of a batch of one
            x = with_prior(x, self.prior(x[None], mask[None])[0])
        with torch.no_grad():
            obs = torch.as_tensor(x, dtype=torch.float32).unsqueeze(0)
            # get_distribution is the policy's own forward pass (MLP or agents.nets.grid.GridConvPolicy)
            dist = self.policy.get_distribution(obs, action_masks=mask[None])
            logits = dist.distribution.logits[0].numpy().astype(np.float64)
        logits[~mask] = -np.inf
        if self.deterministic:
            return int(np.argmax(logits))
        p = np.exp(logits - logits.max())
        p /= p.sum()
        return int(self.rng.choice(len(p), p=p))
