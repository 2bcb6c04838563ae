"""``SelfPlayVecEnv``: the batched self-play games as a Stable-Baselines3 ``VecEnv`` with action masks.

Needs the ``train`` extra (stable-baselines3, sb3-contrib). MaskablePPO reads the masks through
``env_method("action_masks")``, which this class answers from the batch without a per-game call::

    from sb3_contrib import MaskablePPO
    from jericho_env.envs.sb3 import SelfPlayVecEnv

    venv = SelfPlayVecEnv("castles", num_envs=64, opponents=["random"], seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=1024)
    model.learn(100_000)

Opponents are batch policies (``jericho_env.envs.selfplay``); ``agents.batch.make_batch_policy`` builds
one for any agent of the ``agents`` package, and ``add_opponent`` grows the pool during training.
``hint`` (with ``hint_size``) appends floats computed from the learners' observations and masks, as
the prior of ``agents.prior`` needs; without it the observation is the game's own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import cloudpickle
import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvStepReturn

from jericho_env.core.rules import IllegalActionError
from jericho_env.envs.selfplay import SelfPlayVector, checked_actions
from jericho_env.processes import Worker, WorkerLostError, context, next_command


class _MaskedVecEnv(VecEnv):
    """What both vec envs answer alike: the masks by ``env_method``, no wrappers, SB3's indices."""

    def action_masks(self) -> np.ndarray:
        raise NotImplementedError

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **kw: Any) -> list[Any]:
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":  # what sb3-contrib's get_action_masks asks, once per step
            return list(self.action_masks()[idx])
        result = getattr(self, method_name)(*method_args, **kw)
        return [result] * len(idx)

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return [False] * len(self._get_indices(indices))

    def _get_indices(self, indices: VecEnvIndices) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return list(indices)


class SelfPlayVecEnv(_MaskedVecEnv):
    """A Stable-Baselines3 ``VecEnv`` over ``SelfPlayVector`` (one learner seat per game)."""

    def __init__(
        self,
        game_id: str,
        num_envs: int,
        opponents: Any | Sequence[Any] = "random",
        seat: int | str = "random",
        seed: int | None = None,
        hint: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
        hint_size: int = 0,
        shaping: float = 0.0,
        **options: Any,
    ) -> None:
        self.vector = SelfPlayVector(
            game_id, num_envs, opponents=opponents, seat=seat, seed=seed, shaping=shaping, **options
        )
        info = self.vector.rules.info
        if (hint is None) != (hint_size == 0):
            raise ValueError("hint and hint_size go together: a hint callable and the number of floats it appends")
        self.hint, self.hint_size = hint, int(hint_size)
        obs_space = gym.spaces.Box(0.0, 1.0, (info.observation_size + self.hint_size,), dtype=np.float32)
        super().__init__(num_envs, obs_space, gym.spaces.Discrete(info.num_actions))
        self.rules = self.vector.rules
        self._actions: np.ndarray | None = None
        if seed is not None:  # the seeds of the first reset, kept where SB3's VecEnv keeps them (as seed() sets them)
            self.seed(seed)

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        obs, masks = self.vector.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        return self._hinted(obs, masks)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        assert self._actions is not None, "step_async() first"
        obs, rewards, dones, infos = self.vector.step(self._actions)
        self._actions = None
        if self.hint is not None:
            obs = self._hinted(obs, self.vector.action_masks())
            for i in np.flatnonzero(dones):  # a finished game has no move to hint: zeros, as PriorHintEnv does
                terminal = infos[i]["terminal_observation"]
                infos[i]["terminal_observation"] = np.concatenate([terminal, np.zeros(self.hint_size, np.float32)])
        return obs, rewards, dones, infos

    def _hinted(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The learners' observations with the hint floats appended (unchanged without a hint)."""
        if self.hint is None:
            return obs
        return np.concatenate([obs, self.hint(obs, masks).astype(np.float32, copy=False)], axis=1)

    def seed(self, seed: int | None = None) -> Sequence[int | None]:  # type: ignore[override]
        """Seed game ``i`` with ``seed + i`` at the next reset."""
        if seed is None:
            seed = int(np.random.randint(0, 2**31 - 1))
        self._seeds = [seed + i for i in range(self.num_envs)]
        return self._seeds

    def close(self) -> None:
        pass

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, (num_envs, num_actions) bool."""
        return self.vector.action_masks()

    def add_opponent(self, policy: Any, max_added: int | None = None) -> None:
        """Add a batch policy to the opponent pool (see ``SelfPlayVector.add_opponent``)."""
        self.vector.add_opponent(policy, max_added)

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        value = getattr(self.vector, attr_name)
        return [value] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.vector, attr_name, value)

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or hasattr(self.vector, attr_name)


def shard_sizes(num_envs: int, shards: int) -> list[int]:
    """``num_envs`` games split over ``shards`` as evenly as possible, the first shards taking the remainder."""
    if not isinstance(shards, (int, np.integer)) or isinstance(shards, bool) or not 1 <= shards <= num_envs:
        raise ValueError(f"shards must be an int in 1..{num_envs} (one game per shard at least), got {shards!r}")
    q, r = divmod(int(num_envs), int(shards))
    return [q + (k < r) for k in range(int(shards))]


def _shard_worker(conn: Any, make_shard: Any, index: int) -> None:
    """A remote shard's loop: build the shard, then answer the parent's commands until ``close``.

    Started by ``jericho_env.processes`` (which ends it with its parent and has it ignore Ctrl-C: the
    training process handles Ctrl-C, saving a checkpoint and closing the shards); it also ends when the
    parent closes its pipe.
    """
    import traceback

    try:
        venv = cloudpickle.loads(make_shard)(index)
    except BaseException:  # reported to the parent, which raises
        conn.send(("error", traceback.format_exc()))
        return
    conn.send(("ok", (venv.num_envs, venv.observation_space, venv.action_space)))
    while True:
        message = next_command(conn)
        if message is None:  # the parent is gone
            return
        cmd, arg = message
        try:
            if cmd == "close":
                venv.close()
                conn.send(("ok", None))
                return
            if cmd == "reset":
                obs = venv.reset()
                conn.send(("ok", (obs, venv.action_masks())))
            elif cmd == "step":
                venv.step_async(arg)
                obs, rewards, dones, infos = venv.step_wait()
                conn.send(("ok", (obs, rewards, dones, infos, venv.action_masks())))
            elif cmd == "seed":
                conn.send(("ok", venv.seed(arg)))
            elif cmd == "add_opponent":
                policy, max_added = arg
                policy = cloudpickle.loads(policy)
                if hasattr(policy, "for_shard"):
                    policy = policy.for_shard(index)
                venv.add_opponent(policy, max_added)
                conn.send(("ok", None))
            elif cmd == "describe":
                describe = getattr(getattr(venv, "rules", None), "describe_action", None)
                conn.send(("ok", describe(arg) if describe is not None else f"action {arg}"))
            elif cmd == "call":
                name, args, kwargs = arg
                conn.send(("ok", getattr(venv, name)(*args, **kwargs)))
            else:
                raise ValueError(f"unknown command {cmd!r}")
        except BaseException:  # the shard stays up; the parent raises the error
            conn.send(("error", traceback.format_exc()))


# ``close`` waits this long (seconds) for each worker's answer and end, then kills it: closing never hangs.
CLOSE_SECONDS = 10.0


class ShardedVecEnv(_MaskedVecEnv):
    """One ``VecEnv`` over several shards of games: shard 0 in this process, the others in worker processes.

    ``make_shard(k)`` builds shard ``k`` (a ``SelfPlayVecEnv``, or any ``VecEnv`` with ``action_masks``)
    of ``sizes[k]`` games; it runs in the worker that owns the shard, so it is sent there with
    cloudpickle (a closure is fine) and may build opponents, hints and tables itself. Games are numbered
    shard after shard. On a step, the workers' shards play their games while this process plays shard 0,
    so on two cores the games and opponents of a step run side by side; the learner's forward pass and
    update stay in this process. With one shard nothing is started and this is shard 0.

    ``local=False`` puts every shard in a worker of its own, this process playing none, and opens the
    shards to stepping one at a time (``parts``, ``step_part_async``, ``step_part_wait``): the learner
    can then compute the moves of one shard while the others play theirs (``experiments.training.ppo.model``'s
    pipelined rollouts). Any other command first collects the answers of the shards still playing
    (``step_part_wait`` then returns them).

    Seeding keeps the numbering: ``seed(s)`` seeds game ``i`` with ``s + i`` whatever shard holds it, so
    build shard ``k`` with ``seed + sum(sizes[:k])`` (``SelfPlayVecEnv`` seeds game ``j`` with ``seed + j``),
    and with deterministic opponents the sharded games are those of one ``SelfPlayVecEnv`` of all the games.

    Actions are checked against the masks of every shard before any shard moves: an illegal action
    raises ``IllegalActionError`` and no game changes (``step_part_async`` checks its own shard's). An
    error in a worker is raised here with the worker's traceback. ``add_opponent`` sends the policy to
    every shard (with cloudpickle); a policy with a ``for_shard(k)`` method is replaced by what it
    returns in shard ``k`` > 0 (so copies do not share one random stream).

    Workers start, are waited for and end as ``jericho_env.processes`` says: ``start_method`` (default
    ``forkserver``, else ``spawn``; ``fork`` on request), the fork server importing ``preload`` as well as
    this module; a worker that dies, or uses no CPU for ``silence`` seconds while this process waits for it,
    raises ``WorkerLostError`` naming its shard and how it ended, and every other worker is ended with it (the
    vec env is closed); workers end with this process however it ends (``kill -9`` included).
    """

    def __init__(
        self,
        make_shard: Callable[[int], Any],
        sizes: Sequence[int],
        start_method: str | None = None,
        local: bool = True,
        preload: Sequence[str] = (),
        silence: float | None = None,
    ) -> None:
        self.sizes = [int(s) for s in sizes]
        if not self.sizes or min(self.sizes) < 1:
            raise ValueError(f"sizes must be one positive number of games per shard, got {list(sizes)!r}")
        self.local: Any = make_shard(0) if local else None
        if self.local is not None and self.local.num_envs != self.sizes[0]:
            raise ValueError(f"make_shard(0) built {self.local.num_envs} games, sizes[0] is {self.sizes[0]}")
        self.offsets = np.cumsum([0, *self.sizes]).tolist()
        self.first_worker = 1 if local else 0  # the shard of self._workers[0]
        self._parts = [slice(self.offsets[k], self.offsets[k + 1]) for k in range(len(self.sizes))]
        payload = cloudpickle.dumps(make_shard)
        self._workers: list[Worker] = []
        self._closed = False
        self._lost: WorkerLostError | None = None
        self._pending: dict[int, Any] = {}  # shard -> None (its step's answer not read yet) or the answer
        spaces = None
        try:
            ctx = context(start_method, ("jericho_env.envs.sb3", *preload))
            for k in range(self.first_worker, len(self.sizes)):
                worker = Worker(ctx, _shard_worker, (payload, k), f"shard {k}'s worker", silence)
                worker.expect()  # its shard built: what it sends first
                self._workers.append(worker)
            for k, conn in enumerate(self._workers, start=self.first_worker):
                built = self._receive(conn)  # (games, observation space, action space)
                if built[0] != self.sizes[k]:
                    raise ValueError(f"make_shard({k}) built {built[0]} games, sizes[{k}] is {self.sizes[k]}")
                spaces = spaces or built[1:]
        except BaseException:
            self.close()
            raise
        if self.local is not None:
            spaces = (self.local.observation_space, self.local.action_space)
        assert spaces is not None
        super().__init__(sum(self.sizes), *spaces)
        assert isinstance(self.action_space, gym.spaces.Discrete)
        self._masks = np.zeros((self.num_envs, int(self.action_space.n)), dtype=np.bool_)
        self._actions: np.ndarray | None = None

    # ------------------------------------------------------------------ messages
    @property
    def _procs(self) -> list[Any]:
        """The workers' processes, shard after shard."""
        return [w.proc for w in self._workers]

    def _send(self, worker: Worker, message: tuple[str, Any]) -> None:
        if self._lost is not None:
            raise self._lost
        try:
            worker.send(message)
        except WorkerLostError as e:
            self._lose(e)

    def _receive(self, worker: Worker) -> Any:
        if self._lost is not None:
            raise self._lost
        try:
            status, value = worker.receive()
        except WorkerLostError as e:
            self._lose(e)
        if status == "error":
            raise RuntimeError(f"a shard's worker failed:\n{value}")
        return value

    def _lose(self, error: WorkerLostError) -> NoReturn:
        """A worker is lost: end every worker (the games cannot go on without its shard), raise the first loss."""
        if self._lost is None:
            self._lost = error
            for w in self._workers:
                w.kill()
            self.close()
        raise self._lost

    def _conn(self, shard: int) -> Worker:
        return self._workers[shard - self.first_worker]

    def _settle(self) -> None:
        """Read the answers of the shards still playing a step (kept for ``step_part_wait``)."""
        for k in [k for k, answer in self._pending.items() if answer is None]:
            try:
                self._pending[k] = ("ok", self._receive(self._conn(k)))
            except BaseException as e:  # raised by step_part_wait(k)
                self._pending[k] = ("error", e)

    def _gather(self, local: Callable[[], Any]) -> list[Any]:
        """Run ``local`` here while the workers work, then every worker's answer: [local, shard 1, ...].

        Without a local shard the list holds the workers' answers only. Every answer is read even when
        one fails, so no stale answer is left for the next command; then the first error is raised.
        """
        results: list[Any] = []
        error: BaseException | None = None
        jobs: list[Callable[[], Any]] = [functools.partial(self._receive, w) for w in self._workers]
        if self.local is not None:
            jobs.insert(0, local)
        for job in jobs:
            try:
                results.append(job())
            except BaseException as e:  # raised below, once every worker has answered
                if error is None:
                    error = e
                results.append(None)
        if error is not None:
            raise error
        return results

    def _all(self, cmd: str, arg: Any, local: Callable[[], Any], keep: bool = True) -> list[Any]:
        """Send ``cmd`` to every worker, run ``local`` here meanwhile, then gather: [local, shard 1, ...].

        The answers of shards still playing a step are read first and kept for ``step_part_wait``, or
        dropped unless ``keep`` (a reset starts every game again).
        """
        self._settle()
        if not keep:
            self._pending.clear()
        for w in self._workers:
            self._send(w, (cmd, arg))
        return self._gather(local)

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> np.ndarray:
        if self._seeds and self._seeds[0] is not None:
            self.seed(self._seeds[0])
        self._reset_seeds()

        def here() -> tuple[np.ndarray, np.ndarray]:
            return self.local.reset(), self.local.action_masks()

        parts = self._all("reset", None, here, keep=False)
        self._masks = np.concatenate([m for _, m in parts])
        return np.concatenate([o for o, _ in parts])

    def _describe(self) -> Callable[[int], str] | None:
        if self.local is not None:
            return getattr(getattr(self.local, "rules", None), "describe_action", None)
        return self._remote_describe

    def _remote_describe(self, action: int) -> str:
        self._settle()
        self._send(self._workers[0], ("describe", action))
        return str(self._receive(self._workers[0]))

    def step_async(self, actions: np.ndarray) -> None:
        if self._pending:
            raise RuntimeError(f"shards {sorted(self._pending)} are playing a step of their own: step_part_wait first")
        acts = checked_actions(actions, self._masks, self._describe())
        for k, w in enumerate(self._workers, start=self.first_worker):
            self._send(w, ("step", acts[self.offsets[k] : self.offsets[k + 1]]))
        self._actions = acts

    def step_wait(self) -> VecEnvStepReturn:
        assert self._actions is not None, "step_async() first"
        here = self._actions[: self.sizes[0]]
        self._actions = None

        def local() -> tuple[Any, ...]:
            self.local.step_async(here)
            return (*self.local.step_wait(), self.local.action_masks())

        parts = self._gather(local)
        self._masks = np.concatenate([p[4] for p in parts])
        infos: list[dict[str, Any]] = [info for p in parts for info in p[3]]
        return (
            np.concatenate([p[0] for p in parts]),
            np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]),
            infos,
        )

    # ------------------------------------------------------------------ one shard at a time (local=False)
    @property
    def parts(self) -> list[slice]:
        """The games of each shard (``local=False``): ``step_part_async(k, ...)`` steps ``parts[k]``."""
        return [self._part(k) for k in range(len(self._parts))]

    def _part(self, k: int) -> slice:
        if self.local is not None:
            raise RuntimeError("parts are stepped one at a time only without a local shard (local=False)")
        return self._parts[k]

    def step_part_async(self, k: int, actions: np.ndarray) -> None:
        """Send shard ``k`` its games' actions (checked against their masks first); it plays them meanwhile."""
        part = self._part(k)
        if k in self._pending:
            raise RuntimeError(f"shard {k} is still playing its last step: step_part_wait({k}) first")
        if self._actions is not None:
            raise RuntimeError("a whole step is under way: step_wait() first")
        try:
            acts = checked_actions(actions, self._masks[part], self._describe())
        except IllegalActionError as e:  # its games numbered as in the whole vec env
            raise IllegalActionError(
                f"shard {k} (games {part.start}..{part.stop - 1}, counted from 0 here): {e}"
            ) from None
        self._send(self._conn(k), ("step", acts))
        self._pending[k] = None

    def step_part_wait(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]], np.ndarray]:
        """Shard ``k``'s answer to its step: (observations, rewards, dones, infos, masks) of its games."""
        if k not in self._pending:
            raise RuntimeError(f"shard {k} has no step under way: step_part_async({k}, actions) first")
        answer = self._pending.pop(k)
        if answer is None:
            answer = ("ok", self._receive(self._conn(k)))
        if answer[0] == "error":
            raise answer[1]
        obs, rewards, dones, infos, masks = answer[1]
        self._masks[self._parts[k]] = masks
        return obs, rewards, dones, infos, masks

    def seed(self, seed: int | None = None) -> Sequence[int | None]:  # type: ignore[override]
        """Seed game ``i`` with ``seed + i`` at the next reset, whatever shard holds it."""
        if seed is None:
            seed = int(np.random.randint(0, 2**31 - 1))
        self._settle()
        self._pending.clear()  # the games start again at the next reset
        for k, w in enumerate(self._workers, start=self.first_worker):
            self._send(w, ("seed", seed + self.offsets[k]))
        self._gather(lambda: self.local.seed(seed))
        return [seed + i for i in range(self.num_envs)]

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for k, w in enumerate(self._workers, start=self.first_worker):
            if w.lost is not None or w.proc.exitcode is not None:
                continue
            try:  # a worker that does not answer within CLOSE_SECONDS is killed below
                if self._pending.get(k, ()) is None and w.poll(CLOSE_SECONDS):
                    w.conn.recv()  # its step's answer, unread
                w.conn.send(("close", None))
                if w.poll(CLOSE_SECONDS):
                    w.conn.recv()
            except (EOFError, OSError):
                pass
        self._pending.clear()
        for w in self._workers:
            w.close(None, CLOSE_SECONDS)
        if self.local is not None:
            self.local.close()

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions of every shard, (num_envs, num_actions) bool."""
        return self._masks.copy()

    def add_opponent(self, policy: Any, max_added: int | None = None) -> None:
        """Add ``policy`` to every shard's pool (see the class docstring on ``for_shard``)."""
        payload = cloudpickle.dumps(policy)
        self._all("add_opponent", (payload, max_added), lambda: self.local.add_opponent(policy, max_added))

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        if self.local is not None:
            value = self.local.get_attr(attr_name, [0])[0]
        else:
            value = self._all("call", ("get_attr", (attr_name, [0]), {}), lambda: None)[0][0]
        return [value] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        self._all("call", ("set_attr", (attr_name, value), {}), lambda: self.local.set_attr(attr_name, value))

    def has_attr(self, attr_name: str) -> bool:
        if self.local is not None:
            return attr_name == "action_masks" or self.local.has_attr(attr_name)
        return attr_name == "action_masks" or bool(self._all("call", ("has_attr", (attr_name,), {}), lambda: None)[0])

    def __del__(self) -> None:
        if not getattr(self, "_closed", True):
            self.close()
