"""Bad input, door 4: checkpoints. Loading never runs pickled code by default, and a misfit is named.

The payload tests plant a pickle that creates a marker file when unpickled, in a Stable-Baselines3 zip
(its ``data`` file) and in the safe format's ``weights.pt``; the default loading paths (``agents.make``,
``evaluate ppo=...``, ``train --init``) refuse both, saying why, and the marker never appears. Trusting
the SB3 zip does run it: the payload is live, so the refusals above are what protects.
"""

from __future__ import annotations

import base64
import io
import json
import pickle
import re
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch

import agents
import jericho_env
from agents.checkpoint import (
    CheckpointError,
    CheckpointMeta,
    PolicySpec,
    UnsafeCheckpointError,
    attach_meta,
    load_policy,
    save_checkpoint,
)
from agents.nets import build_policy
from experiments import evaluate, train
from experiments.training.ppo.model import load_model_for_resume

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "checkpoints_v0"


class Payload:
    """Unpickling it opens (creates) the marker file: harmless, and visible."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.marker, "w"))


def sb3_with_payload(tmp_path: Path, marker: Path) -> Path:
    """The castles fixture (an SB3 zip) with its ``policy_class`` replaced by the payload."""
    src = zipfile.ZipFile(FIXTURES / "castles.zip")
    data = json.loads(src.read("data"))
    data["policy_class"] = {":type:": "<class 'abc.ABCMeta'>", ":serialized:": base64.b64encode(
        pickle.dumps(Payload(marker))).decode()}  # fmt: skip
    out = tmp_path / "planted.zip"
    with zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            dst.writestr(name, json.dumps(data) if name == "data" else src.read(name))
    return out


def tiny_model(game: str = "castles", **options: Any) -> Any:
    from sb3_contrib import MaskablePPO

    policy, kwargs = build_policy("mlp", game, options, "16,16")
    model = MaskablePPO(
        policy,
        jericho_env.single_agent(game, **options),
        n_steps=64,
        batch_size=32,
        n_epochs=1,
        policy_kwargs=kwargs,
        seed=0,
        device="cpu",
    )
    hyper = {"learning_rate": 3e-4, "lr_schedule": "constant", "seed": 0, "n_steps": 64, "batch_size": 32}
    hyper.update(n_epochs=1, gamma=0.99, gae_lambda=0.95, ent_coef=0.01)
    meta = CheckpointMeta(game, dict(options), PolicySpec("mlp", "16,16"), {"hyperparameters": hyper})
    return attach_meta(model, meta)


@pytest.fixture(scope="module")
def safe_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("safe") / "castles.zip"
    save_checkpoint(tiny_model(), path)
    return path


def rewrite(src: Path, dst: Path, change: Callable[[dict[str, bytes]], None]) -> Path:
    """A copy of the zip ``src`` with its members changed by ``change`` (name -> bytes)."""
    with zipfile.ZipFile(src) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    change(members)
    with zipfile.ZipFile(dst, "w") as zf:
        for name, raw in members.items():
            zf.writestr(name, raw)
    return dst


def edit_meta(**fields: Any) -> Callable[[dict[str, bytes]], None]:
    def change(members: dict[str, bytes]) -> None:
        meta = json.loads(members["meta.json"])
        meta.update(fields)
        members["meta.json"] = json.dumps(meta).encode()

    return change


# ------------------------------------------------------------------------------------------- the payload
def test_a_planted_pickle_in_an_sb3_zip_is_not_run_by_the_default_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "PWNED"
    planted = sb3_with_payload(tmp_path, marker)
    with pytest.raises(UnsafeCheckpointError, match="Stable-Baselines3 zip: loading it unpickles Python objects"):
        agents.make("ppo", "castles", path=str(planted))
    assert not marker.exists()
    with pytest.raises(SystemExit) as e:
        evaluate.main(["castles", "--agents", "random", f"ppo={planted}", "--deals", "1", "--out", str(tmp_path / "e")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "--trust-checkpoint" in err and "unpickles" in err
    assert not marker.exists() and not (tmp_path / "e").exists()
    with pytest.raises(SystemExit) as e:
        train.main(["castles", "--init", str(planted), "--timesteps", "64", "--quiet", "--out", str(tmp_path / "t")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "--trust-checkpoint" in err
    assert not marker.exists() and not (tmp_path / "t").exists()
    # the payload is live: trusting the file runs it (then SB3 fails on what it returned)
    with pytest.raises(CheckpointError):
        agents.make("ppo", "castles", path=str(planted), trust=True)
    assert marker.exists()


def test_a_pickle_in_weights_pt_is_refused_even_when_trusted(tmp_path: Path, safe_zip: Path) -> None:
    marker = tmp_path / "PWNED"
    raw = io.BytesIO()
    torch.save({"policy": Payload(marker)}, raw)
    bad = rewrite(safe_zip, tmp_path / "bad.zip", lambda m: m.__setitem__("weights.pt", raw.getvalue()))
    for trust in (False, True):
        with pytest.raises(UnsafeCheckpointError, match="holds more than tensors and numbers, so it is refused"):
            load_policy(bad, trust=trust)
        with pytest.raises(UnsafeCheckpointError):
            agents.make("ppo", "castles", path=str(bad), trust=trust)
    assert not marker.exists()


# ------------------------------------------------------------------------------------------- damaged or foreign
SHORT_META = b'{"format": "jericho-env checkpoint", "format_version": 1}'
MALFORMED: list[tuple[str, Callable[[dict[str, bytes]], None], str]] = [
    ("policy not in the allow-list", edit_meta(policy={"name": "os.system"}), "names the policy 'os.system'"),
    ("policy arguments", edit_meta(policy={"name": "mlp", "net": 7}), "policy arguments are malformed"),
    ("unknown policy field", edit_meta(policy={"name": "mlp", "cls": "x"}), "must be a dict of name"),
    ("newer format", edit_meta(format_version=99), "format version 99"),
    ("other format", edit_meta(format="something else"), "does not describe a jericho-env checkpoint"),
    ("meta not JSON", lambda m: m.__setitem__("meta.json", b"{nope"), "meta.json is unreadable"),
    ("meta lacks a field", lambda m: m.__setitem__("meta.json", SHORT_META), "lacks game_id"),
    ("no weights", lambda m: m.pop("weights.pt"), "has no weights.pt"),
    ("weights damaged", lambda m: m.__setitem__("weights.pt", b"\x00" * 40), "weights.pt is damaged"),
    ("weights not a dict", lambda m: m.__setitem__("weights.pt", _torch_bytes([1, 2])), "must hold a dict"),
    ("network size", edit_meta(policy={"name": "mlp", "net": "32,32"}), "does not rebuild from meta.json"),
    ("observation shape", edit_meta(observation_shape=[3, 4]), "observation_shape must be [size]"),
    ("action count", edit_meta(num_actions=0), "num_actions must be a positive int"),
    ("no meta", lambda m: m.pop("meta.json"), "not a PPO checkpoint: no meta.json"),
]


def _torch_bytes(obj: Any) -> bytes:
    raw = io.BytesIO()
    torch.save(obj, raw)
    return raw.getvalue()


@pytest.mark.parametrize(("what", "change", "message"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_checkpoint_is_refused_naming_the_problem(
    tmp_path: Path, safe_zip: Path, what: str, change: Callable[[dict[str, bytes]], None], message: str
) -> None:
    bad = rewrite(safe_zip, tmp_path / "bad.zip", change)
    with pytest.raises(CheckpointError) as err:
        agents.make("ppo", "castles", path=str(bad))
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "not a zip archive"), (b"not a zip at all", "not a zip archive"), ("half", "PPO checkpoint")],
)
def test_an_empty_or_cut_short_file_is_refused(tmp_path: Path, safe_zip: Path, content: Any, message: str) -> None:
    raw = safe_zip.read_bytes()
    bad = tmp_path / "cut.zip"
    bad.write_bytes(raw[: len(raw) // 2] if content == "half" else content)
    with pytest.raises(CheckpointError, match=message):
        agents.make("ppo", "castles", path=str(bad))


def test_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no checkpoint at"):
        agents.make("ppo", "castles", path=str(tmp_path / "none.zip"))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"small_deck": True}, "this game has small_deck=True"),
        ({"reversed_order": True}, "this game has reversed_order=True"),
        ({"ranks": 13}, "this game has ranks=13"),
    ],
)
def test_other_game_options_are_named_on_load(safe_zip: Path, options: dict[str, Any], message: str) -> None:
    """The issue: a default castles checkpoint with small_deck died inside sb3; with reversed_order it played."""
    with pytest.raises(CheckpointError, match=message):
        agents.make("ppo", "castles", path=str(safe_zip), **options)


def test_other_game_and_observation_version_are_refused_and_another_rules_version_warns(
    tmp_path: Path, safe_zip: Path
) -> None:
    with pytest.raises(CheckpointError, match="was trained on 'castles', not 'grid'"):
        agents.make("ppo", "grid", path=str(safe_zip))
    newer = rewrite(safe_zip, tmp_path / "obs.zip", edit_meta(observation_version=5))
    with pytest.raises(CheckpointError, match="observations of version 5; this version of jericho-env gives version 0"):
        agents.make("ppo", "castles", path=str(newer))
    older = rewrite(safe_zip, tmp_path / "v.zip", edit_meta(game_version=-1))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        agent = agents.make("ppo", "castles", path=str(older))
    assert agent.act is not None and any("castles-v-1; this is castles-v0" in str(w.message) for w in seen)


# ------------------------------------------------------------------------------------------- what loads
def test_the_safe_format_plays_the_same_moves_and_resumes_with_its_optimizer(tmp_path: Path) -> None:
    model = tiny_model("walls", num_players=3)
    model.learn(128)
    path = save_checkpoint(model, tmp_path / "w.zip")
    with zipfile.ZipFile(path) as zf:
        assert sorted(zf.namelist()) == ["meta.json", "weights.pt"]
        meta = json.loads(zf.read("meta.json"))
    assert meta["game_id"] == "walls" and meta["game_version"] == 1 and meta["observation_version"] == 0
    assert meta["options"] == {"num_players": 3, "obs_version": 0} and meta["num_actions"] == 56
    assert meta["training"]["num_timesteps"] == model.num_timesteps
    policy, _ = load_policy(path, game_id="walls", options={"num_players": 3})
    obs = torch.as_tensor(np.random.default_rng(0).random((5, meta["observation_shape"][0]), dtype=np.float32))
    with torch.no_grad():
        assert torch.equal(policy.get_distribution(obs).distribution.logits,
                           model.policy.get_distribution(obs).distribution.logits)  # fmt: skip
    resumed = load_model_for_resume(path, jericho_env.single_agent("walls", num_players=3))
    assert resumed.num_timesteps == model.num_timesteps and resumed.n_steps == 64 and resumed.ent_coef == 0.01
    a, b = model.policy.optimizer.state_dict(), resumed.policy.optimizer.state_dict()
    assert a["state"] and all(torch.equal(a["state"][k]["exp_avg"], b["state"][k]["exp_avg"]) for k in a["state"])
    with pytest.raises(CheckpointError, match="this run's env gives"):
        load_model_for_resume(path, jericho_env.single_agent("walls", num_players=4))


def test_a_checkpoint_without_hyperparameters_does_not_resume(tmp_path: Path) -> None:
    model = tiny_model()
    path = save_checkpoint(model, tmp_path / "m.zip", CheckpointMeta("castles", {}, PolicySpec("mlp", "16,16")))
    with pytest.raises(CheckpointError, match="records no training hyperparameters"):
        load_model_for_resume(path, jericho_env.single_agent("castles"))


# ------------------------------------------------------------------------------------------- sizes, values, pickles
def edit_weights(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, bytes]], None]:
    """A zip change that loads weights.pt (weights only), changes the state and saves it again."""

    def apply(members: dict[str, bytes]) -> None:
        state = torch.load(io.BytesIO(members["weights.pt"]), weights_only=True)
        change(state)
        members["weights.pt"] = _torch_bytes(state)

    return apply


def _first_float(state: dict[str, Any]) -> torch.Tensor:
    return next(t for t in state["policy"].values() if t.is_floating_point())


@pytest.fixture
def nothing_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building any network fails the test: a refusal must come before anything is allocated."""

    def build(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a network was built from an unchecked meta.json")

    monkeypatch.setattr(PolicySpec, "build", build)


SIZES: list[tuple[str, dict[str, Any], str]] = [
    ("a billion actions", {"num_actions": 10**9}, "num_actions must be a positive int, castles's action count"),
    ("actions as a float", {"num_actions": 28.0}, "num_actions must be a positive int"),
    ("a billion observations", {"observation_shape": [10**9]}, "observation_shape must be [size], castles's"),
    ("a layer too wide", {"policy": {"name": "mlp", "net": "16,100000000"}}, "of at most 4096 units each"),
    ("too many layers", {"policy": {"name": "mlp", "net": ",".join(["16"] * 40)}}, "at most 16 layers"),
    ("a size argument", {"policy": {"name": "mlp", "net": "16", "sizes": {"channels": 10**6}}}, "takes no channels"),
    ("a prior weight of nan", {"policy": {"name": "mlp", "net": "16,16", "prior_weight": float("nan")}}, "finite"),
    ("unknown prior", {"policy": {"name": "mlp", "net": "16,16", "prior": "oracle"}}, "--prior takes one of"),
    ("options of no game", {"options": {"ranks": 7}}, "names a game this version cannot make"),
    ("no such game", {"game_id": "chess"}, "names a game this version cannot make"),
]


@pytest.mark.parametrize(("what", "fields", "message"), SIZES, ids=[s[0] for s in SIZES])
def test_meta_json_sizes_are_checked_before_anything_is_built(
    tmp_path: Path, safe_zip: Path, nothing_built: None, what: str, fields: dict[str, Any], message: str
) -> None:
    bad = rewrite(safe_zip, tmp_path / "bad.zip", edit_meta(**fields))
    with pytest.raises(CheckpointError) as err:
        load_policy(bad)  # no game given (train --init): the game meta.json names sets the sizes
    assert message in str(err.value)
    with pytest.raises(CheckpointError):
        agents.make("ppo", "castles", path=str(bad))


def test_a_grid_network_size_argument_is_bounded(nothing_built: None) -> None:
    with pytest.raises(CheckpointError, match=r"channels must be an int in 1..4096"):
        PolicySpec.from_json({"name": "grid-conv", "net": "16", "sizes": {"channels": 10**6}}, "x.zip")
    with pytest.raises(CheckpointError, match=r"layers must be an int in 1..16"):
        PolicySpec.from_json({"name": "grid-conv", "net": "16", "sizes": {"layers": True}}, "x.zip")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_weights_holding_nan_or_inf_are_refused_on_every_loading_path(
    tmp_path: Path, safe_zip: Path, capsys: pytest.CaptureFixture[str], value: float
) -> None:
    from agents.ppo import start_from

    bad = rewrite(safe_zip, tmp_path / "nan.zip", edit_weights(lambda s: _first_float(s).view(-1)[0].fill_(value)))
    with pytest.raises(CheckpointError, match=r"holds nan or inf values .in policy[.]"):
        load_policy(bad)
    with pytest.raises(CheckpointError, match="nan or inf"):
        agents.make("ppo", "castles", path=str(bad))
    with pytest.raises(CheckpointError, match="nan or inf"):  # train --init copies the weights this way
        start_from(tiny_model(), bad)
    with pytest.raises(CheckpointError, match="nan or inf"):
        load_model_for_resume(bad, jericho_env.single_agent("castles"))


def test_an_optimizer_state_holding_nan_does_not_resume(tmp_path: Path, safe_zip: Path) -> None:
    def poison(state: dict[str, Any]) -> None:
        moments = state["optimizer"]["state"]
        next(iter(moments.values()))["exp_avg"].view(-1)[0] = float("nan")

    model = tiny_model()
    model.learn(64)  # Adam's moments exist once it has stepped
    path = save_checkpoint(model, tmp_path / "stepped.zip")
    bad = rewrite(path, tmp_path / "bad.zip", edit_weights(poison))
    with pytest.raises(CheckpointError, match=r"nan or inf values .in optimizer.state"):
        load_model_for_resume(bad, jericho_env.single_agent("castles"))


class RemoveMarker:
    """Unpickling it would delete the marker file (an ``os`` global): harmless, and visible."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[Any, ...]:
        import os

        return (os.remove, (self.marker,))


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")  # torch's note on the hand-written pickles
@pytest.mark.parametrize("how", ["torch.save", "pickle protocol 2", "pickle protocol 4", "pickle protocol 5"])
def test_every_refused_pickle_in_weights_pt_is_reported_as_unsafe(tmp_path: Path, safe_zip: Path, how: str) -> None:
    marker = tmp_path / "MARKER"
    marker.write_text("still here")
    payload = {"policy": RemoveMarker(marker)}
    raw = _torch_bytes(payload) if how == "torch.save" else pickle.dumps(payload, protocol=int(how[-1]))
    bad = rewrite(safe_zip, tmp_path / "bad.zip", lambda m: m.__setitem__("weights.pt", raw))
    for trust in (False, True):
        with pytest.raises(UnsafeCheckpointError) as err:
            load_policy(bad, trust=trust)
        assert "refused as unsafe" in str(err.value) and "damaged" not in str(err.value)
    assert "posix.remove" in str(err.value) or "os.remove" in str(err.value)  # the global, named
    assert marker.exists()


def test_damaged_weights_are_not_called_unsafe(tmp_path: Path, safe_zip: Path) -> None:
    with zipfile.ZipFile(safe_zip) as zf:
        good = zf.read("weights.pt")
    inner = zipfile.ZipFile(io.BytesIO(good))
    pkl = next(n for n in inner.namelist() if n.endswith("data.pkl"))

    def cut_pickle(members: dict[str, bytes]) -> None:
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as z:
            for n in inner.namelist():
                data = inner.read(n)
                z.writestr(n, data[: len(data) // 2] if n == pkl else data)
        members["weights.pt"] = out.getvalue()

    for change in (cut_pickle, lambda m: m.__setitem__("weights.pt", b"\x00" * 40)):
        bad = rewrite(safe_zip, tmp_path / "bad.zip", change)
        with pytest.raises(CheckpointError, match=r"weights.pt is damaged") as err:
            load_policy(bad)
        assert not isinstance(err.value, UnsafeCheckpointError)


def test_weights_pt_larger_than_its_network_can_need_is_refused_unread(tmp_path: Path, safe_zip: Path) -> None:
    def pad(state: dict[str, Any]) -> None:
        state["padding"] = torch.zeros(2**20)  # 4 MiB of zeros: a few KB once deflated

    bad = rewrite(safe_zip, tmp_path / "big.zip", edit_weights(pad))
    with pytest.raises(CheckpointError, match=r"more than the .* that the network meta.json describes can need"):
        load_policy(bad)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("gamma", float("nan"), "gamma must be a number in 0..1"),
        ("n_steps", 10**12, "n_steps must be an int in 1..2**24"),
        ("batch_size", True, "batch_size must be an int"),
        ("learning_rate", -1.0, "learning_rate must be a finite number > 0"),
        ("seed", -1, "seed must be null or an int in 0..2**63-1"),
    ],
)
def test_resumed_hyperparameters_are_checked_before_the_model_is_built(
    tmp_path: Path, safe_zip: Path, key: str, value: Any, message: str
) -> None:
    def change(members: dict[str, bytes]) -> None:
        meta = json.loads(members["meta.json"])
        meta["training"]["hyperparameters"][key] = value
        members["meta.json"] = json.dumps(meta).encode()

    bad = rewrite(safe_zip, tmp_path / "h.zip", change)
    with pytest.raises(CheckpointError, match=re.escape(message)):
        load_model_for_resume(bad, jericho_env.single_agent("castles"))


def test_a_rollout_buffer_larger_than_memory_is_refused() -> None:
    from experiments.training.ppo.config import physical_memory
    from experiments.training.ppo.model import check_rollout_memory

    memory = physical_memory()
    assert memory is not None  # Linux, as CI runs
    check_rollout_memory(64, 4, 100, 28, "small.zip")
    with pytest.raises(CheckpointError, match=r"n_steps=16777216 with 64 env.s. needs a rollout buffer of"):
        check_rollout_memory(2**24, 64, 8731, 2000, "huge.zip")
