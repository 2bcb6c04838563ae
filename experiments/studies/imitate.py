"""How well can the PPO network imitate greedy? ``python -m experiments.studies.imitate GAME``.

A diagnostic for the training results: supervised learning (behaviour cloning) is far more
sample-efficient than PPO, so if the very network PPO trains cannot copy greedy's moves from greedy's
own games, PPO cannot be expected to beat greedy in a similar budget. Greedy plays every seat of
``--games`` games; each decision with more than one legal move becomes an example (observation,
mask, greedy's move). The policy network of ``experiments.train`` (same class and options) is
trained to maximise the masked log-probability of greedy's move for ``--epochs`` passes; 15% of the
games are held out. Per epoch it prints the loss and the agreement with greedy (the cloned policy's
most probable move is greedy's) on training and held-out examples, beside chance agreement (uniform
over the legal moves). The clone is saved as a MaskablePPO checkpoint (``imitation.zip``, playable as
``ppo=PATH`` and usable by ``experiments.evaluate``) and plays a tournament against random and greedy.
The clone can also start a PPO run: ``experiments.train GAME --policy P --init RUN/imitation.zip``.

Examples:
    python -m experiments.studies.imitate grid
    python -m experiments.studies.imitate castles --games 2000 --epochs 10
    python -m experiments.studies.imitate grid --channels 48 --layers 5
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.nets import MAX_LAYERS, MAX_WIDTH, POLICIES, POLICY_NAMES, build_policy, parse_net
from experiments.cli import (
    check_out,
    cli_parser,
    int_in,
    parse_option,
    positive_float,
    positive_int,
    progress_bar,
    run_cli,
    seed_int,
)
from experiments.training import presets
from jericho_env.core.validate import seed32, shift_seed
from jericho_env.registry import known_game_ids, make_rules


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    p = cli_parser("experiments.studies.imitate", __doc__)
    p.add_argument("game", help=f"which game: {', '.join(known_game_ids())}")
    p.add_argument("--games", type=positive_int, default=600, help="greedy games to learn from (default 600)")
    p.add_argument("--epochs", type=positive_int, default=6, help="passes over the examples (default 6)")
    p.add_argument("--batch-size", type=positive_int, default=256)
    p.add_argument("--learning-rate", type=positive_float, default=1e-3)
    policy = f"network, as in experiments.train (default: the game's preset, {presets.per_game('policy')})"
    p.add_argument("--policy", choices=(*POLICY_NAMES, "auto"), default="auto", help=policy)
    net = f"mlp layer sizes, as in experiments.train (default: the game's preset, {presets.per_game('net')})"
    p.add_argument("--net", default=None, help=net)
    channels = f"grid-conv channels, 1..{MAX_WIDTH} (default 16)"
    p.add_argument("--channels", type=int_in(1, MAX_WIDTH), default=16, help=channels)
    layers = f"grid-conv 3x3 layers, 1..{MAX_LAYERS} (default 3)"
    p.add_argument("--layers", type=int_in(1, MAX_LAYERS), default=3, help=layers)
    p.add_argument("--deals", type=positive_int, default=100, help="deals per pair in the final tournament")
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument("--workers", type=positive_int, default=2, help="processes for the final tournament")
    p.add_argument("--option", type=parse_option, action="append", default=[], metavar="KEY=VALUE", help="game option")
    p.add_argument("--out", default=None, help="run folder (default runs/imitate/GAME-TIME)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    return p


def collect(game_id: str, games: int, seed: int, options: dict[str, Any], quiet: bool) -> dict[str, np.ndarray]:
    """Greedy-vs-greedy decisions with more than one legal move: observations, masks, moves, game index."""
    import agents
    import jericho_env

    env = jericho_env.make(game_id, **options)
    n = env.unwrapped.rules.info.num_players
    players = [agents.make("greedy", game_id, seed=shift_seed(seed * 7919, s), **options) for s in range(n)]
    obs, masks, moves, game = [], [], [], []
    bar = progress_bar(games, f"{game_id} greedy games", quiet)
    for g in range(games):
        env.reset(seed=shift_seed(seed * 1_000_003, g))
        for name in env.agent_iter():
            o, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            a = players[env.possible_agents.index(name)].act(o)
            if int(o["action_mask"].sum()) > 1:
                obs.append(o["observation"])
                masks.append(o["action_mask"].astype(bool))
                moves.append(a)
                game.append(g)
            env.step(a)
        bar.update(1)
    bar.close()
    return {"obs": np.array(obs), "masks": np.array(masks), "moves": np.array(moves), "game": np.array(game)}


def network(game_id: str, args: argparse.Namespace) -> tuple[str, str]:
    """The policy name and --net sizes: as given, else the game's training preset (``experiments.training.presets``)."""
    preset = presets.preset(game_id)
    return (preset["policy"] if args.policy == "auto" else args.policy), (args.net or preset["net"])


def make_model(game_id: str, args: argparse.Namespace, options: dict[str, Any]) -> Any:
    """An untrained MaskablePPO with the network ``experiments.train`` would build (without a prior)."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger

    import jericho_env
    from agents.checkpoint import CheckpointMeta, PolicySpec, attach_meta

    name, net = network(game_id, args)
    sizes = {k: v for k, v in {"channels": args.channels, "layers": args.layers}.items() if k in POLICIES[name].sizes}
    policy, kwargs = build_policy(name, game_id, options, net, **sizes)
    model = MaskablePPO(
        policy,
        jericho_env.single_agent(game_id, **options),
        policy_kwargs=kwargs,
        seed=seed32(args.seed),  # SB3 seeds numpy's legacy 32-bit generator
        device="cpu",
    )
    model.set_logger(Logger(None, []))
    # what imitation.zip records (agents.checkpoint): the network by name, no PPO hyperparameters to resume
    return attach_meta(model, CheckpointMeta(game_id, dict(options), PolicySpec(name, net, sizes=sizes)))


def agreement(policy: Any, data: dict[str, np.ndarray], rows: np.ndarray, batch: int = 512) -> float:
    """Share of ``rows`` where the policy's most probable legal move is greedy's."""
    import torch

    hits = 0
    with torch.no_grad():
        for i in range(0, len(rows), batch):
            r = rows[i : i + batch]
            dist = policy.get_distribution(torch.as_tensor(data["obs"][r]), action_masks=data["masks"][r])
            hits += int((dist.distribution.probs.argmax(dim=1).numpy() == data["moves"][r]).sum())
    return hits / max(len(rows), 1)


def fit(model: Any, data: dict[str, np.ndarray], args: argparse.Namespace) -> list[dict[str, float]]:
    """Behaviour cloning: maximise the masked log-probability of greedy's moves; prints a line per epoch."""
    import torch

    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    held_games = int(data["game"].max() * 0.85) if len(data["game"]) else 0
    train_rows = np.flatnonzero(data["game"] <= held_games)
    test_rows = np.flatnonzero(data["game"] > held_games)
    policy = model.policy
    policy.set_training_mode(True)
    optimizer = torch.optim.Adam(policy.parameters(), lr=args.learning_rate)
    chance = float(np.mean(1.0 / data["masks"][test_rows].sum(axis=1))) if len(test_rows) else float("nan")
    print(
        f"{len(data['moves'])} examples ({len(train_rows)} to learn from, {len(test_rows)} held out); "
        f"legal moves per decision: mean {data['masks'].sum(axis=1).mean():.1f}; chance agreement {100 * chance:.1f}%"
    )
    history = []
    for epoch in range(1, args.epochs + 1):
        t0 = time.perf_counter()
        order = rng.permutation(train_rows)
        total = 0.0
        for i in range(0, len(order), args.batch_size):
            r = order[i : i + args.batch_size]
            dist = policy.get_distribution(torch.as_tensor(data["obs"][r]), action_masks=data["masks"][r])
            loss = -dist.log_prob(torch.as_tensor(data["moves"][r])).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(r)
        row = {
            "epoch": epoch,
            "loss": total / max(len(order), 1),
            "train_agreement": agreement(policy, data, train_rows[:5000]),
            "held_out_agreement": agreement(policy, data, test_rows),
            "seconds": time.perf_counter() - t0,
        }
        history.append(row)
        print(
            f"epoch {epoch}: loss {row['loss']:.3f}, agreement with greedy {100 * row['train_agreement']:.1f}% "
            f"(learned) / {100 * row['held_out_agreement']:.1f}% (held out), {row['seconds']:.0f} s"
        )
    policy.set_training_mode(False)
    return history


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.game not in known_game_ids():
        parser.error(f"unknown game {args.game!r}; choose one of {', '.join(known_game_ids())}")

    def run() -> None:
        import torch

        from agents.checkpoint import save_checkpoint
        from agents.nets import check_policy
        from experiments.evaluate import against_baselines
        from experiments.play.report import run_folder

        options = dict(args.option)
        make_rules(args.game, **options)  # bad options fail before any work
        name, net = network(args.game, args)
        check_policy(name, args.game)
        parse_net(net)
        torch.set_num_threads(1)
        check_out(args.out, "--out")
        folder = run_folder("imitate", args.game, args.out)
        t0 = time.perf_counter()
        data = collect(args.game, args.games, args.seed, options, args.quiet)
        print(f"collected in {time.perf_counter() - t0:.0f} s")
        model = make_model(args.game, args, options)
        fit(model, data, args)
        path = Path(folder) / "imitation.zip"
        save_checkpoint(model, path)
        summary = against_baselines(
            args.game,
            "clone",
            str(path),
            args.deals,
            args.seed,
            args.workers,
            options,
            str(folder / "tournament"),
            args.quiet,
        )
        print(f"\n## {args.game}: greedy's clone ({time.perf_counter() - t0:.0f} s in all)\n")
        print(summary["table"])
        print(f"\noutputs in {folder}/ (imitation.zip, tournament/)")

    return run_cli(parser, run)


if __name__ == "__main__":
    sys.exit(main())
