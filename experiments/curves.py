"""Draw the learning curves of training runs, also while they are still training.

``python -m experiments.curves RUN_FOLDER [RUN_FOLDER ...]`` writes ``learning_curves.png`` into each
run folder of ``experiments.train`` (the evaluations against greedy with their 95% intervals, the
policy entropy and the value head's explained variance, from ``training.json`` or the latest
checkpoint's ``state.json`` and ``logs/progress.csv``) and prints its path. ``experiments.train``
draws it by itself at the end of a run.

Examples:
    python -m experiments.curves runs/train/castles-20261129-210000
    python -m experiments.curves runs/train/*
"""

from __future__ import annotations

import sys
from pathlib import Path

from experiments.cli import cli_parser, run_cli
from experiments.play.report import exit_curves, learning_curves


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = cli_parser("experiments.curves", __doc__)
    parser.add_argument(
        "runs", nargs="+", metavar="RUN_FOLDER", help="folders written by experiments.train or experiments.exit"
    )
    args = parser.parse_args(argv)

    def run() -> None:
        for run_dir in args.runs:
            path = Path(run_dir)
            if not (path / "config.json").is_file():
                raise FileNotFoundError(
                    f"{run_dir!r} is not a training run folder (no config.json; see experiments.train)"
                )
            out = exit_curves(path) if (path / "exit.json").is_file() else learning_curves(path)
            print(out if out else f"{run_dir}: nothing to plot yet (no evaluation or update so far)")

    return run_cli(parser, run)


if __name__ == "__main__":
    sys.exit(main())
