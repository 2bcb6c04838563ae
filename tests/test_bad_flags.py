"""Bad input, door 6: numbers. Search budgets that end, worker counts within the machine, every numeric flag checked.

* ``ismcts`` settings: ``simulations``, ``time_limit``, ``uct_c``, ``rollout_depth`` that are ``nan``,
  ``inf``, negative, zero where it must be positive, a bool or text raise ``ValueError`` naming the
  argument when the agent is made, and through ``ismcts=...`` specs on the command line before any game.
* ``--workers`` is capped by the cores and the work to share, with a note (``experiments.cli.cap_workers``).
* Every numeric flag of every command line (``experiments.train``'s are checked in ``test_bad_cli.py``)
  has a checking type, and a bad value exits 2 with one line naming the flag, before any work.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
from pathlib import Path
from typing import Any

import pytest

import agents
from agents.search.engine import ISMCTS, check_settings
from experiments import cli, evaluate, sweep
from experiments.play.backends import Backend
from jericho_env.registry import make_rules

# ------------------------------------------------------------------------------------------------ budgets
BAD_SETTINGS: list[tuple[str, Any, str]] = [
    ("simulations", float("nan"), "an int >= 1"),
    ("simulations", float("inf"), "an int >= 1"),
    ("simulations", 0, "an int >= 1"),
    ("simulations", -5, "an int >= 1"),
    ("simulations", 2.5, "an int >= 1"),
    ("simulations", True, "an int >= 1"),
    ("simulations", "300", "an int >= 1"),
    ("time_limit", float("inf"), "a finite number of seconds per move above 0"),
    ("time_limit", float("nan"), "a finite number of seconds"),
    ("time_limit", 0.0, "a finite number of seconds per move above 0"),
    ("time_limit", -1, "a finite number of seconds per move above 0"),
    ("time_limit", True, "a finite number"),
    ("time_limit", "0.5", "a finite number"),
    ("uct_c", float("nan"), "a finite number >= 0"),
    ("uct_c", float("inf"), "a finite number >= 0"),
    ("uct_c", -0.5, "a finite number >= 0"),
    ("uct_c", False, "a finite number >= 0"),
    ("uct_c", "1", "a finite number >= 0"),
    ("rollout_depth", 0, "an int >= 1"),
    ("rollout_depth", -2, "an int >= 1"),
    ("rollout_depth", 1.0, "an int >= 1"),
    ("rollout_depth", True, "an int >= 1"),
]
SETTING_IDS = [f"{k}={v!r}" for k, v, _ in BAD_SETTINGS]


@pytest.mark.parametrize(("key", "value", "allowed"), BAD_SETTINGS, ids=SETTING_IDS)
def test_ismcts_refuses_a_budget_that_would_not_end(key: str, value: Any, allowed: str) -> None:
    game = "grid" if key == "rollout_depth" else "castles"  # rollout_depth needs grid's position evaluation
    with pytest.raises(ValueError, match=f"ismcts: {key}=.* is not allowed: {allowed}"):
        agents.make("ismcts", game, **{key: value})
    with pytest.raises(ValueError, match=f"{key}=.* is not allowed"):
        agents.make("ismcts", game, backend="openspiel", **{key: value})  # checked before OpenSpiel is asked
    settings = {"simulations": 10, "time_limit": None, "uct_c": 0.7, "rollout_depth": None, key: value}
    with pytest.raises(ValueError, match=f"ISMCTS: {key}=.* is not allowed"):
        ISMCTS(make_rules(game), settings["simulations"], settings["time_limit"], uct_c=settings["uct_c"],
               rollout_depth=settings["rollout_depth"])  # fmt: skip


def test_good_settings_pass_as_plain_numbers() -> None:
    import numpy as np

    assert check_settings("x", np.int64(5), np.float64(0.5), 0, 3) == (5, 0.5, 0.0, 3)
    assert check_settings("x", None, 1e-3, 2.0) == (None, 0.001, 2.0, None)
    agent: Any = agents.make("ismcts", "castles", simulations=3, uct_c=0.0)
    assert agent.simulations == 3 and agent.uct_c == 0.0 and math.isfinite(agent.uct_c)


@pytest.fixture
def no_games(monkeypatch: pytest.MonkeyPatch) -> None:
    def run_games(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a game was played before the bad input was refused")

    monkeypatch.setattr(evaluate, "run_games", run_games)


def refused(main: Any, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one-line error of ``main(argv)`` (exit status 2, no traceback)."""
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err and "error:" in err[-1] and not any("Traceback" in line for line in err), err
    return err[-1]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("ismcts=infs", "time_limit=inf is not allowed"),
        ("ismcts=nans", "time_limit=nan is not allowed"),
        ("ismcts=0s", "time_limit=0.0 is not allowed"),
        ("ismcts=0", "simulations=0 is not allowed"),
        ("ismcts=100,uct_c=nan", "uct_c=nan is not allowed"),
        ("ismcts=100,uct_c=-1", "uct_c=-1.0 is not allowed"),
        ("ismcts=100,seed=-1", "seed=-1 is not allowed"),
        ("ismcts=nan", "bad ismcts setting 'nan'"),
        ("exit-search=path=x.zip,depth=3", "'depth=3' is not a setting"),
        ("exit-search=simulations=many", "simulations takes int"),
        ("exit-search=search=magic", "search='magic' is not allowed"),
        ("exit-search=search=rollouts,temperature=0", "temperature must be a finite number above 0"),
        ("exit-search=search=rollouts,simulations=0", "simulations must be a whole number >= 1"),
    ],
)
def test_ismcts_specs_on_the_command_line_are_refused_before_any_game(
    spec: str, message: str, capsys: pytest.CaptureFixture[str], no_games: None
) -> None:
    assert message in refused(evaluate.main, ["castles", "--agents", "greedy", spec], capsys)


# ------------------------------------------------------------------------------------------------ workers
def test_cap_workers_bounds_by_cores_and_by_work_with_a_note(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli.os, "cpu_count", lambda: 2)
    assert cli.cap_workers(24, 2, "deals") == 2
    assert "note: --workers 24 capped to 2: this machine has 2 cores and there are 2 deals to share out" in (
        capsys.readouterr().err
    )
    assert cli.cap_workers(24, 1, "deals") == 1
    assert "capped to 1: this machine has 2 cores and there is 1 deals to share out" in capsys.readouterr().err
    assert cli.cap_workers(4, 100, "deals") == 2
    assert "this machine has 2 cores\n" in capsys.readouterr().err
    assert cli.cap_workers(2, 100, "deals") == 2 and cli.cap_workers(1, 1, "deals") == 1
    assert capsys.readouterr().err == ""  # nothing capped, nothing said
    monkeypatch.setattr(cli.os, "cpu_count", lambda: 64)
    assert cli.cap_workers(24, 3, "deals") == 3


def test_a_tournament_uses_no_more_workers_than_deals_or_cores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli.os, "cpu_count", lambda: 8)
    used: list[int] = []
    real = evaluate.run_games

    def run_games(*args: Any, **kwargs: Any) -> Any:
        used.append(args[4])
        return real(*args, **kwargs)

    monkeypatch.setattr(evaluate, "run_games", run_games)
    assert evaluate.main(["castles", "--agents", "random", "random", "--deals", "2", "--workers", "24",
                          "--out", str(tmp_path / "t"), "--quiet", "--no-plot"]) == 0  # fmt: skip
    assert used == [2]
    assert "note: --workers 24 capped to 2: this machine has 8 cores and there are 2 tasks to play" in (
        capsys.readouterr().err
    )
    assert json.loads((tmp_path / "t" / "results.json").read_text())["config"]["workers"] == 2


def test_a_sweep_caps_its_local_ray_and_refuses_trials_larger_than_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sweep.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(cli.os, "cpu_count", lambda: 4)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    ray = Backend("ray")
    assert sweep.ray_cpus(ray, 16, 1, 3) == 3
    assert "note: --workers 16 capped to 3" in capsys.readouterr().err
    assert sweep.ray_cpus(ray, None, 2, 1) == 2 and capsys.readouterr().err == ""
    assert sweep.ray_cpus(Backend("ray", "10.0.0.1:6379"), 16, 1, 3) == 16  # a cluster has its own CPUs
    with pytest.raises(ValueError, match=r"--cpus-per-trial 5 is more than the 4 CPU.s. of the local Ray"):
        sweep.check_cpus(ray, None, 5)
    with pytest.raises(ValueError, match=r"--cpus-per-trial 3 is more than the 2 CPU.s."):
        sweep.check_cpus(ray, 2, 3)
    sweep.check_cpus(ray, 2, 2)
    sweep.check_cpus(Backend(), None, 5)  # local trials run in this process: no Ray to fit


# ------------------------------------------------------------------------------------------------ every numeric flag
CLIS = [
    "experiments.bench",
    "experiments.curves",
    "experiments.evaluate",
    "experiments.replays",
    "experiments.sweep",
    "jericho_env.play",
    "jericho_env.playthrough",
    "jericho_env.web.__main__",
]
# the engine's own command lines cannot import experiments.cli (the layers): these are checked in the
# body, naming the flag (see BAD_FLAGS)
# flags of the engine's own front ends (which cannot import experiments.cli), checked in main() by name; the
# web page's are tested in tests/test_web_guard.py
CHECKED_IN_BODY = {("jericho_env.play", "--seat")} | {
    ("jericho_env.web.__main__", flag)
    for flag in ("--port", "--max-games", "--games-per-visitor", "--checkpoint-memory")
}


class _ParsedError(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def parser_of(module: str, monkeypatch: pytest.MonkeyPatch) -> argparse.ArgumentParser:
    """The parser a command's ``main`` builds, caught when it parses its arguments."""

    def parse_args(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise _ParsedError(self)

    with monkeypatch.context() as m:
        m.setattr(argparse.ArgumentParser, "parse_args", parse_args)
        with pytest.raises(_ParsedError) as caught:
            importlib.import_module(module).main(["castles"])
    return caught.value.parser


@pytest.mark.parametrize("module", CLIS)
def test_no_numeric_flag_takes_a_bare_int_or_float(module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    parser = parser_of(module, monkeypatch)
    bare = [
        a.option_strings[0]
        for a in parser._actions
        if a.type in (int, float)
        and (module, a.option_strings[0] if a.option_strings else a.dest) not in CHECKED_IN_BODY
    ]
    assert not bare, f"{module}: {bare} take a bare int/float: use a type of experiments.cli"


BAD_FLAGS: list[tuple[str, list[str], str]] = [
    ("experiments.evaluate", ["castles", "--agents", "random", "greedy", "--deals", "-3"], "argument --deals"),
    ("experiments.evaluate", ["castles", "--agents", "random", "greedy", "--record", "0"], "argument --record"),
    ("experiments.evaluate", ["castles", "--agents", "random", "greedy", "--workers", "0"], "argument --workers"),
    ("experiments.evaluate", ["castles", "--agents", "random", "greedy", "--seed", "1e3"], "argument --seed"),
    ("experiments.sweep", ["castles", "--seeds", "0,0"], "a seed appears twice"),
    ("experiments.sweep", ["castles", "--cpus-per-trial", "0"], "argument --cpus-per-trial"),
    ("experiments.sweep", ["castles", "--timesteps", "-1"], "argument --timesteps"),
    ("experiments.bench", ["castles", "--seconds", "inf"], "argument --seconds"),
    ("experiments.bench", ["castles", "--repeats", "0"], "argument --repeats"),
    ("experiments.replays", ["folder", "--record", "0"], "argument --record"),
    ("jericho_env.play", ["castles", "--seat", "-1"], "--seat -1 is not a seat of this game: choose 0..1"),
    ("jericho_env.play", ["castles", "--seat", "x"], "argument --seat"),
    ("jericho_env.web.__main__", ["--port", "70000"], "--port must be 0..65535"),
]


@pytest.mark.parametrize(("module", "argv", "message"), BAD_FLAGS, ids=[f"{m} {' '.join(a)}" for m, a, _ in BAD_FLAGS])
def test_a_bad_number_is_refused_naming_its_flag(
    module: str, argv: list[str], message: str, capsys: pytest.CaptureFixture[str], no_games: None
) -> None:
    assert message in refused(importlib.import_module(module).main, argv, capsys)
