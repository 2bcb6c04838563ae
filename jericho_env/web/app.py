"""The web server's routes: one static page and JSON endpoints over ``SessionStore`` sessions.

Routes (every answer is JSON, errors as ``{"error": message}`` with an HTTP status):

* ``GET /api/games``: each game, its options (label, help, default, allowed values or bounds:
  ``jericho_env.web.catalog.option_field``), seats, who moves first, its rules in short, and its
  agents, with the options each restricted agent plays only (``agent_options``), and the checkpoints
  found under the server's runs folder that play it (``checkpoints``: value, label, agent, kind and
  the options each was trained with); ``checkpoints`` at the top lists every value.
* ``POST /api/play``: ``{game, options, seat, agents}``: a game with a human in ``seat`` (required:
  ``0..players-1``; ``agents`` has ``null`` there).
* ``POST /api/watch``: ``{game, options, agents}``: agents against each other, stepped by the page.
* ``GET /api/replays`` lists the recorded games; ``POST /api/replay`` ``{file, index}`` opens one.
* ``GET /api/session/ID?seat=S&ply=P``: the view of a game (``seat=all``: the full view).
* ``POST /api/session/ID/move`` ``{action, ply}`` (play) and ``POST /api/session/ID/step`` ``{ply}``
  (watch); ``DELETE /api/session/ID`` forgets a game (the page does when it leaves one).
* ``GET /rules/GAME``: the game's page (its rules, properties and encodings) as text.
* ``GET /favicon.ico``: the page's icon.

A refused start names what to change in the player's words, and the form field to blame
(``{"error": ..., "field": "agent-1"}``, ``"option:ranks"``, ``"seat"``): an option value the game
does not allow, an agent that does not play the chosen options (``Opponents.refusal``: a shipped
network plays the options it was trained with), an agent that could not be made.

Before any route, ``jericho_env.web.guard.Guard`` checks the Host, the Origin of requests that change
something, that bodies are JSON and small, and names the visitor (a cookie): a visitor sees and
changes only their own sessions. Malformed requests of any shape get a JSON 4xx; an error inside
the server a JSON 500, never a traceback.

Agents are named as the page lists them: an agent name of the agent plugins
(``jericho_env.agent_plugins``: every name a provider offers for the game, so a provider that adds
agents, such as pretrained ones, adds them to the page) or ``AGENT:RELPATH``, a checkpoint of the
server's list played by an agent of its kind (``ppo:runs-a/final.zip``, ``exit-search:...``, ``dmc:...``;
a path the browser made up, or a network of another game or other options, is refused), loaded once
per server (``jericho_env.web.checkpoints``). Hidden information: see ``jericho_env.web.sessions``.

Every route that answers with a view of a game takes ``?w=WIDTH&h=HEIGHT``, the board's box on the
page in CSS pixels: the board is drawn for it (``jericho_env.web.boards``).
"""

from __future__ import annotations

import dataclasses
import html
import re
import threading
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from jericho_env.agent_plugins import PlayingAgent
from jericho_env.core.image import font
from jericho_env.core.rules import JerichoError
from jericho_env.registry import known_game_ids, make_rules, rules_class
from jericho_env.replay import FILE_NAME, Replay, ReplayError, read_replays
from jericho_env.user_agents import reset_agent
from jericho_env.web.boards import DEFAULT_HEIGHT, DEFAULT_WIDTH
from jericho_env.web.catalog import first_player, option_field, option_label, rules_page, rules_summary, value_words
from jericho_env.web.checkpoints import CHECKPOINT_AGENT, KIND_AGENTS, CheckpointCache, CheckpointFile, CheckpointList
from jericho_env.web.guard import LOCAL_HOSTS, Guard, anonymous_of, read_json, visitor_of
from jericho_env.web.opponents import Opponents
from jericho_env.web.sessions import Session, SessionStore, WebError, brief

STATIC = Path(__file__).parent / "static"
FONT_FILES = {
    "DejaVuSans.ttf": (False, False),
    "DejaVuSans-Bold.ttf": (True, False),
    "DejaVuSansMono.ttf": (False, True),
}
MAX_FILES = 500  # checkpoints and replay files listed from the runs folder
BOX_LIMITS = (240, 2400)  # px: the board box a page may ask for (a smaller or larger one is held to these)


@dataclasses.dataclass
class Server:
    """What the routes share: the sessions, the loaded checkpoints, the runs folder, and the server's dice."""

    runs: Path
    store: SessionStore = dataclasses.field(default_factory=SessionStore)
    checkpoint_cache: CheckpointCache = dataclasses.field(default_factory=CheckpointCache)
    opponents: Opponents = dataclasses.field(default_factory=Opponents)
    seed: int | None = None  # seeds every deal and agent the server makes (tests); None: fresh entropy

    def __post_init__(self) -> None:
        self.listing = CheckpointList(MAX_FILES)
        self._rng = np.random.default_rng(self.seed)
        self._rng_lock = threading.Lock()  # routes run in a thread pool; a Generator is not thread-safe

    def draw_seed(self) -> int:
        """A seed for a deal or an agent, from the server's own generator."""
        with self._rng_lock:
            return int(self._rng.integers(2**31))

    # ------------------------------------------------------------------ server-side lists
    def named_agents(self, game_id: str) -> list[str]:
        """The agents the page offers by name for ``game_id``: the plugin names that play with no argument.

        ``ppo`` is among them where the agents provider ships a trained network for the game (the model
        zoo); a checkpoint file is chosen as ``AGENT:RELPATH`` from the server's list instead.
        """
        return self.opponents.playable(game_id, CHECKPOINT_AGENT)

    def agent_options(self, game_id: str) -> dict[str, dict[str, Any]]:
        """The named agents of ``game_id`` that play only some options, with them (``Opponents.requirements``)."""
        out = {}
        for name in self.named_agents(game_id):
            needs = self.opponents.requirements(name, game_id)
            if needs is not None:
                out[name] = needs
        return out

    def checkpoints(self) -> dict[str, CheckpointFile]:
        """The checkpoints under ``runs`` this package plays, by their path relative to it (the page's only choices)."""
        return self.listing.under(self.runs)

    def offered_checkpoints(self, game_id: str) -> list[dict[str, Any]]:
        """The checkpoints of ``game_id`` as the page offers them: one entry per agent that plays each.

        ``value`` (``AGENT:RELPATH``), ``label`` (what it is), ``agent``, ``kind``, and ``options`` (every
        option, as it was trained: the page offers it only for those).
        """
        names = self.opponents.names(game_id)
        return [
            {"value": c.name(a), "label": c.label(a), "agent": a, "kind": c.kind, "options": c.options}
            for c in self.checkpoints().values()
            if c.game == game_id
            for a in c.agents
            if a in names
        ]

    def replay_files(self) -> dict[str, Path]:
        """The ``replays.jsonl`` files under ``runs``, by their path relative to it."""
        if not self.runs.is_dir():
            return {}
        found = sorted(p for p in self.runs.rglob(FILE_NAME) if p.is_file())[:MAX_FILES]
        return {p.relative_to(self.runs).as_posix(): p for p in found}

    def games(self) -> dict[str, Any]:
        """Every game with its options, seats, first player, rules in short and agents, for the page's forms."""
        out: list[dict[str, Any]] = []
        for game_id in known_game_ids():
            cls = rules_class(game_id)
            rules = make_rules(game_id)
            out.append(
                {
                    "id": game_id,
                    "players": rules.info.num_players,
                    "first_player": first_player(game_id),
                    "rules": rules_summary(game_id),
                    "options": [option_field(game_id, o) for o in cls.OPTIONS],
                    "agents": self.named_agents(game_id),
                    "agent_options": self.agent_options(game_id),
                    "checkpoints": self.offered_checkpoints(game_id),
                }
            )
        checkpoints = [c["value"] for g in out for c in g["checkpoints"]]
        return {"games": out, "checkpoints": checkpoints, "runs": str(self.runs)}

    def replays(self) -> list[dict[str, Any]]:
        """Every recorded game under ``runs``: file, index, game, pairing, seats, result, moves; bad files named."""
        out: list[dict[str, Any]] = []
        for rel, path in self.replay_files().items():
            try:
                replays = read_replays(path)
            except ReplayError as e:
                out.append({"file": rel, "error": str(e)})
                continue
            for i, r in enumerate(replays):
                out.append(
                    {
                        "file": rel,
                        "index": i,
                        "game": r.game,
                        "pairing": str(r.info.get("pairing", " vs ".join(dict.fromkeys(r.seats)))),
                        "deal": r.info.get("deal"),
                        "seats": list(r.seats),
                        "returns": None if r.returns is None else list(r.returns),
                        "result": str(r.info.get("result", "")),
                        "moves": len(r.actions),
                    }
                )
        return out

    # ------------------------------------------------------------------ new sessions
    def make_agents(self, game_id: str, options: dict[str, Any], specs: Any, seats: list[int]) -> dict[int, Any]:
        """The agents of ``seats`` from the page's names; ``WebError`` 400 naming a bad one."""
        n = make_rules(game_id, **options).info.num_players
        if not isinstance(specs, list) or len(specs) != n:
            raise WebError(400, f"agents must be a list of {n} agent names, one per seat (null for your own seat)")
        return {seat: self.make_agent(game_id, options, specs[seat], seat) for seat in seats}

    def make_agent(self, game_id: str, options: dict[str, Any], spec: Any, seat: int) -> Any:
        """The agent of ``seat`` named ``spec``: a named agent, or ``AGENT:RELPATH`` for a listed checkpoint."""
        names = self.named_agents(game_id)
        if not isinstance(spec, str):
            raise WebError(
                400, f"the agent of seat {seat} must be a name: one of {', '.join(names)} or AGENT:CHECKPOINT"
            )
        player, _, rel = spec.partition(":")
        checkpoint = None
        if rel and player in {a for agents in KIND_AGENTS.values() for a in agents}:
            checkpoint = self.checkpoint_for(game_id, options, player, rel, seat)
        elif spec not in names:
            message = f"unknown agent {spec[:100]!r} for {game_id}: choose one of {', '.join(names)}"
            raise WebError(400, message, f"agent-{seat}")
        else:
            self.check_agent_plays(spec, game_id, options, seat)
        seed = self.draw_seed()
        try:
            agent: PlayingAgent
            if checkpoint is not None:
                agent = self.checkpoint_cache.agent(
                    game_id, checkpoint.path, options, seed, self.opponents.make, agent=player
                )
            else:
                agent = self.opponents.make(spec, game_id, seed=seed, **options)
            reset_agent(agent, seed)
        except Exception as e:  # a broken file, an agent that refuses: the page gets one line
            raise WebError(
                400,
                f"{spec[:200]} cannot play {game_id} here: {self.in_words(game_id, str(e))}. "
                f"Choose another agent for player_{seat}, or other options",
                f"agent-{seat}",
            ) from None
        return agent

    def checkpoint_for(self, game_id: str, options: dict[str, Any], agent: str, rel: str, seat: int) -> CheckpointFile:
        """The listed checkpoint ``rel`` if ``agent`` plays it for ``game_id`` with ``options``, else ``WebError``."""
        found = self.checkpoints()
        c = found.get(rel)
        if c is None:
            raise WebError(
                400,
                f"unknown checkpoint {rel[:200]!r}: choose one of the server's list "
                f"({len(found)} found under {self.runs})",
                f"agent-{seat}",
            )
        if c.game != game_id or agent not in c.agents:
            players = " or ".join(c.agents)
            raise WebError(400, f"{rel[:200]} is a {c.game} network for {players}: choose another agent for "
                           f"player_{seat}", f"agent-{seat}")  # fmt: skip
        if dict(make_rules(game_id, **options).options) != c.options:
            labels = {o.name: option_label(o) for o in rules_class(game_id).OPTIONS}
            needs = " and ".join(f"{labels.get(k, k)} set to {value_words(v)}" for k, v in c.options.items()
                                 if options.get(k) != v)  # fmt: skip
            raise WebError(
                400,
                f"{agent}:{rel[:200]} plays {game_id} only with {needs}: choose another agent for player_{seat}, "
                "or those options",
                f"agent-{seat}",
            )
        return c

    def check_agent_plays(self, name: str, game_id: str, options: dict[str, Any], seat: int) -> None:
        """``WebError`` 400 in the player's words if agent ``name`` does not play ``game_id`` with ``options``."""
        needs = self.opponents.refusal(name, game_id, options)
        if needs is None:
            return
        labels = {o.name: option_label(o) for o in rules_class(game_id).OPTIONS}

        def words(values: dict[str, Any]) -> str:
            return " and ".join(f"{labels.get(k, k)} set to {value_words(v)}" for k, v in values.items())

        chosen = {k: options.get(k) for k in needs}
        raise WebError(
            400,
            f"{name} cannot play {game_id} with {words(chosen)}: it plays {game_id} only with {words(needs)}. "
            f"Choose another agent for player_{seat}, or set {words(needs).replace(' set to ', ' to ')}",
            f"agent-{seat}",
        )

    def in_words(self, game_id: str, reason: str) -> str:
        """An agent's refusal cut to its first clause, its ``option=value`` put as the form's "Label set to value"."""
        text = reason.split("; ", 1)[0].strip().rstrip(".")
        for o in rules_class(game_id).OPTIONS:
            label = option_label(o)

            def words(m: re.Match[str], label: str = label) -> str:
                return f"{label} set to {value_words(_literal(m.group(1)))}"

            text = re.sub(rf"\b{re.escape(o.name)}=([^\s,;)]+)", words, text)
        return text[:300]

    def new_game(self, body: dict[str, Any], kind: str, visitor: str, anonymous: bool = False) -> Session:
        """A ``play`` (a human seat) or ``watch`` session of ``visitor`` from the page's form.

        ``anonymous``: the request came without a cookie (its game goes to the store's small pool).
        """
        game_id, options = _game_and_options(body)
        rules = _rules(game_id, options)
        n = rules.info.num_players
        human = None
        if kind == "play":
            if "seat" not in body:
                raise WebError(400, f"seat is required: your seat number, 0..{n - 1}", "seat")
            human = body["seat"]
            if isinstance(human, bool) or not isinstance(human, int) or not 0 <= human < n:
                raise WebError(400, f"seat must be your seat number, 0..{n - 1}; got {brief(human)}", "seat")
        seats = [s for s in range(n) if s != human]
        self.store.check_room(visitor, anonymous)  # before loading agents for a game the server could not keep
        agents = self.make_agents(game_id, rules.options, body.get("agents"), seats)
        seed = self.draw_seed()
        state = rules.initial_state(np.random.default_rng(seed))
        labels = ["you" if s == human else str(body["agents"][s]) for s in range(n)]
        session = Session(self.store.new_id(), kind, rules, state, labels, agents, human, seed)  # type: ignore[arg-type]
        if kind == "play":
            session.run_agents()
        return self.store.add(session, visitor, anonymous)

    def open_replay(self, body: dict[str, Any], visitor: str, anonymous: bool = False) -> Session:
        """A ``replay`` session of ``visitor``: game ``index`` of the server's replay file ``file``."""
        files = self.replay_files()
        rel, index = body.get("file"), body.get("index")
        if not isinstance(rel, str) or rel not in files:
            raise WebError(
                400, f"unknown replay file {str(rel)[:200]!r}: choose one of the server's list ({len(files)} files)"
            )
        try:
            replays = read_replays(files[rel])
        except ReplayError as e:
            raise WebError(400, str(e)) from None
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(replays):
            raise WebError(400, f"index must be a game of {rel}: 0..{len(replays) - 1}; got {brief(index)}")
        self.store.check_room(visitor, anonymous)
        session = replay_session(self.store.new_id(), replays[index], {"file": rel, "index": index})
        return self.store.add(session, visitor, anonymous)


def replay_session(sid: str, replay: Replay, where: dict[str, Any]) -> Session:
    """A ``replay`` session holding every state of ``replay``; ``WebError`` 400 if it does not replay."""
    try:
        rules = replay.rules()
        states = replay.states(rules)
    except ReplayError as e:
        raise WebError(400, str(e)) from None
    info = {**replay.info, **where}
    return Session(
        sid,
        "replay",
        rules,
        states[0],
        replay.seats,
        seed=replay.seed,
        actions=replay.actions,
        states=states,
        info=info,
    )


def _game_and_options(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    game_id, options = body.get("game"), body.get("options", {})
    if not isinstance(game_id, str) or game_id not in known_game_ids():
        raise WebError(400, f"unknown game {str(game_id)[:100]!r}: choose one of {', '.join(known_game_ids())}")
    if not isinstance(options, dict):
        raise WebError(400, 'options must be an object of option values, such as {"ranks": 10}')
    return game_id, options


def _rules(game_id: str, options: dict[str, Any]) -> Any:
    """The rules of ``game_id`` with ``options``; ``WebError`` 400 naming, in the form's words, an option to change."""
    known = {o.name: o for o in rules_class(game_id).OPTIONS}
    for name, value in options.items():
        option = known.get(name)
        if option is None:
            names = ", ".join(known) or "none"
            raise WebError(400, f"{game_id} has no option {str(name)[:60]!r}: its options are {names}")
        try:
            ok = bool(option.check(value))
        except (TypeError, ValueError):
            ok = False
        if not ok:
            field = option_field(game_id, option)
            raise WebError(
                400,
                f"{field['label']} cannot be {value_words(value)[:40]}: choose {field['rule']} "
                f"(option {name}; default {value_words(option.default)})",
                f"option:{name}",
            )
    try:
        return make_rules(game_id, **options)
    except JerichoError as e:
        raise WebError(400, str(e)) from None


def _literal(text: str) -> Any:
    """``4`` -> 4, ``True`` -> True, anything else as it is (an option value quoted in a message)."""
    if text in ("True", "False"):
        return text == "True"
    try:
        return int(text)
    except ValueError:
        return text.strip("'\"")


# ---------------------------------------------------------------------- HTTP plumbing
def _json(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers={"Cache-Control": "no-store"})


def _box(request: Request) -> tuple[float, float]:
    """The board's box the page has, ``?w=WIDTH&h=HEIGHT`` in CSS pixels (held within ``BOX_LIMITS``)."""
    q = request.query_params
    out = []
    for name, default in (("w", DEFAULT_WIDTH), ("h", DEFAULT_HEIGHT)):
        text = q.get(name)
        if text in (None, ""):
            out.append(float(default))
            continue
        try:
            value = int(text)  # type: ignore[arg-type]
        except ValueError:
            raise WebError(400, "w and h must be the board's width and height in CSS pixels (integers)") from None
        out.append(float(min(max(value, BOX_LIMITS[0]), BOX_LIMITS[1])))
    return out[0], out[1]


def _seat_and_ply(request: Request) -> tuple[int | None, int | None, bool]:
    q = request.query_params
    seat_text, ply_text = q.get("seat"), q.get("ply")
    try:
        seat = None if seat_text in (None, "", "all") else int(seat_text)  # type: ignore[arg-type]
        ply = None if ply_text in (None, "") else int(ply_text)  # type: ignore[arg-type]
    except ValueError:
        raise WebError(400, "seat must be a seat number or all, and ply a move number (both integers)") from None
    return seat, ply, seat_text == "all"


Handler = Callable[[Request], Awaitable[Response]]


def create_app(
    runs: str | Path = "runs",
    store: SessionStore | None = None,
    *,
    allowed_hosts: Iterable[str] = LOCAL_HOSTS,
    checkpoints: CheckpointCache | None = None,
    opponents: Opponents | None = None,
    seed: int | None = None,
) -> Starlette:
    """The Starlette app serving the page and its JSON endpoints; ``runs`` holds checkpoints and replays.

    ``store`` keeps the sessions (a new ``SessionStore`` if ``None``), ``allowed_hosts`` the names the
    server answers to (``jericho_env.web.guard``; ``"*"``: any), ``checkpoints`` the loaded networks
    (a new ``CheckpointCache`` if ``None``), ``opponents`` the agents offered (the installed agent
    plugins if ``None``), ``seed`` seeds every deal and agent (``None``: fresh entropy).
    """
    server = Server(
        Path(runs),
        store=store if store is not None else SessionStore(),
        checkpoint_cache=checkpoints if checkpoints is not None else CheckpointCache(),
        opponents=opponents if opponents is not None else Opponents(),
        seed=seed,
    )

    def route(fn: Callable[[Request], Awaitable[Any]]) -> Handler:
        async def handler(request: Request) -> Response:
            try:
                return _json(await fn(request))
            except WebError as e:
                return _json(e.payload(), e.status)

        return handler

    def locked(request: Request, work: Callable[[Session], Any]) -> Awaitable[Any]:
        session = server.store.get(request.path_params["sid"], visitor_of(request))

        def run() -> Any:
            with session.lock:  # one request at a time per game; games do not wait for each other
                return work(session)

        return run_in_threadpool(run)

    async def games(request: Request) -> Any:
        return await run_in_threadpool(server.games)

    async def replays(request: Request) -> Any:
        return {"replays": await run_in_threadpool(server.replays)}

    async def play(request: Request) -> Any:
        body = await read_json(request, ("game", "options", "seat", "agents"))
        box = _box(request)
        session = await run_in_threadpool(server.new_game, body, "play", visitor_of(request), anonymous_of(request))
        return session.view(box=box)

    async def watch(request: Request) -> Any:
        body = await read_json(request, ("game", "options", "agents"))
        box = _box(request)
        session = await run_in_threadpool(server.new_game, body, "watch", visitor_of(request), anonymous_of(request))
        return session.view(seat=None, box=box)

    async def replay(request: Request) -> Any:
        body = await read_json(request, ("file", "index"))
        box = _box(request)
        session = await run_in_threadpool(server.open_replay, body, visitor_of(request), anonymous_of(request))
        return session.view(seat=None, ply=0, box=box)

    async def show(request: Request) -> Any:
        seat, ply, full = _seat_and_ply(request)
        box = _box(request)
        return await locked(request, lambda s: s.view(seat, ply, full, box))

    async def move(request: Request) -> Any:
        body = await read_json(request, ("action", "ply"))
        box = _box(request)

        def work(s: Session) -> Any:
            s.human_move(body.get("action"), body.get("ply"))
            return s.view(box=box)

        return await locked(request, work)

    async def step(request: Request) -> Any:
        body = await read_json(request, ("ply",))
        seat, _, full = _seat_and_ply(request)
        box = _box(request)

        def work(s: Session) -> Any:
            s.step(body.get("ply"))
            return s.view(seat, full=full, box=box)

        return await locked(request, work)

    async def forget(request: Request) -> Any:
        server.store.remove(request.path_params["sid"], visitor_of(request))
        return {"removed": request.path_params["sid"]}

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    async def favicon(request: Request) -> Response:
        headers = {"Cache-Control": "max-age=86400"}
        return FileResponse(STATIC / "favicon.ico", media_type="image/x-icon", headers=headers)

    async def rules_of(request: Request) -> Response:
        game_id = request.path_params["game"]
        if game_id not in known_game_ids():
            return _json({"error": f"no game {game_id[:60]!r}: choose one of {', '.join(known_game_ids())}"}, 404)
        text = html.escape(rules_page(game_id))
        title = f"{game_id}: rules"
        return HTMLResponse(
            f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            '<link rel="stylesheet" href="/static/style.css"></head>'
            f'<body class="rules-page"><h1>{title}</h1><pre>{text}</pre></body></html>'
        )

    async def font_file(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in FONT_FILES:
            return _json({"error": f"no font {name[:60]!r}: the page uses {', '.join(FONT_FILES)}"}, 404)
        path = Path(getattr(font(12, *FONT_FILES[name]), "path", ""))
        if not path.is_file():
            return _json({"error": f"{name} is not installed on the server (the browser uses its own fonts)"}, 404)
        return FileResponse(path, headers={"Cache-Control": "max-age=86400"})

    async def http_error(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 500)
        if status == 404:
            return _json({"error": f"no such address: {request.method} {request.url.path[:200]}"}, 404)
        if status == 405:
            return _json({"error": f"{request.method} is not allowed on {request.url.path[:200]}"}, 405)
        return _json({"error": str(getattr(exc, "detail", exc))[:300]}, status)

    async def server_error(request: Request, exc: Exception) -> Response:
        return _json({"error": f"the server failed on this request ({type(exc).__name__}); the game is unchanged"}, 500)

    routes = [
        Route("/", index),
        Route("/favicon.ico", favicon),
        Route("/rules/{game}", rules_of),
        Route("/api/games", route(games)),
        Route("/api/replays", route(replays)),
        Route("/api/play", route(play), methods=["POST"]),
        Route("/api/watch", route(watch), methods=["POST"]),
        Route("/api/replay", route(replay), methods=["POST"]),
        Route("/api/session/{sid}", route(show), methods=["GET"]),
        Route("/api/session/{sid}", route(forget), methods=["DELETE"]),
        Route("/api/session/{sid}/move", route(move), methods=["POST"]),
        Route("/api/session/{sid}/step", route(step), methods=["POST"]),
        Route("/font/{name}", font_file),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(Guard, allowed_hosts=list(allowed_hosts))],
        exception_handlers={HTTPException: http_error, Exception: server_error},
    )
    app.state.server = server
    return app
