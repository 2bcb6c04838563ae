"""The model zoo: trained agents shipped inside the package, so that ``agents.make("ppo", "castles")`` needs no path.

The folder ``agents/zoo/`` (package data) holds, per game and kind of network (``ppo``, ``exit``, ``dmc``):

- ``<game>-<kind>.zip``: the checkpoint, in the safe format of ``agents.checkpoint``, the policy's tensors only;
- ``<game>-<kind>.json``: its card: the game, options and versions, the package version, the command, seed and
  commit that made it, the training steps and time, its scores, and the file's size and SHA-256.

``experiments.zoo add RUN_FOLDER`` makes an entry; ``zoo()`` lists them (``print(agents.zoo())``: a table);
``agents.ppo.shipped_policy`` loads an entry's network once per process. This module reads only the folder and
the cards. ``JERICHO_ENV_ZOO`` points ``zoo()`` at another folder (tests, entries not shipped yet).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

ZOO_ENV = "JERICHO_ENV_ZOO"
PACKAGE_FOLDER = Path(__file__).resolve().parent / "zoo"
# the kind of network of an entry -> the agent names that play it
KINDS: dict[str, tuple[str, ...]] = {"ppo": ("ppo",), "exit": ("exit", "exit-search"), "dmc": ("dmc",)}
CHECKPOINT_AGENTS: tuple[str, ...] = tuple(a for names in KINDS.values() for a in names)
CARD_VERSION = 1


class ZooError(ValueError):
    """A zoo entry that is missing, damaged, or does not fit what was asked."""


def kind_of(agent: str) -> str:
    """The kind of zoo entry that ``agent`` plays (``exit-search`` -> ``exit``); ``ZooError`` for other agents."""
    for kind, names in KINDS.items():
        if agent in names:
            return kind
    raise ZooError(f"agent {agent!r} plays no checkpoint; the zoo ships {', '.join(CHECKPOINT_AGENTS)}")


def sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclasses.dataclass(frozen=True)
class ZooEntry:
    """One shipped network: ``<game>-<kind>.zip`` and its card ``<game>-<kind>.json``."""

    game: str
    kind: str  # a key of KINDS
    path: Path  # the checkpoint
    card: Mapping[str, Any]

    @property
    def name(self) -> str:
        """``<game>-<kind>``, the files' stem."""
        return f"{self.game}-{self.kind}"

    @property
    def agents(self) -> tuple[str, ...]:
        """The agent names that play this network."""
        return KINDS[self.kind]

    @property
    def size(self) -> int:
        """The checkpoint's size in bytes."""
        return self.path.stat().st_size

    def scores(self, agent: str | None = None) -> dict[str, Any]:
        """The card's final-table cells of ``agent`` (default: the kind's own agent) by opponent."""
        return dict(self.card.get("scores", {}).get(agent or self.kind, {}))

    def trained(self) -> str:
        """How much it was trained: steps (ppo), iterations (exit) or positions generated (dmc)."""
        training = self.card.get("training", {})
        if self.kind == "ppo":
            return f"{int(training.get('steps', 0)):,} steps"
        if self.kind == "dmc":
            return f"{int(training.get('positions_generated', 0)):,} positions"
        n = training.get("iterations", "?")
        return f"{n} iteration{'' if n == 1 else 's'}"

    def line(self) -> str:
        """One line for ``str(zoo())``: game, agents, file size, training, scores against random and greedy."""
        trained = self.trained()
        seconds = self.card.get("training", {}).get("seconds")
        if isinstance(seconds, (int, float)):
            trained += f", {seconds / 60:.0f} min" if seconds >= 60 else f", {seconds:.0f} s"
        cells = self.scores()
        vs = []
        for opponent in ("random", "greedy"):
            c = cells.get(opponent)
            if c:
                lo, hi = c["ci95"]
                vs.append(f"vs {opponent} {100 * c['score']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]")
        if vs and self.card.get("scores", {}).get("table") == "training.json":  # a dmc run's: no final table
            vs[-1] += " (its run's last evaluation)"
        agents = ", ".join(self.agents)
        return f"{self.game:<8} {agents:<18} {self.path.name:<20} {self.size / 1024:>7.0f} KiB  {trained:<28} " + (
            "; ".join(vs) or "no scores on the card"
        )


class Zoo:
    """The entries of one zoo folder, ordered by game then kind; ``str()`` is a table of them."""

    def __init__(self, folder: Path, entries: list[ZooEntry]) -> None:
        self.folder = folder
        self.entries = sorted(entries, key=lambda e: (e.game, list(KINDS).index(e.kind)))

    def __iter__(self) -> Iterator[ZooEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __getitem__(self, i: int) -> ZooEntry:
        return self.entries[i]

    def __repr__(self) -> str:
        return f"Zoo({str(self.folder)!r}, [{', '.join(e.name for e in self.entries)}])"

    def __str__(self) -> str:
        if not self.entries:
            return f"no agents shipped in {self.folder}"
        head = f"{'game':<8} {'agents':<18} {'file':<20} {'size':>11}  {'training':<28} final-table scores [95%]"
        return "\n".join([f"zoo: {self.folder}", head, *(e.line() for e in self.entries)])

    def games(self) -> list[str]:
        """The games with at least one entry."""
        return sorted({e.game for e in self.entries})

    def entry(self, agent: str, game_id: str) -> ZooEntry | None:
        """The entry ``agent`` plays for ``game_id``, or None."""
        kind = kind_of(agent)
        return next((e for e in self.entries if e.game == game_id and e.kind == kind), None)

    def agent_names(self, game_id: str) -> list[str]:
        """The agent names that have a shipped network for ``game_id``."""
        return [a for e in self.entries if e.game == game_id for a in e.agents]


def zoo_folder() -> Path:
    """The folder ``zoo()`` reads: ``$JERICHO_ENV_ZOO`` if set, else the package's ``agents/zoo``."""
    given = os.environ.get(ZOO_ENV)
    if given:
        folder = Path(given)
        if not folder.is_dir():
            raise ZooError(f"{ZOO_ENV}={given!r} is not a folder (unset it to use the package's zoo)")
        return folder
    return PACKAGE_FOLDER


def read_card(path: Path) -> dict[str, Any]:
    """A card's JSON, checked to be an object naming its game and kind; ``ZooError`` naming the file otherwise."""
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ZooError(f"zoo card {str(path)!r} is unreadable: {e}") from None
    if not isinstance(card, dict) or not isinstance(card.get("game"), str) or card.get("kind") not in KINDS:
        raise ZooError(f"zoo card {str(path)!r} must be a JSON object with game and kind ({', '.join(KINDS)})")
    return card


def zoo(folder: str | Path | None = None) -> Zoo:
    """The shipped agents: each ``<game>-<kind>.json`` card and its checkpoint in ``folder`` (default ``zoo_folder()``).

    A card without its checkpoint, a checkpoint without its card, or a card whose game or kind differs
    from its file name raises ``ZooError`` naming the file.
    """
    where = Path(folder) if folder is not None else zoo_folder()
    if not where.is_dir():
        return Zoo(where, [])
    entries = []
    for card_path in sorted(where.glob("*.json")):
        card = read_card(card_path)
        stem = f"{card['game']}-{card['kind']}"
        if card_path.stem != stem:
            raise ZooError(f"zoo card {str(card_path)!r} describes {stem}, so it must be named {stem}.json")
        zip_path = card_path.with_suffix(".zip")
        if not zip_path.is_file():
            raise ZooError(f"zoo card {str(card_path)!r} has no checkpoint {zip_path.name} beside it")
        entries.append(ZooEntry(card["game"], card["kind"], zip_path, card))
    orphans = sorted({p.stem for p in where.glob("*.zip")} - {e.name for e in entries})
    if orphans:
        raise ZooError(f"zoo folder {str(where)!r}: {', '.join(o + '.zip' for o in orphans)} has no card")
    return Zoo(where, entries)


def shipped(agent: str, game_id: str, options: Mapping[str, Any] | None = None) -> ZooEntry:
    """The entry ``agent`` plays for ``game_id`` under ``options``; ``ZooError`` saying what is shipped otherwise."""
    from jericho_env.registry import make_rules

    wanted = make_rules(game_id, **dict(options or {})).options
    kind = kind_of(agent)
    the_zoo = zoo()
    entry = the_zoo.entry(agent, game_id)
    if entry is None:
        have = ", ".join(e.name for e in the_zoo) or "nothing"
        raise ZooError(
            f"agent {agent} needs a checkpoint: none is shipped for {game_id} (the zoo {the_zoo.folder} has {have}); "
            f"write {agent}=PATH on the command line, path= in agents.make"
        )
    trained = make_rules(game_id, **dict(entry.card.get("options") or {})).options
    if dict(trained) != dict(wanted):
        differ = ", ".join(f"{k}={trained[k]!r}" for k in trained if trained[k] != wanted.get(k))
        raise ZooError(
            f"the shipped {kind} network for {game_id} ({entry.path.name}) was trained with {differ}; for other "
            f"options give {agent} a checkpoint trained on them (path=)"
        )
    return entry


def check_sha(entry: ZooEntry) -> None:
    """``ZooError`` unless the entry's checkpoint matches the SHA-256 on its card."""
    if entry.card.get("file", {}).get("sha256") != sha256(entry.path):
        raise ZooError(
            f"{str(entry.path)!r} does not match the SHA-256 on its card {entry.name}.json: the file changed "
            "after `python -m experiments.zoo add` wrote the card (add it again)"
        )


def zoo_network_unfit(game_id: str, options: dict[str, Any] | None = None) -> str | None:
    """Why the zoo's ``dmc`` network of ``game_id`` cannot guide ``dmc-search``, or None if it can.

    The search reads Q as a zero-sum value of the seat to move; a network that learned against greedy
    (its card's ``config.versus_share`` above 0: grid's preset) holds a seat's return against greedy instead.
    """
    entry = shipped("dmc", game_id, options or {})
    config = entry.card.get("config") or {}
    share = float(config.get("versus_share", config.get("versus_greedy")) or 0.0)  # its name before: versus_greedy
    if share > 0:
        return (
            f"the zoo's {game_id} dmc network learned against greedy (versus_share {share:g}): its Q is a seat's "
            "return against greedy, not a zero-sum value"
        )
    return None
