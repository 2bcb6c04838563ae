"""Deep Monte-Carlo's data: actors playing the batched engine and the replay buffer of recent positions.

``Actors`` plays ``num_envs`` games of ``jericho_env.make_batched`` in lockstep, every seat with the same
network snapshot (``agents.nets.dmc.QPlan``): the legal action of highest Q, or with probability
``epsilon`` a uniformly random legal action. Every decision (a position with two legal actions or more;
forced moves teach nothing) goes into the ``ReplayBuffer`` at once, with its target unknown; when the game
ends, each of its positions gets the final return of the seat that moved there (DouZero's Monte-Carlo
target: no bootstrapping, no discount).

With ``lam`` < 1 the target is the seat's lambda-return instead (Peng's Q(lambda), no discount, no
rewards before the end): at the seat's last decision the final return, and at each earlier
decision ``(1 - lam) * V(next) + lam * G(next)``, where ``next`` is the same seat's next decision,
``V`` the snapshot's highest Q there (recorded as the move was chosen) and ``G`` that decision's target.
``lam = 1`` is the Monte-Carlo target; smaller values trade the outcome's noise for the network's bias.

With ``versus_greedy`` > 0, that share of the games (drawn as each game is dealt) has one learning seat,
drawn at random, and a fixed agent in every other seat: one of ``versus`` (registered agent names, greedy
by default), drawn with equal chance for each such game, each played as a batch policy
(``agents.batch.make_batch_policy``: greedy's compiled twin, ppo's network once over the rows); only the
learning seat's decisions are recorded. The other games are self-play, every seat learning.

With a ``teacher`` (a plan that gives Q of every action: one dmc network, or the mean of several), the
actors play as before (epsilon-greedy on the learner's snapshot, so the positions are the learner's own, as
DAgger gathers them) but each decision learns the teacher's Q of every legal action instead of an outcome:
the buffer keeps the teacher's Q row and the legal actions, and the position is labelled when it is added
(its target the teacher's Q of the action taken). ``lam`` does not apply.
Grid's pair network stores one (state, action) row per position, not a row of every action: there each
decision stores the action taken, labelled with the teacher's Q of it, and, where the teacher prefers another
legal action, that action as a second row labelled with its Q (the student's overrated moves are corrected
where it plays them, its underrated ones where the teacher would play them); the teacher is one grid network
or the mean of several.

``ReplayBuffer`` is a ring of the latest ``capacity`` positions (observation as float16: every observation
value is in [0, 1], most are 0 or 1, so the error is under 0.05%; the action; the target, NaN until the
game ends). Each position has a serial number (positions added before it); a finished game writes its
targets only into the rows its positions still hold, so a ring that wrapped past a long game loses that
game's oldest positions, never mislabels newer ones. ``sample`` draws uniformly among the rows whose
target is known.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class ReplayBuffer:
    """The latest ``capacity`` positions: observations, actions, targets (module docstring).

    With ``taught_actions`` > 0 each position also holds a teacher's Q of every action and the legal actions
    (``add_taught``), and ``sample`` returns them as well.
    """

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
        """Store positions with a teacher's Q of every action (B, A) and the legal actions (B, A), labelled at once
        (the target: the teacher's Q of the action taken); returns their serial numbers."""
        if self.taught is None or self.legal is None:
            raise RuntimeError("this replay buffer keeps no teacher's values (taught_actions=0)")
        serials = self.add(obs, actions)
        rows = serials % self.capacity
        self.taught[rows] = taught
        self.legal[rows] = legal
        self.label(serials, np.asarray(taught, np.float32)[np.arange(len(actions)), actions])
        return serials

    def label(self, serials: np.ndarray, targets: np.ndarray) -> int:
        """Write the targets of the positions ``serials`` still held; returns how many were written."""
        kept = serials >= self.added - self.capacity
        rows = serials[kept] % self.capacity
        self.targets[rows] = targets[kept]
        self.labelled += int(kept.sum())
        return int(kept.sum())

    def known(self) -> np.ndarray:
        """The rows whose target is known."""
        return np.flatnonzero(~np.isnan(self.targets[: len(self)]))

    def sample(self, batch: int, rng: np.random.Generator, rows: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
        """(observations float32, actions, targets) of ``batch`` rows drawn uniformly among the labelled ones;
        with a teacher's values, the teacher's Q of every action and the legal actions as well."""
        rows = self.known() if rows is None else rows
        if len(rows) == 0:
            raise ValueError("the replay buffer holds no finished game yet")
        pick = rows[rng.integers(0, len(rows), size=batch)]
        out = (self.obs[pick].astype(np.float32), self.actions[pick], self.targets[pick])
        if self.taught is not None and self.legal is not None:
            out += (self.taught[pick], self.legal[pick])
        return out


class Actors:
    """``num_envs`` self-play games on the batched engine, every seat epsilon-greedy on one Q snapshot."""

    def __init__(
        self,
        game_id: str,
        options: dict[str, Any],
        num_envs: int,
        epsilon: float,
        buffer: ReplayBuffer,
        seed: Any,
        versus_greedy: float = 0.0,
        lam: float = 1.0,
        versus: tuple[str, ...] = ("greedy",),
        teacher: Any = None,
    ) -> None:
        import jericho_env

        self.env = jericho_env.make_batched(game_id, num_envs, copy=False, check=False, **options)
        self.epsilon = float(epsilon)
        self.buffer = buffer
        self.rng = np.random.default_rng(seed)
        env_seed = int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0] >> np.uint64(1))
        self.obs, self.mask, self.player = self.env.reset(seed=env_seed)
        length = self.env.rules.info.max_game_length + 1
        # per game: the serial numbers of its recorded positions and the seat that moved at each
        self.pending = np.zeros((num_envs, length), dtype=np.int64)
        self.seats = np.zeros((num_envs, length), dtype=np.int64)
        self.count = np.zeros(num_envs, dtype=np.int64)
        if not 0.0 <= lam <= 1.0:
            raise ValueError(f"lam (the lambda of the lambda-return) must be in 0..1, got {lam}")
        self.lam = float(lam)
        self.teacher = teacher  # a plan with q_all: its Q of every legal action is what each position learns
        # per game: the snapshot's value (highest Q) at each recorded position, for lambda-returns
        self.values = np.zeros((num_envs, length), dtype=np.float32) if self.lam < 1 and teacher is None else None
        self.steps = 0  # agent-steps played (forced moves too)
        self.positions = 0  # decisions recorded
        self.games = 0  # games finished
        self.returns_sum = np.zeros(self.env.num_players)  # seat returns summed over finished games
        if not 0.0 <= versus_greedy <= 1.0:
            raise ValueError(f"versus_greedy is a share of the games, 0..1, got {versus_greedy}")
        self.versus_greedy = float(versus_greedy)
        self.fixed: list[Any] = []  # the fixed agents' batch policies (versus)
        # per game: its one learning seat against a fixed agent, or -1 (self-play: every seat learns)
        self.learner = np.full(num_envs, -1, dtype=np.int64)
        self.opponent = np.zeros(num_envs, dtype=np.int64)  # per game: which fixed agent plays the other seats
        if self.versus_greedy > 0:
            if not versus:
                raise ValueError("versus names no agent for the games against fixed agents")
            seeds = self.rng.integers(2**31, size=len(versus))
            self.fixed = [fixed_policy(name, game_id, int(s), options) for name, s in zip(versus, seeds, strict=True)]
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
                    if getattr(self.buffer, "taught", None) is None:  # grid's pair networks (module docstring)
                        self._add_pairs_taught(plan, obs, legal, stored, chosen)
                    else:
                        self.buffer.add_taught(stored, chosen, self.teacher.q_all(obs, legal), legal)
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

    def _add_pairs_taught(
        self, plan: Any, obs: np.ndarray, legal: np.ndarray, stored: np.ndarray, chosen: np.ndarray
    ) -> None:
        """Store the positions of a pair network (grid's) taught by ``teacher``: the chosen action labelled with
        the teacher's Q of it, and the teacher's best action too (another row) where it is not the chosen one."""
        from agents.dmc import legal_q

        q = legal_q(self.teacher, obs, legal)
        rows = np.arange(len(chosen))
        self.buffer.label(self.buffer.add(stored, chosen), q[rows, chosen])
        best = q.argmax(axis=1)
        other = rows[best != chosen]
        if len(other):
            extra = plan.stored(obs, other, best[other])
            self.buffer.label(self.buffer.add(extra, best[other]), q[other, best[other]])

    def _deal_seats(self, games: np.ndarray) -> None:
        """For new ``games``: one learning seat against a fixed agent (a ``versus_greedy`` share) or self-play."""
        against = self.rng.random(len(games)) < self.versus_greedy
        seats = self.rng.integers(0, self.env.num_players, size=len(games))
        self.learner[games] = np.where(against, seats, -1)
        if len(self.fixed) > 1:  # one fixed agent deals with the same stream as before when there is one
            self.opponent[games] = self.rng.integers(0, len(self.fixed), size=len(games))

    def _finish(self, games: np.ndarray, rewards: np.ndarray) -> None:
        """Label the finished games' positions with the final return of the seat that moved there."""
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
        self.returns_sum += rewards[games].sum(axis=0)


def fixed_policy(name: str, game_id: str, seed: int, options: dict[str, Any]) -> Any:
    """The batch policy of the fixed agent ``name`` for games under ``options``."""
    from agents.batch import make_batch_policy

    return make_batch_policy(name, game_id, seed=seed, **options)


def lambda_returns(
    final: np.ndarray, seats: np.ndarray, values: np.ndarray, valid: np.ndarray, lam: float
) -> np.ndarray:
    """The lambda-return of every recorded position (G, T) of finished games (module docstring).

    ``final`` (G, P): each seat's final return; ``seats``, ``values``, ``valid`` (G, T): who moved
    at each recorded position, the snapshot's value there, and which entries are positions.
    """
    g = np.arange(len(final))
    ahead = final.astype(np.float32).copy()  # per seat: the target of its next decision (the final at first)
    out = np.zeros(values.shape, np.float32)
    for t in range(values.shape[1] - 1, -1, -1):
        live = valid[:, t]
        rows, seat = g[live], seats[live, t]
        out[rows, t] = ahead[rows, seat]
        ahead[rows, seat] = (1 - lam) * values[rows, t] + lam * out[rows, t]
    return out
