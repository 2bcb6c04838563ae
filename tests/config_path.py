"""The path a training run's config takes through the source files: files entered, climbs back up, returns.

``python -m tests.config_path`` traces one tiny ``experiments.train`` run (``--command dmc``: an
``experiments.dmc`` run) under ``sys.setprofile``, recording the first call of every project function in call order.
Consecutive calls in one file make a *stay*; a stay in a file already left is a *return*; a stay in a higher layer
(``jericho_env`` < ``agents`` < ``experiments``) than the one before is a *climb back up*, and a call from a lower
layer's code into a higher one's is a *call up*. It prints the files in the order first entered, how often each was
entered, and the totals (``--engine``: the engine's own files too); ``tests/test_regroup.py`` bounds them.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import itertools
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"jericho_env": 0, "agents": 1, "experiments": 2}
IMPORT_MACHINERY = ("agents/_pickled_paths.py",)  # the pickled paths' finder, asked by imports, not by the run
TINY = {"timesteps": 256, "n_envs": 4, "shards": 1, "n_steps": 64, "batch_size": 128, "n_epochs": 1}
TINY_EVERY = {"snapshot_every": 128, "eval_every": 256, "checkpoint_every": 128, "eval_deals": 2}
DMC_TINY = {"positions": 600, "envs": 8, "rounds": 8, "buffer": 2000, "batch_size": 64, "net": "16"}
DMC_TINY_EVERY = {"eval_every": 600, "eval_deals": 1}


@dataclasses.dataclass
class ConfigPath:
    """The stays of a traced run: ``(file relative to the project, first functions called there)``."""

    stays: list[tuple[str, list[str]]]
    calls_up: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)  # (caller, callee, function)

    @property
    def files(self) -> list[str]:
        """Every file entered, in the order first entered."""
        return list(dict.fromkeys(f for f, _ in self.stays))

    @property
    def entered(self) -> Counter[str]:
        """How many stays each file has."""
        return Counter(f for f, _ in self.stays)

    @property
    def climbs(self) -> int:
        """Stays in a higher layer than the stay before them."""
        levels = [_layer(f) for f, _ in self.stays]
        return sum(b > a for a, b in itertools.pairwise(levels))

    def without(self, prefixes: tuple[str, ...]) -> ConfigPath:
        """The same path with the files under ``prefixes`` left out (the stays around them joined)."""
        out = ConfigPath([], [c for c in self.calls_up if not c[1].startswith(prefixes)])
        for file, functions in self.stays:
            if file.startswith(prefixes):
                continue
            if out.stays and out.stays[-1][0] == file:
                out.stays[-1][1].extend(functions)
            else:
                out.stays.append((file, list(functions)))
        return out

    @property
    def returns(self) -> int:
        """Stays in a file that an earlier stay already left."""
        return len(self.stays) - len(self.files)

    def summary(self) -> str:
        """The totals in one line."""
        return (
            f"{len(self.files)} files, {len(self.stays)} stays, {self.climbs} climbs back up, "
            f"{self.returns} returns to a file already left, {len(self.calls_up)} calls up"
        )


def _project_file(code_file: str) -> str | None:
    """The path relative to the project of a project source file, else None."""
    try:
        rel = Path(code_file).resolve().relative_to(ROOT)
    except ValueError:
        return None
    name = rel.as_posix()
    return name if rel.parts[0] in LAYERS and name not in IMPORT_MACHINERY else None


def trace(run: Callable[[], Any]) -> ConfigPath:
    """The stays of the first calls of project functions while ``run()`` runs (in this thread)."""
    seen: set[Any] = set()
    path = ConfigPath([])

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or frame.f_code in seen:
            return
        seen.add(frame.f_code)
        name = _project_file(frame.f_code.co_filename)
        # module and class bodies (run by an import, not by the run), comprehensions and lambdas are not calls
        if name is None or not frame.f_code.co_flags & inspect.CO_OPTIMIZED or frame.f_code.co_name.startswith("<"):
            return
        if path.stays and path.stays[-1][0] == name:
            path.stays[-1][1].append(frame.f_code.co_name)
        else:
            path.stays.append((name, [frame.f_code.co_name]))
        caller = _project_caller(frame.f_back)
        if caller is not None and _layer(caller) < _layer(name):
            path.calls_up.append((caller, name, frame.f_code.co_name))

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return path


def _layer(file: str) -> int:
    return LAYERS[file.split("/")[0]]


def _project_caller(frame: FrameType | None) -> str | None:
    """The project file of the nearest frame below ``frame`` that is the project's (library frames skipped)."""
    while frame is not None:
        name = _project_file(frame.f_code.co_filename)
        if name is not None:
            return name
        frame = frame.f_back
    return None


ENGINE_INTERNALS = ("jericho_env/games/", "jericho_env/core/")


def traced_train(game: str = "castles", learn: bool = True) -> ConfigPath:
    """The config's path through one tiny ``experiments.train`` run of ``game`` (from the flags to final.zip);
    ``learn=False``: the set-up and the saves alone (PPO's ``learn`` returns at once)."""
    from unittest import mock

    from experiments import train

    flags = [f"--{k.replace('_', '-')}={v}" for k, v in {**TINY, **TINY_EVERY}.items()]
    args = train.build_parser().parse_args([game, *flags, "--quiet"])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "run"

        def run() -> None:
            cfg = train.config_from_args(args, game)
            train.train(cfg, folder, quiet=True)

        if learn:
            return trace(run)
        from sb3_contrib import MaskablePPO

        with mock.patch.object(MaskablePPO, "learn", lambda model, *a, **k: model):
            return trace(run)


def traced_dmc(game: str = "castles") -> ConfigPath:
    """The config's path through one tiny ``experiments.dmc`` run of ``game``: from the flags to final.zip and its
    evaluation (the command's ``main``, as a user runs it)."""
    from experiments import dmc

    flags = [f"--{k.replace('_', '-')}={v}" for k, v in {**DMC_TINY, **DMC_TINY_EVERY}.items()]
    with tempfile.TemporaryDirectory() as tmp:
        argv = [game, *flags, "--quiet", "--out", str(Path(tmp) / "run")]
        return trace(lambda: dmc.main(argv))


def main(argv: list[str] | None = None) -> int:
    """Command line: trace a tiny run and print its path."""
    p = argparse.ArgumentParser(prog="python -m tests.config_path", description=__doc__.splitlines()[0])
    p.add_argument("game", nargs="?", default="castles", help="the game to train (default castles)")
    p.add_argument(
        "--command",
        choices=("train", "dmc"),
        default="train",
        help="whose run to trace: experiments.train's (PPO) or experiments.dmc's (Deep Monte-Carlo)",
    )
    p.add_argument("--stays", action="store_true", help="print every stay with the functions first called there")
    p.add_argument("--engine", action="store_true", help="count the rules' and kernels' files too")
    p.add_argument("--setup-only", action="store_true", help="the set-up and saves alone (no games, no updates)")
    args = p.parse_args(argv)
    if args.command == "dmc":
        if args.setup_only:
            p.error("--setup-only is for --command train")
        path = traced_dmc(args.game)
    else:
        path = traced_train(args.game, learn=not args.setup_only)
    if not args.engine:
        path = path.without(ENGINE_INTERNALS)
    if args.stays:
        for file, functions in path.stays:
            print(f"{file}: {', '.join(functions)}")
        for caller, callee, function in path.calls_up:
            print(f"up: {caller} -> {callee}:{function}")
    for file in path.files:
        print(f"{path.entered[file]:3d}  {file}")
    print(path.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
