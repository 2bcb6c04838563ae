"""``python -m jericho_env.web [--port 8000] [--runs runs]``: serve the page on 127.0.0.1 and print its address."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


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
    return p


def main(argv: list[str] | None = None) -> int:
    """Start the server; it runs until interrupted."""
    args = build_parser().parse_args(argv)
    if not 0 <= args.port <= 65535:
        build_parser().error(f"--port must be 0..65535, got {args.port}")
    try:
        import uvicorn

        from jericho_env.web.app import create_app
    except ImportError as e:
        print(f"the web page needs its extra: pip install -e '.[web]' ({e})", file=sys.stderr)
        return 2
    runs = Path(args.runs)
    app = create_app(runs)
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning")
    server = uvicorn.Server(config)

    original = server.startup

    async def startup(sockets: list | None = None) -> None:  # type: ignore[type-arg]
        await original(sockets)
        for s in server.servers:
            for sock in s.sockets:
                host, port = sock.getsockname()[:2]
                print(f"jericho-env web page: http://{host}:{port}/  (runs folder: {runs.resolve()}; Ctrl-C stops)")
                sys.stdout.flush()

    server.startup = startup  # type: ignore[method-assign]
    server.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
