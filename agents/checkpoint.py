"""Safe PPO checkpoints: a zip of ``meta.json`` and tensors-only ``weights.pt``, loaded without unpickling code.

Stable-Baselines3's own zip (``model.save``) stores parts of the model as pickled Python objects,
and loading it runs whatever those pickles say: a checkpoint from elsewhere can run any code.
This format stores only data:

- ``meta.json``: the format and its version, the game id, the game's version and observation
  version, its options (every one, resolved), the sizes of the observation and action spaces, the
  policy as a name from ``agents.nets.POLICIES`` (the allow-list) with its JSON arguments
  (``PolicySpec``), and the training hyperparameters and counters (``training``);
- ``weights.pt``: ``{"policy": state_dict, "optimizer": state_dict}``, tensors and plain numbers,
  read with ``torch.load(weights_only=True)``, which refuses anything else.

Loading rebuilds the network from the spec (``agents.nets.build_policy``) and copies the tensors in.
A Stable-Baselines3 zip (checkpoints written before this format, or from elsewhere) loads only with
``trust=True`` (``--trust-checkpoint`` on the command lines): say so only for files you trust.

The API: ``save_checkpoint(model, path, meta)`` (written to a temporary file, then renamed, so a
kill never leaves half a file), ``load_policy(path, trust=False)``, ``load_model_for_resume(path,
env)``, ``read_meta(path)`` and ``check_game(meta, game_id, options)``.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import warnings
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

FORMAT = "jericho-env checkpoint"
FORMAT_VERSION = 1
META = "meta.json"
WEIGHTS = "weights.pt"
# training hyperparameters that MaskablePPO takes by name; learning_rate, lr_schedule and seed are handled apart
PPO_KEYS = ("n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda", "ent_coef")
TRUST_HINT = "pass trust=True (--trust-checkpoint on the command line) only if you trust where the file came from"


class CheckpointError(ValueError):
    """A checkpoint that cannot be loaded as asked: damaged, unsafe, or for another game or options."""


class UnsafeCheckpointError(CheckpointError):
    """A checkpoint whose loading would unpickle Python objects (a Stable-Baselines3 zip) and no ``trust=True``."""


@dataclasses.dataclass(frozen=True)
class PolicySpec:
    """A policy network by name (``agents.nets.POLICIES``, the allow-list) and its JSON-able arguments."""

    name: str  # a key of agents.nets.POLICIES
    net: str = "256,256"  # --net layer sizes
    prior: str = "none"  # agents.prior: none, greedy, greedy-scores
    prior_weight: float = 5.0  # the prior's initial logit bonus
    sizes: dict[str, int] = dataclasses.field(default_factory=dict)  # a network's own sizes (channels, layers)

    def build(self, game_id: str, options: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
        """The policy class (``"MlpPolicy"`` resolved) and its kwargs, as ``agents.nets.build_policy`` makes them."""
        from agents.nets import build_policy

        policy, kwargs = build_policy(
            self.name, game_id, options, self.net, self.prior, self.prior_weight, **self.sizes
        )
        if policy == "MlpPolicy":
            from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

            policy = MaskableActorCriticPolicy
        return policy, kwargs

    @classmethod
    def from_json(cls, data: Any, where: str) -> PolicySpec:
        """The spec stored in ``meta.json``; ``CheckpointError`` if it is not one (or names no known network)."""
        from agents.nets import POLICY_NAMES

        if not isinstance(data, Mapping) or set(data) - {f.name for f in dataclasses.fields(cls)}:
            raise CheckpointError(
                f"{where}: meta.json's policy must be a dict of name, net, prior, prior_weight and sizes"
            )
        if data.get("name") not in POLICY_NAMES:
            raise CheckpointError(
                f"{where}: meta.json names the policy {data.get('name')!r}, not one of the networks this version "
                f"can build ({', '.join(POLICY_NAMES)}); nothing else is loaded"
            )
        try:
            spec = cls(**data)
            spec_ok = isinstance(spec.net, str) and isinstance(spec.prior, str)
            spec_ok = spec_ok and isinstance(spec.prior_weight, (int, float)) and isinstance(spec.sizes, dict)
        except TypeError:
            spec_ok = False
        if not spec_ok:
            raise CheckpointError(f"{where}: meta.json's policy arguments are malformed: {data!r}")
        return spec


@dataclasses.dataclass
class CheckpointMeta:
    """What a checkpoint records beside the tensors (``meta.json`` adds the format, versions and spaces)."""

    game_id: str
    options: dict[str, Any]  # the game's options; resolved (every option named) when saved
    policy: PolicySpec
    training: dict[str, Any] = dataclasses.field(default_factory=dict)  # hyperparameters, counters, run state


# ---------------------------------------------------------------------------------------------------- saving
def attach_meta(model: Any, meta: CheckpointMeta) -> Any:
    """Remember ``meta`` on ``model`` so that ``save_checkpoint(model, path)`` needs no more; returns ``model``."""
    model._jericho_meta = meta  # our own attribute on the SB3 model
    return model


def model_meta(model: Any) -> CheckpointMeta:
    """The meta attached to ``model`` by ``attach_meta`` (``CheckpointError`` if none)."""
    meta = getattr(model, "_jericho_meta", None)
    if not isinstance(meta, CheckpointMeta):
        raise CheckpointError(
            "this model has no checkpoint meta: build it with attach_meta(model, CheckpointMeta(...))"
        )
    return meta


def meta_json(model: Any, meta: CheckpointMeta) -> dict[str, Any]:
    """The ``meta.json`` of ``model`` under ``meta``: the game's versions and the spaces filled in."""
    from jericho_env.registry import make_rules

    rules = make_rules(meta.game_id, **meta.options)
    obs = model.observation_space.shape
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "game_id": meta.game_id,
        "game_version": rules.version,
        "observation_version": rules.observation_version,
        "options": dict(rules.options),
        "observation_shape": [int(x) for x in obs],
        "num_actions": int(model.action_space.n),
        "policy": dataclasses.asdict(meta.policy),
        "training": {
            **meta.training,
            "num_timesteps": int(getattr(model, "num_timesteps", 0)),
            "n_updates": int(getattr(model, "_n_updates", 0)),
        },
    }


def save_checkpoint(model: Any, path: str | Path, meta: CheckpointMeta | None = None) -> Path:
    """Write ``model``'s policy and optimizer tensors and ``meta`` (else the attached one) to ``path``.

    Written to ``path`` + ``.tmp``, flushed to disk, then renamed over ``path``: a kill leaves
    either the old file or the new one, never a torn one.
    """
    import torch

    meta = meta or model_meta(model)
    data = meta_json(model, meta)
    weights = io.BytesIO()
    state: dict[str, Any] = {"policy": model.policy.state_dict()}
    optimizer = getattr(model.policy, "optimizer", None)
    if optimizer is not None:
        state["optimizer"] = optimizer.state_dict()
    torch.save(state, weights)
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr(META, json.dumps(data, indent=1))
            zf.writestr(WEIGHTS, weights.getvalue())
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path


# ---------------------------------------------------------------------------------------------------- loading
def resolve_path(path: str | Path) -> Path:
    """``path`` (or ``path.zip``) if it is a file; ``FileNotFoundError`` otherwise."""
    p = Path(path)
    if not p.exists() and p.with_suffix(".zip").exists():
        p = p.with_suffix(".zip")
    if not p.is_file():
        raise FileNotFoundError(f"no PPO checkpoint at {str(path)!r} (expected a .zip written by experiments.train)")
    return p


def kind(path: str | Path) -> str:
    """``"safe"`` (this format), ``"sb3"`` (a Stable-Baselines3 zip); ``CheckpointError`` for anything else."""
    p = resolve_path(path)
    if not zipfile.is_zipfile(p):
        raise CheckpointError(
            f"{str(p)!r} is not a PPO checkpoint: not a zip archive (corrupt, cut short or wrong file?)"
        )
    try:
        with zipfile.ZipFile(p) as zf:
            names = set(zf.namelist())
    except (zipfile.BadZipFile, OSError) as e:
        raise CheckpointError(f"{str(p)!r} is not a readable zip archive: {e}") from None
    if META in names:
        return "safe"
    if "data" in names and "policy.pth" in names:
        return "sb3"
    raise CheckpointError(f"{str(p)!r} is not a PPO checkpoint: no {META} (this format) and no SB3 'data' file")


def read_meta(path: str | Path) -> dict[str, Any]:
    """The ``meta.json`` of a checkpoint in this format, checked; ``CheckpointError`` naming the problem."""
    p = resolve_path(path)
    if kind(p) != "safe":
        raise UnsafeCheckpointError(_sb3_refusal(p))
    try:
        with zipfile.ZipFile(p) as zf:
            meta = json.loads(zf.read(META).decode("utf-8"))
    except (zipfile.BadZipFile, OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{str(p)!r}: {META} is unreadable ({e})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{str(p)!r}: {META} does not describe a {FORMAT}")
    version = meta.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise CheckpointError(
            f"{str(p)!r} is in format version {version!r}; this version of jericho-env reads up to {FORMAT_VERSION}"
        )
    needed = ("game_id", "game_version", "observation_version", "options", "observation_shape", "num_actions")
    missing = [k for k in (*needed, "policy") if k not in meta]
    if missing:
        raise CheckpointError(f"{str(p)!r}: {META} lacks {', '.join(missing)}")
    if not isinstance(meta["options"], dict) or not isinstance(meta["game_id"], str):
        raise CheckpointError(f"{str(p)!r}: {META}'s game_id must be a string and options a dict")
    return meta


def _sb3_refusal(p: Path) -> str:
    return (
        f"{str(p)!r} is a Stable-Baselines3 zip: loading it unpickles Python objects, and a pickle can run any "
        f"code. It is refused by default; {TRUST_HINT}. Checkpoints written by experiments.train now hold "
        "tensors and JSON only"
    )


def _weights(p: Path) -> dict[str, Any]:
    """The tensors of ``weights.pt``, read with ``weights_only=True`` (anything but tensors and numbers refused)."""
    import pickle

    import torch

    try:
        with zipfile.ZipFile(p) as zf:
            raw = zf.read(WEIGHTS)
    except KeyError:
        raise CheckpointError(f"{str(p)!r} has no {WEIGHTS}") from None
    except (zipfile.BadZipFile, OSError) as e:
        raise CheckpointError(f"{str(p)!r}: {WEIGHTS} is unreadable ({e})") from None
    try:
        state = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        text = str(e)
        why = text[text.find("WeightsUnpickler error:") :].split("\n")[0].split(" was not")[0] or type(e).__name__
        if "Unsupported global" in why:  # a pickled object, not a tensor: refused, never run
            raise UnsafeCheckpointError(
                f"{str(p)!r}: {WEIGHTS} holds more than tensors and numbers, so it is refused ({why})"
            ) from None
        raise CheckpointError(f"{str(p)!r}: {WEIGHTS} is damaged ({why})") from None
    except Exception as e:  # torch raises many kinds on a damaged file
        raise CheckpointError(f"{str(p)!r}: {WEIGHTS} is damaged ({type(e).__name__}: {e})") from None
    if not isinstance(state, dict) or not isinstance(state.get("policy"), dict):
        raise CheckpointError(f"{str(p)!r}: {WEIGHTS} must hold a dict with the policy's state_dict")
    return state


def check_game(meta: Mapping[str, Any], game_id: str, options: Mapping[str, Any], where: str) -> None:
    """``CheckpointError`` unless ``meta`` is for ``game_id`` under ``options`` and its observation version.

    A different rules version of the same game only warns: the observation is the same, the play
    may differ (see the game page's version history).
    """
    from jericho_env.registry import make_rules

    rules = make_rules(game_id, **options)
    if meta["game_id"] != game_id:
        raise CheckpointError(f"{where} was trained on {meta['game_id']!r}, not {game_id!r}")
    saved = make_rules(game_id, **meta["options"]).options
    if dict(saved) != dict(rules.options):
        differ = ", ".join(f"{k}={rules.options[k]!r}" for k in rules.options if saved.get(k) != rules.options[k])
        raise CheckpointError(
            f"{where} was trained on {game_id} with options {dict(saved)}; this game has {differ}: play it with "
            "the checkpoint's options (--option KEY=VALUE) or train one for these"
        )
    if meta["observation_version"] != rules.observation_version:
        raise CheckpointError(
            f"{where} reads {game_id} observations of version {meta['observation_version']}; this version of "
            f"jericho-env gives version {rules.observation_version} (see the game page's version history)"
        )
    if meta["game_version"] != rules.version:
        warnings.warn(
            f"{where} was trained on {game_id}-v{meta['game_version']}; this is {game_id}-v{rules.version} "
            "(same observations, see the game page's version history for what changed)",
            stacklevel=3,
        )


def _spaces(meta: Mapping[str, Any]) -> tuple[Any, Any]:
    import gymnasium as gym
    import numpy as np

    shape = meta["observation_shape"]
    if not (isinstance(shape, list) and len(shape) == 1 and isinstance(shape[0], int) and shape[0] > 0):
        raise CheckpointError(f"meta.json's observation_shape must be [size], got {shape!r}")
    if not isinstance(meta["num_actions"], int) or meta["num_actions"] < 1:
        raise CheckpointError(f"meta.json's num_actions must be a positive int, got {meta['num_actions']!r}")
    return gym.spaces.Box(0.0, 1.0, (shape[0],), dtype=np.float32), gym.spaces.Discrete(meta["num_actions"])


def _build_policy(p: Path, meta: Mapping[str, Any], state: Mapping[str, Any]) -> Any:
    spec = PolicySpec.from_json(meta["policy"], str(p))
    obs_space, act_space = _spaces(meta)
    try:
        policy_class, kwargs = spec.build(meta["game_id"], meta["options"])
        policy = policy_class(obs_space, act_space, lambda _: 0.0, **kwargs)
        policy.load_state_dict(state["policy"])
    except (ValueError, RuntimeError, TypeError, KeyError) as e:
        raise CheckpointError(f"{str(p)!r}: its network does not rebuild from meta.json: {e}") from None
    return policy


def load_policy(
    path: str | Path,
    trust: bool = False,
    game_id: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> tuple[Any, dict[str, Any]]:
    """The policy network of a checkpoint and its meta (``{"format": "sb3"}`` for a trusted SB3 zip).

    With ``game_id``, the checkpoint must be for that game and ``options`` (``check_game``). An SB3
    zip raises ``UnsafeCheckpointError`` unless ``trust``; this format never runs pickled code.
    """
    p = resolve_path(path)
    if kind(p) == "sb3":
        if not trust:
            raise UnsafeCheckpointError(_sb3_refusal(p))
        model = load_sb3(p)
        return model.policy, {"format": "sb3", "path": str(p)}
    meta = read_meta(p)
    if game_id is not None:
        check_game(meta, game_id, options or {}, f"checkpoint {str(p)!r}")
    policy = _build_policy(p, meta, _weights(p))
    policy.set_training_mode(False)
    return policy, meta


def load_sb3(path: str | Path, env: Any = None) -> Any:
    """A Stable-Baselines3 MaskablePPO zip, unpickling it: only for files the caller trusts."""
    try:
        from sb3_contrib import MaskablePPO
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ImportError("the ppo agent needs the train extra: pip install -e '.[train]'") from e
    try:
        return MaskablePPO.load(str(path), env=env, device="cpu")
    except Exception as e:  # sb3 raises many kinds on a damaged archive
        raise CheckpointError(f"could not load PPO checkpoint {str(path)!r}: {type(e).__name__}: {e}") from e


def linear_to_zero(rate: float) -> Callable[[float], float]:
    """A learning rate falling linearly from ``rate`` to 0 over training (SB3 calls it with the progress remaining)."""

    def schedule(progress_remaining: float) -> float:  # a closure: checkpoints store it by value
        return rate + (1.0 - progress_remaining) * (0.0 - rate) / 1.0  # SB3's LinearSchedule(rate, 0, 1)

    return schedule


def learning_rate(rate: float, schedule: str) -> Any:
    """The learning rate MaskablePPO gets: ``rate``, or a linear decay to 0 (``linear_to_zero``)."""
    return linear_to_zero(rate) if schedule == "linear" else rate


def load_model_for_resume(path: str | Path, env: Any, trust: bool = False) -> Any:
    """A MaskablePPO on ``env`` rebuilt from the checkpoint's hyperparameters, its tensors and counters loaded.

    The policy and optimizer state dicts are copied in; ``num_timesteps`` and the update count are
    restored from ``meta.json``'s ``training``. An SB3 zip needs ``trust`` (it is unpickled).
    """
    from sb3_contrib import MaskablePPO

    p = resolve_path(path)
    if kind(p) == "sb3":
        if not trust:
            raise UnsafeCheckpointError(_sb3_refusal(p))
        return load_sb3(p, env=env)
    meta = read_meta(p)
    state = _weights(p)
    training = meta.get("training") or {}
    hyper = training.get("hyperparameters")
    if not isinstance(hyper, dict) or any(k not in hyper for k in (*PPO_KEYS, "learning_rate", "lr_schedule")):
        raise CheckpointError(f"{str(p)!r} records no training hyperparameters: it cannot resume training")
    spec = PolicySpec.from_json(meta["policy"], str(p))
    obs_space, act_space = _spaces(meta)
    if env.observation_space.shape != obs_space.shape or env.action_space != act_space:
        raise CheckpointError(
            f"{str(p)!r} holds a policy for observations {obs_space.shape} and {act_space}; this run's env gives "
            f"{env.observation_space.shape} and {env.action_space}"
        )
    policy_class, kwargs = spec.build(meta["game_id"], meta["options"])
    rate = learning_rate(float(hyper["learning_rate"]), str(hyper["lr_schedule"]))
    ppo = {k: hyper[k] for k in PPO_KEYS}
    from agents.rollout import FlatRolloutBuffer

    model = MaskablePPO(
        policy_class,
        env,
        rate,
        **ppo,
        policy_kwargs=kwargs,
        seed=hyper.get("seed"),
        device="cpu",
        rollout_buffer_class=FlatRolloutBuffer,
    )
    try:
        model.policy.load_state_dict(state["policy"])
        if "optimizer" in state:
            model.policy.optimizer.load_state_dict(state["optimizer"])
    except (ValueError, RuntimeError, KeyError) as e:
        raise CheckpointError(f"{str(p)!r}: its tensors do not fit the rebuilt network: {e}") from None
    model.num_timesteps = int(training.get("num_timesteps", 0))
    model._n_updates = int(training.get("n_updates", 0))  # SB3 keeps the count private
    options = dict(meta["options"])
    return attach_meta(model, CheckpointMeta(meta["game_id"], options, spec, dict(training)))


def is_loadable(path: str | Path) -> bool:
    """Whether ``path`` holds a complete checkpoint of this format (meta and tensors readable)."""
    try:
        p = resolve_path(path)
        read_meta(p)
        _weights(p)
    except (CheckpointError, FileNotFoundError):
        return False
    return True
