"""A researcher's own agent plays wherever agents play: named by its code's path, or handed over as an object."""

from __future__ import annotations

import io
import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
import jericho_env
from experiments import evaluate
from experiments.evaluate import specs_from_args, tournament
from experiments.play.deals import AgentError
from jericho_env import agent_plugins, play
from jericho_env.core.rules import IllegalActionError
from jericho_env.user_agents import AgentCodeError, split_user_spec

MINE = '''
import numpy as np

CALLS = {"act": 0, "act_batch": 0}


class LowestCard:
    """Plays the lowest legal action."""

    name = "lowest"

    def __init__(self, game_id, seed=None, offset=0):
        self.offset = offset

    def act(self, observation):
        CALLS["act"] += 1
        legal = np.flatnonzero(observation["action_mask"])
        return int(legal[min(self.offset, len(legal) - 1)])


class LowestBatch(LowestCard):
    def act(self, observation):
        raise AssertionError("a batched tournament must ask act_batch")

    def act_batch(self, observations, masks):
        CALLS["act_batch"] += 1
        return masks.argmax(axis=1)


def make_lowest(game_id, seed=None):
    return LowestCard(game_id, seed)


class Cheat:
    """Plays the first action that is not legal."""

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"] == 0)[0])


class Broken:
    def act(self, observation):
        raise KeyError("oops")


class NoAct:
    def __init__(self, game_id):
        pass


lowest_instance = LowestCard("castles")
'''


@pytest.fixture
def mine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``mine.py`` in a folder of its own, importable as the module ``mine`` too."""
    path = tmp_path / "code" / "mine.py"
    path.parent.mkdir()
    path.write_text(MINE)
    monkeypatch.syspath_prepend(str(path.parent))
    monkeypatch.chdir(tmp_path)
    return path


def test_specs_name_code_by_file_or_module_with_arguments(mine: Path) -> None:
    assert split_user_spec("greedy") is None and split_user_spec("ppo=runs/a.zip") is None
    assert agents.parse_spec(f"low={mine}:LowestCard") == ("low", f"{mine}:LowestCard", {})
    assert agents.parse_spec("low=mine:LowestCard,offset=2,x=1.5,y=true,z=text") == (
        "low", "mine:LowestCard", {"offset": 2, "x": 1.5, "y": True, "z": "text"},
    )  # fmt: skip
    by_file = agents.make(f"{mine}:LowestCard", "castles", seed=3, offset=1)
    by_module = agents.make("mine:make_lowest", "walls", seed=3, num_players=4)  # a factory; options it ignores
    assert by_file.offset == 1 and type(by_module).__name__ == "LowestCard"
    assert agents.make("mine:lowest_instance", "castles").offset == 0  # an agent object itself
    # the engine's front ends read the same specs
    assert agent_plugins.parse_spec("low=mine:LowestCard", "grid") == ("low", "mine:LowestCard", {})
    assert agent_plugins.make_agent("mine:LowestCard", "grid").act is not None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("greedy=mine:LowestCard", r"'greedy' is the name of an installed agent; label your own agent"),
        ("mine:LowestCard", r"names code without a label: write LABEL=mine:LowestCard"),
        ("low=nosuchmodule:X", r"no module named 'nosuchmodule' \(is its folder on PYTHONPATH"),
        ("low=missing/file.py:X", r"no file '.*missing/file.py'"),
        ("low=mine:Nope", r"mine has no attribute 'Nope' \(it has: .*LowestCard"),
        ("low=mine:NoAct", r"gave NoAct .* which has no act\(observation\) method"),
        ("low=mine:CALLS", r"gave dict .* which has no act\(observation\) method"),
        ("low=mine:LowestCard,depth=3", r"takes no argument\(s\) depth \(its signature: LowestCard\(game_id"),
        ("low=mine:LowestCard,offset", r"'offset' is not a key=value argument"),
        ("low=mine:lowest_instance,offset=1", r"is an agent object, not a class or factory: it takes no"),
    ],
)
def test_bad_specs_say_what_is_wrong_in_one_line(mine: Path, spec: str, message: str) -> None:
    def build() -> None:
        _, name, kwargs = agents.parse_spec(spec)
        agents.make(name, "castles", **kwargs)

    with pytest.raises((AgentCodeError, ValueError), match=message) as info:
        build()
    assert "\n" not in str(info.value)


def test_code_that_fails_to_import_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("raise RuntimeError('no import for you')\n")
    with pytest.raises(AgentCodeError, match=r"running bad.py raised RuntimeError: no import for you"):
        agents.make(f"{bad}:X", "castles")


def test_evaluate_plays_a_file_and_a_module_and_the_python_function_gives_the_same_table(
    mine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["castles", "--agents", f"lowest={mine}:LowestCard", "greedy", "--deals", "6", "--quiet", "--no-plot"]
    assert evaluate.main([*argv, "--out", "by-file"]) == 0
    printed = capsys.readouterr().out
    result = tournament("castles", [f"lowest={mine}:LowestCard", "greedy"], deals=6)
    by_file = result.table
    assert f"\n{by_file}\n\n12 games in" in printed and "| **lowest** |" in by_file and str(result) == by_file
    assert evaluate.main(["castles", "--agents", "lowest=mine:LowestCard", *argv[3:], "--out", "by-module"]) == 0
    assert f"\n{by_file}\n\n12 games in" in capsys.readouterr().out
    import mine as module

    assert tournament("castles", [("lowest", module.LowestCard("castles")), "greedy"], deals=6).table == by_file
    recorded = json.loads((Path("by-file") / "results.json").read_text())["config"]["agents"]
    assert recorded[0] == {"label": "lowest", "name": f"{mine}:LowestCard", "kwargs": {}}
    assert 0 <= result.score("lowest", "greedy") <= 1


def test_a_batched_tournament_asks_act_batch_once_per_round(mine: Path) -> None:
    import mine as module

    module.CALLS.update(act=0, act_batch=0)
    result = tournament("grid", [module.LowestBatch("grid"), "random"], deals=4, batch=4)
    assert module.CALLS["act"] == 0 and module.CALLS["act_batch"] > 0
    assert result.games == 8
    # the sequential loop asks act, game by game
    with pytest.raises(AgentError, match="AssertionError: a batched tournament must ask act_batch"):
        tournament("grid", [module.LowestBatch("grid"), "random"], deals=1, loop="sequential")


def test_objects_go_to_worker_processes_pickled_or_are_refused_naming_the_path_form(mine: Path) -> None:
    import mine as module

    pickle.dumps(module.LowestCard("castles"))  # a module-level class pickles
    two = tournament("castles", [module.LowestCard("castles"), "greedy"], deals=4, workers=2, batch=2)
    one = tournament("castles", [module.LowestCard("castles"), "greedy"], deals=4, workers=1, batch=2)
    assert two.table == one.table
    unpicklable = module.LowestCard("castles")
    unpicklable.hook = lambda: None  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match=r"cannot go to worker processes: it does not pickle.*=path/to/file.py:attr"):
        tournament("castles", [unpicklable, "greedy"], deals=4, workers=2, batch=2)
    from experiments.play.backends import Backend

    with pytest.raises(ValueError, match=r"--backend ray sends agents by name, not as objects"):
        tournament("castles", [module.LowestCard("castles"), "greedy"], deals=4, backend=Backend("ray"))


@pytest.mark.parametrize("loop", ["batched", "sequential"])
def test_an_illegal_action_stops_the_tournament_or_loses_the_game(mine: Path, loop: str) -> None:
    specs = ["cheat=mine:Cheat", "greedy"]
    with pytest.raises(IllegalActionError, match=r"'cheat'.*(not legal|cannot play)") as info:
        tournament("castles", specs, deals=2, loop=loop)
    assert "\n" not in str(info.value)
    result = tournament("castles", specs, deals=3, loop=loop, illegal="lose")
    assert result.forfeits == {"cheat": 6} and result.score("cheat", "greedy") == 0.0
    games = json.loads((Path(result.folder) / "results.json").read_text())["games"]
    assert all(g["illegal"].startswith("cheat (seat ") for g in games)
    assert all(g["returns"][g["seats"].index("cheat")] == -1.0 for g in games)


def test_an_agent_that_raises_is_named_with_the_game_it_was_playing(mine: Path) -> None:
    for loop in ("batched", "sequential"):
        with pytest.raises(AgentError, match=r"agent 'broken'.*KeyError: 'oops'") as info:
            tournament("castles", ["broken=mine:Broken", "random"], deals=1, loop=loop)
        assert "\n" not in str(info.value)


def test_the_command_line_refuses_bad_agents_in_one_line(mine: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for spec, message in [
        ("low=mine:NoAct", "has no act(observation) method"),
        ("low=nosuch:X", "no module named 'nosuch'"),
        ("mine:LowestCard", "names code without a label"),
    ]:
        with pytest.raises(SystemExit) as info:
            evaluate.main(["castles", "--agents", spec, "greedy", "--deals", "2", "--quiet"])
        err = capsys.readouterr().err
        assert info.value.code == 2 and message in err and err.count("\n") == 1
    evaluate.main(["castles", "--agents", "cheat=mine:Cheat", "greedy", "--deals", "2", "--quiet", "--no-plot",
                   "--illegal-action", "lose", "--out", "lose"])  # fmt: skip
    assert "Games lost at an illegal action (--illegal-action lose; results.json says why): cheat 4" in (
        capsys.readouterr().out
    )


def test_a_packaged_provider_plays_in_tournaments(mine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mine as module

    class Provider:
        @staticmethod
        def agent_names(game_id: str) -> list[str]:
            return ["lowest-plugin"]

        @staticmethod
        def make(name: str, game_id: str, **kwargs: Any) -> Any:
            return module.LowestCard(game_id, **kwargs)

    monkeypatch.setattr(agent_plugins, "_registered", {"theirs": Provider})
    assert agents.parse_spec("lowest-plugin", "castles") == ("lowest-plugin", "lowest-plugin", {})
    result = tournament("castles", ["lowest-plugin", "greedy"], deals=2)
    assert "| **lowest-plugin** |" in result.table


def test_own_agents_play_in_the_terminal_the_single_agent_view_and_self_play(mine: Path) -> None:
    out = io.StringIO()
    status = play.main(["castles", "--opponent", "low=mine:LowestCard", "--seed", "3"], stdin=io.StringIO("quit\n"),
                       stdout=out)  # fmt: skip
    assert status == 1 and "opponents: low" in out.getvalue()  # 1: the human quit
    env = jericho_env.single_agent("castles", opponents="low=mine:LowestCard")
    env.reset(seed=1)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    import mine as module

    from jericho_env.envs.selfplay import SelfPlayVector

    module.CALLS.update(act_batch=0)
    vector = SelfPlayVector("castles", 4, opponents=[module.LowestBatch("castles")], seed=2)
    _, masks = vector.reset()
    vector.step(masks.argmax(axis=1))
    assert module.CALLS["act_batch"] > 0


def test_specs_from_args_labels_objects_and_pairs() -> None:
    class Named:
        name = "named"

        def act(self, observation: dict[str, np.ndarray]) -> int:
            return 0

    specs = specs_from_args([Named(), Named(), ("mine", "greedy"), "random"])
    assert [s.label for s in specs] == ["named", "named#2", "mine", "random"]
    assert specs[2].name == "greedy" and specs[0].agent is not None
    with pytest.raises(AgentCodeError, match="has no act"):
        specs_from_args([object(), "random"])


def test_the_web_page_offers_agents_named_on_its_command_line(mine: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from starlette.testclient import TestClient

    from jericho_env.agent_plugins import NamedAgents, providers
    from jericho_env.web import __main__ as web_main
    from jericho_env.web.app import create_app
    from jericho_env.web.opponents import Opponents

    named = NamedAgents([f"low={mine}:LowestCard,offset=1", "quick:ismcts=4"])
    opponents = Opponents(lambda: {**providers(), "--agent": named})
    client = TestClient(create_app("/nonexistent-runs", opponents=opponents, seed=4), base_url="http://127.0.0.1")
    games = {g["id"]: g["agents"] for g in client.get("/api/games").json()["games"]}
    assert {"low", "quick"} <= set(games["castles"]) and {"low", "quick"} <= set(games["walls"])
    view = client.post("/api/play", json={"game": "castles", "seat": 0, "agents": [None, "low"]}).json()
    assert view["players"][1]["agent"] == "low"
    server = client.app.state.server  # type: ignore[attr-defined]
    from jericho_env.web.guard import VISITOR_COOKIE

    agent = server.store.get(view["id"], client.cookies[VISITOR_COOKIE]).agents[1]
    assert type(agent).__name__ == "LowestCard" and agent.offset == 1
    for bad, message in [
        ("low=mine:NoSuch", "has no attribute 'NoSuch'"),
        ("greedy:random", "label 'greedy' is taken"),
    ]:
        with pytest.raises(SystemExit) as info:
            web_main.main(["--agent", bad])
        assert info.value.code == 2 and message in capsys.readouterr().err
