"""Imported first by the fork server that starts this package's workers (``jericho_env.processes``).

In that process only (the process that started it names itself in ``JERICHO_FORKSERVER_PARENT``, and does so
only from its main thread), on Linux: the server asks the kernel for a SIGKILL when that process ends
(prctl's PR_SET_PDEATHSIG), so a run killed with ``kill -9`` takes its fork server with it, and with the
server every worker it started (each asks the same of the server). Imported anywhere else it does nothing
but the warnings filter below.

Each worker runs the command's module again as ``__mp_main__`` (multiprocessing's ``spawn.prepare``), which the
server has already imported; runpy's RuntimeWarning about that ("found in sys.modules after import of package")
would print once per worker and says nothing to the user: it is filtered here, for the server and its workers.
"""

from __future__ import annotations

import os
import signal
import sys
import warnings

PARENT_ENV = "JERICHO_FORKSERVER_PARENT"


def _end_with_parent() -> None:
    parent = os.environ.pop(PARENT_ENV, None)  # popped: the workers forked from here do not see it
    if parent is None or parent != str(os.getppid()) or not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # no prctl: the workers still end when their pipes close
        return
    if str(os.getppid()) != parent:  # the parent ended before the request took effect
        os._exit(0)


warnings.filterwarnings("ignore", message=r".*found in sys\.modules after import of package", category=RuntimeWarning)
_end_with_parent()
