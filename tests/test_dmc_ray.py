"""Deep Monte-Carlo's actors on Ray (``experiments.dmc --backend ray``): the same positions, counters that add up.

These tests need the ``ray`` extra (``pip install -e '.[ray]'``), as ``tests/test_ray.py``'s: without it they
fail with that instruction; deselect them with ``pytest -m 'not ray'``. One local Ray of 2 CPUs serves the
module (no dashboard), shut down at its end.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")

import agents
from agents.dmc import build_network
from experiments import dmc as dmc_cli
from experiments.play.backends import Backend, ray_session
from experiments.training.dmc import ray_actors as dmc_ray
from experiments.training.dmc.actors import Actors, ReplayBuffer
from experiments.training.dmc.config import make_config
from experiments.training.dmc.ray_actors import ActorWorker, network_state

pytestmark = pytest.mark.ray
TINY = ["--positions", "3000", "--envs", "32", "--rounds", "8", "--buffer", "4000", "--batch-size", "128"]
TINY += ["--net", "32", "--eval-every", "2000", "--eval-deals", "2", "--quiet"]


@pytest.fixture(scope="module")
def ray_cpus() -> Iterator[int]:
    """A local Ray of 2 CPUs for the module (started as the command starts its own, shut down at the end)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        pytest.fail("the ray tests need the ray extra: pip install -e '.[ray]' (or deselect: pytest -m 'not ray')")
    os.environ.pop("RAY_ADDRESS", None)  # ours, never a cluster named by the environment
    with ray_session(Backend("ray"), 2):
        yield 2


def _labelled(buffer: ReplayBuffer) -> np.ndarray:
    """Which of the buffer's positions (by serial, no wrap) have a target."""
    return ~np.isnan(buffer.targets[: buffer.added])


@pytest.mark.parametrize(
    ("game", "options", "prior"),
    [("castles", {}, "none"), ("walls", {"num_players": 3}, "none"), ("walls", {"num_players": 3}, "greedy-scores")],
)
def test_a_remote_actor_hands_over_what_the_local_actors_label(game: str, options: dict[str, Any], prior: str) -> None:
    # The local actors' targets are the movers' returns (tests/test_dmc.py); an ActorWorker with the same seed,
    # given the network's weights, must hand over exactly the positions they label, phase by phase.
    cfg = make_config(game, options, envs=8, epsilon=0.3, net="16", prior=prior)
    network = build_network(game, options, "16", "game", prior)
    buffer = ReplayBuffer(100_000, network.stored_width)
    local = Actors(cfg, buffer, [5, 0])
    worker = ActorWorker(cfg, [5, 0])
    plan, weights = network.plan(), network_state(network)
    handed = 0
    for _ in range(40):
        before = _labelled(buffer)
        positions, steps, games = local.positions, local.steps, local.games
        local.play(plan, 5)
        after = _labelled(buffer)
        new = np.flatnonzero(after & ~np.pad(before, (0, len(after) - len(before))))
        phase = worker.play(weights, 5)
        np.testing.assert_array_equal(phase["obs"], buffer.obs[new])
        np.testing.assert_array_equal(phase["actions"], buffer.actions[new])
        np.testing.assert_array_equal(phase["targets"], buffer.targets[new])
        assert (phase["positions"], phase["steps"], phase["games"]) == (
            local.positions - positions,
            local.steps - steps,
            local.games - games,
        )
        handed += len(new)
    assert handed > 100 and local.games > 8
    held = buffer.added - int(_labelled(buffer).sum())  # positions of games still running stay in the actor
    assert sum(len(s) for s in worker.staging.serials) == held


@pytest.mark.slow
def test_the_prior_is_built_in_the_ray_worker_from_the_weights(ray_cpus: int) -> None:
    import ray

    options = {"num_players": 3}
    network = build_network("walls", options, "16", "game", "greedy-scores")
    cfg = make_config("walls", options, envs=8, epsilon=0.3, net="16", prior="greedy-scores")
    args = (cfg, [3, 1])
    remote = ray.remote(ActorWorker).options(num_cpus=1).remote(*args)
    try:
        on_ray = [ray.get(remote.play.remote(network_state(network), 60)) for _ in range(3)]
    finally:
        ray.kill(remote)
    worker = ActorWorker(*args)
    here = [worker.play(network_state(network), 60) for _ in range(3)]
    assert sum(len(p["targets"]) for p in here) > 0  # games ended: positions were handed over
    for a, b in zip(on_ray, here, strict=True):
        assert a["positions"] == b["positions"] > 0
        for key in ("obs", "actions", "targets"):
            np.testing.assert_array_equal(a[key], b[key])


@pytest.mark.slow
def test_the_command_on_ray_trains_and_its_counters_add_up(
    tmp_path: Path, ray_cpus: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    phases: list[dict[str, Any]] = []
    get = dmc_ray.RayActors._get

    def recording_get(self: Any, ref: Any, i: int) -> dict[str, Any]:
        phase = get(self, ref, i)
        phases.append({**phase, "actor": i})
        return phase

    monkeypatch.setattr(dmc_ray.RayActors, "_get", recording_get)
    out = tmp_path / "run"
    argv = ["castles", *TINY, "--lam", "1", "--backend", "ray", "--actors", "2", "--out", str(out)]
    assert dmc_cli.main(argv) == 0  # --lam 1: Monte-Carlo targets, each a game's return
    stats = json.loads((out / "training.json").read_text())
    assert stats["positions_generated"] >= 3000 and stats["positions_learned"] > 0
    assert stats["positions_generated"] == sum(p["positions"] for p in phases)
    assert stats["agent_steps"] == sum(p["steps"] for p in phases) == len(phases) * 32 * 8
    assert stats["games"] == sum(p["games"] for p in phases)
    assert stats["seconds_actor"] == pytest.approx(sum(p["seconds"] for p in phases))
    assert {p["actor"] for p in phases} <= {0, 1}  # (an actor still starting may send none in so short a run)
    labelled = sum(len(p["targets"]) for p in phases)
    assert 0 < labelled <= stats["positions_generated"]
    targets = np.concatenate([p["targets"] for p in phases])
    assert set(np.unique(targets).tolist()) <= {-1.0, 0.0, 1.0}  # castles' returns
    assert stats["sessions"][-1]["backend"] == "ray" and stats["sessions"][-1]["actors"] == 2
    assert [e["opponent"] for e in stats["evals"]] == ["greedy", "greedy"]
    assert json.loads((out / "config.json").read_text())["backend"] == "ray"
    agent = agents.make("dmc", "castles", path=str(out / "final.zip"))
    assert agent.meta["training"]["stats"]["positions_generated"] == stats["positions_generated"]

    with pytest.raises(SystemExit) as refused:  # a Ray run resumes on Ray
        dmc_cli.main(["castles", "--resume", str(out), "--backend", "local", "--quiet"])
    assert refused.value.code == 2
    phases.clear()
    assert dmc_cli.main(["castles", "--resume", str(out), "--positions", "4500", "--actors", "1", "--quiet"]) == 0
    after = json.loads((out / "training.json").read_text())
    assert after["positions_generated"] == stats["positions_generated"] + sum(p["positions"] for p in phases) >= 4500
    assert {p["actor"] for p in phases} == {0} and after["sessions"][-1]["actors"] == 1
    assert json.loads((out / "config.json").read_text())["backend"] == "ray"  # kept with the new budget


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--backend", "ray", "--actors", "0"], "--actors: must be at least 1"),
        (["--ray-address", "127.0.0.1:6379"], "is for --backend ray"),
        (["--actors", "2"], "is for --backend ray"),
    ],
)
def test_bad_backend_flags_exit_2_in_one_line(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(SystemExit) as exit_:  # any other exception escapes main: a traceback, and the test fails
        dmc_cli.main(["castles", *argv])
    err = capsys.readouterr().err
    assert exit_.value.code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines and "error:" in lines[-1] and says in lines[-1] and "Traceback" not in err
    assert len([line for line in lines if "error" in line]) == 1
