"""The greedy prior (agents.prior): its floats' encoding, the wrapper, the policy bonus, training and play."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import agents
import jericho_env
from agents.checkpoint import CheckpointMeta, PolicySpec, load_policy, save_checkpoint
from agents.nets import build_policy
from agents.prior import decode_prior, encode_prior, with_prior
from experiments import train
from experiments.play.tournament import play_game
from tests.helpers import play_out
from tests.prior_env import PriorEnv

GAMES = ("grid", "walls", "castles")


def test_the_priors_move_round_trips_every_action() -> None:
    for n in (2, 7, 2206, 20_000):
        actions = np.arange(n)
        hints = torch.as_tensor(np.array([encode_prior(int(a), n) for a in actions], dtype=np.float32))
        assert (decode_prior(hints, n).numpy() == actions).all()
    obs = np.zeros(3, dtype=np.float32)
    assert with_prior(obs, np.array([encode_prior(4, 9)])).tolist() == [0, 0, 0, 0.5]


@pytest.mark.parametrize("game", GAMES)
def test_wrapper_appends_greedys_legal_move(game: str) -> None:
    env = PriorEnv(jericho_env.single_agent(game, opponents="random"), "greedy", game)
    base = jericho_env.single_agent(game).observation_space.shape
    assert env.observation_space.shape == (base[0] + 1,)
    obs, _ = env.reset(seed=3)
    greedy = agents.make("greedy", game)
    n = env.action_space.n
    steps = 0
    done = False
    while not done:
        mask = env.action_masks()
        assert obs.shape == env.observation_space.shape and obs.dtype == np.float32
        hinted = int(decode_prior(torch.tensor([obs[-1]]), n)[0])
        assert mask[hinted], "the prior's floats must be a legal action"
        # greedy's scores do not depend on its seed except in exact ties, so the move must score as greedy's
        wanted = greedy.act({"observation": obs[:-1], "action_mask": mask.astype(np.int8)})
        if game == "castles":  # castles' greedy has no random tie-break: the same move
            assert hinted == wanted
        obs, _, term, trunc, _ = env.step(hinted)
        done = term or trunc
        steps += 1
    assert steps > 0 and obs[-1] == 0.0 and not env.action_masks().any()


def test_wrapper_rejects_none_and_unknown_prior() -> None:
    single = jericho_env.single_agent("castles")
    with pytest.raises(ValueError, match="needs a prior agent"):
        PriorEnv(single, "none", "castles")
    with pytest.raises(ValueError, match="--prior takes one of none, greedy"):
        PriorEnv(single, "oracle", "castles")


def _fresh_model(game: str, tmp_path: Path, prior: str = "greedy", weight: float = 5.0) -> Path:
    from sb3_contrib import MaskablePPO

    policy, kwargs = build_policy(train.TrainConfig.preset(game)["policy"], game, {}, "32,32", prior, weight)
    env = PriorEnv(jericho_env.single_agent(game), prior, game)
    model = MaskablePPO(policy, env, n_steps=32, batch_size=32, policy_kwargs=kwargs, device="cpu", seed=0)
    path = tmp_path / f"{game}-{prior}.zip"
    spec = PolicySpec(train.TrainConfig.preset(game)["policy"], "32,32", prior, weight)
    save_checkpoint(model, path, CheckpointMeta(game, {}, spec))
    return path


@pytest.mark.parametrize("game", GAMES)
def test_untrained_prior_policy_plays_greedys_moves(game: str, tmp_path: Path) -> None:
    """The bonus (5) dwarfs a fresh network's logits, so the agent's choice is its prior's."""
    path = _fresh_model(game, tmp_path)
    ppo = agents.make("ppo", game, path=str(path), seed=11)
    assert ppo.prior is not None and ppo.prior.name == "greedy"
    greedy = agents.make("greedy", game, seed=11)

    def choose(_: str, obs: dict[str, np.ndarray]) -> int:
        a, g = ppo.act(obs), greedy.act(obs)  # same seed: the same random tie-breaks
        assert a == g
        return a

    env = jericho_env.make(game)
    env.reset(seed=4)
    assert play_out(env, choose) > 5


def test_prior_weight_is_a_trained_parameter(tmp_path: Path) -> None:
    policy, _ = load_policy(_fresh_model("castles", tmp_path))
    names = [n for n, _ in policy.named_parameters()]
    assert "prior_weight" in names
    assert float(policy.prior_weight.detach()) == pytest.approx(5.0)
    obs = torch.zeros(1, policy.observation_space.shape[0])
    obs[0, -1] = encode_prior(3, policy.action_space.n)
    logits = policy.action_logits(obs)[0]
    others = torch.cat([logits[:3], logits[4:]])
    assert float((logits[3] - others.max()).detach()) > 4.0


@pytest.mark.slow
def test_tiny_prior_training_run_plays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    argv = ["castles", "--prior", "greedy", "--out", str(out), "--timesteps", "512", "--n-envs", "2"]
    argv += ["--snapshot-every", "256", "--eval-every", "512", "--eval-deals", "2", "--final-deals", "2"]
    argv += ["--workers", "1", "--net", "16,16", "--quiet"]
    assert train.main(argv) == 0
    assert "## castles: final table" in capsys.readouterr().out
    ppo = agents.make("ppo", "castles", path=str(out / "final.zip"))
    assert ppo.prior is not None
    play_game(jericho_env.make("castles").unwrapped, [ppo, ppo], 1, [1, 1])


def test_bad_prior_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        train.main(["grid", "--prior", "oracle"])
    assert e.value.code == 2
    assert "--prior: invalid choice: 'oracle'" in capsys.readouterr().err


def test_greedy_scores_mark_greedys_choice_and_near_moves() -> None:
    opponent = agents.make("greedy", "grid", seed=1)
    env = PriorEnv(jericho_env.single_agent("grid", opponents=opponent), "greedy-scores", "grid")
    n = env.action_space.n
    base = jericho_env.single_agent("grid").observation_space.shape[0]
    assert env.observation_space.shape == (base + n,)
    greedy = agents.make("greedy", "grid")
    layout = jericho_env.make_rules("grid").layout
    obs, _ = env.reset(seed=5)
    done, steps, passes, levels, differs = False, 0, 0, 0, 0
    while not done:
        mask = env.action_masks()
        scores = obs[-n:]
        assert obs.dtype == np.float32 and scores.max() == pytest.approx(1.0) and scores.min() >= 0.0
        assert not scores[~mask].any(), "only legal moves are scored"
        top = set(np.flatnonzero(scores >= 1.0 - 1e-6).tolist())
        view = {"observation": obs[:-n], "action_mask": mask.astype(np.int8)}
        legal = np.flatnonzero(mask)
        if len(legal) > 1:
            differ = greedy.points_differ(view)
            values = dict(greedy.action_values(view, legal, weigh_pass=differ))
            best = max(values.values())
            assert top == {a for a, v in values.items() if v > best - 1e-6}, "1 marks the best-scoring moves"
            in_chain = layout.view(view["observation"], "in_chain")[0] > 0.5
            if in_chain or differ:
                assert scores[n - 1] > 0, "end, and pass when the points differ, are scored"
            else:
                assert scores[n - 1] == 0, "no pass at level points (an answering pass would end in a draw)"
            levels += not differ
            differs += differ and not in_chain
            assert scores[greedy.act(view)] > 0, "greedy's own move is scored"
        action = min(top)  # a pass (the last action) only when it is the sole best move
        passes += action == n - 1
        obs, _, term, trunc, _ = env.step(action)
        done = term or trunc
        steps += 1
    assert steps > 5 and passes > 0 and levels > 0 and differs > 0 and not obs[-n:].any()


def test_greedy_scores_no_pass_at_level_points() -> None:
    """On the opening table (0 points each) the pass, which would beat every placement's tie-break cost, is not
    scored: the best move is a placement. The same table with our points ahead scores the pass best."""
    env = PriorEnv(jericho_env.single_agent("grid", seat=0), "greedy-scores", "grid")
    n = env.action_space.n
    layout = jericho_env.make_rules("grid").layout
    first = 0
    for seed in range(8):
        obs, _ = env.reset(seed=seed)
        if layout.view(obs[:-n], "table_occupied").sum() == 1:  # the learner moves first: only the base is down
            first += 1
            scores = obs[-n:]
            assert scores[-1] == 0.0 and scores[:-1].max() == 1.0, "level points: a placement, not a pass"
            ahead = obs[:-n].copy()
            layout.view(ahead, "own_score")[:] = 10 / 340
            view = {"observation": ahead, "action_mask": env.action_masks().astype(np.int8)}
            scores = env.prior.agent.scores(view)
            assert scores[-1] == 1.0 and scores[:-1].max() < 1.0, "ahead: passing is the one best move"
            assert scores[:-1].max() > 0.9, "placements beside the base cost only their tie-breaks"
    assert first > 0


@pytest.mark.parametrize(("game", "seed"), [("grid", 2), ("walls", 3)])
def test_untrained_greedy_scores_policy_plays_a_best_move_by_greedys_scores(
    game: str, seed: int, tmp_path: Path
) -> None:
    path = _fresh_model(game, tmp_path, "greedy-scores", weight=50.0)
    ppo = agents.make("ppo", game, path=str(path))
    greedy = agents.make("greedy", game)

    def choose(agent_id: str, obs: dict[str, np.ndarray]) -> int:
        if game == "grid" and agent_id != env.possible_agents[0]:  # two untrained grid agents would both pass
            return greedy.act(obs)
        legal = np.flatnonzero(obs["action_mask"])
        a = ppo.act(obs)
        if len(legal) > 1:
            weigh = {"weigh_pass": greedy.points_differ(obs)} if game == "grid" else {}
            values = dict(greedy.action_values(obs, legal, **weigh))
            assert values[a] == pytest.approx(max(values.values()), abs=1e-6), "a best move by greedy's scores"
        return a

    env = jericho_env.make(game)
    env.reset(seed=seed)
    assert play_out(env, choose) > 5


def test_walls_greedy_scores_follow_greedys_own_simulation() -> None:
    """Walls: every legal action is scored, exp(value - best) of greedy's ``action_values``; greedy's move gets 1."""
    greedy = agents.make("greedy", "walls")
    phases: set[int] = set()

    def choose(agent_id: str, obs: dict[str, np.ndarray]) -> int:
        legal = np.flatnonzero(obs["action_mask"])
        scores = greedy.scores(obs)
        assert set(np.flatnonzero(scores)) == set(legal.tolist()), "exactly the legal actions are scored"
        assert scores[greedy.act(obs)] == 1.0
        if len(legal) > 1:
            values = dict(greedy.action_values(obs, legal))
            best = max(values.values())
            for a, v in values.items():
                assert scores[a] == pytest.approx(np.exp(v - best), rel=1e-5)
            phases.add(int(obs["observation"][greedy.sl["phase"]].argmax()))
        return int(legal[(len(phases) * 7 + int(scores.sum() * 10)) % len(legal)])  # varied, not greedy's, moves

    env = jericho_env.make("walls")
    env.reset(seed=4)
    assert play_out(env, choose) > 30
    assert len(phases) >= 3, "the opening, its supply card and play are all covered"


def test_greedy_scores_is_for_grid_and_walls_only(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="greedy-scores is for grid, walls only"):
        PriorEnv(jericho_env.single_agent("castles"), "greedy-scores", "castles")
    with pytest.raises(SystemExit) as e:
        train.main(["castles", "--prior", "greedy-scores"])
    assert (
        e.value.code == 2 and "--prior greedy-scores is for grid, walls only, not 'castles'" in capsys.readouterr().err
    )


@pytest.mark.slow
def test_tiny_greedy_scores_training_run_plays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    argv = ["grid", "--prior", "greedy-scores", "--out", str(out), "--timesteps", "256", "--n-envs", "2"]
    argv += ["--snapshot-every", "128", "--eval-every", "256", "--eval-deals", "1", "--final-deals", "1"]
    argv += ["--workers", "1", "--quiet"]
    assert train.main(argv) == 0
    printed = capsys.readouterr().out
    assert "## grid: final table" in printed and "| **untrained** |" in printed, "the starting policy is in the table"
    ppo = agents.make("ppo", "grid", path=str(out / "final.zip"))
    assert ppo.prior_name == "greedy-scores"
    assert agents.make("ppo", "grid", path=str(out / "checkpoints" / "initial.zip")).prior_name == "greedy-scores"
    play_game(jericho_env.make("grid").unwrapped, [ppo, ppo], 1, [1, 1])
