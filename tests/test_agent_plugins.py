"""The engine receives agents through the ``jericho_env.agents`` entry points, never by importing ``agents``."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest

import agents
import jericho_env
from jericho_env import agent_plugins, play
from jericho_env.core.rules import OptionError


@pytest.fixture
def no_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if no distribution declared an agent provider."""
    monkeypatch.setattr(agent_plugins, "entry_points", lambda group: [])
    monkeypatch.setattr(agent_plugins, "_registered", {})


def test_this_projects_agents_are_an_installed_provider() -> None:
    assert agent_plugins.providers()["agents"] is agents.registry
    assert set(agents.AGENT_NAMES) <= set(agent_plugins.agent_names("grid"))
    greedy = agent_plugins.make_agent("greedy", "walls", num_players=3, seed=1)
    assert type(greedy) is type(agents.make("greedy", "walls", num_players=3))
    assert agent_plugins.parse_spec("mine:ppo=a.zip", "grid") == ("mine", "ppo", {"path": "a.zip"})


def test_unknown_names_and_games_are_refused_naming_what_is_known() -> None:
    with pytest.raises(
        OptionError, match=r"unknown agent 'nosuch'.*known agents: .*greedy.*providers installed: agents"
    ):
        agent_plugins.make_agent("nosuch", "grid")
    with pytest.raises(OptionError, match="unknown agent 'nosuch'"):
        agent_plugins.parse_spec("nosuch", "grid")
    with pytest.raises(OptionError, match="unknown game id 'chess'"):
        agent_plugins.agent_names("chess")


def test_without_providers_only_the_builtin_random_exists(no_providers: None) -> None:
    assert agent_plugins.providers() == {} and agent_plugins.agent_names("castles") == ["random"]
    assert agent_plugins.parse_spec("random", "castles") == ("random", "random", {})
    with pytest.raises(OptionError, match=r"no agent provider is installed.*only the built-in 'random'"):
        agent_plugins.make_agent("greedy", "castles")
    with pytest.raises(OptionError, match="no agent provider is installed"):
        agent_plugins.parse_spec("greedy", "castles")
    with pytest.raises(OptionError, match="takes no argument"):
        agent_plugins.parse_spec("random=3", "castles")


def test_the_builtin_random_plays_as_the_agents_random_does(no_providers: None) -> None:
    env = jericho_env.make("walls")
    env.reset(seed=3)
    mine = agent_plugins.make_agent("random", "walls", seed=11)
    theirs = agents.make("random", "walls", seed=11)
    assert isinstance(mine, agent_plugins.UniformRandomAgent)
    for _ in range(40):
        obs = env.observe(env.agent_selection)
        a = mine.act(obs)
        assert a == theirs.act(obs) and obs["action_mask"][a] == 1
        env.step(a)
    with pytest.raises(ValueError, match="no legal action"):
        mine.act({"action_mask": np.zeros(56, dtype=np.int8)})


def test_the_terminal_game_runs_with_the_builtin_random_alone(no_providers: None) -> None:
    out = io.StringIO()
    assert play.main(["castles", "--seed", "2"], stdin=io.StringIO("1\n" * 200), stdout=out) == 0
    assert "opponents: random" in out.getvalue() and "== game over ==" in out.getvalue()


def test_a_provider_registered_in_process_is_offered(no_providers: None) -> None:
    class Always0:
        def act(self, observation: dict[str, np.ndarray]) -> int:
            return int(np.flatnonzero(observation["action_mask"])[0])

        def reset(self, seed: int | None = None) -> None:
            pass

    class Provider:
        made: list[tuple[str, str, dict[str, Any]]] = []

        def make(self, name: str, game_id: str, **kwargs: Any) -> Always0:
            self.made.append((name, game_id, kwargs))
            return Always0()

        def agent_names(self, game_id: str) -> list[str]:
            return ["first"]

    agent_plugins.register_provider("mine", Provider())
    assert agent_plugins.agent_names("grid") == ["first", "random"]
    assert isinstance(agent_plugins.make_agent("first", "grid", board_size=7), Always0)
    assert Provider.made == [("first", "grid", {"board_size": 7})]
    assert agent_plugins.parse_spec("me:first", "grid") == ("me", "first", {})
    with pytest.raises(OptionError, match=r"known agents: first, random \(providers installed: mine\)"):
        agent_plugins.make_agent("second", "grid")
    with pytest.raises(TypeError, match=r"callable make\(\.\.\.\)"):
        agent_plugins.register_provider("broken", object())


def test_a_provider_that_fails_to_load_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import EntryPoint

    broken = EntryPoint(name="broken", value="no_such_module_for_jericho:make", group=agent_plugins.GROUP)
    monkeypatch.setattr(agent_plugins, "entry_points", lambda group: [broken])
    with pytest.raises(
        OptionError, match=r"agent provider 'broken' \(no_such_module_for_jericho:make\).*failed to load"
    ):
        agent_plugins.make_agent("random", "grid")
