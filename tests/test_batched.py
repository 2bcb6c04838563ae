"""The batched env's interface (``jericho_env.make_batched``), on the Python rules and on the toy game's kernels.

Each game's own kernels are compared with its Python rules in ``tests/games/test_<game>_batched.py``
(through ``tests/batched_harness.py``); here: the interface every game shares, the fallback, the
random streams.
"""

from __future__ import annotations

from itertools import permutations
from typing import Any

import numpy as np
import pytest

import jericho_env
from jericho_env.core.batched import PythonBatchedGame
from jericho_env.core.kernels import row_seeds, shuffle_prefix
from jericho_env.envs.batched import BatchedEnv, random_actions

try:
    from tests.batched_harness import play_both
except ImportError:  # pragma: no cover
    from batched_harness import play_both  # type: ignore[no-redef]

GAMES = [*jericho_env.GAME_IDS, "toy"]


def run(env: BatchedEnv, steps: int, seed: int) -> list[tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(seed)
    obs, mask, player = env.reset(seed=seed)
    out = [(obs.copy(), mask.copy(), player.copy())]
    for _ in range(steps):
        obs, mask, player, rewards, terminated = env.step(random_actions(mask, rng))
        out.append((obs.copy(), mask.copy(), player.copy(), rewards.copy(), terminated.copy()))
    return out


@pytest.mark.parametrize("game_id", GAMES)
def test_python_fallback_gives_the_rules_own_observations_masks_and_returns(game_id: str) -> None:
    env = jericho_env.make_batched(game_id, 6, compiled=False)
    assert isinstance(env.game, PythonBatchedGame) and not env.compiled
    rules = env.rules
    rng = np.random.default_rng(0)
    obs, mask, player = env.reset(seed=3)
    assert obs.dtype == np.float32 and mask.dtype == np.int8 and player.dtype == np.int64
    assert obs.shape == (6, rules.info.observation_size) and mask.shape == (6, rules.info.num_actions)
    ended = 0
    for _ in range(400):
        before = [env.get_state(i) for i in range(6)]
        actions = random_actions(mask, rng)
        obs, mask, player, rewards, terminated = env.step(actions)
        for i in range(6):
            if terminated[i]:
                ended += 1
                finished = rules.clone(before[i])
                rules.apply(finished, int(actions[i]))
                assert rules.is_terminal(finished)
                assert rewards[i].tolist() == rules.returns(finished)
            else:
                assert not rewards[i].any()
            state = env.get_state(i)
            assert player[i] == rules.current_player(state) >= 0
            assert np.array_equal(obs[i], rules.observe(state, int(player[i])))
            assert np.array_equal(mask[i], rules.legal_mask(state))
    assert ended > 0


@pytest.mark.parametrize("compiled", [False, True])
def test_a_seed_gives_the_same_games_and_another_seed_other_games(compiled: bool) -> None:
    a = run(jericho_env.make_batched("toy", 16, compiled=compiled), 30, seed=5)
    b = run(jericho_env.make_batched("toy", 16, compiled=compiled), 30, seed=5)
    c = run(jericho_env.make_batched("toy", 16, compiled=compiled), 30, seed=6)
    assert all(all(np.array_equal(x, y) for x, y in zip(p, q, strict=True)) for p, q in zip(a, b, strict=True))
    assert not all(np.array_equal(p[0], q[0]) for p, q in zip(a, c, strict=True))


@pytest.mark.parametrize("game_id", jericho_env.GAME_IDS)  # the toy game has no illegal action at its start
def test_an_illegal_action_is_refused_naming_the_game_and_no_game_changes(game_id: str) -> None:
    env = jericho_env.make_batched(game_id, 3, compiled=False)
    _, mask, _ = env.reset(seed=1)
    before = [env.rules.to_dict(env.get_state(i)) for i in range(3)]
    actions = random_actions(mask, np.random.default_rng(0))
    illegal = int(np.flatnonzero(mask[2] == 0)[0])
    actions[2] = illegal
    with pytest.raises(
        jericho_env.IllegalActionError, match=rf"game 2: action {illegal} .*not legal.*no game was changed"
    ):
        env.step(actions)
    for bad, match in [(np.zeros(2, dtype=np.int64), "3 actions"), (np.full(3, 0.5), "integers")]:
        with pytest.raises((ValueError, jericho_env.IllegalActionError), match=match):
            env.step(bad)
    with pytest.raises(jericho_env.IllegalActionError, match="outside the action space"):
        env.step(np.full(3, env.num_actions))
    assert [env.rules.to_dict(env.get_state(i)) for i in range(3)] == before
    env.step(random_actions(mask, np.random.default_rng(0)))  # still playable


def test_bad_arguments_name_what_is_allowed() -> None:
    with pytest.raises(jericho_env.OptionError, match="unknown game id"):
        jericho_env.make_batched("chess", 4)
    with pytest.raises(jericho_env.OptionError, match="num_envs must be an int >= 1"):
        jericho_env.make_batched("castles", 0)
    with pytest.raises(jericho_env.OptionError, match="ranks"):
        jericho_env.make_batched("castles", 4, ranks=7)
    with pytest.raises(jericho_env.OptionError, match="compiled must be"):
        jericho_env.make_batched("castles", 4, compiled="yes")
    env = jericho_env.make_batched("toy", 2)
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(jericho_env.OptionError, match="seed"):
            env.reset(seed=bad)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(2, dtype=np.int64))
    env.reset(seed=0)
    with pytest.raises(IndexError, match=r"0\.\.1"):
        env.get_state(2)


def test_states_convert_both_ways_and_set_state_refreshes_the_row() -> None:
    env = jericho_env.make_batched("toy", 4)
    env.reset(seed=0)
    rules = env.rules
    state = rules.initial_state(np.random.default_rng(9))
    rules.apply(state, 1)
    env.set_state(2, state)
    assert rules.to_dict(env.get_state(2)) == rules.to_dict(state)
    obs, _, _, _, _ = env.step(np.array([0, 0, 0, 0]))
    rules.apply(state, 0)
    assert rules.to_dict(env.get_state(2)) == rules.to_dict(state)
    assert np.array_equal(obs[2], rules.observe(state, rules.current_player(state)))
    over = rules.initial_state(np.random.default_rng(1))
    while not rules.is_terminal(over):
        rules.apply(over, 0)
    with pytest.raises(jericho_env.OptionError, match="over"):
        env.set_state(0, over)


def test_copy_false_hands_out_read_only_views_and_copy_true_new_arrays() -> None:
    env = jericho_env.make_batched("toy", 4, copy=False)
    obs, _, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match="read-only"):
        obs[0, 0] = 5.0
    obs2, *_ = env.step(np.zeros(4, dtype=np.int64))
    assert np.shares_memory(obs, obs2)
    env = jericho_env.make_batched("toy", 4, copy=True)
    obs, _, _ = env.reset(seed=0)
    obs2, *_ = env.step(np.zeros(4, dtype=np.int64))
    assert not np.shares_memory(obs, obs2)
    obs2[0, 0] = 5.0  # writable


def test_the_toy_games_kernels_equal_its_python_rules() -> None:
    counts = play_both("toy", {}, 2000, seed=0)
    assert counts["games"] == 2000 and counts["steps"] > 2000 * 3
    play_both("toy", {"pile": 20}, 500, seed=1)


def test_the_harness_catches_a_kernel_that_differs(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests import toy_batched

    real = toy_batched.ToyBatched.observe

    def off_by_a_bit(self: Any, states: np.ndarray, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        real(self, states, rows, seats, out)
        out[:, 10] = np.nextafter(out[:, 10], np.float32(1))

    monkeypatch.setattr(toy_batched.ToyBatched, "observe", off_by_a_bit)
    with pytest.raises(AssertionError, match="observation differs"):
        play_both("toy", {}, 10, seed=0)


def test_random_actions_are_legal_and_uniform_over_each_rows_legal_set() -> None:
    masks = np.zeros((3, 6), dtype=np.int8)
    masks[0, [1, 4]] = 1
    masks[1, [0, 2, 5]] = 1
    masks[2, 3] = 1
    rng = np.random.default_rng(0)
    picks = np.array([random_actions(masks, rng) for _ in range(3000)])
    assert all(masks[r, picks[:, r]].all() for r in range(3))
    for r, legal in enumerate([[1, 4], [0, 2, 5], [3]]):
        share = np.bincount(picks[:, r], minlength=6)[legal] / 3000
        assert np.allclose(share, 1 / len(legal), atol=0.04)


def test_the_kernel_shuffle_gives_every_order_about_equally_often() -> None:
    counts: dict[tuple[int, ...], int] = {}
    stream = row_seeds(np.random.default_rng(0), 1)
    values = np.empty(3, dtype=np.int64)
    for _ in range(6000):
        values[:] = [0, 1, 2]
        shuffle_prefix(values, 3, stream, 0)
        counts[tuple(values.tolist())] = counts.get(tuple(values.tolist()), 0) + 1
    assert set(counts) == set(permutations(range(3)))
    assert max(counts.values()) - min(counts.values()) < 200  # 1000 each; sd about 29


@pytest.mark.parametrize("game_id", jericho_env.GAME_IDS)
def test_compiled_true_says_why_when_a_game_has_no_kernels(game_id: str) -> None:
    cls = type(jericho_env.make_rules(game_id))
    if cls.batched is not None:
        assert jericho_env.make_batched(game_id, 2, compiled=True).compiled
    else:
        with pytest.raises(jericho_env.OptionError, match="no compiled kernels"):
            jericho_env.make_batched(game_id, 2, compiled=True)


def finished_games(game: str, options: dict[str, Any], seed: int, games: int) -> Any:
    """(final potentials, returns) of the games that end at each step of random play, until ``games`` ended."""
    env = jericho_env.make_batched(game, 16, potentials=True, **options)
    _, mask, _ = env.reset(seed=seed)
    rng, ended = np.random.default_rng(seed), 0
    while ended < games:
        _, mask, _, rewards, terminated = env.step(random_actions(mask, rng))
        done = np.flatnonzero(terminated)
        yield env.final_potentials[done], rewards[done]
        ended += len(done)


def test_grid_final_potentials_are_the_final_points_lead() -> None:
    """``potentials=True``: grid's final potential (points lead / 100), whose sign is the game's return."""
    margins: list[float] = []
    for final, won in finished_games("grid", {"board_size": 7}, 4, 40):
        np.testing.assert_array_equal(np.sign(final), won)  # more points wins
        np.testing.assert_allclose(final.sum(axis=1), 0.0)
        margins += final[:, 0].tolist()
    assert len(set(np.round(np.abs(margins), 2))) > 3 and max(np.abs(margins)) <= 1.0


def test_walls_margin_targets_are_the_lead_in_cards_won() -> None:
    """walls' final potential: a sole leader in cards won has won, a seat behind the leader has lost."""
    margins: list[float] = []
    for final, won in finished_games("walls", {"num_players": 4}, 5, 30):
        assert (won[final > 0] == 1.0).all() and (won[final < 0] < 0).all()
        assert ((final > 0).sum(axis=1) <= 1).all()  # at most one seat leads every other
        margins += final.ravel().tolist()
    assert len(set(margins)) > 10 and max(np.abs(margins)) <= 1.0


_HAMMER = """
import os, sys, time
from jericho_env.core import kernels  # locks Numba's disk cache when Numba is installed
from numba.core.caching import IndexDataCacheFile
folder, me, locked = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
if not locked:
    IndexDataCacheFile.save = IndexDataCacheFile.save.__wrapped__
cache = IndexDataCacheFile(folder, "f-1.py311", ("source", 1))
open(os.path.join(folder, me + ".ready"), "w").close()
deadline = time.monotonic() + 60
while not all(os.path.exists(os.path.join(folder, p + ".ready")) for p in "ab") and time.monotonic() < deadline:
    time.sleep(0.001)  # both start together
for i in range(300):
    cache.save(f"{me}-{i}", f"{me}-{i}")
"""


def _clashes(folder: Any, locked: bool) -> int:
    """Two processes saving their own keys into one function's cache at once; the entries whose data is another's."""
    import subprocess
    import sys

    from numba.core.caching import IndexDataCacheFile

    argv = [sys.executable, "-c", _HAMMER, str(folder)]
    procs = [subprocess.Popen([*argv, me, "1" if locked else "0"]) for me in ("a", "b")]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    cache = IndexDataCacheFile(str(folder), "f-1.py311", ("source", 1))
    index = cache._load_index()
    return sum(cache._load_data(name) != key for key, name in index.items())


def test_numbas_disk_cache_keeps_each_signature_to_its_own_code_when_processes_compile_at_once(tmp_path: Any) -> None:
    """Numba's cache names each signature's code file in an index; two processes adding entries at once can
    leave the index naming the other's code (numba issue #4807). Under the lock every entry keeps its own."""
    (tmp_path / "locked").mkdir()
    assert _clashes(tmp_path / "locked", locked=True) == 0
    # the race is real: without the lock it shows (7-26 of 600 entries in six tries here; up to three tries, since
    # two processes may by chance not overlap)
    bare = [tmp_path / f"bare{k}" for k in range(3)]
    assert any(folder.mkdir() or _clashes(folder, locked=False) > 0 for folder in bare)


def test_a_games_row_functions_compile_when_first_used_not_when_imported() -> None:
    import jericho_env.games.castles.batched as castles
    import jericho_env.games.grid.batched as grid
    import jericho_env.games.walls.batched as walls
    from jericho_env.core.kernels import compiled_rows

    for module in (castles, grid, walls):  # plain functions until a game asks for its kernels
        assert not any(hasattr(f, "signatures") for f in module._ROW_FUNCTIONS)
    rows = compiled_rows(castles._ROW_FUNCTIONS, castles.DTYPE, castles.PARAMS)
    assert [len(f.signatures) for f in rows] == [1] * 5
    assert compiled_rows(castles._ROW_FUNCTIONS, castles.DTYPE, castles.PARAMS) is rows  # compiled once a process
