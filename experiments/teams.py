"""Head to head in a game of more than two players: agent A in half the seats, agent B in the rest.

Each deal is played once for every way to give A ``n // 2`` of the n seats, B taking the others, so every
seat and turn order is A's equally often. A game's score for A is its share of the winning seats (a game
nobody wins counts one half); the command prints A's mean score with its 95% Wilson interval next to the
even share ``(n // 2) / n`` (50% with four players, read as a two-player head to head). Deal ``d`` is the
env seed ``derive_seed(seed, d)`` and the agent in seat ``s`` is reset with ``derive_seed(seed, d, s)`` in
every arrangement (common random numbers), so the games are the same for any number of workers.
Checkpoints load through the safe path only.

Examples:
    python -m experiments.teams walls exit-search=agents/zoo/walls-ppo.zip ismcts --deals 250 --workers 2
    python -m experiments.teams walls ppo greedy --deals 100 --workers 2
    python -m experiments.teams walls greedy random --option num_players=5 --deals 50
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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
from experiments.evaluate import specs_from_args
from experiments.play.deals import AgentSpec, derive_seed
from experiments.play.report import write_file
from experiments.play.tournament import _one_thread, outcome, play_game, wilson_interval
from jericho_env.core.validate import check_seed
from jericho_env.registry import known_game_ids, make_rules


def team_arrangements(n_players: int) -> list[tuple[int, ...]]:
    """A's seats in each arrangement of a deal: every set of ``n_players // 2`` seats, in lexicographic order."""
    if n_players < 2:
        raise ValueError(f"a head to head needs at least two seats, got {n_players}")
    return list(itertools.combinations(range(n_players), n_players // 2))


def team_score(returns: Sequence[float], seats: Sequence[int]) -> float:
    """A's share of the winning seats (positive returns) of one game; 0.5 when nobody wins."""
    winners = [s for s in range(len(returns)) if outcome(returns, s) > 0]
    return sum(s in seats for s in winners) / len(winners) if winners else 0.5


def play_deals(
    game_id: str, options: dict[str, Any], a: AgentSpec, b: AgentSpec, seed: int, deals: Sequence[int]
) -> list[float]:
    """A's score in every game of ``deals`` (deal by deal, arrangement by arrangement)."""
    from jericho_env.envs.aec import JerichoEnv

    env = JerichoEnv(game_id, **options)
    n = env.rules.info.num_players
    arrangements = team_arrangements(n)
    k = len(arrangements[0])
    side_a = [a.build(game_id, options, fresh=True) for _ in range(k)]
    side_b = [b.build(game_id, options, fresh=True) for _ in range(n - k)]
    scores = []
    for d in deals:
        env_seed = derive_seed(seed, d)
        for mine in arrangements:
            it_a, it_b = iter(side_a), iter(side_b)
            seats = [next(it_a) if s in mine else next(it_b) for s in range(n)]
            returns, _ = play_game(env, seats, env_seed, [derive_seed(seed, d, s) for s in range(n)])
            scores.append(team_score(returns, mine))
    return scores


def _play_chunk(args: tuple[Any, ...]) -> list[float]:
    _one_thread()
    return play_deals(*args)


def head_to_head(
    game_id: str,
    a: AgentSpec,
    b: AgentSpec,
    deals: int,
    seed: int = 0,
    workers: int = 1,
    options: dict[str, Any] | None = None,
    quiet: bool = True,
) -> dict[str, Any]:
    """Play the head to head (see the module docstring); A's score, interval, even share, games and seconds."""
    options = dict(options or {})
    seed = check_seed(seed)
    n = make_rules(game_id, **options).info.num_players  # bad options fail before any work
    for spec in (a, b):  # unknown agents, missing checkpoints: fail before any game
        spec.build(game_id, options)
    per_deal = len(team_arrangements(n))
    workers = cap_workers(workers, deals, "deals to play")
    pieces = min(deals, workers * 4)  # consecutive deals; imap keeps their order
    chunks = [list(range(deals * i // pieces, deals * (i + 1) // pieces)) for i in range(pieces)]
    bar = progress_bar(deals * per_deal, f"{game_id} head to head", quiet)
    t0 = time.perf_counter()
    parts: list[list[float]] = []
    try:
        if workers == 1:
            for c in chunks:
                parts.append(play_deals(game_id, options, a, b, seed, c))
                bar.update(len(parts[-1]))
        else:
            from jericho_env.processes import WorkerPool

            work = [(game_id, options, a, b, seed, c) for c in chunks]
            preload = ("experiments.play.tournament", "agents.*")  # the fork server's imports (jericho_env.processes)
            with WorkerPool(workers, name="head-to-head worker", preload=preload) as pool:
                for part in pool.imap(_play_chunk, work, describe=lambda w: f"deals {w[0][5][0]}-{w[-1][5][-1]}"):
                    parts.append(part)
                    bar.update(len(part))
    finally:
        bar.close()
    scores = [x for part in parts for x in part]
    total = float(sum(scores))
    lo, hi = wilson_interval(total, len(scores))
    return {
        "game": game_id,
        "options": options,
        "a": a.__dict__,
        "b": b.__dict__,
        "deals": deals,
        "seed": seed,
        "players": n,
        "seats_of_a": n // 2,
        "games": len(scores),
        "score": total / len(scores),
        "interval": [lo, hi],
        "even_share": (n // 2) / n,
        "scores": scores,
        "seconds": round(time.perf_counter() - t0, 2),
    }


def summary_line(result: dict[str, Any]) -> str:
    """One line: who, A's score with its interval, the even share, games and time."""
    lo, hi = result["interval"]
    return (
        f"{result['a']['label']} ({result['seats_of_a']} seats) against {result['b']['label']} "
        f"({result['players'] - result['seats_of_a']} seats), {result['game']}: "
        f"{100 * result['score']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] (even share "
        f"{100 * result['even_share']:.0f}%), {result['games']} games in {result['seconds']:.1f} s"
    )


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    p = cli_parser("experiments.teams", __doc__)
    p.add_argument("game", help=f"which game: {', '.join(known_game_ids())}")
    p.add_argument("a", help="agent A, as experiments.evaluate's --agents (e.g. exit-search=PATH, ppo, greedy)")
    p.add_argument("b", help="agent B, the same way")
    p.add_argument("--deals", type=positive_int, default=100, help="deals, each in every arrangement (default 100)")
    p.add_argument("--seed", type=seed_int, default=0, help="seed of the deals and the agents (default 0)")
    p.add_argument("--workers", type=positive_int, default=1, help="processes (results are identical for any count)")
    option = "game option, e.g. num_players=5 for walls (repeatable)"
    p.add_argument("--option", type=parse_option, action="append", default=[], metavar="KEY=VALUE", help=option)
    p.add_argument("--out", default=None, help="write the result (and every game's score) to OUT/teams.json")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = build_parser()
    args = parser.parse_args(argv)

    def body() -> None:
        check_out(args.out, "--out")
        a, b = specs_from_args([args.a, args.b], game_id=args.game)
        result = head_to_head(args.game, a, b, args.deals, args.seed, args.workers, dict(args.option), args.quiet)
        print(summary_line(result))
        if args.out:
            Path(args.out).mkdir(parents=True, exist_ok=True)
            write_file(Path(args.out) / "teams.json", json.dumps(result, indent=1))

    return run_cli(parser, body)


if __name__ == "__main__":
    raise SystemExit(main())
