"""Conformance of every game through the one generic env (design.md §4, layers 2-4).

Parametrised over every built-in game (and its variants) plus the test-only ``toy`` game, which
proves that a game needs no code outside its own folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import jericho_env
from jericho_env.playthrough import diff_against_file, golden_path
from jericho_env.registry import known_game_ids, make_rules

ROOT = Path(__file__).resolve().parent.parent
GAMES = [*jericho_env.GAME_IDS, "toy"]


def _variants() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = [(g, {}) for g in GAMES]
    out += [("walls", {"num_players": p}) for p in (2, 3, 5)]
    try:
        from jericho_env.games.castles import VARIANTS
    except ImportError:  # pragma: no cover - castles not built yet
        VARIANTS = []
    out += [("castles", dict(v)) for v in VARIANTS if v]
    return out


VARIANTS = _variants()
VARIANT_IDS = [g + "".join(f"-{k}={v}" for k, v in o.items()) for g, o in VARIANTS]


def random_play(env: Any, rng: np.random.Generator, max_steps: int = 100_000) -> list[Any]:
    """Play one game with uniformly random legal actions; return a trace of (agent, obs, mask, action)."""
    trace = []
    for agent in env.agent_iter(max_steps):
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            trace.append((agent, float(reward)))
            continue
        legal = np.flatnonzero(obs["action_mask"])
        action = int(rng.choice(legal))
        trace.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), action))
        env.step(action)
    return trace


def digest(trace: list[Any]) -> str:
    """A short hash of a trace."""
    h = hashlib.sha256()
    for item in trace:
        h.update(repr(item).encode())
    return h.hexdigest()[:16]


# ---------------------------------------------------------------------------------------- API
@pytest.mark.parametrize(("game", "opts"), VARIANTS, ids=VARIANT_IDS)
def test_pettingzoo_api_test(game: str, opts: dict[str, Any]) -> None:
    api_test(jericho_env.make(game, **opts), num_cycles=400)


@pytest.mark.parametrize("game", GAMES)
def test_pettingzoo_seed_test(game: str) -> None:
    seed_test(lambda: jericho_env.make(game), num_cycles=400)


@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_pettingzoo_registry(game: str) -> None:
    assert jericho_env.GAME_VERSIONS[game] == make_rules(game).info.version
    env = pettingzoo.make("aec", f"jericho/{game}-v{jericho_env.GAME_VERSIONS[game]}")
    env.reset(seed=1)
    assert env.agent_selection in env.possible_agents
    assert env.unwrapped.game_id == game


@pytest.mark.parametrize("game", GAMES)
def test_spaces_and_first_observation(game: str) -> None:
    env = jericho_env.make(game)
    env.reset(seed=3)
    info = env.unwrapped.rules.info
    assert env.possible_agents == [f"player_{i}" for i in range(info.num_players)]
    for agent in env.possible_agents:
        obs = env.observe(agent)
        assert obs["observation"].dtype == np.float32
        assert obs["action_mask"].dtype == np.int8
        assert obs["action_mask"].shape == (info.num_actions,)
        assert env.observation_space(agent).contains(obs), agent
        assert (obs["action_mask"].sum() > 0) == (agent == env.agent_selection)


# ---------------------------------------------------------------------------------------- determinism
@pytest.mark.parametrize("game", GAMES)
def test_multi_episode_multi_seed_determinism(game: str) -> None:
    for seed in (0, 1, 12345):
        runs = []
        for _ in range(2):
            env = jericho_env.make(game)
            rng = np.random.default_rng(seed)
            env.reset(seed=seed)
            trace = random_play(env, rng)
            env.reset()  # a second episode continues the env's generator
            trace += random_play(env, rng)
            runs.append(digest(trace))
        assert runs[0] == runs[1], f"seed {seed}"
    env = jericho_env.make(game)
    env.reset(seed=0)
    a = digest(random_play(env, np.random.default_rng(0)))
    env.reset(seed=1)
    b = digest(random_play(env, np.random.default_rng(0)))
    assert a != b, "different seeds gave the same game"


_CHILD = """
import sys, numpy as np, jericho_env
sys.path.insert(0, {root!r})
import tests.conftest  # registers the toy game
from tests.test_conformance import random_play, digest
env = jericho_env.make({game!r})
out = []
for seed in (7, 8):
    env.reset(seed=seed)
    out.append(digest(random_play(env, np.random.default_rng(seed))))
print(",".join(out))
"""


@pytest.mark.parametrize("game", GAMES)
def test_cross_process_determinism(game: str) -> None:
    outs = []
    for hashseed in ("1", "987"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        code = _CHILD.format(root=str(ROOT), game=game)
        res = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=False
        )
        assert res.returncode == 0, res.stderr
        outs.append(res.stdout.strip())
    assert outs[0] == outs[1]


@pytest.mark.parametrize("game", GAMES)
def test_pickle_mid_game_continues_identically(game: str) -> None:
    env = jericho_env.make(game)
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(6):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    clone = pickle.loads(pickle.dumps(env))
    assert digest(random_play(env, np.random.default_rng(9))) == digest(random_play(clone, np.random.default_rng(9)))


# ---------------------------------------------------------------------------------------- rules invariants
def _random_states(game: str, games: int, seed: int, opts: dict[str, Any] | None = None):
    rules = make_rules(game, **(opts or {}))
    rng = np.random.default_rng(seed)
    for _ in range(games):
        state = rules.initial_state(rng)
        steps = 0
        yield rules, state, steps
        while not rules.is_terminal(state):
            legal = rules.legal_actions(state)
            rules.apply(state, legal[int(rng.integers(len(legal)))])
            steps += 1
            yield rules, state, steps


@pytest.mark.parametrize(("game", "opts"), VARIANTS, ids=VARIANT_IDS)
def test_invariants_over_random_play(game: str, opts: dict[str, Any]) -> None:
    """Cards conserved, a legal action for the mover, bounded length, zero-sum bounded returns."""
    deck = None
    n_games = 0
    for rules, state, steps in _random_states(game, 150, seed=11, opts=opts):
        if deck is None:
            deck = sorted(rules.all_cards())
        zones = rules.card_zones(state)
        assert sorted(c for cards in zones.values() for c in cards) == deck, f"cards not conserved at step {steps}"
        assert steps <= rules.info.max_game_length
        if rules.is_terminal(state):
            n_games += 1
            ret = rules.returns(state)
            assert rules.current_player(state) == -1
            assert rules.legal_actions(state) == []
            assert len(ret) == rules.info.num_players
            assert all(rules.info.min_return <= r <= rules.info.max_return for r in ret)
            if rules.info.zero_sum:
                assert abs(sum(ret)) < 1e-9
        else:
            assert 0 <= rules.current_player(state) < rules.info.num_players
            assert len(rules.legal_actions(state)) > 0
            assert rules.returns(state) == [0.0] * rules.info.num_players
    assert n_games == 150


# every observation version of every game (obs_version=1: what the seat can infer, issue 44)
VERSIONS = [(g, {}) for g in GAMES] + [(g, {"obs_version": 1}) for g in jericho_env.GAME_IDS]
VERSION_IDS = [g + "".join(f"-{k}={v}" for k, v in o.items()) for g, o in VERSIONS]


@pytest.mark.parametrize(("game", "opts"), VERSIONS, ids=VERSION_IDS)
def test_observation_hides_what_the_seat_cannot_see(game: str, opts: dict[str, Any]) -> None:
    """Redealing every card a seat cannot see leaves its observation and mask unchanged."""
    rng = np.random.default_rng(3)
    checked = 0
    for rules, state, _ in _random_states(game, 40, seed=21, opts=opts):
        n = rules.info.num_players
        for seat in range(n):
            other = rules.determinize(state, seat, rng)
            assert np.array_equal(rules.observe(state, seat), rules.observe(other, seat)), f"seat {seat}"
            assert sorted(c for z in rules.card_zones(other).values() for c in z) == sorted(rules.all_cards())
            if rules.current_player(state) == seat:
                assert rules.legal_actions(state) == rules.legal_actions(other)
            checked += 1
    assert checked > 100


@pytest.mark.parametrize(("game", "opts"), VERSIONS, ids=VERSION_IDS)
def test_observation_in_bounds_and_fresh(game: str, opts: dict[str, Any]) -> None:
    for rules, state, _ in _random_states(game, 20, seed=4, opts=opts):
        for seat in range(rules.info.num_players):
            obs = rules.observe(state, seat)
            assert obs.dtype == np.float32 and obs.shape == (rules.info.observation_size,)
            assert obs.min() >= 0.0 and obs.max() <= 1.0, rules.layout.split(obs)
            again = rules.observe(state, seat)
            assert again is not obs and np.array_equal(obs, again)


@pytest.mark.parametrize(
    ("game", "opts"), VARIANTS + VERSIONS[len(GAMES) :], ids=VARIANT_IDS + VERSION_IDS[len(GAMES) :]
)
def test_observe_into_writes_observe_row_by_row(game: str, opts: dict[str, Any]) -> None:
    """The batched encoding the self-play env uses gives each row's ``observe``, bit for bit."""
    states, seats = [], []
    for rules, state, steps in _random_states(game, 6, seed=17, opts=opts):
        if steps % 3 == 0 or rules.is_terminal(state):
            states.append(rules.clone(state))
            seats.append((steps // 3) % rules.info.num_players)
    size = rules.info.observation_size
    expected = np.stack([rules.observe(s, p) for s, p in zip(states, seats, strict=True)])
    for rows in (len(states), 1, 0):
        out = np.full((rows, size), np.nan, dtype=np.float32)
        rules.observe_into(out, states[:rows], seats[:rows])
        assert np.array_equal(out, expected[:rows])


@pytest.mark.parametrize("game", GAMES)
def test_state_dict_round_trip_and_clone_independence(game: str) -> None:
    rng = np.random.default_rng(8)
    for rules, state, steps in _random_states(game, 15, seed=31):
        data = rules.to_dict(state)
        rebuilt = rules.from_dict(json.loads(json.dumps(data)))
        assert rules.to_dict(rebuilt) == data
        if not rules.is_terminal(state) and steps % 3 == 0:
            snapshot = rules.to_dict(state)
            twin = rules.clone(state)
            legal = rules.legal_actions(twin)
            a = legal[int(rng.integers(len(legal)))]
            rules.apply(twin, a)
            assert rules.to_dict(state) == snapshot, "apply on a clone changed the original"
            other = rules.from_dict(json.loads(json.dumps(snapshot)))
            rules.apply(other, a)
            assert rules.to_dict(other) == rules.to_dict(twin)


@pytest.mark.parametrize("game", GAMES)
def test_bad_state_dict_is_rejected(game: str) -> None:
    rules = make_rules(game)
    with pytest.raises(jericho_env.StateFormatError):
        rules.from_dict({"nonsense": 1})


@pytest.mark.parametrize("game", GAMES)
def test_action_text_unique_and_parsable(game: str) -> None:
    for rules, state, _ in _random_states(game, 10, seed=41):
        legal = rules.legal_actions(state)
        names = [rules.action_to_str(state, a) for a in legal]
        assert len({n.lower() for n in names}) == len(names), names
        for a, name in zip(legal, names, strict=True):
            assert rules.str_to_action(state, name) == a


# ---------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("game", GAMES)
def test_illegal_action_rejected_and_env_unchanged(game: str) -> None:
    env = jericho_env.make(game)
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    tried = 0
    for _ in range(60):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        mask = obs["action_mask"]
        illegal = np.flatnonzero(mask == 0)
        if len(illegal):
            before = json.dumps(env.unwrapped.save_state(), sort_keys=True)
            agent = env.agent_selection
            bad = int(rng.choice(illegal))
            with pytest.raises(ValueError, match=agent) as err:
                env.step(bad)
            assert isinstance(err.value, jericho_env.IllegalActionError)
            assert env.unwrapped.rules.describe_action(bad) in str(err.value)
            assert json.dumps(env.unwrapped.save_state(), sort_keys=True) == before
            assert env.agent_selection == agent
            assert np.array_equal(env.observe(agent)["action_mask"], mask)
            tried += 1
        env.step(int(rng.choice(np.flatnonzero(mask))))
    assert tried > 0


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("bad", ["3", 1.5, None, True, -1, 10**9, [1]])
def test_wrong_action_type_rejected(game: str, bad: Any) -> None:
    env = jericho_env.make(game)
    env.reset(seed=0)
    before = json.dumps(env.unwrapped.save_state(), sort_keys=True)
    with pytest.raises(jericho_env.ActionTypeError, match="action"):
        env.step(bad)
    assert json.dumps(env.unwrapped.save_state(), sort_keys=True) == before


def test_unknown_game_id() -> None:
    with pytest.raises(ValueError, match=r"unknown game id 'nope'.*grid, walls, castles"):
        jericho_env.make("nope")


@pytest.mark.parametrize("game", GAMES)
def test_unknown_option_and_render_mode(game: str) -> None:
    with pytest.raises(ValueError, match="unknown option"):
        jericho_env.make(game, no_such_option=1)
    with pytest.raises(ValueError, match="render_mode"):
        jericho_env.make(game, render_mode="3d")


@pytest.mark.parametrize("game", GAMES)
def test_save_and_load_state(game: str) -> None:
    env = jericho_env.make(game)
    env.reset(seed=6)
    random_rng = np.random.default_rng(1)
    for _ in range(3):
        obs, _, term, _, _ = env.last()
        if term:
            break
        env.step(int(random_rng.choice(np.flatnonzero(obs["action_mask"]))))
    saved = json.loads(json.dumps(env.unwrapped.save_state()))
    other = jericho_env.make(game)
    other.reset(seed=99)
    other.unwrapped.load_state(saved)
    assert other.agent_selection == env.agent_selection
    for agent in env.possible_agents:
        assert np.array_equal(other.observe(agent)["observation"], env.observe(agent)["observation"])


# ---------------------------------------------------------------------------------------- render, golden
@pytest.mark.parametrize("game", GAMES)
def test_render_modes(game: str, capsys: pytest.CaptureFixture[str]) -> None:
    env = jericho_env.make(game, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and len(text) > 10
    human = jericho_env.make(game, render_mode="human")
    human.reset(seed=0)
    human.render()
    assert capsys.readouterr().out.strip() == text.strip()


@pytest.mark.parametrize("game", known_game_ids())
def test_golden_playthrough(game: str) -> None:
    """Every registered game, the test-only toy included, has a golden file whose recorded actions replay."""
    path = golden_path(game, ROOT)
    extra = "" if game in jericho_env.GAME_IDS else " --import tests.conftest"
    assert path.exists(), f"no golden playthrough for {game}: run python -m jericho_env.playthrough {game}{extra}"
    diff = diff_against_file(game, path)
    assert not diff, "golden playthrough differs (regenerate only on purpose):\n" + diff[:5000]


@pytest.mark.parametrize("game", GAMES)
def test_pettingzoo_render_test(game: str, capsys: pytest.CaptureFixture[str]) -> None:
    render_test(lambda render_mode=None: jericho_env.make(game, render_mode=render_mode))
    capsys.readouterr()


@pytest.mark.parametrize("game", GAMES)
def test_text_and_image_views_hide_what_the_seat_cannot_see(game: str) -> None:
    """The text and the image from a seat's view are the same after redealing its unseen cards."""
    rng = np.random.default_rng(5)
    shapes = set()
    images_differ = False
    previous = None
    for k, (rules, state, _) in enumerate(_random_states(game, 2, seed=13)):
        seat = k % rules.info.num_players
        other = rules.determinize(state, seat, rng)
        assert rules.render_text(state, seat) == rules.render_text(other, seat)
        if k % 4 == 0:
            image = rules.render_image(state, seat)
            assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
            assert np.array_equal(image, rules.render_image(other, seat))
            shapes.add(image.shape)
            images_differ |= previous is not None and not np.array_equal(previous, image)
            previous = image
    assert len(shapes) == 1, f"the image size changes during a game: {shapes}"
    assert images_differ, "the image never changes during a game"


@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_game_page_is_complete_and_its_layout_table_current(game: str) -> None:
    """The page (module docstring) holds the generated layout table and the sections of design.md §3."""
    import importlib

    page = importlib.import_module(f"jericho_env.games.{game}").__doc__ or ""
    rules = make_rules(game)
    assert rules.layout.markdown_table() in page, "regenerate the layout table: rules.layout.markdown_table()"
    for section in ("Version History", "Properties", "Actions", "Options"):
        assert section.lower() in page.lower(), section
    spec = (ROOT / "seeds" / f"{game}.md").read_text(encoding="utf-8")
    assert "decision" in spec.lower()
