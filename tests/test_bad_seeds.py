"""Bad input, door 5: seeds and generators. One range everywhere, 0..2**63-1, checked at every public entry.

A seed that is negative, too large, a bool, a float (``1.5``, ``nan``) or text is refused with an
``OptionError`` naming the argument and the range, before anything changes: by the envs' ``reset``,
the self-play vector, ``agents.make`` and an agent's ``reset``; the rules engines refuse anything but a
``np.random.Generator``; the command lines refuse a bad ``--seed`` in one line naming the flag.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
import jericho_env
from jericho_env.agent_plugins import UniformRandomAgent
from jericho_env.core.rules import OptionError
from jericho_env.core.validate import SEED_MAX, check_seed, seed_from_text, shift_seed
from jericho_env.registry import GAME_IDS, make_rules

BAD_SEEDS: list[Any] = [-1, SEED_MAX + 1, float("nan"), 1.5, 3.0, True, False, "3", [1], np.float64(2.0)]
IDS = [repr(s) for s in BAD_SEEDS]
RANGE = "0..2**63-1"
RANGE_RE = re.escape(RANGE)


def test_the_range_and_the_types_a_seed_may_take() -> None:
    for good in (0, 1, 2**32, SEED_MAX, np.int64(7), np.uint64(SEED_MAX)):
        assert check_seed(good) == int(good) and type(check_seed(good)) is int
    for bad in BAD_SEEDS:
        with pytest.raises(
            OptionError, match=f"seed={re.escape(repr(bad))}.* is not allowed: a seed is an int in {RANGE_RE}"
        ):
            check_seed(bad)
    assert seed_from_text("42") == 42 and seed_from_text(str(SEED_MAX)) == SEED_MAX
    for text in ("-1", "1.5", "nan", "1e3", "", "x", str(SEED_MAX + 1)):
        with pytest.raises(OptionError, match=RANGE_RE):
            seed_from_text(text)
    assert shift_seed(SEED_MAX, 2) == 1 and shift_seed(5, 2) == 7


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=IDS)
@pytest.mark.parametrize("game", GAME_IDS)
def test_env_reset_refuses_a_bad_seed_and_keeps_its_game(game: str, seed: Any) -> None:
    for env in (jericho_env.raw_env(game), jericho_env.make(game)):
        env.reset(seed=5)
        before = env.unwrapped.save_state()
        with pytest.raises(OptionError, match=f"seed=.* is not allowed: a seed is an int in {RANGE_RE}"):
            env.reset(seed=seed)
        assert env.unwrapped.save_state() == before


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=IDS)
def test_the_single_agent_view_and_the_self_play_vector_refuse_a_bad_seed(seed: Any) -> None:
    from jericho_env.envs.selfplay import RandomBatchPolicy, SelfPlayVector

    single = jericho_env.single_agent("castles")
    with pytest.raises(OptionError, match=RANGE_RE):
        single.reset(seed=seed)
    with pytest.raises(OptionError, match=RANGE_RE):
        SelfPlayVector("castles", 2, seed=seed)
    vector = SelfPlayVector("castles", 2, seed=0)
    with pytest.raises(OptionError, match=RANGE_RE):
        vector.reset(seed=seed)
    with pytest.raises(OptionError, match=RANGE_RE):
        vector.seed(seed)
    with pytest.raises(OptionError, match=RANGE_RE):
        RandomBatchPolicy(seed)


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=IDS)
@pytest.mark.parametrize("name", ["random", "greedy", "ismcts", "ppo"])
def test_agents_refuse_a_bad_seed_when_made_and_when_reset(name: str, seed: Any) -> None:
    # ppo: the seed is checked before the (missing) checkpoint is looked for
    extra = {"path": "/no/such.zip"} if name == "ppo" else {}
    with pytest.raises(OptionError, match=f"seed=.* is not allowed: a seed is an int in {RANGE_RE}"):
        agents.make(name, "castles", seed=seed, **extra)
    if name != "ppo":
        agent = agents.make(name, "castles", seed=1)
        with pytest.raises(OptionError, match=RANGE_RE):
            agent.reset(seed=seed)
    with pytest.raises(OptionError, match=RANGE_RE):
        UniformRandomAgent(seed)
    with pytest.raises(OptionError, match=RANGE_RE):
        UniformRandomAgent().reset(seed)


def test_the_largest_seed_is_taken_everywhere() -> None:
    env = jericho_env.make("walls")
    env.reset(seed=SEED_MAX)
    jericho_env.single_agent("grid").reset(seed=SEED_MAX)
    agents.make("greedy", "castles", seed=SEED_MAX).reset(seed=SEED_MAX)


@pytest.mark.parametrize("rng", [0, 7, None, "x", np.random.RandomState(0), np.random.SeedSequence(1)])
@pytest.mark.parametrize("game", GAME_IDS)
def test_rules_take_only_a_generator(game: str, rng: Any) -> None:
    rules = make_rules(game)
    with pytest.raises(OptionError, match=r"rng must be a numpy random Generator .np.random.default_rng.seed.."):
        rules.initial_state(rng)
    state = rules.initial_state(np.random.default_rng(0))
    with pytest.raises(OptionError, match="rng must be a numpy random Generator"):
        rules.determinize(state, 0, rng)


def test_a_search_takes_only_a_generator() -> None:
    from agents.search.engine import ISMCTS

    with pytest.raises(OptionError, match="rng must be a numpy random Generator"):
        ISMCTS(make_rules("castles"), 10, rng=3)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------ command lines
def _refused(main: Any, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err and "error:" in err[-1] and "Traceback" not in "\n".join(err), err
    return err[-1]


@pytest.mark.parametrize("text", ["-1", "nan", "1.5", "x", str(SEED_MAX + 1)])
def test_every_seed_flag_is_checked_before_any_work(
    text: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from experiments import evaluate, sweep
    from jericho_env import play

    def no_work(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("work started before the bad seed was refused")

    monkeypatch.setattr(evaluate, "run_games", no_work)
    commands = [
        (play.main, ["castles", "--seed", text], "argument --seed"),
        (evaluate.main, ["castles", "--agents", "random", "greedy", "--seed", text], "argument --seed"),
    ]
    for main, argv, flag in commands:
        line = _refused(main, argv, capsys)
        assert flag in line and RANGE in line, line
    # training's seeds take 32 bits (Stable-Baselines3 seeds from 32): a seed beyond is refused as well
    from experiments import exit as exit_cli
    from experiments import train

    monkeypatch.setattr(train, "train_one", no_work)
    monkeypatch.setattr(exit_cli, "run_exit", no_work)
    for main, argv, flag in [
        (train.main, ["castles", "--seed", text], "argument --seed"),
        (exit_cli.main, ["castles", "--seed", text], "argument --seed"),
        (sweep.main, ["castles", "--seeds", f"0,{text}"], "argument --seeds"),
    ]:
        line = _refused(main, argv, capsys)
        assert flag in line and "0..4294967295" in line, line
    for main, argv in [
        (train.main, ["castles", "--seed", str(2**32)]),
        (sweep.main, ["castles", "--seeds", str(2**32)]),
    ]:
        assert "0..4294967295" in _refused(main, argv, capsys)


def test_seed_int_is_the_cli_type_for_seeds() -> None:
    import argparse

    from experiments.cli import seed_int

    assert seed_int("0") == 0 and seed_int(str(SEED_MAX)) == SEED_MAX
    for text in ("-1", "nan", "1.5", "True"):
        with pytest.raises(argparse.ArgumentTypeError, match=RANGE_RE):
            seed_int(text)


def test_play_seed_minus_one_prints_no_traceback(tmp_path: Path) -> None:
    """The issue's case, as a user runs it: a one-line error and exit status 2."""
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-m", "jericho_env.play", "castles", "--seed", "-1"],
        input="quit\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr and "argument --seed" in done.stderr and RANGE in done.stderr


@pytest.mark.parametrize("seed", [-1, 1.5, True])
def test_golden_playthroughs_take_a_seed_in_the_range(seed: Any) -> None:
    from jericho_env.playthrough import playthrough, replay

    with pytest.raises(OptionError, match=RANGE_RE):
        playthrough("castles", seed)
    with pytest.raises(OptionError, match=RANGE_RE):
        replay("castles", seed, {}, [])
