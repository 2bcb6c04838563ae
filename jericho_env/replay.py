"""Recorded games: a seed and the actions, which the rules engines replay exactly.

A replay is one JSON object (one line of a ``replays.jsonl`` file)::

    {"format": "jericho-env replay", "format_version": 1, "game": "castles", "game_version": 0,
     "options": {...}, "seed": 123, "seats": ["greedy", "random"], "actions": [41, 44, ...],
     "returns": [1.0, -1.0], "info": {"pairing": "greedy vs random", "deal": 0, ...}}

``seed`` is the env seed: ``rules.initial_state(np.random.default_rng(seed))`` deals the game (as
``env.reset(seed=seed)`` does), then the actions are applied in order, each checked legal.
``seats`` names who sat where; ``returns`` are the recorded results, checked against the replayed
end; ``info`` is free JSON for the writer (tournaments put the pairing, deal and seat arrangement).
Tournaments write them on request (``python -m experiments.evaluate ... --record N``), and the web
page (``python -m jericho_env.web``) lists and shows them.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from jericho_env.core.rules import JerichoError, Rules
from jericho_env.core.validate import SEED_MAX, SEED_RANGE
from jericho_env.registry import make_rules

FORMAT = "jericho-env replay"
FORMAT_VERSION = 1
FILE_NAME = "replays.jsonl"
_KEYS = ("format", "format_version", "game", "game_version", "options", "seed", "seats", "actions", "returns", "info")


class ReplayError(JerichoError):
    """A replay that cannot be read or does not replay: says where and what is wrong."""


@dataclasses.dataclass(frozen=True)
class Replay:
    """One recorded game: enough to deal it again and replay every move."""

    game: str
    game_version: int
    options: dict[str, Any]
    seed: int
    seats: tuple[str, ...]
    actions: tuple[int, ...]
    returns: tuple[float, ...] | None = None
    info: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The replay as a JSON-able dict (one line of a ``replays.jsonl``)."""
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "game": self.game,
            "game_version": self.game_version,
            "options": dict(self.options),
            "seed": self.seed,
            "seats": list(self.seats),
            "actions": list(self.actions),
            "returns": None if self.returns is None else list(self.returns),
            "info": dict(self.info),
        }

    @classmethod
    def from_json(cls, data: Any, where: str = "replay") -> Replay:
        """Check and read a replay dict; ``ReplayError`` naming the first field that is wrong."""
        if not isinstance(data, Mapping):
            raise ReplayError(f"{where}: a replay is a JSON object, got {type(data).__name__}")
        if data.get("format") != FORMAT:
            raise ReplayError(f"{where}: not a {FORMAT} (format {data.get('format')!r})")
        version: Any = data.get("format_version")
        if not _is_int(version) or not 1 <= version <= FORMAT_VERSION:
            raise ReplayError(f"{where}: format_version {version!r}; this version reads 1..{FORMAT_VERSION}")
        unknown = sorted(set(data) - set(_KEYS))
        missing = [k for k in _KEYS if k not in data]
        if unknown or missing:
            raise ReplayError(
                f"{where}: " + "; ".join(
                    ([f"unknown field(s) {', '.join(unknown)}"] if unknown else [])
                    + ([f"missing field(s) {', '.join(missing)}"] if missing else [])
                ) + f" (a replay has {', '.join(_KEYS)})"
            )  # fmt: skip
        checks = [
            ("game", isinstance(data["game"], str), "a game id"),
            ("game_version", _is_int(data["game_version"]), "an int"),
            ("options", isinstance(data["options"], Mapping), "an object of option values"),
            ("seed", _is_int(data["seed"]) and 0 <= data["seed"] <= SEED_MAX, f"an int in {SEED_RANGE}"),
            ("seats", _list_of(data["seats"], lambda s: isinstance(s, str)), "a list of names"),
            ("actions", _list_of(data["actions"], lambda a: _is_int(a) and a >= 0), "a list of ints >= 0"),
            ("returns", data["returns"] is None or _list_of(data["returns"], _is_number), "null or a list of numbers"),
            ("info", isinstance(data["info"], Mapping), "an object"),
        ]
        for key, ok, what in checks:
            if not ok:
                raise ReplayError(f"{where}: {key} must be {what}, got {data[key]!r}"[:300])
        returns = data["returns"]
        return cls(
            game=data["game"],
            game_version=data["game_version"],
            options=dict(data["options"]),
            seed=data["seed"],
            seats=tuple(data["seats"]),
            actions=tuple(data["actions"]),
            returns=None if returns is None else tuple(float(r) for r in returns),
            info=dict(data["info"]),
        )

    def rules(self) -> Rules[Any]:
        """The rules engine of this replay's game and options; ``ReplayError`` if it is another version now."""
        try:
            rules = make_rules(self.game, **self.options)
        except JerichoError as e:
            raise ReplayError(f"replay of {self.game!r}: {e}") from None
        if rules.version != self.game_version:
            raise ReplayError(
                f"replay of {self.game} v{self.game_version}, but this jericho-env plays {self.game} v{rules.version}: "
                "the same actions may not give the same game"
            )
        if len(self.seats) != rules.info.num_players:
            raise ReplayError(f"replay names {len(self.seats)} seats; {self.game} here has {rules.info.num_players}")
        return rules

    def states(self, rules: Rules[Any] | None = None) -> list[Any]:
        """Every state of the game: before the first action, then after each; ``ReplayError`` if one does not fit.

        Each action is checked legal; a finished replay must end the game with the recorded returns.
        """
        rules = rules or self.rules()
        state = rules.initial_state(np.random.default_rng(self.seed))
        out = [rules.clone(state)]
        for ply, action in enumerate(self.actions):
            try:
                rules.apply(state, action)
            except JerichoError as e:
                raise ReplayError(
                    f"replay of {self.game} (seed {self.seed}): move {ply + 1} does not replay: {e}"
                ) from None
            out.append(rules.clone(state))
        if self.returns is not None:
            if not rules.is_terminal(state):
                raise ReplayError(
                    f"replay of {self.game} (seed {self.seed}) records returns, but its {len(self.actions)} moves "
                    "do not end the game"
                )
            got = [float(r) for r in rules.returns(state)]
            if len(got) != len(self.returns) or any(
                not math.isclose(a, b, abs_tol=1e-9) for a, b in zip(got, self.returns, strict=True)
            ):
                raise ReplayError(
                    f"replay of {self.game} (seed {self.seed}) ends with returns {got}, "
                    f"not the recorded {list(self.returns)}"
                )
        return out


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) and math.isfinite(v)


def _list_of(v: Any, ok: Any) -> bool:
    return isinstance(v, list) and all(ok(x) for x in v)


def write_replays(path: str | Path, replays: Iterable[Replay]) -> Path:
    """Write ``replays`` to ``path``, one JSON object per line (through a temporary file and a rename)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for r in replays:
            f.write(json.dumps(r.to_json(), separators=(",", ":")) + "\n")
    tmp.replace(path)
    return path


def read_replays(path: str | Path) -> list[Replay]:
    """Every replay of a ``replays.jsonl`` file; ``ReplayError`` naming the file and line of the first bad one."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise ReplayError(f"cannot read replays from {str(path)!r}: {e}") from None
    out = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        where = f"{path.name} line {i + 1}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as e:
            raise ReplayError(f"{where}: not JSON ({e.msg} at column {e.colno})") from None
        out.append(Replay.from_json(data, where))
    return out
