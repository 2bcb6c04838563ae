"""Where the work runs: ``local`` (this machine's processes) or ``ray`` (Ray tasks, on one machine or a cluster).

``--backend ray`` runs on the cluster at ``--ray-address`` (or ``RAY_ADDRESS``), else on a local Ray started
for the command with ``--workers`` CPUs. ``map_chunks`` sends chunks of tasks as Ray tasks with a payload of
plain data (put once in Ray's object store; each worker builds its state from it once per job) and returns
the results in task order; a task still lost after Ray's retries raises ``BackendError``. ``init`` and
``run`` travel by reference, so every node needs the same jericho-env installed (``docs/ray.md``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

BACKENDS = ("local", "ray")
RAY_HINT = "the ray backend needs Ray: pip install -e '.[ray]' (or pip install 'jericho-env[ray]')"


class BackendError(RuntimeError):
    """Work that the backend could not finish: a task lost for good, or a cluster that cannot be reached."""


@dataclasses.dataclass(frozen=True)
class Backend:
    """Which backend runs the work, the Ray cluster's address (None: ``RAY_ADDRESS`` or a local Ray) and retries."""

    name: str = "local"
    address: str | None = None
    retries: int = 3  # times Ray re-runs a task whose worker process or node died

    def __post_init__(self) -> None:
        if self.name not in BACKENDS:
            raise ValueError(f"unknown backend {self.name!r}; choose one of {', '.join(BACKENDS)}")
        if self.address is not None and self.name != "ray":
            raise ValueError(f"--ray-address {self.address!r} is for --backend ray, not {self.name}")
        if self.retries < 0:
            raise ValueError(f"retries must be >= 0, got {self.retries}")

    @property
    def is_ray(self) -> bool:
        """Whether the work goes to Ray."""
        return self.name == "ray"

    def describe(self) -> dict[str, Any]:
        """The backend as recorded in a run's outputs."""
        return {"backend": self.name, **({"ray_address": self.address} if self.address else {})}


LOCAL = Backend()


def add_backend_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``--backend local|ray`` and ``--ray-address`` to a command's parser."""
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="local: processes on this machine; ray: Ray tasks, on --ray-address or a local Ray (docs/ray.md)",
    )
    parser.add_argument(
        "--ray-address",
        default=None,
        metavar="HOST:PORT",
        help="a running Ray cluster (default: Ray's RAY_ADDRESS, else a local Ray with --workers CPUs)",
    )


def backend_from_args(args: argparse.Namespace) -> Backend:
    """The ``Backend`` of the parsed ``--backend`` and ``--ray-address`` flags (``ValueError`` if they disagree)."""
    return Backend(args.backend, args.ray_address)


@contextlib.contextmanager
def ray_session(backend: Backend, num_cpus: int) -> Iterator[Any]:
    """Ray, connected for the duration: the caller's connection (kept), the given cluster, ``RAY_ADDRESS``'s, or
    a new local Ray of ``num_cpus`` CPUs (shut down on leaving)."""
    try:
        import ray
    except ImportError as e:
        raise ImportError(RAY_HINT) from e
    if ray.is_initialized():
        yield ray
        return
    address = backend.address or os.environ.get("RAY_ADDRESS") or None
    for attempt in (1, 2):
        try:
            if address:
                ray.init(address=address, logging_level=logging.WARNING)
            else:  # "local": a new Ray of our own, never one that another user started on this machine
                ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, logging_level=logging.WARNING)
            break
        except ConnectionError as e:
            raise BackendError(f"cannot reach the Ray cluster at {address!r}: {e}") from None
        except Exception as e:  # a bare Exception: Ray's processes did not start within its 30 s (a loaded machine)
            ray.shutdown()  # stop what did start
            text = f"{type(e).__name__}: {' '.join(str(e).split())}"
            if address or attempt == 2:
                where = f"connect to the Ray cluster at {address!r}" if address else "start a local Ray"
                raise BackendError(f"could not {where}: {text}") from None
            print(f"(a local Ray did not start: {text}; trying once more)", file=sys.stderr)
    try:
        yield ray
    finally:
        ray.shutdown()


def cluster_cpus(ray: Any) -> int:
    """The CPUs of the connected Ray cluster (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def chunk(items: Sequence[Any], parts: int) -> list[list[Any]]:
    """``items`` cut into at most ``parts`` consecutive runs of near-equal length, in order."""
    parts = max(1, min(parts, len(items)))
    size, extra = divmod(len(items), parts)
    bounds = [i * size + min(i, extra) for i in range(parts + 1)]
    return [list(items[a:b]) for a, b in itertools.pairwise(bounds) if b > a]


# ----------------------------------------------------------------------------------------------- worker side
_STATE: dict[str, Any] = {}  # job key -> what init built, in this worker process (the latest job only)


def _run_chunk(
    key: str, init: Callable[[Any], Any], payload: list[Any], run: Callable[[Any, Any], Any], tasks: list[Any]
) -> list[Any]:
    """Inside a Ray worker: build (once per job and process) the state from the payload, then run the chunk."""
    if key not in _STATE:
        import ray

        for old in list(_STATE):  # one job at a time per process: free the last one's agents
            closer = getattr(_STATE.pop(old), "close", None)
            if closer is not None:
                closer()
        _STATE[key] = init(ray.get(payload[0]))  # payload: [ObjectRef], fetched only when needed
    state = _STATE[key]
    return [run(state, t) for t in tasks]


# ------------------------------------------------------------------------------------------------- head side
def map_chunks(
    backend: Backend,
    workers: int,
    key: str,
    init: Callable[[Any], Any],
    payload: Any,
    run: Callable[[Any, Any], Any],
    tasks: Sequence[Any],
    progress: Callable[[Any], None] | None = None,
    chunks: int | None = None,
    describe: Callable[[Sequence[Any]], str] = lambda c: f"{len(c)} task(s)",
) -> list[Any]:
    """``[run(state, t) for t in tasks]`` as ``chunks`` Ray tasks (default 16 per CPU), ``state = init(payload)``
    built once per worker process and job (``key``); ``progress(result)`` as each chunk finishes."""
    with ray_session(backend, workers) as ray:
        parts = chunks or 16 * cluster_cpus(ray)
        pieces = chunk(list(tasks), parts)
        payload_ref = ray.put(payload)
        remote = ray.remote(_run_chunk).options(num_cpus=1, max_retries=backend.retries, retry_exceptions=False)
        refs = [remote.remote(key, init, [payload_ref], run, piece) for piece in pieces]
        where = {ref: i for i, ref in enumerate(refs)}
        done: dict[int, list[Any]] = {}
        pending = list(refs)
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                for ref in ready:
                    i = where[ref]
                    done[i] = get_result(ray, ref, backend, describe(pieces[i]))
                    for result in done[i]:
                        if progress:
                            progress(result)
        except BaseException:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise
    results = [r for i in range(len(pieces)) for r in done[i]]
    if len(results) != len(tasks):  # never hand back a short list as if it were whole
        raise BackendError(f"Ray returned {len(results)} results for {len(tasks)} tasks")
    return results


def get_result(ray: Any, ref: Any, backend: Backend, what: str) -> Any:
    """One chunk's results; a lost task becomes ``BackendError``, an error of our code its own exception."""
    exc = ray.exceptions
    try:
        return ray.get(ref)
    except exc.RayTaskError as e:  # our code raised inside the task: the same error here, without Ray's wrapper
        cause = getattr(e, "cause", None)
        if isinstance(cause, BaseException):
            raise cause from None
        raise
    except (exc.RayError, ConnectionError) as e:  # worker or node died past the retries, object lost
        raise BackendError(
            f"a Ray task ({what}) was lost after {backend.retries} retr{'y' if backend.retries == 1 else 'ies'}: "
            f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}; nothing was written"
        ) from None
