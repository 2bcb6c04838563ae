"""Round-robin tournament: ``python -m experiments.evaluate GAME --agents A B ...``.

Every pair of agents plays ``--deals`` deals, each deal in every seat arrangement (seats swapped
in 2-player games; in walls, agent A alone against copies of B, A in each seat). The games are played
``--batch`` deals at a time per pairing and arrangement, each agent asked once per round for all its
games (``experiments.play.batched_games``); ``--sequential`` plays them one at a time through the AEC env
instead (the same deals and seats; agents' random draws differ). Prints the
win-rate table with 95% Wilson intervals and Bradley–Terry ratings, and writes results.json,
table.csv, table.md and heatmap.png (without matplotlib: skipped, with a note) to one run folder, in
that order and each complete or absent, so tables never stand without their results.
``ppo=PATH`` loads checkpoints in the safe format; a Stable-Baselines3 zip needs ``--trust-checkpoint``.
Your own agent plays as ``LABEL=pkg.module:attr`` or ``LABEL=path/to/file.py:attr`` (``docs/your-agent.md``);
in Python, ``tournament(game_id, [my_agent, "greedy", "ppo"])`` returns the same table. An agent's illegal
action stops the tournament with a message naming it (``--illegal-action raise``), or loses that game
and the tournament goes on (``lose``: the table says how many games each agent lost so).

Examples:
    python -m experiments.evaluate grid --agents random greedy --deals 1000
    python -m experiments.evaluate walls --agents random greedy --option num_players=3
    python -m experiments.evaluate castles --agents random greedy ppo=runs/train/castles-x/final.zip
    python -m experiments.evaluate castles --agents greedy ismcts=0.5s fast:ismcts=100 --workers 1
    python -m experiments.evaluate castles --agents random greedy --deals 2000 --backend ray --workers 2
    python -m experiments.evaluate walls --agents random greedy --deals 100 --sequential
    python -m experiments.evaluate castles --agents lowest=path/to/mine.py:LowestCard greedy ppo --deals 100
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from agents.registry import AGENT_NAMES, baselines, parse_spec
from experiments.cli import (
    cap_workers,
    check_out,
    cli_parser,
    parse_option,
    positive_int,
    progress_bar,
    run_cli,
    seed_int,
)
from experiments.play.backends import LOCAL, Backend, add_backend_flags, backend_from_args
from experiments.play.batched_games import DEFAULT_BATCH, check_batch
from experiments.play.report import run_folder, write_outputs
from experiments.play.tournament import ILLEGAL, LOOPS, AgentSpec, check_choice, run_games
from jericho_env.core.validate import check_seed
from jericho_env.registry import known_game_ids, make_rules
from jericho_env.user_agents import agent_label, check_agent


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    p = cli_parser("experiments.evaluate", __doc__)
    p.add_argument("game", help=f"which game: {', '.join(known_game_ids())}")
    p.add_argument(
        "--agents",
        nargs="+",
        required=True,
        metavar="AGENT",
        help="agents: random, greedy, greedy-capture (grid), ppo=PATH, ismcts[=BUDGET] with BUDGET "
        "N simulations and/or Xs seconds per move plus key=value settings, comma-separated "
        "(ismcts=300, ismcts=0.5s, ismcts=300,0.5s,rollout=greedy; see agents.registry.parse_budget); "
        "exit=PATH, exit-search=PATH or exit-search=path=PATH,search=rollouts,simulations=16; "
        "dmc=PATH, or dmc=PATH+PATH+... (the mean Q of several networks); dmc-search[=PATH] or "
        "dmc-search=path=PATH,simulations=200,prior_temperature=0.1 (castles and grid); sb3=PATH, torch=PATH, "
        "rllib=PATH (policies trained elsewhere, with --trust-checkpoint); your own code as "
        "LABEL=pkg.module:attr or LABEL=path/to/file.py:attr, then ,key=value arguments; LABEL:SPEC to rename",
    )
    p.add_argument("--deals", type=positive_int, default=200, help="deals per pair of agents (default 200)")
    replays = "write replays.jsonl: the first N deals of every pair (all seat arrangements), for jericho_env.web"
    p.add_argument("--record", type=positive_int, default=None, metavar="N", help=replays)
    p.add_argument("--seed", type=seed_int, default=0, help="tournament seed: deals and agents' randomness (default 0)")
    workers = "processes, at most the cores and the deals to play (results are identical for any count)"
    p.add_argument("--workers", type=positive_int, default=1, help=workers)
    p.add_argument(
        "--batch",
        type=positive_int,
        default=DEFAULT_BATCH,
        metavar="N",
        help=f"deals played at once per pairing and arrangement (default {DEFAULT_BATCH}; part of the seed: "
        "another N gives other random draws)",
    )
    p.add_argument(
        "--sequential",
        action="store_true",
        help="play one game at a time through the AEC env, each agent seeded per game (slower)",
    )
    p.add_argument(
        "--option",
        type=parse_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="game option, e.g. num_players=3 for walls (repeatable)",
    )
    p.add_argument("--out", default=None, help="run folder (default runs/evaluate/GAME-TIME)")
    p.add_argument("--no-plot", action="store_true", help="skip heatmap.png (skipped anyway without matplotlib)")
    trust = "load ppo=PATH checkpoints that are Stable-Baselines3 zips (written before the safe format): they"
    p.add_argument("--trust-checkpoint", action="store_true", help=trust + " unpickle code; only for files you trust")
    p.add_argument(
        "--illegal-action",
        choices=ILLEGAL,
        default="raise",
        help="an agent's illegal action: raise stops the tournament naming the agent, the deal and the action "
        "(default); lose ends that game as a loss for the agent, as the env's illegal_action='lose' scores it",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_backend_flags(p)
    return p


def specs_from_args(
    raw: Sequence[Any], trust: bool = False, game_id: str | None = None, at_least: int = 2
) -> list[AgentSpec]:
    """AgentSpecs of ``--agents`` specs, agent objects or ``(label, spec or agent)`` pairs; repeated labels get #2...

    ``trust``: as ``--trust-checkpoint``; ``game_id``: takes other providers' agents too; ``at_least``: agents needed.
    """
    specs: list[AgentSpec] = []
    seen: dict[str, int] = {}
    for item in raw:
        given_label, item = item if isinstance(item, tuple) and len(item) == 2 else (None, item)
        if isinstance(item, str):
            label, name, kwargs = parse_spec(item, game_id)
            if trust and "path" in kwargs and name in AGENT_NAMES:
                kwargs["trust"] = True
            spec = AgentSpec(given_label or label, name, kwargs)
        else:
            check_agent(item, f"the agent {item!r}")
            label = given_label or agent_label(item)
            spec = AgentSpec(label, label, agent=item)
        seen[spec.label] = seen.get(spec.label, 0) + 1
        if seen[spec.label] > 1:
            spec = dataclasses.replace(spec, label=f"{spec.label}#{seen[spec.label]}")
        specs.append(spec)
    if len(specs) < at_least:
        raise ValueError("a tournament needs at least two agents (e.g. --agents random greedy)")
    return specs


def evaluate(
    game_id: str,
    specs: list[AgentSpec],
    deals: int,
    seed: int = 0,
    workers: int = 1,
    options: dict[str, Any] | None = None,
    out: str | None = None,
    record: int | None = None,
    plot: bool = True,
    quiet: bool = False,
    kind: str = "evaluate",
    backend: Backend = LOCAL,
    loop: str = "batched",
    batch: int = DEFAULT_BATCH,
    illegal: str = "raise",
) -> dict[str, Any]:
    """Run the tournament (``run_games``), write its outputs and return the summary (with ``folder``).

    ``workers`` are capped by the cores and the tasks to play, except on a Ray cluster at an address.
    """
    options = dict(options or {})
    seed = check_seed(seed)
    check_out(out, "--out")  # a file in the way fails before any work, not after every game
    n = make_rules(game_id, **options).info.num_players  # bad options fail before any work
    check_choice("illegal", illegal, ILLEGAL)
    for spec in specs:  # unknown agents, missing checkpoints, code that does not load: fail before the pool starts
        spec.build(game_id, options)
    pairs = len(specs) * (len(specs) - 1) // (2 if n == 2 else 1)
    if not (backend.is_ray and (backend.address or os.environ.get("RAY_ADDRESS"))):
        if check_choice("loop", loop, LOOPS) == "batched":  # a task: one pairing and arrangement, --batch deals at once
            tasks = pairs * n * math.ceil(deals / check_batch(batch))
            workers = cap_workers(workers, tasks, "tasks to play (pairs of agents x seat arrangements x batches)")
        else:
            workers = cap_workers(workers, pairs * deals, "deals to play (pairs of agents x deals)")
    bar = progress_bar(pairs * deals * n, f"{game_id} tournament", quiet)
    t0 = time.perf_counter()
    try:
        records = run_games(
            game_id, specs, deals, seed, workers, options, bar.update, backend, loop=loop, batch=batch, illegal=illegal
        )
    finally:
        bar.close()
    elapsed = time.perf_counter() - t0
    folder = run_folder(kind, game_id, out)
    config = {
        "game": game_id,
        "options": options,
        "agents": [s.describe() for s in specs],
        "deals": deals,
        "seed": seed,
        "workers": workers,
        "loop": loop,
        **({"batch": batch} if loop == "batched" else {}),
        "illegal_action": illegal,
        **backend.describe(),
        "games": len(records),
        "seconds": round(elapsed, 2),
    }
    summary = write_outputs(folder, game_id, [s.label for s in specs], records, config, n, plot=plot)
    forfeits = Counter(rec.illegal.split(" (seat ")[0] for rec in records if rec.illegal)
    summary.update(folder=folder, seconds=elapsed, games=len(records), forfeits=dict(forfeits))
    if record:  # the first `record` deals' games, played again with their actions (experiments.replays)
        from experiments.replays import record_replays

        summary["replays"] = record_replays(folder, record, specs)
    return summary


@dataclasses.dataclass
class TournamentResult:
    """A tournament's outcome: the table the command prints, the ratings and cells, where its files are."""

    table: str  # the win-rate table and the Bradley–Terry ratings, in Markdown
    ratings: dict[str, float]
    cells: dict[tuple[str, str], Any]  # (row, column) -> experiments.play.tournament.Cell
    folder: Any  # the run folder: results.json, table.csv, table.md (heatmap.png)
    games: int
    seconds: float
    forfeits: dict[str, int]  # label -> games it lost at an illegal action (illegal="lose")

    def score(self, row: str, column: str) -> float:
        """``row``'s score against ``column`` per game (wins + ½ draws; in walls, alone against copies)."""
        return float(self.cells[(row, column)].win_rate)

    def __str__(self) -> str:
        return self.table

    def __repr__(self) -> str:  # no folder path: print() or a notebook's display shows the table
        return f"<TournamentResult: {', '.join(self.ratings)}; {self.games} games in {self.seconds:.1f} s>"

    def _repr_markdown_(self) -> str:  # a notebook shows the table as a table
        return self.table


def tournament(
    game_id: str,
    agents: Sequence[Any],
    deals: int = 200,
    seed: int = 0,
    workers: int = 1,
    options: dict[str, Any] | None = None,
    out: str | None = None,
    plot: bool = False,
    quiet: bool = True,
    loop: str = "batched",
    batch: int = DEFAULT_BATCH,
    illegal: str = "raise",
    trust: bool = False,
    backend: Backend = LOCAL,
) -> TournamentResult:
    """A round-robin tournament of ``agents``, the one ``python -m experiments.evaluate`` plays, as a result object.

    ``agents`` mixes command-line specs (``"greedy"``, ``"mine=file.py:Cls"``), agent objects (with ``act``)
    and ``(label, spec or agent)`` pairs; the same arguments as the command give the same games and table.
    """
    specs = specs_from_args(list(agents), trust, game_id)
    summary = evaluate(
        game_id, specs, deals, seed, workers, options, out, plot=plot, quiet=quiet, backend=backend, loop=loop,
        batch=batch, illegal=illegal,
    )  # fmt: skip
    return TournamentResult(**{field.name: summary[field.name] for field in dataclasses.fields(TournamentResult)})


def against_baselines(
    game_id: str,
    label: str,
    path: str,
    deals: int,
    seed: int,
    workers: int,
    options: dict[str, Any],
    out: str,
    quiet: bool,
    untrained: str | None = None,
    trust: bool = False,
    backend: Backend = LOCAL,
) -> dict[str, Any]:
    """The tournament of the baselines and the PPO checkpoint ``path`` as ``label``, then the checkpoint training
    started from (``untrained``) if given: last, so the other pairs play the same games as without it."""
    specs = [AgentSpec(name, name) for name in baselines(game_id)]
    extra = {"trust": True} if trust else {}
    specs.append(AgentSpec(label, "ppo", {"path": path, **extra}))
    if untrained is not None:
        specs.append(AgentSpec("untrained", "ppo", {"path": untrained, **extra}))
    return evaluate(game_id, specs, deals, seed, workers, options, out, quiet=quiet, backend=backend)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = build_parser()
    args = parser.parse_args(argv)

    def body() -> None:
        specs = specs_from_args(args.agents, args.trust_checkpoint, args.game)
        summary = evaluate(
            args.game,
            specs,
            args.deals,
            args.seed,
            args.workers,
            dict(args.option),
            args.out,
            args.record,
            plot=not args.no_plot,
            quiet=args.quiet,
            backend=backend_from_args(args),
            loop="sequential" if args.sequential else "batched",
            batch=args.batch,
            illegal=args.illegal_action,
        )
        print(f"\n{summary['table']}")
        if summary["forfeits"]:
            lost = ", ".join(f"{label} {count}" for label, count in summary["forfeits"].items())
            print(f"\nGames lost at an illegal action (--illegal-action lose; results.json says why): {lost}")
        print(f"\n{summary['games']} games in {summary['seconds']:.1f} s; outputs in {summary['folder']}/")
        if "replays" in summary:
            path, count = summary["replays"]
            print(f"{count} replays in {path} (python -m jericho_env.web shows them)")

    return run_cli(parser, body)


if __name__ == "__main__":
    sys.exit(main())
