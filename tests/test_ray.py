"""The ray backend: the same results as local processes, checkpoints shipped as bytes, lost workers, sweeps on Ray.

These tests need the ``ray`` extra (``pip install -e '.[ray]'``; CI installs it). Without it they fail
with that instruction; deselect them with ``pytest -m 'not ray'``. One local Ray of 2 CPUs serves
the module (no dashboard), shut down at its end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import jericho_env
from experiments import evaluate, sweep
from experiments.play.backends import Backend, BackendError, map_chunks, ray_session
from experiments.play.batched_games import make_batch_tasks
from experiments.play.tournament import (
    AgentSpec,
    in_game_order,
    make_tasks,
    play_task,
    ray_payload,
    run_games,
    worker_from_payload,
)

pytestmark = pytest.mark.ray
ROOT = Path(__file__).resolve().parents[1]
RAY = Backend("ray")


@pytest.fixture(scope="module")
def ray_cpus() -> Iterator[int]:
    """A local Ray of 2 CPUs for the module (started as the commands start theirs, shut down at the end)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        pytest.fail("the ray tests need the ray extra: pip install -e '.[ray]' (or deselect: pytest -m 'not ray')")
    os.environ.pop("RAY_ADDRESS", None)  # ours, never a cluster named by the environment
    with ray_session(RAY, 2):
        yield 2


def results(folder: Path) -> dict[str, Any]:
    """A tournament's results.json without its config (which names the backend and the time taken)."""
    data = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    data.pop("config")
    return data


@pytest.mark.slow
@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_ray_and_local_write_the_same_results(game: str, tmp_path: Path, ray_cpus: int) -> None:
    specs = [AgentSpec("random", "random"), AgentSpec("greedy", "greedy")]
    kw: dict[str, Any] = {"deals": 6, "seed": 5, "plot": False, "quiet": True}
    evaluate.evaluate(game, specs, workers=1, out=str(tmp_path / "local"), **kw)
    evaluate.evaluate(game, specs, workers=2, out=str(tmp_path / "ray"), backend=RAY, **kw)
    local, on_ray = results(tmp_path / "local"), results(tmp_path / "ray")
    assert local == on_ray
    n = jericho_env.make(game).unwrapped.rules.info.num_players
    assert len(on_ray["games"]) == len(make_tasks(2, n, 6)) * n
    config = json.loads((tmp_path / "ray" / "results.json").read_text(encoding="utf-8"))["config"]
    assert config["backend"] == "ray"


@pytest.mark.slow
@pytest.mark.parametrize(("loop", "tasks"), [("sequential", 9), ("batched", 6)])
def test_ray_results_do_not_depend_on_how_the_tasks_are_cut(loop: str, tasks: int, ray_cpus: int) -> None:
    specs = [AgentSpec("random", "random"), AgentSpec("greedy", "greedy")]
    kw: dict[str, Any] = {"deals": 9, "seed": 2, "loop": loop, "batch": 4}  # batched: 2 arrangements x 3 chunks
    local = run_games("castles", specs, workers=2, **kw)
    for chunks in (1, 4, 9):
        seen: list[int] = []
        on_ray = run_games("castles", specs, backend=RAY, chunks=chunks, progress=seen.append, **kw)
        assert on_ray == local, chunks
        assert sum(seen) == len(local) and len(seen) == tasks  # the progress bar moves per task, to the end


@pytest.mark.slow
def test_the_command_line_starts_and_stops_its_own_ray(tmp_path: Path, ray_cpus: int) -> None:
    argv = ["castles", "--agents", "random", "greedy", "--deals", "4", "--seed", "9", "--no-plot", "--quiet"]
    assert evaluate.main([*argv, "--out", str(tmp_path / "local")]) == 0
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    cmd = [sys.executable, "-m", "experiments.evaluate", *argv, "--backend", "ray", "--workers", "1"]
    done = subprocess.run([*cmd, "--out", str(tmp_path / "ray")], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert results(tmp_path / "ray") == results(tmp_path / "local")


@pytest.mark.slow
def test_ppo_checkpoints_reach_the_workers_as_bytes(tmp_path: Path, ray_cpus: int) -> None:
    from agents.checkpoint import save_checkpoint
    from tests.test_checkpoint_safety import tiny_model

    path = save_checkpoint(tiny_model(), tmp_path / "tiny.zip")
    specs = [AgentSpec("greedy", "greedy"), AgentSpec("ppo", "ppo", {"path": str(path)})]
    local = run_games("castles", specs, deals=4, seed=1, batch=2)
    payload = ray_payload("castles", specs, 1, {})
    assert str(path) not in payload["json"] and list(payload["blobs"].values()) == [path.read_bytes()]
    path.unlink()  # the workers never read the head's file: it is gone before they start
    tasks = make_batch_tasks(2, 2, 4, 2)
    done = map_chunks(RAY, 2, "test-bytes", worker_from_payload, payload, play_task, tasks, chunks=2)
    assert in_game_order(tasks, [rec for recs in done for rec in recs]) == local


def test_agents_that_are_not_data_are_refused_before_anything_is_sent() -> None:
    specs = [AgentSpec("random", "random"), AgentSpec("odd", "random", {"seed": object()})]
    with pytest.raises(ValueError, match="sends agents as JSON arguments and checkpoint bytes"):
        ray_payload("castles", specs, 0, {})


# ---------------------------------------------------------------------------------------- lost workers
def descendants() -> list[tuple[int, bytes]]:
    """(pid, command line) of this process's descendants (Ray's workers are children of its raylet)."""
    parent: dict[int, int] = {}
    cmdline: dict[int, bytes] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                parent[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
                cmdline[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes()
            except (OSError, ValueError, IndexError):
                continue
    mine, grew = {os.getpid()}, True
    while grew:
        found = {pid for pid, ppid in parent.items() if ppid in mine} - mine
        mine |= found
        grew = bool(found)
    return [(pid, cmdline[pid]) for pid in mine - {os.getpid()}]


class Killer(threading.Thread):
    """Kills (SIGKILL) the first Ray worker process seen running a chunk of deals."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.killed: int | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            for pid, cmd in descendants():
                if cmd.startswith(b"ray::_run_chunk"):
                    os.kill(pid, signal.SIGKILL)
                    self.killed = pid
                    return
            time.sleep(0.005)


@pytest.mark.slow
def test_a_killed_worker_is_retried_and_the_table_is_whole(tmp_path: Path, ray_cpus: int) -> None:
    specs = [AgentSpec("random", "random"), AgentSpec("greedy", "greedy")]
    reference = run_games("castles", specs, deals=300, seed=4)  # local: the correct table
    killer = Killer()
    killer.start()
    try:
        records = run_games("castles", specs, deals=300, seed=4, backend=RAY, chunks=6)
    finally:
        killer.stop.set()
        killer.join()
    assert killer.killed is not None, "no worker was running a chunk to kill"
    assert records == reference and len(records) == 600


@pytest.mark.slow
def test_a_task_lost_for_good_is_a_clear_error_and_writes_no_table(tmp_path: Path, ray_cpus: int) -> None:
    specs = [AgentSpec("random", "random"), AgentSpec("greedy", "greedy")]
    killer = Killer()
    killer.start()
    out = tmp_path / "t"
    try:
        with pytest.raises(BackendError, match=r"a Ray task \(deals .* of random vs greedy\) was lost after 0 retries"):
            evaluate.evaluate("castles", specs, 300, out=str(out), quiet=True, backend=Backend("ray", retries=0))
    finally:
        killer.stop.set()
        killer.join()
    assert killer.killed is not None
    assert not (out / "results.json").exists() and not (out / "table.md").exists()


# -------------------------------------------------------------------------------------------------- sweeps
# small final tables, and 16 envs in one shard where castles' preset has 256
SMALL = ["--final-deals", "4", "--eval-every", "100000", "--snapshot-every", "100000", "--n-envs", "16",
         "--shards", "1"]  # fmt: skip


@pytest.mark.slow
def test_sweep_on_ray_writes_the_combined_table_and_a_rerun_skips_finished_trials(
    tmp_path: Path, ray_cpus: int, capsys: pytest.CaptureFixture[str]
) -> None:
    # `experiments.sweep castles --seeds 0,1 --timesteps 512 --backend ray`, with small final tables (as test_sweep.py)
    out = tmp_path / "sweep"
    argv = ["castles", "--seeds", "0,1", "--timesteps", "512", "--backend", "ray", "--out", str(out), "--quiet"]
    assert sweep.main([*argv, "--", *SMALL]) == 0
    data = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    assert [t["trial"] for t in data["trials"]] == ["seed=0", "seed=1"]
    for t in data["trials"]:
        assert t["status"] == "done" and set(t["vs"]) == {"random", "greedy"}
        assert t["vs"]["greedy"]["games"] == 8  # 4 deals, both seats
        table = json.loads((out / t["trial"] / "tournament" / "results.json").read_text(encoding="utf-8"))
        assert table["config"]["backend"] == "ray" and table["config"]["seed"] == t["seed"]
        config = json.loads((out / t["trial"] / "config.json").read_text(encoding="utf-8"))
        assert config["timesteps"] == 512 and config["seed"] == t["seed"]
    assert data["configs"][0]["seeds_done"] == 2
    md = (out / "sweep.md").read_text(encoding="utf-8")
    assert "| seed=1 | done |" in md and "| default | 2 / 2 |" in md
    stamp = (out / "seed=0" / "final.zip").stat().st_mtime_ns
    capsys.readouterr()
    assert sweep.main([*argv, "--", *SMALL]) == 0
    assert "2 trials, 2 finished already" in capsys.readouterr().out
    assert (out / "seed=0" / "final.zip").stat().st_mtime_ns == stamp
