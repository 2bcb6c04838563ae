"""The tournament's two game loops side by side: games per second, and the same strength.

    python -m experiments.studies.tournament_bench speed castles walls grid --deals 40 --search-deals 2
    python -m experiments.studies.tournament_bench strength castles --deals 200

``speed`` plays, in each game, three pairings against greedy with the sequential loop (one game at a time
through the AEC env) and the batched loop (``experiments.play.batched_games``, ``--batch`` deals at once), in
one process, on the same deals: ``random`` vs greedy, ``ppo`` vs greedy, and ``ismcts`` (``--search``
budget, default the game's own) vs greedy on ``--search-deals`` deals. It prints each loop's games per
second of wall clock and of this process's CPU time (which other work on a shared machine inflates
less), and the ratios. Each loop first plays a deal untimed, so imports and compiled kernels are not
counted.

``strength`` plays ``--deals`` seat-swapped deals of random vs greedy, ppo vs greedy and ppo sampling its
moves (``deterministic=False``) vs greedy with each loop, and prints each score with its 95% Wilson
interval and whether each loop's score lies inside the other's interval: the loops draw different random
numbers, so their games differ, not their strength.

``ppo`` is ``--ppo GAME=PATH`` where given, else an untrained network of the game's training preset
(``experiments.training.presets``: its network and prior, so a forward pass costs what a trained one's does), made
in a temporary folder. Figures are copied to ``docs/`` by hand, saying the machine and its load.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from experiments.cli import cli_parser, one_line, positive_int
from experiments.play.batched_games import DEFAULT_BATCH
from experiments.play.tournament import AgentSpec, run_games, tabulate
from jericho_env.core.rules import JerichoError
from jericho_env.registry import known_game_ids, make_rules


def preset_checkpoint(game: str, folder: Path) -> Path:
    """An untrained network of ``game``'s training preset (network, layers, prior), saved in ``folder``."""
    from sb3_contrib import MaskablePPO

    import jericho_env
    from agents.checkpoint import CheckpointMeta, PolicySpec, attach_meta, save_checkpoint
    from agents.prior import PriorEnv
    from experiments.training.ppo.config import TrainConfig

    values = TrainConfig.preset(game)
    spec = PolicySpec(values["policy"], values["net"], values["prior"], values["prior_weight"])
    policy, kwargs = spec.build(game, {})
    env: Any = jericho_env.single_agent(game)
    if spec.prior != "none":
        env = PriorEnv(env, spec.prior, game)
    model = MaskablePPO(policy, env, n_steps=64, batch_size=64, policy_kwargs=kwargs, seed=0, device="cpu")
    hyper = {k: values[k] for k in ("learning_rate", "lr_schedule", "n_steps", "batch_size", "n_epochs")}
    hyper.update({k: values[k] for k in ("gamma", "gae_lambda", "ent_coef", "seed")})
    attach_meta(model, CheckpointMeta(game, {}, spec, {"hyperparameters": hyper}))
    return save_checkpoint(model, folder / f"{game}-untrained.zip")


def opponents(game: str, folder: Path, ppo: dict[str, str], search: str | None) -> dict[str, AgentSpec]:
    """The agents set against greedy: random, ppo and ismcts."""
    from agents.registry import parse_budget

    path = ppo.get(game) or str(preset_checkpoint(game, folder))
    return {
        "random": AgentSpec("random", "random"),
        "ppo": AgentSpec("ppo", "ppo", {"path": path}),
        "ismcts": AgentSpec("ismcts", "ismcts", parse_budget(search or "")),
    }


def games_per_second(
    game: str, specs: list[AgentSpec], deals: int, seed: int, loop: str, batch: int
) -> tuple[float, float]:
    """Games per second of one loop over ``deals`` deals (after one untimed deal): wall clock and CPU time."""
    run_games(game, specs, 1, seed + 1, loop=loop, batch=batch)
    t0, c0 = time.perf_counter(), time.process_time()
    records = run_games(game, specs, deals, seed, loop=loop, batch=batch)
    return len(records) / (time.perf_counter() - t0), len(records) / (time.process_time() - c0)


def speed(args: argparse.Namespace, folder: Path) -> None:
    """Print the ``speed`` table (see the module docstring)."""
    print(f"| game | pairing | deals | sequential games/s | batched games/s (batch {args.batch}) | ratio | CPU ratio |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for game in args.games:
        greedy = AgentSpec("greedy", "greedy")
        for label, spec in opponents(game, folder, args.ppo, args.search).items():
            deals = args.search_deals if label == "ismcts" else args.deals
            specs = [spec, greedy]
            seq, seq_cpu = games_per_second(game, specs, deals, args.seed, "sequential", args.batch)
            bat, bat_cpu = games_per_second(game, specs, deals, args.seed, "batched", args.batch)
            loops = f"{seq:.3g} ({seq_cpu:.3g} CPU) | {bat:.3g} ({bat_cpu:.3g} CPU)"
            print(f"| {game} | {label} vs greedy | {deals} | {loops} | {bat / seq:.1f}x | {bat_cpu / seq_cpu:.1f}x |")


def strength(args: argparse.Namespace, folder: Path) -> None:
    """Print the ``strength`` table (see the module docstring)."""
    print("| game | pairing | games | sequential score [95%] | batched score [95%] | each in the other's |")
    print("| --- | --- | ---: | --- | --- | --- |")
    for game in args.games:
        field = opponents(game, folder, args.ppo, None)
        ppo = field["ppo"]
        sampling = AgentSpec("ppo-sampling", "ppo", {**ppo.kwargs, "deterministic": False})
        for spec in (field["random"], ppo, sampling):
            specs = [spec, AgentSpec("greedy", "greedy")]
            seq, bat = (_cell(game, specs, args, loop) for loop in ("sequential", "batched"))
            inside = _within(bat.win_rate, seq.interval) and _within(seq.win_rate, bat.interval)
            scores = f"{_score(seq)} | {_score(bat)} | {'yes' if inside else 'NO'}"
            print(f"| {game} | {spec.label} vs greedy | {seq.games} | {scores} |", flush=True)


def _cell(game: str, specs: list[AgentSpec], args: argparse.Namespace, loop: str) -> Any:
    """The first agent's cell against the second in a tournament played by ``loop``."""
    records = run_games(game, specs, args.deals, args.seed, loop=loop, batch=args.batch)
    return tabulate(records, [s.label for s in specs])[(specs[0].label, specs[1].label)]


def _within(score: float, interval: tuple[float, float]) -> bool:
    """Whether ``score`` lies in ``interval`` (up to rounding: Wilson's bounds at 0 or 1 games won are inexact)."""
    return interval[0] - 1e-9 <= score <= interval[1] + 1e-9


def _score(cell: Any) -> str:
    """A cell's score and its 95% interval."""
    lo, hi = cell.interval
    return f"{cell.win_rate:.3f} [{lo:.3f}, {hi:.3f}]"


def parse_ppo(text: str) -> tuple[str, str]:
    """``GAME=PATH`` for argparse."""
    game, sep, path = text.partition("=")
    if not sep or not path:
        raise argparse.ArgumentTypeError(f"expected GAME=PATH, got {text!r}")
    return game, path


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    p = cli_parser("experiments.studies.tournament_bench", __doc__)
    p.add_argument("what", choices=("speed", "strength"), help="speed: games/s per loop; strength: scores per loop")
    p.add_argument("games", nargs="+", help=f"games: {', '.join(known_game_ids())}")
    p.add_argument("--deals", type=positive_int, default=40, help="deals per pairing (default 40)")
    p.add_argument("--search-deals", type=positive_int, default=2, help="deals of ismcts vs greedy (speed; default 2)")
    p.add_argument("--search", default=None, metavar="BUDGET", help="ismcts budget (agents.registry.parse_budget)")
    p.add_argument("--batch", type=positive_int, default=DEFAULT_BATCH, help="deals at once in the batched loop")
    p.add_argument("--ppo", type=parse_ppo, action="append", default=[], metavar="GAME=PATH", help="a ppo checkpoint")
    p.add_argument("--seed", type=int, default=0, help="tournament seed (default 0)")
    args = p.parse_args(argv)
    args.ppo = dict(args.ppo)
    try:
        for game in args.games:
            make_rules(game)
        with tempfile.TemporaryDirectory(prefix="tournament-bench-") as tmp:
            (speed if args.what == "speed" else strength)(args, Path(tmp))
    except (JerichoError, ValueError, OSError, ImportError) as e:
        p.exit(2, f"{p.prog}: error: {one_line(e)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
