"""Numba's ``njit`` where the ``train`` extra installed Numba, else a stand-in that leaves functions as Python.

The compiled kernels (``agents.nets.frontier_kernel``) import ``njit`` and
``KERNEL`` from here: with Numba they compile (cached on disk, ``cache=True``); without it the same
functions run as plain Python, so their tests check the same arithmetic either way, and the callers keep
their reference versions (``KERNEL`` is False).
"""

from __future__ import annotations

from typing import Any

try:
    from numba import njit

    KERNEL = True
except ImportError:  # pragma: no cover - exercised only where Numba is absent
    KERNEL = False

    def njit(*args: Any, **kwargs: Any) -> Any:  # type: ignore[no-redef]
        """Without Numba: the function itself (plain Python)."""
        if args and callable(args[0]):
            return args[0]
        return lambda f: f


__all__ = ["KERNEL", "njit"]
