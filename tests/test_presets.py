"""Training presets (experiments.training.presets): one table per learner, resolved once, for any registered game."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from agents.registry import available, baselines
from experiments.training import presets
from experiments.training.config import Compat
from experiments.training.dmc.config import DmcConfig
from experiments.training.exit.config import ExitConfig
from experiments.training.ppo.config import TrainConfig, check_minibatch, check_rollout, make_config

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("cls", [TrainConfig, ExitConfig, DmcConfig])
def test_the_default_entry_names_every_setting_and_games_state_only_differences(cls: type) -> None:
    fields = {f.name for f in dataclasses.fields(cls)} - {"game", "options"}
    assert set(cls.PRESETS["default"]) == fields
    for game, entry in cls.PRESETS.items():
        if game == "default":
            continue
        assert set(entry) <= fields, game
        same = [k for k, v in entry.items() if cls.PRESETS["default"][k] == v]
        assert not same, f"{game} restates the default for {same}"
    assert {id(cls.PRESETS) for cls in (TrainConfig, ExitConfig, DmcConfig)} == {
        id(presets.PPO),
        id(presets.EXIT),
        id(presets.DMC),
    }  # the three tables, in one place


def test_per_game_values_are_the_ones_measured() -> None:
    """The per-game training defaults of the batched self-play trainer (their reasons: docs/results.md)."""
    expected = {
        "timesteps": {"grid": 1_000_000, "walls": 4_000_000, "castles": 8_000_000},
        "n_envs": {"grid": 64, "walls": 256, "castles": 256},
        "n_epochs": {"grid": 2, "walls": 4, "castles": 3},
        "learning_rate": {"grid": 3e-4, "walls": 3e-4, "castles": 1e-3},
        "pool": {"grid": "greedy", "walls": "random,greedy,greedy", "castles": "random,random,greedy,greedy"},
        "lr_schedule": {"grid": "constant", "walls": "constant", "castles": "linear"},
        "prior": {"grid": "greedy-scores", "walls": "greedy-scores", "castles": "none"},
        "policy": {"grid": "grid-cells", "walls": "mlp", "castles": "mlp"},
    }
    for key, per_game in expected.items():
        for game, value in per_game.items():
            assert getattr(make_config(game), key) == value, (game, key)


def test_a_game_without_greedy_trains_on_the_default_with_what_it_has(capsys: pytest.CaptureFixture[str]) -> None:
    cfg = make_config("toy")
    assert cfg.pool == "random" and cfg.eval_opponent == "random"
    assert cfg.policy == "mlp" and cfg.prior == "none"
    assert cfg.timesteps == presets.PPO["default"]["timesteps"]
    assert capsys.readouterr().out.splitlines() == [
        "toy: agents it lacks are dropped from the preset: pool random,greedy -> random; "
        "evaluation opponent greedy -> random"
    ]
    make_config("castles")
    assert not capsys.readouterr().out, "nothing to drop for a game with greedy"


@pytest.mark.parametrize(
    ("game", "given", "message"),
    [
        ("toy", {"pool": "random,greedy"}, "--pool: greedy does not play 'toy' (it has: random)"),
        ("toy", {"eval_opponent": "greedy"}, "evaluation opponent must be one of random, got 'greedy'"),
        ("toy", {"prior": "greedy"}, "--prior greedy needs a greedy agent, and 'toy' has none"),
        ("toy", {"policy": "grid-conv"}, "--policy grid-conv is for grid only, not 'toy'"),
        ("castles", {"pool": "ppo"}, "--pool takes agent names from random, greedy, greedy-capture"),
        ("castles", {"batch": 3}, "unknown experiments.train settings batch"),
        ("castles", {"lr_schedule": "cosine"}, "lr_schedule (--lr-schedule) takes one of constant, linear"),
        ("castles", {"vec": "selfplay"}, "unknown experiments.train settings vec"),
        ("castles", {"net": "0"}, "--net needs positive layer sizes"),
        ("castles", {"net": "64,,64"}, "--net takes comma-separated layer sizes"),
        ("castles", {"net": "99999999"}, "--net takes at most 16 layers of at most 4096 units each"),
        ("castles", {"pool": "random,,greedy"}, "--pool takes agent names from"),
        ("castles", {"batch_size": 1}, "batch_size (--batch-size): must be a whole number in 2..1000000000, got 1"),
        ("castles", {"n_envs": 1, "n_steps": 1}, "--n-envs 1 x --n-steps 1 is one sample per rollout"),
        ("castles", {"n_envs": 10**9}, "n_envs (--n-envs): must be a whole number in 1..100000"),
        ("castles", {"eval_deals": 10**6}, "eval_deals (--eval-deals): must be a whole number in 1..100000"),
        ("castles", {"final_deals": 10**7}, "final_deals (--final-deals): must be a whole number in 1..1000000"),
        ("castles", {"shards": 1000, "n_envs": 1000}, "shards (--shards): must be a whole number in 1..256"),
        ("castles", {"update_threads": 10**5}, "update_threads (--update-threads): must be a whole number in 1..256"),
        ("castles", {"gamma": float("nan")}, "gamma (--gamma): must be a finite number, got 'nan'"),
        ("castles", {"n_steps": 3.0}, "n_steps (--n-steps): expected a whole number >= 1, got '3.0'"),
        ("castles", {"ent_coef": True}, "ent_coef (--ent-coef): expected a number, got 'True'"),
        ("castles", {"seed": -1}, "seed (--seed): a training seed is a whole number in 0..4294967295"),
        ("castles", {"pool": 3}, "pool (--pool) must be text, got 3"),
        ("castles", {"net": None, "timesteps": 5}, None),
    ],
)
def test_bad_values_are_clear_errors(game: str, given: dict[str, object], message: str | None) -> None:
    if message is None:  # None given: the preset's
        assert make_config(game, **given).net == presets.PPO[game].get("net", presets.PPO["default"]["net"])
        return
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make_config(game, **given)


def test_unknown_games_and_bad_options_fail_in_resolve() -> None:
    with pytest.raises(ValueError, match="unknown game id 'chess'"):
        make_config("chess")
    with pytest.raises(ValueError, match="num_players"):
        make_config("walls", {"num_players": 9})


def test_given_none_means_the_preset_and_old_configs_resolve() -> None:
    assert make_config("grid", timesteps=None, n_epochs=None) == make_config("grid")
    assert make_config("walls", init="").init is None  # config.json before the presets wrote "" for no checkpoint


def test_help_lists_each_games_differences() -> None:
    assert TrainConfig.per_game("timesteps") == "1000000; walls: 4000000, castles: 8000000"
    assert TrainConfig.per_game("gamma") == "0.997"
    assert TrainConfig.per_game("init") == "none"
    assert DmcConfig.per_game("lam") == "1.0; castles: 0.8, walls: 0.8, grid: 0.8"


def test_baselines_follow_the_agents_a_game_has() -> None:
    assert baselines("grid") == ["random", "greedy"] and baselines("toy") == ["random"]
    assert available("greedy-capture", "grid") and not available("greedy-capture", "walls")
    assert available("ppo", "toy") and not available("greedy", "toy")
    with pytest.raises(ValueError, match="unknown agent 'oracle'"):
        available("oracle", "grid")


def test_no_code_outside_the_tests_names_the_test_game() -> None:
    """The toy game trains with no per-game code for it: no package module names its id."""
    sources = [p for d in ("jericho_env", "agents", "experiments") for p in (ROOT / d).rglob("*.py")]
    assert len(sources) > 20
    named = [str(p.relative_to(ROOT)) for p in sources if re.search(r"[\"']toy[\"']", p.read_text(encoding="utf-8"))]
    assert not named


def test_the_pool_is_recorded_without_blanks() -> None:
    """Blanks around the names were accepted, then failed when the opponents were built: they are dropped."""
    assert make_config("castles", pool="random, greedy").pool == "random,greedy"


def test_a_preset_minibatch_larger_than_a_rollout_is_one_rollout_and_an_asked_one_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert make_config("castles", n_envs=2, n_steps=8).batch_size == 16
    assert capsys.readouterr().out.splitlines() == ["castles: batch_size 2048 -> 16, the samples of one rollout"]
    assert make_config("castles", n_envs=2, n_steps=8, batch_size=16).batch_size == 16
    check_minibatch(16, 2, 8)
    with pytest.raises(ValueError, match=r"--batch-size 17 is more than one rollout holds: --n-envs 2 x --n-steps 8"):
        make_config("castles", n_envs=2, n_steps=8, batch_size=17)


def test_a_rollout_that_cannot_fit_in_memory_is_refused_naming_the_flags() -> None:
    values = make_config("grid").to_json()
    per_sample = 4 * (8731 + 2 * 2206)  # grid's observation, the greedy-scores hint, the mask: float32
    check_rollout("grid", values, memory=per_sample * 64 * 32)
    with pytest.raises(ValueError, match=r"--n-envs 64 x --n-steps 32 = 2048 samples per rollout need about"):
        check_rollout("grid", values, memory=per_sample * 64 * 32 - 1)


def test_a_config_json_of_an_older_version_resumes_through_its_compat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """PPO's retired settings: the single-agent route is noted (the batched env is the only one), shaping refused."""
    old = {"game": "castles", "options": {"ranks": 5}, "vec": "dummy", "timesteps": 10, "shaping": 0.0}
    (tmp_path / "config.json").write_text(json.dumps(old))
    cfg = TrainConfig.saved(tmp_path, "castles")
    assert cfg.options == {"ranks": 5} and cfg.timesteps == 10 and cfg.n_envs == presets.PPO["castles"]["n_envs"]
    assert "trains with vec selfplay only" in capsys.readouterr().out
    (tmp_path / "config.json").write_text(json.dumps({**old, "vec": "selfplay"}))
    assert TrainConfig.saved(tmp_path, "castles").timesteps == 10 and not capsys.readouterr().out
    for extra, says in (({"shiny": 1}, r"config.json has unknown field\(s\) shiny"), ({"shaping": 2.0}, "retired")):
        (tmp_path / "config.json").write_text(json.dumps({**old, **extra}))
        with pytest.raises(ValueError, match=says):
            TrainConfig.saved(tmp_path, "castles")
    compat = Compat(added={"a": 1}, renamed={"old": "new"}, retired={"gone": 0})
    assert compat.apply({"old": 2, "gone": 0}, "x") == {"a": 1, "new": 2}
