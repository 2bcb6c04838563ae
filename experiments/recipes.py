"""The shipped networks' recipes as data (``agents/zoo/recipes.toml``), and the rebuild that runs one.

A recipe is the chain of commands that makes a network from nothing, each writing its run folder under ``{runs}``;
``needs`` names the recipes it starts from, ``ship`` the run folder shipped and ``scores`` the table its card takes.
``rebuild`` runs them one process each, skipping a finished step and resuming one a kill cut short; ``tiny=True``
replaces every budget by a few seconds' worth (``TINY``), a check of the chain.
"""

from __future__ import annotations

import dataclasses
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from agents.pretrained import PACKAGE_FOLDER

RECIPES = PACKAGE_FOLDER / "recipes.toml"
COMMANDS = ("experiments.train", "experiments.exit", "experiments.dmc", "experiments.evaluate")
# a run folder is finished when this file is there, written last (train and exit: their final table; dmc: its
# final network, as training.json is rewritten at every checkpoint)
FINISHED = {
    "experiments.train": "tournament/results.json",
    "experiments.exit": "tournament/results.json",
    "experiments.dmc": "final.zip",
    "experiments.evaluate": "results.json",
}
# the budgets of a check of the chain: each flag set (replaced, or added) in every command of that module
TINY: dict[str, dict[str, str]] = {
    "experiments.train": {
        "--timesteps": "1024", "--n-envs": "2", "--snapshot-every": "512", "--eval-every": "512",
        "--eval-deals": "2", "--checkpoint-every": "512", "--final-deals": "2", "--workers": "1",
        "--shards": "1", "--net": "32,32",
    },
    "experiments.exit": {
        "--iterations": "1", "--games": "4", "--games-at-once": "2", "--simulations": "6", "--updates": "3",
        "--batch-size": "32", "--buffer": "1000", "--eval-deals": "1", "--final-deals": "1",
        "--final-simulations": "4", "--workers": "1", "--expert-simulations": "2",
    },
    "experiments.dmc": {
        "--positions": "3000", "--envs": "32", "--rounds": "8", "--buffer": "4000", "--batch-size": "128",
        "--net": "32", "--eval-every": "2000", "--eval-deals": "2",
    },
    "experiments.evaluate": {"--deals": "2", "--workers": "1"},
}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Recipe:
    """One shipped network's recipe (``agents/zoo/recipes.toml``)."""

    name: str  # GAME-KIND, the zoo entry it makes
    about: str
    steps: tuple[str, ...]  # commands, "python -m experiments.X ... --out {runs}/FOLDER"
    ship: str  # the run folder shipped, "{runs}/FOLDER"
    needs: tuple[str, ...] = ()
    scores: str | None = None  # a results.json of experiments.evaluate, "{runs}/FOLDER/results.json"

    def kind(self) -> str:
        """The kind of network it makes (the name's last part: ppo, exit, dmc)."""
        return self.name.rsplit("-", 1)[1]


def load_recipes(path: Path = RECIPES) -> dict[str, Recipe]:
    """Every recipe of ``path``, each checked (``ValueError`` naming the recipe and what is wrong)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    data = tomllib.loads(path.read_text(encoding="utf-8"))
    book = {}
    for name, entry in data.items():
        known = {f.name for f in dataclasses.fields(Recipe)} - {"name"}
        unknown = sorted(set(entry) - known)
        if unknown:
            raise ValueError(f"{path}: recipe {name!r} has unknown keys {', '.join(unknown)} (known: {sorted(known)})")
        steps, needs = tuple(entry["steps"]), tuple(entry.get("needs", ()))
        recipe = Recipe(name, entry.get("about", ""), steps, entry["ship"], needs, entry.get("scores"))
        check_recipe(recipe)
        book[name] = recipe
    for recipe in book.values():
        missing = [n for n in recipe.needs if n not in book]
        if missing:
            raise ValueError(f"{path}: recipe {recipe.name!r} needs {', '.join(missing)}, which no recipe makes")
    return book


def check_recipe(recipe: Recipe) -> None:
    """``ValueError`` unless each step is ``python -m`` one of ``COMMANDS`` writing to ``--out {runs}/...``."""
    outs = []
    for step in recipe.steps:
        words = shlex.split(step)
        if words[:2] != ["python", "-m"] or len(words) < 3 or words[2] not in COMMANDS:
            raise ValueError(f"recipe {recipe.name!r}: {step!r} is not 'python -m' one of {', '.join(COMMANDS)}")
        out = flag_value(words, "--out")
        if out is None or not out.startswith("{runs}/"):
            raise ValueError(f"recipe {recipe.name!r}: {step!r} writes no --out {{runs}}/FOLDER")
        outs.append(out)
    if recipe.ship not in outs:
        raise ValueError(f"recipe {recipe.name!r}: ship {recipe.ship!r} is not the --out of one of its steps")


def flag_value(words: list[str], flag: str) -> str | None:
    """The value given to ``flag`` in ``words``, or None."""
    for i, word in enumerate(words[:-1]):
        if word == flag:
            return words[i + 1]
    return None


def with_flags(words: list[str], flags: dict[str, str]) -> list[str]:
    """``words`` with each flag of ``flags`` given that value: replaced where it is, added where it is not."""
    out = list(words)
    for flag, value in flags.items():
        if flag in out[:-1]:
            out[out.index(flag) + 1] = value
        else:
            out += [flag, value]
    return out


def in_order(name: str, book: dict[str, Recipe]) -> list[Recipe]:
    """``name``'s recipe after every recipe it needs, each once, needs first."""
    done: list[Recipe] = []

    def visit(n: str, path: tuple[str, ...]) -> None:
        if n in path:
            raise ValueError(f"the recipes need each other in a circle: {' -> '.join((*path, n))}")
        for m in book[n].needs:
            visit(m, (*path, n))
        if book[n] not in done:
            done.append(book[n])

    if name not in book:
        raise ValueError(f"no recipe {name!r}; the recipes: {', '.join(book)}")
    visit(name, ())
    return done


def step_command(step: str, runs: Path, tiny: bool) -> tuple[list[str], Path, str]:
    """(argv to run, its run folder, what to do: "skip", "resume" or "run") of a recipe step under ``runs``."""
    words = shlex.split(step.replace("{runs}", str(runs)))
    module = words[2]
    if tiny:
        words = with_flags(words, TINY[module])
    out = Path(flag_value(words, "--out") or "")
    argv = [sys.executable, *words[1:]]
    if (out / FINISHED[module]).is_file():
        return argv, out, "skip"
    if module != "experiments.evaluate" and (out / "config.json").is_file():
        argv[argv.index("--out")] = "--resume"
        return argv, out, "resume"
    return argv, out, "run"


def rebuild(name: str, runs: Path, tiny: bool = False, book: dict[str, Recipe] | None = None) -> list[Recipe]:
    """Run ``name``'s recipe and those it needs under ``runs``; return them in the order run (``RuntimeError``
    naming a step that fails)."""
    book = book if book is not None else load_recipes()
    recipes = in_order(name, book)
    runs.mkdir(parents=True, exist_ok=True)
    for recipe in recipes:
        for step in recipe.steps:
            argv, out, action = step_command(step, runs, tiny)
            shown = shlex.join(["python", *argv[1:]])
            if action == "skip":
                print(f"[{recipe.name}] done already: {out}", flush=True)
                continue
            print(f"[{recipe.name}] {'resuming' if action == 'resume' else 'running'}: {shown}", flush=True)
            if run_step(argv) != 0:
                raise RuntimeError(f"recipe {recipe.name}: {shown} failed; run the rebuild again to go on from it")
    return recipes


def run_step(argv: list[str]) -> int:
    """Run one step's process to its end; its exit status."""
    return subprocess.run(argv, check=False).returncode


def relative(value: Any, runs: Path) -> Any:
    """``value`` (a card's JSON) with every mention of the ``runs`` folder written ``{runs}``."""
    where = str(runs.resolve())
    if isinstance(value, str):
        return value.replace(where, "{runs}").replace(str(runs), "{runs}")
    if isinstance(value, list):
        return [relative(v, runs) for v in value]
    if isinstance(value, dict):
        return {k: relative(v, runs) for k, v in value.items()}
    return value


__all__ = ["FINISHED", "RECIPES", "TINY", "Recipe", "in_order", "load_recipes", "rebuild", "relative", "step_command"]
