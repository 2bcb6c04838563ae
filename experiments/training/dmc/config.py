"""The config of an ``experiments.dmc`` run (``DmcConfig``): the three learners' idiom
(``experiments.training.config.RunConfig``), its defaults in ``experiments.training.presets.DMC``, checked once."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar

from experiments import cli
from experiments.training import presets
from experiments.training.config import Compat, RunConfig, flag


@dataclasses.dataclass
class DmcConfig(RunConfig):
    """Everything a Deep Monte-Carlo run depends on; config.json records it."""

    seed: int = flag("seed of everything", cli.training_seed)
    positions: int = flag("stop after this many positions (decisions with 2+ legal actions)", cli.positive_int)
    envs: int = flag("games the actors play in lockstep", cli.positive_int)
    rounds: int = flag("steps of every game per actor phase (then the learner catches up)", cli.positive_int)
    epsilon: float = flag("chance of a uniformly random legal move instead of the best", cli.fraction)
    buffer: int = flag("positions kept in the replay buffer (the latest)", cli.positive_int)
    batch_size: int = flag("positions per learner update (at most --buffer)", cli.positive_int)
    learning_rate: float = flag("Adam's learning rate", cli.positive_float)
    learning_rate_end: float | None = flag("the rate at the end of --positions, reached in a straight line over its "
                                           "last --anneal share (none: constant)", cli.positive_float)  # fmt: skip
    anneal: float = flag("share of the budget, at its end, over which the rate falls (above 0)", cli.fraction)
    clip: float = flag("gradient norm clip", cli.positive_float)
    net: str = flag("hidden layer sizes of the Q network's trunk, e.g. 512,512,256")
    features: str = flag("action input: game (id embedding plus the action's features) or none (id embedding alone)",
                         choices=("game", "none"))  # fmt: skip
    prior: str = flag("greedy-scores: greedy's score of every action as an input and a residual of Q (grid, walls)",
                      choices=("none", "greedy-scores"))  # fmt: skip
    versus_share: float = flag("share of the games with one learning seat against a fixed agent of --versus in every "
                               "other seat (the rest: self-play)", cli.fraction)  # fmt: skip
    versus: str = flag("the fixed agents, comma-separated agent specs as experiments.evaluate's --agents, e.g. "
                       "greedy,ppo or dmc=PATH or ismcts=200")  # fmt: skip
    lam: float = flag("lambda of the target's lambda-return (1: the outcome alone, DouZero's; less mixes in the "
                      "network's value of the seat's next decision)", cli.fraction)  # fmt: skip
    replay_ratio: float = flag("positions learned per position generated", cli.positive_float)
    eval_every: int = flag("positions generated between evaluations against greedy", cli.positive_int)
    eval_deals: int = flag("seat-swapped deals per evaluation", cli.positive_int)
    checkpoint_seconds: float = flag("seconds between checkpoints (latest.zip, training.json)", cli.positive_float)
    init: str | None = flag("a dmc checkpoint of the same game, options and layers whose network a new run starts "
                            "from (optimizer and counters afresh)", metavar="CHECKPOINT")  # fmt: skip
    teacher: str | None = flag("dmc checkpoints, A.zip or A.zip+B.zip: each position learns their mean Q instead of "
                               "the game's outcome (distillation)", metavar="CHECKPOINTS")  # fmt: skip
    teacher_level: float = flag("with --teacher: the weight of each position's mean error over its legal actions "
                                "against the errors between them (1: the plain squared error)",
                                cli.positive_float)  # fmt: skip
    backend: str = flag("where the actors run: local, or ray (--actors Ray actors; docs/ray.md)",
                        choices=("local", "ray"))  # fmt: skip

    COMMAND: ClassVar[str] = "experiments.dmc"
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = presets.DMC
    BUDGET: ClassVar[str] = "positions"
    STARTED: ClassVar[tuple[str, str, str]] = ("dmc run", "checkpoints/latest.zip", "no checkpoint was written")
    # runs of older versions: the fields added since, as those runs had them; the share's old name; the retired
    # margin target and search teachers (docs/history/retired.md)
    COMPAT: ClassVar[Compat] = Compat(
        added={"prior": "none", "versus_share": 0.0, "lam": 1.0, "versus": "greedy", "init": None, "anneal": 1.0,
               "learning_rate_end": None, "teacher": None, "teacher_level": 0.1, "backend": "local"},
        renamed={"versus_greedy": "versus_share"},
        retired={"target": "return", "teacher_search": None},
    )  # fmt: skip
    RUN_FLAGS: ClassVar[tuple[str, ...]] = (*RunConfig.RUN_FLAGS, "--ray-address", "--actors")

    def done(self, folder: Path) -> int:
        """The positions the run in ``folder`` has generated, as its latest checkpoint records them (0 without one)."""
        latest = folder / "checkpoints" / "latest.zip"
        if not latest.is_file():
            return 0
        from agents.dmc import read_dmc_meta

        return int(read_dmc_meta(latest)["training"]["stats"]["positions_generated"])

    @classmethod
    def resolve(cls, game: str, options: dict[str, Any], values: dict[str, Any], explicit: set[str]) -> dict[str, Any]:
        """What one value says of another, the network's sizes, the prior's game and the fixed agents, checked."""
        from agents.nets.dmc import parse_hidden
        from agents.prior import SCORE_GAMES

        parse_hidden(values["net"])
        if values["prior"] != "none" and game not in SCORE_GAMES:
            raise ValueError(f"--prior {values['prior']} is for {', '.join(SCORE_GAMES)} only, not {game!r}")
        end, rate = values["learning_rate_end"], values["learning_rate"]
        if end is not None and end > rate:
            raise ValueError(f"--learning-rate-end must be in (0, --learning-rate {rate}], got {end}")
        if values["anneal"] == 0:
            raise ValueError("--anneal must be in (0, 1], got 0")
        if values["batch_size"] > values["buffer"]:
            raise ValueError(f"--batch-size {values['batch_size']} exceeds --buffer {values['buffer']}")
        if values["teacher"] and values["backend"] == "ray":
            raise ValueError("--teacher runs with --backend local (the Ray actors do not send a teacher's values)")
        values["versus"] = ",".join(versus_agents(values["versus"], game, options, make=values["versus_share"] > 0))
        return values


def versus_agents(names: str, game: str, options: dict[str, Any], make: bool = True) -> list[str]:
    """The agent specs of ``--versus``, checked to play ``game`` and (``make``) each made once before the run."""
    import agents
    from agents.registry import available, parse_spec, split_specs

    listed = split_specs(str(names))
    if not listed:
        raise ValueError(f"--versus takes agent specs, comma-separated (e.g. greedy,ppo), got {names!r}")
    parsed = [parse_spec(spec, game) for spec in listed]  # unknown agents: refused here, naming the known ones
    missing = [spec for spec, (_, name, _) in zip(listed, parsed, strict=True) if not available(name, game)]
    if missing:
        raise ValueError(f"--versus: {', '.join(missing)} does not play {game!r}")
    for _, name, kwargs in dict(zip(listed, parsed, strict=True)).values() if make else ():  # each made once here
        agents.make(name, game, **kwargs, **options)
    return listed


make_config = DmcConfig.make  # the game's preset with the given values that are not None on top, checked
