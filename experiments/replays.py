"""Replays of a tournament's games: ``python -m experiments.replays RUN_FOLDER --record N``.

``experiments.evaluate ... --record N`` and ``experiments.train ... --record N`` call this once their
table is written: the first ``N`` deals of every pairing are played again with their actions kept
(``experiments.play.tournament.record_games``), each game is checked against the tournament's record in
``results.json``, and they are written to ``replays.jsonl`` (env seed and actions, ``jericho_env.replay``),
which ``python -m jericho_env.web`` shows.

Run on its own, it adds replays to a tournament that was played without ``--record``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from experiments.cli import cli_parser, one_line, positive_int
from experiments.play.tournament import AgentSpec, record_games
from jericho_env.core.rules import JerichoError
from jericho_env.registry import make_rules
from jericho_env.replay import FILE_NAME, Replay, write_replays


def record_replays(folder: str | Path, deals: int, specs: list[AgentSpec] | None = None) -> tuple[Path, int]:
    """Write ``replays.jsonl`` for the first ``deals`` deals of every pairing of the tournament in ``folder``.

    Returns the file and its count of games; ``ValueError`` if a game played again differs from its record.
    ``specs``: the tournament's agents, needed when some were objects. Games lost at an illegal action are left out.
    """
    folder = Path(folder)
    results = _results(folder)
    config = results["config"]
    game, options, seed = config["game"], dict(config["options"]), int(config["seed"])
    if specs is None:
        if any("object" in a for a in config["agents"]):
            raise ValueError(f"{folder}/results.json: its agents include objects, which only the tournament can replay")
        specs = [AgentSpec(a["label"], a["name"], dict(a["kwargs"])) for a in config["agents"]]
    rules = make_rules(game, **options)
    played = {(g["focal"], g["opponent"], g["deal"], g["arrangement"]): g for g in results["games"]}
    replays = []
    loop, batch, total = config.get("loop", "sequential"), config.get("batch"), int(config["deals"])
    illegal = config.get("illegal_action", "raise")
    for rec, actions in record_games(game, specs, seed, options, min(deals, total), loop, batch, total, illegal):
        if rec.illegal:
            continue
        want = played.get((rec.focal, rec.opponent, rec.deal, rec.arrangement))
        same = want is not None and (
            list(want["seats"]) == list(rec.seats)
            and [float(r) for r in want["returns"]] == list(rec.returns)
            and int(want["length"]) == rec.length
            and int(want["env_seed"]) == rec.env_seed
        )
        if not same:
            raise ValueError(
                f"{folder}/results.json: the game {rec.focal} vs {rec.opponent}, deal {rec.deal}, arrangement "
                f"{rec.arrangement} played again gives returns {list(rec.returns)} in {rec.length} moves, but the "
                f"tournament recorded {want and want['returns']} in {want and want['length']}: an agent is not "
                "reproducible from its seed, so no replay is written"
            )
        replays.append(
            Replay(
                game=game,
                game_version=rules.version,
                options=dict(rules.options),
                seed=rec.env_seed,
                seats=tuple(rec.seats),
                actions=tuple(actions),
                returns=tuple(rec.returns),
                info={
                    "pairing": f"{rec.focal} vs {rec.opponent}",
                    "focal": rec.focal,
                    "opponent": rec.opponent,
                    "deal": rec.deal,
                    "arrangement": rec.arrangement,
                    "result": _result(rec.returns, rec.seats),
                    "source": str(folder.name),
                },
            )
        )
    return write_replays(folder / FILE_NAME, replays), len(replays)


def _result(returns: tuple[float, ...], seats: tuple[str, ...]) -> str:
    """``"greedy wins"``, ``"random and greedy win"`` (shared), or ``"draw"`` when nobody gains."""
    winners = list(dict.fromkeys(seats[i] for i, r in enumerate(returns) if r > 1e-12))
    if not winners:
        return "draw"
    return " and ".join(winners) + (" wins" if len(winners) == 1 else " win")


def _results(folder: Path) -> dict[str, Any]:
    """The tournament's ``results.json``, with the fields replays need; ``ValueError`` saying what is wrong."""
    path = folder / "results.json"
    if not path.is_file():
        raise ValueError(f"no tournament in {str(folder)!r}: it has no results.json (written by experiments.evaluate)")
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
        missing = [k for k in ("game", "options", "seed", "agents", "deals") if k not in results["config"]]
        missing += [] if "games" in results else ["games"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path} is not a tournament's results.json ({one_line(e)})") from None
    if missing:
        raise ValueError(f"{path} is not a tournament's results.json: it lacks {', '.join(missing)}")
    return dict(results)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    p = cli_parser("experiments.replays", __doc__)
    p.add_argument("folder", help="a tournament's run folder (holding results.json)")
    p.add_argument("--record", type=positive_int, required=True, metavar="N", help="replays of the first N deals")
    args = p.parse_args(argv)
    try:
        path, count = record_replays(args.folder, args.record)
    except (JerichoError, ValueError, OSError) as e:
        p.exit(2, f"{p.prog}: error: {one_line(e)}\n")
    print(f"{count} replays in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
