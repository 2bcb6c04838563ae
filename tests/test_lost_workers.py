"""A worker killed (SIGKILL) or stopped (SIGSTOP) in the middle of a command's work ends the command.

Training on shards, a tournament and expert iteration's games: each command exits within bounded time with
one line naming the worker and how it ended, leaves none of its workers behind, and a training or expert
iteration run resumes from what it saved. A stopped worker is found silent after
``JERICHO_WORKER_SILENCE_SECONDS`` (two seconds here) and killed.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from experiments import evaluate, train
from jericho_env import processes
from jericho_env.processes import Worker
from tests.helpers import alive

SIGNALS = {"SIGKILL": "was killed by SIGKILL", "SIGSTOP": "stopped answering"}
BOUND = 60  # seconds from the signal to the command's end, at most (a checkpoint is saved on the way)


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[Worker]:
    """Every worker started during the test, in order; a worker found silent after two seconds."""
    made: list[Worker] = []
    real = Worker.__init__

    def init(self: Worker, *args: Any, **kwargs: Any) -> None:
        real(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(Worker, "__init__", init)
    monkeypatch.setenv(processes.SILENCE_ENV, "2")
    return made


class Signal(threading.Thread):
    """Sends ``name`` (a signal's name) to the first worker that ``pick`` chooses, polling every 20 ms."""

    def __init__(self, name: str, pick: Callable[[], Worker | None]) -> None:
        super().__init__(daemon=True)
        self.signal, self.pick = getattr(signal, name), pick
        self.worker: Worker | None = None
        self.at = 0.0
        self.start()

    def run(self) -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            worker = self.pick()
            if worker is not None:
                os.kill(worker.pid, self.signal)
                self.worker, self.at = worker, time.monotonic()
                return
            time.sleep(0.02)


def at_work(workers: list[Worker], named: str, cpu: float = 0.3) -> Worker | None:
    """The first of ``workers`` whose name starts with ``named`` and which has used ``cpu`` seconds of CPU."""
    for w in workers:
        if w.name.startswith(named) and alive(w.pid) and (processes.cpu_seconds(w.pid) or 0.0) >= cpu:
            return w
    return None


def ends_naming_it(
    main: Callable[[list[str]], int], argv: list[str], hit: Signal, made: list[Worker], capsys: Any
) -> str:
    """Run the command, which must exit 2 within ``BOUND`` seconds of the signal, naming the worker; its stderr."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    ended = time.monotonic()
    hit.join(1)
    assert hit.worker is not None, "the command ended before a worker could be signalled"
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and ended - hit.at < BOUND, (exit_.value.code, ended - hit.at, err)
    said = SIGNALS[signal.Signals(hit.signal).name]
    line = err.strip().splitlines()[-1]
    assert f"error: {hit.worker.name} (pid {hit.worker.pid}) {said}" in line, err
    assert not [w.name for w in made if alive(w.pid)], "a worker outlived the command"
    return err


@pytest.mark.slow
@pytest.mark.parametrize("sig", SIGNALS)
def test_a_lost_shard_worker_ends_training_naming_it_and_the_run_resumes(
    sig: str, started: list[Worker], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    argv = ["castles", "--out", str(run), "--timesteps", "1024", "--n-envs", "4", "--n-steps", "32", "--shards", "2"]
    argv += ["--checkpoint-every", "128", "--snapshot-every", "256", "--eval-every", "100000", "--final-deals", "1"]
    argv += ["--workers", "1", "--net", "16,16", "--quiet"]
    latest = run / "checkpoints" / "latest.zip"
    hit = Signal(sig, lambda: at_work(started, "shard", 0.0) if latest.is_file() else None)
    ends_naming_it(train.main, argv, hit, started, capsys)
    saved = json.loads((run / "checkpoints" / "state.json").read_text())["num_timesteps"]
    assert 128 <= saved < 1024
    assert train.main(["castles", "--resume", str(run), "--quiet", "--final-deals", "1"]) == 0
    assert json.loads((run / "checkpoints" / "state.json").read_text())["num_timesteps"] >= 1024


@pytest.mark.parametrize("sig", SIGNALS)
def test_a_lost_tournament_worker_ends_the_tournament_naming_it_and_its_games(
    sig: str, started: list[Worker], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "evaluate"
    argv = ["castles", "--agents", "greedy", "ismcts=30", "--deals", "60", "--workers", "2", "--sequential"]
    argv += ["--no-plot", "--quiet", "--out", str(out)]
    hit = Signal(sig, lambda: at_work(started, "tournament worker"))
    err = ends_naming_it(evaluate.main, argv, hit, started, capsys)
    assert "while playing deals " in err and "greedy vs ismcts" in err
    assert not (out / "results.json").exists(), "no table of a tournament cut short"


@pytest.mark.slow
@pytest.mark.parametrize("sig", SIGNALS)
def test_a_lost_expert_iteration_worker_ends_the_run_naming_it_and_the_run_resumes(
    sig: str, started: list[Worker], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from experiments import exit as exit_cli
    from tests.test_exit import TINY, fresh_network

    ppo = fresh_network("castles", {}, "scratch", tmp_path)
    out = tmp_path / "run"
    argv = ["castles", "--start", "scratch", "--ppo", str(ppo), "--out", str(out), *TINY]
    argv += ["--iterations", "2", "--games", "8", "--games-at-once", "1", "--simulations", "12", "--workers", "2"]
    state = out / "exit.json"
    seen: list[int] = []  # how many workers had started when the first iteration was saved

    def second_iterations_worker() -> Worker | None:
        if not state.is_file():
            return None
        seen[:] = seen or [len(started)]
        return at_work(started[seen[0] :], "expert-iteration worker", 0.1)

    hit = Signal(sig, second_iterations_worker)
    err = ends_naming_it(exit_cli.main, argv, hit, started, capsys)
    assert "while playing the games of seeds" in err
    assert json.loads(state.read_text())["iterations_done"] == 1
    cfg = exit_cli.ExitConfig.saved(out, "castles")  # --resume, without the final table
    exit_cli.run_exit(cfg, out, resume=True, quiet=True)
    assert json.loads(state.read_text())["iterations_done"] == 2
