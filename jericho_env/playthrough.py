"""Golden playthroughs (OpenSpiel's idea): a seeded game written step by step as readable text.

``python -m jericho_env.playthrough GAME [--seed S] [--out PATH]`` writes ``tests/golden/GAME.txt``;
the test suite replays every game and diffs against the file, so any change of rules, action
encoding, observation or text shows up as a readable diff. Regenerate only on purpose.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path
from typing import Any

import numpy as np

from jericho_env.core.rules import Rules
from jericho_env.registry import known_game_ids, make_rules

DEFAULT_SEED = 20261129


def _fmt_field(values: np.ndarray) -> str:
    flat = values.reshape(-1)
    nz = np.flatnonzero(flat)
    if len(nz) == 0:
        return "all 0"
    if len(nz) > 0.5 * len(flat):
        return "[" + " ".join(f"{v:.4g}" for v in flat) + "]"
    return " ".join(f"{i}:{flat[i]:.4g}" for i in nz)


def playthrough(game_id: str, seed: int = DEFAULT_SEED, options: dict[str, Any] | None = None) -> str:
    """The golden text of a game of ``game_id`` played with seeded uniformly random actions."""
    rules: Rules[Any] = make_rules(game_id, **(options or {}))
    rng = np.random.default_rng(seed)
    chooser = np.random.default_rng(seed + 1)
    state = rules.initial_state(rng)
    lines = [
        f"game: {game_id} v{rules.info.version}",
        f"options: {dict(sorted(rules.options.items()))}",
        f"seed: {seed}",
        f"num_actions: {rules.info.num_actions}  observation_size: {rules.info.observation_size}",
        "",
    ]
    step = 0
    while not rules.is_terminal(state):
        seat = rules.current_player(state)
        legal = rules.legal_actions(state)
        action = int(legal[int(chooser.integers(len(legal)))])
        lines.append(f"== step {step}: player_{seat} to move")
        lines.extend("  | " + row for row in rules.render_text(state, seat).splitlines())
        obs = rules.observe(state, seat)
        for name, values in rules.layout.split(obs).items():
            lines.append(f"  obs.{name}: {_fmt_field(values)}")
        lines.append("  legal: " + ", ".join(f"{a}={rules.action_to_str(state, a)}" for a in legal))
        lines.append(f"  action: {action}={rules.action_to_str(state, action)}")
        rules.apply(state, action)
        step += 1
    lines.append(f"== end after {step} steps")
    lines.extend("  | " + row for row in rules.render_text(state, None).splitlines())
    lines.append(f"returns: {[float(r) for r in rules.returns(state)]}")
    return "\n".join(lines) + "\n"


def golden_path(game_id: str, root: Path | None = None) -> Path:
    """Where the golden file of ``game_id`` lives in a checkout."""
    base = root if root is not None else Path(__file__).resolve().parent.parent
    return base / "tests" / "golden" / f"{game_id}.txt"


def diff_against_file(game_id: str, path: Path) -> str:
    """A unified diff of the stored golden file against a fresh playthrough ('' when equal)."""
    fresh = playthrough(game_id).splitlines(keepends=True)
    stored = path.read_text(encoding="utf-8").splitlines(keepends=True)
    return "".join(difflib.unified_diff(stored, fresh, str(path), "regenerated", n=2))


def main(argv: list[str] | None = None) -> int:
    """Command line: write (or ``--check``) the golden playthrough of one or more games."""
    p = argparse.ArgumentParser(prog="python -m jericho_env.playthrough", description=__doc__.splitlines()[0])
    p.add_argument("games", nargs="+", choices=[*known_game_ids(), "all"], help="game ids, or all")
    p.add_argument("--check", action="store_true", help="diff against the stored files instead of writing")
    args = p.parse_args(argv)
    games = list(known_game_ids()) if "all" in args.games else args.games
    status = 0
    for g in games:
        path = golden_path(g)
        if args.check:
            d = diff_against_file(g, path)
            if d:
                sys.stdout.write(d)
                status = 1
            print(f"{g}: {'differs' if d else 'matches'} {path}")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(playthrough(g), encoding="utf-8")
            print(f"wrote {path}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
