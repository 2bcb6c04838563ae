"""One leaderboard across every agent and game: ``python -m experiments.leaderboard``.

For each game: random, greedy (where the game has one), ``ismcts`` at its default budget and every agent
the package ships for the game (``agents.zoo()``: ``ppo``, ``exit``, ``exit-search`` at ``ismcts``'s budget,
``dmc``, and ``dmc-search`` at that budget where the zoo's dmc network can guide it) play a round robin of
seat-swapped deals (``--deals`` per pair, the tournament code: ``experiments.play.tournament.run_games``, so
the same games on any number of workers and on ``--backend ray``).
Two-player games: both seat orders of every deal. Walls: each agent alone against copies of each other,
in every seat.

Ratings: Bradley–Terry on the Elo scale (random at 1000), with 95% intervals from a bootstrap over deals
(``--bootstrap`` resamples; every game of a drawn deal kept together). Writes ``docs/leaderboard.md``,
``docs/images/leaderboard-<game>.png`` (the heatmaps) and ``docs/leaderboard.json`` (every game's board, so
a run of some ``--games`` keeps the others on the page). ``--quick``: a check of the machinery, a few
minutes on 2 cores, written under ``runs/leaderboard-quick/`` (never over the docs). ``--with LABEL=SPEC``
rates newcomers on a board already made (``--board``): each plays every agent of the board on its deals,
the board's own games are read back, and one fit rates them all (written under ``runs/leaderboard-with/``).

Examples:
    python -m experiments.leaderboard
    python -m experiments.leaderboard --quick
    python -m experiments.leaderboard --games castles --deals 100 --workers 2
    python -m experiments.leaderboard --deals 250 walls=50
    python -m experiments.leaderboard --backend ray --ray-address HOST:6379
    python -m experiments.leaderboard --games castles --with lowest=path/to/mine.py:LowestCard
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.registry import PLAYS_NETWORK_OF, SEARCH_AGENTS, available, playable_names
from experiments.cli import cli_parser, positive_int, progress_bar, run_cli
from experiments.play.backends import LOCAL, Backend, add_backend_flags, backend_from_args
from experiments.play.tournament import AgentSpec, Cell, GameRecord, bradley_terry, pairings, run_games, tabulate
from jericho_env.registry import known_game_ids, make_rules

DEFAULT_DEALS = 250
QUICK_DEALS = {2: 6, 4: 1}  # per pair, by players (more players: as 4): a check, not a measurement
# ismcts and exit-search per move in --quick; walls' search rolls out with greedy to the end (0.2 s a move at 20)
QUICK_SIMULATIONS = {"default": 20, "walls": 5}
SEARCHES = "ismcts, exit-search and dmc-search"  # the agents that search at the board's budget
DEFAULT_BUDGET = "ismcts's default budget for the game (agents.search.ismcts.GAME_DEFAULTS)"
DOCS = Path("docs") / "leaderboard.md"
QUICK_OUT = Path("runs") / "leaderboard-quick" / "leaderboard.md"
WITH_OUT = Path("runs") / "leaderboard-with" / "leaderboard.md"


@dataclasses.dataclass
class GameBoard:
    """One game's leaderboard: the agents, the cells, the ratings with intervals, the games and time."""

    game: str
    labels: list[str]  # in rank order
    cells: dict[tuple[str, str], Cell]
    ratings: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    games: int
    deals: int
    seconds: float
    players: int
    notes: list[str]
    simulations: int | None  # the search budget (None: ismcts's default for the game)
    made: dict[str, Any] = dataclasses.field(default_factory=dict)  # command, date, commit, workers, backend...
    # every pair's results deal by deal ("A vs B" -> encode_deals), so that newcomers (--with) are rated in one fit
    results: dict[str, str] = dataclasses.field(default_factory=dict)
    per_deal: int = 0  # games a pair plays on one deal (both seat orders; walls: the row agent in every seat)
    fingerprints: dict[str, str] = dataclasses.field(default_factory=dict)  # agent -> its checkpoint's SHA-256
    # rankings a cycle cannot fool (experiments.play.population): "nash" weights and "skill" (two-player games),
    # "alpha_rank" mass; each agent -> a number
    population: dict[str, dict[str, float]] = dataclasses.field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The board as JSON (``leaderboard.json`` beside the page keeps every game's)."""
        data = dataclasses.asdict(self)
        data["cells"] = [{"agent": a, "opponent": b, **dataclasses.asdict(c)} for (a, b), c in self.cells.items()]
        data["intervals"] = {a: list(v) for a, v in self.intervals.items()}
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameBoard:
        """A board written by ``to_json``."""
        data = dict(data)
        data["cells"] = {(c["agent"], c["opponent"]): Cell(c["wins"], c["draws"], c["losses"]) for c in data["cells"]}
        data["intervals"] = {a: (float(v[0]), float(v[1])) for a, v in data["intervals"].items()}
        return cls(**data)


# --------------------------------------------------------------------------------------------- the agents
def game_agents(game: str, simulations: int | None) -> tuple[list[AgentSpec], list[str]]:
    """(specs, notes): the baselines, ismcts and the shipped agents of ``game`` (their checkpoints checked
    against their cards, then given as ``path=``); ``simulations``: the search budget."""
    import agents
    from agents.pretrained import zoo

    budget = {} if simulations is None else {"simulations": simulations}
    specs = [AgentSpec(name, name) for name in ("random", "greedy") if available(name, game)]
    specs.append(AgentSpec("ismcts", "ismcts", dict(budget)))
    notes = []
    for entry in zoo():
        if entry.game != game:
            continue
        names = list(entry.agents)
        # agents that search with this network where it fits (dmc-search: castles' self-play dmc network)
        names += [n for n, of in PLAYS_NETWORK_OF.items() if of == entry.kind and n in playable_names(game)]
        for name in names:
            extra = dict(budget) if name in SEARCH_AGENTS else {}
            agents.make(name, game, **extra)  # no path: the file matches its card and loads (before any worker starts)
            specs.append(AgentSpec(name, name, {"path": str(entry.path), **extra}))
        notes.append(f"{', '.join(entry.agents)}: {entry.path.name} ({entry.size / 1024:.0f} KiB), {_trained(entry)}")
    for spec in specs:  # unknown agents or bad budgets fail here, before any game
        agents.make(spec.name, game, **spec.kwargs)
    return specs, notes


def _trained(entry: Any) -> str:
    training = entry.card.get("training", {})
    if entry.kind == "ppo":
        what = f"{int(training.get('steps', 0)):,} PPO steps"
    elif entry.kind == "dmc":
        what = f"{int(training.get('positions_generated', 0)):,} Deep Monte-Carlo positions"
    else:
        n = training.get("iterations", "?")
        what = f"{n} expert-iteration iteration{'' if n == 1 else 's'}"
    seconds = training.get("seconds")
    commit = (entry.card.get("made_by", {}).get("commit") or "unknown")[:10]
    took = f" in {_minutes(seconds)}" if isinstance(seconds, (int, float)) else ""
    scores = (
        "its run's last evaluation" if entry.card.get("scores", {}).get("table") == "training.json" else "final-table"
    )
    return f"{what}{took}, commit {commit}; {scores} scores on its card ({entry.name}.json)"


def fingerprints(specs: Sequence[AgentSpec]) -> dict[str, str]:
    """Each agent's checkpoint SHA-256 (``""`` without one): a board's results hold only for those very files."""
    from agents.checkpoint import resolve_path
    from agents.pretrained import sha256

    return {s.label: sha256(resolve_path(s.kwargs["path"])) if "path" in s.kwargs else "" for s in specs}


# --------------------------------------------------------------------------------------------- the ratings
def encode_deals(counts: np.ndarray, labels: Sequence[str]) -> dict[str, str]:
    """``counts[d, i, j] = (wins, draws, losses)`` as text: for each pair, two digits a deal (wins, draws)."""
    return {
        f"{a} vs {b}": "".join(f"{w}{dr}" for w, dr, _ in counts[:, i, j])
        for i, a in enumerate(labels)
        for j, b in enumerate(labels)
        if i != j
    }


def decode_deals(results: dict[str, str], labels: Sequence[str], per_deal: int) -> np.ndarray:
    """``encode_deals``'s text as ``counts[d, i, j]`` for ``labels`` (any order); ``ValueError`` if a pair lacks."""
    k = len(labels)
    deals = len(next(iter(results.values()), "")) // 2
    counts = np.zeros((deals, k, k, 3), dtype=np.int64)
    for i, a in enumerate(labels):
        for j, b in enumerate(labels):
            if i == j:
                continue
            text = results.get(f"{a} vs {b}")
            if text is None or len(text) != 2 * deals:
                raise ValueError(f"the board has no deal-by-deal results of {a} vs {b}")
            digits = np.frombuffer(text.encode(), dtype=np.uint8).reshape(deals, 2) - ord("0")
            counts[:, i, j, :2] = digits
            counts[:, i, j, 2] = per_deal - digits.sum(axis=1)
    return counts


def deal_counts(records: Sequence[GameRecord], labels: Sequence[str]) -> tuple[np.ndarray, list[int]]:
    """(counts, deals): ``counts[d, i, j]`` = (wins, draws, losses) of ``labels[i]`` against ``labels[j]`` in deal d."""
    by_deal: dict[int, list[GameRecord]] = defaultdict(list)
    for rec in records:
        by_deal[rec.deal].append(rec)
    deals = sorted(by_deal)
    k = len(labels)
    counts = np.zeros((len(deals), k, k, 3), dtype=np.int64)
    for d, deal in enumerate(deals):
        for (a, b), c in tabulate(by_deal[deal], labels).items():
            counts[d, labels.index(a), labels.index(b)] = (c.wins, c.draws, c.losses)
    return counts, deals


def cells_of(total: np.ndarray, labels: Sequence[str]) -> dict[tuple[str, str], Cell]:
    """The cells of summed counts ``total[i, j] = (wins, draws, losses)``."""
    return {
        (a, b): Cell(*(int(x) for x in total[i, j]))
        for i, a in enumerate(labels)
        for j, b in enumerate(labels)
        if i != j
    }


def bootstrap_intervals(
    counts: np.ndarray, labels: Sequence[str], resamples: int, seed: int
) -> dict[str, tuple[float, float]]:
    """95% percentile intervals of the Bradley–Terry ratings over ``resamples`` resamplings of the deals."""
    rng = np.random.default_rng([seed, 95])
    n_deals = counts.shape[0]
    draws = np.empty((resamples, len(labels)))
    for r in range(resamples):
        weights = np.bincount(rng.integers(0, n_deals, n_deals), minlength=n_deals)
        ratings = bradley_terry(labels, cells_of(np.tensordot(weights, counts, axes=1), labels))
        draws[r] = [ratings[a] for a in labels]
    lo, hi = np.percentile(draws, [2.5, 97.5], axis=0)
    return {a: (float(lo[i]), float(hi[i])) for i, a in enumerate(labels)}


def board(
    game: str,
    specs: list[AgentSpec],
    records: Sequence[GameRecord],
    deals: int,
    seconds: float,
    resamples: int,
    seed: int,
    notes: list[str],
    simulations: int | None = None,
) -> GameBoard:
    """The game's leaderboard from its games: cells, ratings (rank order) and their bootstrap intervals."""
    labels = [s.label for s in specs]
    counts, _ = deal_counts(records, labels)
    return board_of_counts(game, labels, counts, seconds, resamples, seed, notes, simulations, fingerprints(specs))


def board_of_counts(
    game: str,
    labels: list[str],
    counts: np.ndarray,
    seconds: float,
    resamples: int,
    seed: int,
    notes: list[str],
    simulations: int | None,
    prints: dict[str, str],
) -> GameBoard:
    """The board of ``counts[d, i, j]``: (wins, draws, losses) of ``labels[i]`` against ``labels[j]`` in deal d."""
    cells = cells_of(counts.sum(axis=0), labels)
    ratings = bradley_terry(labels, cells)
    intervals = bootstrap_intervals(counts, labels, resamples, seed)
    ranked = sorted(labels, key=lambda a: -ratings[a])
    players = make_rules(game).info.num_players
    per_deal = int(counts[0, 0, 1].sum()) if counts.size else 0
    games = int(counts.sum()) // (2 if players == 2 else 1)  # two-player games count in both cells
    return GameBoard(
        game, ranked, cells, ratings, intervals, games, counts.shape[0], seconds, players, notes, simulations,
        results=encode_deals(counts, labels), per_deal=per_deal, fingerprints=prints,
        population=population_ranks(labels, cells, players),
    )  # fmt: skip


def population_ranks(
    labels: list[str], cells: dict[tuple[str, str], Cell], players: int
) -> dict[str, dict[str, float]]:
    """Nash averaging (two-player games) and α-Rank (every game; without OpenSpiel, left out) of the board's cells."""
    from experiments.play.population import alpha_rank, nash_average, score_matrix

    scores = score_matrix(labels, cells)
    out: dict[str, dict[str, float]] = {}
    if players == 2:
        out["nash"], out["skill"] = nash_average(labels, scores)
    with contextlib.suppress(ImportError):
        out["alpha_rank"] = alpha_rank(labels, scores)
    return out


# --------------------------------------------------------------------------------------------- the page
def markdown_table(b: GameBoard, exploited: dict[str, str] | None = None) -> str:
    """Rank, agent, rating [95% interval], then the row agent's score against each other agent (column); with
    ``exploited`` (``best_responses``), a last column: the best response's score against the row agent."""
    head = "| rank | agent | rating [95%] | " + " | ".join(f"vs {a}" for a in b.labels) + " |"
    head += " best response to it |" if exploited is not None else ""
    lines = [head, "|" + " --- |" * (len(b.labels) + 3 + (exploited is not None))]
    for rank, a in enumerate(b.labels, 1):
        lo, hi = b.intervals[a]
        row = [str(rank), f"**{a}**", f"{b.ratings[a]:.0f} [{lo:.0f}, {hi:.0f}]"]
        row += ["—" if a == o else f"{100 * b.cells[(a, o)].win_rate:.1f}%" for o in b.labels]
        row += [] if exploited is None else [exploited.get(a, "not measured")]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def best_responses(b: GameBoard, store: Path) -> dict[str, str] | None:
    """Per agent, the best response recorded in ``store`` (``experiments.exploit``) against that very checkpoint with
    the highest interval's lower end: score [95%], what and budget; None without the file."""
    import json

    if not store.is_file():
        return None
    out: dict[str, tuple[float, str]] = {}
    for e in json.loads(store.read_text(encoding="utf-8")).get("entries", []):
        a = e.get("agent")
        if e.get("game") != b.game or a not in b.labels or e.get("fingerprint", "") != b.fingerprints.get(a, ""):
            continue
        lo, hi = e["ci95"]
        budget = e["budget"]
        power = f"10^{len(str(budget)) - 1}" if str(budget).strip("0") == "1" else f"{budget:,}"
        what = {"learned": f"learned, {power} positions", "start": f"its start, {e.get('init')}, untrained",
                "search": f"search, {budget} redeals", "tree": f"tree search, {budget} simulations"}.get(
            e["estimator"], e["estimator"])  # fmt: skip
        if lo > out.get(a, (-1.0, ""))[0]:
            out[a] = (lo, f"{100 * e['score']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] ({what})")
    return {a: text for a, (_, text) in out.items()}


def support_text(b: GameBoard) -> str:
    """``"; Nash support: a, b"`` for a two-player board with its equilibrium, else ``""``."""
    from experiments.play.population import nash_support

    nash = b.population.get("nash")
    return f"; Nash support: {', '.join(nash_support(nash))}" if nash else ""


def population_table(b: GameBoard) -> list[str]:
    """The page's lines of a board's population rankings (Nash averaging, α-Rank); none for a board without them."""
    pop = b.population
    if not pop:
        return []
    cols = [("nash", "Nash weight", "{:.3f}"), ("skill", "Nash-averaged skill", "{:+.3f}"),
            ("alpha_rank", "α-Rank mass", "{:.3f}")]  # fmt: skip
    cols = [c for c in cols if c[0] in pop]
    head = "| agent | " + " | ".join(name for _, name, _ in cols) + " |"
    rows = [head, "|" + " --- |" * (len(cols) + 1)]
    rows += ["| " + " | ".join([a, *(f.format(pop[key][a]) for key, _, f in cols)]) + " |" for a in b.labels]
    about = (
        "Nash averaging: the maximum-entropy equilibrium of the score matrix as a zero-sum game, and each agent's "
        "score against it minus ½ (0 in the support)"
        if "nash" in pop
        else ""
    )
    alpha = "α-Rank: the stationary mass of its evolutionary dynamics" if "alpha_rank" in pop else ""
    if b.players > 2 and alpha:
        alpha += " over the lone-agent-against-copies scores"
    said = "; ".join(x for x in (about, alpha) if x)
    return [f"Rankings a cycle cannot fool ({said}; [how to read it](#how-to-read-it)):", "", *rows, ""]


def summary_line(b: GameBoard, top: int = 3) -> str:
    """One line for the README: the game and its top agents with their ratings."""
    best = ", ".join(f"{a} {b.ratings[a]:.0f}" for a in b.labels[:top])
    return f"**{b.game}**: {best} (random = 1000)"


def page(boards: Sequence[GameBoard], store: Path | None = None) -> str:
    """``leaderboard.md``: the summary, one section per game (how it was made, table, heatmap), how to read it."""
    quick = any(b.made.get("quick") for b in boards)
    lines = ["# Leaderboard" + (" (quick check: not a measurement)" if quick else ""), ""]
    lines += [
        "Every agent of the package in every game: random, greedy, `ismcts` and the trained networks shipped in "
        "the package ([zoo.md](zoo.md)), by `python -m experiments.leaderboard`. Ratings: Bradley–Terry on the "
        "Elo scale, random = 1000, with 95% bootstrap intervals (below: how to read it).",
        "",
        "## Summary",
        "",
    ]
    lines += [f"- {summary_line(b)}{support_text(b)}" for b in boards] + [""]
    for b in boards:
        n = b.players
        cells = (
            "row agent's score against the column agent per game (wins + ½ draws)"
            if n == 2
            else f"row agent alone against {n - 1} copies of the column agent: the share of games it wins "
            f"(an even share is {100 / n:.0f}%)"
        )
        lines += [f"## {b.game}", ""]
        if b.made.get("quick"):
            lines += [
                f"**--quick**: {quick_text(b)}; a check that the machinery runs, not a measurement (the "
                "leaderboard itself: `python -m experiments.leaderboard` at its defaults).",
                "",
            ]
        lines += [f"{made_line(b)} Cells: {cells}.", ""]
        lines += [markdown_table(b, None if store is None else best_responses(b, store)), ""]
        lines += [f"![{b.game} leaderboard heatmap](images/leaderboard-{b.game}.png)", ""]
        lines += population_table(b)
        budget = DEFAULT_BUDGET if b.simulations is None else f"{b.simulations} simulations per move"
        lines += [f"- {note}" for note in [f"{SEARCHES}: {budget}", *b.notes]] + [""]
    resamples = sorted({str(b.made.get("bootstrap")) for b in boards})
    lines += [
        "## How to read it",
        "",
        "- Every pair of agents plays the same deals, each deal in every seat arrangement (two-player games: "
        "both seat orders; walls: the row agent alone in each seat against copies of the column agent), so "
        "the luck of the cards and of the seat cancels out (`experiments.play.tournament`).",
        "- Rating: Bradley–Terry strengths by maximum likelihood on the Elo scale, random pinned at 1000 "
        "(400 points: 10-to-1 odds); draws count half a win each way.",
        f"- Interval: the 2.5th and 97.5th percentiles of the ratings refitted on {' or '.join(resamples)} "
        "bootstrap resamples of the deals (a resample draws the deals again with replacement and keeps every "
        "game of a drawn deal, all pairs and seats together). Random is the anchor: its interval is a point, "
        "the others' include the uncertainty of random's strength.",
        "- Heatmaps: each cell's score with its 95% Wilson interval; rows and columns in rank order.",
        "- Best response to it: of the best responses to the row agent recorded in `exploitability.json` "
        "(`python -m experiments.exploit`, learned or search), the one whose 95% interval has the highest lower "
        "end: its score against the agent, and its budget; above the fair share (½, walls 1/players) it is a lower "
        "bound on how far the agent can be exploited ([exploitability.md](exploitability.md)).",
        "- Bradley–Terry fits one strength per agent, so a cycle (A beats B beats C beats A) gets an order no game "
        "supports. Nash averaging (Balduzzi et al., 2018; two-player games) finds the mixture of agents that no "
        "agent beats on average, the most even one (maximum entropy), with SciPy: the agents it weighs are its "
        "support, and an agent's skill is its score against that mixture minus ½. α-Rank (Omidshafiei et al., "
        "2019; OpenSpiel's `alpharank`, m = 50, α = 100) ranks by the mass of an evolutionary process in which "
        "agents invade each other's populations; in walls it reads the lone agent's share against copies of "
        "another as a two-player meta-game (`experiments.play.population`).",
        "",
    ]
    return "\n".join(lines)


def made_line(b: GameBoard) -> str:
    """How a game's board was made: deals, games, time, command, date, commit, workers, backend, seed."""
    m = b.made
    return (
        f"{_deals(b.deals, 'seat-swapped ')} per pair ({b.games} games) in {_minutes(b.seconds)} on {m.get('workers')} "
        f"worker(s) (backend {m.get('backend')}, seed {m.get('seed')}): `{m.get('command')}` on {m.get('date')}, "
        f"commit {(m.get('commit') or 'unknown')[:10]}, jericho-env {m.get('version')}."
    )


def quick_text(b: GameBoard) -> str:
    """What ``--quick`` cut in a game."""
    return f"{b.game}: {_deals(b.deals)} per pair, {SEARCHES} at {b.simulations} simulations per move"


def _deals(n: int, kind: str = "") -> str:
    return f"{n} {kind}deal{'' if n == 1 else 's'}"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s"


# --------------------------------------------------------------------------------------------- the command
def deals_arg(text: str) -> tuple[str | None, int]:
    """argparse type of ``--deals``: ``N`` -> (None, N), ``GAME=N`` -> (GAME, N); N a whole number >= 1."""
    game, sep, number = text.rpartition("=")
    if sep and not game:
        raise argparse.ArgumentTypeError(f"write N or GAME=N, got {text!r}")
    return (game or None), positive_int(number)


def deals_per_game(given: Sequence[tuple[str | None, int]], games: Sequence[str]) -> dict[str, int]:
    """The ``--deals`` values by game: ``N`` for every game, ``GAME=N`` over it; games not named are absent."""
    every = [n for g, n in given if g is None]
    named = [g for g, _ in given if g is not None]
    if len(every) > 1:
        raise ValueError("--deals takes one N for every game (and GAME=N for a game of its own)")
    twice = sorted({g for g in named if named.count(g) > 1})
    if twice:
        raise ValueError(f"--deals names {', '.join(twice)} twice")
    others = [g for g in named if g not in games]
    if others:
        raise ValueError(f"--deals names {', '.join(others)}, not among the games played ({', '.join(games)})")
    out = dict.fromkeys(games, every[0]) if every else {}
    out.update({g: n for g, n in given if g is not None})
    return out


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    p = cli_parser("experiments.leaderboard", __doc__)
    p.add_argument("--games", nargs="+", default=None, metavar="GAME", help="games (default: every registered game)")
    p.add_argument(
        "--deals",
        nargs="+",
        type=deals_arg,
        default=[],
        metavar="N|GAME=N",
        help=f"deals per pair: N for every game, GAME=N for one (default {DEFAULT_DEALS}; e.g. --deals 250 walls=40)",
    )
    sims = ", ".join(f"{g}: {s}" for g, s in QUICK_SIMULATIONS.items())
    quick = (
        f"a check of a few minutes on 2 cores: {QUICK_DEALS[2]} deals per pair ({QUICK_DEALS[4]} in walls), ismcts "
        f"and exit-search at fewer simulations ({sims}), written to {QUICK_OUT} (not the docs)"
    )
    p.add_argument("--quick", action="store_true", help=quick)
    p.add_argument(
        "--simulations", type=positive_int, default=None, help="ismcts, exit-search and dmc-search budget per move"
    )
    p.add_argument("--seed", type=int, default=0, help="tournament seed (default 0)")
    p.add_argument("--workers", type=positive_int, default=2, help="processes (default 2; results identical for any)")
    p.add_argument("--bootstrap", type=positive_int, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--out", default=None, help=f"the page (default {DOCS}; images in images/ beside it)")
    newcomers = (
        "rate newcomers on a board already made: each plays every agent of the board on its deals, its other "
        "games are reused, one fit rates all (your own code: LABEL=pkg.module:attr or LABEL=path/to/file.py:attr)"
    )
    p.add_argument("--with", dest="newcomers", nargs="+", default=[], metavar="LABEL=SPEC", help=newcomers)
    p.add_argument("--board", default=None, metavar="PAGE", help=f"--with: the board to join (default {DOCS})")
    trust = "--with: let sb3=PATH, torch=PATH and rllib=PATH load files that run code (only files you trust)"
    p.add_argument("--trust-checkpoint", action="store_true", help=trust)
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    add_backend_flags(p)
    return p


def play(
    game: str,
    specs: list[AgentSpec],
    deals: int,
    seed: int,
    workers: int,
    what: str,
    quiet: bool,
    backend: Backend,
    among: list[int] | None = None,
) -> tuple[list[GameRecord], float]:
    """(records, seconds) of ``run_games`` behind a progress bar; ``among``: only the pairings of these agents."""
    n = make_rules(game).info.num_players
    pairs = [p for p in pairings(len(specs), n) if among is None or p[0] in among or p[1] in among]
    bar = progress_bar(len(pairs) * deals * n, f"{game} {what}", quiet)
    t0 = time.perf_counter()
    try:
        records = run_games(game, specs, deals, seed, workers, progress=bar.update, backend=backend, among=among)
    finally:
        bar.close()
    return records, time.perf_counter() - t0


def run(
    games: Sequence[str],
    deals: dict[str, int],
    quick: bool,
    simulations: int | None,
    seed: int,
    workers: int,
    resamples: int,
    quiet: bool = False,
    backend: Backend = LOCAL,
) -> list[GameBoard]:
    """Every game's leaderboard: ``deals[game]`` per pair, else the default or ``--quick``'s (the budget likewise)."""
    plans = []
    for game in games:  # every game's agents checked before any game is played
        quick_budget = QUICK_SIMULATIONS.get(game, QUICK_SIMULATIONS["default"])
        budget = simulations if simulations is not None or not quick else quick_budget
        specs, notes = game_agents(game, budget)
        n = make_rules(game).info.num_players
        per_pair = deals.get(game) or (QUICK_DEALS.get(n, QUICK_DEALS[4]) if quick else DEFAULT_DEALS)
        plans.append((game, specs, notes, per_pair, budget))
    boards = []
    for game, specs, notes, per_pair, budget in plans:
        records, seconds = play(game, specs, per_pair, seed, workers, "leaderboard", quiet, backend)
        boards.append(board(game, specs, records, per_pair, seconds, resamples, seed, notes, budget))
        print(f"{game}: {len(records)} games in {_minutes(seconds)}; {summary_line(boards[-1])}")
    return boards


def rate_newcomers(
    game: str,
    newcomers: list[AgentSpec],
    page: Path,
    workers: int,
    resamples: int,
    quiet: bool = False,
    backend: Backend = LOCAL,
) -> GameBoard:
    """``game``'s board of ``page`` with ``newcomers`` added: only their pairs are played, on the board's deals
    and budget, and one fit rates them with the board's own games (``ValueError`` if its agents changed)."""
    store = page.with_suffix(".json")
    kept = {b.game: b for b in merged([], store)}
    again = f"python -m experiments.leaderboard --games {game}"
    if game not in kept:
        raise ValueError(f"{store} holds no board of {game}: make one first ({again})")
    old = kept[game]
    if not old.results:
        raise ValueError(
            f"the {game} board in {store} was written without its deal-by-deal results, which a newcomer is rated "
            f"with: make it again ({again})"
        )
    specs, _ = game_agents(game, old.simulations)
    have = [s.label for s in specs]
    if sorted(have) != sorted(old.labels):
        raise ValueError(
            f"the {game} board's agents ({', '.join(old.labels)}) are not the package's now ({', '.join(have)}): "
            f"make the board again ({again})"
        )
    changed = [a for a, fp in fingerprints(specs).items() if fp != old.fingerprints.get(a, "")]
    if changed:
        raise ValueError(
            f"the network of {', '.join(changed)} changed since the {game} board was made: its games no longer "
            f"hold; make the board again ({again})"
        )
    clash = [s.label for s in newcomers if s.label in have]
    if clash:
        raise ValueError(f"--with: {', '.join(clash)} is already on the board; give the newcomer another label")
    for spec in newcomers:  # code that does not load, a checkpoint of another game: fail before any game
        spec.build(game, {})
    every = specs + newcomers
    labels = [s.label for s in every]
    k, seed = len(every), int(old.made.get("seed", 0))
    records, seconds = play(
        game, every, old.deals, seed, workers, "newcomers", quiet, backend, list(range(len(specs), k))
    )
    counts = np.zeros((old.deals, k, k, 3), dtype=np.int64)
    counts[:, : len(specs), : len(specs)] = decode_deals(old.results, have, old.per_deal)
    played, _ = deal_counts(records, labels)
    counts += played  # the newcomers' pairs only: the board's cells are zero there
    added = f"{', '.join(s.label for s in newcomers)}: {len(records)} games in {_minutes(seconds)} (--with)"
    b = board_of_counts(
        game, labels, counts, old.seconds + seconds, resamples, seed, [*old.notes, added], old.simulations,
        {**old.fingerprints, **fingerprints(newcomers)},
    )  # fmt: skip
    b.made = dict(old.made)
    return b


def merged(boards: Sequence[GameBoard], store: Path) -> list[GameBoard]:
    """``boards`` with the other games' boards kept in ``store`` (``leaderboard.json``), in the games' order."""
    import json

    kept: dict[str, GameBoard] = {}
    if store.is_file():
        try:
            kept = {g["game"]: GameBoard.from_json(g) for g in json.loads(store.read_text(encoding="utf-8"))["games"]}
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{store} is not a leaderboard's JSON ({e}); move it away to start a new page") from None
    kept.update({b.game: b for b in boards})
    order = {g: i for i, g in enumerate(known_game_ids())}
    return sorted(kept.values(), key=lambda b: (order.get(b.game, len(order)), b.game))


def write(boards: Sequence[GameBoard], out: Path) -> tuple[list[GameBoard], list[Path]]:
    """The page ``out`` for ``boards`` and the other games in its JSON beside it, with the heatmaps; returns
    every board on the page and the files written."""
    import json

    from experiments.play.report import have_matplotlib, heatmap
    from experiments.training.run_folder import write_atomic

    out.parent.mkdir(parents=True, exist_ok=True)
    store = out.with_suffix(".json")
    every = merged(boards, store)
    written = []
    if have_matplotlib("the leaderboard heatmaps"):
        images = out.parent / "images"
        images.mkdir(exist_ok=True)
        for b in boards:
            path = images / f"leaderboard-{b.game}.png"
            heatmap(path, b.game, b.labels, b.cells, b.players)
            written.append(path)
    write_atomic(store, json.dumps({"games": [b.to_json() for b in every]}, indent=1))
    write_atomic(out, page(every, out.parent / "exploitability.json"))
    return every, [out, store, *written]


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    import shlex

    import jericho_env
    from experiments.training.provenance import source_commit

    parser = build_parser()
    args = parser.parse_args(argv)
    command = shlex.join(["python", "-m", "experiments.leaderboard", *(sys.argv[1:] if argv is None else argv)])

    def body() -> None:
        games = args.games or list(known_game_ids())
        unknown = [g for g in games if g not in known_game_ids()]
        if unknown:
            known = ", ".join(known_game_ids())
            raise ValueError(f"--games: unknown game(s) {', '.join(unknown)}; choose from {known}")
        if args.newcomers:
            with_newcomers(args, games, command)
            return
        if args.board is not None:
            raise ValueError("--board is the board that --with newcomers join; give --with LABEL=SPEC too")
        out = Path(args.out) if args.out else (QUICK_OUT if args.quick else DOCS)
        if out.is_dir():
            raise ValueError(f"--out {str(out)!r} is a folder; give the page's file name (e.g. {DOCS})")
        if out.suffix != ".md":
            raise ValueError(f"--out {str(out)!r}: the page is Markdown, its name ends in .md")
        backend = backend_from_args(args)
        made = {
            "command": command,
            "date": time.strftime("%Y-%m-%d"),
            "commit": source_commit()[0],
            "version": jericho_env.__version__,
            "workers": args.workers,
            "backend": backend.name,
            "seed": args.seed,
            "bootstrap": args.bootstrap,
            "quick": args.quick,
        }
        t0 = time.perf_counter()
        deals = deals_per_game(args.deals, games)
        boards = run(games, deals, args.quick, args.simulations, args.seed, args.workers, args.bootstrap,
                     args.quiet, backend)  # fmt: skip
        for b in boards:
            b.made = dict(made)
        every, written = write(boards, out)
        if args.quick:
            print(f"--quick ({'; '.join(quick_text(b) for b in boards)}): a check, not the leaderboard")
        print("\nREADME summary (paste under the leaderboard's link):")
        print("\n".join(f"- {summary_line(b)}" for b in every))
        print(f"\nleaderboard in {time.perf_counter() - t0:.0f} s; wrote {', '.join(str(p) for p in written)}")

    return run_cli(parser, body)


def with_newcomers(args: argparse.Namespace, games: Sequence[str], command: str) -> None:
    """``--with``: the newcomers rated on each game's stored board (``rate_newcomers``), the page written."""
    from experiments.evaluate import specs_from_args

    if args.quick or args.deals or args.simulations is not None:
        raise ValueError("--with plays the board's own deals and budget: leave out --quick, --deals and --simulations")
    board_page = Path(args.board) if args.board else DOCS
    out = Path(args.out) if args.out else WITH_OUT
    if out.suffix != ".md" or out.resolve() == board_page.resolve():
        raise ValueError(f"--out {str(out)!r}: give a new page ending in .md (not the board, {board_page})")
    backend = backend_from_args(args)
    boards = []
    for game in games:
        newcomers = specs_from_args(args.newcomers, args.trust_checkpoint, game, at_least=1)
        b = rate_newcomers(game, newcomers, board_page, args.workers, args.bootstrap, args.quiet, backend)
        b.made["command"] = command
        boards.append(b)
        print(f"\n## {game}, with {', '.join(s.label for s in newcomers)}\n\n{markdown_table(b)}\n")
        for s in newcomers:
            lo, hi = b.intervals[s.label]
            rank = b.labels.index(s.label) + 1
            print(f"{s.label}: rank {rank} of {len(b.labels)}, rating {b.ratings[s.label]:.0f} [{lo:.0f}, {hi:.0f}]")
    _, written = write(boards, out)
    print(f"\nwrote {', '.join(str(p) for p in written)}")


if __name__ == "__main__":
    sys.exit(main())
