"""Where a run came from: ``provenance.json`` in its folder, one entry per session (start or ``--resume``).

Each entry holds the command as typed, the git commit of the source that ran it (``None`` outside a git checkout)
and whether it had uncommitted changes, the package's, Python's and torch's versions, and the time;
``experiments.zoo add`` copies it into the model card.
"""

from __future__ import annotations

import contextlib
import json
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

FILE = "provenance.json"
SOURCE = Path(__file__).resolve().parent.parent  # the checkout (or site-packages) this code runs from


def git(*args: str, cwd: Path = SOURCE) -> str | None:
    """``git ARGS`` in ``cwd``'s checkout, stripped; ``None`` if git is missing or ``cwd`` is no checkout."""
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def source_commit(cwd: Path = SOURCE) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the checkout holding ``cwd`` (dirty: tracked files differ from it); (None, None) if none."""
    commit = git("rev-parse", "HEAD", cwd=cwd)
    if commit is None:
        return None, None
    status = git("status", "--porcelain", "--untracked-files=no", cwd=cwd)
    return commit, None if status is None else bool(status)


def session(module: str, argv: Sequence[str] | None) -> dict[str, Any]:
    """This session's entry: the command (``argv``: the arguments after the module; ``None``: ``sys.argv[1:]``)."""
    import jericho_env

    args = list(sys.argv[1:] if argv is None else argv)
    commit, dirty = source_commit()
    entry: dict[str, Any] = {
        "command": shlex.join(["python", "-m", module, *args]),
        "commit": commit,
        "dirty": dirty,
        "package_version": jericho_env.__version__,
        "python": platform.python_version(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    with contextlib.suppress(ImportError):  # torch: an optional dependency
        import torch

        entry["torch"] = torch.__version__
    return entry


def record_session(folder: str | Path, module: str, argv: Sequence[str] | None) -> None:
    """Append this session's entry to ``folder/provenance.json`` (written whole to a temporary file, then renamed)."""
    from experiments.training.run_folder import write_atomic

    path = Path(folder) / FILE
    sessions = read_provenance(folder)
    sessions.append(session(module, argv))
    write_atomic(path, json.dumps({"sessions": sessions}, indent=1))


def read_provenance(folder: str | Path) -> list[dict[str, Any]]:
    """The sessions recorded in ``folder/provenance.json``, oldest first; ``[]`` when there is none (older runs)."""
    path = Path(folder) / FILE
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{str(path)!r} is not readable JSON ({e}); it is written by the run itself") from None
    sessions = data.get("sessions") if isinstance(data, dict) else None
    if not isinstance(sessions, list) or not all(isinstance(s, dict) for s in sessions):
        raise ValueError(f"{str(path)!r} must hold {{'sessions': [...]}}, one object per session")
    return sessions
