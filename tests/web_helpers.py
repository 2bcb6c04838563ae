"""Helpers of the web tests: a real server in a thread, the page's JSON errors, a font's characters."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import uvicorn


def has_agent_options_hook() -> bool:
    """Whether this project's agents provider (``agents.registry``) has the ``agent_options`` plugin hook."""
    from jericho_env.agent_plugins import providers

    return callable(getattr(providers().get("agents"), "agent_options", None))


NO_HOOK = "agents/registry.py has no agent_options(name, game_id) hook (the options of a shipped network's card)"


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """``app`` under uvicorn in a thread on a free port of 127.0.0.1; yields its base address."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the web server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def error(r: Any, status: int, *words: str) -> None:
    """``r`` is a JSON error of ``status`` whose message holds every one of ``words``."""
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json"), r.headers
    message = r.json()["error"]
    for w in words:
        assert w in message, message


def font_characters(path: Path) -> set[int]:
    """The code points a TrueType font draws (its ``cmap`` table, formats 4 and 12), read without a font library."""
    data = path.read_bytes()
    tables = {data[12 + 16 * i : 16 + 16 * i]: struct.unpack(">II", data[20 + 16 * i : 28 + 16 * i])
              for i in range(struct.unpack(">H", data[4:6])[0])}  # fmt: skip
    cmap = tables[b"cmap"][0]
    found: set[int] = set()
    for k in range(struct.unpack(">H", data[cmap + 2 : cmap + 4])[0]):
        (offset,) = struct.unpack(">I", data[cmap + 8 + 8 * k : cmap + 12 + 8 * k])
        sub = cmap + offset
        fmt = struct.unpack(">H", data[sub : sub + 2])[0]
        if fmt == 4:
            segs = struct.unpack(">H", data[sub + 6 : sub + 8])[0] // 2
            ends = struct.unpack(f">{segs}H", data[sub + 14 : sub + 14 + 2 * segs])
            starts = struct.unpack(f">{segs}H", data[sub + 16 + 2 * segs : sub + 16 + 4 * segs])
            deltas = struct.unpack(f">{segs}h", data[sub + 16 + 4 * segs : sub + 16 + 6 * segs])
            range_at = sub + 16 + 6 * segs
            ranges = struct.unpack(f">{segs}H", data[range_at : range_at + 2 * segs])
            for i, (start, end) in enumerate(zip(starts, ends, strict=True)):
                for c in range(start, end + 1):
                    if c == 0xFFFF:
                        continue
                    if ranges[i] == 0:
                        glyph = (c + deltas[i]) & 0xFFFF
                    else:
                        at = range_at + 2 * i + ranges[i] + 2 * (c - start)
                        glyph = struct.unpack(">H", data[at : at + 2])[0]
                        glyph = (glyph + deltas[i]) & 0xFFFF if glyph else 0
                    if glyph:
                        found.add(c)
        elif fmt == 12:
            (groups,) = struct.unpack(">I", data[sub + 12 : sub + 16])
            for g in range(groups):
                start, end, glyph = struct.unpack(">III", data[sub + 16 + 12 * g : sub + 28 + 12 * g])
                found.update(range(start, end + 1))
    return found
