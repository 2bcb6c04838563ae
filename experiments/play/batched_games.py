"""The tournament's games in batches: a chunk of deals played in lockstep, each agent asked once per round.

A task (``BatchTask``) is one pairing, one seat arrangement and a chunk of consecutive deals. Its games are
the sequential loop's games (``experiments.play.tournament``): the same env seeds, deals, seats, labels and
records, in the same order. Every round, each agent with games to move is asked once for all of them, as
a batch policy ``(observations (B, D) float32, masks (B, A) bool) -> actions (B,)`` (``agents.batch``:
compiled ``random`` and ``greedy``, one forward pass for network agents, an agent's own ``batch_policy()``,
else the agent asked row by row). A searching agent (``uses_views``, ``observe_view``) is handed each game's
information view, drawn from a generator seeded as the AEC env seeds its own (``SeedSequence([env_seed, 1])``).
One agent object serves every game of a task, so it must keep no memory of a game other than its generator.

Each policy draws from one stream per task, seeded from (seed, focal, opponent, arrangement, first deal,
role): the games depend on the chunks (``batch``), never on the workers or the backend. The rules are the
game's compiled kernels (``jericho_env.envs.batched.batched_game``) where it has them, else the Python rules
through the same interface; both play the same games.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from experiments.play.deals import AgentSpec, GameRecord, agent_error, check_choice, derive_seed, pairings, seat_labels
from jericho_env.core.batched import BatchedGame
from jericho_env.core.rules import IllegalActionError, Rules
from jericho_env.envs.batched import batched_game
from jericho_env.registry import make_rules
from jericho_env.user_agents import reset_agent

DEFAULT_BATCH = 50  # deals per task: big enough to fill a forward pass, small enough to share 2 workers
ENGINES = ("auto", "python")  # the compiled kernels where the game has them, or the Python rules
_POLICY_TAG = 0xBA7C4ED  # keeps the batched loop's policy seeds apart from the sequential loop's agent seeds


@dataclasses.dataclass(frozen=True)
class BatchTask:
    """Every game of one pairing and seat arrangement over the deals ``start`` .. ``stop - 1``."""

    focal: int
    opponent: int
    arrangement: int
    start: int
    stop: int


def make_batch_tasks(n_agents: int, n_players: int, deals: int, batch: int) -> list[BatchTask]:
    """The pairings of ``make_tasks`` (same order), each arrangement, the deals cut into chunks of ``batch``."""
    return [
        BatchTask(i, j, arr, start, min(start + batch, deals))
        for i, j in pairings(n_agents, n_players)
        for arr in range(n_players)  # the focal agent's seat
        for start in range(0, deals, batch)
    ]


def check_batch(batch: Any) -> int:
    """``batch`` if it is an int >= 1, else a ``ValueError`` saying what is allowed."""
    if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
        raise ValueError(f"batch (deals played at once per task) must be an int >= 1, got {batch!r}")
    return int(batch)


def policy_seed(seed: int, task: BatchTask, role: int) -> int:
    """The seed of the focal agent's (``role`` 0) or the opponents' (1) batch policy in ``task``."""
    return derive_seed(seed, task.focal, task.opponent, task.arrangement, task.start, role, _POLICY_TAG)


class BatchPlayer:
    """One agent of a tournament as batch policies, a fresh one per task (built from one cached agent)."""

    def __init__(self, spec: AgentSpec, game_id: str, options: dict[str, Any]) -> None:
        self.spec, self.game_id, self.options = spec, game_id, dict(options)

    @functools.cached_property
    def agent(self) -> Any:
        """The agent (``AgentSpec.build``), built on first use and kept: loading a checkpoint is done once."""
        return self.spec.build(self.game_id, self.options)

    def policy(self, seed: int) -> Any:
        """The agent's batch policy for one task, its randomness seeded with ``seed`` (module docstring)."""
        from agents.batch import agent_batch_policy, make_batch_policy

        spec = self.spec
        if spec.agent is None and spec.name in ("random", "greedy"):  # cheap; compiled over the batch where it can
            return make_batch_policy(spec.name, self.game_id, seed=seed, **spec.kwargs, **self.options)
        reset_agent(self.agent, seed)
        return agent_batch_policy(self.agent, self.game_id, seed, spec.label, self.options)


class BatchedWorker:
    """Plays ``BatchTask``s: the rules (compiled where it can), the agents as ``BatchPlayer``s."""

    def __init__(
        self,
        game_id: str,
        options: dict[str, Any],
        specs: Sequence[AgentSpec],
        seed: int,
        engine: str = "auto",
        rules: Rules[Any] | None = None,
        illegal: str = "raise",
    ) -> None:
        check_choice("engine", engine, ENGINES)
        self.rules: Rules[Any] = rules if rules is not None else make_rules(game_id, **options)
        self.game: BatchedGame[Any] = batched_game(self.rules, False if engine == "python" else None)
        self.n = self.rules.info.num_players
        self.specs = list(specs)
        self.seed = seed
        self.players = [BatchPlayer(spec, game_id, options) for spec in self.specs]
        self.illegal = illegal  # "raise" or "lose": the env's illegal_action option (tournament.run_games)
        cls = type(self.game)
        self._compiled_views = self.game.compiled and cls.determinize is not BatchedGame.determinize

    def run(self, task: BatchTask, kept: list[list[int]] | None = None) -> list[GameRecord]:
        """Every game of ``task``, in deal order; ``kept`` (a list) receives each game's actions, in that order."""
        return _Chunk(self, task).play(kept)


class _Chunk:
    """The games of one task in progress: states as rows, lengths, the actions and views of each game."""

    def __init__(self, worker: BatchedWorker, task: BatchTask) -> None:
        self.worker, self.task = worker, task
        rules, game = worker.rules, worker.game
        self.rules, self.game = rules, game
        self.deals = np.arange(task.start, task.stop)
        self.env_seeds = [derive_seed(worker.seed, int(d)) for d in self.deals]
        count = len(self.deals)
        self.states = game.new_states(count)
        for g, env_seed in enumerate(self.env_seeds):  # JerichoEnv.reset(env_seed)'s deal
            game.to_batched(rules.initial_state(np.random.default_rng(env_seed)), self.states, g)
        # each game's information views from a generator seeded as JerichoEnv seeds its own
        view_seeds = [np.random.SeedSequence([s, 1]) for s in self.env_seeds]
        if worker._compiled_views:
            self.view_streams = np.array([v.generate_state(1, np.uint64)[0] for v in view_seeds], dtype=np.uint64)
        else:
            self.view_rngs = [np.random.default_rng(v) for v in view_seeds]
        labels = seat_labels(worker.n, task.focal, task.opponent, task.arrangement)
        self.labels = tuple(worker.specs[i].label for i in labels)
        focal = worker.players[task.focal].policy(policy_seed(worker.seed, task, 0))
        opponents = worker.players[task.opponent].policy(policy_seed(worker.seed, task, 1))
        self.is_focal = np.array([i == task.focal for i in labels])
        self.roles = [(task.focal, focal), (task.opponent, opponents)]

    def play(self, kept: list[list[int]] | None) -> list[GameRecord]:
        game, n = self.game, self.worker.n
        count = len(self.deals)
        every = np.arange(count, dtype=np.int64)
        current = np.empty(count, dtype=np.int64)
        returns = np.zeros((count, n), dtype=np.float64)
        game.status(self.states, every, current, returns)
        lengths = np.zeros(count, dtype=np.int64)
        moves: list[list[int]] = [[] for _ in range(count)]
        forfeits: dict[int, str] = {}  # game -> why it ended at an illegal action (illegal="lose")
        live = every[current >= 0]
        while len(live):
            focal_turn = self.is_focal[current[live]]
            for (index, policy), rows in zip(self.roles, (live[focal_turn], live[~focal_turn]), strict=True):
                if len(rows):
                    actions, legal = self._ask(index, policy, rows, current[rows])
                    for g, a in zip(rows.tolist(), actions.tolist(), strict=True):
                        moves[g].append(a)
                    for j in np.flatnonzero(~legal):
                        forfeits[int(rows[j])] = self._forfeit(index, int(current[rows[j]]), int(actions[j]))
                    game.apply(self.states, rows[legal], actions[legal])
            lengths[live] += 1
            now = np.empty(len(live), dtype=np.int64)
            finals = np.zeros((len(live), n), dtype=np.float64)
            game.status(self.states, live, now, finals)
            for k, g in enumerate(live.tolist()):
                if g in forfeits and now[k] >= 0:  # ended by the illegal action, as the env scores it
                    offender = int(current[g])
                    now[k] = -1
                    finals[k] = -float(self.rules.info.min_return) / (n - 1)
                    finals[k, offender] = float(self.rules.info.min_return)
            current[live], returns[live] = now, finals
            live = live[now >= 0]
        if kept is not None:
            kept.extend(moves)
        specs, task = self.worker.specs, self.task
        return [
            GameRecord(
                focal=specs[task.focal].label,
                opponent=specs[task.opponent].label,
                deal=int(self.deals[g]),
                arrangement=task.arrangement,
                env_seed=self.env_seeds[g],
                seats=self.labels,
                returns=tuple(float(r) for r in returns[g]),
                length=int(lengths[g]),
                illegal=forfeits.get(g, ""),
            )
            for g in range(count)
        ]

    def _forfeit(self, index: int, seat: int, action: int) -> str:
        """Why a game ended at agent ``index``'s illegal ``action`` in ``seat`` (``GameRecord.illegal``)."""
        what = self.rules.describe_action(action)
        return f"{self.worker.specs[index].label} (seat {seat}): action {action} ({what}) is not legal"

    def _ask(self, index: int, policy: Any, rows: np.ndarray, seats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``policy``'s actions for the games ``rows`` (seats ``seats`` to move) and which are legal (``_checked``)."""
        game, info = self.game, self.rules.info
        mask8 = np.empty((len(rows), info.num_actions), dtype=np.int8)
        game.masks(self.states, rows, mask8)
        masks = mask8.astype(bool)
        observations = None
        if getattr(policy, "uses_observation", True):
            observations = np.empty((len(rows), info.observation_size), dtype=np.float32)
            game.observe(self.states, rows, seats, observations)
        if getattr(policy, "uses_views", False):
            policy.observe_views(self._views(rows, seats))
        try:
            answer = policy(observations, masks)
        except Exception as e:
            raise agent_error(f"agent {self._who(index, policy)} in {self._where(rows)}", e) from e
        return self._checked(index, policy, rows, seats, masks, answer)

    def _who(self, index: int, policy: Any) -> str:
        spec = self.worker.specs[index]
        return f"{spec.label!r} ({spec.name}, batch policy {getattr(policy, 'name', type(policy).__name__)})"

    def _where(self, rows: np.ndarray) -> str:
        task, specs = self.task, self.worker.specs
        deals = self.deals[rows]
        return (
            f"deals {int(deals.min())}-{int(deals.max())}, arrangement {task.arrangement} of "
            f"{specs[task.focal].label} vs {specs[task.opponent].label}"
        )

    def _views(self, rows: np.ndarray, seats: np.ndarray) -> list[Any]:
        """The information view (a Python state) of each game of ``rows`` for its seat in ``seats``."""
        game, rules = self.game, self.rules
        if self.worker._compiled_views:
            out = game.new_states(len(rows))
            stream = self.view_streams[rows]
            game.determinize(self.states, rows, seats, stream, out)
            self.view_streams[rows] = stream
            return [game.from_batched(out, k) for k in range(len(rows))]
        states = self.states if not game.compiled else None
        return [
            rules.determinize(
                states[g] if states is not None else game.from_batched(self.states, g), int(seat), self.view_rngs[g]
            )
            for g, seat in zip(rows.tolist(), seats.tolist(), strict=True)
        ]

    def _checked(
        self, index: int, policy: Any, rows: np.ndarray, seats: np.ndarray, masks: np.ndarray, answer: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        """``answer`` as int64 actions and which are legal; an action outside the action space (or, unless the
        tournament plays ``illegal="lose"``, an illegal one) is an error naming the agent, the game and the action."""
        task = self.task
        who = self._who(index, policy)
        acts = np.asarray(answer).reshape(-1)
        if acts.shape[0] != len(rows):
            raise ValueError(f"{who} answered {acts.shape[0]} actions for {len(rows)} games")
        if not np.issubdtype(acts.dtype, np.integer):
            raise IllegalActionError(f"{who} answered actions of dtype {acts.dtype}, not integers")
        acts = acts.astype(np.int64, copy=False)
        num_actions = masks.shape[1]
        inside = (acts >= 0) & (acts < num_actions)
        legal = inside & masks[np.arange(len(rows)), np.where(inside, acts, 0)]
        refused = ~inside if self.worker.illegal == "lose" else ~legal
        if refused.any():
            j = int(np.flatnonzero(refused)[0])
            a, deal = int(acts[j]), int(self.deals[rows[j]])
            what = self.rules.describe_action(a) if inside[j] else "outside the action space"
            pairing = f"{self.worker.specs[task.focal].label} vs {self.worker.specs[task.opponent].label}"
            raise IllegalActionError(
                f"{who} chose action {a} ({what}), which is not legal for seat {int(seats[j])} in deal {deal}, "
                f"arrangement {task.arrangement} of {pairing}; legal: {np.flatnonzero(masks[j]).tolist()}"
            )
        return acts, legal


__all__ = ["DEFAULT_BATCH", "BatchPlayer", "BatchTask", "BatchedWorker", "check_batch", "make_batch_tasks"]
