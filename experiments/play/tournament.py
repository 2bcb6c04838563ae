"""Round-robin tournaments with paired, seat-swapped deals, Wilson intervals and Bradley–Terry ratings.

Every pair of agents plays the same deals (env seeds from the tournament seed and the deal index), each
deal in every seat arrangement: both seat orders in two-player games, else agent A alone in each seat
against n-1 copies of B. Two game loops play the same games: ``"batched"`` (``experiments.play.batched_games``)
and ``"sequential"`` (one game at a time through the AEC env, ``play_game``); their agents draw from
different random streams. Seeds never depend on the workers or the backend (local processes, or Ray tasks
that get the agents as JSON specs and checkpoint bytes: ``docs/ray.md``).
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import hashlib
import json
import math
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from experiments.play.backends import Backend, map_chunks
from experiments.play.deals import AgentSpec, GameRecord, agent_error, check_choice, derive_seed, pairings, seat_labels
from jericho_env.agent_plugins import choose_action
from jericho_env.envs.aec import JerichoEnv
from jericho_env.user_agents import agent_label, reset_agent


def play_game(
    env: JerichoEnv,
    seat_agents: Sequence[Any],
    env_seed: int,
    agent_seeds: Sequence[int],
    actions: list[int] | None = None,
    labels: Sequence[str] | None = None,
    forfeits: list[str] | None = None,
) -> tuple[list[float], int]:
    """Play one game in ``env`` with ``seat_agents[i]`` in seat i; return (returns by seat, steps).

    ``actions`` receives every action played and ``forfeits`` why an illegal action ended the game (the env's
    ``illegal_action="lose"``); an agent that raises stops the game with ``AgentError`` naming it (``labels``).
    """
    for agent, s in zip(seat_agents, agent_seeds, strict=True):
        reset_agent(agent, s)
    env.reset(seed=env_seed)
    steps = 0
    rules = env.rules
    while not rules.is_terminal(env.state):
        seat = rules.current_player(env.state)
        agent_id = env.possible_agents[seat]
        try:
            action = choose_action(seat_agents[seat], env, agent_id)
            env.step(action)
        except Exception as e:
            who = repr(labels[seat]) if labels else agent_label(seat_agents[seat])
            raise agent_error(f"agent {who} in seat {seat} (deal seed {env_seed}, move {steps + 1})", e) from e
        if actions is not None:
            actions.append(int(action))
        steps += 1
        why = env.infos[agent_id].get("illegal_action")
        if why:  # illegal_action="lose" ended the game
            if forfeits is not None:
                forfeits.append(f"{labels[seat] if labels else agent_id} (seat {seat}): {why}")
            return [float(env.rewards[a]) for a in env.possible_agents], steps
    return [float(r) for r in rules.returns(env.state)], steps


@dataclasses.dataclass
class Task:
    """Every game of one (focal, opponent, deal): one per arrangement."""

    focal: int
    opponent: int
    deal: int


def make_tasks(n_agents: int, n_players: int, deals: int) -> list[Task]:
    """The sequential loop's tasks: every deal of every pairing (``pairings``), in that order."""
    return [Task(i, j, d) for i, j in pairings(n_agents, n_players) for d in range(deals)]


LOOPS = ("batched", "sequential")
# what an agent's illegal action does in a tournament: the env's illegal_action option (jericho_env.envs.aec)
ILLEGAL = ("raise", "lose")


class _Worker:
    """Holds one env and the agents of a tournament inside one process."""

    def __init__(
        self, game_id: str, options: dict[str, Any], specs: Sequence[AgentSpec], seed: int, illegal: str
    ) -> None:
        self.env = JerichoEnv(game_id, illegal_action=check_choice("illegal", illegal, ILLEGAL), **options)
        self.n = self.env.rules.info.num_players
        self.specs = list(specs)
        self.seed = seed
        self.illegal = illegal
        # n copies of each agent at most (the field of B in an n-player game needs n-1 of them)
        self.pool: dict[int, list[Any]] = {}
        self.game_id, self.options = game_id, options

    def play(self, task: Any, kept: list[list[int]] | None = None) -> list[GameRecord]:
        """The games of a sequential ``Task`` or of a ``batched_games.BatchTask``; ``kept`` receives their actions."""
        return self.run(task, kept) if isinstance(task, Task) else self.batched.run(task, kept)

    @functools.cached_property
    def batched(self) -> Any:
        """The ``batched_games.BatchedWorker`` of this tournament (built on first use)."""
        from experiments.play.batched_games import BatchedWorker

        return BatchedWorker(
            self.game_id, self.options, self.specs, self.seed, rules=self.env.rules, illegal=self.illegal
        )

    def agents_of(self, index: int, count: int) -> list[Any]:
        have = self.pool.setdefault(index, [])
        spec = self.specs[index]
        while len(have) < count:  # an agent object: itself, then copies of it
            have.append(spec.build(self.game_id, self.options, fresh=bool(have)))
        return have[:count]

    def run(self, task: Task, kept: list[list[int]] | None = None) -> list[GameRecord]:
        """Every game of ``task``; ``kept`` (a list) receives each game's actions, in the order of the records."""
        records = []
        env_seed = derive_seed(self.seed, task.deal)
        for arr in range(self.n):  # the focal agent's seat
            labels = seat_labels(self.n, task.focal, task.opponent, arr)
            focal_agent = self.agents_of(task.focal, 1)[0]
            field = iter(self.agents_of(task.opponent, self.n - 1))
            seats = [focal_agent if i == task.focal else next(field) for i in labels]
            agent_seeds = [derive_seed(self.seed, task.focal, task.opponent, task.deal, arr, s) for s in range(self.n)]
            actions: list[int] = []
            forfeits: list[str] = []
            names = tuple(self.specs[i].label for i in labels)
            returns, length = play_game(self.env, seats, env_seed, agent_seeds, actions, names, forfeits)
            if kept is not None:
                kept.append(actions)
            records.append(
                GameRecord(
                    focal=self.specs[task.focal].label,
                    opponent=self.specs[task.opponent].label,
                    deal=task.deal,
                    arrangement=arr,
                    env_seed=env_seed,
                    seats=names,
                    returns=tuple(returns),
                    length=length,
                    illegal=forfeits[0] if forfeits else "",
                )
            )
        return records


def record_games(
    game_id: str,
    specs: Sequence[AgentSpec],
    seed: int,
    options: dict[str, Any],
    deals: int,
    loop: str = "sequential",
    batch: int | None = None,
    total_deals: int | None = None,
    illegal: str = "raise",
) -> list[tuple[GameRecord, list[int]]]:
    """The tournament's games of its first ``deals`` deals of every pairing, played again here, with their actions.

    Seeds depend only on the game and, in the batched loop, on its chunk of deals (``batch`` deals a chunk
    of ``total_deals``), so these are the tournament's own games; the batched loop plays the whole chunks.
    """
    worker = _Worker(game_id, dict(options), specs, seed, illegal)
    sequential = check_choice("loop", loop, LOOPS) == "sequential"
    tasks = make_loop_tasks(loop, len(specs), worker.n, deals if sequential else total_deals or deals, batch)
    tasks = [t for t in tasks if sequential or t.start < deals]
    out: list[tuple[GameRecord, list[int]]] = []
    for task in tasks:
        kept: list[list[int]] = []
        out += zip(worker.play(task, kept), kept, strict=True)
    return out if sequential else [game for game in in_game_order(tasks, out) if game[0].deal < deals]


def make_loop_tasks(loop: str, n_agents: int, n_players: int, deals: int, batch: int | None) -> list[Any]:
    """The tasks of the game ``loop``: ``make_tasks``, or ``make_batch_tasks`` of ``batch`` deals a chunk."""
    if check_choice("loop", loop, LOOPS) == "sequential":
        return make_tasks(n_agents, n_players, deals)
    from experiments.play.batched_games import DEFAULT_BATCH, check_batch, make_batch_tasks

    return make_batch_tasks(n_agents, n_players, deals, check_batch(DEFAULT_BATCH if batch is None else batch))


def in_game_order(tasks: Sequence[Any], games: Sequence[Any]) -> list[Any]:
    """``games`` (one per game of batched ``tasks``, in task order) in the order pairing, deal, arrangement."""
    pairing: dict[tuple[int, int], int] = {}
    keys = []
    for t in tasks:
        p = pairing.setdefault((t.focal, t.opponent), len(pairing))
        keys += [(p, deal, t.arrangement) for deal in range(t.start, t.stop)]
    if len(keys) != len(games):
        raise RuntimeError(f"{len(games)} games came back for the {len(keys)} of the tasks")
    return [games[i] for i in sorted(range(len(games)), key=keys.__getitem__)]


_worker: _Worker | None = None


def _one_thread() -> None:
    try:  # one thread per worker: processes, not threads, use the cores
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass


def _init_worker(game_id: str, options: dict[str, Any], specs: Sequence[AgentSpec], seed: int, illegal: str) -> None:
    global _worker
    _one_thread()
    _worker = _Worker(game_id, options, specs, seed, illegal)


def _run_task(task: Any) -> list[GameRecord]:
    assert _worker is not None
    return _worker.play(task)


def run_games(
    game_id: str,
    specs: Sequence[AgentSpec],
    deals: int,
    seed: int = 0,
    workers: int = 1,
    options: dict[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
    backend: Backend | None = None,
    chunks: int | None = None,
    loop: str = "batched",
    batch: int | None = None,
    illegal: str = "raise",
    among: Sequence[int] | None = None,
) -> list[GameRecord]:
    """Play every game of the tournament; ``progress(k)`` is called as k more games finish.

    ``backend``: local processes (default) or Ray tasks (``chunks`` of them; default 16 per CPU); on Ray,
    ``workers`` is the CPU count of a local Ray started for this call. ``loop``: ``"batched"`` (``batch`` deals
    at once per pairing and arrangement) or ``"sequential"``; the records come in the order pairing, deal,
    arrangement either way. ``illegal``: the env's ``illegal_action`` option, ``"raise"`` (stop with
    ``AgentError``) or ``"lose"`` (that game is lost, ``GameRecord.illegal`` says why). ``among``: play only
    the pairings that hold one of these agents (by index), the same games as in the whole tournament.
    """
    options = dict(options or {})
    check_choice("illegal", illegal, ILLEGAL)
    n_players = JerichoEnv(game_id, **options).rules.info.num_players
    tasks = make_loop_tasks(loop, len(specs), n_players, deals, batch)
    if among is not None:
        tasks = [t for t in tasks if t.focal in among or t.opponent in among]
    labels = [s.label for s in specs]
    if backend is not None and backend.is_ray:
        done = map_chunks(
            backend,
            workers,
            f"tournament-{uuid.uuid4().hex}",
            worker_from_payload,
            ray_payload(game_id, specs, seed, options, illegal),
            play_task,
            tasks,
            progress=(lambda recs: progress(len(recs))) if progress else None,
            chunks=chunks,
            describe=lambda piece: _what(labels, piece, ray=True),
        )
        records = [rec for recs in done for rec in recs]
    else:
        start = (game_id, options, _sendable(specs) if workers > 1 else specs, seed, illegal)
        records = _run_locally(start, workers, tasks, progress, labels)
    return records if loop == "sequential" else in_game_order(tasks, records)


def _run_locally(
    start: tuple[Any, ...],
    workers: int,
    tasks: list[Any],
    progress: Callable[[int], None] | None,
    labels: Sequence[str],
) -> list[GameRecord]:
    """The tasks in this process (``workers`` 1) or in a pool of ``workers`` processes, records in task order."""
    records: list[GameRecord] = []

    def consume(it: Iterator[list[GameRecord]]) -> None:
        for recs in it:
            records.extend(recs)
            if progress:
                progress(len(recs))

    if workers <= 1:
        _init_worker(*start)
        consume(_run_task(t) for t in tasks)
    else:
        from jericho_env.processes import WorkerPool

        with WorkerPool(workers, _init_worker, start, "tournament worker", preload=_PRELOAD) as pool:
            chunk = max(1, len(tasks) // (workers * 16))
            consume(pool.imap(_run_task, tasks, chunk, describe=lambda piece: _what(labels, piece)))
    return records


# what the fork server imports once, so that each tournament worker starts without importing it again: this
# module, and the modules of the agents this process has made (checking the specs)
_PRELOAD = ("experiments.play.tournament", "experiments.play.batched_games", "agents.*", "experiments.*")


def _sendable(specs: Sequence[AgentSpec]) -> list[AgentSpec]:
    """``specs`` as a list, each checked to travel to worker processes (pickled); else a one-line ``ValueError``."""
    import pickle

    from jericho_env.processes import check_picklable

    for spec in specs:
        try:
            pickle.dumps(spec.agent)
        except Exception as e:
            raise ValueError(
                f"agent {spec.label!r} ({agent_label(spec.agent)}) cannot go to worker processes: it does not pickle "
                f"({type(e).__name__}: {e}); play it with workers=1, or name it by its code: "
                f"{spec.label}=pkg.module:attr or {spec.label}=path/to/file.py:attr"
            ) from None
    for spec in specs:
        why = check_picklable(spec)
        if why is not None:
            raise ValueError(
                f"agent {spec.label!r} cannot be sent to the tournament's worker processes ({why}): name it by "
                f"its import path, {spec.label}=pkg.module:attr or {spec.label}=path/file.py:attr"
            )
    return list(specs)


def _what(labels: Sequence[str], piece: Sequence[Any], ray: bool = False) -> str:
    """The games of a chunk of tasks in words: its deals and pairings (on Ray, with its count of tasks)."""
    pairs = ", ".join(sorted({f"{labels[t.focal]} vs {labels[t.opponent]}" for t in piece}))
    if isinstance(piece[0], Task):
        return f"deals {piece[0].deal}-{piece[-1].deal} of {pairs}"
    chunks = f" in {len(piece)} chunk(s)" if ray else ""
    return f"deals {min(t.start for t in piece)}-{max(t.stop for t in piece) - 1}{chunks} of {pairs}"


# ----------------------------------------------------------------------------------------------- on Ray
def ray_payload(
    game_id: str, specs: Sequence[AgentSpec], seed: int, options: dict[str, Any], illegal: str = "raise"
) -> dict[str, Any]:
    """What a Ray worker needs to play the tournament, as JSON text and checkpoint bytes (``path=`` as its bytes)."""
    from agents.checkpoint import resolve_path

    blobs: dict[str, bytes] = {}
    shipped = []
    for spec in specs:
        if spec.agent is not None:
            raise ValueError(
                f"--backend ray sends agents by name, not as objects: name agent {spec.label!r} by its code, "
                f"{spec.label}=pkg.module:attr (a module every Ray node imports) or {spec.label}=path/file.py:attr"
            )
        kwargs = dict(spec.kwargs)
        blob = None
        if "path" in kwargs:
            data = resolve_path(kwargs.pop("path")).read_bytes()
            blob = hashlib.sha256(data).hexdigest()
            blobs[blob] = data
        shipped.append({"label": spec.label, "name": spec.name, "kwargs": kwargs, "blob": blob})
    try:
        text = json.dumps({"game_id": game_id, "options": options, "seed": seed, "specs": shipped, "illegal": illegal})
    except TypeError as e:
        raise ValueError(
            f"--backend ray sends agents as JSON arguments and checkpoint bytes; an argument is not JSON ({e}): "
            "save the agent as a checkpoint and pass path="
        ) from None
    return {"json": text, "blobs": blobs}


class _RayWorker(_Worker):
    """A ``_Worker`` built from ``ray_payload``: checkpoints written to a private temporary folder first."""

    def __init__(self, payload: dict[str, Any]) -> None:
        data = json.loads(payload["json"])
        self.tmp = tempfile.mkdtemp(prefix="jericho-ray-")
        atexit.register(shutil.rmtree, self.tmp, True)  # the last tournament's files go when the worker exits
        specs = []
        for s in data["specs"]:
            kwargs = dict(s["kwargs"])
            if s["blob"] is not None:
                blob = payload["blobs"][s["blob"]]
                if hashlib.sha256(blob).hexdigest() != s["blob"]:
                    raise ValueError(f"the checkpoint of agent {s['label']!r} arrived damaged (SHA-256 differs)")
                path = os.path.join(self.tmp, f"{s['blob']}.zip")
                with open(path, "wb") as f:
                    f.write(blob)
                kwargs["path"] = path
            specs.append(AgentSpec(s["label"], s["name"], kwargs))
        super().__init__(data["game_id"], data["options"], specs, data["seed"], data["illegal"])

    def close(self) -> None:
        """Remove the temporary checkpoint files."""
        shutil.rmtree(self.tmp, ignore_errors=True)


def worker_from_payload(payload: dict[str, Any]) -> _RayWorker:
    """Inside a Ray worker: the tournament's env and agents (one torch thread: Ray gives each task one CPU)."""
    _one_thread()
    return _RayWorker(payload)


def play_task(worker: _Worker, task: Any) -> list[GameRecord]:
    """One task's games on a worker (the ``run`` of ``map_chunks``): a ``Task`` or a ``BatchTask``."""
    return worker.play(task)


# ---------------------------------------------------------------------------------------- statistics
def wilson_interval(successes: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval of a proportion (draws may count as half a success)."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclasses.dataclass
class Cell:
    """The focal agent's record against one opponent."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """Wins plus half the draws."""
        return self.wins + 0.5 * self.draws

    @property
    def win_rate(self) -> float:
        return self.score / self.games if self.games else float("nan")

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.score, self.games)


def outcome(returns: Sequence[float], seat: int) -> int:
    """+1 win, 0 draw, -1 loss for ``seat``: a positive return is a (possibly shared) win."""
    r = returns[seat]
    return 1 if r > 1e-12 else (-1 if r < -1e-12 else 0)


def tabulate(records: Sequence[GameRecord], labels: Sequence[str]) -> dict[tuple[str, str], Cell]:
    """Cells (row agent, column agent) of the win-rate matrix."""
    cells = {(a, b): Cell() for a in labels for b in labels if a != b}
    for rec in records:
        if len(rec.seats) == 2:
            for seat in (0, 1):
                _add(cells[(rec.seats[seat], rec.seats[1 - seat])], outcome(rec.returns, seat))
        else:
            _add(cells[(rec.focal, rec.opponent)], outcome(rec.returns, rec.arrangement))
    return cells


def _add(cell: Cell, o: int) -> None:
    field = "wins" if o > 0 else "losses" if o < 0 else "draws"
    setattr(cell, field, getattr(cell, field) + 1)


def bradley_terry(
    labels: Sequence[str], cells: dict[tuple[str, str], Cell], anchor: str | None = "random", iters: int = 2000
) -> dict[str, float]:
    """Bradley–Terry strengths by maximum likelihood (Hunter's MM) on the Elo scale, ``anchor`` (else the mean) at 1000.

    Draws count as half a win each way; one virtual draw per pair keeps the fit finite when an agent wins every game.
    """
    k = len(labels)
    idx = {a: i for i, a in enumerate(labels)}
    wins = np.zeros((k, k))
    for (a, b), c in cells.items():
        wins[idx[a], idx[b]] += c.score + 0.5
    games = wins + wins.T
    gamma = np.ones(k)
    for _ in range(iters):
        denom = np.array([sum(games[i, j] / (gamma[i] + gamma[j]) for j in range(k) if j != i) for i in range(k)])
        new = wins.sum(axis=1) / np.maximum(denom, 1e-300)
        new /= np.exp(np.mean(np.log(new)))
        if np.max(np.abs(np.log(new) - np.log(gamma))) < 1e-10:
            gamma = new
            break
        gamma = new
    elo = 400.0 * np.log10(gamma)
    shift = 1000.0 - (elo[idx[anchor]] if anchor in idx else float(np.mean(elo)))
    return {a: float(elo[idx[a]] + shift) for a in labels}
