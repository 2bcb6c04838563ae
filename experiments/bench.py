"""Throughput with uniformly random legal actions, side by side with reference environments.

``python -m experiments.bench [GAME ...] [--seconds S] [--json PATH]`` measures, in one process:
the bare rules-engine loop (legal actions + apply, legality checked; and with ``apply_unchecked``,
the path of search code and of the envs after their mask check), the AEC loop through the public API
(``last()``, observation and mask every step, ``step``), the single-agent Gymnasium view, and as
references PettingZoo's ``texas_holdem_v4`` and ``connect_four_v3`` and OpenSpiel's C++
``gin_rummy`` through ``pyspiel`` (observation tensor every step), when installed (the ``bench``
extra). It prints agent-steps/s and games/s per row and each game's ratio to each reference.
Peak memory of the AEC loop and the size of one observation and one state are reported too.
"""

from __future__ import annotations

import functools
import json
import pickle
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

from experiments.cli import cli_parser, positive_float, positive_int
from jericho_env.registry import GAME_IDS, make_rules

Loop = Callable[[float], tuple[int, int]]  # seconds -> (agent steps, games)


def timed(run_one_game: Callable[[], int], seconds: float) -> tuple[int, int]:
    """Run whole games until ``seconds`` have passed; return (steps, games)."""
    steps = games = 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        steps += run_one_game()
        games += 1
    return steps, games


def rules_loop(game: str, checked: bool = True) -> Callable[[], int]:
    """One game of the bare rules loop: ``apply`` (legality checked), or ``apply_unchecked`` as search uses it."""
    rules = make_rules(game)
    rng = np.random.default_rng(0)
    py_rng = np.random.default_rng(1)
    rand = py_rng.random

    def one() -> int:
        state = rules.initial_state(rng)
        n = 0
        legal_actions, terminal = rules.legal_actions, rules.is_terminal
        apply = rules.apply if checked else rules.apply_unchecked
        while not terminal(state):
            legal = legal_actions(state)
            apply(state, legal[int(rand() * len(legal))])
            n += 1
        return n

    return one


def aec_loop(make_env: Callable[[], Any]) -> Callable[[], int]:
    """One game through a PettingZoo AEC env's public API."""
    env = make_env()
    rng = np.random.default_rng(0)
    seed = [0]

    def one() -> int:
        seed[0] += 1
        env.reset(seed=seed[0])
        n = 0
        for _agent in env.agent_iter():
            obs, _r, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[int(rng.random() * len(legal))]))
            n += 1
        return n

    return one


def single_loop(game: str) -> Callable[[], int]:
    """One episode of the single-agent view with random opponents (counts learner steps)."""
    import jericho_env

    env = jericho_env.single_agent(game)
    rng = np.random.default_rng(0)
    seed = [0]

    def one() -> int:
        seed[0] += 1
        env.reset(seed=seed[0])
        n, done = 0, False
        while not done:
            legal = np.flatnonzero(env.action_masks())
            _, _, done, _, _ = env.step(int(legal[int(rng.random() * len(legal))]))
            n += 1
        return n

    return one


def openspiel_loop(name: str) -> Callable[[], int]:
    """One game of an OpenSpiel C++ game from Python, observation tensor every decision step."""
    import pyspiel

    game = pyspiel.load_game(name)
    rng = np.random.default_rng(0)

    def one() -> int:
        state = game.new_initial_state()
        n = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[int(rng.random() * len(outcomes))][0])
                continue
            np.asarray(state.observation_tensor(state.current_player()), dtype=np.float32)
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.random() * len(legal))])
            n += 1
        return n

    return one


def references() -> dict[str, Callable[[], Callable[[], int]]]:
    """Reference loops that can be built here (missing packages are skipped with a note)."""
    refs: dict[str, Callable[[], Callable[[], int]]] = {}
    try:
        from pettingzoo.classic import connect_four_v3, texas_holdem_v4

        refs["pz texas_holdem_v4 (AEC)"] = lambda: aec_loop(texas_holdem_v4.env)
        refs["pz connect_four_v3 (AEC)"] = lambda: aec_loop(connect_four_v3.env)
    except ImportError as e:
        print(f"(skipping PettingZoo references: {e}; pip install -e '.[bench]')", file=sys.stderr)
    try:
        import pyspiel  # noqa: F401

        refs["openspiel gin_rummy (C++)"] = lambda: openspiel_loop("gin_rummy")
    except ImportError:
        print("(skipping OpenSpiel reference: pip install -e '.[bench]')", file=sys.stderr)
    return refs


def memory_report(game: str, games: int = 30) -> dict[str, int]:
    """Peak traced memory of AEC games, and pickled sizes of one observation and one state."""
    import jericho_env

    env = jericho_env.make(game)
    one = aec_loop(lambda: env)
    one()
    tracemalloc.start()
    for _ in range(games):
        one()
    _, peak_small = tracemalloc.get_traced_memory()
    for _ in range(games * 3):
        one()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    raw = env.unwrapped
    return {
        f"peak_bytes_after_{games}_games": peak_small,
        f"peak_bytes_after_{games * 4}_games": peak,
        "observation_bytes": int(obs["observation"].nbytes + obs["action_mask"].nbytes),
        "state_pickle_bytes": len(pickle.dumps(raw.state)),
    }


def run(games: list[str], seconds: float, with_refs: bool = True, repeats: int = 3) -> dict[str, Any]:
    """Measure every row; return the results as a dict.

    Each row is measured in ``repeats`` turns of ``seconds / repeats``, the rows taking turns, and
    the best turn counts: on a shared machine load comes and goes, and taking turns exposes every
    row, references included, to the same conditions, so the ratios stay meaningful.
    """
    import jericho_env

    loops: dict[str, Callable[[], int]] = {}
    for g in games:
        loops[f"{g} rules"] = rules_loop(g)
        loops[f"{g} rules unchecked"] = rules_loop(g, checked=False)
        loops[f"{g} AEC"] = aec_loop(functools.partial(jericho_env.make, g))
        loops[f"{g} single-agent"] = single_loop(g)
    refs = references() if with_refs else {}
    for label, build in refs.items():
        loops[label] = build()
    for loop in loops.values():
        loop()  # warm-up
    best: dict[str, tuple[float, float]] = {}
    turn = seconds / repeats
    print(f"measuring {seconds:g} s per row ({repeats} turns of {turn:.2g} s; the best turn counts)")
    for _ in range(repeats):
        for label, loop in loops.items():
            steps, n_games = timed(loop, turn)
            rate = (steps / turn, n_games / turn)
            if label not in best or rate[0] > best[label][0]:
                best[label] = rate
    rows: dict[str, dict[str, float]] = {}
    for label, (steps_s, games_s) in best.items():
        rows[label] = {"steps_per_s": steps_s, "games_per_s": games_s}
        print(f"  {label:<34} {steps_s:>11,.0f} steps/s {games_s:>9,.1f} games/s", flush=True)
    ratios = {}
    for g in games:
        for kind in ("rules", "AEC"):
            mine = rows[f"{g} {kind}"]["steps_per_s"]
            ratios[f"{g} {kind}"] = {ref: mine / rows[ref]["steps_per_s"] for ref in refs}
    memory = {g: memory_report(g) for g in games}
    return {"seconds_per_row": seconds, "rows": rows, "ratios": ratios, "memory": memory}


def print_summary(result: dict[str, Any]) -> None:
    """Ratios and memory as tables."""
    refs: dict[str, Any] = next(iter(result["ratios"].values()), {})
    if refs:
        print("\nratio of agent-steps/s to each reference:")
        print(f"  {'':<20}" + "".join(f"{r.split(' (')[0]:>24}" for r in refs))
        for label, rs in result["ratios"].items():
            print(f"  {label:<20}" + "".join(f"{v:>23.1f}x" for v in rs.values()))
    print("\nmemory (tracemalloc peak of the AEC loop; sizes of one observation+mask and one pickled state):")
    for g, m in result["memory"].items():
        print("  " + g + ": " + ", ".join(f"{k}={v:,}" for k, v in m.items()))


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    p = cli_parser("experiments.bench", __doc__)
    p.add_argument("games", nargs="*", help=f"games to measure (default all: {', '.join(GAME_IDS)})")
    p.add_argument("--seconds", type=positive_float, default=3.0, help="seconds per row (default 3)")
    p.add_argument("--json", default=None, help="also write the results to this JSON file")
    p.add_argument("--no-refs", action="store_true", help="skip the reference environments")
    p.add_argument("--repeats", type=positive_int, default=3, help="turns per row; the best turn counts (default 3)")
    args = p.parse_args(argv)
    bad = [g for g in args.games if g not in GAME_IDS]
    if bad:
        p.error(f"unknown game(s) {', '.join(bad)}; choose from {', '.join(GAME_IDS)}")
    result = run(args.games or list(GAME_IDS), args.seconds, with_refs=not args.no_refs, repeats=args.repeats)
    print_summary(result)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
