"""Training sweeps: every seed of every configuration as one ``experiments.train`` run, then one combined table.

``python -m experiments.sweep GAME --seeds 0,1,2 [--grid KEY=V1,V2 ...] [-- TRAIN FLAGS]``. A trial is one seed
of one point of the grid (the product of the ``--grid`` lists), run by ``experiments.train.main`` in its own run
folder ``OUT/<trial>``; ``OUT/sweep.json`` and ``OUT/sweep.md`` then hold each trial's PPO against the baselines
with 95% Wilson intervals, and per configuration the mean across its seeds.

``--backend local`` runs the trials one after another in this process; ``--backend ray`` runs each as a plain Ray
task of ``--cpus-per-trial`` CPUs (not Ray Tune: docs/ray.md says why). A trial trained on a node that does not
see OUT sends its run folder back as bytes. A failed trial makes the exit status 1; rerunning the same command
skips the finished trials, resumes the unfinished ones and retries the failed ones.

Examples:
    python -m experiments.sweep castles --seeds 0,1,2 --timesteps 200000
    python -m experiments.sweep castles --seeds 0,1 --grid learning_rate=3e-4,1e-3 --backend ray
    python -m experiments.sweep grid --seeds 0,1 --backend ray --ray-address 10.0.0.1:6379 -- --final-deals 500
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import itertools
import json
import os
import re
import secrets
import shutil
import socket
import sys
import tempfile
import time
import traceback
import zipfile
from pathlib import Path
from typing import Any

from agents.registry import baselines
from experiments import train
from experiments.cli import cap_workers, cli_parser, positive_int, progress_bar, run_cli, training_seed
from experiments.play.backends import (
    Backend,
    BackendError,
    add_backend_flags,
    backend_from_args,
    get_result,
    ray_session,
)
from experiments.play.report import run_folder, write_file
from jericho_env.registry import known_game_ids

OWNED = ("--seed", "--out", "--resume", "--quiet", "--backend", "--ray-address")  # flags the sweep sets itself
TOKEN = ".sweep-token"  # in OUT: a worker that can read it sees OUT itself (same machine, or a shared file system)


@dataclasses.dataclass(frozen=True)
class Trial:
    """One seed of one configuration: its folder name, seed and grid values (train flag -> value text)."""

    name: str
    seed: int
    params: dict[str, str]

    @property
    def config(self) -> str:
        """The configuration without the seed, as text (``default`` without a grid)."""
        return " ".join(f"{k}={v}" for k, v in self.params.items()) or "default"


def parse_seeds(text: str) -> list[int]:
    """``"0,1,2"`` -> [0, 1, 2] for argparse; each a training seed (0..2**32-1), none twice."""
    try:
        seeds = [training_seed(s) for s in text.split(",")]
    except argparse.ArgumentTypeError as e:
        raise argparse.ArgumentTypeError(f"{e} (seeds are separated by commas)") from None
    if len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"a seed appears twice in {text!r}")
    return seeds


def parse_grid(text: str) -> tuple[str, list[str]]:
    """``KEY=V1,V2`` -> (``--key``, [V1, V2]) for argparse; values split on ``;`` instead when the text has one."""
    key, sep, values = text.partition("=")
    if not sep or not key or not values:
        raise argparse.ArgumentTypeError(f"expected KEY=V1,V2 (a train flag and its values), got {text!r}")
    parts = values.split(";" if ";" in values else ",")
    if any(not v for v in parts) or len(set(parts)) != len(parts):
        raise argparse.ArgumentTypeError(f"{text!r}: values must be non-empty and distinct")
    return "--" + key.lstrip("-").replace("_", "-"), parts


def check_grid_key(flag: str) -> None:
    """``ValueError`` unless ``flag`` is an ``experiments.train`` flag taking one value that the sweep does not own."""
    actions = train.build_parser()._option_string_actions
    single = [f for f, a in actions.items() if f.startswith("--") and a.nargs is None and f not in OWNED]
    single = [f for f in single if not isinstance(actions[f], argparse._AppendAction) and actions[f].const is None]
    if flag in OWNED:
        raise ValueError(f"--grid {flag[2:]}: the sweep sets {flag} itself (--seeds, --out, --backend)")
    if flag not in single:
        known = ", ".join(sorted(f[2:] for f in single if f != "--help"))
        raise ValueError(f"--grid {flag[2:]}: not a flag of experiments.train with one value; these are: {known}")


def make_trials(seeds: list[int], grid: list[tuple[str, list[str]]]) -> list[Trial]:
    """Every seed of every point of the grid, configuration by configuration."""
    keys = [k for k, _ in grid]
    if len(set(keys)) != len(keys):
        raise ValueError(f"--grid names a flag twice: {', '.join(k[2:] for k in keys)}")
    trials = []
    for values in itertools.product(*(v for _, v in grid)):
        params = {k[2:]: v for k, v in zip(keys, values, strict=True)}
        for seed in seeds:
            name = "_".join([*(f"{k}={v}" for k, v in params.items()), f"seed={seed}"])
            trials.append(Trial(re.sub(r"[^A-Za-z0-9.,=+-]", "_", name), seed, params))
    names = [t.name for t in trials]
    if len(set(names)) != len(names):
        raise ValueError("two trials get the same folder name: give grid values that differ in letters or digits")
    return trials


def trial_argv(game: str, trial: Trial, folder: Path, common: list[str], backend: Backend, resume: bool) -> list[str]:
    """The ``experiments.train`` command line of ``trial`` (``--resume`` when its run folder holds a run)."""
    argv = [game, "--seed", str(trial.seed), "--resume" if resume else "--out", str(folder), "--quiet"]
    for k, v in trial.params.items():
        argv += [f"--{k}", v]
    argv += [*common, "--backend", backend.name]
    if backend.address:
        argv += ["--ray-address", backend.address]
    return argv


def check_trials(game: str, trials: list[Trial], common: list[str]) -> None:
    """Every trial's train command line parsed and resolved (``experiments.train``) before any work."""
    for flag in OWNED:
        if any(a == flag or a.startswith(flag + "=") for a in common):
            raise ValueError(f"{flag} after --: the sweep sets it itself (--seeds, --out, --backend)")
    for trial in trials:
        argv = trial_argv(game, trial, Path("unused"), common, Backend(), resume=False)
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                args = train.build_parser().parse_args(argv)
        except SystemExit:
            said = err.getvalue().strip().splitlines()
            why = said[-1].split("error: ", 1)[-1] if said else "see above"
            raise ValueError(f"trial {trial.name}: experiments.train refuses its flags: {why}") from None
        train.config_from_args(args, game)


# ------------------------------------------------------------------------------------------------- one trial
def run_trial(job: dict[str, Any]) -> dict[str, Any]:
    """Run one trial (here, or inside a Ray worker): ``experiments.train.main`` with its output in ``train.log``.

    The run folder is ``OUT/<trial>`` when this process sees OUT (the token matches), else a temporary folder
    returned as zip bytes (``"folder_zip"``). Errors become ``status: failed``.
    """
    out = Path(job["out"])
    shared = (out / TOKEN).is_file() and (out / TOKEN).read_text(encoding="utf-8") == job["token"]
    base = out if shared else Path(tempfile.gettempdir()) / "jericho-sweep" / job["token"]
    folder = base / job["trial"]["name"]
    folder.mkdir(parents=True, exist_ok=True)
    trial = Trial(**job["trial"])
    resume = (folder / "config.json").is_file()  # an unfinished run of this trial: continue it
    argv = trial_argv(job["game"], trial, folder, job["common"], Backend(**job["backend"]), resume)
    t0 = time.perf_counter()
    status, error = "done", None
    with open(folder / "train.log", "a", encoding="utf-8") as log:
        print(f"# {time.strftime('%Y-%m-%d %H:%M:%S')} on {socket.gethostname()}: experiments.train {argv}", file=log)
        log.flush()
        try:
            with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                code = train.main(argv)
            if code == 130:
                raise KeyboardInterrupt
            if code:
                status, error = "failed", f"experiments.train exited with status {code}"
        except SystemExit as e:  # argparse's one-line errors (already in the log): the last one
            said = [ln for ln in (folder / "train.log").read_text(encoding="utf-8").splitlines() if "error:" in ln]
            why = said[-1].split("error:", 1)[1].strip() if said else "see train.log"
            status, error = "failed", f"experiments.train exited with status {e.code}: {why}"
        except Exception as e:
            traceback.print_exc(file=log)
            status, error = "failed", f"{type(e).__name__}: {' '.join(str(e).split())}"
        if status == "done" and not (folder / "tournament" / "results.json").is_file():
            status, error = "failed", "experiments.train ended without tournament/results.json"
    result: dict[str, Any] = {
        "status": status,
        "error": error,
        "seconds": round(time.perf_counter() - t0, 1),
        "host": socket.gethostname(),
        "resumed": resume,
        "folder_zip": None if shared else pack(folder),
    }
    if not shared and status == "done":
        shutil.rmtree(folder, ignore_errors=True)
    return result


def pack(folder: Path) -> bytes:
    """A run folder as zip bytes (to send it back from a node that does not see OUT)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zf.write(path, path.relative_to(folder).as_posix())
    return buf.getvalue()


def unpack(data: bytes, folder: Path) -> None:
    """Replace ``folder`` with the run folder in ``data`` (extracted beside it, then renamed)."""
    incoming = folder.with_name(f".{folder.name}.incoming")
    shutil.rmtree(incoming, ignore_errors=True)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for name in zf.namelist():
            if name.startswith("/") or ".." in Path(name).parts:
                raise BackendError(f"a trial sent back a run folder with the unsafe member {name!r}")
        zf.extractall(incoming)
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(incoming, folder)


# ---------------------------------------------------------------------------------------------- the sweep
def trial_record(folder: Path) -> dict[str, Any] | None:
    """The ``trial.json`` of a trial folder, or None."""
    try:
        data = json.loads((folder / "trial.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def is_finished(folder: Path) -> bool:
    """Whether a trial folder holds a finished trial: ``trial.json`` says done and the final table exists."""
    record = trial_record(folder)
    return bool(record and record.get("status") == "done" and (folder / "tournament" / "results.json").is_file())


def sweep(
    game: str,
    seeds: list[int],
    grid: list[tuple[str, list[str]]],
    common: list[str],
    out: str | None = None,
    backend: Backend | None = None,
    workers: int | None = None,
    cpus_per_trial: int = 1,
    quiet: bool = False,
) -> dict[str, Any]:
    """Run the trials not yet finished in ``out``, then write and return the combined table (``sweep.json``)."""
    backend = backend or Backend()
    if game not in known_game_ids():
        raise ValueError(f"unknown game {game!r}; choose one of {', '.join(known_game_ids())}")
    for flag, _ in grid:
        check_grid_key(flag)
    trials = make_trials(seeds, grid)
    check_trials(game, trials, common)
    check_cpus(backend, workers, cpus_per_trial)
    root = run_folder("sweep", game, out).resolve()
    token_file = root / TOKEN
    if not token_file.is_file():
        write_file(token_file, secrets.token_hex(16))
    token = token_file.read_text(encoding="utf-8")
    todo = []
    for trial in trials:
        folder = root / trial.name
        record = trial_record(folder)
        if record and record.get("common") != common:
            raise ValueError(
                f"{folder} holds trial {trial.name} run with other flags after -- ({record.get('common')}); "
                f"this sweep gives {common}: use another --out"
            )
        if not is_finished(folder):
            todo.append(trial)
    print(f"sweep {game}: {len(trials)} trials, {len(trials) - len(todo)} finished already; run folder {root}/")
    job = {"game": game, "common": common, "backend": dataclasses.asdict(backend), "out": str(root), "token": token}
    jobs = [{**job, "trial": dataclasses.asdict(t)} for t in todo]
    for t in todo:
        write_status(root / t.name, t, common, {"status": "running"})
    bar = progress_bar(len(todo), f"sweep {game}", quiet, unit="trial")
    try:
        if backend.is_ray and jobs:  # nothing left to run: no Ray to start
            run_on_ray(jobs, root, backend, ray_cpus(backend, workers, cpus_per_trial, len(jobs)), cpus_per_trial, bar)
        else:
            for job in jobs:
                finish(root, job, run_trial(job))
                bar.update(1)
    finally:
        bar.close()
    return combined_table(game, trials, root, backend)


def local_ray(backend: Backend) -> bool:
    """Whether ``backend`` starts a Ray of its own on this machine (no cluster address given, nor ``RAY_ADDRESS``)."""
    return backend.is_ray and not (backend.address or os.environ.get("RAY_ADDRESS"))


def check_cpus(backend: Backend, workers: int | None, cpus_per_trial: int) -> None:
    """``ValueError`` if a trial needs more CPUs than the local Ray will have (no trial would ever start)."""
    cores = os.cpu_count() or 1
    if local_ray(backend) and cpus_per_trial > min(workers or cores, cores):
        raise ValueError(
            f"--cpus-per-trial {cpus_per_trial} is more than the {min(workers or cores, cores)} CPU(s) of the local "
            f"Ray (--workers, at most this machine's {cores} cores): no trial could start"
        )


def ray_cpus(backend: Backend, workers: int | None, cpus_per_trial: int, trials: int) -> int:
    """The CPUs of Ray for ``trials`` trials: ``--workers`` (default the cores), for a local Ray capped by the cores
    and by what the trials can use (a note when ``--workers`` is capped); a cluster gets ``workers`` unchanged."""
    cores = os.cpu_count() or 1
    if not local_ray(backend):
        return workers or cores
    usable = trials * cpus_per_trial
    if workers is None:
        return max(cpus_per_trial, min(cores, usable))
    return cap_workers(workers, usable, "CPUs the trials can use (trials x --cpus-per-trial)")


def write_status(folder: Path, trial: Trial, common: list[str], result: dict[str, Any]) -> None:
    """Write the trial's ``trial.json``: its arguments and, after it ran, its status."""
    folder.mkdir(parents=True, exist_ok=True)
    record = {**dataclasses.asdict(trial), "common": common, **{k: v for k, v in result.items() if k != "folder_zip"}}
    write_file(folder / "trial.json", json.dumps(record, indent=1))


def finish(root: Path, job: dict[str, Any], result: dict[str, Any]) -> None:
    """Keep a trial's outcome in OUT: its run folder (when it was trained elsewhere) and ``trial.json``."""
    trial = Trial(**job["trial"])
    folder = root / trial.name
    if result.get("folder_zip"):
        unpack(result["folder_zip"], folder)
    write_status(folder, trial, job["common"], result)
    if result["status"] != "done":
        print(f"trial {trial.name} failed: {result['error']} (log: {folder / 'train.log'})", file=sys.stderr)


def run_on_ray(jobs: list[dict[str, Any]], root: Path, backend: Backend, workers: int, cpus: int, bar: Any) -> None:
    """Each job a Ray task of ``cpus`` CPUs; a task lost past its retries becomes a failed trial."""
    with ray_session(backend, workers) as ray:
        remote = ray.remote(run_trial).options(num_cpus=cpus, max_retries=backend.retries, retry_exceptions=False)
        refs = {remote.remote(job): job for job in jobs}
        pending = list(refs)
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                for ref in ready:
                    job = refs[ref]
                    try:
                        result = get_result(ray, ref, backend, f"trial {job['trial']['name']}")
                    except BackendError as e:
                        result = {"status": "failed", "error": str(e), "seconds": None, "host": None}
                    finish(root, job, result)
                    bar.update(1)
        except BaseException:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise


# --------------------------------------------------------------------------------------------- the table
def trial_cells(folder: Path, opponents: list[str]) -> dict[str, dict[str, Any]]:
    """PPO's record against each opponent, from the trial's ``tournament/results.json``."""
    data = json.loads((folder / "tournament" / "results.json").read_text(encoding="utf-8"))
    cells = {c["opponent"]: c for c in data["cells"] if c["agent"] == "ppo"}
    games = {o: c["wins"] + c["draws"] + c["losses"] for o, c in cells.items()}
    return {
        o: {"win_rate": cells[o]["win_rate"], "ci95": cells[o]["ci95"], "games": games[o]}
        for o in opponents
        if o in cells
    }


def combined_table(game: str, trials: list[Trial], root: Path, backend: Backend) -> dict[str, Any]:
    """``sweep.json`` and ``sweep.md`` in ``root``: every trial against the baselines, then the means across seeds."""
    opponents = baselines(game)
    rows = []
    for t in trials:
        folder = root / t.name
        record = trial_record(folder) or {}
        row: dict[str, Any] = {
            "trial": t.name,
            "config": t.config,
            "seed": t.seed,
            "params": t.params,
            "status": "done" if is_finished(folder) else record.get("status", "missing"),
            "error": record.get("error"),
            "seconds": record.get("seconds"),
            "host": record.get("host"),
            "folder": str(folder),
        }
        row["vs"] = trial_cells(folder, opponents) if row["status"] == "done" else {}
        rows.append(row)
    configs = []
    for config in dict.fromkeys(r["config"] for r in rows):
        mine = [r for r in rows if r["config"] == config]
        done = [r for r in mine if r["status"] == "done"]
        summary: dict[str, Any] = {"config": config, "seeds": len(mine), "seeds_done": len(done), "vs": {}}
        for o in opponents:
            rates = [r["vs"][o]["win_rate"] for r in done if o in r["vs"]]
            if rates:
                summary["vs"][o] = {"mean": sum(rates) / len(rates), "min": min(rates), "max": max(rates)}
        configs.append(summary)
    data = {"game": game, **backend.describe(), "opponents": opponents, "trials": rows, "configs": configs}
    table = markdown(game, opponents, rows, configs)
    write_file(root / "sweep.json", json.dumps(data, indent=1))
    write_file(root / "sweep.md", table + "\n")
    return {"table": table, "folder": root, "failed": [r["trial"] for r in rows if r["status"] != "done"], **data}


def markdown(game: str, opponents: list[str], rows: list[dict[str, Any]], configs: list[dict[str, Any]]) -> str:
    """The combined table: one line per trial, then one per configuration (mean of its seeds, lowest and highest)."""

    def pct(x: float) -> str:
        return f"{100 * x:.1f}%"

    lines = [f"# {game}: sweep", "", "| trial | status | " + " | ".join(f"ppo vs {o}" for o in opponents) + " |"]
    lines.append("|" + " --- |" * (2 + len(opponents)))
    for r in rows:
        if r["status"] == "done":
            cells = [f"{pct(c['win_rate'])} [{pct(c['ci95'][0])}, {pct(c['ci95'][1])}]" for c in r["vs"].values()]
            lines.append(f"| {r['trial']} | done | " + " | ".join(cells) + " |")
        else:
            why = f"{r['status']}: {r['error']}" if r["error"] else r["status"]
            lines.append(f"| {r['trial']} | {why} | " + " | ".join("—" for _ in opponents) + " |")
    lines += ["", "Cells: PPO's score (wins + ½ draws) per game in its final table, with the 95% Wilson interval.", ""]
    lines.append(
        "| configuration | seeds done | " + " | ".join(f"mean vs {o} [lowest, highest seed]" for o in opponents) + " |"
    )
    lines.append("|" + " --- |" * (2 + len(opponents)))
    for c in configs:
        cells = [
            f"{pct(v['mean'])} [{pct(v['min'])}, {pct(v['max'])}]" if (v := c["vs"].get(o)) else "—" for o in opponents
        ]
        lines.append(f"| {c['config']} | {c['seeds_done']} / {c['seeds']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------- the CLI
def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    p = cli_parser("experiments.sweep", __doc__)
    p.add_argument("game", help=f"which game: {', '.join(known_game_ids())}")
    p.add_argument("--seeds", type=parse_seeds, default=[0, 1, 2], help="seeds, comma-separated (default 0,1,2)")
    p.add_argument(
        "--grid",
        type=parse_grid,
        action="append",
        default=[],
        metavar="KEY=V1,V2",
        help="an experiments.train flag and its values (repeatable: the product); ';' separates values with commas",
    )
    p.add_argument("--timesteps", type=positive_int, default=None, help="learner steps of every trial")
    p.add_argument("--out", default=None, help="sweep folder (default runs/sweep/GAME-TIME); rerun it to finish it")
    p.add_argument("--workers", type=positive_int, default=None, help="CPUs of a local Ray (default: this machine's)")
    p.add_argument("--cpus-per-trial", type=positive_int, default=1, help="CPUs Ray reserves per trial (default 1)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_backend_flags(p)
    p.usage = "%(prog)s GAME [options] [-- flags for every experiments.train run]"
    return p


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: 0 when every trial finished, 1 when some failed, 2 on bad input."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    common = argv[cut + 1 :]  # after --: experiments.train's flags, for every trial
    if args.timesteps is not None:
        common = ["--timesteps", str(args.timesteps), *common]
    outcome: dict[str, Any] = {}

    def run() -> None:
        backend = backend_from_args(args)
        if args.workers is not None and not backend.is_ray:
            raise ValueError("--workers sets the CPUs of a local Ray (--backend ray); local trials run one by one")
        settings = (args.out, backend, args.workers, args.cpus_per_trial, args.quiet)
        outcome.update(sweep(args.game, args.seeds, args.grid, common, *settings))

    code = run_cli(parser, run)
    if code or not outcome:
        return code
    print()
    print(outcome["table"])
    print(f"\noutputs in {outcome['folder']}/ (sweep.json, sweep.md, one run folder per trial)")
    if outcome["failed"]:
        print(f"{len(outcome['failed'])} trial(s) not finished: {', '.join(outcome['failed'])}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
