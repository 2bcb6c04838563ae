"""A training run's folder: config.json, checkpoints, snapshots, PPO's statistics and training.json.

Layout: ``config.json`` (the resolved config), ``checkpoints/latest.zip`` and ``checkpoints/state.json``
(steps done, snapshots, evaluations: what ``--resume`` reads back), ``checkpoints/initial.zip`` (the
starting policy, with a prior or ``--init``), ``snapshots/step_N.zip`` (the learner's frozen copies),
``logs/progress.csv`` (SB3's statistics), ``final.zip`` and ``training.json`` at the end.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class RunFolder:
    """The files of one training run, and the snapshots and evaluations recorded so far."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.ckpt_dir = self.folder / "checkpoints"
        self.snap_dir = self.folder / "snapshots"
        self.ckpt_dir.mkdir(parents=True, exist_ok=True)
        self.snap_dir.mkdir(parents=True, exist_ok=True)
        self.snapshots: list[str] = []
        self.evals: list[dict[str, Any]] = []

    @staticmethod
    def saved_config(folder: str | Path, game_id: str) -> dict[str, Any]:
        """The config.json of an existing run folder of ``game_id``; a clear error if it is not one."""
        path = Path(folder)
        if not (path / "config.json").is_file() or not (path / "checkpoints" / "state.json").is_file():
            raise FileNotFoundError(
                f"--resume {str(folder)!r}: no config.json and checkpoints/state.json there "
                "(not a training run folder?)"
            )
        config: dict[str, Any] = json.loads((path / "config.json").read_text(encoding="utf-8"))
        if config.get("game") != game_id:
            raise ValueError(f"--resume {str(folder)!r} is a {config.get('game')!r} run, not {game_id!r}")
        return config

    def save_config(self, config: dict[str, Any]) -> None:
        """Write config.json."""
        (self.folder / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")

    def restore(self) -> int:
        """Read back the snapshots and evaluations of the last checkpoint; the steps done by then."""
        state = json.loads((self.ckpt_dir / "state.json").read_text(encoding="utf-8"))
        self.snapshots = [s for s in state["snapshots"] if Path(s).exists()]
        self.evals = state["evals"]
        return int(state["num_timesteps"])

    @property
    def latest(self) -> Path:
        """The last checkpoint's model."""
        return self.ckpt_dir / "latest.zip"

    @property
    def initial(self) -> Path:
        """The starting policy's model (written with a prior or ``--init``)."""
        return self.ckpt_dir / "initial.zip"

    def save_checkpoint(self, model: Any, steps: int) -> None:
        """The model and the state that ``--resume`` needs (state.json replaced atomically)."""
        model.save(str(self.latest))
        state = {"num_timesteps": steps, "snapshots": self.snapshots, "evals": self.evals}
        tmp = self.ckpt_dir / "state.json.tmp"
        tmp.write_text(json.dumps(state, indent=1), encoding="utf-8")
        tmp.replace(self.ckpt_dir / "state.json")

    def save_snapshot(self, model: Any, steps: int, keep: int) -> str:
        """Save a frozen copy of the learner; the list keeps the ``keep`` latest. Returns its path."""
        path = str(self.snap_dir / f"step_{steps}.zip")
        model.save(path)
        self.snapshots = [*self.snapshots, path][-keep:]
        return path

    def logger(self, done_steps: int) -> Any:
        """SB3's training statistics (losses, entropy, KL, clip fraction, explained variance) as logs/progress.csv.

        Without it SB3 leaves a folder in the system's temp directory for every run. A resumed run keeps
        the earlier session's file as progress.until-STEPS.csv.
        """
        from stable_baselines3.common.logger import configure

        logs = self.folder / "logs"
        logs.mkdir(exist_ok=True)
        if (logs / "progress.csv").exists() and done_steps:
            (logs / "progress.csv").replace(logs / f"progress.until-{done_steps}.csv")
        return configure(str(logs), ["csv"])

    def save_training(self, steps: int, session_steps: int, seconds: float) -> None:
        """training.json: steps in all, this session's time and speed, the evaluations (and a line saying so)."""
        summary = {
            "steps": steps,
            "seconds_this_session": round(seconds, 1),
            "steps_per_second": round(session_steps / seconds, 1) if seconds > 0 else None,
            "evals": self.evals,
        }
        (self.folder / "training.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
        if seconds > 0:
            rate = session_steps / seconds
            print(
                f"trained {session_steps} steps in {seconds:.0f} s ({rate:.0f} steps/s); model: {self.folder}/final.zip"
            )
