"""Expert iteration: the search with a network prior, the exit agents, the loop end to end, resume, backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import agents
from agents.checkpoint import save_checkpoint
from agents.exit import NetworkEvaluator, network_prior
from agents.search.puct import PUCTSearch
from experiments import exit as exit_cli
from experiments.play.tournament import play_game
from experiments.training.exit.play import SearchSettings, generate, network_payload
from jericho_env.agent_plugins import choose_action
from jericho_env.envs.aec import JerichoEnv

GAMES = [("castles", {}), ("grid", {"board_size": 9}), ("walls", {"num_players": 3})]
TINY = ["--iterations", "1", "--games", "4", "--games-at-once", "2", "--simulations", "6", "--updates", "3"]
TINY += ["--batch-size", "32", "--eval-deals", "1", "--final-deals", "1", "--final-simulations", "4", "--workers", "1"]
TINY += ["--quiet"]


def fresh_network(game: str, options: dict[str, Any], start: str, folder: Path) -> Path:
    """A new network of the game's preset (``--start prior`` or ``scratch``) saved as a checkpoint."""
    cfg = exit_cli.make_exit_config(game, options, start=start)
    policy, spec = exit_cli.first_network(cfg, "")
    path = folder / f"{game}-{start}.zip"
    save_checkpoint(exit_cli._Model(policy, 0, 0), path, exit_cli.network_meta(cfg, spec, 0))
    return path


@pytest.fixture(scope="module")
def networks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("nets")
    return {game: fresh_network(game, options, "prior", folder) for game, options in GAMES}


def _mid_game(game: str, options: dict[str, Any], steps: int, seed: int) -> JerichoEnv:
    env = JerichoEnv(game, **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if env.rules.is_terminal(env.state):
            break
        legal = env.rules.legal_actions(env.state)
        env.step(legal[int(rng.integers(len(legal)))])
    return env


@pytest.mark.parametrize(("game", "options"), GAMES)
def test_exit_agents_play_whole_games_with_legal_moves(
    game: str, options: dict[str, Any], networks: dict[str, Path]
) -> None:
    env = JerichoEnv(game, **options)
    n = env.rules.info.num_players
    path = str(networks[game])
    seats = [
        agents.make("exit-search", game, path=path, simulations=8, **options),
        agents.make("exit", game, path=path, **options),
    ]
    seats += [agents.make("random", game, **options) for _ in range(n - 2)]
    returns, steps = play_game(env, seats, env_seed=4, agent_seeds=list(range(n)))
    assert env.rules.is_terminal(env.state) and steps > 0 and len(returns) == n


def _hidden_twins(game: str, options: dict[str, Any]) -> Any:
    """Mid-game envs with a choice to make, each with a twin that differs only in cards the mover cannot see."""
    for seed in range(4):
        env = _mid_game(game, options, 9 + seed, seed=30 + seed)
        rules = env.rules
        if rules.is_terminal(env.state) or len(rules.legal_actions(env.state)) < 2:
            continue
        seat = rules.current_player(env.state)
        twin = JerichoEnv(game, **options)
        twin.reset(seed=30 + seed)
        twin.state = rules.determinize(env.state, seat, np.random.default_rng(77 + seed))
        twin.agent_selection, twin._mask = env.agent_selection, None
        if rules.to_dict(twin.state) != rules.to_dict(env.state):
            yield env, twin, seat


@pytest.mark.parametrize(("game", "options"), GAMES)
def test_exit_search_choice_is_unchanged_when_hidden_cards_are_swapped(
    game: str, options: dict[str, Any], networks: dict[str, Path]
) -> None:
    """Two envs that differ only in cards the mover cannot see: the same view, the same choice (same seeds)."""
    compared = 0
    for env, twin, seat in _hidden_twins(game, options):
        choices, visits = [], []
        for e in (env, twin):
            e._view_rng = np.random.default_rng(5)
            agent = agents.make("exit-search", game, path=str(networks[game]), simulations=12, seed=2, **options)
            choices.append(choose_action(agent, e, e.possible_agents[seat]))
            visits.append(agent.last.visits.tolist())
        assert choices[0] == choices[1] and visits[0] == visits[1]
        compared += 1
    assert compared >= 2


@pytest.mark.parametrize(("game", "options"), GAMES)
def test_puct_visits_add_up_and_its_policy_covers_only_legal_actions(
    game: str, options: dict[str, Any], networks: dict[str, Path]
) -> None:
    from agents.checkpoint import load_policy

    policy, _ = load_policy(networks[game])
    rules = JerichoEnv(game, **options).rules
    evaluator = NetworkEvaluator(policy, network_prior(policy, game, options))
    rows = "mover" if rules.info.num_players == 2 else "all"
    search = PUCTSearch(rules, evaluator, 20, 1.5, rows, np.random.default_rng(0), 0.5, 0.25)
    states = [_mid_game(game, options, 6 + k, seed=k).state for k in range(3)]
    states = [s for s in states if not rules.is_terminal(s)]
    results = search.search(states, [rules.current_player(s) for s in states])
    for s, res in zip(states, results, strict=True):
        assert res.legal == rules.legal_actions(s)
        if len(res.legal) > 1:
            assert res.visits.sum() == 20
        pi = res.policy(rules.info.num_actions)
        assert np.isclose(pi.sum(), 1.0) and set(np.flatnonzero(pi)) <= set(res.legal)
        assert res.best() in res.legal


@pytest.mark.parametrize(  # the toy game: the command's smoke run in the fast tier
    ("game", "options"), [*[pytest.param(*g, marks=pytest.mark.slow) for g in GAMES], ("toy", {})]
)
def test_the_loop_runs_end_to_end_on_a_tiny_budget(game: str, options: dict[str, Any], tmp_path: Path) -> None:
    start = "scratch" if game == "toy" else "prior"
    ppo = fresh_network(game, options, start, tmp_path)
    opts = [x for k, v in options.items() for x in ("--option", f"{k}={v}")]
    out = tmp_path / "run"
    argv = [game, "--start", start, "--ppo", str(ppo), "--out", str(out), *opts, *TINY]
    assert exit_cli.main(argv) == 0
    state = json.loads((out / "exit.json").read_text())
    assert state["iterations_done"] == 1 and state["history"][0]["rows"] > 0
    assert set(state["history"][0]["evals"]) >= {"previous", "ppo"}
    assert (out / "final.zip").is_file() and (out / "tournament" / "results.json").is_file()
    labels = json.loads((out / "tournament" / "results.json").read_text())["agents"]
    assert {"ismcts", "ppo", "exit", "exit-search"} <= set(labels)
    agent = agents.make("exit", game, path=str(out / "final.zip"), **options)  # the safe format: tensors only
    assert agent.meta["training"]["algorithm"] == "exit"


def test_advantage_targets_are_the_improved_logits_centred_over_the_legal_actions() -> None:
    from agents.search.rollout_search import RolloutResult
    from experiments.training.exit.play import advantage_target

    prior, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, -0.4, 1.0])
    z = np.log(prior) + q / 0.5
    res = RolloutResult([1, 4, 6], q, np.exp(z) / np.exp(z).sum(), np.full(3, 8), prior)
    t = advantage_target(res, 8, 0.5)
    assert np.allclose(t[[1, 4, 6]], z - z.mean(), atol=1e-6)
    assert np.all(t[[0, 2, 3, 5, 7]] == 0) and abs(float(t.sum())) < 1e-5
    assert int(np.argmax(np.where(t != 0, t, -np.inf))) == res.best() == 6  # the expert's move leads


def test_advantage_loss_is_the_squared_error_of_centred_logits_and_ignores_a_shift(
    networks: dict[str, Path],
) -> None:
    import torch

    from agents.checkpoint import load_policy
    from agents.exit import logits_and_values
    from experiments.training.exit.learn import losses

    policy, _ = load_policy(networks["castles"], game_id="castles")
    env = _mid_game("castles", {}, 5, 3)
    obs = np.stack([env.rules.observe(env.state, env.rules.current_player(env.state))] * 2).astype(np.float32)
    masks = np.stack([env.rules.legal_mask(env.state).astype(bool)] * 2)
    features = torch.as_tensor(NetworkEvaluator(policy, network_prior(policy, "castles", {})).features(obs, masks))
    with torch.no_grad():
        logits, _, _ = logits_and_values(policy, features, masks)
    lg = logits.numpy().astype(np.float64)
    legal = masks[0]
    centred = np.where(legal, lg - lg[:, legal].mean(axis=1, keepdims=True), 0.0)
    has_policy = torch.ones(2, dtype=torch.bool)
    values = torch.zeros(2)
    for shift in (0.0, 1.5):  # the target: the network's own centred logits, one legal action moved by `shift`
        target = centred.copy()
        a = int(np.flatnonzero(legal)[0])
        target[:, a] -= shift
        target = np.where(legal, target - target[:, legal].mean(axis=1, keepdims=True), 0.0)
        with torch.no_grad():
            p_loss, _ = losses(policy, features, masks, torch.as_tensor(target, dtype=torch.float32), values,
                               has_policy, "advantage")  # fmt: skip
        err = centred - target
        assert float(p_loss) == pytest.approx((err[:, legal] ** 2).mean(), abs=1e-5)
        assert (float(p_loss) == pytest.approx(0.0, abs=1e-8)) == (shift == 0.0)
    with torch.no_grad():  # adding a constant to every target logit changes nothing
        base, _ = losses(policy, features, masks, torch.as_tensor(target, dtype=torch.float32), values, has_policy,
                         "advantage")  # fmt: skip
        moved = torch.as_tensor(np.where(legal, target + 3.0, 0.0), dtype=torch.float32)
        moved_loss, _ = losses(policy, features, masks, moved, values, has_policy, "advantage")
    assert float(moved_loss) == pytest.approx(float(base), abs=1e-5)


@pytest.mark.slow
def test_the_loop_learns_advantage_targets_from_the_rollouts_expert(tmp_path: Path) -> None:
    ppo = fresh_network("castles", {}, "prior", tmp_path)
    out = tmp_path / "run"
    argv = ["castles", "--start", "prior", "--ppo", str(ppo), "--out", str(out), *TINY]
    argv += ["--expert", "rollouts", "--expert-simulations", "3", "--target", "advantage"]
    assert exit_cli.main(argv) == 0
    assert json.loads((out / "config.json").read_text())["target"] == "advantage"
    buffer = np.load(out / "buffer_1.npz", allow_pickle=False)
    rows = buffer["policy"]
    targets, masks = buffer["targets"][rows], buffer["masks"][rows]
    assert len(targets) and np.all(targets[~masks] == 0)  # nothing off the legal actions
    assert np.allclose(targets.sum(axis=1), 0.0, atol=1e-4)  # centred over the legal actions
    assert np.any(np.abs(targets) > 0)  # the rollouts' values reached the targets
    history = json.loads((out / "exit.json").read_text())["history"]
    assert np.isfinite(history[0]["policy_loss"])


@pytest.mark.slow
@pytest.mark.parametrize("where", ["first", "games", "evaluation"])
def test_resume_after_a_kill_gives_the_same_network_as_an_unbroken_run(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    from agents.checkpoint import _weights
    from experiments.training.exit import play as exit_play

    ppo = fresh_network("castles", {}, "scratch", tmp_path)
    two = [*TINY[:1], "2", *TINY[2:]]
    common = ["castles", "--start", "scratch", "--ppo", str(ppo), *two]
    assert exit_cli.main([*common, "--out", str(tmp_path / "whole")]) == 0
    # the same run killed in its second iteration: while playing its games, or while evaluating its network
    calls = {"n": 0}
    real = exit_play.generate if where == "games" else exit_cli.evaluate_iteration

    def killed(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(
        exit_play if where == "games" else exit_cli, "generate" if where == "games" else "evaluate_iteration", killed
    )
    assert exit_cli.main([*common, "--out", str(tmp_path / "cut")]) == 130
    monkeypatch.undo()
    done = json.loads((tmp_path / "cut" / "exit.json").read_text())["iterations_done"]
    assert done == (1 if where == "games" else 2)
    assert exit_cli.main(["castles", "--resume", str(tmp_path / "cut"), "--quiet"]) == 0
    a = _weights(tmp_path / "whole" / "final.zip")["policy"]
    b = _weights(tmp_path / "cut" / "final.zip")["policy"]
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_local_workers_give_the_rows_of_one_process(networks: dict[str, Path]) -> None:
    payload = _payload("castles", {}, networks["castles"])
    tasks = [[1, 2], [3], [4, 5]]
    one = generate(payload, tasks, exit_cli.LOCAL, workers=1)
    two = generate(payload, tasks, exit_cli.LOCAL, workers=2)
    for field in ("features", "masks", "targets", "values", "policy"):
        assert np.array_equal(getattr(one, field), getattr(two, field))
    assert one.games == 5 and len(one) > 5


@pytest.mark.slow
@pytest.mark.ray
def test_ray_and_local_give_the_same_rows_for_a_seed(networks: dict[str, Path]) -> None:
    from experiments.play.backends import Backend

    payload = _payload("castles", {}, networks["castles"])
    tasks = [[11, 12], [13, 14]]
    local = generate(payload, tasks, exit_cli.LOCAL, workers=1)
    ray = generate(payload, tasks, Backend("ray"), workers=2)
    for field in ("features", "masks", "targets", "values", "policy"):
        assert np.array_equal(getattr(local, field), getattr(ray, field))


def _payload(game: str, options: dict[str, Any], path: Path) -> dict[str, Any]:
    search = SearchSettings(6, 1.5, 0.5, 0.25, 2, "mover")
    return {"game_id": game, "options": options, "search": search.__dict__, "network": network_payload(path)}


@pytest.mark.parametrize(
    ("flags", "match"),
    [
        (["--simulations", "0"], "--simulations"),
        (["--c-puct", "nan"], "--c-puct"),
        (["--dirichlet-fraction", "1.5"], "dirichlet-fraction"),
        (["--start", "magic"], "--start"),
        (["--temperature-moves", "-1"], "temperature-moves"),
        (["--seed", "-1"], "--seed"),
        (["--expert", "magic"], "--expert"),
        (["--expert-simulations", "0"], "--expert-simulations"),
        (["--target", "advantage"], "--expert rollouts"),
    ],
)
def test_bad_flags_are_named_before_any_work(flags: list[str], match: str, tmp_path: Path, capsys: Any) -> None:
    with pytest.raises(SystemExit) as exited:
        exit_cli.main(["castles", "--out", str(tmp_path / "x"), *flags])
    assert exited.value.code == 2
    assert match in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("search", ["puct", "rollouts"])
@pytest.mark.parametrize(("game", "options"), GAMES)
def test_exit_search_batch_policy_searches_rows_at_once_with_legal_moves(
    game: str, options: dict[str, Any], search: str, networks: dict[str, Path]
) -> None:
    """The tournament's hook (``batch_policy``): legal moves for many rows; one row plays as ``act`` does."""
    budget = 10 if search == "puct" else 2
    agent = agents.make("exit-search", game, path=str(networks[game]), simulations=budget, search=search, **options)
    envs = [_mid_game(game, options, steps, seed) for seed, steps in enumerate((0, 3, 7, 11, 15))]
    envs = [env for env in envs if not env.rules.is_terminal(env.state)]
    views = [env.information_view(env.agent_selection) for env in envs]
    masks = np.stack([env.observe(env.agent_selection)["action_mask"].astype(bool) for env in envs])
    policy = agent.batch_policy()
    with pytest.raises(ValueError, match="information view"):
        policy(None, masks)
    policy.observe_views(views)
    actions = policy(None, masks)
    assert actions.shape == (len(envs),) and all(masks[j][a] for j, a in enumerate(actions))
    agent.reset(5)
    policy.observe_views(views[-1:])
    batched = policy(None, masks[-1:])[0]
    agent.reset(5)
    env = envs[-1]
    agent.observe_view(views[-1])
    assert batched == agent.act(env.observe(env.agent_selection))


@pytest.mark.parametrize(("game", "options"), GAMES)
def test_rollout_search_values_legal_actions_and_reads_only_the_view(
    game: str, options: dict[str, Any], networks: dict[str, Path]
) -> None:
    """The policy-rollout expert: an improved policy over the legal actions only, values within the returns,
    and the same result from two envs that differ only in cards the mover cannot see (same view, same seeds)."""
    from agents.checkpoint import load_policy
    from agents.search.rollout_search import PolicyRolloutSearch

    policy, _ = load_policy(networks[game])
    evaluator = NetworkEvaluator(policy, network_prior(policy, game, options))
    compared = 0
    for env, twin, seat in _hidden_twins(game, options):
        rules = env.rules
        results = []
        for e in (env, twin):
            e._view_rng = np.random.default_rng(5)
            view = e.information_view(e.possible_agents[seat])
            search = PolicyRolloutSearch(rules, evaluator, 3, 0.1, np.random.default_rng(9))
            (res,) = search.search([view], [seat])
            results.append(res)
            assert res.legal == rules.legal_actions(view) and res.best() in res.legal
            pi = res.policy(rules.info.num_actions)
            assert np.isclose(pi.sum(), 1.0) and set(np.flatnonzero(pi)) <= set(res.legal)
            assert np.all(np.abs(res.q) <= 1.0) and (res.visits == 3).all()
        assert results[0].q.tolist() == results[1].q.tolist() and results[0].best() == results[1].best()
        compared += 1
    assert compared >= 2


class FlatPrior:
    """A rollout search's evaluator without a network: a uniform prior over the legal actions, values 0 (the
    search's rollouts then need another mover: a patched ``_moves`` or a ``player``)."""

    policy = None

    def __call__(self, obs: np.ndarray, masks: np.ndarray, movers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return masks / masks.sum(axis=1, keepdims=True), np.zeros(len(masks), np.float32)


def test_rollout_search_prefers_what_its_rollouts_win() -> None:
    """Q is the mean return of the rollouts; with a flat prior the improved policy follows Q."""
    from agents.search.rollout_search import PolicyRolloutSearch

    rules = JerichoEnv("castles").rules
    search = PolicyRolloutSearch(rules, FlatPrior(), 4, 0.1, np.random.default_rng(0))
    search._moves = lambda obs, masks: np.argmax(masks, axis=1).astype(np.int64)  # type: ignore[method-assign]
    state = _mid_game("castles", {}, 5, seed=3).state
    (res,) = search.search([state], [rules.current_player(state)])
    assert len(res.legal) > 1
    order = np.argsort(-res.q, kind="stable")
    assert res.best() == res.legal[int(order[0])]
    assert np.all(np.diff(res.improved[order]) <= 1e-12)  # the improved policy ranks actions as Q does


def test_rollout_search_plays_a_fixed_agent_in_the_other_seats() -> None:
    """``fixed``: the batch policy given plays every seat but the searching one in the rollouts, the network the
    searching seat's moves; a fixed agent that plays as the network does gives the network's own values."""
    from agents.search.rollout_search import PolicyRolloutSearch

    rules = JerichoEnv("castles").rules
    asked = {"fixed": 0, "network": 0}

    def moves(who: str, last: bool) -> Any:
        def play(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
            asked[who] += len(masks)
            first = np.argmax(masks[:, ::-1] if last else masks, axis=1)
            return (masks.shape[1] - 1 - first if last else first).astype(np.int64)

        return play

    def search(fixed: Any) -> Any:
        s = PolicyRolloutSearch(rules, FlatPrior(), 4, 0.1, np.random.default_rng(0), fixed=fixed)
        s._moves = moves("network", last=False)  # type: ignore[method-assign]
        return s

    states = [_mid_game("castles", {}, k, seed=3 + k).state for k in (5, 8)]
    movers = [rules.current_player(s) for s in states]
    given = search(moves("fixed", last=True))
    results = given.search(states, movers)
    assert asked["fixed"] > 0 and asked["network"] > 0 and sum(asked.values()) == given.rows_played
    alone = search(None).search(states, movers)
    assert any(a.q.tolist() != b.q.tolist() for a, b in zip(results, alone, strict=True))
    same = search(moves("fixed", last=False)).search(states, movers)
    for a, b in zip(same, alone, strict=True):
        assert len(a.legal) > 1 and a.q.tolist() == b.q.tolist() and a.best() == b.best()


@pytest.mark.parametrize(("game", "options"), GAMES)
def test_exit_search_with_rollouts_plays_whole_games_with_legal_moves(
    game: str, options: dict[str, Any], networks: dict[str, Path]
) -> None:
    env = JerichoEnv(game, **options)
    n = env.rules.info.num_players
    spec = f"exit-search=path={networks[game]},search=rollouts,simulations=2"
    from agents.registry import parse_spec

    _, name, kwargs = parse_spec(spec)
    seats = [agents.make(name, game, **kwargs, **options)] + [
        agents.make("random", game, **options) for _ in range(n - 1)
    ]
    returns, steps = play_game(env, seats, env_seed=6, agent_seeds=list(range(n)))
    assert env.rules.is_terminal(env.state) and steps > 0 and len(returns) == n
    assert type(seats[0].search).__name__ == "PolicyRolloutSearch"
