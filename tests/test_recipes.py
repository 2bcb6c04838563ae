"""Recipes as data: every shipped network's commands parse, a rebuild runs a chain and goes on where it stopped."""

from __future__ import annotations

import importlib
import json
import shlex
import sys
from pathlib import Path

import pytest

from agents.pretrained import zoo
from experiments import recipes
from experiments import zoo as zoo_command
from experiments.recipes import TINY, in_order, load_recipes, step_command


def test_every_shipped_network_has_a_recipe_whose_steps_parse_with_their_commands(tmp_path: Path) -> None:
    import importlib

    book = load_recipes()
    assert {e.name for e in zoo()} <= set(book)
    for recipe in book.values():
        assert recipe.kind() in ("ppo", "exit", "dmc")
        for step in recipe.steps:
            words = shlex.split(step.replace("{runs}", str(tmp_path)))
            module = importlib.import_module(words[2])
            parser = module.build_parser()
            parser.parse_args(words[3:])  # an unknown or retired flag exits here
            assert set(TINY[words[2]]) <= {flag for action in parser._actions for flag in action.option_strings}


def test_needs_come_first_and_bad_recipes_are_refused(tmp_path: Path) -> None:
    book = load_recipes()
    assert [r.name for r in in_order("castles-dmc", book)] == ["castles-ppo", "castles-exit", "castles-dmc"]
    bad = tmp_path / "recipes.toml"
    for text, message in [
        ('[a-ppo]\nsteps = ["python -m os.path --out {runs}/x"]\nship = "{runs}/x"', "is not 'python -m' one of"),
        ('[a-ppo]\nsteps = ["python -m experiments.train grid"]\nship = "{runs}/x"', "writes no --out"),
        ('[a-ppo]\nsteps = ["python -m experiments.train grid --out {runs}/x"]\nship = "{runs}/y"', "is not the --out"),
        ('[a-ppo]\nsteps = ["python -m experiments.train grid --out {runs}/x"]\nship = "{runs}/x"\nneeds = ["b"]',
         "needs b, which no recipe makes"),
        ('[a-ppo]\nsteps = []\nship = "{runs}/x"\ncolour = 1', "unknown keys colour"),
    ]:  # fmt: skip
        bad.write_text(text)
        with pytest.raises(ValueError, match=message):
            load_recipes(bad)


def test_a_step_is_skipped_when_finished_resumed_when_cut_short_and_tiny_sets_every_budget(tmp_path: Path) -> None:
    step = "python -m experiments.dmc walls --seed 2 --positions 96000000 --out {runs}/w"
    argv, out, action = step_command(step, tmp_path, tiny=True)
    assert action == "run" and out == tmp_path / "w" and argv[argv.index("--positions") + 1] == "3000"
    (out).mkdir()
    (out / "config.json").write_text("{}")
    argv, _, action = step_command(step, tmp_path, tiny=False)
    assert action == "resume" and argv[argv.index("--resume") + 1] == str(out) and "--out" not in argv
    assert argv[argv.index("--positions") + 1] == "96000000"
    (out / "training.json").write_text("{}")  # rewritten at every checkpoint: not yet finished
    assert step_command(step, tmp_path, tiny=False)[2] == "resume"
    (out / "final.zip").write_bytes(b"")
    assert step_command(step, tmp_path, tiny=False)[2] == "skip"


def test_a_step_runs_as_its_own_process_and_gives_its_exit_status() -> None:
    assert recipes.run_step([sys.executable, "-c", "import sys; sys.exit(3)"]) == 3


@pytest.mark.slow
def test_a_tiny_rebuild_runs_a_chain_goes_on_after_a_kill_and_ships_a_card_without_machine_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runs, shelf = tmp_path / "runs", tmp_path / "zoo"
    shelf.mkdir()
    ran: list[list[str]] = []

    def spy(argv: list[str]) -> int:  # each step's command run in this process (``python -m MODULE ARGS``)
        ran.append(argv)
        assert argv[:2] == [sys.executable, "-m"]
        return int(importlib.import_module(argv[2]).main(argv[3:]))

    monkeypatch.setattr(recipes, "run_step", spy)
    argv = ["rebuild", "castles-exit", "--out", str(runs), "--tiny", "--zoo", str(shelf)]
    assert zoo_command.main(argv) == 0
    out = capsys.readouterr().out
    assert "| exit | greedy |" in out and len(ran) == 3  # castles-ppo's step, then castles-exit's two
    # a finished chain is skipped; a step cut short (its final table gone) goes on with --resume
    (runs / "castles-exit" / "tournament" / "results.json").unlink()
    ran.clear()
    assert zoo_command.main(argv) == 0
    assert len(ran) == 1 and "--resume" in ran[0] and "done already" in capsys.readouterr().out
    # shipping: refused from a tiny rebuild and from a dirty checkout; a card names the recipe, never a path
    with pytest.raises(SystemExit):
        zoo_command.main([*argv, "--ship"])
    assert "ships no network" in capsys.readouterr().err
    monkeypatch.setattr(zoo_command, "source_commit", lambda: ("0" * 40, True))
    with pytest.raises(SystemExit):
        zoo_command.main([*argv[:4], "--zoo", str(shelf), "--ship"])
    assert "uncommitted changes" in capsys.readouterr().err
    entry = zoo_command.add(runs / "castles-exit", "exit", shelf, None, False, None, load_recipes()["castles-exit"])
    card = (shelf / "castles-exit.json").read_text()
    assert str(tmp_path) not in card and "{runs}/castles-exit" in card
    assert json.loads(card)["made_by"]["recipe"]["name"] == "castles-exit" and entry.kind == "exit"
