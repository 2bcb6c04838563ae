"""The three learners' one config idiom: every field a flag and every flag a field; ``--resume`` refuses a flag
that differs from the run's config.json, for each command through the same code."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from experiments import dmc, exit, train
from experiments.training.config import RunConfig
from experiments.training.dmc.config import DmcConfig
from experiments.training.exit.config import ExitConfig
from experiments.training.ppo.config import TrainConfig

COMMANDS: list[tuple[Callable[[], argparse.ArgumentParser], Callable[..., int], type[RunConfig]]] = [
    (train.build_parser, train.main, TrainConfig),
    (exit.build_parser, exit.main, ExitConfig),
    (dmc.build_parser, dmc.main, DmcConfig),
]
IDS = ["train", "exit", "dmc"]


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    return {s for a in parser._actions for s in a.option_strings if s.startswith("--") and s != "--help"}


@pytest.mark.parametrize(("build_parser", "main", "cls"), COMMANDS, ids=IDS)
def test_every_field_has_its_flag_and_every_flag_its_field(
    build_parser: Callable[[], argparse.ArgumentParser], main: Callable[..., int], cls: type[RunConfig]
) -> None:
    parser = build_parser()
    fields = {cls.flag_of(f.name) for f in cls.settings()}
    flags = _flags(parser)
    assert fields <= flags, f"fields without a flag: {sorted(fields - flags)}"
    assert flags - fields == set(cls.RUN_FLAGS), f"flags that are no field: {sorted(flags - fields)}"
    assert parser._option_string_actions["--option"] and [a.dest for a in parser._actions][1] == "game"
    help_text = parser.format_help()
    for f in cls.settings():  # each flag's help ends with its default and the games that change it
        assert f"(default {cls.per_game(f.name)})" in " ".join(help_text.split()), f.name
    assert set(cls.PRESETS["default"]) == {f.name for f in cls.settings()}


# per command: a flag that differs from the saved config, and the budget flag that extends it
CHANGES = {"train": ["--n-epochs", "7"], "exit": ["--games", "7"], "dmc": ["--epsilon", "0.5"]}
BUDGETS = {"train": "--timesteps", "exit": "--iterations", "dmc": "--positions"}


@pytest.mark.parametrize(("build_parser", "main", "cls"), COMMANDS, ids=IDS)
def test_resume_refuses_a_differing_flag_through_the_same_code(
    build_parser: Callable[[], argparse.ArgumentParser],
    main: Callable[..., int],
    cls: type[RunConfig],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = IDS[[c for *_, c in COMMANDS].index(cls)]
    saved = cls.make("castles").to_json()
    (tmp_path / "config.json").write_text(json.dumps(saved))
    assert "refuse_changes" not in vars(cls) and "resumed" not in vars(cls)  # RunConfig's, not the learner's own
    called: list[type[RunConfig]] = []
    refuse = RunConfig.refuse_changes

    def spy(self: RunConfig, args: Any) -> None:
        called.append(type(self))
        refuse(self, args)

    monkeypatch.setattr(RunConfig, "refuse_changes", spy)
    cases = [
        (CHANGES[name], "differs from the run's config.json"),
        (["--option", "ranks=5"], "--option ranks=5 differs"),
    ]
    if name != "dmc":  # below the run's budget (dmc's floor is what its checkpoint has generated: test_dmc.py)
        cases.append(([BUDGETS[name], "1"], "--resume extends, never cuts"))
    for extra, says in cases:
        with pytest.raises(SystemExit) as refused:
            main(["castles", "--resume", str(tmp_path), *extra, "--quiet"])
        assert refused.value.code == 2
        err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert len(err) == 1 and says in err[0] and extra[0] in err[0], err
    assert called == [cls] * len(cases)
    assert json.loads((tmp_path / "config.json").read_text()) == saved  # nothing written
    args = build_parser().parse_args(["castles", "--resume", str(tmp_path), BUDGETS[name], "99999999"])
    grown = cls.resumed(args, "castles")  # a larger budget extends the run, written back
    assert getattr(grown, cls.BUDGET) == 99999999 == json.loads((tmp_path / "config.json").read_text())[cls.BUDGET]
    same = build_parser().parse_args(["castles", "--resume", str(tmp_path), *CHANGES[name][:1], str(getattr(
        grown, CHANGES[name][0][2:].replace("-", "_")))])  # fmt: skip
    assert cls.resumed(same, "castles") == grown  # a flag equal to the run's is no change
