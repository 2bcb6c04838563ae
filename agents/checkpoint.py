"""Safe PPO checkpoints: a zip of ``meta.json`` and tensors-only ``weights.pt``, loaded without unpickling code.

A Stable-Baselines3 zip unpickles Python objects when loaded, so a file from elsewhere can run any code; this
format stores only data:

- ``meta.json``: the format and its version, the game id, versions and options (resolved), the spaces' sizes,
  the policy as a name from ``agents.nets.POLICIES`` with its JSON arguments (``PolicySpec``), and the
  training hyperparameters and counters (``training``);
- ``weights.pt``: ``{"policy": state_dict, "optimizer": state_dict}``, read with ``torch.load(weights_only=True)``.

Loading checks ``meta.json`` before anything is built from it (``check_sizes``), rebuilds the network from the
spec, then reads ``weights.pt`` (refused unread if larger than that network can need, ``weights_limit``; a
pickle of more than tensors is ``UnsafeCheckpointError``, nan or inf ``CheckpointError``). A Stable-Baselines3
zip loads only with ``trust=True`` (``--trust-checkpoint``). Every rule: ``docs/checkpoints.md``.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
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
        from agents.nets import check_sizes, parse_net
        from agents.prior import check_prior

        try:  # sizes within the bounds of agents.nets before any network is built from them
            parse_net(spec.net)
            check_sizes(spec.name, spec.sizes)
            check_prior(spec.prior)
        except ValueError as e:
            raise CheckpointError(f"{where}: meta.json's policy is refused: {e}") from None
        if not math.isfinite(spec.prior_weight) or isinstance(spec.prior_weight, bool):
            raise CheckpointError(
                f"{where}: meta.json's prior_weight must be a finite number, got {spec.prior_weight!r}"
            )
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


def save_checkpoint(
    model: Any, path: str | Path, meta: CheckpointMeta | None = None, run: Mapping[str, Any] | None = None
) -> Path:
    """Write ``model``'s policy and optimizer tensors and ``meta`` (else the attached one) to ``path`` (``write_zip``).

    ``run``: a training run's state, recorded as the meta's ``training["run"]`` (what ``--resume`` reads back).
    """
    meta = meta or model_meta(model)
    data = meta_json(model, meta)
    if run is not None:
        data["training"]["run"] = dict(run)
    return write_zip(path, data, model.policy.state_dict(), getattr(model.policy, "optimizer", None))


def write_zip(path: str | Path, meta: Mapping[str, Any], policy: Mapping[str, Any], optimizer: Any = None) -> Path:
    """``meta.json`` and ``weights.pt`` (the ``policy`` tensors, and ``optimizer``'s state if given) to ``path``.

    Written to ``path`` + ``.tmp``, flushed to disk, then renamed over ``path``: a kill never leaves a torn file.
    """
    import torch

    state: dict[str, Any] = {"policy": policy}
    if optimizer is not None:
        state["optimizer"] = optimizer.state_dict()
    weights = io.BytesIO()
    torch.save(state, weights)
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr(META, json.dumps(meta, indent=1))
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
        raise FileNotFoundError(
            f"no checkpoint at {str(path)!r} (expected a .zip written by experiments.train, dmc or exit)"
        )
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
    check_sizes(meta, str(p))
    return meta


def check_sizes(meta: Mapping[str, Any], where: str) -> PolicySpec:
    """The sizes ``meta.json`` gives, checked against the game it names before anything is built; returns the spec.

    The game and options must exist, ``num_actions`` and ``observation_shape`` must be that game's (with the prior's
    floats), and the network's sizes within ``agents.nets.MAX_WIDTH`` and ``MAX_LAYERS``.
    """
    from agents.prior import prior_size
    from jericho_env.core.rules import JerichoError
    from jericho_env.registry import make_rules

    game_id = meta["game_id"]
    try:
        rules = make_rules(game_id, **meta["options"])
    except JerichoError as e:
        raise CheckpointError(f"{where}: {META} names a game this version cannot make: {e}") from None
    spec = PolicySpec.from_json(meta["policy"], where)
    actions, num_actions = rules.info.num_actions, meta["num_actions"]
    if not (isinstance(num_actions, int) and not isinstance(num_actions, bool) and num_actions == actions):
        raise CheckpointError(
            f"{where}: {META}'s num_actions must be a positive int, {game_id}'s action count under its options "
            f"({actions}), got {num_actions!r}"
        )
    size = rules.info.observation_size + prior_size(spec.prior, actions)
    if meta["observation_shape"] != [size] or not isinstance(meta["observation_shape"][0], int):
        raise CheckpointError(
            f"{where}: {META}'s observation_shape must be [size], {game_id}'s observation size under its options "
            f"and prior {spec.prior!r} ([{size}]), got {meta['observation_shape']!r}"
        )
    return spec


def _sb3_refusal(p: Path) -> str:
    return (
        f"{str(p)!r} is a Stable-Baselines3 zip: loading it unpickles Python objects, and a pickle can run any "
        f"code. It is refused by default; {TRUST_HINT}. Checkpoints written by experiments.train now hold "
        "tensors and JSON only"
    )


def _weights(p: Path, limit: int | None = None) -> dict[str, Any]:
    """The tensors of ``weights.pt``, read with ``weights_only=True``; at most ``limit`` bytes, every tensor finite."""
    import pickle

    import torch

    try:
        with zipfile.ZipFile(p) as zf:
            size = zf.getinfo(WEIGHTS).file_size
            if limit is not None and size > limit:
                raise CheckpointError(
                    f"{str(p)!r}: {WEIGHTS} holds {size:,} bytes, more than the {limit:,} that the network "
                    f"{META} describes can need (its tensors and the optimizer's): refused unread"
                )
            raw = zf.read(WEIGHTS)
    except KeyError:
        raise CheckpointError(f"{str(p)!r} has no {WEIGHTS}") from None
    except (zipfile.BadZipFile, OSError) as e:
        raise CheckpointError(f"{str(p)!r}: {WEIGHTS} is unreadable ({e})") from None
    try:
        state = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        refused = refused_pickle(raw, str(e))
        if refused is not None:  # a pickle of more than tensors: refused by the loader, never run
            raise UnsafeCheckpointError(
                f"{str(p)!r}: {WEIGHTS} holds more than tensors and numbers, so it is refused as unsafe and never "
                f"run ({refused})"
            ) from None
        raise CheckpointError(f"{str(p)!r}: {WEIGHTS} is damaged (not a tensor file torch can read)") from None
    except Exception as e:  # torch raises many kinds on a damaged file
        raise CheckpointError(f"{str(p)!r}: {WEIGHTS} is damaged ({type(e).__name__}: {e})") from None
    if not isinstance(state, dict) or not isinstance(state.get("policy"), dict):
        raise CheckpointError(f"{str(p)!r}: {WEIGHTS} must hold a dict with the policy's state_dict")
    bad = _not_finite(state)
    if bad:
        raise CheckpointError(
            f"{str(p)!r}: {WEIGHTS} holds nan or inf values (in {bad}): the training that wrote it diverged; "
            "use an earlier checkpoint"
        )
    return state


def refused_pickle(raw: bytes, error: str) -> str | None:
    """Why torch's weights-only loader refused ``raw`` if it is a whole pickle, else None (damaged bytes).

    ``raw`` is a ``torch.save`` zip holding ``data.pkl`` or a bare pickle; it is only scanned (``pickletools``).
    """
    import pickletools
    import re

    pickled = raw
    try:
        if zipfile.is_zipfile(io.BytesIO(raw)):
            with zipfile.ZipFile(io.BytesIO(raw)) as zf:
                infos = [i for i in zf.infolist() if i.filename.endswith("data.pkl")]
                if not infos or infos[0].file_size > 2**26:  # torch's data.pkl is small: tensors lie beside it
                    return None
                pickled = zf.read(infos[0])
        ops = list(pickletools.genops(pickled))
    except Exception:  # not a whole pickle: damaged, cut short
        return None
    if not ops or ops[-1][0].name != "STOP":
        return None
    named = re.search(r"GLOBAL ([\w.]+)", error)
    if named:
        return f"it names {named.group(1)}, which is not a tensor"
    found, texts = [], []
    for op, arg, _ in ops:  # GLOBAL/INST carry "module name"; STACK_GLOBAL takes the two strings pushed before it
        if isinstance(arg, str):
            texts.append(arg)
        if op.name in ("GLOBAL", "INST") and arg:
            found.append(str(arg).replace(" ", "."))
        elif op.name == "STACK_GLOBAL" and len(texts) >= 2:
            found.append(f"{texts[-2]}.{texts[-1]}")
    return "a pickle of Python objects" + (f": {', '.join(found[:3])}" if found else "")


def _not_finite(state: Mapping[str, Any]) -> str | None:
    """The name of the first floating tensor in ``state`` (nested dicts and lists) holding nan or inf, else None."""
    import torch

    def walk(value: Any, name: str) -> str | None:
        if isinstance(value, torch.Tensor):
            ok = not value.is_floating_point() or bool(torch.isfinite(value).all())
            return None if ok else name
        if isinstance(value, float):
            return None if math.isfinite(value) else name
        items = value.items() if isinstance(value, Mapping) else enumerate(value) if isinstance(value, list) else ()
        for key, inner in items:
            found = walk(inner, f"{name}.{key}" if name else str(key))
            if found:
                return found
        return None

    return walk(state, "")


def check_game(meta: Mapping[str, Any], game_id: str, options: Mapping[str, Any], where: str) -> None:
    """``CheckpointError`` unless ``meta`` is for ``game_id`` under ``options`` and its observation version.

    Another rules version of the same game only warns: the observation is the same, the play may differ.
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

    # read_meta has checked both against the game (check_sizes)
    box = gym.spaces.Box(0.0, 1.0, tuple(meta["observation_shape"]), dtype=np.float32)
    return box, gym.spaces.Discrete(meta["num_actions"])


def _build_policy(p: Path, meta: Mapping[str, Any]) -> Any:
    """The network ``meta.json`` describes (sizes checked by ``read_meta``), then the tensors of ``weights.pt``."""
    spec = PolicySpec.from_json(meta["policy"], str(p))
    obs_space, act_space = _spaces(meta)
    try:
        policy_class, kwargs = spec.build(meta["game_id"], meta["options"])
        policy = policy_class(obs_space, act_space, lambda _: 0.0, **kwargs)
    except (ValueError, RuntimeError, TypeError, KeyError) as e:
        raise CheckpointError(f"{str(p)!r}: its network does not rebuild from meta.json: {e}") from None
    state = _weights(p, weights_limit(policy))
    try:
        policy.load_state_dict(state["policy"])
    except (ValueError, RuntimeError, TypeError, KeyError) as e:
        raise CheckpointError(f"{str(p)!r}: its network does not rebuild from meta.json: {e}") from None
    return policy


def weights_limit(policy: Any) -> int:
    """The most bytes a ``weights.pt`` of ``policy`` can need: its tensors, Adam's two moments of each, 1 MiB more."""
    tensors = sum(t.numel() * t.element_size() for t in policy.state_dict().values())
    return 3 * tensors + 2**20


def load_policy(
    path: str | Path,
    trust: bool = False,
    game_id: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> tuple[Any, dict[str, Any]]:
    """The policy network of a checkpoint and its meta (``{"format": "sb3"}`` for a trusted SB3 zip).

    With ``game_id``, the checkpoint must be for that game and ``options`` (``check_game``); an SB3 zip raises
    ``UnsafeCheckpointError`` unless ``trust``.
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
    policy = _build_policy(p, meta)
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


def is_loadable(path: str | Path) -> bool:
    """Whether ``path`` holds a complete checkpoint of this format (meta and tensors readable)."""
    try:
        p = resolve_path(path)
        read_meta(p)
        _weights(p)
    except (CheckpointError, FileNotFoundError):
        return False
    return True
