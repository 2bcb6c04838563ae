"""``python -m jericho_env.web [--port 8000] [--runs runs]``: serve the page on 127.0.0.1 and print its address.

The server answers only to the names of the address it serves (``127.0.0.1``, ``localhost``,
``::1``, and the ``--host`` given if it is a name or address of its own). To reach it under another
name on purpose (another machine of your network: ``--host 0.0.0.0 --allow-host mybox.lan``), name
it with ``--allow-host``; ``--allow-host '*'`` answers to any name (only behind a proxy that checks).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

WILDCARD_ADDRESSES = ("0.0.0.0", "::", "")  # bind every interface: no name of its own


def count(text: str) -> int:
    """A whole number of at least 1 (argparse type)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def minutes(text: str) -> float:
    """A finite number of minutes above 0 (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of minutes, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number of minutes above 0, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The command line of the web server."""
    p = argparse.ArgumentParser(
        prog="python -m jericho_env.web",
        description="A local web page to play, watch and replay jericho-env games.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument(
        "--runs",
        default="runs",
        help="folder searched for PPO checkpoints (*.zip) and recorded games (replays.jsonl) (default runs)",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer to requests for this host name (repeatable; '*': any name). By default the server "
        "answers only to 127.0.0.1, localhost, ::1 and --host, refusing pages of other sites that reach it "
        "under a name of their own",
    )
    p.add_argument("--max-games", type=int, default=200, help="games kept at once, all visitors (default 200)")
    p.add_argument("--games-per-visitor", type=int, default=12, help="games one visitor keeps at once (default 12)")
    p.add_argument(
        "--anonymous-games",
        type=count,
        default=None,
        metavar="N",
        help="games kept at once for requests without a cookie, all together (default a tenth of --max-games): "
        "scripts that keep no cookie cannot fill the server for everyone",
    )
    p.add_argument(
        "--idle-minutes",
        type=minutes,
        default=360,
        help="minutes an idle game is kept (default 360)",
    )
    p.add_argument(
        "--crowded-idle-minutes",
        type=minutes,
        default=10,
        help="minutes an idle game is kept once the server holds 80%% of --max-games (default 10)",
    )
    p.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="LABEL=SPEC",
        help="offer an agent of your own by name in every game: LABEL=path/to/file.py:attr, LABEL=pkg.module:attr "
        "(then ,key=value arguments), or an installed agent with arguments, LABEL:ismcts=1000 (repeatable)",
    )
    p.add_argument(
        "--checkpoint-memory",
        type=int,
        default=512,
        metavar="MB",
        help="memory for loaded PPO checkpoints shared by the games (default 512 MB; least recently used go first)",
    )
    return p


def served_names(host: str, allow: list[str], local: tuple[str, ...]) -> list[str]:
    """The names the server answers to: the ``local`` ones, ``host`` if it is one address (not all), ``allow``."""
    return [*local, *([] if host in WILDCARD_ADDRESSES else [host]), *allow]


def main(argv: list[str] | None = None) -> int:
    """Start the server; it runs until interrupted."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be 0..65535, got {args.port}")
    if args.max_games < 1:
        parser.error(f"--max-games must be at least 1, got {args.max_games}")
    if not 1 <= args.games_per_visitor <= args.max_games:
        parser.error(f"--games-per-visitor must be 1..--max-games ({args.max_games}), got {args.games_per_visitor}")
    if args.anonymous_games is not None and args.anonymous_games > args.max_games:
        parser.error(f"--anonymous-games must be 1..--max-games ({args.max_games}), got {args.anonymous_games}")
    if args.checkpoint_memory < 0:
        parser.error(f"--checkpoint-memory must be >= 0 MB, got {args.checkpoint_memory}")
    bad = [h for h in args.allow_host if not h.strip() or "/" in h]
    if bad:
        parser.error(f"--allow-host takes a host name such as mybox.lan (no scheme or path), got {bad[0]!r}")
    try:
        import uvicorn

        from jericho_env.user_agents import is_target, load_target
        from jericho_env.web.app import create_app
        from jericho_env.web.checkpoints import CheckpointCache
        from jericho_env.web.guard import LOCAL_HOSTS
        from jericho_env.web.sessions import SessionStore
    except ImportError as e:
        print(f"the web page needs its extra: pip install -e '.[web]' ({e})", file=sys.stderr)
        return 2
    if args.agent:
        from jericho_env.agent_plugins import NamedAgents, register_provider
        from jericho_env.core.rules import JerichoError

        try:
            named = NamedAgents(args.agent)
            for target, _ in named.specs.values():  # code that does not load fails here, not at the first game
                if is_target(target):
                    load_target(target)
        except (JerichoError, ValueError) as e:
            parser.error(" ".join(str(e).split()))
        register_provider("--agent", named)
    hosts = served_names(args.host, args.allow_host, LOCAL_HOSTS)
    runs = Path(args.runs)
    app = create_app(
        runs,
        SessionStore(
            limit=args.max_games,
            per_visitor=args.games_per_visitor,
            anonymous=args.anonymous_games,
            idle_seconds=60 * args.idle_minutes,
            crowded_idle_seconds=60 * args.crowded_idle_minutes,
        ),
        allowed_hosts=hosts,
        checkpoints=CheckpointCache(max_bytes=args.checkpoint_memory * 2**20),
    )
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning")
    server = uvicorn.Server(config)

    original = server.startup

    async def startup(sockets: list | None = None) -> None:  # type: ignore[type-arg]
        await original(sockets)
        for s in server.servers:
            for sock in s.sockets:
                host, port = sock.getsockname()[:2]
                print(f"jericho-env web page: http://{host}:{port}/  (runs folder: {runs.resolve()}; Ctrl-C stops)")
        if args.host in WILDCARD_ADDRESSES and not args.allow_host:
            print(
                "serving every interface, but answering only to 127.0.0.1 and localhost: --allow-host NAME adds a name"
            )
        sys.stdout.flush()

    server.startup = startup  # type: ignore[method-assign]
    server.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
