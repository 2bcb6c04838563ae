"""PPO checkpoints loaded once per server and shared by every game that plays against them.

Loading a checkpoint (reading the zip, rebuilding the network, checking its game, options and
observation version) takes seconds; a game's agent around an already loaded network takes
milliseconds. So the first game against a checkpoint builds its agent through the agent plugins
(``make("ppo", game, path=...)``, ``make`` being ``make_agent`` or the server's ``Opponents.make``),
and the cache keeps that agent's network
(``agent.policy``); the next games get their own agent (own seed, own prior) around the same
network: ``make("ppo", game, model=network)``, the ppo agent's way to wrap a loaded policy.
Playing only reads the network, so games share it across threads.

The cache is a least-recently-used map bounded in bytes (``max_bytes``, the networks' parameters,
or the file's size for a network without ``parameters()``): beyond it the least recently used
networks are dropped (games still playing against one keep it until they end); a network larger
than the whole bound is used by its game and not kept. A checkpoint is
known by its path, size and modification time, so a file rewritten by a training run is loaded
again. Loads of one checkpoint wait for each other (30 games started at once load it once).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jericho_env.agent_plugins import PlayingAgent, make_agent

CHECKPOINT_AGENT = "ppo"  # the agent name that plays a checkpoint file (the page's "ppo:RELPATH")
Key = tuple[str, str, int, int, str]


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
    ) -> PlayingAgent:
        """A new agent playing checkpoint ``path`` for ``game_id`` with ``options``; its network loaded at most once.

        ``make(name, game_id, **kwargs)`` builds agents (``make_agent`` or the server's ``Opponents.make``).
        """
        stat = path.stat()
        key: Key = (game_id, str(path.resolve()), stat.st_size, stat.st_mtime_ns, repr(sorted(options.items())))
        with self._lock:
            gate = self._loading.setdefault(key, threading.Lock())
        with gate:  # a second game asking for the same checkpoint waits for the first load
            network = self._get(key)
            if network is None:
                loaded = make(CHECKPOINT_AGENT, game_id, path=str(path), seed=seed, **options)
                self.loads += 1
                network = getattr(loaded, "policy", None)
                if network is None:  # an agent that does not expose its network: nothing to share
                    return loaded
                self._put(key, network, network_bytes(network, path))
                return loaded
        return make(CHECKPOINT_AGENT, game_id, model=network, seed=seed, **options)

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
