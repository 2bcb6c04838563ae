"""How big must the table window be? Measure how far from the base legal placements ever reach.

The rules of grid put no limit on the table; the environment uses a square window centred on the
base. This study plays games on a very large window (default 41x41, far beyond any reach seen) with a
given policy and records, per game, the largest Chebyshev distance from the base of any legal
placement offered in any state of the game. A window of odd side ``k`` would have cut off a legal
placement in that game iff that distance exceeds ``(k - 1) / 2``. The chosen default is the smallest
odd ``k`` for which fewer than 1% of games are affected.

    python -m experiments.studies.grid_edge_study --games 5000 --seed 0
    python -m experiments.studies.grid_edge_study --policy greedy --games 3000
    python -m experiments.studies.grid_edge_study --policy greedy,random
    python -m experiments.studies.grid_edge_study --policy mypackage.agents:greedy_policy

A policy is a callable ``(rules, state, rng) -> action`` returning a legal action of the seat to move.
Agents of the ``agents`` package are wrapped into one (``agent_policy``): each decides from the
observation and mask of the seat to move, as in the env. ``greedy,random`` puts greedy in seat 0 and
random in seat 1 (the first player is drawn at random, so neither seat has the move first).
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import agents
from experiments.cli import fraction, positive_int, run_cli, seed_int
from jericho_env.games.grid.rules import GridRules
from jericho_env.games.grid.state import GridState

Policy = Callable[[GridRules, GridState, np.random.Generator], int]


def random_policy(rules: GridRules, state: GridState, rng: np.random.Generator) -> int:
    """A uniformly random legal action."""
    legal = rules.legal_actions(state)
    return legal[int(rng.integers(len(legal)))]


def agent_policy(names: list[str], board_size: int, seed: int = 0) -> Policy:
    """A policy playing ``agents.make(names[seat % len(names)], "grid")`` in each seat, from observations only."""
    players = [agents.make(n, "grid", seed=seed + i, board_size=board_size) for i, n in enumerate(names)]

    def policy(rules: GridRules, state: GridState, rng: np.random.Generator) -> int:
        seat = state.to_move
        obs = {"observation": rules.observe(state, seat), "action_mask": rules.legal_mask(state)}
        return int(players[seat % len(players)].act(obs))

    return policy


@dataclass
class EdgeStudy:
    """Per-game maximum reach of legal placements, and what it implies for each window size."""

    board_size: int
    reach: list[int]  # per game: max Chebyshev distance of a legal placement from the base

    def affected(self, k: int) -> float:
        """Fraction of games that a window of odd side ``k`` would have cut a legal placement from."""
        half = (k - 1) // 2
        return sum(r > half for r in self.reach) / len(self.reach)

    def smallest_size(self, threshold: float = 0.01) -> int:
        """Smallest odd window side for which fewer than ``threshold`` of games are affected."""
        k = 3
        while self.affected(k) >= threshold:
            k += 2
        return k

    def table(self, sizes: range | None = None) -> str:
        """Markdown table: window side, games affected (count and %)."""
        n = len(self.reach)
        rows = ["| board_size | games with a legal placement cut off |", "| --- | --- |"]
        for k in sizes or range(7, 2 * max(self.reach) + 4, 2):
            a = self.affected(k)
            rows.append(f"| {k} | {round(a * n)} / {n} ({100 * a:.2f}%) |")
        return "\n".join(rows)


def game_reach(rules: GridRules, policy: Policy, deal_rng: np.random.Generator, play_rng: np.random.Generator) -> int:
    """Play one game with ``policy`` for both seats; the farthest legal placement ever offered."""
    distance = rules.board.distance
    decode = rules.actions.decode
    state = rules.initial_state(deal_rng)
    reach = 0
    while not rules.is_terminal(state):
        for a in rules.legal_actions(state):
            move = decode(a)
            if move.kind == "place":
                d = distance[move.cell]
                if d > reach:
                    reach = d
        rules.apply(state, policy(rules, state, play_rng))
    return reach


def study(policy: Policy = random_policy, games: int = 5000, board_size: int = 41, seed: int = 0) -> EdgeStudy:
    """Play ``games`` seeded games with ``policy`` on a ``board_size`` window and record each game's reach."""
    rules = GridRules(board_size=board_size)
    deal_rng, play_rng = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    reach = [game_reach(rules, policy, deal_rng, play_rng) for _ in range(games)]
    limit = board_size // 2
    if max(reach) >= limit:
        print(f"warning: some game reached the edge of the {board_size} window; rerun with a larger --board-size")
    return EdgeStudy(board_size, reach)


def load_policy(spec: str, board_size: int = 41, seed: int = 0) -> Policy:
    """``"random"``, agent names (``"greedy"``, ``"greedy,random"``: one per seat) or ``"package.module:callable"``."""
    if spec == "random":
        return random_policy
    if ":" not in spec:
        return agent_policy(spec.split(","), board_size, seed)
    module, _, name = spec.partition(":")
    fn: Any = getattr(importlib.import_module(module), name)
    return fn  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    """Command line: run the study and print the table and the smallest window under 1%."""
    p = argparse.ArgumentParser(
        prog="python -m experiments.studies.grid_edge_study", description=__doc__.splitlines()[0]
    )
    p.add_argument("--games", type=positive_int, default=5000, help="games to play (default 5000)")
    p.add_argument("--board-size", type=positive_int, default=41, help="window used for the study (default 41)")
    p.add_argument("--seed", type=seed_int, default=0, help="seed of the deals and of the policy")
    p.add_argument(
        "--policy",
        default="random",
        help="'random', agent names one per seat ('greedy', 'greedy,random'), or 'module:callable' (rules, state, rng)",
    )
    p.add_argument("--threshold", type=fraction, default=0.01, help="fraction of games allowed to be affected (0..1)")
    args = p.parse_args(argv)

    def run() -> None:
        GridRules(board_size=args.board_size)  # a window the game refuses fails before any game, naming why
        result = study(load_policy(args.policy, args.board_size, args.seed), args.games, args.board_size, args.seed)
        reach = np.array(result.reach)
        print(f"{args.games} games, policy {args.policy}, window {args.board_size}")
        print(f"reach of legal placements: mean {reach.mean():.2f}, median {np.median(reach):.0f}, max {reach.max()}")
        print(result.table())
        best = result.smallest_size(args.threshold)
        print(f"smallest odd board_size with under {100 * args.threshold:g}% of games affected: {best}")

    return run_cli(p, run)


if __name__ == "__main__":
    raise SystemExit(main())
