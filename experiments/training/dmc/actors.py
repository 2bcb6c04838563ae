"""Deep Monte-Carlo's data: actors playing the batched engine and the replay buffer of recent positions, where every
decision (two legal actions or more) is labelled when its game ends (DouZero's target) or, with a teacher, at once."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np


class Batch(NamedTuple):
    """Positions drawn for an update: rows (float32), actions, targets (with a teacher: its Q, the legal actions)."""

    rows: np.ndarray
    actions: np.ndarray
    targets: np.ndarray
    taught: np.ndarray | None = None
    legal: np.ndarray | None = None


class ReplayBuffer:
    """A ring of the latest ``capacity`` positions (float16 rows), and with a teacher its Q of every action."""

    def __init__(self, capacity: int, width: int, taught_actions: int = 0) -> None:
        self.capacity = int(capacity)
        self.obs = np.zeros((self.capacity, width), dtype=np.float16)
        self.actions = np.zeros(self.capacity, dtype=np.int64)
        self.targets = np.full(self.capacity, np.nan, dtype=np.float32)
        self.taught = np.zeros((self.capacity, taught_actions), np.float32) if taught_actions else None
        self.legal = np.zeros((self.capacity, taught_actions), bool) if taught_actions else None
        self.added = 0  # positions ever added (the next serial number)
        self.labelled = 0  # positions whose target was written

    def __len__(self) -> int:
        return min(self.added, self.capacity)

    def add(self, obs: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Store positions with unknown targets; returns their serial numbers."""
        n = len(actions)
        serials = self.added + np.arange(n, dtype=np.int64)
        rows = serials % self.capacity
        self.obs[rows] = obs
        self.actions[rows] = actions
        self.targets[rows] = np.nan
        self.added += n
        return serials

    def add_taught(self, obs: np.ndarray, actions: np.ndarray, taught: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """Store positions labelled with a teacher's Q of every action and their legal actions; their serials."""
        assert self.taught is not None and self.legal is not None, "a buffer without a teacher's values"
        serials = self.add(obs, actions)
        rows = serials % self.capacity
        self.taught[rows] = taught
        self.legal[rows] = legal
        self.label(serials, np.asarray(taught, np.float32)[np.arange(len(actions)), actions])
        return serials

    def label(self, serials: np.ndarray, targets: np.ndarray) -> None:
        """Write the targets of the positions ``serials`` still held (a wrapped ring never mislabels newer ones)."""
        kept = serials >= self.added - self.capacity
        rows = serials[kept] % self.capacity
        self.targets[rows] = targets[kept]
        self.labelled += int(kept.sum())

    def known(self) -> np.ndarray:
        """The rows whose target is known."""
        return np.flatnonzero(~np.isnan(self.targets[: len(self)]))

    def sample(self, batch: int, rng: np.random.Generator, rows: np.ndarray | None = None) -> Batch:
        """``batch`` positions drawn uniformly among the labelled ones."""
        rows = self.known() if rows is None else rows
        if len(rows) == 0:
            raise ValueError("the replay buffer holds no finished game yet")
        pick = rows[rng.integers(0, len(rows), size=batch)]
        taught = (self.taught[pick], self.legal[pick]) if self.taught is not None and self.legal is not None else ()
        return Batch(self.obs[pick].astype(np.float32), self.actions[pick], self.targets[pick], *taught)


class Actors:
    """``cfg.envs`` games on the batched engine, every learning seat epsilon-greedy on one Q snapshot."""

    def __init__(self, cfg: Any, buffer: Any, seed: Any, teacher: Any = None) -> None:
        import jericho_env

        num_envs = cfg.envs
        self.env = jericho_env.make_batched(cfg.game, num_envs, copy=False, check=False, **cfg.options)
        self.epsilon = float(cfg.epsilon)
        self.buffer = buffer
        self.rng = np.random.default_rng(seed)
        env_seed = int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0] >> np.uint64(1))
        self.obs, self.mask, self.player = self.env.reset(seed=env_seed)
        length = self.env.rules.info.max_game_length + 1
        # per game: the serial numbers of its recorded positions and the seat that moved at each
        self.pending = np.zeros((num_envs, length), dtype=np.int64)
        self.seats = np.zeros((num_envs, length), dtype=np.int64)
        self.count = np.zeros(num_envs, dtype=np.int64)
        self.lam = float(cfg.lam)
        self.teacher = teacher  # experiments.training.dmc.distill.Teacher: labels each decision as it is stored
        # per game: the snapshot's value (highest Q) at each recorded position, for lambda-returns
        self.values = np.zeros((num_envs, length), dtype=np.float32) if self.lam < 1 and teacher is None else None
        self.steps, self.positions, self.games = 0, 0, 0  # agent-steps played (forced moves too), decisions, games
        self.versus_share = float(cfg.versus_share)
        self.fixed: list[Any] = []  # the fixed agents' batch policies (versus)
        # per game: its one learning seat against a fixed agent, or -1 (self-play: every seat learns)
        self.learner = np.full(num_envs, -1, dtype=np.int64)
        self.opponent = np.zeros(num_envs, dtype=np.int64)  # per game: which fixed agent plays the other seats
        if self.versus_share > 0:
            from agents.batch import make_batch_policy
            from agents.registry import split_specs

            versus = split_specs(cfg.versus)
            seeds = self.rng.integers(2**31, size=len(versus))
            self.fixed = [make_batch_policy(name, cfg.game, seed=int(s), **cfg.options)
                          for name, s in zip(versus, seeds, strict=True)]  # fmt: skip
            self._deal_seats(np.arange(num_envs))

    def play(self, plan: Any, rounds: int) -> int:
        """``rounds`` steps of every game with ``plan``'s epsilon-greedy moves; returns the positions recorded."""
        from jericho_env.envs.batched import random_actions

        env, n = self.env, self.env.num_envs
        before = self.positions
        for _ in range(rounds):
            mask = self.mask
            actions = mask.argmax(axis=1)  # a forced move: the only legal action (no network asked)
            choice = mask.sum(axis=1) > 1
            if self.fixed:  # the fixed agents' seats decide for themselves and are not recorded
                fixed = choice & (self.learner >= 0) & (self.player != self.learner)
                for k, policy in enumerate(self.fixed):
                    theirs = np.flatnonzero(fixed & (self.opponent == k))
                    if len(theirs) and getattr(policy, "uses_views", False):  # a search: each row's view first
                        policy.observe_views([self.env.rules.determinize(self.env.get_state(i), self.player[i],
                                                                         self.rng) for i in theirs])  # fmt: skip
                    if len(theirs):
                        actions[theirs] = policy(self.obs[theirs], mask[theirs])
                choice[fixed] = False
            games = np.flatnonzero(choice)  # the learners' decisions: only they are scored and recorded
            if len(games):
                obs, legal = self.obs[games], mask[games]
                chosen, value = plan.best_values(obs, legal)
                if self.values is not None:
                    self.values[games, self.count[games]] = value
                explore = self.rng.random(len(games)) < self.epsilon
                if explore.any():
                    chosen[explore] = random_actions(legal[explore], self.rng)
                actions[games] = chosen
                stored = plan.stored(obs, np.arange(len(games)), chosen)
                self.positions += len(games)
                if self.teacher is not None:  # labelled now: nothing waits for the game's end
                    self.teacher.store(self.buffer, plan, obs, legal, stored, chosen)
                else:
                    at = self.count[games]
                    self.pending[games, at] = self.buffer.add(stored, chosen)
                    self.seats[games, at] = self.player[games]
                    self.count[games] += 1
            self.obs, self.mask, self.player, rewards, terminated = env.step(actions)
            self.steps += n
            if terminated.any():
                self._finish(np.flatnonzero(terminated), rewards)
        return self.positions - before

    def _deal_seats(self, games: np.ndarray) -> None:
        """For new ``games``: one learning seat against a fixed agent (a ``versus_share`` share) or self-play."""
        against = self.rng.random(len(games)) < self.versus_share
        seats = self.rng.integers(0, self.env.num_players, size=len(games))
        self.learner[games] = np.where(against, seats, -1)
        if len(self.fixed) > 1:  # one fixed agent deals with the same stream as before when there is one
            self.opponent[games] = self.rng.integers(0, len(self.fixed), size=len(games))

    def _finish(self, games: np.ndarray, rewards: np.ndarray) -> None:
        """Label the finished games' positions with the final return of the seat that moved there (``cfg.lam`` < 1:
        its lambda-return)."""
        counts = self.count[games]
        width = int(counts.max()) if len(counts) else 0
        if width:
            valid = np.arange(width)[None, :] < counts[:, None]
            serials = self.pending[games, :width][valid]
            seats = self.seats[games, :width]
            if self.values is None:
                targets = np.take_along_axis(rewards[games], seats, axis=1)[valid]
            else:
                targets = lambda_returns(rewards[games], seats, self.values[games, :width], valid, self.lam)[valid]
            self.buffer.label(serials, targets.astype(np.float32))
        self.count[games] = 0
        if self.fixed:
            self._deal_seats(games)
        self.games += len(games)


def lambda_returns(
    final: np.ndarray, seats: np.ndarray, values: np.ndarray, valid: np.ndarray, lam: float
) -> np.ndarray:
    """The lambda-return (G, T) of every recorded position of finished games: ``final`` (G, P) each seat's return;
    ``seats``, ``values``, ``valid`` (G, T) who moved, the snapshot's value there, which entries are positions."""
    g = np.arange(len(final))
    ahead = final.astype(np.float32).copy()  # per seat: the target of its next decision (the final at first)
    out = np.zeros(values.shape, np.float32)
    for t in range(values.shape[1] - 1, -1, -1):
        live = valid[:, t]
        rows, seat = g[live], seats[live, t]
        out[rows, t] = ahead[rows, seat]
        ahead[rows, seat] = (1 - lam) * values[rows, t] + lam * out[rows, t]
    return out


def one_blas_thread() -> None:
    """numpy's BLAS on one thread: the actors' small matrix products, spread over threads, wait for each other."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with the train extra
        return
    threadpool_limits(1, user_api="blas")
