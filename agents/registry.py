"""Build agents by name: ``make("greedy", "grid")``, ``make("ppo", "grid", path="model.zip")``.

``ppo``, ``exit`` and ``exit-search`` without ``path`` play the network shipped for the game (``agents.pretrained``);
``sb3``, ``torch`` and ``rllib`` play policies trained elsewhere (``agents.adapters``). ``make`` and ``parse_spec``
also take your own code (``LABEL=pkg.module:attr``: ``jericho_env.user_agents``) and other installed providers'
agents (``jericho_env.agent_plugins``).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Collection, Mapping
from typing import Any

from agents.base import BaseAgent
from jericho_env.user_agents import is_target, split_user_spec

# name -> (module, class or factory)
_AGENTS: dict[str, tuple[str, str]] = {
    "random": ("agents.random_agent", "RandomAgent"),
    "greedy": ("agents.greedy", "make_greedy"),
    "greedy-capture": ("agents.greedy", "make_greedy_capture"),
    "ppo": ("agents.ppo", "PPOAgent"),
    "ismcts": ("agents.search.ismcts", "ISMCTSAgent"),
    "exit": ("agents.exit", "ExitAgent"),
    "exit-search": ("agents.exit", "ExitSearchAgent"),
    "dmc": ("agents.dmc", "DmcAgent"),
    "dmc-search": ("agents.dmc_search", "DmcSearchAgent"),
    "sb3": ("agents.adapters", "SB3Agent"),
    "torch": ("agents.adapters", "TorchAgent"),
    "rllib": ("agents.adapters", "RLlibAgent"),
}
AGENT_NAMES: tuple[str, ...] = tuple(_AGENTS)
# the agents that need no checkpoint, weakest first: the opponents of the final table and of training
BASELINES: tuple[str, ...] = ("random", "greedy")


# the adapters of policies trained elsewhere (agents.adapters): they play only with a path
ADAPTERS: tuple[str, ...] = ("sb3", "torch", "rllib")
# agents that play another agent's zoo network (without a path): dmc-search searches with dmc's
PLAYS_NETWORK_OF: dict[str, str] = {"dmc-search": "dmc"}


def available(name: str, game_id: str) -> bool:
    """Whether agent ``name`` plays ``game_id`` (``ppo`` does any game, given a checkpoint of it)."""
    if name not in _AGENTS:
        if is_target(name) or _other_provider(name, game_id) is not None:
            return True  # user code and other providers' agents: make says if they refuse the game
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(AGENT_NAMES)}")
    if name == "dmc-search":  # a Q network values the seat to move: two-player zero-sum games
        from jericho_env.registry import make_rules

        info = make_rules(game_id).info
        return bool(info.num_players == 2 and info.zero_sum)
    if name == "greedy":
        from agents.greedy import has_greedy

        return has_greedy(game_id)
    if name == "greedy-capture":
        return game_id == "grid"
    return True


def baselines(game_id: str) -> list[str]:
    """The ``BASELINES`` that play ``game_id``, weakest first (every game has ``random``)."""
    return [name for name in BASELINES if available(name, game_id)]


def pool_names(text: str, game_id: str) -> list[str]:
    """``"random,greedy"`` -> ["random", "greedy"]: agents that need no checkpoint and play ``game_id``."""
    names = [x.strip() for x in text.split(",")]
    bad = [n for n in names if n not in AGENT_NAMES or n == "ppo"]
    if bad:
        allowed = ", ".join(a for a in AGENT_NAMES if a != "ppo")
        raise ValueError(f"--pool takes agent names from {allowed}, got {text!r}")
    missing = [n for n in names if not available(n, game_id)]
    if missing:
        raise ValueError(
            f"--pool: {', '.join(missing)} does not play {game_id!r} (it has: {', '.join(baselines(game_id))})"
        )
    return names


@dataclasses.dataclass(frozen=True)
class TrainingAgents:
    """The agent-side settings of a training run, checked against its game (``training_agents``)."""

    pool: str  # the fixed opponents, comma-separated, without blanks
    eval_opponent: str  # the baseline the evaluations play
    prior_size: int  # the floats the prior appends to each observation (``agents.prior.prior_size``)
    dropped: tuple[str, ...] = ()  # the preset's opponents the game lacks, as "pool random,greedy -> random"


def training_agents(
    game_id: str,
    num_actions: int,
    settings: Mapping[str, str],
    preset: Collection[str] = (),
) -> TrainingAgents:
    """Every agent a training run of ``game_id`` names, checked in one place: network, prior, pool, evaluation.

    ``settings`` holds the run's ``policy``, ``net``, ``prior``, ``pool`` and ``eval_opponent``; an opponent named in
    ``preset`` (from the training preset) that the game lacks is dropped (``dropped`` says which), a user's is an error.
    """
    from agents.nets import check_policy, parse_net
    from agents.prior import check_prior, prior_size

    pool, opponent, dropped = settings["pool"], settings["eval_opponent"], []
    if "pool" in preset:
        kept = [n for n in pool.split(",") if available(n, game_id)]
        if kept != pool.split(","):
            dropped.append(f"pool {pool} -> {','.join(kept) or 'random'}")
            pool = ",".join(kept) or "random"
    if "eval_opponent" in preset and not available(opponent, game_id):
        dropped.append(f"evaluation opponent {opponent} -> {baselines(game_id)[-1]}")
        opponent = baselines(game_id)[-1]
    check_policy(settings["policy"], game_id)
    parse_net(settings["net"])
    # the prior, checked against the game once for the run, and the floats its prior's floats adds to each sample
    floats = prior_size(check_prior(settings["prior"], game_id), num_actions)
    names = pool_names(pool, game_id)  # "random, greedy" as "random,greedy"
    if opponent not in baselines(game_id):
        raise ValueError(f"the evaluation opponent must be one of {', '.join(baselines(game_id))}, got {opponent!r}")
    return TrainingAgents(",".join(names), opponent, floats, tuple(dropped))


def agent_names(game_id: str) -> tuple[str, ...]:
    """The names ``make`` knows (for the ``jericho_env.agents`` plugin hook); ``make`` says if one refuses a game."""
    return AGENT_NAMES


def playable_names(game_id: str) -> list[str]:
    """The names that play ``game_id`` with no argument (the plugin hook the web page lists by name).

    The checkpoint players only where the zoo ships their network for the game.
    """
    from agents.pretrained import CHECKPOINT_AGENTS, zoo, zoo_network_unfit

    shipped = zoo().agent_names(game_id)

    def playable(n: str) -> bool:
        if n in ADAPTERS:
            return False
        if n in CHECKPOINT_AGENTS:
            return n in shipped
        if n in PLAYS_NETWORK_OF:  # without a path: the zoo's network of another agent, where it fits
            fits = PLAYS_NETWORK_OF[n] in shipped and available(n, game_id)
            return fits and zoo_network_unfit(game_id) is None
        return available(n, game_id)

    return [n for n in AGENT_NAMES if playable(n)]


def make_batch_policy(name: str, game_id: str, seed: int | None = None, **kwargs: Any) -> Any:
    """The agent ``name`` as a batch policy (``agents.batch.make_batch_policy``), for the engine's plugin hook.

    ``SelfPlayVector(game, n, opponents="greedy")`` reaches it through ``jericho_env.agent_plugins``.
    """
    batch = importlib.import_module("agents.batch")  # by name, as make does: agents.batch imports this package
    return batch.make_batch_policy(name, game_id, seed=seed, **kwargs)


def agent_options(name: str, game_id: str) -> dict[str, Any] | None:
    """The options ``name`` plays ``game_id`` with only, or None for any (the plugin hook the web page reads).

    A checkpoint player without a path plays the shipped network, trained with the options on its card.
    """
    from agents.pretrained import CHECKPOINT_AGENTS, zoo

    name = PLAYS_NETWORK_OF.get(name, name)
    if name not in CHECKPOINT_AGENTS:
        return None
    entry = zoo().entry(name, game_id)
    return None if entry is None else dict(entry.card.get("options") or {})


def make(name: str, game_id: str, **kwargs: Any) -> BaseAgent:
    """The agent ``name`` for ``game_id``; unknown names raise ``ValueError`` listing the known ones.

    ``kwargs``: the agent's own arguments (``seed``, ``path``) and the game's options.
    """
    from jericho_env.registry import rules_class

    rules_class(game_id)  # unknown game ids fail here with the list of known ones
    if name not in _AGENTS:  # your own code, or another provider's agent: the engine's plugins find it
        if not is_target(name) and _other_provider(name, game_id) is None:
            raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(AGENT_NAMES)}; {YOUR_OWN}")
        from jericho_env.agent_plugins import make_agent

        made: Any = make_agent(name, game_id, **kwargs)  # an agent of the protocol, not always a BaseAgent
        return made
    module, attr = _AGENTS[name]
    factory = getattr(importlib.import_module(module), attr)
    agent: BaseAgent = factory(game_id, **kwargs)
    return agent


YOUR_OWN = "your own agent: LABEL=pkg.module:attr or LABEL=path/to/file.py:attr (docs/your-agent.md)"


def _other_provider(name: str, game_id: str | None) -> Any | None:
    """The installed agent provider other than this package that offers ``name`` (``jericho_env.agent_plugins``)."""
    from jericho_env.agent_plugins import providers

    for provider in providers().values():
        if getattr(provider, "make", None) is make:
            continue  # this module, installed as the provider "agents"
        if game_id is None:
            return None
        if name in provider.agent_names(game_id):
            return provider
    return None


def split_specs(text: str) -> list[str]:
    """Comma-separated agent specs, each keeping its own comma-separated settings: ``"greedy,ismcts=300,rollout=greedy,
    mine=f.py:C,k=1"`` -> ``["greedy", "ismcts=300,rollout=greedy", "mine=f.py:C,k=1"]``. A piece starts a spec where
    it names an agent (after a ``LABEL:`` too) or user code (``LABEL=TARGET``); any other piece is a setting of the
    spec before it."""
    out: list[str] = []
    for piece in filter(None, (p.strip() for p in text.split(","))):
        head, _, rest = piece.partition("=")
        if not out or head.split(":")[-1] in _AGENTS or is_target(rest):
            out.append(piece)
        else:
            out[-1] += "," + piece
    return out


def parse_spec(spec: str, game_id: str | None = None) -> tuple[str, str, dict[str, Any]]:
    """Split an agent spec from the command line into (label, name, kwargs).

    ``"random"`` -> ("random", "random", {}); ``"ppo=runs/x/model.zip"`` -> ("ppo", "ppo", {"path": ...}); ``"ppo"``
    alone plays the shipped network. ``LABEL:SPEC`` (``"mine:ppo=a.zip"``) labels an agent. ``"ismcts=300,rollout=
    greedy"``: search settings (``parse_budget``); ``"exit-search=path=a.zip,simulations=16"`` and the adapters'
    ``"sb3=path=model.zip,algo=DQN"``: settings (``parse_settings``). ``"LABEL=pkg.module:attr,key=value"``: your own
    code, as ``(LABEL, TARGET, kwargs)``. With ``game_id``, other installed providers' names are taken too.
    """
    user = split_user_spec(spec, frozenset(AGENT_NAMES))
    if user is not None:
        return user
    label, given = None, spec
    if ":" in spec.split("=", 1)[0]:
        label, spec = spec.split(":", 1)
    name, _, arg = spec.partition("=")
    if name not in _AGENTS:
        other = _other_provider(name, game_id)
        if other is not None:
            parse = getattr(other, "parse_spec", None)
            if callable(parse):
                theirs: tuple[str, str, dict[str, Any]] = parse(spec)
                return (label or theirs[0], theirs[1], theirs[2])
            if arg:
                raise ValueError(f"agent {name!r} takes no argument (got {spec!r})")
            return label or name, name, {}
        if is_target(given.split(",", 1)[0]):  # "mine:LowestCard": code without a label
            raise ValueError(f"{given!r} names code without a label: write LABEL={given}, e.g. mine={given}")
        raise ValueError(
            f"unknown agent {name!r} in {given!r}; known agents: {', '.join(AGENT_NAMES)} "
            f"(ppo takes ppo=PATH, ismcts ismcts=BUDGET); {YOUR_OWN}"
        )
    kwargs: dict[str, Any] = {}
    if name == "ismcts":
        return label or name, name, parse_budget(arg)
    if arg:
        from agents.pretrained import CHECKPOINT_AGENTS

        if name not in CHECKPOINT_AGENTS and name not in SETTINGS:
            raise ValueError(
                f"agent {name!r} takes no argument (got {spec!r}); only {'=PATH, '.join(CHECKPOINT_AGENTS)}=PATH, "
                f"{'=PATH, '.join(SETTINGS)}=PATH and ismcts=BUDGET do"
            )
        if name in SETTINGS and "=" in arg:  # exit-search=path=RUN/final.zip,search=rollouts,simulations=16
            return label or name, name, parse_settings(arg, name)
        kwargs["path"] = arg
    return label or name, name, kwargs  # ppo alone: the shipped network, or make's error saying none is


# top: search=rollouts' count of the network's most probable actions rolled out
EXIT_SEARCH_SETTINGS = {
    "path": str, "search": str, "simulations": int, "c_puct": float, "temperature": float, "top": int,
}  # fmt: skip
# the agents that take comma-separated key=value settings after "=", and those settings
SEARCH_SETTINGS: dict[str, dict[str, type]] = {
    "exit-search": EXIT_SEARCH_SETTINGS,
    "dmc-search": {**EXIT_SEARCH_SETTINGS, "prior_temperature": float},
}
SEARCH_AGENTS: tuple[str, ...] = tuple(SEARCH_SETTINGS)


def parse_bool(text: str) -> bool:
    """``true`` / ``false`` (any case) as a bool; ``ValueError`` otherwise."""
    if text.lower() not in ("true", "false"):
        raise ValueError(text)
    return text.lower() == "true"


# the adapters' settings (agents.adapters), written as the search agents' are
ADAPTER_SETTINGS: dict[str, dict[str, Any]] = {
    "sb3": {"path": str, "algo": str, "deterministic": parse_bool},
    "torch": {"path": str, "deterministic": parse_bool},
    "rllib": {"path": str, "module": str, "deterministic": parse_bool},
}
SETTINGS: dict[str, dict[str, Any]] = {**SEARCH_SETTINGS, **ADAPTER_SETTINGS}


def parse_settings(text: str, name: str = "exit-search") -> dict[str, Any]:
    """The comma-separated ``key=value`` settings of ``name`` (``SETTINGS``: the search agents, the adapters)."""
    settings = SETTINGS[name]
    kwargs: dict[str, Any] = {}
    for item in text.split(","):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or key not in settings:
            raise ValueError(
                f"{name}: {item!r} is not a setting; give {name}=PATH, or comma-separated key=value "
                f"settings from {', '.join(settings)} ({name}=path=a.zip,search=rollouts)"
            )
        kind = settings[key]
        try:
            kwargs[key] = kind(value.strip())
        except ValueError:
            what = "true or false" if kind is parse_bool else kind.__name__
            raise ValueError(f"{name}: {key} takes {what}, got {value!r}") from None
    return kwargs


_BUDGET_KEYS = {
    "prior": str,
    "rollout_depth": int,
    "simulations": int,
    "time_limit": float,
    "rollout": str,
    "uct_c": float,
    "backend": str,
    "seed": int,
    "engine": str,
}


def parse_budget(text: str) -> dict[str, Any]:
    """The keyword arguments of an ``ismcts=...`` spec: ``300`` (simulations), ``0.5s`` (seconds), ``key=value``.

    Items are comma-separated, e.g. ``"300,rollout=greedy"`` or ``"0.5s,uct_c=1.0"``; keys are
    ``simulations``, ``time_limit``, ``rollout`` (random, greedy), ``uct_c``, ``backend`` (jericho,
    openspiel), ``seed``, ``engine`` (auto, python, compiled). An empty text gives the game's defaults.
    """
    out: dict[str, Any] = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, sep, value = item.partition("=")
        try:
            if not sep and item.endswith("s"):
                out["time_limit"] = float(item[:-1])
            elif not sep:
                out["simulations"] = int(item)
            elif key in _BUDGET_KEYS:
                out[key] = _BUDGET_KEYS[key](value)
            else:
                raise ValueError(f"unknown key {key!r}")
        except ValueError as e:
            raise ValueError(
                f"bad ismcts setting {item!r} ({e}): write ismcts=N (simulations per move), ismcts=Xs (seconds "
                f"per move) and/or key=value with keys {', '.join(_BUDGET_KEYS)}, comma-separated, "
                "e.g. ismcts=300,rollout=greedy"
            ) from None
    return out
