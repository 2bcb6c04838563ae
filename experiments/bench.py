"""Throughput with uniformly random legal actions, side by side with reference environments.

``python -m experiments.bench [GAME ...] [--seconds S] [--json PATH]`` times, in one process, per game: the bare
rules loop (``apply``, and ``apply_unchecked`` as search uses it), the AEC loop through the public API, the
single-agent view and, with compiled kernels, batched random play (``--num-envs`` games in lockstep); as references
PettingZoo's ``texas_holdem_v4`` and ``connect_four_v3``, OpenSpiel's ``gin_rummy`` and Pgx's card games
(``PGX_GAMES``, ``jax.vmap`` + ``jax.jit``) where installed. It prints agent-steps/s and games/s per row, each
game's ratio to each reference, and the AEC loop's peak memory and the size of one observation and one state.
"""

from __future__ import annotations

import functools
import itertools
import json
import pickle
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

import jericho_env
from experiments.cli import cli_parser, positive_float, positive_int
from jericho_env.registry import GAME_IDS, make_rules

Loop = Callable[[float], tuple[int, int]]  # seconds -> (agent steps, games)

PGX_GAMES = ("kuhn_poker", "leduc_holdem")
PGX_INSTALL = 'pip install -e ".[bench]" or pip install pgx (it pulls JAX CPU: jax and jaxlib, about 400 MB)'


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
    rand = np.random.default_rng(1).random

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
    seeds = itertools.count(1)

    def one() -> int:
        env.reset(seed=next(seeds))
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
    env = jericho_env.single_agent(game)
    rng = np.random.default_rng(0)
    seeds = itertools.count(1)

    def one() -> int:
        env.reset(seed=next(seeds))
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


def batched_skip_reason(game: str) -> str | None:
    """Why ``game`` gets no batched row here (None: it has compiled kernels and Numba is installed)."""
    from jericho_env.core.kernels import NUMBA

    if getattr(type(make_rules(game)), "batched", None) is None:
        return "no compiled kernels yet (make_batched would run its Python rules)"
    if not NUMBA:
        return "Numba is not installed (pip install -e '.[train]'); make_batched runs the Python rules"
    return None


def batched_loop(game: str, num_envs: int) -> tuple[Loop, float]:
    """Batched random play of ``num_envs`` games (auto-reset), and the seconds its first step took (kernel compile
    or cache load)."""
    from jericho_env.envs.batched import random_actions

    start = time.perf_counter()
    env = jericho_env.make_batched(game, num_envs, copy=False, check=False)
    rng = np.random.default_rng(0)
    _, mask, _ = env.reset(seed=0)
    _, mask, *_ = env.step(random_actions(mask, rng))
    first_step = time.perf_counter() - start
    masks = [mask]

    def run_for(seconds: float) -> tuple[int, int]:
        steps = games = 0
        mask = masks[0]
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            _, mask, _, _, terminated = env.step(random_actions(mask, rng))
            steps += num_envs
            games += int(np.count_nonzero(terminated))
        masks[0] = mask
        return steps, games

    return run_for, first_step


def pgx_loop(name: str, num_envs: int) -> tuple[Loop, float]:
    """Pgx's ``name`` in batched random play (``jax.vmap`` + ``jax.jit``, Pgx's auto-reset), as ``batched_loop``
    measures ours, and the seconds its compilation took."""
    import jax
    import pgx
    from pgx.experimental import act_randomly, auto_reset

    env = pgx.make(name)
    step = jax.vmap(auto_reset(env.step, env.init))

    def one(state: Any, key: Any, finished: Any) -> tuple[Any, Any, Any]:
        key, k_act, k_step = jax.random.split(key, 3)
        state = step(state, act_randomly(k_act, state.legal_action_mask), jax.random.split(k_step, num_envs))
        return state, key, finished + state.terminated.sum()

    play = jax.jit(one)
    start = time.perf_counter()
    key = jax.random.PRNGKey(0)
    carry = play(jax.jit(jax.vmap(env.init))(jax.random.split(key, num_envs)), key, 0)
    jax.block_until_ready(carry)
    compile_seconds = time.perf_counter() - start
    held = [carry]

    def run_for(seconds: float) -> tuple[int, int]:
        state, key, _ = held[0]
        finished = jax.numpy.zeros((), dtype=jax.numpy.int32)
        steps = 0
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            state, key, finished = play(state, key, finished)
            steps += num_envs
        jax.block_until_ready(state)
        held[0] = (state, key, finished)
        return steps, int(finished)

    return run_for, compile_seconds


def pgx_unavailable() -> str | None:
    """Why Pgx's games cannot be timed in this interpreter (None: they can)."""
    try:
        import pgx  # noqa: F401
    except ImportError as e:
        return f"Pgx is not installed here ({e}); to compare: {PGX_INSTALL}"
    return None


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


def run(
    games: list[str],
    seconds: float,
    with_refs: bool = True,
    repeats: int = 3,
    num_envs: int = 1024,
    with_pgx: bool = True,
) -> dict[str, Any]:
    """Measure every row in ``repeats`` turns of ``seconds / repeats``, the rows taking turns (the same load for
    every row); the best turn counts. Returns the results as a dict."""
    loops: dict[str, Loop] = {}
    for g in games:
        loops[f"{g} rules"] = functools.partial(timed, rules_loop(g))
        loops[f"{g} rules unchecked"] = functools.partial(timed, rules_loop(g, checked=False))
        loops[f"{g} AEC"] = functools.partial(timed, aec_loop(functools.partial(jericho_env.make, g)))
        loops[f"{g} single-agent"] = functools.partial(timed, single_loop(g))
    batched: dict[str, dict[str, Any]] = {}
    for g in games:
        why = batched_skip_reason(g)
        if why is not None:
            batched[g] = {"skipped": why}
            continue
        loops[f"{g} batched"], first_step = batched_loop(g, num_envs)
        batched[g] = {"num_envs": num_envs, "first_step_seconds": first_step}
    refs = references() if with_refs else {}
    for label, build in refs.items():
        loops[label] = functools.partial(timed, build())
    pgx: dict[str, Any] = {"unavailable": pgx_unavailable() if with_pgx else "not asked for (--no-pgx)"}
    if pgx["unavailable"] is None:
        del pgx["unavailable"]
        for name in PGX_GAMES:
            loops[f"pgx {name}"], compile_seconds = pgx_loop(name, num_envs)
            pgx[name] = {"num_envs": num_envs, "compile_seconds": compile_seconds}
    for loop in loops.values():
        loop(0.01)  # warm-up: one game, or one step of the batched rows
    best: dict[str, tuple[float, float]] = {}
    turn = seconds / repeats
    print(f"measuring {seconds:g} s per row ({repeats} turns of {turn:.2g} s; the best turn counts)")
    for _ in range(repeats):
        for label, loop in loops.items():
            steps, n_games = loop(turn)
            rate = (steps / turn, n_games / turn)
            if label not in best or rate[0] > best[label][0]:
                best[label] = rate
    rows: dict[str, dict[str, float]] = {}
    for label, (steps_s, games_s) in best.items():
        rows[label] = {"steps_per_s": steps_s, "games_per_s": games_s}
        print(f"  {label:<34} {steps_s:>11,.0f} steps/s {games_s:>9,.1f} games/s", flush=True)
    ratios = {}
    for g in games:
        for kind in ("rules", "AEC", "batched"):
            if f"{g} {kind}" in rows:
                mine = rows[f"{g} {kind}"]["steps_per_s"]
                ratios[f"{g} {kind}"] = {ref: mine / rows[ref]["steps_per_s"] for ref in refs}
    for g, entry in batched.items():
        if "skipped" not in entry:
            entry.update(rows[f"{g} batched"])
            entry["ratio_to_aec"] = entry["steps_per_s"] / rows[f"{g} AEC"]["steps_per_s"]
    for name in PGX_GAMES:
        if name in pgx:
            pgx[name].update(rows[f"pgx {name}"])
    return {
        "seconds_per_row": seconds,
        "rows": rows,
        "ratios": ratios,
        "batched": batched,
        "pgx": pgx,
        "memory": {g: memory_report(g) for g in games},
    }


def print_summary(result: dict[str, Any]) -> None:
    """Ratios and memory as tables."""
    refs: dict[str, Any] = next(iter(result["ratios"].values()), {})
    if refs:
        print("\nratio of agent-steps/s to each reference:")
        print(f"  {'':<20}" + "".join(f"{r.split(' (')[0]:>24}" for r in refs))
        for label, rs in result["ratios"].items():
            print(f"  {label:<20}" + "".join(f"{v:>23.1f}x" for v in rs.values()))
    print_batched(result)
    print("\nmemory (tracemalloc peak of the AEC loop; sizes of one observation+mask and one pickled state):")
    for g, m in result["memory"].items():
        print("  " + g + ": " + ", ".join(f"{k}={v:,}" for k, v in m.items()))


def print_batched(result: dict[str, Any]) -> None:
    """The batched random play table: each game beside its AEC loop, then Pgx's games (or why they are missing)."""
    batched, pgx = result["batched"], result["pgx"]
    sizes = {e["num_envs"] for e in [*batched.values(), *pgx.values()] if isinstance(e, dict) and "num_envs" in e}
    n = f"{sizes.pop():,}" if len(sizes) == 1 else "N"
    what = "uniformly random legal actions, every game's observation and mask built every step"
    print(f"\nbatched random play ({n} games in lockstep, {what}):")
    for g, e in batched.items():
        if "skipped" in e:
            print(f"  {g:<22} not timed: {e['skipped']}")
            continue
        print(
            f"  {g:<22} {e['steps_per_s']:>11,.0f} agent-steps/s {e['games_per_s']:>9,.0f} games/s "
            f"{e['ratio_to_aec']:>6.1f}x its AEC loop  (first step {e['first_step_seconds']:.1f} s: compiles or loads)"
        )
    if "unavailable" in pgx:
        print(f"  pgx: not timed: {pgx['unavailable']}")
        return
    for name in PGX_GAMES:
        e = pgx[name]
        print(
            f"  {'pgx ' + name:<22} {e['steps_per_s']:>11,.0f} agent-steps/s {e['games_per_s']:>9,.0f} games/s "
            f"(JAX vmap + jit; compile {e['compile_seconds']:.1f} s)"
        )
    for g, e in batched.items():
        if "skipped" not in e:
            versus = ", ".join(f"{e['steps_per_s'] / pgx[name]['steps_per_s']:.2f}x pgx {name}" for name in PGX_GAMES)
            print(f"  {g}: {versus}")


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    p = cli_parser("experiments.bench", __doc__)
    p.add_argument("games", nargs="*", help=f"games to measure (default all: {', '.join(GAME_IDS)})")
    p.add_argument("--seconds", type=positive_float, default=3.0, help="seconds per row (default 3)")
    p.add_argument("--json", default=None, help="also write the results to this JSON file")
    p.add_argument("--no-refs", action="store_true", help="skip the reference environments")
    p.add_argument("--repeats", type=positive_int, default=3, help="turns per row; the best turn counts (default 3)")
    p.add_argument(
        "--num-envs", type=positive_int, default=1024, help="games in lockstep in the batched rows (default 1024)"
    )
    p.add_argument("--no-pgx", action="store_true", help="skip Pgx's games even where Pgx is installed")
    args = p.parse_args(argv)
    bad = [g for g in args.games if g not in GAME_IDS]
    if bad:
        p.error(f"unknown game(s) {', '.join(bad)}; choose from {', '.join(GAME_IDS)}")
    result = run(
        args.games or list(GAME_IDS), args.seconds, not args.no_refs, args.repeats, args.num_envs, not args.no_pgx
    )
    print_summary(result)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
