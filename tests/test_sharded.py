"""``ShardedVecEnv``: the games of one ``SelfPlayVecEnv`` split over worker processes, the same games."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from jericho_env import IllegalActionError
from jericho_env.envs.sb3 import SelfPlayVecEnv, ShardedVecEnv, shard_sizes
from tests.helpers import alive, ends_within
from tests.test_selfplay import by_observation, first_legal, last_legal


def hint(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    return np.stack([observations.sum(axis=1), masks.sum(axis=1)], axis=1).astype(np.float32) / 100


def sharded(game: str, sizes: list[int], seed: int, opponents: list[Any], **options: Any) -> ShardedVecEnv:
    offsets = [sum(sizes[:k]) for k in range(len(sizes))]

    def make(k: int) -> SelfPlayVecEnv:
        return SelfPlayVecEnv(
            game, sizes[k], opponents=opponents, seed=seed + offsets[k], hint=hint, hint_size=2, **options
        )

    return ShardedVecEnv(make, sizes)


def same_step(a: tuple[Any, ...], b: tuple[Any, ...]) -> None:
    for x, y in zip(a[:3], b[:3], strict=True):
        assert np.array_equal(x, y)
    for p, q in zip(a[3], b[3], strict=True):
        assert p.keys() == q.keys()
        for key in p:
            if key == "terminal_observation":
                assert np.array_equal(p[key], q[key])
            elif key == "episode":
                assert (p[key]["r"], p[key]["l"]) == (q[key]["r"], q[key]["l"])
            else:
                assert p[key] == q[key]


@pytest.mark.parametrize(
    ("game", "options", "sizes"),
    [("castles", {}, [3, 2, 2]), ("walls", {"num_players": 4}, [4, 3]), ("grid", {"board_size": 11}, [3, 3])],
)
def test_the_shards_play_the_games_of_one_vec_env(game: str, options: dict[str, Any], sizes: list[int]) -> None:
    """Same seeds, deterministic opponents: the same observations, rewards, dones, infos and masks."""
    pool = [first_legal, last_legal, by_observation]
    whole = SelfPlayVecEnv(game, sum(sizes), opponents=pool, seed=40, hint=hint, hint_size=2, **options)
    split = sharded(game, sizes, 40, pool, **options)
    try:
        assert split.num_envs == whole.num_envs and split.observation_space == whole.observation_space
        assert np.array_equal(split.reset(), whole.reset())
        chooser = np.random.default_rng(1)
        ends = 0
        for step in range(250):
            masks = whole.action_masks()
            assert np.array_equal(split.action_masks(), masks)
            assert np.array_equal(np.stack(split.env_method("action_masks")), masks)
            actions = np.array([chooser.choice(np.flatnonzero(m)) for m in masks])
            if step == 100:  # an opponent added mid-run joins every shard's next games
                whole.add_opponent(first_legal, max_added=1)
                split.add_opponent(first_legal, max_added=1)
            result = whole.step(actions)
            same_step(split.step(actions), result)
            ends += int(result[2].sum())
        assert ends > sum(sizes)  # games ended and restarted in every shard
        split.seed(7)
        whole.seed(7)
        assert np.array_equal(split.reset(), whole.reset())
    finally:
        split.close()


def test_an_illegal_action_is_refused_before_any_shard_moves() -> None:
    split = sharded("castles", [2, 2], 3, [first_legal])
    try:
        split.reset()
        masks = split.action_masks()
        good = first_legal(None, masks)
        bad = good.copy()
        bad[3] = int(np.flatnonzero(~masks[3])[0])  # game 3 lives in the worker's shard
        with pytest.raises(IllegalActionError, match="game 3"):
            split.step(bad)
        with pytest.raises(ValueError, match="4 actions"):
            split.step(good[:3])
        assert np.array_equal(split.action_masks(), masks)
        whole = SelfPlayVecEnv("castles", 4, opponents=[first_legal], seed=3, hint=hint, hint_size=2)
        whole.reset()
        same_step(split.step(good), whole.step(good))  # nothing moved: the games continue as the unsplit ones
    finally:
        split.close()


def play(venv: ShardedVecEnv, steps: int) -> None:
    """``steps`` steps of every game's first legal action."""
    for _ in range(steps):
        venv.step(first_legal(None, venv.action_masks()))


def test_a_worker_error_is_raised_here_with_its_traceback() -> None:
    def broken(observations: Any, masks: np.ndarray) -> np.ndarray:
        raise ZeroDivisionError("the opponent broke")

    split = sharded("castles", [2, 2], 0, [first_legal])
    try:
        split.reset()
        split.add_opponent(broken)  # reaches the worker too; new games may draw it
        with pytest.raises((RuntimeError, ZeroDivisionError), match="the opponent broke"):
            play(split, 500)
    finally:
        split.close()

    def make(k: int) -> SelfPlayVecEnv:
        if k:
            raise OSError("no shard here")
        return SelfPlayVecEnv("castles", 2)

    with pytest.raises(RuntimeError, match="no shard here"):
        ShardedVecEnv(make, [2, 2])


def test_a_killed_worker_is_reported_as_such() -> None:
    split = sharded("castles", [2, 2], 0, [first_legal])
    try:
        split.reset()
        split._procs[0].kill()
        split._procs[0].join()
        with pytest.raises(RuntimeError, match=r"shard 1's worker \(pid \d+\) was killed by SIGKILL"):
            play(split, 2)
    finally:
        split.close()  # closing after a death is quiet


def test_shard_sizes_split_evenly_and_refuse_what_cannot_split() -> None:
    assert shard_sizes(64, 2) == [32, 32] and shard_sizes(7, 3) == [3, 2, 2] and shard_sizes(5, 1) == [5]
    for bad in (0, 6, 2.0, True):
        with pytest.raises(ValueError, match="shards"):
            shard_sizes(5, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="make_shard"):
        ShardedVecEnv(lambda k: SelfPlayVecEnv("castles", 3), [2])


def test_a_policy_for_another_shard_shares_the_network_but_not_the_random_stream() -> None:
    import torch

    from agents.batch import NetworkBatchPolicy

    class Flat(torch.nn.Module):
        def set_training_mode(self, mode: bool) -> None:
            pass

        def action_logits(self, obs: torch.Tensor) -> torch.Tensor:
            return torch.zeros(obs.shape[0], 50)

    policy = NetworkBatchPolicy(Flat(), seed=12)
    other = policy.for_shard(1)
    assert other.policy is policy.policy and other.name == policy.name
    obs, masks = np.zeros((200, 3), np.float32), np.ones((200, 50), bool)
    assert not np.array_equal(policy(obs, masks), other(obs, masks))
    again = NetworkBatchPolicy(Flat(), seed=12).for_shard(1)
    assert np.array_equal(again(obs, masks), NetworkBatchPolicy(Flat(), seed=12).for_shard(1)(obs, masks))


# ------------------------------------------------------------------------------------------- parent's death
# Linux only, as the package's CI: processes are read from /proc, and prctl is Linux's.
ORPHAN = """
import sys, time
from jericho_env import processes
from jericho_env.envs import sb3
processes.PARENT_DEATH_SIGNAL = {signal}
processes.PARENT_POLL_SECONDS = {poll}
venv = sb3.ShardedVecEnv(lambda k: sb3.SelfPlayVecEnv("castles", 1), [1, 1])
print(venv._procs[0].pid, flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize(
    ("signal", "poll"),
    [(True, None), pytest.param(False, 0.2, marks=pytest.mark.slow)],
    ids=["death-signal", "polling"],
)
def test_a_worker_ends_when_its_parent_is_killed(signal: bool, poll: float | None) -> None:
    """Each way on its own: the kernel's death signal (prctl), and the worker noticing it was reparented."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    code = ORPHAN.format(signal=signal, poll=poll)
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env, cwd=root)
    try:
        assert parent.stdout is not None
        worker = int(parent.stdout.readline())
        assert alive(worker)
    finally:
        parent.kill()  # SIGKILL: no handler, no atexit, no daemon clean-up runs in the parent
        parent.wait()
    assert ends_within(worker, 10), "the worker outlived its killed parent"


FORKED_AFTER_TORCH = """
import numpy as np, torch
from jericho_env.envs import sb3
torch.set_num_threads(2)
torch.ones(1000, 1000) @ torch.ones(1000, 1000)  # this process's OpenMP pool is up before the fork


def torch_opponent(observations, masks):
    torch.ones(4, 300) @ torch.ones(300, 64)  # a small network's forward pass, in the worker
    return np.argmax(masks, axis=1)


venv = sb3.ShardedVecEnv(lambda k: sb3.SelfPlayVecEnv("castles", 2, opponents=[torch_opponent], seed=k), [2, 2])
venv.reset()
for _ in range(20):
    venv.step(np.argmax(venv.action_masks(), axis=1))
venv.close()
print("played")
"""


@pytest.mark.parametrize("method", ["forkserver", pytest.param("fork", marks=pytest.mark.slow)])
def test_a_worker_started_after_torch_ran_on_threads_still_runs_torch(method: str) -> None:
    """The default start and an explicit fork: a fork copies torch's OpenMP pool without its threads, and a
    worker that used that pool would wait forever (the worker sets one thread first)."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "2", "JERICHO_START_METHOD": method}
    done = subprocess.run(
        [sys.executable, "-c", FORKED_AFTER_TORCH], capture_output=True, text=True, env=env, cwd=root, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "played", done.stderr[-2000:]


def test_closing_a_worker_that_never_answers_kills_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from jericho_env.envs import sb3

    flag = tmp_path / "stuck"

    class StuckOnceFlagged(SelfPlayVecEnv):
        def step_wait(self) -> Any:
            while flag.exists():  # a worker stuck for good, as one waiting in native code
                time.sleep(0.05)
            return super().step_wait()

    monkeypatch.setattr(sb3, "CLOSE_SECONDS", 0.5)
    split = ShardedVecEnv(lambda k: StuckOnceFlagged("castles", 2, opponents=[first_legal], seed=k), [2], local=False)
    split.reset()
    flag.touch()
    split.step_async(first_legal(None, split.action_masks()))  # the worker never answers
    start = time.monotonic()
    split.close()
    assert time.monotonic() - start < 5 and not split._procs[0].is_alive()
