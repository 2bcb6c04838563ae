"""Agents for the engine's own front ends (``python -m jericho_env.play``, a web server), found as plugins.

Why this module exists: the engine package ``jericho_env`` never imports ``agents`` or
``experiments`` (layers flow one way, ``experiments -> agents -> jericho_env``, and an
import-linter contract checks it, imports inside functions included). Yet the terminal game needs
opponents. So agent packages announce themselves instead of being imported by name: a
distribution declares an entry point in the group ``jericho_env.agents`` whose object (usually a
module) provides

* ``make(name, game_id, **kwargs)``: an agent with ``act(observation) -> int`` and ``reset(seed)``;
* ``agent_names(game_id)``: the names it can build for that game;
* optionally ``parse_spec(spec)``: ``(label, name, kwargs)`` from a command-line spec such as
  ``"ppo=runs/x/model.zip"`` (without it, a spec is a bare name, optionally ``LABEL:NAME``);
* optionally ``playable_names(game_id)``: the names among those that play with no argument, the ones
  a front end may offer by name alone (this project's: the baselines, ``ismcts``, and ``ppo``/``exit``
  where a trained network is shipped for the game). Without it, every name of ``agent_names`` is taken
  to play without an argument.
* optionally ``agent_options(name, game_id)``: the options ``name`` plays ``game_id`` with only (a
  mapping, such as the options a shipped network was trained with), or ``None`` when it plays any; the
  web page offers such an agent only for those options.
* optionally ``make_batch_policy(name, game_id, seed=None, **kwargs)``: the agent as a batch policy
  ``(observations, masks) -> actions`` for the batched self-play games (``SelfPlayVector``). Without
  it, ``make_batch_policy`` here asks the agent of ``make`` row by row.

Agent names are accepted wherever the engine takes opponents (``jericho_env.single_agent``,
``gymnasium.make("jericho/<game>-v<version>", opponents=...)``, ``SelfPlayVector`` and
``SelfPlayVecEnv``, the terminal game): ``opponents="greedy"`` is resolved here.

This project's ``agents`` package is such a provider (``pyproject.toml``)::

    [project.entry-points."jericho_env.agents"]
    agents = "agents.registry"

so after ``pip install -e .`` the terminal game offers every agent of ``agents.make``. With no
provider installed, ``random`` still works: ``UniformRandomAgent``, built in. Asking for any other
name then raises an error naming what is installed.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

import numpy as np

from jericho_env.core.rules import OptionError
from jericho_env.core.validate import check_optional_seed
from jericho_env.registry import GAME_IDS, rules_class
from jericho_env.user_agents import Agent, batch_policy_of, is_target, make_user_agent, split_user_spec

GROUP = "jericho_env.agents"
BUILTIN_RANDOM = "random"


# what a front end needs of an agent: the one agent protocol (``jericho_env.user_agents.Agent``)
PlayingAgent = Agent


class UniformRandomAgent:
    """The built-in player: uniform over the legal actions, from its own seeded generator."""

    name = BUILTIN_RANDOM

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(check_optional_seed(seed))

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the generator (``None`` draws fresh entropy); a seed is an int in 0..2**63-1."""
        self.rng = np.random.default_rng(check_optional_seed(seed))

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """A uniformly random legal action; ``ValueError`` if the mask has none."""
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 0:
            raise ValueError("random: the action mask has no legal action (is it this agent's turn?)")
        return int(legal[int(self.rng.integers(len(legal)))])


_registered: dict[str, Any] = {}


def register_provider(name: str, provider: Any) -> None:
    """Add an agent provider in this process (as an entry point would); ``name`` labels it in messages."""
    for attr in ("make", "agent_names"):
        if not callable(getattr(provider, attr, None)):
            raise TypeError(f"agent provider {name!r} must have a callable {attr}(...)")
    _registered[name] = provider


def providers() -> dict[str, Any]:
    """Every installed agent provider by name: the entry points of ``GROUP``, then ``register_provider``'s."""
    found: dict[str, Any] = {}
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        try:
            found[ep.name] = ep.load()
        except Exception as e:  # a broken plugin is named, whatever it raised
            raise OptionError(
                f"agent provider {ep.name!r} ({ep.value}) of group {GROUP!r} failed to load: {e!r}"
            ) from e
    found.update(_registered)
    return found


def agent_names(game_id: str) -> list[str]:
    """The agent names available for ``game_id``: each provider's, in provider order, then the built-in random."""
    rules_class(game_id)  # unknown game ids fail here, naming the known ones
    names: list[str] = []
    for provider in providers().values():
        names += [n for n in provider.agent_names(game_id) if n not in names]
    if BUILTIN_RANDOM not in names:
        names.append(BUILTIN_RANDOM)
    return names


def _provider_of(name: str, game_id: str) -> Any | None:
    """The first provider offering ``name`` for ``game_id``, or ``None``."""
    for provider in providers().values():
        if name in provider.agent_names(game_id):
            return provider
    return None


def _unknown(name: str, game_id: str) -> OptionError:
    installed = providers()
    if not installed:
        return OptionError(
            f"unknown agent {name!r}: no agent provider is installed (entry-point group {GROUP!r}; "
            f"'pip install -e .' in a checkout installs this project's agents), so only the built-in "
            f"{BUILTIN_RANDOM!r} is available"
        )
    return OptionError(
        f"unknown agent {name!r} for game {game_id!r}; known agents: {', '.join(agent_names(game_id))} "
        f"(providers installed: {', '.join(installed)})"
    )


def make_agent(name: str, game_id: str, **kwargs: Any) -> PlayingAgent:
    """The agent ``name`` for ``game_id`` from the first provider offering it (``random``: built in if none does).

    ``kwargs`` are the agent's own arguments (``seed``, ``path``...) and the game's options, passed on to
    the provider; the built-in random player uses only ``seed``.
    """
    rules_class(game_id)
    if is_target(name):  # user code named by its import path or file (jericho_env.user_agents)
        user: PlayingAgent = make_user_agent(name, game_id, **kwargs)
        return user
    provider = _provider_of(name, game_id)
    if provider is not None:
        agent: PlayingAgent = provider.make(name, game_id, **kwargs)
        return agent
    if name == BUILTIN_RANDOM:
        return UniformRandomAgent(seed=kwargs.get("seed"))
    raise _unknown(name, game_id)


def make_batch_policy(spec: str, game_id: str, seed: int | None = None, **options: Any) -> Any:
    """The batch policy of the agent ``spec`` names (``"greedy"``, ``"ppo=PATH"``...) for ``game_id``.

    Through the provider's own ``make_batch_policy`` where it has one (this project's is compiled for
    the baselines), else the agent of ``make_agent`` through ``jericho_env.user_agents.batch_policy_of``.
    ``options`` are the game's options.
    """
    _, name, kwargs = parse_spec(spec, game_id)
    provider = None if is_target(name) else _provider_of(name, game_id)
    build = getattr(provider, "make_batch_policy", None)
    if callable(build):
        return build(name, game_id, seed=seed, **kwargs, **options)
    return batch_policy_of(make_agent(name, game_id, seed=seed, **kwargs, **options))


def choose_action(agent: Any, env: Any, agent_id: str) -> Any:
    """``agent``'s move for ``agent_id`` in the AEC ``env``, handing it its information view first if it wants one.

    Agents that search (``ismcts``) define ``observe_view(view)``: they are first handed
    ``env.information_view(agent_id)``, a full state redealt from what that seat has seen, since an
    observation alone does not carry the public history a search needs. ``agent`` may also be a
    plain callable ``observation -> action``. The choice is returned as the agent gave it, so that
    ``env.step`` names a wrong type or range rather than a conversion here hiding it.
    """
    hook = getattr(agent, "observe_view", None)
    if callable(hook):
        hook(env.information_view(agent_id))
    act = agent.act if hasattr(agent, "act") else agent
    return act(env.observe(agent_id))


def parse_spec(spec: str, game_id: str) -> tuple[str, str, dict[str, Any]]:
    """Split a command-line agent spec into (label, name, kwargs), by the provider of its name.

    ``"random"`` -> ``("random", "random", {})``; ``"LABEL:NAME"`` labels an agent; arguments such as
    ``"ppo=PATH"`` are understood by the provider's own ``parse_spec``. ``"LABEL=pkg.module:attr,k=v"`` and
    ``"LABEL=path/file.py:attr"`` name user code (``jericho_env.user_agents``): ``(LABEL, TARGET, kwargs)``.
    """
    user = split_user_spec(spec, frozenset(agent_names(game_id)))
    if user is not None:
        return user
    head = spec.split("=", 1)[0]
    label, name = head.split(":", 1) if ":" in head else ("", head)
    provider = _provider_of(name, game_id)
    parse: Callable[[str], tuple[str, str, dict[str, Any]]] | None = getattr(provider, "parse_spec", None)
    if parse is not None:
        return parse(spec)
    if provider is None and name != BUILTIN_RANDOM:
        raise _unknown(name, game_id)
    if "=" in spec:
        raise OptionError(f"agent {name!r} takes no argument (got {spec!r})")
    return label or name, name, {}


class NamedAgents:
    """A provider of agents named on a command line (``LABEL=SPEC``), for a front end's lists.

    Each spec is your own code (``mine=path/to/file.py:Agent``, ``mine=pkg.module:Agent,depth=3``) or an
    installed agent with its arguments under a label (``strong:ismcts=1000``). Its label is offered by
    name in every game (a label may not be an installed agent's name); ``make`` builds it with the spec's
    arguments and the ones the front end passes (``seed``, the game's options). Register it with
    ``register_provider``.
    """

    def __init__(self, specs: list[str]) -> None:
        self.specs: dict[str, tuple[str, dict[str, Any]]] = {}
        installed = frozenset(agent_names(GAME_IDS[0]))
        for spec in specs:
            parsed = split_user_spec(spec, installed)
            if parsed is None:
                label, name, kwargs = parse_spec(spec, GAME_IDS[0])  # installed names are the same in every game
            else:
                label, name, kwargs = parsed
            if label in self.specs or (parsed is None and label in installed):
                raise OptionError(f"{spec!r}: the label {label!r} is taken; give the agent another (LABEL:{spec})")
            self.specs[label] = (name, kwargs)

    def agent_names(self, game_id: str) -> list[str]:
        """The labels, in the order given."""
        return list(self.specs)

    def playable_names(self, game_id: str) -> list[str]:
        """Every label plays with no argument: its spec holds them."""
        return list(self.specs)

    def make(self, name: str, game_id: str, **kwargs: Any) -> Agent:
        """The agent of the spec labelled ``name``."""
        target, own = self.specs[name]
        return make_agent(target, game_id, **own, **kwargs)
