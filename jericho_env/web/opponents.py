"""The agents the page offers, from the agent plugins (``jericho_env.agent_plugins``), read once per server.

Every name an installed provider offers for a game is known, in provider order, then the built-in
``random``. The page lists by name those that play with no argument (``playable``: the provider's
``playable_names`` hook, so ``ppo`` and ``exit`` where the package ships a trained network for the game);
a checkpoint file is offered through the checkpoints found under the runs folder instead
(``jericho_env.web.checkpoints``). So a provider that adds agents (pretrained ones from a model zoo,
say) adds them to the page's lists with no change here.

Some agents play only some options of a game: a shipped network plays the options it was trained
with (its card in the model zoo says which). A provider says so through the optional hook
``agent_options(name, game_id)``: the options ``name`` plays ``game_id`` with, as a mapping, or
``None`` when it plays any (``requirements`` here, completed with the game's defaults). The page
then offers such an agent only for those options (the others greyed out, with the reason), and a
start that asks for it anyway is refused in the player's words (``refusal``). A provider without the
hook has every agent offered for every option; a refusal from its ``make`` is still shown beside
Start, worded by the server (``jericho_env.web.app``).

The providers are read when the server first needs them, not on every request: reading the
installed entry points takes tens of milliseconds, and a game's start asks once per seat; what the
hook says is kept per agent and game for the server's life as well.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from jericho_env.agent_plugins import BUILTIN_RANDOM, PlayingAgent, UniformRandomAgent, providers
from jericho_env.core.rules import JerichoError, OptionError
from jericho_env.registry import make_rules, rules_class


class Opponents:
    """Agent names per game and the agents themselves, from providers read once (``providers()`` by default)."""

    def __init__(self, read: Callable[[], Mapping[str, Any]] = providers) -> None:
        self._read = read
        self._providers: Mapping[str, Any] | None = None
        self._lock = threading.Lock()
        self._requirements: dict[tuple[str, str], dict[str, Any] | None] = {}

    def providers(self) -> Mapping[str, Any]:
        """The providers by name, read on first use."""
        with self._lock:
            if self._providers is None:
                self._providers = dict(self._read())
            return self._providers

    def names(self, game_id: str) -> list[str]:
        """Every agent name the providers offer for ``game_id`` (first provider first), then ``random``."""
        rules_class(game_id)
        out: list[str] = []
        for provider in self.providers().values():
            out += [n for n in provider.agent_names(game_id) if n not in out]
        return out if BUILTIN_RANDOM in out else [*out, BUILTIN_RANDOM]

    def playable(self, game_id: str, checkpoint_agent: str) -> list[str]:
        """The names of ``names`` that play ``game_id`` with no argument (the page's named agents).

        A provider's ``playable_names(game_id)`` says which of its names do; for a provider without that
        hook, every name but ``checkpoint_agent`` (the player of checkpoint files, which needs one).
        """
        out: list[str] = []
        for provider in self.providers().values():
            hook = getattr(provider, "playable_names", None)
            names = hook(game_id) if callable(hook) else provider.agent_names(game_id)
            out += [n for n in names if n not in out and (callable(hook) or n != checkpoint_agent)]
        return [n for n in self.names(game_id) if n in out or n == BUILTIN_RANDOM]

    def requirements(self, name: str, game_id: str) -> dict[str, Any] | None:
        """The options ``name`` plays ``game_id`` with only (every option, defaults filled in), or ``None``: any.

        From the ``agent_options`` hook of the first provider offering ``name`` (see the module); a
        provider without the hook, or a hook that fails or names options the game refuses, means any.
        """
        key = (name, game_id)
        with self._lock:
            if key in self._requirements:
                return self._requirements[key]
        found: dict[str, Any] | None = None
        for provider in self.providers().values():
            if name in provider.agent_names(game_id):
                hook = getattr(provider, "agent_options", None)
                try:
                    given = hook(name, game_id) if callable(hook) else None
                    found = None if given is None else dict(make_rules(game_id, **dict(given)).options)
                except (JerichoError, ValueError, TypeError, OSError):  # a broken card: offered, and make says why
                    found = None
                break
        with self._lock:
            self._requirements[key] = found
        return found

    def refusal(self, name: str, game_id: str, options: Mapping[str, Any]) -> dict[str, Any] | None:
        """The options of ``options`` that ``name`` cannot play (``{option: the value it needs}``), or ``None``."""
        needs = self.requirements(name, game_id)
        if needs is None:
            return None
        differ = {k: v for k, v in needs.items() if options.get(k) != v or type(options.get(k)) is not type(v)}
        return differ or None

    def make(self, name: str, game_id: str, **kwargs: Any) -> PlayingAgent:
        """The agent ``name`` from the first provider offering it (``random``: built in if none does)."""
        for provider in self.providers().values():
            if name in provider.agent_names(game_id):
                agent: PlayingAgent = provider.make(name, game_id, **kwargs)
                return agent
        if name == BUILTIN_RANDOM:
            return UniformRandomAgent(seed=kwargs.get("seed"))
        raise OptionError(
            f"unknown agent {name!r} for game {game_id!r}; known agents: {', '.join(self.names(game_id))} "
            f"(providers installed: {', '.join(self.providers()) or 'none'})"
        )
