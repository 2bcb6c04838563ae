"""A dmc network against a fixed agent across observation versions: ``python -m experiments.studies.versus_versions``.

``experiments.evaluate`` makes every agent for one set of game options, so a network of observation version 1
(the belief fields, ``--observation 1``) cannot meet the shipped ``ppo``, which reads version 0. Here the games
run on the batched engine at the later of the two versions, and each side is handed the leading part of the
observation that is its own (every game's version 1 keeps version 0's fields in place and appends its own:
``experiments.training.dmc_actors.fixed_policy``, as a ``--versus`` opponent of a version-1 run sees them).

Each deal is played twice, the network in each seat (seat-swapped, as the tournament does); the score is the
network's wins plus half its draws over the games, with a 95% Wilson interval. Two-player games (grid,
castles). The deals are the batched engine's from ``--seed``, not the tournament's, so a figure compares with
another of this command, not with ``experiments.evaluate``'s on the same seed.

Examples:
    python -m experiments.studies.versus_versions grid RUN/final.zip ppo --deals 1000 --seed 11
    python -m experiments.studies.versus_versions grid agents/zoo/grid-dmc.zip greedy --deals 200
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from experiments.cli import cli_parser, positive_int, run_cli, seed_int


def play(game: str, path: str, opponent: str, deals: int, seed: int, options: dict[str, Any] | None = None) -> dict:
    """The network at ``path`` (a dmc checkpoint, or ``A.zip+B.zip``) against ``opponent`` on ``deals`` deals,
    each in both seats: ``{"score", "ci95", "games", "wins", "draws", "losses", "observation_version"}``."""
    from agents.dmc import DmcAgent, checkpoint_paths, read_dmc_meta
    from experiments.training.dmc_actors import fixed_policy, leading_size
    from jericho_env.registry import make_rules

    options = dict(options or {})
    versions = {int(read_dmc_meta(p)["observation_version"]) for p in checkpoint_paths(path)}
    if len(versions) != 1:
        raise ValueError(f"{path!r}: the networks read observation versions {sorted(versions)}; give one version")
    mine = versions.pop()
    later = max(mine, make_rules(game, **options).observation_version)
    run_options = {**options, "obs_version": later}
    if make_rules(game, **run_options).info.num_players != 2:
        raise ValueError(f"{game} is not a two-player game: this study plays two-player games (grid, castles)")
    plan = DmcAgent(game, path=path, **{**options, "obs_version": mine}).plan
    size = (
        make_rules(game, **run_options).info.observation_size
        if mine == later
        else leading_size(game, run_options, mine)
    )
    if size is None:
        raise ValueError(f"{game}'s observation version {later} does not keep version {mine}'s fields in place")
    other = fixed_policy(opponent, game, seed, run_options)

    def choose(obs: np.ndarray, masks: np.ndarray, *_: Any) -> np.ndarray:
        return plan.best(np.ascontiguousarray(obs[:, :size]), masks)  # type: ignore[no-any-return]

    return {**seat_swapped(game, run_options, deals, seed, other, choose), "observation_version": mine}


def seat_swapped(
    game: str, options: dict[str, Any], deals: int, seed: int, other: Any, choose: Any, watch: Any = None
) -> dict[str, Any]:
    """``deals`` deals of the batched engine (``seed``), each in both seats: ``choose(obs, masks, states, rows,
    movers)`` picks the tested side's moves (``rows``: the games where it decides, ``masks`` bool), the batch
    policy ``other`` the other seat's. ``{"score", "ci95", "games", "wins", "draws", "losses"}``, the score the
    tested side's wins plus half its draws with a 95% Wilson interval.

    ``watch`` (optional) sees the other side's decisions: ``watch.start(deals, seat)`` before each seat's games
    (``seat``: the tested side's), ``watch.before(obs, states, rows)`` at the rows where the other side decides,
    ``watch.after(states, rows)`` once those moves are made."""
    import jericho_env
    from experiments.play.tournament import wilson_interval

    wins = draws = 0
    for seat in (0, 1):
        env = jericho_env.make_batched(game, deals, **options)
        obs, mask, player = env.reset(seed=seed)
        done = np.zeros(deals, bool)
        result = np.zeros(deals)
        if watch is not None:
            watch.start(deals, seat)
        while not done.all():
            actions = mask.argmax(axis=1)  # forced moves, and the finished games' (ignored)
            live = ~done & (mask.sum(axis=1) > 1)
            mine, theirs = np.flatnonzero(live & (player == seat)), np.flatnonzero(live & (player != seat))
            if len(theirs):
                actions[theirs] = other(obs[theirs], mask[theirs])
                if watch is not None:
                    watch.before(obs, env.states, theirs)
            if len(mine):
                actions[mine] = choose(obs[mine], mask[mine].astype(bool), env.states, mine, player[mine])  # copies
            obs, mask, player, rewards, terminated = env.step(actions)
            if watch is not None and len(theirs):
                watch.after(env.states, theirs)
            new = terminated & ~done
            result[new] = rewards[new, seat]
            done |= terminated
        wins += int((result > 0).sum())
        draws += int((result == 0).sum())
    games = 2 * deals
    lo, hi = wilson_interval(wins + 0.5 * draws, games)
    return {"score": (wins + 0.5 * draws) / games, "ci95": [lo, hi], "games": games, "wins": wins, "draws": draws,
            "losses": games - wins - draws}  # fmt: skip


def score_text(result: dict[str, Any]) -> str:
    """``"S% [LO, HI] over N games"`` of a ``seat_swapped`` result."""
    lo, hi = result["ci95"]
    return f"{100 * result['score']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] over {result['games']} games"


def main(argv: list[str] | None = None) -> int:
    parser = cli_parser(__name__, __doc__)
    parser.add_argument("game", choices=["grid", "castles"], help="a two-player game")
    parser.add_argument("network", help="a dmc checkpoint (or A.zip+B.zip, an ensemble)")
    parser.add_argument("opponent", help="a registered agent that reads the observation (ppo, greedy, exit, ...)")
    parser.add_argument("--deals", type=positive_int, default=1000, help="deals, each played in both seats (1000)")
    parser.add_argument("--seed", type=seed_int, default=11, help="seed of the deals and the opponent (11)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)

    def body() -> None:
        r = play(args.game, args.network, args.opponent, args.deals, args.seed)
        if args.json:
            print(json.dumps(r))
        else:
            print(f"{args.network} (observation version {r['observation_version']}) vs {args.opponent}: "
                  f"{score_text(r)} ({r['wins']} won, {r['draws']} drawn, {r['losses']} lost), "
                  f"seed {args.seed}")  # fmt: skip

    return run_cli(parser, body)


if __name__ == "__main__":
    raise SystemExit(main())
