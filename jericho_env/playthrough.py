"""Golden playthroughs (OpenSpiel's idea): a seeded game written step by step as readable text.

``python -m jericho_env.playthrough GAME [GAME ...] [--check] [--import MODULE]`` writes
``tests/golden/GAME.txt`` from a new game whose actions are drawn uniformly at random from a seeded
generator. The test suite (and ``--check``) reads a stored file back and **replays its recorded
actions** (the ``action: N=text`` lines) from its recorded seed and options, regenerating each
step's block (seat, table, observation, legal actions) and comparing step by step. A change of
rules, action encoding, observation or text thus shows as a diff of the steps it touches, and the
steps after it still line up; a recorded action that is no longer legal stops the replay with a
message naming the step, the action and the legal set. Regenerate only on purpose.

``--import MODULE`` imports a module first, for games registered by it (``register_game``): the
test-only ``toy`` game's file is written with ``--import tests.conftest``.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import importlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from jericho_env.core.rules import Rules
from jericho_env.core.validate import check_seed
from jericho_env.registry import known_game_ids, make_rules

DEFAULT_SEED = 20261129
STEP_HEAD = "== step "
END_HEAD = "== end after "


def _fmt_field(values: np.ndarray) -> str:
    flat = values.reshape(-1)
    nz = np.flatnonzero(flat)
    if len(nz) == 0:
        return "all 0"
    if len(nz) > 0.5 * len(flat):
        return "[" + " ".join(f"{v:.4g}" for v in flat) + "]"
    return " ".join(f"{i}:{flat[i]:.4g}" for i in nz)


def _header(game_id: str, rules: Rules[Any], seed: int) -> list[str]:
    return [
        f"game: {game_id} v{rules.info.version}",
        f"options: {dict(sorted(rules.options.items()))}",
        f"seed: {seed}",
        f"num_actions: {rules.info.num_actions}  observation_size: {rules.info.observation_size}",
        "",
    ]


def _step_lines(rules: Rules[Any], state: Any, step: int, legal: list[int]) -> list[str]:
    """The block of one step up to (not including) its ``action:`` line."""
    seat = rules.current_player(state)
    lines = [f"{STEP_HEAD}{step}: player_{seat} to move"]
    lines.extend("  | " + row for row in rules.render_text(state, seat).splitlines())
    obs = rules.observe(state, seat)
    for name, values in rules.layout.split(obs).items():
        lines.append(f"  obs.{name}: {_fmt_field(values)}")
    lines.append("  legal: " + ", ".join(f"{a}={rules.action_to_str(state, a)}" for a in legal))
    return lines


def _end_lines(rules: Rules[Any], state: Any, steps: int) -> list[str]:
    lines = [f"{END_HEAD}{steps} steps"]
    lines.extend("  | " + row for row in rules.render_text(state, None).splitlines())
    lines.append(f"returns: {[float(r) for r in rules.returns(state)]}")
    return lines


def playthrough(game_id: str, seed: int = DEFAULT_SEED, options: dict[str, Any] | None = None) -> str:
    """The golden text of a new game of ``game_id`` played with seeded uniformly random actions."""
    seed = check_seed(seed)
    rules: Rules[Any] = make_rules(game_id, **(options or {}))
    rng = np.random.default_rng(seed)
    chooser = np.random.default_rng(seed + 1)
    state = rules.initial_state(rng)
    lines = _header(game_id, rules, seed)
    step = 0
    while not rules.is_terminal(state):
        legal = rules.legal_actions(state)
        action = int(legal[int(chooser.integers(len(legal)))])
        lines.extend(_step_lines(rules, state, step, legal))
        lines.append(f"  action: {action}={rules.action_to_str(state, action)}")
        rules.apply(state, action)
        step += 1
    lines.extend(_end_lines(rules, state, step))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------- reading
@dataclass
class Golden:
    """A golden file split into its header, its step blocks and its end block, with what it recorded."""

    header: list[str]
    steps: list[list[str]]
    end: list[str]
    game_id: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    seed: int = DEFAULT_SEED
    actions: list[int] = field(default_factory=list)


class GoldenFormatError(ValueError):
    """A golden file that cannot be read back (a header line or an ``action:`` line is malformed)."""


def _header_value(header: list[str], key: str) -> str:
    for line in header:
        if line.startswith(key + ": "):
            return line[len(key) + 2 :]
    raise GoldenFormatError(f"the golden file has no '{key}: ...' line in its header")


def parse_golden(text: str) -> Golden:
    """Split a golden file into blocks and read its game id, options, seed and recorded actions."""
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.startswith("== ")), len(lines))
    golden = Golden(lines[:first], [], [])
    for line in lines[first:]:
        if line.startswith(STEP_HEAD):
            golden.steps.append([line])
        elif line.startswith(END_HEAD):
            golden.end = [line]
        elif golden.end:
            golden.end.append(line)
        elif golden.steps:
            golden.steps[-1].append(line)
    golden.game_id = _header_value(golden.header, "game").split(" ")[0]
    try:
        golden.options = dict(ast.literal_eval(_header_value(golden.header, "options")))
        golden.seed = int(_header_value(golden.header, "seed"))
    except (ValueError, SyntaxError, TypeError) as e:
        raise GoldenFormatError(f"the golden file's header cannot be read: {e}") from e
    for k, block in enumerate(golden.steps):
        recorded = [line for line in block if line.startswith("  action: ")]
        if len(recorded) != 1:
            raise GoldenFormatError(f"step {k} of the golden file has {len(recorded)} 'action:' lines, not 1")
        number = recorded[0][len("  action: ") :].split("=", 1)[0]
        if not number.isdigit():
            raise GoldenFormatError(f"step {k}: cannot read the action number in {recorded[0].strip()!r}")
        golden.actions.append(int(number))
    return golden


# ---------------------------------------------------------------------------------------------- replaying
@dataclass
class Replay:
    """The blocks a replay of recorded actions regenerates, and why it stopped early (``problem``)."""

    header: list[str]
    steps: list[list[str]]
    end: list[str]
    problem: str | None = None


def replay(game_id: str, seed: int, options: dict[str, Any], actions: list[int]) -> Replay:
    """Replay ``actions`` from a game dealt by ``seed``, regenerating every step's block."""
    seed = check_seed(seed)
    rules: Rules[Any] = make_rules(game_id, **options)
    state = rules.initial_state(np.random.default_rng(seed))
    out = Replay(_header(game_id, rules, seed), [], [])
    for step, action in enumerate(actions):
        if rules.is_terminal(state):
            out.problem = f"the game is over after {step} steps, but the file records {len(actions)} actions"
            break
        legal = rules.legal_actions(state)
        block = _step_lines(rules, state, step, legal)
        if action not in legal:
            out.steps.append(block)
            out.problem = (
                f"step {step}: the recorded action {action} ({rules.describe_action(action)}) is not legal here; "
                "legal: " + ", ".join(f"{a}={rules.action_to_str(state, a)}" for a in legal)
            )
            return out
        block.append(f"  action: {action}={rules.action_to_str(state, action)}")
        out.steps.append(block)
        rules.apply(state, action)
    else:
        if not rules.is_terminal(state):
            out.problem = f"the file's {len(actions)} recorded actions end, but the game is not over"
            return out
    out.end = _end_lines(rules, state, len(out.steps))
    return out


def _block_diff(stored: list[str], fresh: list[str], what: str, path: str) -> str:
    lines = difflib.unified_diff(stored, fresh, f"{path} ({what})", f"replayed ({what})", n=1, lineterm="")
    return "\n".join(lines) + "\n"


def diff_golden(text: str, path: str = "golden file") -> str:
    """Replay a golden file's recorded actions and diff it block by block ('' when every block matches)."""
    golden = parse_golden(text)
    fresh = replay(golden.game_id, golden.seed, golden.options, golden.actions)
    parts: list[str] = []
    if golden.header != fresh.header:
        parts.append(_block_diff(golden.header, fresh.header, "header", path))
    for k, (old, new) in enumerate(zip(golden.steps, fresh.steps, strict=False)):  # a stopped replay is shorter
        if not new[-1].startswith("  action: "):  # the step the replay stopped at: compare up to the action
            old = [line for line in old if not line.startswith("  action: ")]
        if old != new:
            parts.append(_block_diff(old, new, f"step {k}", path))
    if fresh.problem is None and golden.end != fresh.end:
        parts.append(_block_diff(golden.end, fresh.end, "end", path))
    if fresh.problem is not None:
        parts.append(f"replay stopped: {fresh.problem}\n")
    return "".join(parts)


def golden_path(game_id: str, root: Path | None = None) -> Path:
    """Where the golden file of ``game_id`` lives in a checkout."""
    base = root if root is not None else Path(__file__).resolve().parent.parent
    return base / "tests" / "golden" / f"{game_id}.txt"


def diff_against_file(game_id: str, path: Path) -> str:
    """The step-by-step diff of the stored golden file of ``game_id`` against a replay of its actions."""
    text = path.read_text(encoding="utf-8")
    recorded = parse_golden(text).game_id
    if recorded != game_id:
        return f"{path} records game {recorded!r}, not {game_id!r}\n"
    return diff_golden(text, str(path))


def main(argv: list[str] | None = None) -> int:
    """Command line: write (or ``--check``) the golden playthrough of one or more games."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--import", dest="imports", action="append", default=[])
    for module in pre.parse_known_args(argv)[0].imports:
        importlib.import_module(module)  # a module that registers games, before the ids are listed
    p = argparse.ArgumentParser(prog="python -m jericho_env.playthrough", description=__doc__.splitlines()[0])
    p.add_argument("games", nargs="+", choices=[*known_game_ids(), "all"], help="game ids, or all")
    p.add_argument("--check", action="store_true", help="replay the stored files and diff instead of writing")
    p.add_argument(
        "--import", dest="imports", action="append", default=[], metavar="MODULE", help="import MODULE first"
    )
    args = p.parse_args(argv)
    games = list(known_game_ids()) if "all" in args.games else args.games
    status = 0
    for g in games:
        path = golden_path(g)
        if args.check:
            d = diff_against_file(g, path) if path.exists() else f"no golden file {path}\n"
            if d:
                sys.stdout.write(d)
                status = 1
            print(f"{g}: {'differs from' if d else 'replays'} {path}")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(playthrough(g), encoding="utf-8")
            print(f"wrote {path}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
