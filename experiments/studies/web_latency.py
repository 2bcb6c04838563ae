"""How long the web page waits: ``python -m experiments.studies.web_latency castles --agent greedy``.

Starts the web server (uvicorn, in a thread, on a free port of 127.0.0.1), plays whole games over
HTTP as the page does (a random legal move of the human seat, ``POST /api/session/ID/move``) against
the given agent, and prints the median and 90th percentile of the time from sending a move to
receiving the next view (the agents' replies and the drawing included). It also prints how long
starting a game took (``POST /api/play``, the agents' opening moves included): the first start
apart, since it loads a checkpoint, which the server keeps for the later ones. ``--agent ppo:REL``
takes a checkpoint under ``--runs``, as the page lists them. The client keeps the server's visitor
cookie, as a browser does, and deletes each game it finishes, as the page does.
"""

from __future__ import annotations

import socket
import statistics
import sys
import threading
import time

import httpx
import numpy as np
import uvicorn

from experiments.cli import cli_parser, positive_int
from jericho_env.web.app import create_app


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    p = cli_parser("experiments.studies.web_latency", __doc__)
    p.add_argument("game")
    p.add_argument("--agent", default="greedy", help="the other seats' agent: a name or ppo:RELPATH under --runs")
    p.add_argument("--runs", default="runs")
    p.add_argument("--games", type=positive_int, default=3)
    args = p.parse_args(argv)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(args.runs), host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    rng = np.random.default_rng(0)
    times: list[float] = []
    starts: list[float] = []
    with httpx.Client(base_url=base, timeout=900) as client:
        n = next(g["players"] for g in client.get("/api/games").json()["games"] if g["id"] == args.game)
        for _ in range(args.games):
            body = {"game": args.game, "seat": 0, "agents": [None] + [args.agent] * (n - 1)}
            t0 = time.perf_counter()
            r = client.post("/api/play", json=body)
            starts.append(time.perf_counter() - t0)
            if r.status_code != 200:
                p.exit(2, f"{p.prog}: error: {r.json()['error']}\n")
            view = r.json()
            while not view["over"]:
                action = int(rng.choice([m["action"] for m in view["moves"]]))
                t0 = time.perf_counter()
                view = client.post(
                    f"/api/session/{view['id']}/move", json={"action": action, "ply": view["plies"]}
                ).json()
                times.append(time.perf_counter() - t0)
            client.delete(f"/api/session/{view['id']}")
    server.should_exit = True
    q = statistics.quantiles(times, n=10)
    print(
        f"{args.game} against {args.agent}: {len(times)} moves in {args.games} games; "
        f"answer median {1000 * statistics.median(times):.0f} ms, 90th percentile {1000 * q[-1]:.0f} ms"
    )
    later = f", later starts median {1000 * statistics.median(starts[1:]):.0f} ms" if len(starts) > 1 else ""
    print(f"starting a game: the first {1000 * starts[0]:.0f} ms{later}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
