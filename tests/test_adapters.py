"""Policies trained elsewhere play through their adapters: an SB3 model, a torch module, TorchScript, a callable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import agents
import jericho_env
from agents.adapters import UntrustedFileError, from_callable, from_sb3, from_torch
from experiments import evaluate
from experiments.evaluate import tournament


@pytest.fixture(scope="module")
def maskable_ppo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A MaskablePPO trained through ``single_agent`` for 10k steps on castles, saved as an SB3 zip."""
    from sb3_contrib import MaskablePPO

    env = jericho_env.single_agent("castles", opponents="random")
    model = MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, seed=0, device="cpu", verbose=0)
    model.learn(10_000)
    path = tmp_path_factory.mktemp("sb3") / "castles-ppo.zip"
    model.save(path)
    return path


@pytest.mark.slow
def test_a_maskable_ppo_trained_through_single_agent_plays_in_evaluate(
    maskable_ppo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["castles", "--agents", f"sb3={maskable_ppo}", "random", "--deals", "20", "--quiet", "--no-plot"]
    with pytest.raises(SystemExit):  # an SB3 zip unpickles code: refused without the trust flag, in one line
        evaluate.main([*argv, "--out", str(tmp_path / "refused")])
    assert "--trust-checkpoint" in capsys.readouterr().err
    assert evaluate.main([*argv, "--trust-checkpoint", "--out", str(tmp_path / "ok")]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| **sb3** |"))
    assert float(row.split("|")[3].split("%")[0]) > 50  # 10k steps against random already beat random
    # the same model in memory, and the ppo agent's own loader (trust as today), play the same moves
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(maskable_ppo, device="cpu")
    in_memory = from_sb3(model, "castles")
    by_ppo = agents.make("ppo", "castles", path=str(maskable_ppo), trust=True)
    env = jericho_env.make("castles")
    env.reset(seed=5)
    for _ in range(30):
        obs = env.observe(env.agent_selection)
        assert in_memory.act(obs) == by_ppo.act(obs)
        env.step(in_memory.act(obs))
        if all(env.terminations.values()):
            break
    # another game's env: refused naming both sizes; without trust: refused
    with pytest.raises(ValueError, match=r"reads observations of size \d+, but grid with options \{\} gives \d+"):
        agents.make("sb3", "grid", path=str(maskable_ppo), trust=True)
    with pytest.raises(UntrustedFileError, match="runs code stored in the file"):
        agents.make("sb3", "castles", path=str(maskable_ppo))


def _logits_net(game: str) -> Any:
    info = jericho_env.make_rules(game).info
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(info.observation_size, 32), torch.nn.Tanh(), torch.nn.Linear(32, info.num_actions)
    )


def _exported(net: Any, path: Path) -> Path:
    x = torch.zeros(3, net[0].in_features)
    torch.export.save(torch.export.export(net, (x,), dynamic_shapes=({0: torch.export.Dim.DYNAMIC},)), str(path))
    return path


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("form", ["export", "torchscript"])
def test_a_torch_module_and_its_saved_file_play_the_same_legal_moves(tmp_path: Path, form: str) -> None:
    net = _logits_net("grid")
    module_agent = from_torch(net, "grid")
    if form == "export":
        path = _exported(net, tmp_path / "net.pt2")
    else:
        path = tmp_path / "net.pt"
        torch.jit.script(net).save(str(path))
    with pytest.raises(UntrustedFileError, match=r"torch\.export or TorchScript file"):
        agents.make("torch", "grid", path=str(path))
    file_agent = agents.make("torch", "grid", path=str(path), trust=True)
    env = jericho_env.make("grid")
    env.reset(seed=2)
    for _ in range(40):
        obs = env.observe(env.agent_selection)
        action = module_agent.act(obs)
        assert obs["action_mask"][action] == 1 and file_agent.act(obs) == action
        env.step(action)
        if all(env.terminations.values()):
            break
    # in a tournament, the batch form: one forward pass per round
    calls = {"n": 0}
    forward = net.forward

    def counted(x: Any) -> Any:
        calls["n"] += 1
        return forward(x)

    net.forward = counted  # type: ignore[method-assign]
    result = tournament("grid", [("net", from_torch(net, "grid")), "random"], deals=10, batch=10)
    assert result.games == 20 and 0 < calls["n"] < 2 * 200  # far fewer calls than moves


def test_a_saved_module_plays_through_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _exported(_logits_net("castles"), tmp_path / "net.pt2")
    (tmp_path / "junk.pt2").write_bytes(b"not a module")
    with pytest.raises(ValueError, match=r"nor a TorchScript file \(not a zip archive\)"):
        agents.make("torch", "castles", path=str(tmp_path / "junk.pt2"), trust=True)
    argv = ["castles", "--agents", f"net:torch={path}", "greedy", "--deals", "4", "--quiet", "--no-plot"]
    assert evaluate.main([*argv, "--trust-checkpoint", "--out", str(tmp_path / "t")]) == 0
    assert "| **net** |" in capsys.readouterr().out


def test_a_module_of_the_wrong_size_is_named_with_the_sizes() -> None:
    wrong = torch.nn.Linear(7, 3)
    agent = from_torch(wrong, "castles")
    env = jericho_env.make("castles")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"failed on observations of shape \(1, \d+\).*trained on castles"):
        agent.act(env.observe(env.agent_selection))
    size = jericho_env.make_rules("castles").info.observation_size
    short = from_torch(torch.nn.Linear(size, 3), "castles")
    with pytest.raises(ValueError, match=r"gave scores of shape \(1, 3\).*one score per action"):
        short.act(env.observe(env.agent_selection))


def test_a_plain_callable_plays_its_actions_or_the_best_legal_of_its_scores() -> None:
    def first_legal(observation: dict[str, np.ndarray]) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])

    def prefers_high(observation: dict[str, np.ndarray]) -> np.ndarray:
        return np.arange(len(observation["action_mask"]), dtype=float)

    env = jericho_env.make("castles")
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    legal = np.flatnonzero(obs["action_mask"])
    assert from_callable(first_legal, "castles").act(obs) == legal[0]
    assert from_callable(prefers_high, "castles", returns="scores").act(obs) == legal[-1]
    result = tournament("castles", [from_callable(first_legal, "castles"), "random"], deals=4)
    assert "| **first_legal** |" in result.table
