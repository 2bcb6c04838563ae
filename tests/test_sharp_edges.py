"""What a user meets off the recipes' path (issue 46): each edge answers with a message or the behaviour asked for.

(a) an unmasked policy's illegal move in the single-agent view warns once, naming the masked ways;
(b) an illegal move stepped from inside RLlib names ``illegal_action="lose"`` (the RLlib run itself:
``tests/test_rllib.py``); (c) agent names are opponents wherever opponents are taken; (d) the OpenSpiel
bridge warns about ``MCTSBot`` and refuses tabular tree walkers (``tests/test_openspiel.py`` for the
rest of the bridge); (f) the docs hold no test counts (they go stale); (e) AgileRL: ``tests/test_agilerl.py``.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import jericho_env
from jericho_env.core.rules import IllegalActionError, OptionError
from jericho_env.envs.selfplay import SelfPlayVector
from jericho_env.envs.single import IllegalMoveLossWarning

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- (a) unmasked policies in the single-agent view
def test_unmasked_evaluation_warns_once_naming_the_mask() -> None:
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.evaluation import evaluate_policy

    env = jericho_env.single_agent("walls", num_players=2)
    model = MaskablePPO("MlpPolicy", env, seed=0, n_steps=64, batch_size=64)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mean, _ = evaluate_policy(model, env, n_eval_episodes=6, use_masking=False, warn=False)
    ours = [w for w in caught if issubclass(w.category, IllegalMoveLossWarning)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    text = str(ours[0].message)
    assert "action_masks()" in text and "use_masking=True" in text and "illegal_action='raise'" in text
    assert mean < 0  # the games it lost that way are what the warning explains
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evaluate_policy(model, jericho_env.single_agent("walls", num_players=2), n_eval_episodes=3, warn=False)
    assert not [w for w in caught if issubclass(w.category, IllegalMoveLossWarning)]


def test_each_view_warns_once_and_raise_mode_never_warns() -> None:
    def lose_one(env: Any, seed: int) -> dict[str, Any]:
        env.reset(seed=seed)
        illegal = int(np.flatnonzero(~env.action_masks())[0])
        _, reward, done, _, info = env.step(illegal)
        assert done and reward == env.rules.info.min_return
        return dict(info)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first, second = jericho_env.single_agent("castles"), jericho_env.single_agent("castles")
        infos = [lose_one(first, s) for s in range(3)] + [lose_one(second, 9)]
    assert [w.category for w in caught].count(IllegalMoveLossWarning) == 2
    assert all("illegal_action" in info for info in infos)
    strict = jericho_env.single_agent("castles", illegal_action="raise")
    strict.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IllegalMoveLossWarning)
        with pytest.raises(IllegalActionError):
            strict.step(int(np.flatnonzero(~strict.action_masks())[0]))


# ---------------------------------------------------------------- (b) RLlib's unmasked probe
def _step_from_module(module: str, env: Any, action: int) -> None:
    """Step ``env`` from code whose module is ``module`` (as RLlib's env checker does from its own)."""
    exec("env.step(action)", {"__name__": module, "env": env, "action": action})


@pytest.mark.parametrize("module", ["ray.rllib.utils.pre_checks.env", "supersuit.generic_wrappers"])
def test_an_illegal_move_from_a_prober_names_illegal_action_lose(module: str) -> None:
    env = jericho_env.make("castles")
    env.reset(seed=0)
    illegal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match=r"illegal_action='lose'") as err:
        _step_from_module(module, env, illegal)
    assert "unmasked random actions" in str(err.value)
    with pytest.raises(IllegalActionError) as plain:
        _step_from_module("my_training_script", env, illegal)
    assert "illegal_action='lose'" not in str(plain.value)  # only where a prober is on the stack


# ---------------------------------------------------------------- (c) agent names as opponents
@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_single_agent_takes_agent_names(game: str) -> None:
    import agents

    env = jericho_env.single_agent(game, opponents="greedy", seat=0)
    assert all(type(p).__name__ == type(agents.make("greedy", game)).__name__ for p in env.pool)
    rng = np.random.default_rng(0)
    for ep in range(2):
        env.reset(seed=ep)
        done = False
        while not done:
            _, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))


def test_names_in_pools_gymnasium_make_and_add_opponent() -> None:
    env = jericho_env.single_agent("walls", opponents=["greedy", "random"], num_players=3)
    assert len(env.pool) == 2 and env.pool[0].game_id == "walls"
    env.add_opponent("greedy")
    assert len(env.pool) == 3
    made = gym.make("jericho/castles-v0", opponents="greedy", ranks=5)
    made.reset(seed=0)
    assert made.unwrapped.pool[0].game_options["ranks"] == 5  # built for the view's own options
    with pytest.raises(OptionError, match=r"unknown agent 'nobody'.*greedy"):
        jericho_env.single_agent("grid", opponents="nobody")


@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_the_batched_self_play_takes_agent_names(game: str) -> None:
    from agents.batch import make_batch_policy

    vec = SelfPlayVector(game, 3, opponents="greedy", seed=1)
    assert type(vec.pool[0]) is type(make_batch_policy("greedy", game))
    _, masks = vec.reset(seed=1)
    for _ in range(5):
        vec.step(np.array([int(np.flatnonzero(m)[0]) for m in masks]))
        masks = vec.action_masks()
    assert vec.opponent_decisions > 0  # the named opponents played
    with pytest.raises(OptionError, match="unknown agent"):
        SelfPlayVector(game, 2, opponents=["nobody"])


# ---------------------------------------------------------------- (d) OpenSpiel's perfect-information bots
def test_openspiel_mcts_bot_warns_and_tabular_walkers_refuse() -> None:
    from open_spiel.python.algorithms import cfr, evaluate_bots, exploitability, mcts

    import jericho_env.openspiel as bridge

    game = bridge.load_game("castles", ranks=5, small_deck=True)
    bot = mcts.MCTSBot(game, 1.0, 10, mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)))
    bridge._warned_perfect_information.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evaluate_bots.evaluate_bots(game.new_initial_state(), [bot, bot], np.random.RandomState(1))
    ours = [w for w in caught if issubclass(w.category, bridge.PerfectInformationSearchWarning)]
    assert len(ours) == 1  # once per game, not once per search
    assert "hidden cards" in str(ours[0].message) and "make_ismcts_bot" in str(ours[0].message)

    bridge._warned_perfect_information.clear()
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    resampled = state.resample_from_infostate(state.current_player(), np.random.RandomState(0).rand)
    with warnings.catch_warnings():
        warnings.simplefilter("error", bridge.PerfectInformationSearchWarning)
        assert bot.step(resampled) in resampled.legal_actions()  # a determinization: searching it is fair

    with pytest.raises(bridge.GameTreeTooLargeError, match=r"10\^\d+ chance histories.*mccfr"):
        cfr.CFRSolver(game)
    with pytest.raises(bridge.GameTreeTooLargeError):
        exploitability.nash_conv(game, None)
    assert bridge.deal_histories(game.rules) > 10**6


# ---------------------------------------------------------------- (f) figures that go stale
def test_the_docs_state_no_test_counts() -> None:
    """Test counts change with every test added; the docs name the commands that run them instead."""
    kinds = "core|unit|engine|default|library|browser|web|ecosystem|conformance"
    count = re.compile(rf"\b\d[\d,]*\s+(?:(?:{kinds})\s+)?tests\b|\+\s*\d+\s+core\b|\b\d+ passed\b")
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    found = [f"{p.name}: {m.group(0)!r}" for p in pages for m in count.finditer(p.read_text(encoding="utf-8"))]
    assert not found, found
