"""Who plays which deal in a tournament, shared by both game loops (``experiments.play.tournament``'s sequential
one and ``experiments.play.batched_games``): the agents' specs, the record of a game, seeds, pairings and seats."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from jericho_env.core.rules import JerichoError


@dataclasses.dataclass(frozen=True)
class AgentSpec:
    """An agent in a tournament: its label in the tables, and its name (for ``agents.make``) and arguments or an
    agent object."""

    label: str
    name: str
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    agent: Any = None

    def build(self, game_id: str, options: dict[str, Any], fresh: bool = False) -> Any:
        """The agent: made by name for ``game_id`` under ``options``, or the object (a deep copy with ``fresh``)."""
        if self.agent is not None:
            return copy.deepcopy(self.agent) if fresh else self.agent
        import agents

        return agents.make(self.name, game_id, **self.kwargs, **options)

    def describe(self) -> dict[str, Any]:
        """The spec as JSON for a run's records: an object is recorded by its type."""
        if self.agent is None:
            return {"label": self.label, "name": self.name, "kwargs": self.kwargs}
        kind = type(self.agent)
        return {"label": self.label, "object": f"{kind.__module__}.{kind.__qualname__}"}


@dataclasses.dataclass(frozen=True)
class GameRecord:
    """One game: who sat where, the seeds, the returns per seat, its length and why an illegal action ended it."""

    focal: str
    opponent: str
    deal: int
    arrangement: int
    env_seed: int
    seats: tuple[str, ...]
    returns: tuple[float, ...]
    length: int
    illegal: str = ""


def check_choice(name: str, value: str, allowed: Sequence[str]) -> str:
    """``value`` if it is one of ``allowed``, else a ``ValueError`` listing them."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def derive_seed(*parts: int) -> int:
    """A 63-bit seed from integers, independent of Python's hash randomisation."""
    return int(np.random.SeedSequence([int(p) for p in parts]).generate_state(2, np.uint64)[0] >> np.uint64(1))


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


class AgentError(JerichoError):
    """An agent that raised, or played an action the game refuses, named with the game it was playing."""


def agent_error(where: str, error: Exception) -> JerichoError:
    """``error`` (an agent's, or the env's at its action) as one line after ``where``, its type kept if ours."""
    text = " ".join(str(error).split())
    if isinstance(error, JerichoError):
        try:
            return type(error)(f"{where}: {text}")
        except TypeError:  # a subclass with another constructor
            pass
    return AgentError(f"{where}: {type(error).__name__}: {text}")
