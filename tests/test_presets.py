"""Training presets (experiments.training.presets): one table, resolved once, for any registered game."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from agents.registry import available, baselines
from experiments import train
from experiments.training import presets

ROOT = Path(__file__).resolve().parent.parent


def test_the_default_entry_names_every_setting_and_games_state_only_differences() -> None:
    fields = {f.name for f in dataclasses.fields(train.TrainConfig)} - {"game", "options"}
    assert set(presets.PRESETS["default"]) == fields
    for game, entry in presets.PRESETS.items():
        if game == "default":
            continue
        assert set(entry) <= fields, game
        same = [k for k, v in entry.items() if presets.PRESETS["default"][k] == v]
        assert not same, f"{game} restates the default for {same}"


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
            assert presets.resolve(game, {})[key] == value, (game, key)


def test_a_game_without_greedy_trains_on_the_default_with_what_it_has() -> None:
    said: list[str] = []
    values = presets.resolve("toy", {}, report=said.append)
    assert values["pool"] == "random" and values["eval_opponent"] == "random"
    assert values["policy"] == "mlp" and values["prior"] == "none"
    assert values["timesteps"] == presets.PRESETS["default"]["timesteps"]
    assert said == [
        "toy: agents it lacks are dropped from the preset: pool random,greedy -> random; "
        "evaluation opponent greedy -> random"
    ]
    said.clear()
    presets.resolve("castles", {}, report=said.append)
    assert not said, "nothing to drop for a game with greedy"


@pytest.mark.parametrize(
    ("game", "given", "message"),
    [
        ("toy", {"pool": "random,greedy"}, "--pool: greedy does not play 'toy' (it has: random)"),
        ("toy", {"eval_opponent": "greedy"}, "evaluation opponent must be one of random, got 'greedy'"),
        ("toy", {"prior": "greedy"}, "--prior greedy needs a greedy agent, and 'toy' has none"),
        ("toy", {"policy": "grid-conv"}, "--policy grid-conv is for grid only, not 'toy'"),
        ("castles", {"pool": "ppo"}, "--pool takes agent names from random, greedy, greedy-capture"),
        ("castles", {"batch": 3}, "unknown training settings batch"),
        ("castles", {"lr_schedule": "cosine"}, "--lr-schedule takes one of constant, linear"),
        ("castles", {"vec": "selfplay"}, "unknown training settings vec"),
        ("castles", {"net": "0"}, "--net needs positive layer sizes"),
        ("castles", {"net": "64,,64"}, "--net takes comma-separated layer sizes"),
        ("castles", {"net": "99999999"}, "--net takes at most 16 layers of at most 4096 units each"),
        ("castles", {"pool": "random,,greedy"}, "--pool takes agent names from"),
        ("castles", {"batch_size": 1}, "batch_size (--batch-size) must be a whole number >= 2, got 1"),
        ("castles", {"n_envs": 1, "n_steps": 1}, "--n-envs 1 x --n-steps 1 is one sample per rollout"),
        ("castles", {"n_envs": 10**9}, "n_envs (--n-envs) must be at most 100000 (games held in memory at once)"),
        ("castles", {"eval_deals": 10**6}, "eval_deals (--eval-deals) must be at most 100000"),
        ("castles", {"final_deals": 10**7}, "final_deals (--final-deals) must be at most 1000000"),
        ("castles", {"shards": 1000, "n_envs": 1000}, "shards (--shards) must be at most 256 (worker processes)"),
        ("castles", {"update_threads": 10**5}, "update_threads (--update-threads) must be at most 256"),
    ],
)
def test_bad_values_are_clear_errors(game: str, given: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        presets.resolve(game, given, report=lambda _: None)


def test_unknown_games_and_bad_options_fail_in_resolve() -> None:
    with pytest.raises(ValueError, match="unknown game id 'chess'"):
        presets.resolve("chess", {})
    with pytest.raises(ValueError, match="num_players"):
        presets.resolve("walls", {}, {"num_players": 9})


def test_given_none_means_the_preset_and_old_configs_resolve() -> None:
    assert presets.resolve("grid", {"timesteps": None, "n_epochs": None}) == presets.resolve("grid", {})
    old = presets.resolve("walls", {"init": ""})  # config.json before the presets wrote "" for no checkpoint
    assert old["init"] is None


def test_help_lists_each_games_differences() -> None:
    assert presets.per_game("timesteps") == "1000000; walls: 4000000, castles: 8000000"
    assert presets.per_game("gamma") == "0.997"
    assert presets.per_game("init") == "none"


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
    assert presets.resolve("castles", {"pool": "random, greedy"}, report=lambda _: None)["pool"] == "random,greedy"


def test_a_preset_minibatch_larger_than_a_rollout_is_one_rollout_and_an_asked_one_is_refused() -> None:
    said: list[str] = []
    values = presets.resolve("castles", {"n_envs": 2, "n_steps": 8}, report=said.append)
    assert values["batch_size"] == 16 and said == ["castles: batch_size 2048 -> 16, the samples of one rollout"]
    assert presets.resolve("castles", {"n_envs": 2, "n_steps": 8, "batch_size": 64})["batch_size"] == 64
    presets.check_minibatch(16, 2, 8)
    with pytest.raises(ValueError, match=r"--batch-size 17 is more than one rollout holds: --n-envs 2 x --n-steps 8"):
        presets.check_minibatch(17, 2, 8)


def test_a_rollout_that_cannot_fit_in_memory_is_refused_naming_the_flags() -> None:
    values = presets.resolve("grid", {}, report=lambda _: None)
    per_sample = 4 * (8731 + 2 * 2206)  # grid's observation, the greedy-scores hint, the mask: float32
    presets.check_rollout("grid", values, memory=per_sample * 64 * 32)
    with pytest.raises(ValueError, match=r"--n-envs 64 x --n-steps 32 = 2048 samples per rollout need about"):
        presets.check_rollout("grid", values, memory=per_sample * 64 * 32 - 1)


def test_a_config_json_of_the_single_agent_route_resumes_on_the_batched_env(capsys: pytest.CaptureFixture[str]) -> None:
    old = {"game": "castles", "options": {"ranks": 5}, "vec": "dummy", "timesteps": 10}
    options, settings = presets.saved_settings(old, "--resume: runs/x")
    assert options == {"ranks": 5} and settings == {"timesteps": 10}
    assert "trains with vec selfplay only" in capsys.readouterr().out
    assert presets.saved_settings({**old, "vec": "selfplay"}, "x")[1] == {"timesteps": 10}
    assert not capsys.readouterr().out
    with pytest.raises(ValueError, match=r"runs/x/config.json has unknown field\(s\) shiny"):
        presets.saved_settings({**old, "shiny": 1}, "runs/x")
