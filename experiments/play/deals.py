"""Who plays which deal in a tournament, shared by both game loops (``experiments.play.tournament``'s sequential
one and ``experiments.play.batched_games``): the agents' specs, the record of a game, seeds, pairings and seats."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np


@dataclasses.dataclass(frozen=True)
class AgentSpec:
    """An agent in a tournament: its label in the tables, its registry name and its arguments."""

    label: str
    name: str
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class GameRecord:
    """One game: who sat where, the seeds, the returns per seat and its length in agent steps."""

    focal: str
    opponent: str
    deal: int
    arrangement: int
    env_seed: int
    seats: tuple[str, ...]
    returns: tuple[float, ...]
    length: int


def derive_seed(*parts: int) -> int:
    """A 63-bit seed from integers, independent of Python's hash randomisation."""
    return int(np.random.SeedSequence([int(p) for p in parts]).generate_state(2, np.uint64)[0] >> np.uint64(1))


def arrangements(n_players: int) -> list[int]:
    """Seat arrangements per deal: the focal agent's seat (0..n-1)."""
    return list(range(n_players))


def pairings(n_agents: int, n_players: int) -> list[tuple[int, int]]:
    """(focal, opponent) indices: unordered pairs in two-player games (both seat orders make the reverse
    cell), ordered pairs in n-player games (A alone against copies of B)."""
    return [(i, j) for i in range(n_agents) for j in range(n_agents) if (i < j if n_players == 2 else i != j)]


def seat_labels(n_players: int, focal: int, opponent: int, arrangement: int) -> list[int]:
    """The agent index in each seat: two players, focal first in arrangement 0 and second in 1; else the
    focal agent in seat ``arrangement`` among copies of the opponent."""
    if n_players == 2:
        return [focal, opponent] if arrangement == 0 else [opponent, focal]
    return [opponent] * arrangement + [focal] + [opponent] * (n_players - 1 - arrangement)
