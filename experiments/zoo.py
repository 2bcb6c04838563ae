"""The model zoo's entries: ``python -m experiments.zoo add RUN_FOLDER`` ships a run's network in the package.

``add`` reads a finished run folder (``experiments.train``: config.json, training.json, final.zip and
tournament/results.json; ``experiments.exit``: exit.json in place of training.json; ``experiments.dmc``:
a training.json counting positions, and no final table), checks that the network is in the safe format
and reads this version's observations, then writes into the zoo folder (``agents/zoo/`` of this checkout;
``--zoo`` or ``$JERICHO_ENV_ZOO`` for another):

- ``<game>-<kind>.zip``: the checkpoint with its policy tensors only (the optimizer state, needed
  only to resume training, is dropped: a third of the size);
- ``<game>-<kind>.json``: its card (``agents.pretrained``): game, options, versions, the command, seed
  and commit that made it (``provenance.json`` of the run; runs made before it name the checkout's
  HEAD, or ``--commit``), training steps and time, the final table's scores with 95% intervals, the
  file's size and SHA-256, and its moves at fixed positions (``fingerprint``, which the tests replay).

The scores come from the run's final table (tournament/results.json), or from the results.json of an
``experiments.evaluate`` run given with ``--scores`` (its rows of the kind's agents, which must have played
this run's network). A dmc run plays no final table: without ``--scores`` its card takes the run's last
evaluation against greedy (training.json), and ``scores["source"]`` says which.

Then it loads the entry as ``agents.make`` will, plays a game with each agent that uses it, and
prints the entry; if that fails, the files are removed. ``list`` prints the entries; ``check`` verifies
every entry (file matches its card, versions match the games, each agent loads and plays a game).
A card names no path of the machine that made it: the run folder's parent is written ``{runs}``.

``rebuild NAME`` runs the entry's recipe (``agents/zoo/recipes.toml``: the commands that make it from
nothing, ``experiments.recipes``) under ``--out`` (a killed rebuild, run again, goes on where it stopped),
then prints the scores on the shipped card beside the rebuilt network's; ``--ship`` replaces the entry with
it, from a clean checkout only, its card naming the recipe; ``--tiny`` checks the chain at a few seconds'
budget.

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
import io
import json
import shlex
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from agents.pretrained import CARD_VERSION, KINDS, ZooEntry, ZooError, read_card, sha256, zoo, zoo_folder
from experiments.cli import cli_parser, run_cli
from experiments.recipes import Recipe, relative
from experiments.training.provenance import read_provenance, source_commit

# the file each kind's run writes when it ends; experiments.dmc's training.json counts positions (DMC_MARK)
RUN_FILES = {"ppo": "training.json", "exit": "exit.json", "dmc": "training.json"}
DMC_MARK = "positions_generated"
# share of the card's fixed positions where the network must play the recorded move (not all: a float rounded
# otherwise by another torch build may turn a near tie)
FINGERPRINT_AGREEMENT = 0.98
MODULES = {"ppo": "experiments.train", "exit": "experiments.exit", "dmc": "experiments.dmc"}


# --------------------------------------------------------------------------------------------- the run folder
def run_kind(folder: Path, name: str | None) -> str:
    """The kind of network in a run folder, checked against ``name``.

    ``ppo``: training.json; ``exit``: exit.json; ``dmc``: a training.json that counts positions (``DMC_MARK``).
    """
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
    """(command, settings no flag sets): the command that makes the run of ``config`` under this version's presets.

    ``--seed`` and every value that differs from the preset, as its flag, and the options as ``--option``.
    """
    from experiments.training.config import RunConfig
    from experiments.training.dmc.config import DmcConfig
    from experiments.training.exit.config import ExitConfig
    from experiments.training.ppo.config import TrainConfig

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
    if kind == "ppo":
        t = read_run_json(folder, "training.json", "the training summary")
        sessions = t.get("sessions") or []
        return {
            "algorithm": "ppo",
            "steps": t["steps"],
            "seconds": t.get("seconds_all_sessions"),
            "sessions": len(sessions),
            "steps_per_second_last_session": t.get("steps_per_second"),
            "evals": t.get("evals", []),
        }
    if kind == "dmc":
        t = read_run_json(folder, "training.json", "the training summary")
        rates = t.get("rates") or {}
        return {
            "algorithm": "dmc",
            "positions_generated": t["positions_generated"],
            "positions_learned": t.get("positions_learned"),
            "updates": t.get("updates"),
            "games": t.get("games"),
            "seconds": t.get("seconds"),
            "sessions": len(t.get("sessions") or []),
            "generated_per_second": rates.get("generated_per_second"),
            "learned_per_second": rates.get("learned_per_second"),
            "evals": t.get("evals", []),
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
    """The card's scores: the cells of the kind's agents in a table (row agent's score with its 95% interval).

    The table: ``scores`` (an experiments.evaluate results.json, checked to have played this run's network),
    else the run's tournament/results.json; a dmc run has no final table, so its last evaluation.
    """
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
    cell = {
        "score": e["score"],
        "ci95": e["ci95"],
        "games": e["games"],
        "positions_generated": e["positions_generated"],
    }
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
    from agents.checkpoint import _weights
    from jericho_env.registry import make_rules

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
                "wins": c["wins"],
                "draws": c["draws"],
                "losses": c["losses"],
            }
            for c in results.get("cells", [])
            if c["agent"] == agent
        }
        if not cells:
            agents = results.get("agents")
            raise ValueError(f"{path} has no row for {agent!r} (agents: {agents})")
        out[agent] = cells
    return out


# --------------------------------------------------------------------------------------------- writing
def policy_only(src: Path) -> bytes:
    """The checkpoint ``src`` as zip bytes with ``meta.json`` as it is and ``weights.pt`` holding the policy only."""
    import torch

    from agents.checkpoint import META, WEIGHTS, _weights

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
    from jericho_env.registry import make_rules

    rules = make_rules(game, **options)
    for key, now in (("game_version", rules.version), ("observation_version", rules.observation_version)):
        if meta[key] != now:
            raise ValueError(
                f"{where} was trained on {game} with {key} {meta[key]}; this version of jericho-env has {now}: "
                "train it again on this version before shipping it"
            )


def play_one(agent_name: str, game: str, path: Path | None, options: dict[str, Any], seed: int = 0) -> int:
    """One full game of ``agent_name`` (``path``: its checkpoint; None: the shipped one) against random; its length."""
    import agents
    from experiments.play.tournament import play_game
    from jericho_env.envs.aec import JerichoEnv

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
    """The network's moves at fixed positions: every decision with a choice in ``games`` seeded games of greedy play.

    Greedy plays every seat (random where the game has no greedy), so the positions follow from the rules,
    greedy and the seeds; the moves from the network, its observations and its prior's floats. The card keeps
    them and the zoo's tests ask the shipped network again: a change to the rules, the observation layout,
    greedy or the prior, declared by a version number or not, shows as other moves (positions from greedy's
    games, not random ones: the networks' choices there depend more on what they see).
    """
    import agents
    from agents.registry import available
    from jericho_env.agent_plugins import choose_action
    from jericho_env.envs.aec import JerichoEnv

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
        from agents.dmc import read_dmc_meta

        return read_dmc_meta(path)  # a PPO or SB3 zip is refused here, saying why
    from agents.checkpoint import read_meta

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

    ``scores``: a results.json of experiments.evaluate whose rows give the card's scores (``final_scores``).
    ``recipe``: the recipe that made the run (its card names it). Every path under the run folder's parent is
    written ``{runs}`` on the card.
    """
    from jericho_env.registry import make_rules

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
            "sha256": _sha256_bytes(data),
            "content": "meta.json and the policy's tensors (weights.pt); the optimizer state is dropped",
            "source": {"path": str(final.resolve()), "bytes": final.stat().st_size, "sha256": sha256(final)},
        },
        "added": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    if recipe is not None:
        card["made_by"]["recipe"] = {"name": recipe.name, "needs": list(recipe.needs), "steps": list(recipe.steps)}
    card = relative(card, folder.resolve().parent)
    import jericho_env

    card["package_version"] = card["made_by"].get("package_version") or jericho_env.__version__
    _write(zip_path, data)
    try:
        card["fingerprint"] = fingerprint(kind, game, options, zip_path)
        _write(card_path, (json.dumps(card, indent=1) + "\n").encode())
        entry = ZooEntry(game, kind, zip_path, read_card(card_path))
        for agent in entry.agents:
            play_one(agent, game, zip_path, options)
    except Exception:
        zip_path.unlink(missing_ok=True)
        card_path.unlink(missing_ok=True)
        raise
    return entry


def _sha256_bytes(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def check(zoo_dir: Path) -> list[str]:
    """Every entry verified: file matches the card, versions match the games, each agent loads and plays; lines."""
    from jericho_env.registry import make_rules

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
    """``rebuild``: the recipe run (``experiments.recipes.rebuild``), the card's scores beside the new ones.

    Returns the lines printed at the end; ``ship`` adds the network to ``zoo_dir`` in place of the entry.
    """
    from experiments.recipes import load_recipes, rebuild

    book = load_recipes()
    if name not in book:
        raise ValueError(f"no recipe {name!r}; the recipes: {', '.join(book)}")
    if ship:
        _, dirty = source_commit()
        if tiny:
            raise ValueError("--ship with --tiny: a tiny rebuild checks the chain; it ships no network")
        if dirty:
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
