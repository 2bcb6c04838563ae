"""The single-agent view in Gymnasium's registry: make, make_vec, SB3's make_vec_env, the mask under autoreset."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import jericho_env
from jericho_env.envs.single import SingleAgentEnv

ID = {g: f"jericho/{g}-v{jericho_env.GAME_VERSIONS[g]}" for g in jericho_env.GAME_IDS}  # walls-v1 since walls v1
ENV_IDS = list(ID.values())
SMALL = {ID["grid"]: {"board_size": 7}, ID["walls"]: {"num_players": 3}, ID["castles"]: {}}


# the checker steps random actions, most of them illegal: the loss's warning is expected there
@pytest.mark.filterwarnings("ignore::jericho_env.envs.single.IllegalMoveLossWarning")
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gymnasium_make_builds_the_single_agent_view_with_options_as_kwargs(env_id: str) -> None:
    env = gym.make(env_id, seat=1, **SMALL[env_id])
    assert isinstance(env.unwrapped, SingleAgentEnv)
    assert env.unwrapped.rules.options == {**env.unwrapped.rules.options, **SMALL[env_id]}
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert info["seat"] == 1 and env.get_wrapper_attr("action_masks")().any()
    check_env(env.unwrapped, skip_render_check=True)
    with pytest.raises(jericho_env.OptionError, match="unknown option"):
        gym.make(env_id, no_such_option=1)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_action_masks_answers_through_gymnasium_make_wrappers(env_id: str) -> None:
    env = gym.make(env_id, **SMALL[env_id])
    with pytest.raises(gym.error.ResetNeeded, match="call reset"):
        env.action_masks()  # before the first game: a clear error, not an AttributeError from inside
    env.reset(seed=0)
    mask = env.action_masks()  # no .unwrapped needed
    assert mask.dtype == bool and mask.any()
    assert np.array_equal(mask, env.unwrapped.action_masks())
    assert np.array_equal(mask, env.get_wrapper_attr("action_masks")())  # how sb3-contrib asks
    # the wrapper is recorded in the spec once: gymnasium.make(env.spec) rebuilds the same stack
    assert [w.name for w in env.spec.additional_wrappers] == ["ActionMasks"]
    assert str(gym.make(env.spec)) == str(env)
    # a time limit goes below it, so the mask still answers on the outside
    limited = gym.make(env_id, max_episode_steps=5, **SMALL[env_id])
    limited.reset(seed=0)
    assert np.array_equal(limited.action_masks(), mask)
    with pytest.raises(gym.error.ResetNeeded, match="call reset"):
        SingleAgentEnv("castles").step(0)  # the bare view, without OrderEnforcing, says the same


def test_opponents_and_seat_as_kwargs() -> None:
    calls: list[int] = []

    def first_legal(obs: dict[str, np.ndarray]) -> int:
        calls.append(1)
        return int(np.flatnonzero(obs["action_mask"])[0])

    env = gym.make(ID["walls"], num_players=4, seat=2, opponents=first_legal, illegal_action="raise")
    env.reset(seed=1)
    assert env.unwrapped.seat == 2 and env.unwrapped.rules.info.num_players == 4
    assert calls  # seats 0 and 1 (or whoever opens before seat 2) were played by the callable


def _play_vec(venv: gym.vector.VectorEnv, steps: int, seed: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Random legal play from the masks of ``call("action_masks")``; record (mask, info mask, terminated)."""
    rng = np.random.default_rng(seed)
    venv.reset(seed=seed)
    out = []
    for _ in range(steps):
        masks = np.stack(venv.call("action_masks"))
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
        _, _, terminated, _, info = venv.step(actions)
        out.append((np.stack(venv.call("action_masks")), info["action_mask"], terminated))
    return out


def test_mask_under_same_step_autoreset_is_never_empty() -> None:
    venv = gym.make_vec(ID["castles"], num_envs=3, vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP})
    record = _play_vec(venv, 300, seed=0)
    assert sum(t.sum() for _, _, t in record) >= 3  # episodes did end and restart
    for masks, info_masks, _ in record:
        assert masks.any(axis=1).all()
        assert np.array_equal(masks, info_masks)  # the info carries the new episode's mask too


def test_mask_under_next_step_autoreset_is_empty_only_on_the_ignored_step() -> None:
    venv = gym.make_vec(ID["castles"], num_envs=3)
    assert venv.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    record = _play_vec(venv, 300, seed=0)
    ended = 0
    for masks, info_masks, terminated in record:
        empty = ~masks.any(axis=1)
        # all-zero exactly where the game just ended: Gymnasium ignores the next action of that sub-env
        assert np.array_equal(empty, terminated)
        assert np.array_equal(masks, info_masks)
        ended += int(terminated.sum())
    assert ended >= 3


def _masked_ppo(env: Any, steps: int) -> Any:
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)  # more threads only contend for the cores at this size
    model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=128, n_epochs=1, seed=0, device="cpu")
    return model.learn(steps)


@pytest.mark.slow
def test_masked_ppo_on_gymnasium_make_and_make_vec() -> None:
    # illegal_action="raise": any unmasked action would stop the run with IllegalActionError
    env = gym.make(ID["castles"], illegal_action="raise")
    model = _masked_ppo(env, 2048)
    assert model.num_timesteps >= 2048

    from stable_baselines3.common.vec_env import VecMonitor

    from jericho_env.wrappers.sb3 import make_vec_env

    venv = VecMonitor(make_vec_env(ID["castles"], num_envs=4, illegal_action="raise"))
    model = _masked_ppo(venv, 4096)
    assert model.num_timesteps >= 4096
    # games ended and restarted inside the sub-envs; each finished game pays the learner +1 or -1
    assert len(model.ep_info_buffer) > 20
    assert {e["r"] for e in model.ep_info_buffer} <= {-1.0, 1.0}
    venv.close()


@pytest.mark.slow
def test_masked_ppo_on_sb3_make_vec_env_with_kwargs() -> None:
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(
        ID["walls"], n_envs=2, seed=0, env_kwargs={"num_players": 3, "seat": 0, "illegal_action": "raise"}
    )
    model = _masked_ppo(venv, 1024)
    assert model.num_timesteps >= 1024
    assert len(model.ep_info_buffer) > 0  # Monitor recorded finished games


def test_sb3_adapter_refuses_next_step_autoreset_and_passes_terminal_observation() -> None:
    from jericho_env.wrappers.sb3 import GymnasiumVecEnv, make_vec_env

    with pytest.raises(jericho_env.OptionError, match="SAME_STEP"):
        GymnasiumVecEnv(gym.make_vec(ID["castles"], num_envs=2))
    venv = make_vec_env(ID["castles"], num_envs=2)
    venv.seed(0)
    venv.reset()
    rng = np.random.default_rng(0)
    done_seen = 0
    for _ in range(200):
        masks = np.stack(venv.env_method("action_masks"))
        assert masks.any(axis=1).all()
        venv.step_async(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        obs, rewards, dones, infos = venv.step_wait()
        for i in np.flatnonzero(dones):
            done_seen += 1
            assert infos[i]["terminal_observation"].shape == obs[i].shape
            assert rewards[i] in (-1.0, 1.0)
    assert done_seen >= 2
    assert venv.get_attr("seat", indices=[1]) == [venv.get_attr("seat")[1]]


def test_import_registers_the_ids_and_loads_no_adapter_or_optional_library() -> None:
    import subprocess
    import sys

    code = (
        "import sys, gymnasium, jericho_env\n"
        "ids = sorted(i for i in gymnasium.registry if i.startswith('jericho/'))\n"
        "loaded = sorted(m for m in ('jericho_env.wrappers', 'ray', 'torchrl', 'tianshou', 'stable_baselines3',"
        " 'jericho_env.games.grid.rules') if m in sys.modules)\n"
        "print(ids, loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == f"{sorted(ENV_IDS)} []"
