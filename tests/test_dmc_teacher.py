"""Distillation (``experiments.dmc --teacher``): the run's own positions learn a teacher's Q of every legal action."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")

import torch

from agents.dmc import DmcAgent, build_network, load_dmc, save_dmc
from experiments import dmc as dmc_cli
from experiments.training.dmc.actors import Batch, ReplayBuffer
from experiments.training.dmc.distill import distill_loss
from experiments.training.dmc.learner import learn_step
from tests.dmc_helpers import make_actors, random_networks

TINY = ["--positions", "3000", "--envs", "32", "--rounds", "8", "--buffer", "4000", "--batch-size", "128"]
TINY += ["--net", "32", "--eval-every", "3000", "--eval-deals", "2", "--quiet"]


class RecordingTeacher:
    """A teacher's plan that records what it was asked and what it answered."""

    def __init__(self, plan: Any) -> None:
        self.plan, self.asked = plan, []

    def q_all(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        q = self.plan.q_all(obs, masks)
        self.asked.append((np.array(obs), np.array(masks, bool), q))
        return q


@pytest.mark.parametrize(
    ("game", "options", "prior"), [("castles", {}, "none"), ("walls", {"num_players": 3}, "greedy-scores")]
)
def test_taught_positions_are_labelled_at_once_with_the_teachers_q_of_every_action(
    game: str, options: dict[str, Any], prior: str, tmp_path: Path
) -> None:
    paths = random_networks(game, options, tmp_path, 2, prior)
    members = [DmcAgent(game, path=p, **options).plan for p in paths]
    teacher = RecordingTeacher(DmcAgent(game, path=paths, **options).plan)
    student = build_network(game, options, "16", prior=prior)
    buffer = ReplayBuffer(10_000, student.stored_width, student.spec.num_actions)
    actors = make_actors(game, options, 8, 0.0, buffer, [4, 0], lam=0.8, teacher=teacher)
    plan = student.plan()
    recorded = actors.play(plan, 40)
    assert recorded == buffer.added == buffer.labelled == len(buffer.known()) > 0  # none waits for its game's end
    obs = np.concatenate([o for o, _, _ in teacher.asked])
    legal = np.concatenate([m for _, m, _ in teacher.asked])
    taught = np.concatenate([q for _, _, q in teacher.asked])
    rows = np.arange(recorded)
    np.testing.assert_array_equal(buffer.taught[rows], taught)
    np.testing.assert_array_equal(buffer.legal[rows], legal)
    np.testing.assert_array_equal(buffer.targets[rows], taught[rows, buffer.actions[rows]])
    assert legal[rows, buffer.actions[rows]].all()
    mean = np.mean([p.q_values(p.rows(obs, legal)) for p in members], axis=0)
    np.testing.assert_allclose(taught, mean, rtol=1e-5, atol=1e-5)  # the teacher: the networks' mean Q
    chosen = buffer.actions[rows]  # the student plays (epsilon 0): its own best moves, not the teacher's
    np.testing.assert_array_equal(chosen, plan.best(obs, legal))
    assert (chosen != np.where(legal, taught, -np.inf).argmax(axis=1)).any()
    batch = buffer.sample(32, np.random.default_rng(0))
    assert batch.taught is not None and batch.legal is not None and batch.legal.any(axis=1).all()


def _taught_batch(rows: int, seed: int) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, np.random.Generator]:
    """A small castles network and ``rows`` random positions: observations, legal actions (two at least), the
    teacher's Q of every action; and the random stream that made them."""
    torch.manual_seed(0)
    student = build_network("castles", {}, "32")
    rng = np.random.default_rng(seed)
    obs = rng.random((rows, student.spec.observation_size)).astype(np.float32)
    legal = rng.random((rows, student.spec.num_actions)) < 0.2
    legal[:, :2] = True
    taught = rng.normal(size=legal.shape).astype(np.float32)
    return student, obs, legal, taught, rng


def test_the_learner_regresses_every_legal_action_on_the_teacher_and_ignores_illegal_ones() -> None:
    student, obs, legal, taught, _ = _taught_batch(64, 1)
    with torch.no_grad():
        q = student(torch.from_numpy(obs)).numpy()
    expected = float(((q - taught)[legal] ** 2).mean())
    wild = np.where(legal, taught, 1e6).astype(np.float32)  # what illegal actions would learn, if they learned
    batch = Batch(obs, np.zeros(64, np.int64), np.zeros(64, np.float32), wild, legal)
    optimizer = torch.optim.Adam(student.parameters(), lr=1e-2)
    losses = [learn_step(student, optimizer, distill_loss(student, batch, 1.0), 10.0) for _ in range(150)]
    assert losses[0] == pytest.approx(expected, rel=1e-5)
    assert np.isfinite(losses).all() and losses[-1] < losses[0] / 5


def test_the_level_weight_splits_the_error_into_each_positions_mean_and_the_differences_around_it() -> None:
    student, obs, legal, taught, rng = _taught_batch(32, 2)
    with torch.no_grad():
        error = np.where(legal, student(torch.from_numpy(obs)).numpy() - taught, 0.0)
    mean = error.sum(axis=1) / legal.sum(axis=1)
    spread = float((np.where(legal, error - mean[:, None], 0.0) ** 2).sum())
    level = float((legal.sum(axis=1) * mean**2).sum())

    def loss(values: np.ndarray, weight: float) -> float:
        optimizer = torch.optim.SGD(student.parameters(), lr=0.0)  # the loss alone, the network unchanged
        batch = Batch(obs, np.zeros(32, np.int64), np.zeros(32, np.float32), values, legal)
        return learn_step(student, optimizer, distill_loss(student, batch, weight), 10.0)

    assert loss(taught, 0.1) == pytest.approx((spread + 0.1 * level) / legal.sum(), rel=1e-5)
    shifted = (taught + rng.normal(size=(32, 1)) * 5).astype(np.float32)  # each position's Q moved by a constant
    assert loss(shifted, 0.0) == pytest.approx(loss(taught, 0.0), rel=1e-4)  # the differences alone: unchanged
    assert loss(shifted, 1.0) > 2 * loss(taught, 1.0)


def test_the_command_distils_an_ensemble_and_resume_keeps_the_teacher(tmp_path: Path) -> None:
    paths = random_networks("castles", {}, tmp_path, 2)
    teacher = DmcAgent("castles", path=paths).plan
    spec = "+".join(str(p) for p in paths)
    out = tmp_path / "run"
    fast = ["--learning-rate", "3e-3"]
    assert dmc_cli.main(["castles", *TINY, *fast, "--teacher", spec, "--out", str(out)]) == 0
    assert json.loads((out / "config.json").read_text())["teacher"] == spec
    first = json.loads((out / "training.json").read_text())
    assert first["positions_learned"] > 0 and first["evals"]

    def error(network: Any) -> float:  # the squared error to the teacher on the legal actions of fresh deals
        import jericho_env

        env = jericho_env.make_batched("castles", 64, copy=True, check=False)
        obs, mask, _ = env.reset(seed=99)
        legal = mask.astype(bool)
        with torch.no_grad():
            q = network(torch.from_numpy(obs.astype(np.float32))).numpy()
        return float(((q - teacher.q_all(obs, legal))[legal] ** 2).mean())

    torch.manual_seed(0)  # the run's untrained network (seed 0)
    assert error(load_dmc(out / "final.zip", "castles")[0]) < error(build_network("castles", {}, "32"))
    assert dmc_cli.main(["castles", "--resume", str(out), "--positions", "6000", "--quiet"]) == 0
    second = json.loads((out / "training.json").read_text())
    assert second["positions_generated"] >= 6000 and second["updates"] > first["updates"]
    assert json.loads((out / "config.json").read_text())["teacher"] == spec


class RecordingPairTeacher:
    """A grid teacher's plan that records each (observations, masks) it was asked and its Q of the legal actions."""

    def __init__(self, plan: Any) -> None:
        self.plan, self.asked = plan, []

    def q_all(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        q = self.plan.q_all(obs, masks)
        self.asked.append((np.array(obs), np.array(masks, bool), q))
        return q


def test_grid_taught_positions_learn_the_teachers_q_of_the_move_taken_and_of_its_best() -> None:
    """Grid's pair network: each decision stores the move taken, labelled with the teacher's Q of it, and the
    teacher's best move as a second row where it differs, labelled with its Q; every row labelled at once."""
    options = {"board_size": 7}
    torch.manual_seed(1)
    teacher_net = build_network("grid", options, "16")
    with torch.no_grad():
        for parameter in teacher_net.parameters():
            parameter.normal_(std=0.5)
    teacher = RecordingPairTeacher(teacher_net.plan())
    torch.manual_seed(2)
    student = build_network("grid", options, "16")
    buffer = ReplayBuffer(20_000, student.stored_width)
    actors = make_actors("grid", options, 8, 0.2, buffer, [4, 0], lam=0.8, teacher=teacher)
    plan = student.plan()
    recorded = sum(actors.play(plan, 1) for _ in range(30))
    assert recorded > 0 and buffer.added == buffer.labelled == len(buffer.known()) > recorded  # extra rows too
    rows_seen = 0
    extra = 0
    for obs, masks, full in teacher.asked:
        rows, acts, q = teacher.plan.pair_values(obs, masks)  # the pair values: the legal actions' Q, -inf elsewhere
        np.testing.assert_array_equal(full[rows, acts], q)
        assert np.isneginf(full[~masks]).all()
        best = full.argmax(axis=1)
        n = len(masks)
        chosen = buffer.actions[rows_seen : rows_seen + n]
        assert masks[np.arange(n), chosen].all()
        np.testing.assert_allclose(buffer.targets[rows_seen : rows_seen + n], full[np.arange(n), chosen], rtol=1e-6)
        differs = np.flatnonzero(best != chosen)
        second = slice(rows_seen + n, rows_seen + n + len(differs))
        np.testing.assert_array_equal(buffer.actions[second], best[differs])
        np.testing.assert_allclose(buffer.targets[second], full[differs, best[differs]], rtol=1e-6)
        state = student.encoder.state_size
        np.testing.assert_array_equal(buffer.obs[second, :state], buffer.obs[rows_seen + differs, :state])
        extra += len(differs)
        rows_seen += n + len(differs)
    assert rows_seen == buffer.added and extra > 0


def test_a_grid_run_distils_a_teacher_and_resumes(tmp_path: Path) -> None:
    """``experiments.dmc grid --teacher A.zip+B.zip``: the run's positions learn the mean Q; ``--resume`` goes on."""
    options = ["--option", "board_size=7"]
    paths = random_networks("grid", {"board_size": 7}, tmp_path, 2)
    spec = f"{paths[0]}+{paths[1]}"
    out = tmp_path / "run"
    assert dmc_cli.main(["grid", *TINY, "--net", "16", "--teacher", spec, *options, "--out", str(out)]) == 0
    first = json.loads((out / "training.json").read_text())
    assert first["positions_generated"] >= 3000 and first["updates"] > 0
    assert json.loads((out / "config.json").read_text())["teacher"] == spec
    assert dmc_cli.main(["grid", "--resume", str(out), "--positions", "5000", "--quiet"]) == 0
    assert json.loads((out / "training.json").read_text())["updates"] > first["updates"]


def test_a_teacher_is_refused_with_a_message_that_names_what_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    walls = save_dmc(tmp_path / "w.zip", build_network("walls", {}, "8"), "walls", {}, {})
    castles = random_networks("castles", {}, tmp_path, 1)[0]
    cases = [
        (["grid", "--teacher", str(castles), "--option", "board_size=7"], "castles"),
        (["castles", "--teacher", str(tmp_path / "missing.zip")], "missing.zip"),
        (["castles", "--teacher", f"{castles}+{walls}"], "walls"),
        (["castles", "--teacher", f"{castles}+"], "empty checkpoint path"),
        (["castles", "--teacher", str(castles), "--backend", "ray"], "--backend local"),
    ]
    assert_refused(cases, tmp_path, capsys)


def assert_refused(cases: list[tuple[list[str], str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each command exits 2 with one line of stderr that names ``--teacher`` and what is wrong; nothing starts."""
    for argv, says in cases:
        with pytest.raises(SystemExit) as refused:
            dmc_cli.main([*argv, "--out", str(tmp_path / "never"), "--quiet"])
        assert refused.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and says in err[0] and "--teacher" in err[0], err
        assert not (tmp_path / "never").exists()  # nothing was started
