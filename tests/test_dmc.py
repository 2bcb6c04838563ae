"""Deep Monte-Carlo (issue 44): the targets, the buffer, the checkpoint, the agent, the command and its resume."""

from __future__ import annotations

import io
import json
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")

import torch

import agents
import jericho_env
from agents.checkpoint import CheckpointError, UnsafeCheckpointError
from agents.dmc import DmcAgent, build_network, load_dmc, save_dmc
from agents.nets.dmc import action_features
from experiments import dmc as dmc_cli
from experiments.training.dmc.actors import Actors, ReplayBuffer
from jericho_env.envs.aec import JerichoEnv
from tests.dmc_helpers import make_actors, random_networks

GAMES = [("castles", {}), ("walls", {"num_players": 3}), ("grid", {"board_size": 7})]
TINY = ["--positions", "3000", "--envs", "32", "--rounds", "8", "--buffer", "4000", "--batch-size", "128"]
TINY += ["--net", "32", "--eval-every", "2000", "--eval-deals", "2", "--quiet"]


def _reference_targets(game: str, options: dict[str, Any], rounds: int, capacity: int) -> tuple[Actors, list[Any]]:
    """Actors after ``rounds`` rounds, and the expected target of every serial: the mover's final return."""
    network = build_network(game, options, "16")
    buffer = ReplayBuffer(capacity, network.stored_width)
    actors = make_actors(game, options, 8, 0.3, buffer, [5, 0])
    step = actors.env.step
    log: list[tuple[np.ndarray, np.ndarray]] = []

    def recording_step(actions: np.ndarray) -> Any:
        out = step(actions)
        log.append((out[3].copy(), out[4].copy()))
        return out

    actors.env.step = recording_step  # type: ignore[method-assign]
    open_games: list[list[tuple[int, int]]] = [[] for _ in range(8)]  # per env: (serial, seat) of its decisions
    expected: list[Any] = []
    plan = network.plan()
    for _ in range(rounds):
        choice = np.flatnonzero(np.asarray(actors.mask).sum(axis=1) > 1)
        seats, first = np.asarray(actors.player).copy(), buffer.added
        actors.play(plan, 1)
        for k, env in enumerate(choice):
            open_games[env].append((first + k, int(seats[env])))
            expected.append(None)
        rewards, terminated = log[-1]
        for env in np.flatnonzero(terminated):
            for serial, seat in open_games[env]:
                expected[serial] = rewards[env, seat]
            open_games[env] = []
    return actors, expected


@pytest.mark.parametrize(("game", "options"), GAMES[:2])
def test_targets_are_the_final_return_of_the_seat_that_moved(game: str, options: dict[str, Any]) -> None:
    actors, expected = _reference_targets(game, options, 300, 100_000)
    buffer = actors.buffer
    assert buffer.added == len(expected) == actors.positions
    got = buffer.targets[: buffer.added]
    done = [i for i, e in enumerate(expected) if e is not None]
    assert actors.games > 8 and len(done) > 100
    np.testing.assert_allclose(got[done], np.array([expected[i] for i in done], np.float32), atol=1e-6)
    pending = [i for i, e in enumerate(expected) if e is None]
    assert np.isnan(got[pending]).all()  # games still running: no target yet
    if game == "walls":  # several seats, different returns in one game: the seat mapping matters
        assert {1.0, -0.5} <= set(np.round(got[done], 4).tolist())


@pytest.mark.parametrize(
    ("game", "options"),
    [("walls", {"num_players": 3}), pytest.param("grid", {"board_size": 7}, marks=pytest.mark.slow)],
)
def test_lambda_targets_mix_the_outcome_with_the_seats_next_value(game: str, options: dict[str, Any]) -> None:
    """``--lam``: each position's target is (1 - lam) V(next) + lam G(next) of the same seat, the outcome last."""
    lam = 0.6
    network = build_network(game, options, "16")
    actors = make_actors(game, options, 8, 0.3, ReplayBuffer(100_000, network.stored_width), [6, 0], lam=lam)
    plan, step = network.plan(), actors.env.step
    values: list[np.ndarray] = []
    best_values = plan.best_values

    def recording_best_values(obs: np.ndarray, masks: np.ndarray) -> Any:
        chosen, value = best_values(obs, masks)
        q = network.plan().best_values(obs, masks)[1]  # the highest legal Q, asked afresh
        np.testing.assert_allclose(value, q, rtol=1e-5, atol=1e-6)
        values.append(value.copy())
        return chosen, value

    log: list[tuple[np.ndarray, np.ndarray]] = []

    def recording_step(actions: np.ndarray) -> Any:
        out = step(actions)
        log.append((out[3].copy(), out[4].copy()))
        return out

    plan.best_values = recording_best_values  # type: ignore[method-assign]
    actors.env.step = recording_step  # type: ignore[method-assign]
    open_games: list[list[tuple[int, int, float]]] = [[] for _ in range(8)]  # (serial, seat, value)
    expected: dict[int, float] = {}
    for _ in range(300):
        choice = np.flatnonzero(np.asarray(actors.mask).sum(axis=1) > 1)
        seats, first, asked = np.asarray(actors.player).copy(), actors.buffer.added, len(values)
        actors.play(plan, 1)
        assert len(values) == asked + (len(choice) > 0)
        for k, env in enumerate(choice):
            open_games[env].append((first + k, int(seats[env]), float(values[-1][k])))
        rewards, terminated = log[-1]
        for env in np.flatnonzero(terminated):
            ahead = {seat: float(rewards[env, seat]) for seat in range(rewards.shape[1])}
            for serial, seat, value in reversed(open_games[env]):
                expected[serial] = ahead[seat]
                ahead[seat] = (1 - lam) * value + lam * expected[serial]
            open_games[env] = []
    done = sorted(expected)
    assert actors.games > 8 and len(done) > 100
    got = actors.buffer.targets[done]
    np.testing.assert_allclose(got, np.array([expected[i] for i in done], np.float32), atol=1e-5)
    assert not np.isin(got, np.unique(log[-1][0])).all()  # values mixed in, not the returns alone


@pytest.mark.parametrize(("game", "options"), [("walls", {"num_players": 3}), ("grid", {"board_size": 7})])
def test_versus_greedy_records_only_the_learning_seat(game: str, options: dict[str, Any]) -> None:
    network = build_network(game, options, "16")
    actors = make_actors(game, options, 8, 0.0, ReplayBuffer(50_000, network.stored_width), [2, 0], versus_share=1.0)
    plan, games = network.plan(), 0
    for _ in range(150):
        actors.play(plan, 1)
        assert (actors.learner >= 0).all()
        for g in range(8):  # every decision recorded in the game under way is its learning seat's
            assert (actors.seats[g, : actors.count[g]] == actors.learner[g]).all()
        games = actors.games
    assert games >= 8 and actors.positions > 50
    half = make_actors(game, options, 64, 0.0, ReplayBuffer(100, network.stored_width), [3, 0], versus_share=0.5)
    assert 10 < (half.learner >= 0).sum() < 54  # about half the games against greedy, the rest self-play


@pytest.mark.parametrize("game", ["castles", "walls", "grid"])
def test_the_shipped_ppo_as_a_batch_policy_chooses_as_the_agent_row_by_row(game: str) -> None:
    from agents.batch import AgentBatchPolicy, NetworkBatchPolicy, make_batch_policy
    from jericho_env.envs.batched import random_actions

    fast, rows = make_batch_policy("ppo", game, seed=1), AgentBatchPolicy(agents.make("ppo", game, seed=1))
    assert isinstance(fast, NetworkBatchPolicy)
    env, rng = jericho_env.make_batched(game, 16, copy=True, check=False), np.random.default_rng(0)
    obs, mask, _ = env.reset(seed=3)
    for _ in range(12):
        np.testing.assert_array_equal(fast(obs, mask), rows(obs, mask))
        obs, mask, _, _, _ = env.step(random_actions(mask, rng))


def test_versus_draws_one_fixed_agent_per_game_and_each_plays_its_own_moves() -> None:
    from agents.batch import AgentBatchPolicy

    network = build_network("castles", {}, "16")
    buffer = ReplayBuffer(50_000, network.stored_width)
    actors = make_actors("castles", {}, 32, 0.0, buffer, [4, 0], versus_share=1.0, versus="greedy,ppo")
    reference = [AgentBatchPolicy(agents.make(name, "castles", seed=0)) for name in ("greedy", "ppo")]
    asked: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
    for k, policy in enumerate(list(actors.fixed)):

        def spy(obs: np.ndarray, mask: np.ndarray, policy: Any = policy, k: int = k) -> np.ndarray:
            chosen = policy(obs, mask)
            asked.append((k, obs.copy(), mask.copy(), chosen.copy()))
            return chosen

        actors.fixed[k] = spy
    dealt: set[int] = set()
    plan = network.plan()
    for _ in range(120):
        dealt.update(actors.opponent[actors.learner >= 0].tolist())
        actors.play(plan, 1)
        for g in range(32):  # every decision recorded in the game under way is its learning seat's
            assert (actors.seats[g, : actors.count[g]] == actors.learner[g]).all()
    assert dealt == {0, 1} and actors.games > 0 and {k for k, *_ in asked} == {0, 1}
    for k, obs, mask, chosen in asked:  # ppo's moves are the shipped agent's (greedy breaks ties at random)
        if k == 1:
            np.testing.assert_array_equal(chosen, reference[k](obs, mask))
        assert mask[np.arange(len(chosen)), chosen].all()


def test_init_starts_a_run_from_a_checkpoints_network(tmp_path: Path) -> None:
    from experiments.training.dmc import learner as dmc

    network = build_network("castles", {}, "32")
    path = save_dmc(tmp_path / "start.zip", network, "castles", {}, {"stats": {}})
    fresh = build_network("castles", {}, "32")
    obs = torch.rand(4, network.spec.observation_size)
    assert not torch.allclose(fresh(obs), network(obs))
    dmc.start_from(fresh, dmc.make_config("castles", {}, net="32", init=str(path)))
    assert torch.allclose(fresh(obs), network(obs))
    with pytest.raises(ValueError, match="not this run's"):
        dmc.check_start(dmc.make_config("castles", {}, net="16", init=str(path)))
    with pytest.raises(ValueError, match="--init"):
        dmc.check_start(dmc.make_config("walls", {}, net="32", init=str(path)))


def test_a_wrapped_ring_never_mislabels_newer_positions() -> None:
    actors, expected = _reference_targets("castles", {}, 200, 500)
    buffer = actors.buffer
    for serial in range(max(0, buffer.added - buffer.capacity), buffer.added):
        row, want = serial % buffer.capacity, expected[serial]
        if want is None:
            assert np.isnan(buffer.targets[row])
        else:
            assert buffer.targets[row] == pytest.approx(want)
    batch = buffer.sample(64, np.random.default_rng(0))
    assert batch.rows.dtype == np.float32 and not np.isnan(batch.targets).any() and len(batch.actions) == 64
    assert batch.taught is None and batch.legal is None


def test_action_features_describe_every_action() -> None:
    for game, options in GAMES:
        table = action_features(game, options)
        assert table.shape[0] == JerichoEnv(game, **options).rules.info.num_actions
        assert table.shape[1] > 0 and np.isfinite(table).all()
        assert len(np.unique(table, axis=0)) > 1


def test_checkpoint_round_trip_keeps_network_optimizer_and_counters(tmp_path: Path) -> None:
    network = build_network("castles", {}, "32,16")
    optimizer = torch.optim.Adam(network.parameters(), lr=1e-3)
    obs = torch.rand(5, network.spec.observation_size)
    network(obs).sum().backward()
    optimizer.step()
    path = save_dmc(tmp_path / "n.zip", network, "castles", {}, {"stats": {"positions_generated": 7}}, optimizer)
    loaded, meta, opt_state = load_dmc(path, "castles", {})
    assert torch.allclose(loaded(obs), network(obs))
    assert meta["training"]["stats"]["positions_generated"] == 7 and opt_state is not None
    np.testing.assert_allclose(loaded.plan().q_values(obs.numpy()), network(obs).detach().numpy(), atol=1e-5)
    with pytest.raises(CheckpointError, match="trained on"):
        load_dmc(path, "walls", {})


PRIOR_GAMES = [("walls", {}), ("grid", {"board_size": 7}), ("grid", {"obs_version": 1})]


@pytest.mark.parametrize(("game", "options"), PRIOR_GAMES)
def test_the_prior_starts_at_greedys_best_move(game: str, options: dict[str, Any], tmp_path: Path) -> None:
    """Untrained, a prior network plays a move greedy scores best; its plan equals the torch network."""
    from agents.prior import make_prior

    torch.manual_seed(0)
    network = build_network(game, options, "32", prior="greedy-scores")
    path = save_dmc(tmp_path / "p.zip", network, game, options, {})
    loaded, meta, _ = load_dmc(path, game, options)
    assert meta["network"]["prior"] == "greedy-scores" and loaded.spec.prior == "greedy-scores"
    hint = make_prior("greedy-scores", game, **options)
    assert hint is not None
    env = jericho_env.make_batched(game, 24, copy=True, check=False, **options)
    obs, mask, _ = env.reset(seed=3)
    plan, rng = loaded.plan(), np.random.default_rng(0)
    checked = 0
    for _ in range(40):
        legal = mask.astype(bool)
        choice = plan.best(obs, mask)
        scores = hint(obs, legal)
        assert legal[np.arange(len(choice)), choice].all()
        # greedy's best (exp(0)) but for its tie-breaking bonuses (hundredths of a point: exp(-0.1) = 0.9)
        assert (scores[np.arange(len(choice)), choice] >= 0.9).all()
        rows = np.arange(len(choice))
        stored = torch.from_numpy(plan.stored(obs, rows, choice).astype(np.float32))
        q = loaded.q_stored(stored, torch.from_numpy(choice)).detach().numpy()
        q_plan = plan.pair_values(obs, legal) if game == "grid" else None
        if q_plan is not None:
            r, a, v = q_plan
            expect = np.array([v[(r == i) & (a == choice[i])][0] for i in rows])
        else:
            expect = plan.q_values(plan.rows(obs, mask))[rows, choice]
        np.testing.assert_allclose(q, expect, atol=1e-5)
        checked += len(choice)
        obs, mask, _, _, _ = env.step(np.where(rng.random(len(choice)) < 0.5, choice, mask.argmax(axis=1)))
    assert checked == 40 * 24


def test_a_prior_is_refused_where_the_game_has_no_scores(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="grid, walls"):
        build_network("castles", {}, "8", prior="greedy-scores")
    network = build_network("walls", {}, "8", prior="greedy-scores")
    path = save_dmc(tmp_path / "w.zip", network, "walls", {}, {})
    with zipfile.ZipFile(path) as zf:
        meta, weights = json.loads(zf.read("meta.json")), zf.read("weights.pt")
    meta["network"]["prior"] = "oracle"
    with zipfile.ZipFile(tmp_path / "bad.zip", "w") as zf:
        zf.writestr("meta.json", json.dumps(meta))
        zf.writestr("weights.pt", weights)
    with pytest.raises(CheckpointError, match="prior"):
        load_dmc(tmp_path / "bad.zip")


# torch's weights-only unpickler remarks on the hostile pickle's protocol before refusing it
@pytest.mark.filterwarnings("ignore:Detected pickle protocol:UserWarning")
def test_a_pickle_in_the_weights_is_refused_unrun(tmp_path: Path) -> None:
    network = build_network("castles", {}, "8")
    good = save_dmc(tmp_path / "n.zip", network, "castles", {}, {})
    with zipfile.ZipFile(good) as zf:
        meta = zf.read("meta.json")
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("meta.json", meta)
        zf.writestr("weights.pt", pickle.dumps({"policy": print}))
    with pytest.raises(UnsafeCheckpointError):
        load_dmc(bad)
    meta_big = json.loads(meta)
    meta_big["network"]["hidden"] = [10**6]
    with zipfile.ZipFile(tmp_path / "big.zip", "w") as zf:
        zf.writestr("meta.json", json.dumps(meta_big))
        buf = io.BytesIO()
        torch.save({"policy": network.state_dict()}, buf)
        zf.writestr("weights.pt", buf.getvalue())
    with pytest.raises(CheckpointError, match="refused"):
        load_dmc(tmp_path / "big.zip")


@pytest.mark.parametrize(("game", "options"), [*GAMES, ("grid", {"board_size": 7, "obs_version": 1})])
def test_the_agent_plays_only_legal_moves(game: str, options: dict[str, Any], tmp_path: Path) -> None:
    (path,) = random_networks(game, options, tmp_path, 1)  # strong preferences, many for illegal actions
    agent = agents.make("dmc", game, path=str(path), **options)
    assert isinstance(agent, DmcAgent)
    network = agent.network
    env = JerichoEnv(game, **options)
    for seed in range(3):
        env.reset(seed=seed)
        for _name in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            action = agent.act(observation)
            assert observation["action_mask"][action] == 1
            env.step(action)
    policy = agent.batch_policy()
    masks = np.zeros((4, network.spec.num_actions), bool)
    masks[np.arange(4), [0, 1, 2, 3]] = True
    assert list(policy(np.zeros((4, network.spec.observation_size), np.float32), masks)) == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("game", "options", "prior"),
    [
        ("castles", {}, "none"),
        ("walls", {"num_players": 3}, "greedy-scores"),
        pytest.param("grid", {"board_size": 7}, "none", marks=pytest.mark.slow),
    ],
)
def test_an_ensemble_plays_the_legal_action_of_highest_mean_q(
    game: str, options: dict[str, Any], prior: str, tmp_path: Path
) -> None:

    paths = random_networks(game, options, tmp_path, 3, prior)
    ensemble = agents.make("dmc", game, path="+".join(str(p) for p in paths), **options)
    alone = [agents.make("dmc", game, path=str(p), **options) for p in paths]
    twice = agents.make("dmc", game, path=[paths[0], paths[0]], **options)
    env = jericho_env.make_batched(game, 16, copy=True, check=False, **options)
    obs, mask, _ = env.reset(seed=5)
    rng, differs = np.random.default_rng(0), 0
    for _ in range(30):
        legal = mask.astype(bool)
        if game == "grid":  # every plan lists the legal pairs in the same order
            parts = [a.plan.pair_values(obs, legal) for a in alone]
            rows, acts = parts[0][0], parts[0][1]
            mean = np.full(legal.shape, -np.inf)
            mean[rows, acts] = np.mean([q for _, _, q in parts], axis=0)
        else:
            mean = np.mean([a.plan.q_values(a.plan.rows(obs, legal)) for a in alone], axis=0)
            mean = np.where(legal, mean, -np.inf)
        choice = ensemble.batch_policy()(obs, mask)
        np.testing.assert_array_equal(choice, mean.argmax(axis=1))
        assert legal[np.arange(len(choice)), choice].all()
        first = alone[0].batch_policy()(obs, mask)
        np.testing.assert_array_equal(twice.batch_policy()(obs, mask), first)
        differs += int((choice != first).sum())
        assert ensemble.act({"observation": obs[0], "action_mask": mask[0]}) == choice[0]
        obs, mask, _, _, _ = env.step(np.where(rng.random(len(choice)) < 0.5, choice, mask.argmax(axis=1)))
    assert differs > 0  # the mean is not its first network's choice


def test_an_ensemble_is_refused_with_a_message_that_names_what_is_wrong(tmp_path: Path) -> None:
    castles = random_networks("castles", {}, tmp_path, 1)[0]
    walls = save_dmc(tmp_path / "w.zip", build_network("walls", {}, "8"), "walls", {}, {})
    with pytest.raises(CheckpointError, match="walls"):
        agents.make("dmc", "castles", path=f"{castles}+{walls}")
    with pytest.raises(FileNotFoundError, match=r"missing\.zip"):
        agents.make("dmc", "castles", path=f"{castles}+{tmp_path / 'missing.zip'}")
    with pytest.raises(ValueError, match="empty checkpoint path"):
        agents.make("dmc", "castles", path=f"{castles}+")
    with pytest.raises(ValueError, match="at most 16"):
        agents.make("dmc", "castles", path=[castles] * 17)
    plus = tmp_path / "a+b.zip"  # a file whose name has a plus is that one file
    plus.write_bytes(castles.read_bytes())
    assert agents.make("dmc", "castles", path=str(plus)).path == str(plus)


def test_evaluate_takes_an_ensemble_on_the_command_line(tmp_path: Path) -> None:
    from experiments import evaluate

    a, b = random_networks("castles", {}, tmp_path, 2)
    argv = ["castles", "--agents", f"dmc={a}+{b}", "greedy", "--deals", "2", "--quiet", "--no-plot"]
    assert evaluate.main([*argv, "--out", str(tmp_path / "e")]) == 0
    cells = json.loads((tmp_path / "e" / "results.json").read_text())["cells"]
    (cell,) = [c for c in cells if c["agent"] == "dmc"]
    assert cell["wins"] + cell["draws"] + cell["losses"] == 4
    spec = json.loads((tmp_path / "e" / "results.json").read_text())["config"]["agents"][0]
    assert spec["kwargs"]["path"] == f"{a}+{b}"  # the table records which networks played


def test_the_command_trains_a_prior_network(tmp_path: Path) -> None:
    out = tmp_path / "walls"
    argv = ["walls", *TINY, "--prior", "greedy-scores", "--option", "num_players=3", "--out", str(out)]
    assert dmc_cli.main(argv) == 0
    assert json.loads((out / "config.json").read_text())["prior"] == "greedy-scores"
    agent = agents.make("dmc", "walls", path=str(out / "final.zip"), num_players=3)
    assert agent.network.spec.prior == "greedy-scores" and agent.network.prior_weight is not None


def test_the_command_runs_and_resume_keeps_every_counter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    lr = ["--learning-rate", "1e-3", "--learning-rate-end", "2e-4", "--anneal", "0.5"]
    assert dmc_cli.main(["castles", *TINY, *lr, "--out", str(out)]) == 0
    _, _, optimizer = load_dmc(out / "checkpoints" / "latest.zip", "castles", {})
    assert optimizer["param_groups"][0]["lr"] == pytest.approx(2e-4)  # the budget spent: the end's rate
    first = json.loads((out / "training.json").read_text())
    assert first["positions_generated"] >= 3000 and first["positions_learned"] > 0
    assert first["seconds_actor"] > 0 and first["seconds_learner"] > 0 and "rates" in first
    assert [e["opponent"] for e in first["evals"]] == ["greedy", "greedy"]
    agent = agents.make("dmc", "castles", path=str(out / "final.zip"))
    assert agent.meta["training"]["stats"]["positions_generated"] == first["positions_generated"]
    with pytest.raises(SystemExit) as refused:  # a resumed run keeps its settings
        dmc_cli.main(["castles", "--resume", str(out), "--epsilon", "0.5", "--quiet"])
    assert refused.value.code == 2
    config = (out / "config.json").read_text()
    capsys.readouterr()
    with pytest.raises(SystemExit) as refused:  # a budget the run has passed: refused, not a silent no-op
        dmc_cli.main(["castles", "--resume", str(out), "--positions", "10", "--quiet"])
    done = first["positions_generated"]
    err = capsys.readouterr().err
    assert refused.value.code == 2 and err.strip().splitlines() == [
        f"python -m experiments.dmc: error: --positions 10 is below the run's {done}: --resume extends, never cuts"
    ]
    assert (out / "config.json").read_text() == config
    assert dmc_cli.main(["castles", "--resume", str(out), "--positions", "6000", "--quiet"]) == 0
    second = json.loads((out / "training.json").read_text())
    assert second["positions_generated"] >= 6000 and len(second["sessions"]) == 2
    assert second["evals"][:2] == first["evals"] and len(second["evals"]) >= 3
    for key in ("positions_learned", "updates", "agent_steps", "games", "seconds_actor", "seconds"):
        assert second[key] > first[key]
    from experiments import curves  # the evaluations over positions, one run and several together

    assert curves.main([str(out)]) == 0 and (out / "learning_curves.png").stat().st_size > 1000
    assert curves.main([str(out), str(out), "--together", str(tmp_path / "both.png")]) == 0
    assert (tmp_path / "both.png").is_file()
    with pytest.raises(SystemExit) as refused:
        curves.main([str(tmp_path), "--together", str(tmp_path / "x.png")])
    assert refused.value.code == 2


@pytest.mark.parametrize(
    "argv",
    [
        ["castles", "--epsilon", "2"],
        ["castles", "--positions", "0"],
        ["castles", "--net", "abc"],
        ["chess"],
        ["castles", "--resume", "/no/such/run"],
        ["castles", "--option", "ranks=4"],
        ["castles", "--bogus"],
        ["castles", "--prior", "greedy-scores"],
        ["walls", "--prior", "greedy"],
        ["castles", "--lam", "1.5"],
        ["castles", "--versus", "greedy,nobody"],
        ["castles", "--versus", "greedy,ppo=/no/such.zip", "--versus-share", "0.5"],
        ["grid", "--versus", "ppo", "--option", "board_size=7"],
        ["castles", "--init", "/no/such.zip"],
        ["castles", "--learning-rate-end", "0.1"],
        ["castles", "--learning-rate-end", "1e-5", "--anneal", "0"],
    ],
)
def test_bad_flags_exit_2_in_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:  # any other exception escapes main: a traceback, and the test fails
        dmc_cli.main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines and "error:" in lines[-1] and "Traceback" not in err
    assert len([line for line in lines if "error" in line]) == 1


def test_the_learning_rate_falls_in_a_line_over_the_last_share_of_the_budget() -> None:
    from experiments.training.dmc.config import make_config
    from experiments.training.dmc.learner import learning_rate_at

    constant = make_config("walls", positions=1000, learning_rate=1e-3)  # walls' preset: no end rate
    assert {learning_rate_at(constant, p) for p in (0, 500, 1000, 5000)} == {1e-3}
    preset = make_config("castles", positions=1000)  # castles': down to 5e-5 over the last fifth
    assert [learning_rate_at(preset, p) for p in (800, 1000)] == pytest.approx([5e-4, 5e-5])
    cfg = make_config("castles", positions=1000, learning_rate=1e-3, learning_rate_end=1e-4, anneal=0.5)
    got = [learning_rate_at(cfg, p) for p in (0, 500, 750, 1000, 1200)]
    assert got == pytest.approx([1e-3, 1e-3, 5.5e-4, 1e-4, 1e-4])


def test_a_run_of_an_older_version_resumes_as_it_was_configured(tmp_path: Path) -> None:
    """castles' preset falls to 5e-5 now; a run whose config.json predates the flag keeps its constant rate, its
    share of games against fixed agents under the old name is read, and a retired setting is refused."""
    from experiments.training.dmc.config import DmcConfig, make_config

    old = make_config("castles").to_json()
    del old["learning_rate_end"], old["anneal"], old["backend"]
    old["versus_greedy"] = old.pop("versus_share") + 0.5
    (tmp_path / "config.json").write_text(json.dumps({**old, "target": "return"}))
    cfg = DmcConfig.saved(tmp_path, "castles")
    assert cfg.learning_rate_end is None and cfg.init is None and cfg.lam == 0.8
    assert cfg.versus_share == 0.5 and cfg.backend == "local"
    (tmp_path / "config.json").write_text(json.dumps({**old, "learning_rate_end": 1e-4, "anneal": 0.5}))
    cfg = DmcConfig.saved(tmp_path, "castles")
    assert (cfg.learning_rate_end, cfg.anneal) == (1e-4, 0.5)
    for retired in ({"target": "margin"}, {"teacher_search": ""}):
        (tmp_path / "config.json").write_text(json.dumps({**old, **retired}))
        with pytest.raises(ValueError, match=f"the run's {next(iter(retired))} is retired"):
            DmcConfig.saved(tmp_path, "castles")


def test_help_documents_every_flag() -> None:
    text = dmc_cli.build_parser().format_help()
    for action in dmc_cli.build_parser()._actions:
        for flag in action.option_strings:
            assert flag in text
        assert action.help or action.dest == "help"


@pytest.mark.slow
def test_kill_9_loses_nothing_saved_and_resume_continues(tmp_path: Path) -> None:
    import os
    import signal
    import time

    from agents.dmc import read_dmc_meta

    out = tmp_path / "run"
    argv = [sys.executable, "-m", "experiments.dmc", "castles", *TINY, "--positions", "10000000"]
    argv += ["--checkpoint-seconds", "0.5", "--out", str(out)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    latest = out / "checkpoints" / "latest.zip"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (latest.is_file() and (out / "training.json").is_file()):
            time.sleep(0.2)
        time.sleep(1.5)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    saved = read_dmc_meta(latest)["training"]["stats"]
    assert saved["positions_generated"] > 0
    target = saved["positions_generated"] + 2000
    assert dmc_cli.main(["castles", "--resume", str(out), "--positions", str(target), "--quiet"]) == 0
    after = json.loads((out / "training.json").read_text())
    assert after["positions_generated"] >= target and len(after["sessions"]) == 2
    assert after["evals"][: len(saved["evals"])] == saved["evals"]
    for key in ("positions_learned", "updates", "agent_steps", "games", "seconds"):
        assert after[key] >= saved[key]
