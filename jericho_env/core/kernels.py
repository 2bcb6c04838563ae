"""What the games' compiled kernels share: Numba's ``njit`` (or its absence) and a per-row random stream.

Numba is optional (the ``train`` extra installs it). ``NUMBA`` says whether it is installed; without it
``njit`` leaves functions as plain Python, and ``jericho_env.make_batched`` runs the Python rules instead
of the kernels (``jericho_env.envs.batched``), so nothing here has to run fast uncompiled.

Randomness inside kernels (new deals, determinizations, rollouts) comes from a stream per row: a
``uint64`` state in an array, advanced by SplitMix64 (Steele, Lea and Flood 2014), seeded from the
caller's ``np.random.Generator``. Each row draws from its own state, so rows can be processed in any
order or in parallel and a seed still gives the same games.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

NUMBA = importlib.util.find_spec("numba") is not None

if NUMBA:
    from numba import njit
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


__all__ = ["NUMBA", "below", "next_u64", "njit", "row_seeds", "shuffle_prefix", "uniform"]
