"""The learner of ``experiments.train``: a MaskablePPO model on a vec env, with the network of ``agents.nets``,
carrying the meta its checkpoints record (``training_meta``)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agents.checkpoint import (
    META,
    PPO_KEYS,
    CheckpointError,
    CheckpointMeta,
    PolicySpec,
    UnsafeCheckpointError,
    _sb3_refusal,
    _spaces,
    _weights,
    attach_meta,
    kind,
    learning_rate,
    load_sb3,
    read_meta,
    resolve_path,
    weights_limit,
)

# PPO's hyperparameters as experiments.train names them (config.json, the checkpoint's meta)
PPO_SETTINGS = ("learning_rate", "lr_schedule", *PPO_KEYS)


def training_meta(
    game_id: str, options: Mapping[str, Any], network: PolicySpec, ppo: Mapping[str, Any], seed: int
) -> CheckpointMeta:
    """What the run's checkpoints record: the game and options, the network and the hyperparameters (with seed)."""
    hyper = {"learning_rate": ppo["learning_rate"], "lr_schedule": ppo["lr_schedule"], "seed": seed}
    hyper.update({k: ppo[k] for k in PPO_KEYS})
    return CheckpointMeta(game_id, dict(options), network, {"hyperparameters": hyper})


def _maskable_ppo(
    env: Any, network: PolicySpec, game_id: str, options: Mapping[str, Any], hyper: Mapping[str, Any], seed: Any
) -> Any:
    """A MaskablePPO on ``env`` with ``network`` and the hyperparameters ``hyper`` (``PPO_SETTINGS``)."""
    from sb3_contrib import MaskablePPO

    from agents.ppo_buffer import FlatRolloutBuffer

    rate = learning_rate(float(hyper["learning_rate"]), str(hyper["lr_schedule"]))
    policy, kwargs = network.build(game_id, options)  # agents.nets.build_policy
    ppo = {k: hyper[k] for k in PPO_KEYS}
    return MaskablePPO(
        policy, env, rate, **ppo, policy_kwargs=kwargs, seed=seed, device="cpu", rollout_buffer_class=FlatRolloutBuffer
    )


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
    """A new MaskablePPO on ``vec`` (``init``'s weights in; ``trust``: it may be an SB3 zip, which is unpickled)."""
    from agents.ppo import start_from

    options = dict(options or {})
    meta = training_meta(game_id, options, network, ppo, seed)
    model = attach_meta(_maskable_ppo(vec, network, game_id, options, ppo, seed), meta)
    if init:
        start_from(model, init, trust)
    return model


def resume_model(checkpoint: str | Path, vec: Any, steps: int, meta: CheckpointMeta, trust: bool = False) -> Any:
    """The model saved at ``checkpoint``, on ``vec``, at ``steps``; a Stable-Baselines3 zip of an earlier version
    (``trust`` needed: it is unpickled) gets ``meta``, so its checkpoints from now on are in the safe format."""
    from agents.checkpoint import model_meta

    model = load_model_for_resume(checkpoint, vec, trust)
    model.num_timesteps = steps
    if not hasattr(model, "_jericho_meta"):
        attach_meta(model, meta)
    saved = model_meta(model)
    saved.training = {"hyperparameters": saved.training["hyperparameters"]}  # counters and run state: per save
    return model


def update_with_threads(model: Any, threads: int) -> None:
    """Run ``model``'s PPO updates on ``threads`` torch threads, and its rollouts (small batches) on one."""
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


def pipeline_rollouts(model: Any) -> bool:
    """Collect ``model``'s rollouts shard by shard when its env allows it (``ShardedVecEnv(local=False)``), so the
    other shards play while this process computes one shard's moves (random draws shard by shard); whether it did."""
    try:
        parts = model.env.parts
    except (AttributeError, RuntimeError):
        return False
    if len(parts) < 2:
        return False
    model.collect_rollouts = functools.partial(_collect_pipelined, model)
    return True


def _collect_pipelined(
    model: Any, env: Any, callback: Any, rollout_buffer: Any, n_rollout_steps: int, use_masking: bool = True
) -> bool:
    """sb3-contrib's ``MaskablePPO.collect_rollouts``, the policy asked shard by shard (``pipeline_rollouts``)."""
    import numpy as np
    import torch as th
    from stable_baselines3.common.utils import obs_as_tensor

    assert model._last_obs is not None, "No previous observation was provided"
    policy = model.policy
    policy.set_training_mode(False)
    rollout_buffer.reset()
    callback.on_rollout_start()
    parts, n = env.parts, env.num_envs
    obs, masks = model._last_obs, env.action_masks()

    def act(k: int, obs: np.ndarray, masks: np.ndarray, out: tuple[np.ndarray, Any, Any]) -> None:
        """Shard ``k``'s moves from ``obs`` and ``masks`` into ``out`` (actions, values, log-probs), sent to it."""
        part = parts[k]
        with th.no_grad():
            actions, values, log_probs = policy(obs_as_tensor(obs[part], model.device), action_masks=masks[part])
        chosen = actions.cpu().numpy()
        env.step_part_async(k, chosen)
        out[0][part], out[1][part], out[2][part] = chosen, values, log_probs

    def fresh() -> tuple[np.ndarray, Any, Any]:
        return np.empty(n, dtype=np.int64), th.empty((n, 1)), th.empty(n)

    now = fresh()
    for k in range(len(parts)):
        act(k, obs, masks, now)
    for step in range(n_rollout_steps):
        new_obs, new_masks = np.empty_like(obs), np.empty_like(masks)
        rewards, dones = np.empty(n, dtype=np.float32), np.empty(n, dtype=bool)
        infos: list[dict[str, Any]] = [{}] * n
        after = fresh() if step + 1 < n_rollout_steps else None
        for k, part in enumerate(parts):
            o, r, d, i, m = env.step_part_wait(k)
            new_obs[part], rewards[part], dones[part], infos[part], new_masks[part] = o, r, d, i, m
            if after is not None:  # this shard's next moves while the other shards finish this step
                act(k, new_obs, new_masks, after)
        model.num_timesteps += n
        actions, values, log_probs = now
        callback.update_locals(locals())
        if not callback.on_step():  # stopped: the next step's moves are played; the games go on from there
            if after is not None:
                for k, part in enumerate(parts):
                    o, r, d, i, m = env.step_part_wait(k)
                    new_obs[part], dones[part] = o, d
            model._last_obs, model._last_episode_starts = new_obs, dones
            return False
        model._update_info_buffer(infos, dones)
        for idx in np.flatnonzero(dones):  # a timeout bootstraps with the value function, as MaskablePPO
            if infos[idx].get("terminal_observation") is not None and infos[idx].get("TimeLimit.truncated", False):
                terminal_obs = policy.obs_to_tensor(infos[idx]["terminal_observation"])[0]
                with th.no_grad():
                    rewards[idx] += model.gamma * policy.predict_values(terminal_obs)[0]
        rollout_buffer.add(
            model._last_obs,
            actions.reshape(-1, 1),
            rewards,
            model._last_episode_starts,
            values,
            log_probs,
            action_masks=masks,
        )
        model._last_obs, model._last_episode_starts = new_obs, dones
        obs, masks, now = new_obs, new_masks, after  # type: ignore[assignment]
    with th.no_grad():
        values = policy.predict_values(obs_as_tensor(obs, model.device))
    rollout_buffer.compute_returns_and_advantage(last_values=values, dones=dones)
    callback.on_rollout_end()
    return True


def load_model_for_resume(path: str | Path, env: Any, trust: bool = False) -> Any:
    """A MaskablePPO on ``env`` rebuilt from the checkpoint, its tensors and counters loaded (an SB3 zip: ``trust``)."""
    from jericho_env.core.validate import seed32

    p = resolve_path(path)
    if kind(p) == "sb3":
        if not trust:
            raise UnsafeCheckpointError(_sb3_refusal(p))
        return load_sb3(p, env=env)
    meta = read_meta(p)
    training = meta.get("training") or {}
    hyper = training.get("hyperparameters")
    if not isinstance(hyper, dict) or any(k not in hyper for k in PPO_SETTINGS):
        raise CheckpointError(f"{str(p)!r} records no training hyperparameters: it cannot resume training")
    for key, (ok, allowed) in _HYPER.items():  # each one what PPO takes
        if key in hyper and not ok(hyper[key]):
            raise CheckpointError(f"{p}: {META}'s training hyperparameter {key} must be {allowed}, got {hyper[key]!r}")
    spec = PolicySpec.from_json(meta["policy"], str(p))
    obs_space, act_space = _spaces(meta)
    if env.observation_space.shape != obs_space.shape or env.action_space != act_space:
        raise CheckpointError(
            f"{str(p)!r} holds a policy for observations {obs_space.shape} and {act_space}; this run's env gives "
            f"{env.observation_space.shape} and {env.action_space}"
        )
    check_rollout_memory(hyper["n_steps"], getattr(env, "num_envs", 1), obs_space.shape[0], act_space.n, str(p))
    seed = hyper.get("seed")  # SB3 seeds numpy's legacy 32-bit generator
    model = _maskable_ppo(env, spec, meta["game_id"], meta["options"], hyper, None if seed is None else seed32(seed))
    state = _weights(p, weights_limit(model.policy))
    try:
        model.policy.load_state_dict(state["policy"])
        if "optimizer" in state:
            model.policy.optimizer.load_state_dict(state["optimizer"])
    except (ValueError, RuntimeError, KeyError) as e:
        raise CheckpointError(f"{str(p)!r}: its tensors do not fit the rebuilt network: {e}") from None
    model.num_timesteps = int(training.get("num_timesteps", 0))
    model._n_updates = int(training.get("n_updates", 0))  # SB3 keeps the count private
    return attach_meta(model, CheckpointMeta(meta["game_id"], dict(meta["options"]), spec, dict(training)))


# what each resumed hyperparameter must be (load_model_for_resume): (test, allowed)
_HYPER: dict[str, tuple[Callable[[Any], bool], str]] = {
    "n_steps": (lambda v: _int_in(v, 1, 2**24), "an int in 1..2**24"),
    "batch_size": (lambda v: _int_in(v, 1, 2**30), "an int in 1..2**30"),
    "n_epochs": (lambda v: _int_in(v, 1, 10**4), "an int in 1..10000"),
    "gamma": (lambda v: _real(v) and 0 <= v <= 1, "a number in 0..1"),
    "gae_lambda": (lambda v: _real(v) and 0 <= v <= 1, "a number in 0..1"),
    "ent_coef": (lambda v: _real(v) and v >= 0, "a finite number >= 0"),
    "learning_rate": (lambda v: _real(v) and v > 0, "a finite number > 0"),
    "lr_schedule": (lambda v: v in ("constant", "linear"), "'constant' or 'linear'"),
    "seed": (lambda v: v is None or _int_in(v, 0, 2**63 - 1), "null or an int in 0..2**63-1"),
}


def _int_in(v: Any, lo: int, hi: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def _real(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_rollout_memory(n_steps: int, n_envs: int, obs_size: int, num_actions: int, where: str) -> None:
    """``CheckpointError`` if the rollout buffer of ``n_steps`` steps of ``n_envs`` envs would not fit in memory."""
    from experiments.training.ppo.config import physical_memory

    need = 4 * n_steps * n_envs * (obs_size + num_actions + 8)
    memory = physical_memory()
    if memory is not None and need > memory:
        raise CheckpointError(
            f"{where}: its n_steps={n_steps} with {n_envs} env(s) needs a rollout buffer of {need / 2**30:.1f} GiB, "
            f"more than this machine's {memory / 2**30:.1f} GiB"
        )
