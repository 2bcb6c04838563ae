"""The checkpoints under the server's runs folder: which game, options and agent each was trained for
(read from its card or its ``meta.json``, never loaded to find out), and the networks loaded once per
server and shared by every game that plays against them.

What a file is (``read_checkpoint``): a card beside it (``<stem>.json``, as the model zoo writes them:
``game``, ``kind``, ``options``) says so; otherwise the ``meta.json`` inside the zip, which every
checkpoint of this package holds (``"jericho-env checkpoint"``: a PPO network, or an expert-iteration
one when its training says ``"algorithm": "exit"``; ``"jericho-env dmc checkpoint"``: a Deep Monte-Carlo
network). Its options are completed with the game's defaults, and its observation version must be one
this package writes for those options. A zip that is none of these (a Stable-Baselines3 file, a
damaged one, a network of a game this package lacks or of an observation version it no longer writes)
is not offered. Each kind is played by the agents that play it in the zoo (``KIND_AGENTS``, the same
table as ``agents.pretrained.KINDS``, which the engine may not import): the page offers
``AGENT:RELPATH`` for the game and options the network was trained for, named by what it is
(``CheckpointFile.label``). ``CheckpointList`` reads each file once per size and modification time.

Loading a checkpoint (reading the zip, rebuilding the network, checking its game, options and
observation version) takes seconds; a game's agent around an already loaded network takes
milliseconds. So the first game against a checkpoint builds its agent through the agent plugins
(``make("ppo", game, path=...)``, ``make`` being ``make_agent`` or the server's ``Opponents.make``),
and the cache keeps that agent's network (``agent.policy``, or ``agent.network`` for dmc); the next
games get their own agent (own seed, own prior) around the same network: ``make("ppo", game,
model=network)`` (``network=`` for dmc), the agents' way to wrap a loaded network. Playing only
reads the network, so games share it across threads.

The cache is a least-recently-used map bounded in bytes (``max_bytes``, the networks' parameters,
or the file's size for a network without ``parameters()``): beyond it the least recently used
networks are dropped (games still playing against one keep it until they end); a network larger
than the whole bound is used by its game and not kept. A checkpoint is
known by its path, size and modification time, so a file rewritten by a training run is loaded
again. Loads of one checkpoint wait for each other (30 games started at once load it once).
"""

from __future__ import annotations

import dataclasses
import json
import threading
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from jericho_env.agent_plugins import PlayingAgent, make_agent
from jericho_env.core.rules import JerichoError
from jericho_env.registry import known_game_ids, make_rules, rules_class

CHECKPOINT_AGENT = "ppo"  # the agent name that plays a PPO checkpoint file (the page's "ppo:RELPATH")
# the kinds of network and the agents that play each (agents.pretrained.KINDS; read here, not imported)
KIND_AGENTS: dict[str, tuple[str, ...]] = {"ppo": ("ppo",), "exit": ("exit", "exit-search"), "dmc": ("dmc",)}
FORMATS = {"jericho-env checkpoint": "ppo", "jericho-env dmc checkpoint": "dmc"}  # meta.json's format -> kind
MAX_META_BYTES = 1 << 20  # a meta.json or card larger than this is not one of this package's
Key = tuple[str, str, str, int, int, str]
SHARED = (("policy", "model"), ("network", "network"))  # an agent's loaded network, and how a new agent takes it


@dataclasses.dataclass(frozen=True)
class CheckpointFile:
    """A checkpoint found under the runs folder: where it is, and the game, options and kind it was trained for."""

    rel: str  # its path under the runs folder, as the page names it
    path: Path
    game: str
    kind: str  # a key of KIND_AGENTS
    options: dict[str, Any]  # every option of the game, as trained
    trained: str  # how much: "4,001,792 steps", "2 iterations", "3,001,431 positions" (or "")

    @property
    def agents(self) -> tuple[str, ...]:
        """The agent names that play it."""
        return KIND_AGENTS[self.kind]

    def name(self, agent: str) -> str:
        """``AGENT:RELPATH``, the page's value for it played by ``agent``."""
        return f"{agent}:{self.rel}"

    def label(self, agent: str) -> str:
        """What the page lists: ``exit-search: runs-a/final.zip (an exit network, 2 iterations)``."""
        what = {"ppo": "a PPO network", "exit": "an expert-iteration network", "dmc": "a Deep Monte-Carlo network"}
        return f"{agent}: {self.rel} ({what[self.kind]}" + (f", {self.trained})" if self.trained else ")")


def _json_member(path: Path, member: str | None) -> Any:
    """The JSON of file ``path`` (``member=None``) or of ``member`` inside the zip ``path``; None if unreadable."""
    try:
        if member is None:
            if path.stat().st_size > MAX_META_BYTES:
                return None
            return json.loads(path.read_text(encoding="utf-8"))
        with zipfile.ZipFile(path) as zf:
            if zf.getinfo(member).file_size > MAX_META_BYTES:
                return None
            return json.loads(zf.read(member).decode("utf-8"))
    except (OSError, KeyError, zipfile.BadZipFile, UnicodeDecodeError, ValueError, RuntimeError):
        return None


def _trained(kind: str, meta: Mapping[str, Any]) -> str:
    training = meta.get("training")
    if not isinstance(training, Mapping):
        return ""
    if kind == "dmc":
        n, unit = (training.get("stats") or {}).get("positions_generated"), "positions"
    elif kind == "exit":
        n, unit = (training.get("exit") or {}).get("iterations", training.get("iteration")), "iterations"
    else:
        n, unit = training.get("num_timesteps", training.get("steps")), "steps"
    if isinstance(n, bool) or not isinstance(n, int):
        return ""
    return f"{n:,} {unit[:-1] if n == 1 else unit}"


def trained_options(game: str, options: Any, observation_version: Any) -> dict[str, Any] | None:
    """Every option ``game`` takes, as a network trained with ``options`` reading ``observation_version`` needs.

    ``None`` when they are not options of ``game`` or this package gives no such observation version. A
    card or meta written before the game had the ``obs_version`` option gets it from the observation version.
    """
    if game not in known_game_ids() or not isinstance(options, Mapping):
        return None
    given = dict(options)
    names = {o.name for o in rules_class(game).OPTIONS}
    if "obs_version" in names and "obs_version" not in given and isinstance(observation_version, int):
        given["obs_version"] = observation_version
    try:
        rules = make_rules(game, **given)
    except (JerichoError, ValueError, TypeError):
        return None
    if isinstance(observation_version, int) and rules.observation_version != observation_version:
        return None
    return dict(rules.options)


def read_checkpoint(path: Path, rel: str) -> CheckpointFile | None:
    """What ``path`` is (see the module), or ``None`` if it is not a checkpoint this package can play."""
    card = _json_member(path.with_suffix(".json"), None) if path.with_suffix(".json").is_file() else None
    meta = _json_member(path, "meta.json")
    if not isinstance(meta, dict):
        return None
    game: Any
    if isinstance(card, dict) and card.get("kind") in KIND_AGENTS and isinstance(card.get("game"), str):
        kind, game = str(card["kind"]), str(card["game"])
        options, version = card.get("options", {}), card.get("observation_version")
    else:
        kind = FORMATS.get(str(meta.get("format")), "")
        if kind == "ppo" and (meta.get("training") or {}).get("algorithm") == "exit":
            kind = "exit"
        game, options, version = meta.get("game_id"), meta.get("options", {}), meta.get("observation_version")
    if kind not in KIND_AGENTS or not isinstance(game, str) or game != meta.get("game_id"):
        return None
    full = trained_options(game, options, version)
    if full is None:
        return None
    return CheckpointFile(rel, path, game, kind, full, _trained(kind, meta))


class CheckpointList:
    """The checkpoints under a folder, each file read once per size and modification time."""

    def __init__(self, limit: int = 500) -> None:
        self.limit = limit
        self._seen: dict[str, tuple[int, int, CheckpointFile | None]] = {}
        self._lock = threading.Lock()

    def under(self, runs: Path) -> dict[str, CheckpointFile]:
        """The checkpoints under ``runs`` by their path relative to it (at most ``limit`` zip files looked at)."""
        if not runs.is_dir():
            return {}
        out: dict[str, CheckpointFile] = {}
        for path in sorted(p for p in runs.rglob("*.zip") if p.is_file())[: self.limit]:
            rel = path.relative_to(runs).as_posix()
            try:
                stat = path.stat()
            except OSError:
                continue
            with self._lock:
                seen = self._seen.get(rel)
            if seen is None or seen[:2] != (stat.st_size, stat.st_mtime_ns):
                seen = (stat.st_size, stat.st_mtime_ns, read_checkpoint(path, rel))
                with self._lock:
                    self._seen[rel] = seen
            if seen[2] is not None:
                out[rel] = seen[2]
        return out


def network_bytes(network: Any, path: Path) -> int:
    """Bytes held by ``network``'s parameters, or the checkpoint file's size if it has no ``parameters()``."""
    params = getattr(network, "parameters", None)
    if callable(params):
        return int(sum(p.numel() * p.element_size() for p in params()))
    return path.stat().st_size


class CheckpointCache:
    """Loaded checkpoint networks by (game, path, size, mtime, options), least recently used first out."""

    def __init__(self, max_bytes: int = 512 * 2**20) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
        self.max_bytes = max_bytes
        self.loads = 0  # checkpoints read from disk so far (each miss)
        self._networks: OrderedDict[Key, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[Key, threading.Lock] = {}

    @property
    def bytes(self) -> int:
        """The bytes of the networks held now."""
        with self._lock:
            return sum(size for _, size in self._networks.values())

    def __len__(self) -> int:
        return len(self._networks)

    def agent(
        self,
        game_id: str,
        path: Path,
        options: dict[str, Any],
        seed: int,
        make: Callable[..., PlayingAgent] = make_agent,
        agent: str = CHECKPOINT_AGENT,
    ) -> PlayingAgent:
        """A new ``agent`` playing checkpoint ``path`` for ``game_id`` with ``options``; its network loaded once.

        ``make(name, game_id, **kwargs)`` builds agents (``make_agent`` or the server's ``Opponents.make``).
        An agent exposing its network as ``policy`` (ppo, exit) is made again around it with ``model=``,
        one exposing ``network`` (dmc) with ``network=``; one exposing neither loads the file each time.
        """
        stat = path.stat()
        key: Key = (agent, game_id, str(path.resolve()), stat.st_size, stat.st_mtime_ns, repr(sorted(options.items())))
        with self._lock:
            gate = self._loading.setdefault(key, threading.Lock())
        with gate:  # a second game asking for the same checkpoint waits for the first load
            hit = self._get(key)
            if hit is None:
                loaded = make(agent, game_id, path=str(path), seed=seed, **options)
                self.loads += 1
                for attribute, kwarg in SHARED:
                    network = getattr(loaded, attribute, None)
                    if network is not None:
                        self._put(key, (kwarg, network), network_bytes(network, path))
                        break
                return loaded  # an agent that does not expose its network: nothing to share
        kwarg, network = hit
        return make(agent, game_id, **{kwarg: network}, seed=seed, **options)

    def _get(self, key: Key) -> Any | None:
        with self._lock:
            hit = self._networks.get(key)
            if hit is None:
                return None
            self._networks.move_to_end(key)
            return hit[0]

    def _put(self, key: Key, network: Any, size: int) -> None:
        with self._lock:
            if size > self.max_bytes:  # larger than the whole bound: used by its game, not kept
                return
            self._networks[key] = (network, size)
            total = sum(s for _, s in self._networks.values())
            while total > self.max_bytes:
                old, (_, old_size) = self._networks.popitem(last=False)
                self._loading.pop(old, None)
                total -= old_size
