"""The config of an ``experiments.exit`` run (``ExitConfig``): the three learners' idiom
(``experiments.training.config.RunConfig``), its defaults in ``experiments.training.presets.EXIT``."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from agents.nets import POLICY_NAMES
from experiments import cli
from experiments.training import presets
from experiments.training.config import RunConfig, flag


@dataclasses.dataclass
class ExitConfig(RunConfig):
    """Everything an expert-iteration run depends on; config.json records it."""

    seed: int = flag("seed of everything", cli.training_seed)
    iterations: int = flag("generate, learn, evaluate: this many times", cli.positive_int)
    games: int = flag("self-play games per iteration", cli.positive_int)
    games_at_once: int = flag("games a worker plays in lockstep", cli.positive_int)
    simulations: int = flag("search simulations per self-play move", cli.positive_int)
    c_puct: float = flag("PUCT's exploration weight", cli.positive_float)
    dirichlet_alpha: float = flag("root noise: Dirichlet alpha per legal action", cli.positive_float)
    dirichlet_fraction: float = flag("root noise: its weight in the prior", cli.fraction)
    temperature_moves: int = flag("a seat's first decisions drawn from the visits", cli.nonnegative_int)
    start: str = flag("the first network: ppo, prior (greedy's judgement) or scratch",
                      choices=("ppo", "prior", "scratch"))  # fmt: skip
    init: str | None = flag("the checkpoint --start ppo starts from (default: --ppo's)", metavar="CHECKPOINT")
    ppo: str | None = flag("the default PPO run's checkpoint (evaluations, final table)", metavar="CHECKPOINT")
    policy: str = flag("the network for --start prior/scratch (as experiments.train --policy)",
                       choices=(*POLICY_NAMES, "auto"))  # fmt: skip
    buffer: int = flag("training rows kept", cli.positive_int)
    learning_rate: float = flag("AdamW's learning rate", cli.positive_float)
    weight_decay: float = flag("AdamW's weight decay", cli.nonnegative_float)
    batch_size: int = flag("minibatch size", cli.positive_int)
    updates: int = flag("minibatch steps per iteration", cli.positive_int)
    value_weight: float = flag("weight of the value loss", cli.nonnegative_float)
    eval_deals: int = flag("deals per evaluation opponent each iteration", cli.positive_int)
    final_deals: int = flag("deals per pair in the final table", cli.positive_int)
    final_simulations: int | None = flag("ismcts and exit-search budget in the final table", cli.positive_int)
    workers: int = flag("processes for the games and the tables", cli.positive_int)
    expert: str = flag("who plays the games and gives the targets, the network in search: puct or rollouts",
                       choices=("puct", "rollouts"))  # fmt: skip
    expert_simulations: int | None = flag("rollouts expert: games per action (default 16)", cli.positive_int)
    expert_temperature: float = flag("rollouts expert: its policy softmax(log prior + Q / this)", cli.positive_float)
    target: str = flag("the policy target: the expert's distribution (policy), or (rollouts expert) its improved "
                       "logits by squared error (advantage)", choices=("policy", "advantage"))  # fmt: skip

    COMMAND: ClassVar[str] = "experiments.exit"
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = presets.EXIT
    BUDGET: ClassVar[str] = "iterations"
    STARTED: ClassVar[tuple[str, str, str]] = ("expert-iteration run", "exit.json", "no iteration was complete")
    RUN_FLAGS: ClassVar[tuple[str, ...]] = (*RunConfig.RUN_FLAGS, "--backend", "--ray-address")

    @classmethod
    def resolve(cls, game: str, options: dict[str, Any], values: dict[str, Any], explicit: set[str]) -> dict[str, Any]:
        """The advantage target needs the rollouts' values; the network must play the game."""
        from agents.nets import check_policy

        if values["target"] == "advantage" and values["expert"] != "rollouts":
            raise ValueError(f"--target advantage needs the action values of --expert rollouts, got --expert "
                             f"{values['expert']}")  # fmt: skip
        if values["policy"] != "auto":
            check_policy(values["policy"], game)
        return values

    @property
    def value_rows(self) -> str:
        """How the search values its leaves: the mover's value negated (two-player zero-sum) or every seat's."""
        from jericho_env.registry import make_rules

        info = make_rules(self.game, **self.options).info
        return "mover" if info.num_players == 2 and info.zero_sum else "all"


make_exit_config = ExitConfig.make  # the game's preset with the given values that are not None on top, checked
