"""Worker processes that cannot hang a run: how they start, how every wait for one ends, how they end.

**How they start.** With ``forkserver`` where the platform has it, else ``spawn``: a fork copies a process
that may already run threads (torch's and Numba's pools, a server's) together with the locks those threads
held at that instant, and the child can wait on one of them forever (Python's documentation warns against
forking a threaded process; Stable-Baselines3's ``SubprocVecEnv`` defaults to ``forkserver`` for this reason,
and Python 3.14 made it Linux's default). ``fork`` stays an explicit choice: ``start_method="fork"`` where a
function takes one, or ``JERICHO_START_METHOD=fork`` in the environment for every command. The fork server
is started once per process and imports ``PRELOAD`` and the modules its first users name, so a worker is a
fork of a single-threaded process that has already imported them, and starts in milliseconds instead of
importing torch again. The server and its workers run one BLAS and OpenMP thread each
(``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``, unless set): processes, not threads,
share out the cores. A worker started with ``forkserver`` or ``spawn`` receives its task by pickling: a game
registered with ``register_game`` reaches it (its class is sent along), a module-level setting changed in
this process does not.

**How every wait ends.** A worker that owes this process an answer (from ``Worker.send`` of a request until
``Worker.read`` of the answer) is watched by one thread: a worker that died is reported at once by the
wait (``Worker.receive``, or ``ready`` over several workers), naming it and how it ended (its exit code, or
the signal that killed it); a worker that uses no CPU time for ``silence`` seconds, with no answer in its
pipe, while it owes one (stopped by SIGSTOP, deadlocked on a lock) is named, killed with SIGKILL and
reported the same way. A worker busy with a long task uses CPU time and is never cut short. The error is
``WorkerLostError`` (a ``RuntimeError``); the pool or vec env of the worker ends every other worker before
raising it, so no process is left behind. ``silence`` defaults to ``JERICHO_WORKER_SILENCE_SECONDS``, else
``SILENCE_SECONDS``; where a process's CPU time cannot be read (no ``/proc``, no psutil) only an explicit
``silence`` applies, as a plain deadline on each answer.

**How they end.** With the process that started them, however it ends (``kill -9`` included): on Linux a
worker asks the kernel for a SIGKILL at its parent's death (prctl's PR_SET_PDEATHSIG; under ``forkserver``
the server asks the same of the process that started it, ``jericho_env._forkserver``), and everywhere a
worker waiting for a command sees its pipe close, and checks every ``PARENT_POLL_SECONDS`` that its parent
is still the one that started it. Workers ignore Ctrl-C: the process that started them handles it (a
training run saves a checkpoint) and ends them.

``WorkerPool`` is a process pool on these (``imap`` with results in order, an ``initializer``), for the
tournament, the head to head and expert iteration's games; ``jericho_env.envs.sb3.ShardedVecEnv`` runs
its own protocol on ``Worker``.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.connection import wait
from typing import Any

START_METHOD_ENV = "JERICHO_START_METHOD"
SILENCE_ENV = "JERICHO_WORKER_SILENCE_SECONDS"
# How long a worker may use no CPU time while this process waits for its answer (seconds). A worker computing
# uses CPU time however long its task, so this bounds a stopped or deadlocked worker, not a slow one.
SILENCE_SECONDS = 60.0
# What the fork server imports before it forks any worker (callers add their own): module names, and
# "package.*" for every module of that package this process has imported (its workers likely need them too);
# and the libraries it imports when this process has imported them.
PRELOAD: tuple[str, ...] = ("numpy", "jericho_env.*")
PRELOAD_IF_IMPORTED: tuple[str, ...] = ("torch", "torch._dynamo", "numba", "stable_baselines3", "sb3_contrib")
# A worker's end with its parent (see the module docstring): the kernel's death signal, and the polling.
PARENT_DEATH_SIGNAL = True
PARENT_POLL_SECONDS: float | None = 1.0
# How long closing waits for a worker to answer and end before it kills it (seconds).
CLOSE_SECONDS = 10.0
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class WorkerLostError(RuntimeError):
    """A worker process died or stopped answering; the message names it and says how it ended."""


class RemoteTraceback(Exception):  # noqa: N818 - not an error: the cause shown under one, as multiprocessing names it
    """The traceback of an error raised in a worker (the ``__cause__`` of the error raised here)."""

    def __str__(self) -> str:
        return str(self.args[0])


# ------------------------------------------------------------------------------------------------- start
def start_method(requested: str | None = None) -> str:
    """The start method for new workers: ``requested``, else ``JERICHO_START_METHOD``, else the safe default.

    The default is ``forkserver`` where the platform has it, else ``spawn``. A method this platform does not
    have is a ``ValueError`` naming the ones it has.
    """
    available = mp.get_all_start_methods()
    method = requested or os.environ.get(START_METHOD_ENV) or ("forkserver" if "forkserver" in available else "spawn")
    if method not in available:
        source = "start_method" if requested else START_METHOD_ENV
        raise ValueError(f"{source} must be one of {', '.join(available)} (this platform's), got {method!r}")
    return method


_server_lock = threading.Lock()
_preloaded: list[str] = []


def context(method: str | None = None, preload: Sequence[str] = ()) -> Any:
    """The ``multiprocessing`` context of ``start_method(method)``; its fork server running, ``preload`` imported.

    The fork server is started once per process, with ``PRELOAD``, those of ``PRELOAD_IF_IMPORTED`` this
    process has imported, the command's module (``python -m MODULE``) and the ``preload`` of the calls made
    until then (a name ``"package.*"``: every module of that package imported here by then); a module named
    after it has started is imported by each worker itself.
    """
    chosen = start_method(method)
    ctx = mp.get_context(chosen)
    if chosen == "forkserver":
        _start_server(ctx, preload)
    return ctx


def _start_server(ctx: Any, preload: Sequence[str]) -> None:
    from multiprocessing import forkserver

    from jericho_env._forkserver import PARENT_ENV

    with _server_lock:
        imported = [m for m in PRELOAD_IF_IMPORTED if m in sys.modules]
        # a command run as `python -m package.module`: each worker runs that module again (as spawn does),
        # so its imports are preloaded too (its `if __name__ == "__main__"` part does not run)
        main = getattr(getattr(sys.modules.get("__main__"), "__spec__", None), "name", None)
        command = [main] if isinstance(main, str) and not main.endswith("__main__") else []
        wanted = [m for name in (*PRELOAD, *imported, *command, *preload) for m in _modules(name)]
        _preloaded.extend(m for m in wanted if m not in _preloaded)
        ctx.set_forkserver_preload(["jericho_env._forkserver", *_preloaded])
        # The server copies this process's environment when it starts (later calls find it running): one
        # thread per BLAS and OpenMP library there and in its workers; and, asked from the main thread only
        # (a death signal follows the thread that started a process), the server ends with this process.
        saved = {k: os.environ.get(k) for k in (*_THREAD_VARIABLES, PARENT_ENV)}
        for k in _THREAD_VARIABLES:
            os.environ.setdefault(k, "1")
        if threading.current_thread() is threading.main_thread():
            os.environ[PARENT_ENV] = str(os.getpid())
        try:
            forkserver.ensure_running()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


def _modules(name: str) -> list[str]:
    """``name``, or for ``"package.*"`` the modules of ``package`` this process has imported, parents first."""
    if not name.endswith(".*"):
        return [name]
    package = name[:-2]
    return sorted(m for m in list(sys.modules) if m == package or m.startswith(package + "."))


def silence_seconds(silence: float | None = None) -> float | None:
    """The silence bound of new workers: ``silence``, else ``JERICHO_WORKER_SILENCE_SECONDS``, else the default.

    ``None`` where the bound would need CPU times this platform cannot read and none was asked for.
    """
    if silence is None and os.environ.get(SILENCE_ENV):
        try:
            silence = float(os.environ[SILENCE_ENV])
        except ValueError:
            raise ValueError(f"{SILENCE_ENV} must be a number of seconds, got {os.environ[SILENCE_ENV]!r}") from None
    elif silence is None:
        return SILENCE_SECONDS if _cpu_readable() else None
    if not silence > 0:
        raise ValueError(f"a worker's silence bound must be a positive number of seconds, got {silence!r}")
    return float(silence)


def how_it_ended(exitcode: int | None) -> str:
    """A process's end in words: ``"was killed by SIGKILL"``, ``"exited with code 3"``."""
    if exitcode is None:
        return "is still running"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        why = " (by hand, or by the kernel when memory ran out)" if name == "SIGKILL" else ""
        return f"was killed by {name}{why}"
    return f"exited with code {exitcode}"


# ------------------------------------------------------------------------------------ CPU time and state
def _proc_stat(pid: int) -> list[bytes] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") and "SC_CLK_TCK" in os.sysconf_names else 100


def cpu_seconds(pid: int) -> float | None:
    """The CPU time process ``pid`` has used (user and system, seconds); ``None`` when it cannot be read."""
    fields = _proc_stat(pid)
    if fields is not None:
        return (int(fields[11]) + int(fields[12])) / _TICKS
    try:
        import psutil  # type: ignore[import-untyped]

        times = psutil.Process(pid).cpu_times()
        return float(times.user + times.system)
    except Exception:  # no psutil, or no such process
        return None


_readable: bool | None = None


def _cpu_readable() -> bool:
    global _readable
    if _readable is None:
        _readable = os.path.exists(f"/proc/{os.getpid()}/stat")
        if not _readable:
            try:
                import psutil  # noqa: F401

                _readable = True
            except ImportError:
                pass
    return _readable


_STATES = {b"T": "stopped by a signal", b"t": "stopped by a debugger", b"D": "waiting on a device"}


def _state(pid: int) -> str:
    fields = _proc_stat(pid)
    return _STATES.get(fields[0], "") if fields else ""


# --------------------------------------------------------------------------------------------- watching
class _Monitor:
    """One thread that watches the workers owing this process an answer, and kills one silent for too long."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.owing: dict[int, Worker] = {}  # id(worker) -> worker, while it owes an answer
        self.thread: threading.Thread | None = None

    def owes(self, worker: Worker, owing: bool) -> None:
        """Start (``owing``) or stop watching ``worker``; its silence is counted from now."""
        with self.lock:
            if not owing:
                self.owing.pop(id(worker), None)
                return
            if worker.silence is None or id(worker) in self.owing:
                return
            worker._seen, worker._since = None, time.monotonic()
            self.owing[id(worker)] = worker
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="jericho-worker-monitor", daemon=True)
                self.thread.start()

    def _run(self) -> None:
        idle_since = time.monotonic()
        while True:
            with self.lock:
                workers = list(self.owing.values())
                if not workers and time.monotonic() - idle_since > 5.0:
                    self.thread = None
                    return
            if workers:
                idle_since = time.monotonic()
            for w in workers:
                self._check(w)
            time.sleep(min([1.0, *(w.silence / 5 for w in workers if w.silence is not None)]))

    @staticmethod
    def _check(w: Worker) -> None:
        """Silent: no CPU time used and no answer in its pipe for ``w.silence`` seconds; then killed."""
        if w.silence is None or w.lost is not None or w._silent is not None:
            return
        try:
            answered = bool(w.conn.poll(0))  # an answer (or the pipe's end) waits to be read: not silent
        except (OSError, EOFError, ValueError):
            return
        cpu = cpu_seconds(w.pid)
        now = time.monotonic()
        if cpu is None and _cpu_readable():
            return  # it has ended: the waiting thread sees it
        if answered or (cpu is not None and cpu != w._seen):
            w._seen, w._since = cpu, now
        elif now - w._since >= w.silence:
            w._silenced(now - w._since)


_monitor = _Monitor()


def _fresh_monitor() -> None:  # pragma: no cover - run in forked children
    global _monitor
    _monitor = _Monitor()


if hasattr(os, "register_at_fork"):  # a forked child owes nothing to anyone yet
    os.register_at_fork(after_in_child=_fresh_monitor)


# ------------------------------------------------------------------------------------------------ workers
class Worker:
    """One worker process running ``target(conn, *args)``, and this process's end of its pipe ``conn``.

    ``name`` names it in errors (``"shard 2's worker"``). From ``send`` of a request (or ``expect``) until
    ``read`` of its answer the worker owes one, and is watched meanwhile (module docstring).
    """

    def __init__(self, ctx: Any, target: Callable[..., Any], args: tuple[Any, ...], name: str, silence: Any = None):
        self.name = name
        self.silence = silence_seconds(silence)
        self.lost: WorkerLostError | None = None
        self.owed = 0  # answers owed to this process
        self._silent: str | None = None
        self._seen: float | None = None  # the monitor's last reading of its CPU time
        self._since = 0.0  # and when it last changed (or an answer waited)
        self.conn, child = ctx.Pipe()
        setup = _setup(ctx)
        self.proc = ctx.Process(target=_bootstrap, args=(setup, target, child, *args), name=name, daemon=True)
        try:
            self.proc.start()
        finally:
            child.close()

    @property
    def pid(self) -> int:
        return int(self.proc.pid)

    def __repr__(self) -> str:
        return f"{self.name} (pid {self.proc.pid})"

    def expect(self) -> None:
        """Count one more answer owed (one the worker sends unasked, such as a message that it started)."""
        self.owed += 1
        _monitor.owes(self, True)

    def send(self, message: Any, answered: bool = True) -> None:
        """Send ``message``, which the worker answers (``answered``); ``WorkerLostError`` if it has ended or ends.

        The send is watched as well: it waits while the pipe is full, and a stopped worker never empties it.
        """
        if self.lost is not None:
            raise self.lost
        _monitor.owes(self, True)
        try:
            self.conn.send(message)
        except (BrokenPipeError, ConnectionResetError, EOFError):
            raise self._lose() from None
        finally:
            if answered:
                self.owed += 1
            _monitor.owes(self, self.owed > 0)

    def receive(self) -> Any:
        """The worker's next message, waiting for it; ``WorkerLostError`` if the worker ends or stays silent first."""
        ready([self])
        return self.read()

    def read(self) -> Any:
        """The message ``ready`` found (the worker may stop in the middle of one: it is watched until read)."""
        if self.lost is not None:
            raise self.lost
        try:
            message = self.conn.recv()
        except (EOFError, ConnectionResetError, BrokenPipeError):
            raise self._lose() from None
        self.owed = max(0, self.owed - 1)
        _monitor.owes(self, self.owed > 0)
        return message

    def poll(self, timeout: float) -> bool:
        """Whether a message (or the pipe's end) arrives within ``timeout`` seconds."""
        try:
            return bool(self.conn.poll(timeout))
        except (OSError, EOFError):
            return True

    def _silenced(self, seconds: float) -> None:
        """Called by the monitor's thread: the worker used no CPU for ``seconds`` while it owed an answer; kill it.

        Only the signal is sent from that thread: the waiting thread reaps the worker (two threads reading a
        fork server's exit status at once would lose it).
        """
        state = _state(self.pid)
        self._silent = (
            f"stopped answering: it used no CPU time for {seconds:.1f} s while this process waited for it"
            f"{f' ({state})' if state else ''}, and was killed"
        )
        with contextlib.suppress(OSError):
            os.kill(self.pid, getattr(signal, "SIGKILL", signal.SIGTERM))

    def _lose(self) -> WorkerLostError:
        """The ``WorkerLostError`` of this worker, which has ended (or is ended now)."""
        if self.lost is None:
            _monitor.owes(self, False)
            self.proc.join(timeout=CLOSE_SECONDS)
            if self.proc.exitcode is None:  # its pipe broke but it runs: end it, it can no longer answer
                self.kill()
            how = self._silent or how_it_ended(self.proc.exitcode)
            self.lost = WorkerLostError(f"{self.name} (pid {self.proc.pid}) {how}")
        return self.lost

    def kill(self, seconds: float | None = None) -> None:
        """End the worker at once (SIGKILL: it ends even stopped or stuck in native code) and reap it."""
        _monitor.owes(self, False)
        if self.proc.exitcode is None:
            with contextlib.suppress(OSError, ValueError, AttributeError):
                self.proc.kill()
        self.proc.join(timeout=CLOSE_SECONDS if seconds is None else seconds)

    def close(self, message: Any = ("close", None), seconds: float | None = None) -> None:
        """Ask the worker to end (``message``; ``None``: it was asked already), wait ``seconds``, then kill it.

        ``seconds`` defaults to ``CLOSE_SECONDS``.
        """
        seconds = CLOSE_SECONDS if seconds is None else seconds
        _monitor.owes(self, False)
        if self.lost is None and self.proc.exitcode is None:
            if message is not None:
                with contextlib.suppress(OSError, EOFError, ValueError):
                    self.conn.send(message)
            self.proc.join(timeout=seconds)
        self.kill(seconds)
        self.conn.close()


def ready(workers: Sequence[Worker]) -> list[Worker]:
    """Those of ``workers`` with a message to read, waiting until one has; ``WorkerLostError`` if one ends first.

    Call it for workers that owe an answer (the monitor ends a silent one, which ends this wait). A worker
    that ended after sending its last message is ready (the message is read first).
    """
    for w in workers:
        if w.lost is not None:
            raise w.lost
    conns = {w.conn: w for w in workers}
    ends = {w.proc.sentinel: w for w in workers}
    got = wait([*conns, *ends])
    have = [conns[c] for c in got if c in conns]
    if have:
        return have
    w = ends[got[0]]
    if w.poll(0):  # its message arrived just before it ended
        return [w]
    raise w._lose()


def _setup(ctx: Any) -> dict[str, Any]:
    """What a new worker needs before its target: its parent, the end-with-parent settings, registered games."""
    import cloudpickle

    from jericho_env.registry import registered_games

    games = registered_games()
    return {
        "parent": None if ctx.get_start_method() == "forkserver" else os.getpid(),
        "death_signal": PARENT_DEATH_SIGNAL,
        "poll": PARENT_POLL_SECONDS,
        "games": cloudpickle.dumps(games) if games else None,
    }


# --------------------------------------------------------------------------------- inside a worker
_parent: int | None = None
_poll: float | None = None


def _bootstrap(setup: dict[str, Any], target: Callable[..., Any], conn: Any, *args: Any) -> None:
    """A worker's first steps: one torch thread, end with the parent, ignore Ctrl-C, the games; then ``target``."""
    global _parent, _poll
    torch = sys.modules.get("torch")  # a fork copies torch's OpenMP pool without its threads: one thread, no pool
    if torch is not None:
        torch.set_num_threads(1)
    _parent = setup["parent"] if setup["parent"] is not None else os.getppid()
    _poll = setup["poll"]
    if setup["death_signal"] and sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):  # no prctl here: the pipe and the polling still notice
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    if os.getppid() != _parent:  # the parent ended before the request took effect
        os._exit(0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if setup["games"] is not None:
        import cloudpickle

        from jericho_env.registry import register_game, registered_games

        for game_id, rules_class in cloudpickle.loads(setup["games"]).items():
            if game_id not in registered_games():
                register_game(game_id, rules_class)
    target(conn, *args)


def next_command(conn: Any) -> Any:
    """Inside a worker: the parent's next message, or ``None`` once the parent is gone (pipe closed, reparented)."""
    try:
        while _poll is not None and not conn.poll(_poll):
            if _parent is not None and os.getppid() != _parent:
                return None
        return conn.recv()
    except (EOFError, OSError):
        return None


def send_error(conn: Any, error: BaseException) -> None:
    """Inside a worker: send ``("error", (error, traceback))``; the error is ``None`` where it cannot travel."""
    text = traceback.format_exc()
    try:
        pickle.loads(pickle.dumps(error))  # it must come back whole, its type and arguments
        conn.send(("error", (error, text)))
    except Exception:
        conn.send(("error", (None, text)))


def raise_remote(worker: Worker, value: tuple[BaseException | None, str]) -> None:
    """Raise the error a worker sent with ``send_error``: its own type, the worker's traceback as the cause."""
    error, text = value
    if error is None:
        raise RuntimeError(f"{worker.name} failed:\n{text}")
    raise error from RemoteTraceback(text)


# ------------------------------------------------------------------------------------------------- pool
def check_picklable(value: Any) -> str | None:
    """Why ``value`` cannot be sent to a worker (pickle's one-line reason), or ``None`` when it can."""
    try:
        pickle.dumps(value)
    except Exception as e:  # pickle raises PicklingError, TypeError, AttributeError... by object
        return " ".join(f"{type(e).__name__}: {e}".split())
    return None


def _pool_loop(conn: Any, initializer: Callable[..., Any] | None, initargs: bytes) -> None:
    """A pool worker: run ``initializer(*initargs)``, then each task's function on its items, until told to close."""
    try:
        if initializer is not None:
            initializer(*pickle.loads(initargs))
    except BaseException as e:  # reported with the first task's answer; the worker ends
        send_error(conn, e)
        return
    while True:
        message = next_command(conn)
        if message is None or message[0] == "close":
            return
        fn, items = message[1]
        try:
            out = [fn(x) for x in items]
            conn.send(("ok", out))
        except BaseException as e:  # raised in the parent with this traceback
            send_error(conn, e)


class WorkerPool:
    """``workers`` worker processes, each running ``initializer(*initargs)`` once, then tasks (``imap``).

    A context manager: leaving it closes the workers, or kills them after an error. ``initargs`` are pickled
    here first (plain ``pickle``, as they travel): one that cannot be is a ``ValueError`` naming pickle's
    reason. A task's error is raised here with its own type and the worker's traceback as its cause; a worker
    that dies or stays silent raises ``WorkerLostError`` naming it and its task, every worker ended first.
    ``name`` names the workers (``"tournament worker 2"``); ``start_method``, ``preload`` and ``silence`` as
    in the module docstring.
    """

    def __init__(
        self,
        workers: int,
        initializer: Callable[..., Any] | None = None,
        initargs: tuple[Any, ...] = (),
        name: str = "worker",
        start_method: str | None = None,
        preload: Sequence[str] = (),
        silence: float | None = None,
    ) -> None:
        if int(workers) < 1:
            raise ValueError(f"a pool needs one worker at least, got {workers!r}")
        why = check_picklable(initargs)
        if why is not None:
            raise ValueError(f"what the {name}s start with cannot be sent to them ({why})")
        payload = pickle.dumps(initargs)
        ctx = context(start_method, preload)
        self.name = name
        self.workers: list[Worker] = []
        try:
            for k in range(int(workers)):
                self.workers.append(Worker(ctx, _pool_loop, (initializer, payload), f"{name} {k + 1}", silence))
        except BaseException:
            self.terminate()
            raise

    def imap(
        self,
        fn: Callable[[Any], Any],
        items: Sequence[Any],
        chunksize: int = 1,
        describe: Callable[[Sequence[Any]], str] | None = None,
    ) -> Iterator[Any]:
        """``fn(item)`` of every item, computed by the workers ``chunksize`` items at a time, yielded in order.

        ``describe(chunk)`` says what a chunk holds, for the error of a worker lost while playing it. The first
        error to arrive is raised (the results before it have been yielded), every worker ended first.
        """
        size = max(1, int(chunksize))
        chunks = [list(items[i : i + size]) for i in range(0, len(items), size)]
        done: dict[int, list[Any]] = {}
        busy: dict[Worker, int] = {}
        idle = list(reversed(self.workers))
        todo = iter(range(len(chunks)))
        given = 0
        try:
            for out in range(len(chunks)):
                while out not in done:
                    while idle and given < len(chunks):
                        index = next(todo)
                        given += 1
                        worker = idle.pop()
                        busy[worker] = index
                        worker.send(("run", (fn, chunks[index])))
                    for worker in ready(list(busy)):
                        status, value = worker.read()
                        if status == "error":
                            raise_remote(worker, value)
                        done[busy.pop(worker)] = value
                        idle.append(worker)
                yield from done.pop(out)
        except WorkerLostError as e:
            lost = next((w for w in self.workers if w.lost is e), None)
            if lost is not None and lost in busy and describe is not None:
                e.args = (f"{e} while playing {describe(chunks[busy[lost]])}",)
            self.terminate()
            raise
        except BaseException:
            self.terminate()
            raise

    def close(self) -> None:
        """Ask every worker to end, then kill any that does not within ``CLOSE_SECONDS``."""
        for w in self.workers:
            with contextlib.suppress(OSError, EOFError, ValueError):
                if w.lost is None and w.proc.exitcode is None:
                    w.conn.send(("close", None))
        for w in self.workers:
            w.close(None)

    def terminate(self) -> None:
        """Kill every worker at once."""
        for w in self.workers:
            w.kill()
        for w in self.workers:
            w.conn.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, kind: Any, *rest: Any) -> None:
        if kind is None:
            self.close()
        else:
            self.terminate()


__all__ = [
    "CLOSE_SECONDS",
    "PRELOAD",
    "SILENCE_SECONDS",
    "RemoteTraceback",
    "Worker",
    "WorkerLostError",
    "WorkerPool",
    "check_picklable",
    "context",
    "cpu_seconds",
    "how_it_ended",
    "next_command",
    "ready",
    "send_error",
    "start_method",
]
