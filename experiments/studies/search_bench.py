"""Search figures: time, simulations and peak memory per ``ismcts`` move, and our ISMCTS against OpenSpiel's.

    python -m experiments.studies.search_bench moves castles --agent ismcts=0.5s --games 4
    python -m experiments.studies.search_bench backends castles --simulations 100 --games 40
    python -m experiments.studies.search_bench engines castles --positions 60

``moves`` plays ``--games`` games of the agent alone against greedy players (its seat rotating, deals
from ``--seed``) and prints its wins (shared ones count) with their 95% Wilson interval and, over the
agent's moves that had a choice, the mean and maximum seconds per move, wall clock and CPU time of
the process (``time.process_time``, which other work on a shared machine does not inflate; untraced
games), the mean number of simulations and the peak memory one move allocated (odd games, or the
first ``--memory-games`` of them, under ``tracemalloc``, which slows the search: Python allocations
during the search, the tree and its copies of the state); ``--progress`` prints each game's result
as it ends. ``backends`` plays our ISMCTS (``backend=jericho``) against OpenSpiel's ``ISMCTSBot``
through the bridge (``backend=openspiel``), both with random rollouts, no prior and ``uct_c`` 1.0, at
the same number of simulations, seats swapped on every deal, and prints the win rate with its 95%
interval and each side's seconds per move. ``engines`` times the Python search and the compiled one
(``agents.search.compiled``; the agent's ``engine`` argument) on the same positions: greedy players play
``--seed``'s deals, and at every third decision with a choice, from ``--skip`` on, both engines of the agent
(``--agent``, default ``ismcts`` at the game's default settings) choose a move for the seat to move, each
from its own copy of the information view; it prints their mean and maximum CPU and wall seconds per move,
simulations, and the ratio of the means (Python over compiled). ``--profile`` adds each engine's cProfile
(top functions by own time). Figures are written to ``docs/results.md`` by hand.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
import tracemalloc
from typing import Any

import numpy as np

import agents
from agents.registry import parse_spec
from agents.search.compiled import ENGINES as _ALL_ENGINES
from experiments.cli import nonnegative_int, parse_option, positive_int, run_cli, seed_int
from experiments.play.tournament import derive_seed, wilson_interval
from jericho_env.agent_plugins import choose_action
from jericho_env.envs.aec import JerichoEnv

ENGINES = tuple(e for e in _ALL_ENGINES if e != "auto")  # the two searches compared by ``engines``


class _Timed:
    """Wraps an agent: records seconds, simulations and peak traced memory of each move with a choice."""

    def __init__(self, agent: Any, trace: bool) -> None:
        self.agent, self.trace = agent, trace
        self.seconds: list[float] = []
        self.cpu: list[float] = []
        self.sims: list[int] = []
        self.peaks: list[int] = []

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)

    def observe_view(self, view: Any) -> None:
        self.agent.observe_view(view)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        choice = int(observation["action_mask"].sum()) > 1
        if self.trace and choice:
            tracemalloc.start()
        t0, c0 = time.perf_counter(), time.process_time()
        action = int(self.agent.act(observation))
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        if self.trace and choice:
            self.peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
        elif choice:  # tracing slows the search: time only the untraced moves
            self.seconds.append(dt)
            self.cpu.append(cpu)
        if choice:
            search = getattr(self.agent, "search", None)
            if search is not None:
                self.sims.append(search.last_simulations)
        return action


def _play(env: JerichoEnv, seats: list[Any], seed: int) -> list[float]:
    for i, agent in enumerate(seats):
        agent.reset(seed=derive_seed(seed, i))
    env.reset(seed=seed)
    rules = env.rules
    while not rules.is_terminal(env.state):
        seat = rules.current_player(env.state)
        env.step(choose_action(seats[seat], env, env.possible_agents[seat]))
    return [float(r) for r in rules.returns(env.state)]


def moves(
    game: str,
    spec: str,
    games: int,
    options: dict[str, Any],
    seed: int,
    progress: bool = False,
    memory_games: int | None = None,
) -> dict[str, float]:
    """Per-move figures of the agent ``spec`` against greedy players."""
    env = JerichoEnv(game, **options)
    n = env.rules.info.num_players
    _, name, kwargs = parse_spec(spec)
    timed = _Timed(agents.make(name, game, **kwargs, **options), trace=True)
    field = [agents.make("greedy", game, **options) for _ in range(n - 1)]
    score = 0.0
    for g in range(games):
        seat = g % n
        # memory on odd games (the first ``memory_games`` of them if given: tracing slows the search), time on the rest
        timed.trace = g % 2 == 1 and (memory_games is None or g < 2 * memory_games)
        seats = [*field[:seat], timed, *field[seat:]]
        ret = _play(env, seats, derive_seed(seed, g))
        score += ret[seat] > 0  # a win, shared or not (as the tournament tables count it)
        if progress:  # one line a game on stderr, so an unfinished run still tells what it played
            cpu = float(np.mean(timed.cpu)) if timed.cpu else float("nan")
            print(
                f"game {g + 1}/{games}: seat {seat}, return {ret[seat]:g}, wins {score:g}, mean CPU s {cpu:.3f}",
                file=sys.stderr,
                flush=True,
            )
    out = {
        "moves": len(timed.seconds),
        "mean_s": float(np.mean(timed.seconds)),
        "max_s": float(np.max(timed.seconds)),
        "mean_cpu_s": float(np.mean(timed.cpu)),
        "max_cpu_s": float(np.max(timed.cpu)),
        "mean_sims": float(np.mean(timed.sims)) if timed.sims else float("nan"),
        "peak_mib": max(timed.peaks) / 2**20,
        "mean_peak_mib": float(np.mean(timed.peaks)) / 2**20,
        "wins": score,
        "games": games,
    }
    out["ci_low"], out["ci_high"] = wilson_interval(score, games)
    return out


def backends(game: str, simulations: int, games: int, options: dict[str, Any], seed: int) -> dict[str, float]:
    """Our ISMCTS against OpenSpiel's ISMCTSBot, equal simulations, random rollouts, seats swapped per deal."""
    env = JerichoEnv(game, **options)
    if env.rules.info.num_players != 2:
        raise ValueError("the backend comparison is for two-player games (castles, grid)")
    plain = {"simulations": simulations, "uct_c": 1.0, "rollout": "random", "prior": "none"}
    ours = _Timed(agents.make("ismcts", game, **plain, **options), trace=False)
    theirs = _Timed(agents.make("ismcts", game, **plain, backend="openspiel", **options), trace=False)
    wins = 0.0
    for g in range(games):
        seats = [ours, theirs] if g % 2 == 0 else [theirs, ours]
        ret = _play(env, seats, derive_seed(seed, g // 2))
        mine = ret[g % 2]
        wins += 1.0 if mine > 0 else (0.5 if mine == 0 else 0.0)
    lo, hi = wilson_interval(wins, games)
    return {
        "ours_win_rate": wins / games,
        "ci_low": lo,
        "ci_high": hi,
        "ours_s_per_move": float(np.mean(ours.seconds)),
        "openspiel_s_per_move": float(np.mean(theirs.seconds)),
        "games": games,
    }


def engines(
    game: str, spec: str, positions: int, options: dict[str, Any], seed: int, skip: int = 0, profile: bool = False
) -> dict[str, float]:
    """Seconds per move of the agent ``spec`` with ``engine="python"`` and ``engine="compiled"``, same positions."""
    env = JerichoEnv(game, **options)
    rules = env.rules
    _, name, kwargs = parse_spec(spec)
    kwargs = {k: v for k, v in kwargs.items() if k != "engine"}
    timed = {e: _Timed(agents.make(name, game, **kwargs, engine=e, **options), trace=False) for e in ENGINES}
    greedy = [agents.make("greedy", game, **options) for _ in range(rules.info.num_players)]
    profiles = {e: cProfile.Profile() for e in ENGINES} if profile else {}
    decisions = done = g = 0
    while done < positions:
        env.reset(seed=derive_seed(seed, g))
        for i, a in enumerate(greedy):
            a.reset(seed=derive_seed(seed, 1000 * g + i))
        while not rules.is_terminal(env.state) and done < positions:
            agent_id = env.agent_selection
            if len(rules.legal_actions(env.state)) > 1:
                decisions += 1
                if decisions > skip and decisions % 3 == 0:
                    for e in ENGINES:
                        env._view_rng = np.random.default_rng([seed, done])  # the same view for both engines
                        agent = timed[e]
                        agent.reset(seed=derive_seed(seed, 7919 + done))
                        if done == 0 and e == "compiled":  # the first move loads the compiled code: not timed
                            choose_action(agent.agent, env, agent_id)
                            env._view_rng = np.random.default_rng([seed, done])
                            agent.reset(seed=derive_seed(seed, 7919 + done))
                        if profile:
                            profiles[e].enable()
                        action = choose_action(agent, env, agent_id)
                        if profile:
                            profiles[e].disable()
                        if not env.observe(agent_id)["action_mask"][action]:
                            raise RuntimeError(f"{e} engine chose the illegal action {action}")
                    done += 1
            env.step(choose_action(greedy[rules.current_player(env.state)], env, agent_id))
        g += 1
    out: dict[str, float] = {"positions": done}
    for e in ENGINES:
        t = timed[e]
        out[f"{e}_cpu_s"] = float(np.mean(t.cpu))
        out[f"{e}_max_cpu_s"] = float(np.max(t.cpu))
        out[f"{e}_wall_s"] = float(np.mean(t.seconds))
        out[f"{e}_sims"] = float(np.mean(t.sims)) if t.sims else float("nan")
    out["ratio_cpu"] = out["python_cpu_s"] / out["compiled_cpu_s"]
    out["ratio_wall"] = out["python_wall_s"] / out["compiled_wall_s"]
    for e, prof in profiles.items():
        print(f"--- {e} engine: top functions by own time", file=sys.stderr)
        pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(12)
    return out


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    p = argparse.ArgumentParser(prog="python -m experiments.studies.search_bench", description=__doc__.splitlines()[0])
    p.add_argument("what", choices=("moves", "backends", "engines"))
    p.add_argument("game")
    p.add_argument(
        "--agent", default=None, help="agent spec for 'moves' (default ismcts=0.5s) and 'engines' (default ismcts)"
    )
    p.add_argument("--positions", type=positive_int, default=40, help="'engines': positions each engine searches")
    p.add_argument("--skip", type=nonnegative_int, default=0, help="'engines': decisions with a choice skipped first")
    p.add_argument("--profile", action="store_true", help="'engines': print each engine's cProfile on stderr")
    p.add_argument("--simulations", type=positive_int, default=100, help="simulations per move for 'backends'")
    p.add_argument("--games", type=positive_int, default=4)
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument("--option", type=parse_option, action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--progress", action="store_true", help="'moves': print each game's result on stderr")
    p.add_argument(
        "--memory-games",
        type=nonnegative_int,
        default=None,
        help="'moves': trace memory on this many odd games (default: all)",
    )
    args = p.parse_args(argv)

    def run() -> None:
        options = dict(args.option)
        if args.what == "moves":  # the env and the agents are made before any game: bad input fails first
            figures = moves(
                args.game,
                args.agent or "ismcts=0.5s",
                args.games,
                options,
                args.seed,
                progress=args.progress,
                memory_games=args.memory_games,
            )
        elif args.what == "engines":
            figures = engines(
                args.game, args.agent or "ismcts", args.positions, options, args.seed, args.skip, args.profile
            )
        else:
            figures = backends(args.game, args.simulations, args.games, options, args.seed)
        for key, value in figures.items():
            print(f"{key}: {value:.4g}" if isinstance(value, float) else f"{key}: {value}")

    return run_cli(p, run)


if __name__ == "__main__":
    sys.exit(main())
