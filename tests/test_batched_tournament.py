"""The tournament's batched game loop: the sequential loop's deals and seats, one call per agent and round,
results independent of workers and engine, illegal answers named, replays that replay."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import jericho_env
from agents.base import BaseAgent
from agents.batch import AgentBatchPolicy
from experiments import evaluate as evaluate_cli
from experiments.play.batched_games import BatchedWorker, BatchTask, make_batch_tasks
from experiments.play.tournament import AgentSpec, GameRecord, make_tasks, record_games, run_games
from jericho_env.core.rules import IllegalActionError
from jericho_env.replay import read_replays

RANDOM_GREEDY = [AgentSpec("random", "random"), AgentSpec("greedy", "greedy")]


def layout(records: list[GameRecord]) -> list[tuple[Any, ...]]:
    """What the two loops must share: who played which deal in which seats, in which order."""
    return [(r.focal, r.opponent, r.deal, r.arrangement, r.env_seed, r.seats) for r in records]


@pytest.mark.parametrize("game", [*jericho_env.GAME_IDS, "toy"])
def test_batched_loop_plays_the_sequential_deals_seats_and_labels(game: str) -> None:
    specs = RANDOM_GREEDY if game != "toy" else [AgentSpec("r1", "random"), AgentSpec("r2", "random")]
    sequential = run_games(game, specs, deals=5, seed=4, loop="sequential")
    batched = run_games(game, specs, deals=5, seed=4, batch=2)
    assert layout(batched) == layout(sequential)
    n = jericho_env.make_rules(game).info.num_players
    assert len(batched) == len(make_tasks(2, n, 5)) * n
    assert all(len(r.returns) == n and r.length > 0 for r in batched)


def tiny_network(game: str, prior: str = "none") -> Any:
    """An untrained MaskablePPO of 16x16 units, on ``prior``'s hint; its logits far apart (weights x100)."""
    import torch
    from sb3_contrib import MaskablePPO

    from agents.checkpoint import CheckpointMeta, PolicySpec, attach_meta
    from tests.prior_env import PriorEnv

    spec = PolicySpec("mlp", "16,16", prior=prior)
    policy, kwargs = spec.build(game, {})
    env = jericho_env.single_agent(game)
    if prior != "none":
        env = PriorEnv(env, prior, game)
    model = MaskablePPO(policy, env, n_steps=64, batch_size=32, n_epochs=1, policy_kwargs=kwargs, seed=0, device="cpu")
    with torch.no_grad():  # so that the most probable action never hinges on float rounding
        model.policy.action_net.weight.mul_(100.0)
    hyper = {"learning_rate": 3e-4, "lr_schedule": "constant", "seed": 0, "n_steps": 64, "batch_size": 32}
    hyper.update(n_epochs=1, gamma=0.99, gae_lambda=0.95, ent_coef=0.01)
    return attach_meta(model, CheckpointMeta(game, {}, spec, {"hyperparameters": hyper}))


@pytest.fixture(scope="module")
def tiny_ppo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A tiny untrained PPO checkpoint per game: castles without a prior, walls on greedy's scores."""
    from agents.checkpoint import save_checkpoint

    folder = tmp_path_factory.mktemp("ppo")
    priors = {"castles": "none", "walls": "greedy-scores"}
    return {game: save_checkpoint(tiny_network(game, prior), folder / f"{game}.zip") for game, prior in priors.items()}


@pytest.mark.parametrize("game", ["castles", "walls"])
def test_agents_that_draw_nothing_play_the_same_games_in_both_loops(game: str, tiny_ppo: dict[str, Path]) -> None:
    # castles' and walls' greedy break no tie at random and the ppo agent takes its most probable action:
    # with nothing drawn, the batched loop must play the sequential loop's games move for move
    specs = [AgentSpec("greedy", "greedy"), AgentSpec("ppo", "ppo", {"path": str(tiny_ppo[game])})]
    sequential = record_games(game, specs, 3, {}, 4)
    batched = record_games(game, specs, 3, {}, 4, loop="batched", batch=3, total_deals=4)
    assert [rec for rec, _ in batched] == [rec for rec, _ in sequential]
    assert [actions for _, actions in batched] == [actions for _, actions in sequential]


def test_results_do_not_depend_on_the_number_of_workers() -> None:
    specs = [AgentSpec("r1", "random"), AgentSpec("greedy", "greedy"), AgentSpec("r3", "random")]
    one = run_games("castles", specs, deals=7, seed=7, workers=1, batch=3)
    two = run_games("castles", specs, deals=7, seed=7, workers=2, batch=3)
    again = run_games("castles", specs, deals=7, seed=7, workers=1, batch=3)
    other = run_games("castles", specs, deals=7, seed=8, workers=1, batch=3)
    assert one == two == again
    assert one != other


def test_the_compiled_and_python_engines_play_the_same_games() -> None:
    # the toy game has compiled rules (tests/toy_batched.py) and no compiled determinize: the same games
    specs = [AgentSpec("r1", "random"), AgentSpec("r2", "random")]
    compiled, python = BatchedWorker("toy", {}, specs, 5), BatchedWorker("toy", {}, specs, 5, engine="python")
    assert compiled.game.compiled and not python.game.compiled
    for task in make_batch_tasks(2, 2, 9, 4):
        assert compiled.run(task) == python.run(task)


@pytest.mark.parametrize("engine", ["auto", "python"])
def test_searching_agents_get_each_games_information_view(engine: str) -> None:
    # ismcts refuses a view that does not match the observation it is asked about (a wrong game or seat);
    # castles' compiled rules redeal the views themselves ("auto"), the Python engine through rules.determinize
    specs = [AgentSpec("ismcts", "ismcts", {"simulations": 8}), AgentSpec("random", "random")]
    worker = BatchedWorker("castles", {}, specs, 2, engine=engine)
    for arrangement in (0, 1):
        assert len(worker.run(BatchTask(0, 1, arrangement, 0, 3))) == 3


class ViewLog(BaseAgent):
    """Plays the first legal action and logs every information view it is handed (as ``rules.to_dict``)."""

    name = "view-log"
    seen: list[str] = []

    def observe_view(self, view: Any) -> None:
        rules = jericho_env.make_rules(self.game_id)
        ViewLog.seen.append(json.dumps(rules.to_dict(view), sort_keys=True))

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_on_the_python_rules_each_game_draws_its_views_as_the_aec_env_does(monkeypatch: pytest.MonkeyPatch) -> None:
    from agents import registry

    monkeypatch.setitem(registry._AGENTS, "view-log", ("tests.test_batched_tournament", "ViewLog"))
    specs = [AgentSpec("log", "view-log"), AgentSpec("greedy", "greedy")]  # nothing drawn but the views
    ViewLog.seen = []
    sequential = run_games("castles", specs, deals=3, seed=6, loop="sequential")
    in_env, ViewLog.seen = sorted(ViewLog.seen), []
    worker = BatchedWorker("castles", {}, specs, 6, engine="python")
    batched = [rec for task in make_batch_tasks(2, 2, 3, 2) for rec in worker.run(task)]
    assert sorted(map(str, batched)) == sorted(map(str, sequential))
    assert sorted(ViewLog.seen) == in_env and len(in_env) > 20


# --------------------------------------------------------------------------- agents seen from the batch side
class _Counting:
    """A batch policy that plays the first legal action and remembers the size of every call."""

    name = "first-legal"
    uses_observation = True

    def __init__(self, bad: bool) -> None:
        self.bad = bad
        self.calls: list[int] = []

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        self.calls.append(len(masks))
        actions = masks.argmax(axis=1)
        if self.bad and len(self.calls) == 3:
            actions[-1] = int(np.flatnonzero(~masks[-1])[0])  # an action its mask forbids
        return actions


class HookAgent(BaseAgent):
    """An agent that brings its own batch policy (the hook for searches over many roots)."""

    name = "hook"
    made: list[_Counting] = []

    def __init__(self, game_id: str, bad: bool = False, seed: int | None = None, **options: Any) -> None:
        super().__init__(game_id, seed, **options)
        self.bad = bad

    def batch_policy(self) -> _Counting:
        policy = _Counting(self.bad)
        HookAgent.made.append(policy)
        return policy

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


@pytest.fixture
def hook_agent(monkeypatch: pytest.MonkeyPatch) -> type[HookAgent]:
    from agents import registry

    monkeypatch.setitem(registry._AGENTS, "hook", ("tests.test_batched_tournament", "HookAgent"))
    HookAgent.made = []
    return HookAgent


def test_an_agents_own_batch_policy_is_asked_once_per_round_for_all_its_games(hook_agent: type[HookAgent]) -> None:
    specs = [AgentSpec("hook", "hook"), AgentSpec("random", "random")]
    worker = BatchedWorker("castles", {}, specs, 0)
    kept: list[list[int]] = []
    records = worker.run(BatchTask(0, 1, 1, 0, 6), kept)  # arrangement 1: the hook agent in seat 1
    (policy,) = hook_agent.made
    # round k is every game's move k: the hook is asked once with every game where seat 1 is then to move
    rules = jericho_env.make_rules("castles")
    to_move = np.zeros((len(records), max(r.length for r in records)), dtype=bool)
    for g, (rec, actions) in enumerate(zip(records, kept, strict=True)):
        state = rules.initial_state(np.random.default_rng(rec.env_seed))
        for k, a in enumerate(actions):
            to_move[g, k] = rules.current_player(state) == 1
            rules.apply(state, a)
    per_round = to_move.sum(axis=0)
    assert policy.calls == per_round[per_round > 0].tolist() and max(policy.calls) > 1


def test_a_batch_policy_answering_an_illegal_action_is_named(hook_agent: type[HookAgent]) -> None:
    specs = [AgentSpec("mine", "hook", {"bad": True}), AgentSpec("random", "random")]
    with pytest.raises(IllegalActionError) as e:
        run_games("castles", specs, deals=4, seed=0, batch=4)
    assert "'mine' (hook, batch policy first-legal) chose action" in str(e.value)
    with pytest.raises(IllegalActionError) as e:  # deals 4-7, the hook in seat 1: the game named is the deal's
        BatchedWorker("castles", {}, specs, 0).run(BatchTask(0, 1, 1, 4, 8))
    found = re.search(
        r"which is not legal for seat 1 in deal (\d), arrangement 1 of mine vs random; legal: \[\d", str(e.value)
    )
    assert found is not None and 4 <= int(found.group(1)) <= 7


def test_each_agent_gets_its_batch_policy(tiny_ppo: dict[str, Path]) -> None:
    from agents.batch import NetworkBatchPolicy, RandomBatchPolicy
    from agents.greedy.walls import BatchGreedyWalls
    from experiments.play.batched_games import BatchPlayer

    def policy(game: str, name: str, **kwargs: Any) -> Any:
        return BatchPlayer(AgentSpec(name, name, kwargs), game, {}).policy(1)

    assert isinstance(policy("castles", "random"), RandomBatchPolicy)
    assert isinstance(policy("walls", "greedy"), BatchGreedyWalls)
    from agents.greedy.castles import BatchGreedyCastles
    from jericho_env.core.kernels import NUMBA

    castles_greedy = policy("castles", "greedy")  # compiled over the batch where Numba is, else row by row
    assert isinstance(castles_greedy, BatchGreedyCastles if NUMBA else AgentBatchPolicy)
    ismcts = policy("castles", "ismcts", simulations=4)
    assert isinstance(ismcts, AgentBatchPolicy) and ismcts.uses_views
    network = policy("walls", "ppo", path=str(tiny_ppo["walls"]))
    assert isinstance(network, NetworkBatchPolicy) and network.deterministic and network.hint is not None
    sampling = policy("castles", "ppo", path=str(tiny_ppo["castles"]), deterministic=False)
    assert isinstance(sampling, NetworkBatchPolicy) and not sampling.deterministic and sampling.hint is None


# ------------------------------------------------------------------------------------------ command line
@pytest.mark.parametrize("game", ["castles", "walls"])
def test_replays_of_a_batched_tournament_replay_their_records(game: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = [game, "--agents", "random", "greedy", "--deals", "5", "--batch", "3", "--record", "4", "--out", str(out)]
    assert evaluate_cli.main([*argv, "--no-plot", "--quiet"]) == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["config"]["loop"] == "batched" and results["config"]["batch"] == 3
    games = {(g["focal"], g["opponent"], g["deal"], g["arrangement"]): g for g in results["games"]}
    replays = read_replays(out / "replays.jsonl")
    n = jericho_env.make_rules(game).info.num_players
    assert len(replays) == len(make_tasks(2, n, 4)) * n  # deals 0-3, the second chunk cut at deal 4
    for replay in replays:
        info = replay.info
        game_record = games[(info["focal"], info["opponent"], info["deal"], info["arrangement"])]
        assert replay.states()  # every action legal, ending with the recorded returns
        assert list(replay.returns or ()) == game_record["returns"] and len(replay.actions) == game_record["length"]


def test_sequential_flag_plays_the_sequential_loop(tmp_path: Path) -> None:
    argv = ["castles", "--agents", "random", "greedy", "--deals", "3", "--no-plot", "--quiet"]
    assert evaluate_cli.main([*argv, "--out", str(tmp_path / "s"), "--sequential"]) == 0
    config = json.loads((tmp_path / "s" / "results.json").read_text(encoding="utf-8"))["config"]
    assert config["loop"] == "sequential" and "batch" not in config
    specs = [AgentSpec(**a) for a in config["agents"]]
    want = run_games("castles", specs, 3, 0, loop="sequential")
    games = json.loads((tmp_path / "s" / "results.json").read_text(encoding="utf-8"))["games"]
    assert [(g["returns"], g["length"]) for g in games] == [(list(r.returns), r.length) for r in want]


def test_batch_must_be_a_whole_number_of_deals(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        evaluate_cli.main(["castles", "--agents", "random", "greedy", "--batch", "0"])
    assert e.value.code == 2 and "--batch: must be at least 1" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"batch .* must be an int >= 1"):
        run_games("castles", RANDOM_GREEDY, deals=2, batch=-1)
    with pytest.raises(ValueError, match="loop must be one of batched, sequential"):
        run_games("castles", RANDOM_GREEDY, deals=2, loop="lockstep")
