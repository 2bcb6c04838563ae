"""TorchRL recipe: PettingZooWrapper(..., use_mask=True) plays legal random rollouts; a masked REINFORCE loop trains.

Marked ``requires_torchrl`` (deselected by default; ``bash scripts/test-ecosystem.sh torchrl`` runs them).
Every env uses ``illegal_action="raise"``, so one unmasked action fails the test.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import jericho_env

pytestmark = pytest.mark.requires_torchrl
ROOT = Path(__file__).resolve().parent.parent
CASES = [("grid", {"board_size": 9}), ("walls", {"num_players": 3}), ("walls", {"num_players": 5}), ("castles", {})]
IDS = ["grid-9", "walls-3", "walls-5", "castles"]


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    import torch

    torch.set_num_threads(1)


@pytest.mark.parametrize("grouping", ["shared", "per_seat"])
@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
def test_masked_random_rollouts_are_legal_and_finish_games(game: str, options: dict, grouping: str) -> None:
    from jericho_env.wrappers.torchrl import make_env

    env = make_env(game, grouping=grouping, seed=0, **options)
    n = len(env.possible_agents)
    groups = env.group_map
    assert (list(groups) == ["agents"]) if grouping == "shared" else (len(groups) == n)
    td = env.rollout(300, break_when_any_done=False)  # rand_action under the spec's mask; illegal would raise
    assert int(td["next", "done"].sum()) >= 1
    acting = sum(td[g, "mask"].sum(-1) for g in groups)
    assert (acting == 1).all()  # exactly one seat acts per step (AEC)
    for g in groups:
        mask, action = td[g, "action_mask"], td[g, "action"]
        chosen = mask.gather(-1, action.unsqueeze(-1)).squeeze(-1)
        assert chosen[td[g, "mask"]].all()


def test_masked_policy_samples_legal_actions_and_loop_trains() -> None:
    import torch

    from jericho_env.wrappers.torchrl import make_env, masked_policy, reinforce_loss

    torch.manual_seed(0)
    env = make_env("castles", seed=1)
    actor = masked_policy(env)
    before = [p.detach().clone() for p in actor.parameters()]
    optim = torch.optim.Adam(actor.parameters(), lr=1e-2)
    for _ in range(2):
        with torch.no_grad():
            td = env.rollout(200, actor, break_when_any_done=False)
        loss = reinforce_loss(actor, td)
        assert torch.isfinite(loss)
        optim.zero_grad()
        loss.backward()
        optim.step()
    assert any(not torch.equal(a, b) for a, b in zip(before, actor.parameters(), strict=True))


@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_example_trains_on_every_game(game: str) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "torchrl_masked.py"), game, "--iterations", "2", "--frames", "200"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert f"{game} iteration 2: loss" in out.stdout


def test_example_per_seat_groups() -> None:
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "torchrl_masked.py"),
            "walls",
            "--grouping",
            "per_seat",
            "--iterations",
            "1",
            "--option",
            "num_players=3",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "walls iteration 1: loss" in out.stdout
