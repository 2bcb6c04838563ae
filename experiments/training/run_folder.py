"""A training run's folder: config.json, checkpoints, snapshots, PPO's statistics and training.json, written to last.

Layout: ``config.json`` (the resolved config); ``checkpoints/latest.zip`` and ``previous.zip`` (the last two
checkpoints in the safe format of ``agents.checkpoint``, each with the run state ``--resume`` needs, also kept as
plain JSON in ``checkpoints/state.json``); ``checkpoints/initial.zip`` (the starting policy); ``snapshots/step_N.zip``
(listed relative to the run folder, so a folder moved whole still resumes); ``logs/progress.csv`` (SB3's
statistics); ``final.zip`` and ``training.json`` at the end.

Every file is written to a temporary name and renamed, so a kill leaves the old file or the new one; ``--resume``
takes the newest checkpoint that loads, refusing one of another game or options (``RunMismatchError``) or a state
listing a missing snapshot (``MissingSnapshotError``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agents.checkpoint import (
    CheckpointError,
    UnsafeCheckpointError,
    is_loadable,
    kind,
    read_meta,
    save_checkpoint,
)
from experiments.cli import check_out
from experiments.play.report import write_file as write_atomic  # a temporary file, then a rename
from jericho_env.registry import make_rules

STATE_KEYS = ("num_timesteps", "snapshots", "evals")


def read_json(path: Path, what: str) -> Any:
    """A JSON file written by ``experiments.train``; one clear line if it is missing or broken."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise FileNotFoundError(f"{what} {str(path)!r} cannot be read: {e.strerror or e}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(
            f"{what} {str(path)!r} is not valid JSON ({e.msg} at line {e.lineno} column {e.colno}); it is written "
            "by experiments.train: was it edited or cut short?"
        ) from None


class RunMismatchError(ValueError):
    """A run folder whose checkpoint is for another game or other options than its config.json."""


class MissingSnapshotError(FileNotFoundError):
    """A snapshot listed in a run's state that is no longer where the run folder says."""


class RunFolder:
    """The files of one training run, and the snapshots, evaluations and sessions recorded so far."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.ckpt_dir = self.folder / "checkpoints"
        self.snap_dir = self.folder / "snapshots"
        self.latest = self.ckpt_dir / "latest.zip"  # the last checkpoint
        self.previous = self.ckpt_dir / "previous.zip"  # the one before it
        self.initial = self.ckpt_dir / "initial.zip"  # the starting policy (written with a prior or --init)
        self.ckpt_dir.mkdir(parents=True, exist_ok=True)
        self.snap_dir.mkdir(parents=True, exist_ok=True)
        self.snapshots: list[str] = []
        self.evals: list[dict[str, Any]] = []
        self.sessions: list[dict[str, Any]] = []  # earlier sessions: start step, steps, seconds
        self._session_start = (0, time.perf_counter())
        self._cpu_start: tuple[float, float] | None = None

    # ------------------------------------------------------------------------------------------ config
    @staticmethod
    def saved_config(folder: str | Path, game_id: str) -> dict[str, Any]:
        """The config.json of an existing run folder of ``game_id``; a clear error if it is not one."""
        path = Path(folder)
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"--resume {str(folder)!r}: no config.json there (not a training run folder?)")
        config = read_json(path / "config.json", "--resume: config")
        if not isinstance(config, dict):
            raise ValueError(f"--resume: {str(path / 'config.json')!r} must hold a JSON object, got {config!r}")
        if config.get("game") != game_id:
            raise ValueError(f"--resume {str(folder)!r} is a {config.get('game')!r} run, not {game_id!r}")
        return config

    @staticmethod
    def stopped_early(folder: str | Path | None, config: Mapping[str, Any] | None = None) -> bool:
        """Whether ``folder`` holds a run stopped before its first checkpoint, to start afresh; with ``config`` (a
        new run's), a run there with other settings is refused, naming them."""
        if folder is None or not (Path(folder) / "config.json").is_file() or RunFolder.has_checkpoint(folder):
            return False
        if config is None:
            return True
        saved = read_json(Path(folder) / "config.json", "the run's config")
        given = json.loads(json.dumps(dict(config)))
        if saved == given:
            return True
        if not isinstance(saved, dict) or set(saved) != set(given):  # not a config of this version: "a run" there
            return False
        differ = [f"{k} {saved[k]!r} there, {given[k]!r} here" for k in sorted(given) if saved[k] != given[k]]
        raise ValueError(
            f"{str(folder)!r} holds a run stopped before its first checkpoint, with other settings "
            f"({'; '.join(differ)}): --resume {folder} starts it afresh with its own, or choose another --out folder"
        )

    @staticmethod
    def check_new(out: str | None, config: Mapping[str, Any]) -> bool:
        """``ValueError`` unless ``--out`` can hold a new run with ``config``; True when it holds this very run
        stopped before its first checkpoint (the same command starts it afresh)."""
        again = RunFolder.stopped_early(out, config)
        check_out(out, "--out", run_kind=None if again else "training run", resume_hint=True)
        return again

    def begin(self, afresh: bool, config: Mapping[str, Any] | None) -> None:
        """Start a run here: a run stopped before its first checkpoint cleared (``afresh``), new ``config`` written."""
        if afresh:  # what it wrote besides config.json goes
            print(f"{self.folder} holds a run stopped before its first checkpoint: starting it afresh")
            stale = [self.folder / "logs" / "progress.csv", self.initial, *self.snap_dir.glob("step_*.zip")]
            for path in [*stale, *self.ckpt_dir.glob("*.tmp"), *self.snap_dir.glob("*.tmp")]:
                path.unlink(missing_ok=True)
        if config is not None:
            self.save_config(dict(config))  # the values used, not "the preset of the day"

    @staticmethod
    def has_checkpoint(folder: str | Path) -> bool:
        """Whether the run in ``folder`` wrote a checkpoint (a run stopped before its first one has none)."""
        return any(p.is_file() for p in RunFolder.checkpoint_paths_of(Path(folder) / "checkpoints"))

    def save_config(self, config: dict[str, Any]) -> None:
        """Write config.json."""
        write_atomic(self.folder / "config.json", json.dumps(config, indent=1))

    # ------------------------------------------------------------------------------------------ checkpoints
    @staticmethod
    def checkpoint_paths_of(ckpt_dir: Path) -> list[Path]:
        """The checkpoints of a run, newest first (``next.zip``: complete, but its save stopped before the renames)."""
        return [ckpt_dir / "next.zip", ckpt_dir / "latest.zip", ckpt_dir / "previous.zip"]

    def run_state(self, steps: int) -> dict[str, Any]:
        """What ``--resume`` reads back: steps, snapshots, evaluations and every session's time so far."""
        sessions = self.all_sessions(steps)
        return {"num_timesteps": steps, "snapshots": self.snapshots, "evals": self.evals, "sessions": sessions}

    def save_checkpoint(self, model: Any, steps: int) -> None:
        """Save the model with the run's state: the new file complete first, then latest -> previous -> new."""
        state = self.run_state(steps)
        tmp = self.ckpt_dir / "next.zip"
        save_checkpoint(model, tmp, run=state)  # the model's own meta, with the run's state in its training record
        if self.latest.is_file():
            os.replace(self.latest, self.previous)
        os.replace(tmp, self.latest)
        write_atomic(self.ckpt_dir / "state.json", json.dumps(state, indent=1))

    def restore(
        self, game_id: str, options: Mapping[str, Any], trust: bool = False, report: Any = print
    ) -> tuple[int, Path]:
        """Read back the newest checkpoint that loads, for ``game_id`` under ``options`` (``report`` names any
        skipped); its steps and path. An SB3 zip of an earlier version needs ``trust``."""
        problems: list[str] = []
        for path in self.checkpoint_paths_of(self.ckpt_dir):
            if not path.is_file():
                if path.name != "next.zip":  # it exists only when a save was cut short
                    problems.append(f"{path.name}: missing")
                continue
            try:
                if kind(path) == "sb3":
                    if not trust:
                        raise UnsafeCheckpointError(
                            f"{path.name} is a Stable-Baselines3 zip from an earlier version: resuming from it "
                            "unpickles Python objects, which can run any code; add --trust-checkpoint if you "
                            "trust this run folder"
                        )
                    state = read_json(self.ckpt_dir / "state.json", "--resume: the checkpoint state")
                elif not is_loadable(path):
                    raise CheckpointError(f"{path.name}: damaged (its meta.json or weights.pt does not load)")
                else:
                    meta = read_meta(path)
                    self._check_game(path, meta, game_id, options)
                    state = meta.get("training", {}).get("run")
                steps = self._restore_state(state)
            except (UnsafeCheckpointError, RunMismatchError):
                raise
            except (CheckpointError, ValueError) as e:
                problems.append(str(e))
                continue
            if problems:
                report(f"--resume: skipped {'; '.join(problems)}; resuming from {path.name} ({steps} steps)")
            return steps, path
        raise CheckpointError(f"--resume {str(self.folder)!r}: no checkpoint loads ({'; '.join(problems)})")

    def _check_game(self, path: Path, meta: Mapping[str, Any], game_id: str, options: Mapping[str, Any]) -> None:
        """``RunMismatchError`` naming both unless the checkpoint ``path`` is for ``game_id`` under ``options``."""
        run = dict(make_rules(game_id, **options).options)
        saved_game, saved_options = meta.get("game_id"), meta.get("options")
        try:
            same = saved_game == game_id and dict(make_rules(game_id, **dict(saved_options or {})).options) == run
        except (ValueError, TypeError) as e:
            raise CheckpointError(
                f"{path.name}: its meta.json names options {saved_options!r} that do not load: {e}"
            ) from None
        if not same:
            raise RunMismatchError(
                f"--resume {str(self.folder)!r}: checkpoints/{path.name} was trained on {saved_game!r} with options "
                f"{saved_options}, but the run's config.json says {game_id!r} with options {run}: the checkpoint "
                "belongs to another run (resume that run's folder, or start a new run)"
            )

    def _restore_state(self, state: Any) -> int:
        """Snapshots, evaluations and sessions from a checkpoint's run state; its steps."""
        where = "the checkpoint's run state"
        if not isinstance(state, dict):
            raise ValueError(f"{where} must be a JSON object with {', '.join(STATE_KEYS)}, got {state!r}")
        missing = [k for k in STATE_KEYS if k not in state]
        if missing:
            raise ValueError(f"{where} lacks {', '.join(missing)} (expected {', '.join(STATE_KEYS)})")
        steps, snapshots, evals = state["num_timesteps"], state["snapshots"], state["evals"]
        if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
            raise ValueError(f"{where}: num_timesteps must be a whole number >= 0, got {steps!r}")
        if not isinstance(snapshots, list) or not all(isinstance(s, str) for s in snapshots):
            raise ValueError(f"{where}: snapshots must be a list of paths, got {snapshots!r}")
        if not isinstance(evals, list) or not all(isinstance(e, dict) for e in evals):
            raise ValueError(f"{where}: evals must be a list of evaluation rows, got {evals!r}")
        sessions = state.get("sessions", [])
        self.snapshots = [self._relative(self._find_snapshot(s)) for s in snapshots]
        self.evals = list(evals)
        self.sessions = list(sessions) if isinstance(sessions, list) else []
        return steps

    def _find_snapshot(self, listed: str) -> Path:
        """Where the snapshot ``listed`` in a run state is: relative to the run folder, or (older runs) as it was
        given when saved, or in this folder's snapshots/ (a folder moved since)."""
        given = Path(listed)
        places = [given] if given.is_absolute() else [self.folder / given, given]
        places.append(self.snap_dir / given.name)
        for place in places:
            if place.is_file():
                return place
        raise MissingSnapshotError(
            f"--resume {str(self.folder)!r}: the snapshot {listed!r} that the checkpoint's opponent pool lists is "
            f"missing (looked for {', '.join(repr(str(p)) for p in places)}): put it back (a run folder moves whole)"
        )

    def _relative(self, path: Path) -> str:
        """``path`` relative to the run folder when it lies inside it (as the run state lists snapshots)."""
        try:
            return path.resolve().relative_to(self.folder.resolve()).as_posix()
        except ValueError:
            return str(path)

    def snapshot_paths(self) -> list[str]:
        """The snapshots of the opponent pool, as paths to load (relative ones joined to the run folder)."""
        return [s if Path(s).is_absolute() else str(self.folder / s) for s in self.snapshots]

    def save_snapshot(self, model: Any, steps: int, keep: int) -> str:
        """Save a frozen copy of the learner; the list keeps the ``keep`` latest. Returns its path."""
        path = self.snap_dir / f"step_{steps}.zip"
        save_checkpoint(model, path)
        self.snapshots = [*self.snapshots, f"{self.snap_dir.name}/{path.name}"][-keep:]
        return str(path)

    # ------------------------------------------------------------------------------------------ statistics
    def begin_session(self, done_steps: int) -> None:
        """Start timing this session (called once the model is ready, before ``learn``): wall clock and CPU."""
        self._session_start = (done_steps, time.perf_counter())
        self._cpu_start = (time.process_time(), children_cpu())

    def all_sessions(self, steps: int) -> list[dict[str, Any]]:
        """Earlier sessions and this one up to ``steps``."""
        start, t0 = self._session_start
        seconds = time.perf_counter() - t0
        now = {"from_steps": start, "steps": steps - start, "seconds": round(seconds, 1)}
        return [*self.sessions, now]

    def logger(self, done_steps: int) -> Any:
        """SB3's training statistics as logs/progress.csv, every session appending to it (not a temp folder)."""
        from stable_baselines3.common.logger import Logger

        logs = self.folder / "logs"
        logs.mkdir(exist_ok=True)
        return Logger(str(logs), [appending_csv(logs / "progress.csv")])

    def save_training(self, steps: int, session_steps: int, seconds: float, games: Any = None) -> None:
        """training.json: steps, every session's time, speed and CPU time, the evaluations (and a line saying so).
        ``games``, the session's vec env, is closed first: its shard workers' CPU counts once they are joined."""
        if games is not None:
            games.close()
        sessions = self.all_sessions(steps)
        total = sum(float(s.get("seconds", 0.0)) for s in sessions)
        summary = {
            "steps": steps,
            "seconds_this_session": round(seconds, 1),
            "steps_per_second": round(session_steps / seconds, 1) if seconds > 0 else None,
            "seconds_all_sessions": round(total, 1),
            "sessions": sessions,
            "evals": self.evals,
        }
        if self._cpu_start is not None:
            process, children = self._cpu_start
            cpu = {"training_process": time.process_time() - process, "shard_workers": children_cpu() - children}
            summary["cpu_seconds_this_session"] = {k: round(float(v), 2) for k, v in cpu.items()}
        write_atomic(self.folder / "training.json", json.dumps(summary, indent=1))
        if seconds > 0:
            rate = session_steps / seconds
            print(
                f"trained {session_steps} steps in {seconds:.0f} s ({rate:.0f} steps/s); model: {self.folder}/final.zip"
            )


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's ended and joined child processes (0 where unknown)."""
    try:
        import resource
    except ImportError:  # not on Windows
        return 0.0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return float(usage.ru_utime + usage.ru_stime)


def appending_csv(path: Path) -> Any:
    """SB3's CSV output appending to ``path``: its header read back, a row cut short by a kill dropped."""
    from stable_baselines3.common.logger import CSVOutputFormat

    class AppendingCSV(CSVOutputFormat):
        def __init__(self, path: Path) -> None:
            self.separator = ","
            self.quotechar = '"'
            self.keys: list[str] = []
            if not path.is_file():
                self.file = open(path, "w+", encoding="utf-8")  # noqa: SIM115 - SB3 closes it (close())
                return
            data = path.read_bytes()
            if data and not data.endswith(b"\n"):
                with open(path, "r+b") as f:
                    f.truncate(data.rfind(b"\n") + 1)
            self.file = open(path, "r+", encoding="utf-8")  # noqa: SIM115 - SB3 closes it (close())
            header = self.file.readline().rstrip("\n")
            self.keys = header.split(self.separator) if header else []
            self.file.seek(0, os.SEEK_END)

    return AppendingCSV(path)
