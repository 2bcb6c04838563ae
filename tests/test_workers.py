"""Worker processes (``jericho_env.processes``): how they start, every wait on one bounded, none left behind."""

from __future__ import annotations

import multiprocessing as mp
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jericho_env import processes
from jericho_env.processes import WorkerLostError, WorkerPool
from tests.helpers import alive, ends_within

ROOT = Path(__file__).resolve().parent.parent
METHODS = [m for m in ("forkserver", "spawn", "fork") if m in mp.get_all_start_methods()]


# the tasks, at module level: a worker started by forkserver or spawn imports them from here
def square(x: int) -> int:
    return x * x


def fail(x: int) -> int:
    raise KeyError(f"no item {x} here")


def end_myself(how: str) -> None:
    """A worker that dies in the middle of its task, or stops there (SIGSTOP) and never answers."""
    if how == "exit":
        os._exit(3)
    os.kill(os.getpid(), {"kill": signal.SIGKILL, "stop": signal.SIGSTOP}[how])
    time.sleep(60)


def spin(seconds: float) -> float:
    """Compute for ``seconds`` of CPU time: a busy worker, never silent."""
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass
    return seconds


def games_here(_: object) -> tuple[str, ...]:
    from jericho_env.registry import known_game_ids

    return known_game_ids()


def remember(value: int) -> None:
    global _remembered
    _remembered = value


_remembered = 0


def remembered(x: int) -> int:
    return _remembered + x


def refuse_to_start() -> None:
    raise OSError("the table is not there")


@pytest.mark.parametrize("method", METHODS)
def test_a_pool_gives_every_result_in_order_on_every_start_method(method: str) -> None:
    with WorkerPool(2, remember, (100,), name="test worker", start_method=method) as pool:
        assert list(pool.imap(remembered, range(30), chunksize=4)) == [100 + x for x in range(30)]
        assert list(pool.imap(square, [5, 6, 7])) == [25, 36, 49]  # a pool takes several maps
    assert not any(w.proc.is_alive() for w in pool.workers)


def test_forkserver_is_the_default_and_the_environment_chooses_another(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(processes.START_METHOD_ENV, raising=False)
    assert processes.start_method() == ("forkserver" if "forkserver" in METHODS else "spawn")
    monkeypatch.setenv(processes.START_METHOD_ENV, "spawn")
    assert processes.start_method() == "spawn" and processes.start_method("fork") == "fork"
    monkeypatch.setenv(processes.START_METHOD_ENV, "vfork")
    with pytest.raises(ValueError, match=r"^JERICHO_START_METHOD must be one of .*forkserver.*, got 'vfork'$"):
        processes.start_method()
    with pytest.raises(ValueError, match=r"^start_method must be one of .*spawn.*, got 'thread'$"):
        processes.start_method("thread")


def test_a_bad_silence_bound_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(processes.SILENCE_ENV, "soon")
    with pytest.raises(ValueError, match=r"^JERICHO_WORKER_SILENCE_SECONDS must be a number of seconds, got 'soon'$"):
        WorkerPool(1)
    monkeypatch.setenv(processes.SILENCE_ENV, "0")
    with pytest.raises(ValueError, match=r"silence bound must be a positive number of seconds, got 0.0$"):
        WorkerPool(1)


def test_a_task_error_is_raised_here_with_its_type_and_the_workers_traceback() -> None:
    with pytest.raises(KeyError, match=r"no item [34] here") as caught, WorkerPool(2, name="test worker") as pool:
        list(pool.imap(fail, [3, 4]))
    assert isinstance(caught.value.__cause__, processes.RemoteTraceback)
    assert "in fail" in str(caught.value.__cause__)  # the worker's own traceback
    assert not any(w.proc.is_alive() for w in pool.workers)


def test_an_initializer_that_fails_raises_its_error_here() -> None:
    with pytest.raises(OSError, match="the table is not there"), WorkerPool(2, refuse_to_start) as pool:
        list(pool.imap(square, range(4)))


def test_start_values_that_cannot_travel_are_refused_in_one_line_before_any_worker_starts() -> None:
    with pytest.raises(ValueError, match=r"^what the test workers start with cannot be sent to them \(") as caught:
        WorkerPool(2, remember, (lambda: 1,), name="test worker")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("how", "said"),
    [("kill", "was killed by SIGKILL"), ("exit", "exited with code 3"), ("stop", "stopped answering")],
)
def test_a_worker_lost_in_its_task_is_named_with_how_it_ended_and_no_worker_is_left(how: str, said: str) -> None:
    """Killed, exited, or stopped (SIGSTOP: silent, killed after the silence bound): the map ends, naming it."""
    start = time.monotonic()
    with pytest.raises(WorkerLostError) as caught, WorkerPool(2, name="test worker", silence=0.5) as pool:
        list(pool.imap(end_myself, [how], describe=lambda chunk: f"the chunk {chunk}"))
    assert time.monotonic() - start < 30
    text = str(caught.value)
    pid = pool.workers[0].pid
    assert text.startswith(f"test worker 1 (pid {pid}) {said}") and text.endswith(f"while playing the chunk {[how]}")
    if how == "stop":
        waited = r"used no CPU time for [\d.]+ s while this process waited for it \(stopped by a signal\)"
        assert re.search(waited, text)
    assert not any(alive(w.pid) for w in pool.workers), "every worker ended"


def test_a_busy_worker_is_never_cut_short_however_long_its_task() -> None:
    with WorkerPool(2, name="test worker", silence=1.0) as pool:  # a loaded machine may not run it for 0.3 s
        assert list(pool.imap(spin, [2.5, 0.2])) == [2.5, 0.2]


def test_a_registered_game_reaches_workers_started_without_fork() -> None:
    """conftest registers the toy game in this process; a worker started by forkserver knows it too."""
    with WorkerPool(1, start_method=METHODS[0]) as pool:
        assert "toy" in next(pool.imap(games_here, [None]))


STUCK_PARENT = """
import time
from jericho_env import processes
processes.PARENT_POLL_SECONDS = None  # the death signal alone
pool = processes.WorkerPool(1, start_method={method!r})
worker = pool.workers[0]
worker.send(("run", (time.sleep, [600])))  # a worker that will not read its pipe for ten minutes
print(worker.pid, flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("method", METHODS)
def test_a_worker_busy_in_a_task_ends_when_its_parent_is_killed(method: str) -> None:
    """``kill -9`` of the parent: the worker, deaf to its pipe, is killed by the kernel's death signal."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = STUCK_PARENT.format(method=method)
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        assert parent.stdout is not None
        worker = int(parent.stdout.readline())
        time.sleep(0.5)
        assert alive(worker)
    finally:
        parent.kill()
        parent.wait()
    assert ends_within(worker, 10), "the worker outlived its killed parent"


def test_a_command_with_workers_prints_no_warning_of_its_workers(tmp_path: Path) -> None:
    """The workers run the command's module again (multiprocessing's main fix-up): nothing of it reaches stderr."""
    argv = [sys.executable, "-m", "experiments.evaluate", "castles", "--agents", "random", "greedy"]
    argv += ["--deals", "4", "--workers", "2", "--quiet", "--no-plot", "--out", str(tmp_path / "run")]
    res = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "Warning" not in res.stderr, res.stderr
