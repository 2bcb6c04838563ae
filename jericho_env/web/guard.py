"""What the server checks before any route runs: the Host, the Origin, JSON bodies and their size; who is asking.

``Guard`` is an ASGI middleware in front of every route:

* **Host**: the request's ``Host`` must name the served address (by default ``127.0.0.1``,
  ``localhost``, ``::1``; more with ``allowed_hosts``, ``--allow-host NAME`` on the command line,
  ``*`` for any). A page on another site cannot reach the server through a name of its own
  (DNS rebinding): 400.
* **Origin**: a request that changes something (any method but ``GET`` and ``HEAD``) and carries an
  ``Origin`` must come from the page's own origin (the same host and port as the request): 403.
  Browsers send ``Origin`` with every such request, so another site's page is refused; programs
  (``curl``, ``httpx``) send none and are let through.
* **JSON**: ``POST``, ``PUT`` and ``PATCH`` bodies must be ``application/json`` (415): a page on
  another site can send plain text or a form without asking, but not JSON.
* **Size**: a ``Content-Length`` over ``MAX_BODY`` is refused before the body is read (413);
  ``read_json`` counts the bytes as they arrive and stops at the limit (bodies sent in chunks).
* **Visitor**: every browser gets a cookie (``VISITOR_COOKIE``, random, ``HttpOnly``,
  ``SameSite=Strict``) naming it as a visitor; ``request.state.visitor`` is that name, and the
  sessions a visitor makes are theirs alone (``jericho_env.web.sessions.SessionStore``). A request
  that came without the cookie (or with one the server never gave) is named a new visitor and
  marked ``request.state.anonymous``: the games such requests make share one small pool.

Every refusal is JSON, ``{"error": message}``, as from the routes.
"""

from __future__ import annotations

import json
import math
import re
import secrets
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from jericho_env.web.sessions import WebError

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
ANY_HOST = "*"
MAX_BODY = 20_000  # bytes of a request body: every request of the page is a few hundred
MAX_DEPTH = 32  # nesting of a request's JSON: the page's deepest is 3
VISITOR_COOKIE = "jericho_visitor"
_VISITOR = re.compile(r"[0-9a-f]{32}")
_READ_ONLY = frozenset({"GET", "HEAD"})
_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})


def host_name(host: str) -> str:
    """The name part of a ``Host`` header, lower case: ``localhost:8000`` -> ``localhost``, ``[::1]:80`` -> ``::1``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard:
    """The ASGI middleware checking Host, Origin, JSON and body size, and naming the visitor (see the module)."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] = LOCAL_HOSTS) -> None:
        self.app = app
        self.allowed = frozenset(host_name(h) if h != ANY_HOST else h for h in allowed_hosts)
        if not self.allowed:
            raise ValueError(f"allowed_hosts is empty: name at least one host (default {', '.join(LOCAL_HOSTS)})")

    def refusal(self, method: str, headers: Headers) -> WebError | None:
        """Why the server refuses this request before any route runs, or ``None``."""
        host = headers.get("host", "")
        if ANY_HOST not in self.allowed and host_name(host) not in self.allowed:
            return WebError(
                400,
                f"this server answers to {', '.join(sorted(self.allowed))}, not to Host {host[:100]!r}; "
                "to serve it under another name on purpose, start it with --allow-host NAME",
            )
        if method not in _READ_ONLY:
            origin = headers.get("origin")
            if origin is not None and (
                urlsplit(origin).scheme not in ("http", "https") or urlsplit(origin).netloc.lower() != host.lower()
            ):
                return WebError(
                    403,
                    f"requests that change games must come from this server's own page (http://{host[:100]}), "
                    f"not from {origin[:100]!r}",
                )
        if method in _WITH_BODY:
            media = headers.get("content-type", "").split(";")[0].strip().lower()
            if media != "application/json":
                return WebError(415, f"the request body must be JSON (Content-Type: application/json), not {media!r}")
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            if not length.isdigit():
                return WebError(400, f"Content-Length must be a number of bytes, got {length[:40]!r}")
            return WebError(413, f"request body of {length} bytes; the page's requests stay under {MAX_BODY}")
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse the request with a JSON error, or pass it on with ``scope["state"]["visitor"]`` set."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        problem = self.refusal(scope["method"], headers)
        if problem is not None:
            response = JSONResponse({"error": problem.message}, problem.status, headers={"Cache-Control": "no-store"})
            await response(scope, receive, send)
            return
        visitor = Request(scope).cookies.get(VISITOR_COOKIE, "")
        fresh = not _VISITOR.fullmatch(visitor)
        if fresh:
            visitor = secrets.token_hex(16)
        scope.setdefault("state", {})["visitor"] = visitor
        scope["state"]["anonymous"] = fresh

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                cookie = f"{VISITOR_COOKIE}={visitor}; Path=/; HttpOnly; SameSite=Strict"
                MutableHeaders(scope=message).append("set-cookie", cookie)
            await send(message)

        await self.app(scope, receive, send_with_cookie if fresh else send)


def visitor_of(request: Request) -> str:
    """The visitor ``Guard`` named for this request."""
    return str(request.state.visitor)


def anonymous_of(request: Request) -> bool:
    """Whether the request came without the visitor cookie (``Guard`` named a new visitor for it)."""
    return bool(getattr(request.state, "anonymous", False))


def _depth(data: Any) -> int:
    """How deeply lists and objects nest in ``data`` (a scalar: 0), without recursion."""
    deepest, todo = 0, [(data, 1)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level)
            if level > MAX_DEPTH:
                break
            todo += [(v, level + 1) for v in (item.values() if isinstance(item, dict) else item)]
    return deepest


async def read_json(request: Request, fields: Iterable[str]) -> dict[str, Any]:
    """The request body as a JSON object of ``fields`` (each optional), read up to ``MAX_BODY`` bytes.

    ``WebError`` 413 past the limit, 400 for anything else: not JSON, not an object, nested deeper
    than ``MAX_DEPTH``, or a field the request does not take.
    """
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:  # stop reading: the rest is never taken in
            raise WebError(413, f"request body over {MAX_BODY} bytes; the page's requests stay under {MAX_BODY}")
        chunks.append(chunk)
    raw = b"".join(chunks)
    try:
        data = json.loads(raw or b"{}", parse_constant=lambda c: math.nan)
    except RecursionError:
        raise WebError(400, f"the request body nests too deeply: at most {MAX_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise WebError(400, f"the request body must be a JSON object: {e}") from None
    if not isinstance(data, dict):
        raise WebError(400, f"the request body must be a JSON object, got {type(data).__name__}")
    if _depth(data) > MAX_DEPTH:
        raise WebError(400, f"the request body nests too deeply: at most {MAX_DEPTH} levels")
    known = list(fields)
    unknown = [k for k in data if k not in known]
    if unknown:
        raise WebError(
            400,
            f"unknown field(s) {', '.join(repr(k[:40]) for k in unknown[:5])}: this request takes {', '.join(known)}",
        )
    return data
