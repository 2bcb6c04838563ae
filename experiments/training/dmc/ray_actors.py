"""Deep Monte-Carlo's actors on Ray (``python -m experiments.dmc GAME --backend ray``): more cores, more actors.

The learner stays in the command's process; ``--actors N`` Ray actors (one CPU each, anywhere on the
cluster) each own an ``experiments.training.dmc.actors.Actors`` of ``--envs`` games and its own seed
(``[seed, session, 2, i]``). A phase of actor ``i``: it receives the network's weights (numpy arrays,
``ray.put`` once per learner phase and shared by every actor sent out after it), loads them into its own
copy of the network (built once, with the prior's scorer where ``--prior`` asks for one: the scorer holds
compiled code, so weights travel, not the numpy plan), plays ``--rounds`` steps of every game epsilon-greedy,
and returns the positions whose games ended (stored rows as float16, actions, targets as the local actors
label them) with its counters (agent-steps, positions recorded, games finished, seconds). Positions of
games still running stay in the actor (``FinishedGames``) until their game ends in a later phase.

The learner takes the phases as they come (``ray.wait``): it sends the actor straight back to play with the
latest weights it has put (so the actor plays while the learner learns: the actor's weights are one learner
phase older than with ``--backend local``), adds the positions to its ``ReplayBuffer`` (added and labelled at
once), learns as the local loop does (``replay_ratio`` positions learned per position generated), then puts
the new weights. ``positions_generated``, ``agent_steps`` and ``games`` add up the actors' counters;
``seconds_actor`` is the actors' seconds summed (actor-seconds: above the wall time with 2 actors or more);
``seconds_learner`` the learner's (adding to the buffer, updates, putting the weights). The learner's wait for
the next phase is in neither. A phase still running when the budget is reached is dropped (not counted).

Ray is started as the tournaments' backend starts it (``experiments.play.backends.ray_session``): the
cluster at ``--ray-address`` (or ``RAY_ADDRESS``), the caller's connection, else a local Ray of ``--actors``
CPUs (default: this machine's CPUs, one of them left to the learner). An actor whose process dies is restarted
by Ray (``Backend.retries`` times, with its seed: its games restart); past that the command stops with an
error and the run continues from its last checkpoint with ``--resume``. Ray itself is imported only here and
only for ``--backend ray`` (through ``experiments.play.backends``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from experiments.play.backends import BACKENDS, Backend, BackendError, cluster_cpus, ray_session
from experiments.training.dmc.actors import Actors, ReplayBuffer


def add_flags(parser: argparse.ArgumentParser) -> None:
    """``--backend local|ray``, ``--ray-address`` and ``--actors`` (``--backend`` None when not given: --resume)."""
    from experiments.cli import positive_int

    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default=None,
        help="where the actors run: local (this process, the default) or ray (--actors Ray actors, on "
        "--ray-address or a local Ray; docs/ray.md)",
    )
    parser.add_argument(
        "--ray-address",
        default=None,
        metavar="HOST:PORT",
        help="a running Ray cluster (default: Ray's RAY_ADDRESS, else a local Ray with --actors CPUs)",
    )
    parser.add_argument(
        "--actors",
        type=positive_int,
        default=None,
        metavar="N",
        help="Ray actors, each playing --envs games (--backend ray; default: the Ray cluster's CPUs minus one "
        "for the learner, at least 1; a local Ray: this machine's CPUs minus one)",
    )


def backend_of(name: str | None, address: str | None, actors: int | None) -> Backend:
    """The ``Backend`` of the flags (``name`` None: local); ``ValueError`` where they disagree."""
    backend = Backend(name or "local", address)
    if actors is not None and not backend.is_ray:
        raise ValueError(f"--actors {actors} is for --backend ray, not {backend.name}")
    return backend


class FinishedGames:
    """A remote actor's positions until their game ends: ``Actors`` adds and labels here as into a ReplayBuffer;
    ``take`` hands over the labelled positions (in the order they were added) and forgets them."""

    def __init__(self, width: int) -> None:
        self.added = 0  # positions ever added (the next serial number)
        self.obs = [np.zeros((0, width), np.float16)]  # chunks of positions not handed over yet, by serial
        self.actions = [np.zeros(0, np.int64)]
        self.serials = [np.zeros(0, np.int64)]
        self.done: list[tuple[np.ndarray, np.ndarray]] = []  # (serials, targets) labelled since the last take

    def add(self, obs: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Keep positions whose target is not known yet; returns their serial numbers."""
        serials = self.added + np.arange(len(actions), dtype=np.int64)
        self.added += len(actions)
        self.obs.append(np.asarray(obs, dtype=np.float16))  # what the learner's ReplayBuffer stores
        self.actions.append(np.asarray(actions, dtype=np.int64))
        self.serials.append(serials)
        return serials

    def label(self, serials: np.ndarray, targets: np.ndarray) -> int:
        """The targets of positions whose game ended (each position is labelled once)."""
        self.done.append((np.asarray(serials, np.int64), np.asarray(targets, np.float32)))
        return len(serials)

    def take(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(stored rows float16, actions, targets) of the positions labelled since the last take, by serial."""
        obs, actions, serials = (np.concatenate(x) for x in (self.obs, self.actions, self.serials))
        done = np.concatenate([np.zeros(0, np.int64), *(s for s, _ in self.done)])
        targets = np.concatenate([np.zeros(0, np.float32), *(t for _, t in self.done)])
        order = np.argsort(done, kind="stable")
        at = np.searchsorted(serials, done[order])
        keep = np.ones(len(serials), bool)
        keep[at] = False
        self.obs, self.actions, self.serials = [obs[keep]], [actions[keep]], [serials[keep]]
        self.done = []
        return obs[at], actions[at], targets[order]


def network_state(network: Any) -> dict[str, np.ndarray]:
    """The network's weights as numpy arrays (what is sent to the actors)."""
    return {k: v.detach().cpu().numpy().copy() for k, v in network.state_dict().items()}


class ActorWorker:
    """One Ray actor (also usable in-process): its own network copy and ``Actors``; ``play`` is one phase.

    ``make_actors(cfg, buffer, seed)`` builds the ``Actors`` as the local backend does
    (``experiments.training.dmc.learner.make_actors``, sent by reference), writing into this actor's ``FinishedGames``.
    """

    def __init__(self, cfg: Any, make_actors: Callable[[Any, Any, Any], Actors], seed: Any) -> None:
        import torch

        from agents.dmc import build_network

        torch.set_num_threads(1)
        try:  # numpy's BLAS on one thread, as the local actors (experiments.training.dmc.learner.one_blas_thread)
            from threadpoolctl import threadpool_limits

            threadpool_limits(1, user_api="blas")
        except ImportError:  # pragma: no cover - threadpoolctl comes with the train extra
            pass
        self.network = build_network(cfg.game, cfg.options, cfg.net, cfg.features, cfg.prior)
        self.network.eval()
        self.staging = FinishedGames(self.network.stored_width)
        self.actors = make_actors(cfg, self.staging, seed)

    def play(self, weights: dict[str, np.ndarray], rounds: int) -> dict[str, Any]:
        """``rounds`` steps of every game with ``weights``; the positions whose games ended, and the counters."""
        import torch

        t0 = time.perf_counter()
        self.network.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})  # Ray's arrays are read-only
        steps, games = self.actors.steps, self.actors.games
        positions = self.actors.play(self.network.plan(), rounds)
        obs, actions, targets = self.staging.take()
        return {
            "obs": obs,
            "actions": actions,
            "targets": targets,
            "positions": positions,
            "steps": self.actors.steps - steps,
            "games": self.actors.games - games,
            "seconds": time.perf_counter() - t0,
        }


class RayActors:
    """The learner's side: the Ray actors, the weights they play with, and their phases as they come back."""

    def __init__(
        self,
        ray: Any,
        cfg: Any,
        make_actors: Callable[[Any, Any, Any], Actors],
        network: Any,
        buffer: ReplayBuffer,
        session: int,
        count: int,
        backend: Backend,
        overlap: bool = True,
    ) -> None:
        self.ray, self.buffer, self.rounds, self.backend, self.overlap = ray, buffer, cfg.rounds, backend, overlap
        self.count, self.envs = count, cfg.envs
        remote = ray.remote(ActorWorker).options(
            num_cpus=1, max_restarts=backend.retries, max_task_retries=backend.retries
        )
        self.workers = [remote.remote(cfg, make_actors, [cfg.seed, session, 2, i]) for i in range(count)]
        self.weights = ray.put(network_state(network))
        self.pending: dict[Any, int] = {}
        self.idle = list(range(count))
        self._send()

    def _send(self) -> None:
        """The idle actors to a phase with the latest weights."""
        for i in self.idle:
            self.pending[self.workers[i].play.remote(self.weights, self.rounds)] = i
        self.idle = []

    def collect(self) -> tuple[int, int, int, float, float]:
        """The next phase to finish, into the buffer: (positions, agent-steps, games, actor and learner seconds)."""
        ready, _ = self.ray.wait(list(self.pending), num_returns=1)
        i = self.pending.pop(ready[0])
        self.idle.append(i)
        if self.overlap:  # back to play at once, with the weights of the last learner phase
            self._send()
        phase = self._get(ready[0], i)
        t0 = time.perf_counter()
        serials = self.buffer.add(phase["obs"], phase["actions"])
        self.buffer.label(serials, phase["targets"])
        return phase["positions"], phase["steps"], phase["games"], phase["seconds"], time.perf_counter() - t0

    def refresh(self, network: Any) -> None:
        """Put the learner's new weights (once per learner phase); actors waiting for them go back to play."""
        self.weights = self.ray.put(network_state(network))
        self._send()

    def describe(self) -> dict[str, Any]:
        """What the session's record in training.json says of the actors."""
        return {"backend": "ray", "actors": self.count, "envs_per_actor": self.envs}

    def _get(self, ref: Any, i: int) -> dict[str, Any]:
        """A phase's result; an error raised in the actor is raised here, an actor lost for good is BackendError."""
        exc = self.ray.exceptions
        try:
            result: dict[str, Any] = self.ray.get(ref)
        except exc.RayTaskError as e:  # our code raised inside the actor: the same error, without Ray's wrapper
            cause = getattr(e, "cause", None)
            if isinstance(cause, BaseException):
                raise cause from None
            raise
        except (exc.RayError, ConnectionError) as e:  # its process or node died past the restarts
            lines = [line.strip() for line in str(e).splitlines() if line.strip()]
            if getattr(e, "actor_init_failed", False):  # our code raised while the actor was built: its last line
                raise BackendError(f"Ray actor {i} could not start: {lines[-1] if lines else e!r}") from None
            first = lines[0] if lines else ""
            raise BackendError(
                f"Ray actor {i} was lost after {self.backend.retries} restarts: {type(e).__name__}: {first}; "
                "the run is saved up to its last checkpoint (--resume continues it)"
            ) from None
        return result

    def close(self) -> None:
        """Stop the actors (a phase still running is dropped, its positions never counted)."""
        for worker in self.workers:
            self.ray.kill(worker)
        self.workers, self.pending = [], {}


def actor_count(ray: Any, actors: int | None) -> int:
    """``actors``, or the cluster's CPUs minus one for the learner (at least 1); ``ValueError`` if it cannot fit."""
    cpus = cluster_cpus(ray)
    count = actors or max(1, cpus - 1)
    if count > cpus:
        raise ValueError(f"--actors {count}: the Ray cluster has {cpus} CPU(s), and each actor takes one")
    return count


@contextlib.contextmanager
def ray_actors(
    cfg: Any,
    make_actors: Callable[[Any, Any, Any], Actors],
    network: Any,
    buffer: ReplayBuffer,
    session: int,
    backend: Backend,
    actors: int | None,
) -> Iterator[RayActors]:
    """Ray connected (``ray_session``: a local Ray gets ``actors`` CPUs, default this machine's), its actors started."""
    with ray_session(backend, actors or os.cpu_count() or 1) as ray:
        source = RayActors(ray, cfg, make_actors, network, buffer, session, actor_count(ray, actors), backend)
        try:
            yield source
        finally:
            source.close()
