"""What the games' compiled kernels share: Numba's ``njit`` (or its absence) and a per-row random stream.

Numba is optional (the ``train`` extra installs it). ``NUMBA`` says whether it is installed; without it
``njit`` leaves functions as plain Python, and ``jericho_env.make_batched`` runs the Python rules instead
of the kernels (``jericho_env.envs.batched``), so nothing here has to run fast uncompiled.

Randomness inside kernels (new deals, determinizations, rollouts) comes from a stream per row: a
``uint64`` state in an array, advanced by SplitMix64 (Steele, Lea and Flood 2014), seeded from the
caller's ``np.random.Generator``. Each row draws from its own state, so rows can be processed in any
order or in parallel and a seed still gives the same games.

``row_signatures(dtype, params_dtype)`` gives the explicit Numba signatures of a game's per-row functions
(``jericho_env.core.batched.RowKernels``): compiled with them, the functions can be passed to other compiled
code (search, ``agents.search.compiled``) as first-class function values, and that code stays cached on disk.

Numba's disk cache (``cache=True``) is read and written under a file lock beside each function's index: two
processes compiling one function for different signatures at once (a first run of several commands, or of the
tests on several workers) can otherwise leave an index that names the other's code, which then runs as this
one's (numba issue #4807). Without ``fcntl`` (Windows) the cache is used as Numba leaves it.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

NUMBA = importlib.util.find_spec("numba") is not None


def lock_disk_cache() -> bool:
    """Numba's cache files read and written under an exclusive lock on ``<index>.lock``; whether the lock is on."""
    try:
        import fcntl

        from numba.core.caching import IndexDataCacheFile
    except ImportError:  # pragma: no cover - no fcntl (Windows), or a Numba without this class
        return False
    if getattr(IndexDataCacheFile, "locked_by_jericho", False):
        return True

    def locked(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def run(self: Any, *args: Any) -> Any:
            os.makedirs(self._cache_path, exist_ok=True)
            with open(os.path.join(self._cache_path, self._index_name + ".lock"), "ab") as f:
                fcntl.flock(f, fcntl.LOCK_EX)  # released when the file closes
                return method(self, *args)

        return run

    for name in ("save", "load"):
        setattr(IndexDataCacheFile, name, locked(getattr(IndexDataCacheFile, name)))
    IndexDataCacheFile.locked_by_jericho = True  # type: ignore[attr-defined]
    return True


if NUMBA:
    from numba import njit

    lock_disk_cache()
else:  # pragma: no cover - exercised only where Numba is absent

    def njit(*args: Any, **kwargs: Any) -> Any:  # type: ignore[no-redef]
        """Without Numba: the function itself (plain Python)."""
        if args and callable(args[0]):
            return args[0]
        return lambda f: f


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


def row_seeds(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` stream states (uint64) drawn from ``rng``: one per row about to draw in a kernel."""
    return rng.integers(0, 2**63, size=count, dtype=np.int64).view(np.uint64)


@njit(cache=True)
def next_u64(stream: np.ndarray, row: int) -> np.uint64:
    """The next 64 random bits of ``stream[row]`` (SplitMix64), advancing it."""
    x = stream[row] + _GOLDEN
    stream[row] = x
    z = (x ^ (x >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True)
def uniform(stream: np.ndarray, row: int) -> float:
    """A float in [0, 1) with 53 random bits, from ``stream[row]``."""
    return float(next_u64(stream, row) >> _S11) * _TO_UNIT


@njit(cache=True)
def below(stream: np.ndarray, row: int, n: int) -> int:
    """An int in ``0 .. n-1`` (``n >= 1``), uniform up to 2**-53, from ``stream[row]``."""
    return int(uniform(stream, row) * n)


@njit(cache=True)
def shuffle_prefix(values: np.ndarray, n: int, stream: np.ndarray, row: int) -> None:
    """Shuffle ``values[:n]`` in place (Fisher-Yates: every order equally likely), from ``stream[row]``."""
    for k in range(n - 1, 0, -1):
        j = below(stream, row, k + 1)
        t = values[k]
        values[k] = values[j]
        values[j] = t


class RowSignatures(NamedTuple):
    """Numba signatures of the per-row functions of ``RowKernels`` (``S``: the states array, ``P``: the params array).

    * ``status(states: S, row, params: P, returns: float64[::1]) -> int64``
    * ``legal(states: S, row, params: P, out: int64[::1]) -> int64``
    * ``apply(states: S, row, params: P, action: int64) -> None``
    * ``observe(states: S, row, params: P, seat: int64, out: float32[::1]) -> None``
    * ``determinize(src: S, src_row, params: P, seat, dst: S, dst_row, stream: uint64[::1], k) -> bool``

    Every integer is int64. ``states_type`` and ``params_type`` are the Numba types of the two arrays (for
    code that builds further signatures over them).
    """

    status: Any
    legal: Any
    apply: Any
    observe: Any
    determinize: Any
    states_type: Any
    params_type: Any


def row_signatures(dtype: np.dtype[Any], params_dtype: np.dtype[Any]) -> RowSignatures | None:
    """The explicit signatures of a game's row functions over arrays of ``dtype``, ``params_dtype``; None without Numba.

    The arrays are one-dimensional and C-contiguous (``np.zeros(n, dtype)``, or a slice of one), as every
    caller passes them.
    """
    if not NUMBA:  # pragma: no cover - exercised only where Numba is absent
        return None
    from numba import typeof, types

    s = typeof(np.zeros(1, dtype=dtype))
    p = typeof(np.zeros(1, dtype=params_dtype))
    i64 = types.int64
    return RowSignatures(
        status=i64(s, i64, p, types.float64[::1]),
        legal=i64(s, i64, p, types.int64[::1]),
        apply=types.void(s, i64, p, i64),
        observe=types.void(s, i64, p, i64, types.float32[::1]),
        determinize=types.boolean(s, i64, p, i64, s, i64, types.uint64[::1], i64),
        states_type=s,
        params_type=p,
    )


Rows = tuple[Any, Any, Any, Any, Any]  # status, legal, apply, observe, determinize
_COMPILED_ROWS: dict[Any, Rows] = {}


def compiled_rows(functions: Rows, dtype: np.dtype[Any], params_dtype: np.dtype[Any]) -> Rows:
    """A game's five row functions (status, legal, apply, observe, determinize; plain Python) compiled with
    ``row_signatures(dtype, params_dtype)``; without Numba, the functions themselves.

    Compiled when first asked for, not when their module is imported (once per process and record type, and
    cached on disk): importing a game's kernels costs nothing until they are used.
    """
    key = (functions, dtype, params_dtype)
    if key not in _COMPILED_ROWS:
        sig = row_signatures(dtype, params_dtype)
        if sig is None:  # pragma: no cover - exercised only where Numba is absent
            return functions
        sigs = (sig.status, sig.legal, sig.apply, sig.observe, sig.determinize)
        status, legal, apply, observe, determinize = (
            njit(s, cache=True)(f) for s, f in zip(sigs, functions, strict=True)
        )
        _COMPILED_ROWS[key] = (status, legal, apply, observe, determinize)
    return _COMPILED_ROWS[key]


#: the params dtype of a game whose row functions need no tables
NO_PARAMS = np.dtype([("unused", np.int64)])

__all__ = [
    "NO_PARAMS",
    "NUMBA",
    "RowSignatures",
    "below",
    "compiled_rows",
    "lock_disk_cache",
    "next_u64",
    "njit",
    "row_seeds",
    "row_signatures",
    "shuffle_prefix",
    "uniform",
]
