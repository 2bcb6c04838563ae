"""The learner of ``experiments.train``: a MaskablePPO model on a vec env, with the network of ``agents.nets``.

``make_model(vec, game_id, network, ppo, seed, options)`` builds it: the network is a
``agents.checkpoint.PolicySpec`` (a name in ``agents.nets.POLICIES``, its ``--net`` sizes and its prior),
``ppo`` holds PPO's hyperparameters (``PPO_SETTINGS``). The model carries the checkpoint meta
(``training_meta``) that its checkpoints record (``agents.checkpoint.save_checkpoint``), and its
rollouts go through ``agents.rollout.FlatRolloutBuffer``. ``init`` copies the policy weights of a
checkpoint in (``agents.ppo.start_from``). ``resume_model`` reloads a run's checkpoint to continue it;
``update_with_threads`` gives PPO's updates more torch threads than its rollouts.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agents.checkpoint import CheckpointMeta, PolicySpec

# PPO's hyperparameters as experiments.train names them (config.json, the checkpoint's meta)
PPO_SETTINGS = ("learning_rate", "lr_schedule", "n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda", "ent_coef")


def training_meta(
    game_id: str, options: Mapping[str, Any], network: PolicySpec, ppo: Mapping[str, Any], seed: int
) -> CheckpointMeta:
    """What the run's checkpoints record: the game and options, the network and the hyperparameters (with seed)."""
    hyper = {"learning_rate": ppo["learning_rate"], "lr_schedule": ppo["lr_schedule"], "seed": seed}
    hyper.update({k: ppo[k] for k in ("n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda", "ent_coef")})
    return CheckpointMeta(game_id, dict(options), network, {"hyperparameters": hyper})


def make_model(
    vec: Any,
    game_id: str,
    network: PolicySpec,
    ppo: Mapping[str, Any],
    seed: int,
    options: Mapping[str, Any] | None = None,
    init: str | Path | None = None,
    trust: bool = False,
) -> Any:
    """A new MaskablePPO on ``vec`` with ``network`` and the ``ppo`` hyperparameters (and ``init``'s weights).

    ``trust``: ``init`` may be a Stable-Baselines3 zip (it is unpickled, ``agents.checkpoint``).
    """
    from sb3_contrib import MaskablePPO

    from agents.checkpoint import attach_meta, learning_rate
    from agents.ppo import start_from
    from agents.rollout import FlatRolloutBuffer

    options = dict(options or {})
    policy, kwargs = network.build(game_id, options)  # agents.nets.build_policy
    model = MaskablePPO(
        policy,
        vec,
        learning_rate(float(ppo["learning_rate"]), str(ppo["lr_schedule"])),
        **{k: ppo[k] for k in ("n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda", "ent_coef")},
        policy_kwargs=kwargs,
        seed=seed,
        device="cpu",
        rollout_buffer_class=FlatRolloutBuffer,
    )
    attach_meta(model, training_meta(game_id, options, network, ppo, seed))
    if init:
        start_from(model, init, trust)
    return model


def resume_model(checkpoint: str | Path, vec: Any, steps: int, meta: CheckpointMeta, trust: bool = False) -> Any:
    """The model saved at ``checkpoint``, on ``vec``, at ``steps``: its own hyperparameters and tensors.

    A Stable-Baselines3 zip of an earlier version (``trust`` needed: it is unpickled) gets ``meta``, so its
    checkpoints from now on are in the safe format.
    """
    from agents.checkpoint import attach_meta, load_model_for_resume, model_meta

    model = load_model_for_resume(checkpoint, vec, trust)
    model.num_timesteps = steps
    if not hasattr(model, "_jericho_meta"):
        attach_meta(model, meta)
    saved = model_meta(model)
    saved.training = {"hyperparameters": saved.training["hyperparameters"]}  # counters and run state: per save
    return model


def update_with_threads(model: Any, threads: int) -> None:
    """Run ``model``'s PPO updates on ``threads`` torch threads, and the rest (rollouts) on one.

    During an update the shards' worker processes wait for actions, so a second thread has a core of its
    own; rollouts' forward passes are small batches, which more threads only slow down.
    """
    if threads == 1:
        return
    import torch

    update = model.train

    def train() -> None:
        torch.set_num_threads(threads)
        try:
            update()
        finally:
            torch.set_num_threads(1)

    model.train = train
