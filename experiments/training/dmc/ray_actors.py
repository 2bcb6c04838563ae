"""Deep Monte-Carlo's actors on Ray (``--backend ray``): ``--actors`` Ray actors that play while the learner, in the
command's process, learns (docs/ray.md, "Deep Monte-Carlo on Ray")."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from experiments.play.backends import Backend, BackendError, cluster_cpus, ray_session
from experiments.training.dmc.actors import Actors, ReplayBuffer, one_blas_thread


class FinishedGames:
    """A remote actor's positions until their game ends (``Actors`` adds and labels here as into a ReplayBuffer)."""

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

    def label(self, serials: np.ndarray, targets: np.ndarray) -> None:
        """The targets of positions whose game ended (each position is labelled once)."""
        self.done.append((np.asarray(serials, np.int64), np.asarray(targets, np.float32)))

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
    """One Ray actor (also usable in-process): a network copy and ``Actors`` writing into its ``FinishedGames``."""

    def __init__(self, cfg: Any, seed: Any) -> None:
        import torch

        from agents.dmc import build_network

        torch.set_num_threads(1)
        one_blas_thread()
        self.network = build_network(cfg.game, cfg.options, cfg.net, cfg.features, cfg.prior)
        self.network.eval()
        self.staging = FinishedGames(self.network.stored_width)
        self.actors = Actors(cfg, self.staging, seed)

    def play(self, weights: dict[str, np.ndarray], rounds: int) -> dict[str, Any]:
        """``rounds`` steps of every game with ``weights``; the positions whose games ended, and the counters."""
        import torch

        t0 = time.perf_counter()
        self.network.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})  # Ray's arrays are read-only
        steps, games = self.actors.steps, self.actors.games
        positions = self.actors.play(self.network.plan(), rounds)
        obs, actions, targets = self.staging.take()
        return {"obs": obs, "actions": actions, "targets": targets, "positions": positions,
                "steps": self.actors.steps - steps, "games": self.actors.games - games,
                "seconds": time.perf_counter() - t0}  # fmt: skip


class RayActors:
    """The learner's side: the Ray actors, the weights they play with, and their phases as they come back."""

    def __init__(self, ray: Any, cfg: Any, network: Any, buffer: ReplayBuffer, session: int, count: int,
                 backend: Backend, overlap: bool = True) -> None:  # fmt: skip
        self.ray, self.buffer, self.rounds, self.backend, self.overlap = ray, buffer, cfg.rounds, backend, overlap
        self.count, self.envs = count, cfg.envs
        remote = ray.remote(ActorWorker).options(num_cpus=1, max_restarts=backend.retries,
                                                 max_task_retries=backend.retries)  # fmt: skip
        self.workers = [remote.remote(cfg, [cfg.seed, session, 2, i]) for i in range(count)]
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


@contextlib.contextmanager
def ray_actors(cfg: Any, network: Any, buffer: ReplayBuffer, session: int, backend: Backend,
               actors: int | None) -> Iterator[RayActors]:  # fmt: skip
    """Ray connected (``ray_session``: a local Ray gets ``actors`` CPUs, default this machine's), its actors started."""
    with ray_session(backend, actors or os.cpu_count() or 1) as ray:
        cpus = cluster_cpus(ray)
        count = actors or max(1, cpus - 1)  # the cluster's CPUs minus one for the learner
        if count > cpus:
            raise ValueError(f"--actors {count}: the Ray cluster has {cpus} CPU(s), and each actor takes one")
        source = RayActors(ray, cfg, network, buffer, session, count, backend)
        try:
            yield source
        finally:
            source.close()
