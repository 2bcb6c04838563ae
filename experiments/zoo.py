"""The model zoo's entries: ``python -m experiments.zoo add RUN_FOLDER`` ships a run's network in the package.

``add`` checks a finished run folder (``experiments.train``, ``exit`` or ``dmc``) and writes into the zoo folder
(``agents/zoo/``; ``--zoo`` or ``$JERICHO_ENV_ZOO`` for another) the network's policy tensors as
``<game>-<kind>.zip`` and its card as ``<game>-<kind>.json`` (``agents.pretrained``; docs/zoo.md lists what a card
holds); the entry is then loaded and played, and removed if that fails. ``list`` prints the entries; ``check``
verifies each. ``rebuild NAME`` runs the entry's recipe (``experiments.recipes``) and prints the shipped card's
scores beside the rebuilt network's; ``--ship`` replaces the entry with it.

Examples:
    python -m experiments.zoo add runs/train/castles-20261202-040000
    python -m experiments.zoo add runs/exit/grid-20261202-050000 --name exit
    python -m experiments.zoo add runs/dmc/castles-20261204-030000 --scores runs/evaluate/castles-dmc/results.json
    python -m experiments.zoo list
    python -m experiments.zoo check
    python -m experiments.zoo rebuild grid-ppo --out runs/rebuild
    python -m experiments.zoo rebuild castles-dmc --out runs/rebuild --ship
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import shlex
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

import agents
import jericho_env
from agents.checkpoint import META, WEIGHTS, _weights, read_meta
from agents.dmc import read_dmc_meta
from agents.pretrained import CARD_VERSION, KINDS, ZooEntry, ZooError, read_card, sha256, zoo, zoo_folder
from agents.registry import available
from experiments.cli import cli_parser, run_cli
from experiments.play.report import write_file
from experiments.play.tournament import play_game
from experiments.recipes import Recipe, load_recipes, rebuild, relative
from experiments.training.config import RunConfig
from experiments.training.dmc.config import DmcConfig
from experiments.training.exit.config import ExitConfig
from experiments.training.ppo.config import TrainConfig
from experiments.training.provenance import read_provenance, source_commit
from jericho_env.agent_plugins import choose_action
from jericho_env.envs.aec import JerichoEnv
from jericho_env.registry import make_rules

# the file each kind's run writes when it ends; experiments.dmc's training.json counts positions (DMC_MARK)
RUN_FILES = {"ppo": "training.json", "exit": "exit.json", "dmc": "training.json"}
DMC_MARK = "positions_generated"
# share of the card's fixed positions where the network must play the recorded move (not all: a float rounded
# otherwise by another torch build may turn a near tie)
FINGERPRINT_AGREEMENT = 0.98
MODULES = {"ppo": "experiments.train", "exit": "experiments.exit", "dmc": "experiments.dmc"}


# --------------------------------------------------------------------------------------------- the run folder
def run_kind(folder: Path, name: str | None) -> str:
    """The kind of network in a run folder (``RUN_FILES``, ``DMC_MARK``), checked against ``name``."""
    if name is not None and name not in KINDS:
        raise ValueError(f"--name {name!r}: the zoo ships {', '.join(KINDS)}")
    found = [kind for kind, file in RUN_FILES.items() if (folder / file).is_file()]
    if "dmc" in found:  # training.json: experiments.train's or experiments.dmc's, told apart by what it counts
        dmc = DMC_MARK in read_run_json(folder, RUN_FILES["dmc"], "the training summary")
        found.remove("ppo" if dmc else "dmc")
    if not found:
        raise ValueError(
            f"{str(folder)!r} is not a finished run folder: no training.json (experiments.train, experiments.dmc) "
            "or exit.json (experiments.exit); they are written when the run ends"
        )
    if name is not None and name not in found:
        has = f"it has {RUN_FILES[found[0]]}" + (" counting positions" if found[0] == "dmc" else "")
        raise ValueError(f"--name {name}: {str(folder)!r} holds a network of kind {found[0]} ({has})")
    return name or found[0]


def read_run_json(folder: Path, name: str, what: str) -> Any:
    """The JSON file ``name`` of the run ``folder``; a clear error naming it if it is missing or broken."""
    path = folder / name
    if not path.is_file():
        raise FileNotFoundError(f"the run folder has no {name} ({what}): {path}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{str(path)!r} is not readable JSON ({e})") from None


def derived_command(kind: str, config: dict[str, Any]) -> tuple[str, list[str]]:
    """(command, settings no flag sets): the command that makes the run of ``config`` under this version's presets."""
    cls: type[RunConfig] = {"ppo": TrainConfig, "dmc": DmcConfig}.get(kind, ExitConfig)
    default: dict[str, Any] = cls.make(config["game"], config.get("options") or {}).to_json()
    flags = {f.name: cls.flag_of(f.name) for f in cls.settings()}
    args = [config["game"], "--seed", str(config["seed"])]
    unset = []
    for key, value in config.items():
        if key in ("game", "options", "seed") or value == default.get(key) or value is None:
            continue
        if key in flags:
            args += [flags[key], str(value)]
        else:
            unset.append(f"{key}={value!r}")
    for key, value in (config.get("options") or {}).items():
        args += ["--option", f"{key}={str(value).lower() if isinstance(value, bool) else value}"]
    return shlex.join(["python", "-m", MODULES[kind], *args]), unset


def made_by(kind: str, folder: Path, config: dict[str, Any], commit: str | None) -> dict[str, Any]:
    """The card's provenance: the command, seed, commit (and where each came from), the sessions recorded."""
    sessions = read_provenance(folder)
    command, unset = derived_command(kind, config)
    out: dict[str, Any] = {"seed": config["seed"], "command": command, "sessions": sessions}
    if unset:
        out["not_on_the_command_line"] = unset
    if sessions:
        out["command_run"] = sessions[0]["command"]
        out["commit"], out["dirty"] = sessions[0].get("commit"), sessions[0].get("dirty")
        out["commit_source"] = "provenance.json of the run (its first session)"
        out["package_version"] = sessions[0].get("package_version")
    if commit is not None:
        out["commit"], out["dirty"], out["commit_source"] = commit, None, "given with --commit"
    elif out.get("commit") is None:
        head, dirty = source_commit()
        out["commit"], out["dirty"] = head, dirty
        out["commit_source"] = "HEAD of the checkout that added the entry (the run folder records no commit)"
        print(
            f"note: {folder} records no commit (no provenance.json: a run made before it); the card names this "
            f"checkout's HEAD {head}; pass --commit SHA if the run was made at another commit"
        )
    return out


def training_summary(kind: str, folder: Path) -> dict[str, Any]:
    """Steps (PPO), iterations, games and rows (expert iteration) or positions (dmc), and the training time."""
    if kind != "exit":
        t = read_run_json(folder, "training.json", "the training summary")
        sessions, evals, rates = len(t.get("sessions") or []), t.get("evals", []), t.get("rates") or {}
        if kind == "ppo":
            return {
                "algorithm": "ppo",
                "steps": t["steps"],
                "seconds": t.get("seconds_all_sessions"),
                "sessions": sessions,
                "steps_per_second_last_session": t.get("steps_per_second"),
                "evals": evals,
            }
        return {
            "algorithm": "dmc",
            "positions_generated": t["positions_generated"],
            **{k: t.get(k) for k in ("positions_learned", "updates", "games", "seconds")},
            "sessions": sessions,
            **{k: rates.get(k) for k in ("generated_per_second", "learned_per_second")},
            "evals": evals,
        }
    state = read_run_json(folder, "exit.json", "the expert-iteration state")
    history = state.get("history") or []
    seconds = sum(float(h.get(k, 0.0)) for h in history for k in ("seconds_games", "seconds_learn", "seconds_eval"))
    return {
        "algorithm": "exit",
        "iterations": state.get("iterations_done"),
        "games": sum(int(h.get("games", 0)) for h in history),
        "rows": sum(int(h.get("rows", 0)) for h in history),
        "seconds": round(seconds, 1),
        "evals": [{"iteration": h["iteration"], **h["evals"]} for h in history if "evals" in h],
    }


def final_scores(kind: str, folder: Path, scores: Path | None = None) -> dict[str, Any]:
    """The card's scores: the kind's agents' cells in ``scores`` (an experiments.evaluate results.json), else in the
    run's final table; a dmc run has none, so its last evaluation."""
    if scores is not None:
        results = read_run_json(scores.parent, scores.name, "the table given with --scores")
        check_scores_table(kind, folder, scores, results)
        source = f"an experiments.evaluate table given with --scores ({scores.resolve()})"
        return table_scores(kind, scores, str(scores.resolve()), results, source)
    if kind == "dmc":
        return last_evaluation(folder)
    results = read_run_json(folder, "tournament/results.json", "the final table")
    table = "tournament/results.json"
    return table_scores(kind, folder / table, table, results, "the run's final table (tournament/results.json)")


def last_evaluation(folder: Path) -> dict[str, Any]:
    """A dmc run's scores: its last evaluation in training.json (seat-swapped deals against greedy)."""
    t = read_run_json(folder, "training.json", "the training summary")
    config = read_run_json(folder, "config.json", "the run's config")
    if not t.get("evals"):
        raise ValueError(f"{folder}/training.json records no evaluation: give a table with --scores")
    e = t["evals"][-1]
    cell = {k: e[k] for k in ("score", "ci95", "games", "positions_generated")}
    return {
        "source": f"the run's last evaluation during training (training.json, at {e['positions_generated']:,} "
        "positions): a dmc run plays no final table",
        "deals": config.get("eval_deals"),
        "seed": None,
        "table": "training.json",
        "dmc": {e["opponent"]: cell},
    }


def check_scores_table(kind: str, folder: Path, path: Path, results: dict[str, Any]) -> None:
    """``ValueError`` unless the table ``path`` played the run's game and options and, as the kind's agents,
    the tensors of the run's final.zip (the file each row's path names, read without unpickling)."""
    config = read_run_json(folder, "config.json", "the run's config")
    cfg = results.get("config") or {}
    game, options = config["game"], dict(config.get("options") or {})
    if results.get("game_id", cfg.get("game")) != game:
        raise ValueError(f"--scores {path}: a table of {results.get('game_id')!r}, the run is of {game}")
    if make_rules(game, **dict(cfg.get("options") or {})).options != make_rules(game, **options).options:
        raise ValueError(f"--scores {path}: played with options {cfg.get('options')}, the run with {options}")
    final = _weights(folder / "final.zip")["policy"]
    specs = {a.get("label"): a for a in cfg.get("agents") or [] if isinstance(a, dict)}
    for agent in KINDS[kind]:
        if agent not in specs:
            continue  # table_scores names the missing row
        played = (specs[agent].get("kwargs") or {}).get("path")
        if played is None or not Path(played).is_file():
            raise ValueError(
                f"--scores {path}: its {agent} played {played or 'the zoo entry'}, which cannot be checked against "
                f"this run; evaluate again with --agents {agent}={folder / 'final.zip'}"
            )
        tensors = _weights(Path(played))["policy"]
        same = tensors.keys() == final.keys() and all(tensors[k].equal(final[k]) for k in final)
        if not same:
            raise ValueError(f"--scores {path}: its {agent} played {played}, another network than {folder}/final.zip")


def table_scores(kind: str, path: Path, table: str, results: dict[str, Any], source: str) -> dict[str, Any]:
    """The cells of the kind's agents in ``results`` (read from ``path``; ``table`` on the card), from ``source``."""
    cfg = results.get("config", {})
    out: dict[str, Any] = {"source": source, "deals": cfg.get("deals"), "seed": cfg.get("seed"), "table": table}
    for agent in KINDS[kind]:
        cells = {
            c["opponent"]: {
                "score": c["win_rate"],
                "ci95": c["ci95"],
                "games": c["wins"] + c["draws"] + c["losses"],
                **{k: c[k] for k in ("wins", "draws", "losses")},
            }
            for c in results.get("cells", [])
            if c["agent"] == agent
        }
        if not cells:
            raise ValueError(f"{path} has no row for {agent!r} (agents: {results.get('agents')})")
        out[agent] = cells
    return out


# --------------------------------------------------------------------------------------------- writing
def policy_only(src: Path) -> bytes:
    """The checkpoint ``src`` as zip bytes with ``meta.json`` as it is and ``weights.pt`` holding the policy only."""
    import torch

    state = _weights(src)  # tensors only (torch.load with weights_only=True)
    weights = io.BytesIO()
    torch.save({"policy": state["policy"]}, weights)
    with zipfile.ZipFile(src) as zf:
        meta = zf.read(META)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(META, meta)
        zf.writestr(WEIGHTS, weights.getvalue())
    return out.getvalue()


def check_versions(meta: dict[str, Any], game: str, options: dict[str, Any], where: str) -> None:
    """``ValueError`` unless the checkpoint's game and observation versions are this version's."""

    rules = make_rules(game, **options)
    for key, now in (("game_version", rules.version), ("observation_version", rules.observation_version)):
        if meta[key] != now:
            raise ValueError(
                f"{where} was trained on {game} with {key} {meta[key]}; this version of jericho-env has {now}: "
                "train it again on this version before shipping it"
            )


def play_one(agent_name: str, game: str, path: Path | None, options: dict[str, Any], seed: int = 0) -> int:
    """One full game of ``agent_name`` (``path``: its checkpoint; None: the shipped one) against random; its length."""

    kwargs: dict[str, Any] = {} if path is None else {"path": str(path)}
    if agent_name == "exit-search":
        kwargs["simulations"] = 4  # a check that it loads and plays, not of its strength
    env = JerichoEnv(game, **options)
    n = env.rules.info.num_players
    seats = [agents.make(agent_name, game, seed=seed, **kwargs, **options)]
    seats += [agents.make("random", game, seed=seed + i, **options) for i in range(1, n)]
    _, length = play_game(env, seats, seed, list(range(n)))
    return length


def fingerprint(
    agent_name: str, game: str, options: dict[str, Any], path: Path | None = None, games: int = 3, seed: int = 0
) -> dict[str, Any]:
    """The network's moves at fixed positions: every decision with a choice in ``games`` seeded games of greedy play
    (random where the game has no greedy), so a change to the rules, observations, greedy or the prior shows."""

    kwargs: dict[str, Any] = {} if path is None else {"path": str(path)}
    agent = agents.make(agent_name, game, seed=seed, **kwargs, **options)
    env = JerichoEnv(game, **options)
    player = "greedy" if available("greedy", game) else "random"
    seats = [agents.make(player, game, **options) for _ in range(env.rules.info.num_players)]
    moves: list[int] = []
    for g in range(games):
        env.reset(seed=seed + g)
        agent.reset(seed=seed + g)
        for s, other in enumerate(seats):
            other.reset(seed=int(np.random.SeedSequence([seed, g, s]).generate_state(1)[0]))
        while not env.rules.is_terminal(env.state):
            obs = env.observe(env.agent_selection)
            if np.count_nonzero(obs["action_mask"]) > 1:
                moves.append(int(agent.act(obs)))
            env.step(int(choose_action(seats[env.rules.current_player(env.state)], env, env.agent_selection)))
    text = " ".join(map(str, moves))
    return {"agent": agent_name, "games": games, "seed": seed, "positions": f"{player} play", "moves": text}


def fingerprint_agreement(entry: ZooEntry) -> tuple[int, int]:
    """(moves that agree, moves on the card): the shipped network asked again at its card's fixed positions."""
    card = entry.card.get("fingerprint")
    if not isinstance(card, dict) or not isinstance(card.get("moves"), str):
        raise ZooError(f"{entry.name}.json has no fingerprint: add the entry again (python -m experiments.zoo add)")
    options = dict(entry.card.get("options") or {})
    now = fingerprint(card["agent"], entry.game, options, entry.path, int(card["games"]), int(card["seed"]))
    then, again = card["moves"].split(), now["moves"].split()
    return sum(a == b for a, b in zip(then, again, strict=False)), max(len(then), len(again))


def network_meta(kind: str, path: Path) -> dict[str, Any]:
    """The checked ``meta.json`` of the checkpoint ``path`` of a network of ``kind`` (dmc: its own format)."""
    if kind == "dmc":
        return read_dmc_meta(path)  # a PPO or SB3 zip is refused here, saying why
    return read_meta(path)  # an SB3 zip (unsafe format) is refused here, saying why


def add(
    folder: Path,
    name: str | None,
    zoo_dir: Path,
    commit: str | None,
    replace: bool,
    scores: Path | None = None,
    recipe: Recipe | None = None,
) -> ZooEntry:
    """Make the zoo entry of the run in ``folder`` in ``zoo_dir``; return it (the files removed if its check fails).

    ``scores``: see ``final_scores``; ``recipe``: the recipe that made the run. Paths under the run folder's parent
    are written ``{runs}`` on the card.
    """

    if not folder.is_dir():
        raise FileNotFoundError(f"no run folder at {str(folder)!r}")
    kind = run_kind(folder, name)
    config = read_run_json(folder, "config.json", "the run's config")
    final = folder / "final.zip"
    if not final.is_file():
        raise FileNotFoundError(f"the run folder has no final.zip (written when the run ends): {final}")
    meta = network_meta(kind, final)
    game, options = config["game"], dict(config.get("options") or {})
    if meta["game_id"] != game:
        raise ValueError(f"{final} holds a {meta['game_id']} network, but config.json says {game}")
    if (meta.get("training") or {}).get("algorithm", "ppo") != kind:
        raise ValueError(f"{final} is not a {kind} network (its meta.json says {meta['training'].get('algorithm')})")
    check_versions(meta, game, options, str(final))
    stem = f"{game}-{kind}"
    zoo_dir.mkdir(parents=True, exist_ok=True)
    zip_path, card_path = zoo_dir / f"{stem}.zip", zoo_dir / f"{stem}.json"
    if (zip_path.exists() or card_path.exists()) and not replace:
        raise ValueError(f"the zoo already has {stem} ({zoo_dir}); pass --replace to replace it")
    data = policy_only(final)
    card = {
        "card_version": CARD_VERSION,
        "game": game,
        "kind": kind,
        "agents": list(KINDS[kind]),
        "options": dict(make_rules(game, **options).options),
        "game_version": meta["game_version"],
        "observation_version": meta["observation_version"],
        "made_by": made_by(kind, folder, config, commit),
        "training": training_summary(kind, folder),
        "scores": final_scores(kind, folder, scores),
        "config": config,
        "file": {
            "name": zip_path.name,
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "content": "meta.json and the policy's tensors (weights.pt); the optimizer state is dropped",
            "source": {"path": str(final.resolve()), "bytes": final.stat().st_size, "sha256": sha256(final)},
        },
        "added": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    if recipe is not None:
        card["made_by"]["recipe"] = {"name": recipe.name, "needs": list(recipe.needs), "steps": list(recipe.steps)}
    card = relative(card, folder.resolve().parent)
    card["package_version"] = card["made_by"].get("package_version") or jericho_env.__version__
    tmp = zip_path.with_name(zip_path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(zip_path)
    try:
        card["fingerprint"] = fingerprint(kind, game, options, zip_path)
        write_file(card_path, json.dumps(card, indent=1) + "\n")
        entry = ZooEntry(game, kind, zip_path, read_card(card_path))
        for agent in entry.agents:
            play_one(agent, game, zip_path, options)
    except Exception:
        zip_path.unlink(missing_ok=True)
        card_path.unlink(missing_ok=True)
        raise
    return entry


def check(zoo_dir: Path) -> list[str]:
    """Every entry verified: file matches the card, versions match the games, each agent loads and plays; lines."""

    lines = []
    for entry in zoo(zoo_dir):
        if entry.card.get("file", {}).get("sha256") != sha256(entry.path):
            raise ZooError(f"{entry.path} does not match the SHA-256 on its card: run experiments.zoo add again")
        options = dict(entry.card.get("options") or {})
        check_versions(entry.card, entry.game, options, f"{entry.name} (its card)")
        rules = make_rules(entry.game, **options)
        lengths = [play_one(agent, entry.game, entry.path, options) for agent in entry.agents]
        same, total = fingerprint_agreement(entry)
        if same < FINGERPRINT_AGREEMENT * total:
            raise ZooError(f"{entry.name} plays {total - same} of its card's {total} fixed positions otherwise")
        played = ", ".join(f"{a} played a game of {n} moves" for a, n in zip(entry.agents, lengths, strict=True))
        versions = f"{entry.game}-v{rules.version} observations v{rules.observation_version}"
        lines.append(f"{entry.name}: {entry.size} bytes, {versions}; {played}; {same}/{total} fixed positions agree")
    return lines


# --------------------------------------------------------------------------------------------- command line
def rebuilt(name: str, runs: Path, zoo_dir: Path, tiny: bool, ship: bool) -> list[str]:
    """``rebuild``: the lines printed after the recipe runs, the card's scores beside the new ones (``ship``: the
    network replaces the entry in ``zoo_dir``)."""

    book = load_recipes()
    if name not in book:
        raise ValueError(f"no recipe {name!r}; the recipes: {', '.join(book)}")
    if ship and tiny:
        raise ValueError("--ship with --tiny: a tiny rebuild checks the chain; it ships no network")
    if ship and source_commit()[1]:
        raise ValueError("--ship: this checkout has uncommitted changes; a shipped network comes from a clean tree")
    recipe = rebuild(name, runs, tiny, book)[-1]
    folder = Path(recipe.ship.replace("{runs}", str(runs)))
    table = None if recipe.scores is None else Path(recipe.scores.replace("{runs}", str(runs)))
    new = final_scores(recipe.kind(), folder, table)
    card_path = zoo_dir / f"{name}.json"
    old = read_card(card_path).get("scores", {}) if card_path.is_file() else {}
    lines = [f"{name}: the shipped card's scores beside the rebuilt network's ({folder})", ""]
    lines += ["| agent | against | card | rebuilt |", "| --- | --- | --- | --- |"]
    for agent, rows in new.items():
        if not isinstance(rows, dict) or agent in ("deals", "seed", "source", "table"):
            continue
        for opponent, cell in rows.items():
            before = old.get(agent, {}).get(opponent)
            lines.append(f"| {agent} | {opponent} | {_score(before)} | {_score(cell)} |")
    if ship:
        entry = add(folder, recipe.kind(), zoo_dir, None, True, table, recipe)
        lines += ["", f"shipped: {entry.line()}"]
    return lines


def _score(cell: Any) -> str:
    if not isinstance(cell, dict) or "score" not in cell:
        return "—"
    lo, hi = cell.get("ci95", (float("nan"), float("nan")))
    return f"{100 * cell['score']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    p = cli_parser("experiments.zoo", __doc__)
    sub = p.add_subparsers(dest="command", required=True, metavar="{add,list,check,rebuild}")
    a = sub.add_parser("add", help="ship a finished run's network (card written from the run folder)")
    a.add_argument("run", metavar="RUN_FOLDER", help="a finished experiments.train, exit or dmc run folder")
    a.add_argument("--name", choices=tuple(KINDS), default=None, help="the kind of network (default: the run's)")
    a.add_argument("--commit", default=None, help="the commit that made the run, for runs without provenance.json")
    a.add_argument("--replace", action="store_true", help="replace the game's entry of this kind")
    a.add_argument(
        "--scores",
        default=None,
        metavar="RESULTS_JSON",
        help="the card's scores from this experiments.evaluate results.json (its rows must have played the run's "
        "final.zip); default: the run's final table, for a dmc run (none) its last evaluation in training.json",
    )
    r = sub.add_parser("rebuild", help="run an entry's recipe; print its card's scores beside the rebuilt network's")
    r.add_argument("name", metavar="NAME", help="the entry, GAME-KIND (agents/zoo/recipes.toml)")
    r.add_argument("--out", default="runs/rebuild", help="the runs folder (default runs/rebuild); again to go on")
    r.add_argument("--tiny", action="store_true", help="every budget a few seconds': a check of the chain")
    r.add_argument("--ship", action="store_true", help="replace the entry with the rebuilt network (clean tree only)")
    for s in (a, r, sub.add_parser("list", help="the shipped agents"), sub.add_parser("check", help="verify entries")):
        s.add_argument("--zoo", default=None, help="the zoo folder (default: $JERICHO_ENV_ZOO, else agents/zoo)")
    return p


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = build_parser()
    args = parser.parse_args(argv)

    def body() -> None:
        zoo_dir = Path(args.zoo) if args.zoo else zoo_folder()
        if args.command == "add":
            scores = None if args.scores is None else Path(args.scores)
            entry = add(Path(args.run), args.name, zoo_dir, args.commit, args.replace, scores)
            print(f"added {entry.name} to {zoo_dir}: {entry.path.name} ({entry.size} bytes) and {entry.name}.json")
            print(entry.line())
        elif args.command == "list":
            print(zoo(zoo_dir))
        elif args.command == "rebuild":
            print("\n".join(rebuilt(args.name, Path(args.out), zoo_dir, args.tiny, args.ship)))
        else:
            lines = check(zoo_dir)
            print("\n".join(lines) if lines else f"no agents shipped in {zoo_dir}")

    return run_cli(parser, body)


if __name__ == "__main__":
    sys.exit(main())
