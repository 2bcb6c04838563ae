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
from experiments.training.dmc import learn_step
from experiments.training.dmc_actors import Actors, ReplayBuffer
from tests.dmc_helpers import random_networks

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
    actors = Actors(game, options, 8, 0.0, buffer, [4, 0], lam=0.8, teacher=teacher)
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
    assert len(batch) == 5 and batch[4].any(axis=1).all()


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
    batch = (obs, np.zeros(64, np.int64), np.zeros(64, np.float32), wild, legal)
    optimizer = torch.optim.Adam(student.parameters(), lr=1e-2)
    losses = [learn_step(student, optimizer, batch, 10.0) for _ in range(150)]
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
        batch = (obs, np.zeros(32, np.int64), np.zeros(32, np.float32), values, legal)
        return learn_step(student, optimizer, batch, 10.0, weight)

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
    """A grid teacher's plan (pair values) that records each (observations, masks) it was asked and its Q."""

    pairs = False

    def __init__(self, plan: Any) -> None:
        self.plan, self.asked = plan, []

    def pair_values(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rows, acts, q = self.plan.pair_values(obs, masks)
        self.asked.append((np.array(obs), np.array(masks, bool), rows, acts, q))
        return rows, acts, q


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
    actors = Actors("grid", options, 8, 0.2, buffer, [4, 0], lam=0.8, teacher=teacher)
    plan = student.plan()
    recorded = sum(actors.play(plan, 1) for _ in range(30))
    assert recorded > 0 and buffer.added == buffer.labelled == len(buffer.known()) > recorded  # extra rows too
    rows_seen = 0
    extra = 0
    for _, masks, rows, acts, q in teacher.asked:
        full = np.full(masks.shape, -np.inf)
        full[rows, acts] = q
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
        (["grid", "--teacher", str(castles), "--teacher-search", "", "--option", "board_size=7"], "search=rollouts"),
        (["castles", "--teacher", str(tmp_path / "missing.zip")], "missing.zip"),
        (["castles", "--teacher", f"{castles}+{walls}"], "walls"),
        (["castles", "--teacher", f"{castles}+"], "empty checkpoint path"),
        (["castles", "--teacher", str(castles), "--backend", "ray"], "--backend local"),
    ]
    assert_refused(cases, tmp_path, capsys)


class RecordingSearchTeacher:
    """A search teacher that records each call: the observations, masks and views it was handed, its answer."""

    uses_views = True

    def __init__(self, teacher: Any) -> None:
        self.teacher, self.asked, self.views = teacher, [], []

    def observe_views(self, views: list[Any]) -> None:
        self.views = list(views)
        self.teacher.observe_views(views)

    def q_all(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        q = self.teacher.q_all(obs, masks)
        self.asked.append((np.array(obs), np.array(masks, bool), q, self.views))
        return q


@pytest.mark.parametrize("prior_visits", [0.0, 5.0])
def test_a_search_teacher_blends_the_searchs_values_with_the_networks_q_by_visits(
    prior_visits: float, tmp_path: Path
) -> None:
    from agents.dmc_search import DmcSearchAgent, SearchTeacher

    path = random_networks("castles", {}, tmp_path, 1)[0]
    agent = DmcSearchAgent("castles", path=path, simulations=12, seed=3)
    results: list[Any] = []
    search = agent.search.search

    def recorded(views: Any, seats: Any) -> Any:
        out = search(views, seats)
        results.extend(out)
        return out

    agent.search.search = recorded
    teacher = RecordingSearchTeacher(SearchTeacher(agent, prior_visits))
    student = build_network("castles", {}, "16")
    buffer = ReplayBuffer(10_000, student.stored_width, student.spec.num_actions)
    recorded_positions = Actors("castles", {}, 8, 0.0, buffer, [4, 0], teacher=teacher).play(student.plan(), 12)
    assert recorded_positions == len(results) == teacher.teacher.searched == buffer.labelled > 0
    obs = np.concatenate([o for o, _, _, _ in teacher.asked])
    legal = np.concatenate([m for _, m, _, _ in teacher.asked])
    taught = np.concatenate([q for _, _, q, _ in teacher.asked])
    views = [v for _, _, _, vs in teacher.asked for v in vs]
    rows = np.arange(recorded_positions)
    np.testing.assert_array_equal(buffer.taught[rows], taught)
    network = DmcAgent("castles", path=path).plan.q_all(obs, legal)
    rules = agent.rules
    searched = unsearched = changed = 0
    for row, (result, view) in enumerate(zip(results, views, strict=True)):
        seat = rules.current_player(view)  # each row's view is its mover's: the mover's observation and moves
        np.testing.assert_array_equal(rules.observe(view, seat), obs[row])
        assert sorted(result.legal) == np.flatnonzero(legal[row]).tolist()
        for action, visits, value in zip(result.legal, result.visits, result.q, strict=True):
            if visits > 0:  # the network's Q counts as prior_visits visits beside the search's mean
                blend = (visits * float(value) + prior_visits * float(network[row, action])) / (visits + prior_visits)
                assert taught[row, action] == pytest.approx(blend, abs=1e-5)
                searched += 1
                changed += abs(float(value) - float(network[row, action])) > 1e-4
            else:
                assert taught[row, action] == pytest.approx(float(network[row, action]), abs=1e-5)
                unsearched += 1
        off = ~legal[row]
        np.testing.assert_allclose(taught[row, off], network[row, off], rtol=1e-5, atol=1e-5)
    assert searched and unsearched and changed  # the search looked at some moves, left others, and moved values


def test_the_command_distils_a_search_and_refuses_its_bad_settings_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    castles = str(random_networks("castles", {}, tmp_path, 1)[0])
    out = tmp_path / "run"
    argv = ["castles", *TINY, "--positions", "600", "--eval-every", "600", "--teacher", castles]
    assert dmc_cli.main([*argv, "--teacher-search", "simulations=4,prior_visits=2", "--out", str(out)]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["teacher"] == castles and config["teacher_search"] == "simulations=4,prior_visits=2"
    stats = json.loads((out / "training.json").read_text())
    assert stats["positions_generated"] >= 600 and stats["positions_learned"] > 0
    assert dmc_cli.main(["castles", "--resume", str(out), "--positions", "1200", "--quiet"]) == 0  # the search again
    resumed = json.loads((out / "training.json").read_text())
    assert resumed["positions_generated"] >= 1200 and resumed["updates"] > stats["updates"]
    walls = save_dmc(tmp_path / "w.zip", build_network("walls", {}, "8"), "walls", {}, {})
    cases = [
        (["castles", "--teacher-search", "simulations=4"], "needs --teacher"),
        (["castles", "--teacher", castles, "--teacher-search", "path=x.zip"], "not a setting here"),
        (["castles", "--teacher", castles, "--teacher-search", "sims=4"], "prior_temperature"),
        (["castles", "--teacher", castles, "--teacher-search", "simulations=four"], "simulations takes int"),
        (["castles", "--teacher", castles, "--teacher-search", "simulations=0"], "simulations must be"),
        (["castles", "--teacher", castles, "--teacher-search", "prior_visits=-1"], "prior_visits must be"),
        (["castles", "--teacher", castles, "--teacher-search", "prior_visits=many"], "prior_visits must be"),
        (["walls", "--teacher", str(walls), "--teacher-search", ""], "two-player zero-sum"),
    ]
    assert_refused(cases, tmp_path, capsys)


@pytest.mark.parametrize("prior_visits", [None, 0.0, 5.0])
def test_grid_rollout_teacher_stores_every_action_it_rolled_out_labelled_with_its_value(
    prior_visits: float | None, tmp_path: Path
) -> None:
    """Grid's rollout teacher: each decision of the run stores one row per action the search rolled out (the
    network's ``top`` most probable), its position the decision's, labelled with the rollouts' mean blended with
    the network's Q counted as ``prior_visits`` rollouts (by default as many as the action's own)."""
    from agents.dmc import legal_q
    from agents.dmc_search import DmcSearchAgent, RolloutTeacher

    options = {"board_size": 7}
    path = random_networks("grid", options, tmp_path, 1)[0]
    agent = DmcSearchAgent("grid", path=path, search="rollouts", simulations=2, top=3, seed=3, **options)
    results: list[Any] = []
    views: list[Any] = []
    search = agent.search.search

    def recorded(states: Any, seats: Any) -> Any:
        out = search(states, seats)
        results.extend(out)
        views.extend(states)
        return out

    agent.search.search = recorded
    teacher = RolloutTeacher(agent, prior_visits)
    k = 2.0 if prior_visits is None else prior_visits
    assert teacher.prior_visits == k
    student = build_network("grid", options, "16")
    buffer = ReplayBuffer(20_000, student.stored_width)
    positions = Actors("grid", options, 8, 0.2, buffer, [4, 0], teacher=teacher).play(student.plan(), 6)
    assert positions == len(results) == teacher.searched > 0
    network = DmcAgent("grid", path=path, **options).plan
    row, wider, moved = 0, 0, 0
    for result, view in zip(results, views, strict=True):
        seen = np.flatnonzero(result.visits)
        acts = np.asarray(result.legal)[seen]
        assert 1 <= len(seen) <= 3 and (result.visits[seen] == 2).all()
        wider += len(result.legal) > 3
        rows = slice(row, row + len(seen))
        np.testing.assert_array_equal(buffer.actions[rows], acts)
        obs = agent.rules.observe(view, agent.rules.current_player(view))[None].astype(np.float32)
        mask = agent.rules.legal_mask(view)[None].astype(bool)
        q = legal_q(network, obs, mask)[0, acts]
        np.testing.assert_allclose(buffer.targets[rows], (2 * result.q[seen] + k * q) / (2 + k), rtol=1e-5, atol=1e-6)
        moved += not np.allclose(buffer.targets[rows], q, atol=1e-4)
        plan = student.plan()
        plan.best(obs, mask)  # the encoding that stored() reuses
        expected = plan.stored(obs, np.zeros(len(seen), np.int64), acts)
        np.testing.assert_allclose(buffer.obs[rows], expected, rtol=1e-3, atol=1e-3)  # float16 store
        row += len(seen)
    assert row == buffer.added == buffer.labelled and wider > 0 and moved > 0  # some had more actions than top
    with pytest.raises(ValueError, match="search=rollouts"):
        RolloutTeacher(DmcSearchAgent("grid", path=path, simulations=2, **options))
    for bad in (-1.0, float("nan"), True):
        with pytest.raises(ValueError, match="prior_visits"):
            RolloutTeacher(agent, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="observe_views"):
        RolloutTeacher(agent).rollout_values(np.zeros((1, agent.observation_size), np.float32), np.ones((1, 5), bool))


@pytest.mark.slow
def test_a_grid_run_distils_its_rollouts_and_refuses_other_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = ["--option", "board_size=7"]
    grid = str(random_networks("grid", {"board_size": 7}, tmp_path, 1)[0])
    out = tmp_path / "run"
    settings = "search=rollouts,simulations=2,top=3"
    argv = ["grid", *TINY, "--positions", "400", "--eval-every", "400", "--net", "16", "--teacher", grid, *options]
    assert dmc_cli.main([*argv, "--teacher-search", settings, "--out", str(out)]) == 0
    assert json.loads((out / "config.json").read_text())["teacher_search"] == settings
    stats = json.loads((out / "training.json").read_text())
    assert stats["positions_generated"] >= 400 and stats["positions_learned"] > 0
    assert dmc_cli.main(["grid", "--resume", str(out), "--positions", "800", "--quiet"]) == 0
    assert json.loads((out / "training.json").read_text())["positions_generated"] >= 800
    greedy_played = "search=rollouts,simulations=2,rollout_agent=greedy"  # greedy plays the rollouts
    assert dmc_cli.main([*argv, "--teacher-search", greedy_played, "--out", str(tmp_path / "greedy"), "--quiet"]) == 0
    assert json.loads((tmp_path / "greedy" / "training.json").read_text())["positions_learned"] > 0
    castles = str(random_networks("castles", {}, tmp_path, 1)[0])
    cases = [
        (["grid", "--teacher", grid, "--teacher-search", "simulations=4", *options], "give search=rollouts"),
        (["grid", "--teacher", grid, "--teacher-search", "search=rollouts,prior_visits=-3", *options], "prior_visits"),
        (["grid", "--teacher", grid, "--teacher-search", "search=rollouts,c_puct=2", *options], "c_puct is PUCT's"),
        (["grid", "--teacher", grid, "--teacher-search", "search=rollouts,top=1", *options], "top must be"),
        (["castles", "--teacher", castles, "--teacher-search", "top=4"], "top is search=rollouts'"),
        (["castles", "--teacher", castles, "--teacher-search", "rollout_agent=greedy"], "rollout_agent is search=rol"),
        (["grid", "--teacher", grid, "--teacher-search", "search=rollouts,rollout_agent=no", *options], "not an agent"),
        (["castles", "--teacher", castles, "--teacher-search", "search=rollouts"], "not a setting here"),
    ]
    assert_refused(cases, tmp_path, capsys)


def test_a_search_teacher_refuses_rollouts_and_a_bad_prior_weight(tmp_path: Path) -> None:
    from agents.dmc_search import DmcSearchAgent, SearchTeacher

    path = random_networks("castles", {}, tmp_path, 1)[0]
    with pytest.raises(ValueError, match="search=puct"):
        SearchTeacher(DmcSearchAgent("castles", path=path, search="rollouts", simulations=2))
    agent = DmcSearchAgent("castles", path=path, simulations=2)
    for bad in (-1.0, float("inf"), True, "100"):
        with pytest.raises(ValueError, match="prior_visits"):
            SearchTeacher(agent, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="observe_views"):
        SearchTeacher(agent).q_all(np.zeros((1, agent.observation_size), np.float32), np.ones((1, 3), bool))


def assert_refused(cases: list[tuple[list[str], str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each command exits 2 with one line of stderr that names ``--teacher`` and what is wrong; nothing starts."""
    for argv, says in cases:
        with pytest.raises(SystemExit) as refused:
            dmc_cli.main([*argv, "--out", str(tmp_path / "never"), "--quiet"])
        assert refused.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and says in err[0] and "--teacher" in err[0], err
        assert not (tmp_path / "never").exists()  # nothing was started
