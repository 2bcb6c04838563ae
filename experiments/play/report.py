"""Tournament outputs: the Markdown and CSV tables, results.json and the win-rate heatmap."""

from __future__ import annotations

import csv
import dataclasses
import importlib.util
import io
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from experiments.play.tournament import Cell, GameRecord, bradley_terry, tabulate


def run_folder(kind: str, game_id: str, out: str | None) -> Path:
    """A new folder ``runs/<kind>/<game>-<time>`` (or ``out``) for a run's outputs."""
    path = Path(out) if out else Path("runs") / kind / f"{game_id}-{time.strftime('%Y%m%d-%H%M%S')}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def markdown_table(
    labels: Sequence[str], cells: dict[tuple[str, str], Cell], ratings: dict[str, float], n_players: int
) -> str:
    """Win rate of each row agent against each column agent, with 95% Wilson intervals, then ratings."""
    head = "| row vs column | " + " | ".join(labels) + " |"
    lines = [head, "|" + " --- |" * (len(labels) + 1)]
    for a in labels:
        row = [f"**{a}**"]
        for b in labels:
            if a == b:
                row.append("—")
                continue
            c = cells[(a, b)]
            lo, hi = c.interval
            row.append(f"{100 * c.win_rate:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]")
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    what = (
        "row agent's score (wins + ½ draws) per game"
        if n_players == 2
        else (
            f"row agent alone against {n_players - 1} copies of the column agent: share of games it wins "
            f"(a shared win counts; an even share is {100 / n_players:.0f}%)"
        )
    )
    lines.append(f"Cells: {what}, with the 95% Wilson interval.")
    lines.append("")
    lines.append("| agent | Bradley–Terry rating (Elo scale) | games | W / D / L |")
    lines.append("| --- | --- | --- | --- |")
    for a in sorted(labels, key=lambda x: -ratings[x]):
        w, d, lo = (sum(getattr(cells[(a, b)], k) for b in labels if b != a) for k in ("wins", "draws", "losses"))
        lines.append(f"| {a} | {ratings[a]:.0f} | {w + d + lo} | {w} / {d} / {lo} |")
    return "\n".join(lines)


def write_outputs(
    folder: Path,
    game_id: str,
    labels: Sequence[str],
    records: Sequence[GameRecord],
    config: dict[str, Any],
    n_players: int,
    plot: bool = True,
) -> dict[str, Any]:
    """Write results.json, table.csv, table.md (and heatmap.png), in that order, over an earlier run's; the summary.

    Each file is written to a temporary name and renamed, so a kill leaves no table without its results.json.
    """
    for name in OUTPUTS:
        (folder / name).unlink(missing_ok=True)
    cells = tabulate(records, labels)
    ratings = bradley_terry(labels, cells)
    table = markdown_table(labels, cells, ratings, n_players)
    rows = io.StringIO(newline="")
    w = csv.writer(rows)
    w.writerow(["agent", "opponent", "games", "wins", "draws", "losses", "win_rate", "ci_low", "ci_high"])
    for (a, b), c in cells.items():
        lo, hi = c.interval
        w.writerow([a, b, c.games, c.wins, c.draws, c.losses, f"{c.win_rate:.4f}", f"{lo:.4f}", f"{hi:.4f}"])
    summary = {
        "game_id": game_id,
        "config": config,
        "agents": list(labels),
        "ratings": ratings,
        "cells": [
            {"agent": a, "opponent": b, **dataclasses.asdict(c), "win_rate": c.win_rate, "ci95": list(c.interval)}
            for (a, b), c in cells.items()
        ],
        "mean_game_length": sum(r.length for r in records) / max(1, len(records)),
        "games": [dataclasses.asdict(r) for r in records],
    }
    write_file(folder / "results.json", json.dumps(summary, indent=1))
    write_file(folder / "table.csv", rows.getvalue())
    write_file(folder / "table.md", f"# {game_id}: agent vs agent\n\n{table}\n")
    if plot and have_matplotlib("heatmap.png"):
        heatmap(folder / "heatmap.png", game_id, labels, cells, n_players)
    return {"table": table, "ratings": ratings, "cells": cells}


OUTPUTS = ("results.json", "table.csv", "table.md", "heatmap.png")


def write_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed when complete."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def have_matplotlib(picture: str) -> bool:
    """Whether matplotlib is installed; if not, one line says which picture is skipped and how to get it."""
    if importlib.util.find_spec("matplotlib") is not None:
        return True
    print(f"(no matplotlib: {picture} skipped; pip install -e '.[plot]' to draw it)")
    return False


def pyplot(picture: str) -> Any:
    """matplotlib's ``pyplot`` drawing off screen, or None where matplotlib is missing (``have_matplotlib``)."""
    if not have_matplotlib(picture):
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: Path, dpi: int) -> Path:
    """``fig`` laid out, as a PNG at ``path`` through a temporary file renamed when complete; the figure is closed."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    tmp = path.with_name(path.name + ".tmp")
    fig.savefig(tmp, dpi=dpi, format="png")
    plt.close(fig)
    os.replace(tmp, path)
    return path


def _pct(x: float) -> str:
    """A percentage for the heatmap: one decimal near 0 and 100%, where rounding would mislead."""
    return f"{100 * x:.1f}" if x < 0.01 or x > 0.99 else f"{100 * x:.0f}"


def heatmap(
    path: Path, game_id: str, labels: Sequence[str], cells: dict[tuple[str, str], Cell], n_players: int
) -> None:
    """A win-rate matrix image: rows are the agent whose rate is shown."""
    import numpy as np

    from experiments.play.population import score_matrix

    plt = pyplot("heatmap.png")
    k = len(labels)
    m = score_matrix(labels, cells)
    np.fill_diagonal(m, np.nan)
    fig, ax = plt.subplots(figsize=(1.6 * k + 2.5, 1.3 * k + 1.8))
    im = ax.imshow(m, vmin=0, vmax=1, cmap="RdYlGn")
    ax.set_xticks(range(k), labels, rotation=30, ha="right")
    ax.set_yticks(range(k), labels)
    ax.set_xlabel("opponent" if n_players == 2 else f"opponent (×{n_players - 1})")
    ax.set_ylabel("agent")
    for i in range(k):
        for j in range(k):
            if i != j:
                c = cells[(labels[i], labels[j])]
                lo, hi = c.interval
                label = f"{_pct(c.win_rate)}%\n[{_pct(lo)}–{_pct(hi)}]"
                ax.text(j, i, label, ha="center", va="center", fontsize=9)
    ax.set_title(f"{game_id}: win rate of row agent vs column agent")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="win rate (draws ½)")
    save_figure(fig, path, 110)


def learning_curves(run: Path) -> Path | None:
    """``learning_curves.png`` of a training run folder (``training.json`` or ``checkpoints/state.json``, and
    ``logs/progress.csv``): evaluations, entropy, explained variance; None with nothing to plot or no matplotlib."""
    plt = pyplot("learning_curves.png")
    if plt is None:
        return None
    run = Path(run)
    src = run / "training.json" if (run / "training.json").is_file() else run / "checkpoints" / "state.json"
    evals: list[dict[str, Any]] = []
    if src.is_file():
        try:
            evals = json.loads(src.read_text(encoding="utf-8")).get("evals", [])
        except (json.JSONDecodeError, AttributeError):
            print(f"({src} is not a JSON object: learning_curves.png shows no evaluations)")
    rows: list[dict[str, str]] = []
    progress = run / "logs" / "progress.csv"
    if progress.is_file():
        with progress.open(encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    if not evals and not rows:
        return None

    def series(key: str) -> tuple[list[float], list[float]]:
        pts = [(float(r["time/total_timesteps"]), float(r[key])) for r in rows if r.get(key)]
        return [p[0] for p in pts], [p[1] for p in pts]

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    ax = axes[0]
    opponent = evals[-1].get("opponent", "greedy") if evals else "greedy"  # older runs: greedy, unnamed
    if evals:
        x = [e["steps"] for e in evals]
        y = [100 * e[f"vs_{opponent}"] for e in evals]
        lo = [100 * e["ci95"][0] for e in evals]
        hi = [100 * e["ci95"][1] for e in evals]
        ax.fill_between(x, lo, hi, alpha=0.25, label="95% interval")
        ax.plot(x, y, marker="o", label="win rate")
        even = _even_share(run)
        ax.axhline(even, color="grey", linestyle="--", linewidth=1, label=f"even share {even:.0f}%")
        ax.legend(loc="best", fontsize=8)
    ax.set_ylim(0, 100)
    ax.set_title(f"evaluation against {opponent} (%)")
    for ax, key, title in (
        (axes[1], "train/entropy_loss", "policy entropy"),
        (axes[2], "train/explained_variance", "value head: explained variance"),
    ):
        x, y = series(key)
        if x:
            ax.plot(x, [-v for v in y] if key == "train/entropy_loss" else y)
        ax.set_title(title)
    for ax in axes:
        ax.set_xlabel("learner steps")
        ax.grid(alpha=0.3)
    fig.suptitle(f"training run {run.name}")
    return save_figure(fig, run / "learning_curves.png", 100)


def _even_share(run: Path) -> float:
    """100 / players of the run's game (walls: the learner plays alone against the others), 50 if unknown."""
    try:
        cfg = json.loads((run / "config.json").read_text(encoding="utf-8"))
        from jericho_env.registry import make_rules

        return 100.0 / make_rules(str(cfg["game"]), **dict(cfg.get("options") or {})).info.num_players
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # no or odd config: a two-player line
        return 50.0


def exit_curves(run: Path) -> Path | None:
    """``learning_curves.png`` of an expert-iteration run (``exit.json``): each evaluation's score per iteration."""
    plt = pyplot("learning curves")
    if plt is None:
        return None
    state = json.loads((run / "exit.json").read_text(encoding="utf-8"))
    rows = [r for r in state.get("history", []) if "evals" in r]
    if not rows:
        return None
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4))
    for label in rows[-1]["evals"]:
        pts = [(r["iteration"], r["evals"][label]) for r in rows if label in r["evals"]]
        xs = [p[0] for p in pts]
        ax.plot(xs, [100 * p[1]["score"] for p in pts], marker="o", label=f"vs {label}")
        ax.fill_between(xs, [100 * p[1]["ci95"][0] for p in pts], [100 * p[1]["ci95"][1] for p in pts], alpha=0.15)
    ax.axhline(_even_share(run), color="grey", lw=0.8, ls=":")
    ax.set_xlabel("iteration")
    ax.set_ylabel("score of the network alone (%)")
    ax.legend()
    its = [r["iteration"] for r in rows]
    bx.plot(its, [r["policy_loss"] for r in rows], marker="o", label="policy cross-entropy")
    bx.plot(its, [r["value_loss"] for r in rows], marker="o", label="value squared error")
    bx.set_xlabel("iteration")
    bx.legend()
    fig.suptitle(f"expert iteration: {run.name}")
    return save_figure(fig, run / "learning_curves.png", 110)


def is_dmc_run(run: Path) -> bool:
    """Whether ``run`` is a Deep Monte-Carlo run folder (its training.json counts positions)."""
    try:
        stats = json.loads((run / "training.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(stats, dict) and "positions_generated" in stats


def dmc_curves(runs: Sequence[Path], out: Path | None = None) -> Path | None:
    """Each dmc run's evaluations (score and 95% interval) over positions generated, log scale: one run's
    ``learning_curves.png`` in its folder, or one picture ``out`` of several; None if there is nothing to draw."""
    plt = pyplot("learning curves")
    if plt is None:
        return None
    drawn = []
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for run in runs:
        stats = json.loads((run / "training.json").read_text(encoding="utf-8"))
        evals = [e for e in stats.get("evals", []) if e.get("positions_generated")]
        if not evals:
            continue
        xs = [e["positions_generated"] for e in evals]
        ax.plot(xs, [100 * e["score"] for e in evals], marker="o", ms=3, label=run.name)
        ax.fill_between(xs, [100 * e["ci95"][0] for e in evals], [100 * e["ci95"][1] for e in evals], alpha=0.12)
        drawn.append(run)
    if not drawn:
        plt.close(fig)
        return None
    ax.axhline(_even_share(drawn[0]), color="grey", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel("positions generated")
    opponent = json.loads((drawn[0] / "training.json").read_text(encoding="utf-8"))["evals"][-1].get("opponent")
    ax.set_ylabel(f"score against {opponent or 'greedy'} (%)")
    ax.legend(fontsize=7)
    ax.set_title("Deep Monte-Carlo: " + (drawn[0].name if len(drawn) == 1 else f"{len(drawn)} runs"))
    return save_figure(fig, out if out is not None else drawn[0] / "learning_curves.png", 110)
