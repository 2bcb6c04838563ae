"""Draw the learning curves of training runs, also while they are still training.

``python -m experiments.curves RUN_FOLDER [RUN_FOLDER ...]`` writes ``learning_curves.png`` into each
run folder of ``experiments.train`` (the evaluations against greedy with their 95% intervals, the
policy entropy and the value head's explained variance, from ``training.json`` or the latest
checkpoint's ``state.json`` and ``logs/progress.csv``), of ``experiments.exit`` and of ``experiments.dmc``
(its evaluations over positions generated), and prints its path. ``experiments.train`` draws it by itself at
the end of a run. ``--together OUT.png`` draws the given dmc runs in one picture (seeds side by side).

Examples:
    python -m experiments.curves runs/train/castles-20261129-210000
    python -m experiments.curves runs/train/*
    python -m experiments.curves runs/dmc/castles-* --together castles-dmc.png
"""

from __future__ import annotations

import sys
from pathlib import Path

from experiments.cli import cli_parser, run_cli
from experiments.play.report import dmc_curves, exit_curves, is_dmc_run, learning_curves


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = cli_parser("experiments.curves", __doc__)
    parser.add_argument(
        "runs", nargs="+", metavar="RUN_FOLDER", help="folders written by experiments.train, .exit or .dmc"
    )
    parser.add_argument("--together", default=None, metavar="OUT.png", help="dmc runs: one picture of them all")
    args = parser.parse_args(argv)

    def run() -> None:
        if args.together is not None:
            folders = [Path(r) for r in args.runs]
            odd = [str(f) for f in folders if not is_dmc_run(f)]
            if odd:
                raise ValueError(f"--together draws experiments.dmc run folders; not one: {', '.join(odd)}")
            out = dmc_curves(folders, Path(args.together))
            print(out if out else "nothing to plot yet (no evaluation so far)")
            return
        for run_dir in args.runs:
            path = Path(run_dir)
            if not (path / "config.json").is_file():
                raise FileNotFoundError(
                    f"{run_dir!r} is not a training run folder (no config.json; see experiments.train)"
                )
            if (path / "exit.json").is_file():
                out = exit_curves(path)
            elif is_dmc_run(path):
                out = dmc_curves([path])
            else:
                out = learning_curves(path)
            print(out if out else f"{run_dir}: nothing to plot yet (no evaluation or update so far)")

    return run_cli(parser, run)


if __name__ == "__main__":
    sys.exit(main())
