"""Golden playthroughs replay their recorded actions: a change shows where it happens, not everywhere after it."""

from __future__ import annotations

from pathlib import Path

import pytest

import jericho_env
from jericho_env import playthrough as pt
from jericho_env.registry import known_game_ids

try:
    from tests.toy_game import ToyRules, ToyState
except ImportError:  # pragma: no cover
    from toy_game import ToyRules, ToyState  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent


def stored(game: str) -> str:
    return pt.golden_path(game, ROOT).read_text(encoding="utf-8")


def changed_steps(diff: str) -> list[str]:
    """The blocks a diff names (``step 3``, ``end``...), from its ``+++ replayed (...)`` lines."""
    return [line.split("(", 1)[1].rstrip(")") for line in diff.splitlines() if line.startswith("+++ replayed (")]


def test_every_registered_game_has_a_golden_file() -> None:
    assert "toy" in known_game_ids()  # registered by tests/conftest.py
    missing = [g for g in known_game_ids() if not pt.golden_path(g, ROOT).exists()]
    assert not missing, f"games without a golden playthrough: {missing}"


def test_a_file_is_read_back_into_its_seed_options_and_actions() -> None:
    golden = pt.parse_golden(stored("toy"))
    assert golden.game_id == "toy" and golden.options == {"pile": 7} and golden.seed == pt.DEFAULT_SEED
    assert golden.actions == [1, 1, 0, 0, 0] and len(golden.steps) == 5 and golden.end[0] == "== end after 5 steps"


@pytest.mark.parametrize(("game", "options", "seed"), [("walls", {"num_players": 3}, 5), ("castles", {"ranks": 5}, 1)])
def test_a_new_file_replays_cleanly_with_its_own_options_and_seed(game: str, options: dict, seed: int) -> None:
    text = pt.playthrough(game, seed=seed, options=options)
    assert pt.parse_golden(text).options == jericho_env.make_rules(game, **options).options
    assert pt.diff_golden(text) == ""


def test_an_edited_step_shows_as_a_diff_of_that_step_only() -> None:
    text = stored("grid")
    block = pt.parse_golden(text).steps[10]
    line = next(x for x in block if x.startswith("  | to move:"))
    diff = pt.diff_golden(text.replace(block[0] + "\n", block[0] + "\n" + line + " (edited)\n", 1))
    assert changed_steps(diff) == ["step 10"] and "-  | to move:" in diff and "(edited)" in diff


def test_a_rules_change_of_one_legal_set_is_a_local_diff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Take away the unplayed ``take2`` at step 2: only that step's legal line differs (no redraw of later moves)."""
    original = ToyRules.legal_actions

    def fewer(self: ToyRules, s: ToyState) -> list[int]:
        return [0] if s.pile == 3 else original(self, s)

    monkeypatch.setattr(ToyRules, "legal_actions", fewer)
    diff = pt.diff_golden(stored("toy"))
    assert changed_steps(diff) == ["step 2"]
    assert "-  legal: 0=take1, 1=take2" in diff and "+  legal: 0=take1" in diff and "replay stopped" not in diff


def test_a_recorded_action_no_longer_legal_names_the_step_the_action_and_the_legal_set() -> None:
    text = stored("toy").replace("  action: 0=take1\n== end", "  action: 1=take2\n== end")
    diff = pt.diff_golden(text)
    assert "replay stopped: step 4: the recorded action 1 (take2) is not legal here; legal: 0=take1" in diff
    grid = pt.parse_golden(stored("grid"))
    step = 7
    bad = next(a for a in range(grid.actions[step] + 1, 2206) if f" {a}=" not in grid.steps[step][-2])
    text = stored("grid").replace(grid.steps[step][-1], f"  action: {bad}=whatever", 1)
    diff = pt.diff_golden(text)
    assert f"replay stopped: step {step}: the recorded action {bad} (hand slot" in diff and "2205=pass" in diff
    assert changed_steps(diff) == []  # the steps before it, and this one up to its action, replay unchanged


def test_recorded_actions_that_end_too_early_or_too_late_are_named() -> None:
    golden = pt.parse_golden(stored("toy"))
    short = "\n".join([*golden.header, *[x for b in golden.steps[:-1] for x in b], *golden.end]) + "\n"
    assert "recorded actions end, but the game is not over" in pt.diff_golden(short)
    extra = golden.steps[-1] + golden.steps[-1]
    long = "\n".join([*golden.header, *[x for b in golden.steps[:-1] for x in b], *extra, *golden.end]) + "\n"
    assert "the game is over after 5 steps, but the file records 6 actions" in pt.diff_golden(long)


def test_malformed_files_are_refused_with_a_reason() -> None:
    with pytest.raises(pt.GoldenFormatError, match=r"no 'seed: \.\.\.' line"):
        pt.parse_golden(stored("toy").replace("seed: ", "sowed: "))
    with pytest.raises(pt.GoldenFormatError, match="cannot read the action number"):
        pt.parse_golden(stored("toy").replace("action: 1=take2", "action: one=take2", 1))
    assert "records game 'toy', not 'grid'" in pt.diff_against_file("grid", pt.golden_path("toy", ROOT))


def test_the_check_command_replays_every_registered_game(capsys: pytest.CaptureFixture[str]) -> None:
    assert pt.main(["all", "--check"]) == 0
    out = capsys.readouterr().out
    assert all(f"{g}: replays" in out for g in known_game_ids())
