"""The shipped agents (``agents/zoo``, ``agents.pretrained``): every game ships a PPO network; each entry still fits.

These tests run over whatever ``agents.zoo()`` lists (``$JERICHO_ENV_ZOO`` points it at another folder) and
fail for a game without a shipped ``ppo``. Each entry: its card's game and observation versions are the
env's, it loads without unpickling, and every agent that plays it plays a whole game in the AEC env; then
the network alone plays 40 seat-swapped games against greedy and must still win most of them, and plays the
moves its card recorded at fixed positions. So changing a game's rules or observation version, or its
observation layout, fails here until the zoo is retrained (docs/contributing.md says how).
"""

from __future__ import annotations

import json
import pickle
import re
from typing import Any

import numpy as np
import pytest

import agents
import jericho_env
from agents import ppo, pretrained
from agents.checkpoint import kind
from experiments.play.tournament import AgentSpec, run_games, tabulate
from experiments.zoo import FINGERPRINT_AGREEMENT, fingerprint_agreement, network_meta
from jericho_env.agent_plugins import choose_action
from jericho_env.registry import make_rules

GAMES = 40  # against greedy, seat-swapped: 20 deals x 2 seats, or 10 deals x 4 seats in walls


def entries_of(game: str) -> list[pretrained.ZooEntry]:
    """The zoo's entries for ``game``, asserting that a ppo one is among them."""
    the_zoo = agents.zoo()
    found = [e for e in the_zoo if e.game == game]
    assert any(e.kind == "ppo" for e in found), (
        f"no ppo shipped for {game} in {the_zoo.folder} (it has {[e.name for e in the_zoo]}): train it "
        f"(python -m experiments.train {game}) and add it (python -m experiments.zoo add RUN_FOLDER)"
    )
    return found


class NoUnpickling:
    """Stands in for ``pickle.Unpickler``, ``pickle.load`` and ``pickle.loads``: any use fails the test."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("a shipped agent was unpickled")


def load_refusing_unpickling(name: str, game: str, options: dict[str, Any]) -> Any:
    """The shipped network ``name`` plays, loaded afresh while every pickle entry point fails.

    ``torch.load`` without ``weights_only`` builds on ``pickle.Unpickler``, SB3's loader on ``pickle.loads``.
    Numba pickles as it compiles (building a network with the greedy prior runs compiled code), so a first
    load outside the patch compiles that code; the second, patched, load reads the file again. A ``dmc``
    agent loads its network itself (``agents.dmc.load_dmc``, no cache): the agent made under the patch.
    """
    if name == "dmc":
        agents.make(name, game, **options)
        with pytest.MonkeyPatch.context() as patch:
            for entry_point in ("Unpickler", "load", "loads"):
                patch.setattr(pickle, entry_point, NoUnpickling)
            return agents.make(name, game, **options)
    ppo.shipped_policy(name, game, options)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pickle, "Unpickler", NoUnpickling)
        patch.setattr(pickle, "load", NoUnpickling)
        patch.setattr(pickle, "loads", NoUnpickling)
        patch.setattr("agents.checkpoint.load_sb3", NoUnpickling)
        ppo._loaded.clear()  # load again, under the patch
        policy, _, _ = ppo.shipped_policy(name, game, options)
    return policy


def play_whole_game(agent: Any, game: str, options: dict[str, Any], seed: int) -> tuple[int, list[float]]:
    """``agent`` in seat 0 of ``jericho_env.make(game)`` (the wrapped AEC env), random players elsewhere."""
    env = jericho_env.make(game, **options)
    env.reset(seed=seed)
    agent.reset(seed=seed)
    rng = np.random.default_rng(seed)
    moves, rewards = 0, dict.fromkeys(env.possible_agents, 0.0)
    for agent_id in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        rewards[agent_id] += reward
        if term or trunc:
            env.step(None)
            continue
        if agent_id == env.possible_agents[0]:
            action = choose_action(agent, env, agent_id)
        else:
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
        moves += 1
    return moves, [rewards[a] for a in env.possible_agents]


@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_each_shipped_agent_loads_without_unpickling_plays_a_whole_game_and_fits_the_games_versions(game: str) -> None:
    for entry in entries_of(game):
        options = dict(entry.card["options"])
        rules = make_rules(game, **options)
        assert (entry.card["game_version"], entry.card["observation_version"]) == (
            rules.version,
            rules.observation_version,
        ), f"{entry.name} was trained on other versions of {game}: retrain it (docs/contributing.md)"
        meta = network_meta(entry.kind, entry.path)  # read_meta, or the dmc format's own reader
        assert kind(entry.path) == "safe" and meta["game_id"] == game
        assert (meta["game_version"], meta["observation_version"]) == (rules.version, rules.observation_version)
        assert entry.card["file"]["sha256"] == pretrained.sha256(entry.path)
        for name in entry.agents:
            network = load_refusing_unpickling(name, game, options)
            extra = {"simulations": 8} if name == "exit-search" else {}  # it plays; its strength is not tested here
            if name == "dmc":
                agent = network  # the agent made without unpickling
            else:
                agent = agents.make(name, game, seed=0, **extra, **options)  # no path: the shipped network
                assert agent.policy is network  # the one loaded without unpickling
            assert agent.path == str(entry.path)
            moves, rewards = play_whole_game(agent, game, options, seed=1)
            assert 0 < moves <= rules.info.max_game_length and any(r != 0 for r in rewards), (name, rewards)


@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_each_shipped_network_still_wins_most_of_40_games_against_greedy(game: str) -> None:
    """The network alone (``ppo``, ``exit``) against greedy: more than half the points in a two-player game.

    In walls the agent plays alone against three greedy copies, where an even share is 1/4 and no agent
    of ours wins most games (PPO scores about 30%); there the bar is half the even share, which a network
    that misreads its observations (it then plays like random: 0 of 40 against greedy) does not reach.
    """
    n = make_rules(game).info.num_players
    for entry in entries_of(game):
        options = dict(entry.card["options"])
        specs = [AgentSpec(entry.kind, entry.kind), AgentSpec("greedy", "greedy")]
        records = run_games(game, specs, GAMES // n, seed=0, options=options)
        cell = tabulate(records, [entry.kind, "greedy"])[(entry.kind, "greedy")]
        bar = 0.5 if n == 2 else 0.5 / n
        assert cell.games == GAMES
        assert cell.score > bar * GAMES, (
            f"{entry.name} scored {cell.score} of {GAMES} against greedy (needs more than {bar * GAMES:g}); "
            f"its card says {entry.scores().get('greedy')}"
        )


@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_each_shipped_network_plays_its_cards_moves_at_fixed_positions(game: str) -> None:
    """At every decision of three seeded games of greedy play, the move the card recorded when it was added.

    The positions follow from the rules, greedy and the seeds, the moves from the network, its observations
    and its prior's floats: so a change to any of them shows here even when no version number declared it,
    also in grid and walls, where the networks start from greedy's scores and so play much like greedy.
    """
    for entry in entries_of(game):
        same, total = fingerprint_agreement(entry)
        assert total > 50 and same >= FINGERPRINT_AGREEMENT * total, (
            f"{entry.name} plays {total - same} of the {total} fixed positions on its card otherwise: the rules, the "
            "observation or the prior changed since it was added; retrain it (docs/contributing.md)"
        )


MACHINE_PATH = re.compile(r"(^|[\s'\"=])(/tmp/|/root/|/home/|/work/|/Users/|[A-Z]:\\\\)")


def test_every_shipped_card_comes_from_its_recipe_on_a_clean_tree_and_names_no_path_of_a_machine() -> None:
    """The package's own cards (not ``$JERICHO_ENV_ZOO``'s): one per recipe, each made by its recipe's very
    commands at a commit with no uncommitted change in any session, naming no folder of the machine that ran it."""
    from experiments.recipes import load_recipes

    book = load_recipes()
    shipped = agents.zoo(pretrained.PACKAGE_FOLDER)
    assert sorted(e.name for e in shipped) == sorted(book), "every shipped entry has a recipe, every recipe an entry"
    for entry in shipped:
        made, recipe = entry.card["made_by"], book[entry.name]
        steps = {"name": recipe.name, "needs": list(recipe.needs), "steps": list(recipe.steps)}
        assert made.get("recipe") == steps, entry.name
        assert made["dirty"] is False and isinstance(made["commit"], str) and len(made["commit"]) == 40, entry.name
        assert made["sessions"] and all(s.get("dirty") is False for s in made["sessions"]), entry.name
        assert not MACHINE_PATH.search(json.dumps(entry.card)), f"{entry.name}.json names a path of the machine"
