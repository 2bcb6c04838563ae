"""Your own agent, wherever agents play: the agent protocol, and agents named by where their code lives.

The protocol (``docs/your-agent.md`` shows it at work) is duck-typed; only ``act`` is required:

* ``act(observation) -> int``: a legal action for the PettingZoo observation dict
  ``{"observation": float32 array (D,), "action_mask": int8 array (A,)}`` of the seat to move;
* ``reset(seed=None)``, optional: called before each game (tournaments pass a seed per game or batch of
  games, so an agent that draws random numbers plays the same games again for the same seed);
* ``act_batch(observations, masks) -> actions``, optional: the same choice for many games at once,
  ``observations`` float32 ``(B, D)``, ``masks`` bool ``(B, A)``, one action per row. Batched tournaments
  and the batched self-play games call it once per round instead of ``act`` once per row;
* ``name``, optional: how the agent is called in messages.

An agent keeps no memory of a game between its moves other than its random generator: the batched
tournament interleaves many games through one agent (``--sequential`` plays one game at a time, with a
``reset`` before each, for an agent that must remember).

A command line names an agent of your own by where its code lives, ``LABEL=TARGET[,key=value...]``:

* ``TARGET`` is ``pkg.module:attr`` (a module that Python can import, e.g. on ``PYTHONPATH``) or
  ``path/to/file.py:attr`` (a file, loaded by its path);
* ``attr`` is a class or factory called as ``attr(game_id, **kwargs)`` with the spec's ``key=value``
  arguments (values read as int, float, true/false or text), plus ``seed=`` and the game's options
  (``num_players=`` in walls...) where its signature takes them (one that takes no argument at all is
  called bare); or an agent object itself;
* ``LABEL`` names it in tables and must not be the name of an installed agent.

Worker processes (a tournament's pool, Ray) import the code again by that target, so they need no pickled
object. ``split_user_spec`` reads such a spec, ``make_user_agent`` builds the agent, ``batch_policy_of``
turns any agent into a batch policy ``(observations, masks) -> actions``.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from jericho_env.core.rules import JerichoError
from jericho_env.registry import rules_class

# module.path:attr or some/file.py:attr (attr may be dotted: Class.factory)
_TARGET = re.compile(
    r"^(?P<where>[^,=]+\.py|[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*):(?P<attr>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)$"
)
SPEC_FORMS = "LABEL=pkg.module:attr or LABEL=path/to/file.py:attr, then ,key=value arguments if any"


@runtime_checkable
class Agent(Protocol):
    """Anything that picks a legal action from a PettingZoo observation dict (``reset``, ``act_batch`` optional)."""

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """A legal action: ``observation["action_mask"][action] == 1``."""
        ...


class AgentCodeError(JerichoError):
    """User code named as an agent that cannot be loaded or built, or that does not act like an agent."""


def is_target(text: str) -> bool:
    """Whether ``text`` names code: ``pkg.module:attr`` or ``path/to/file.py:attr``."""
    return bool(_TARGET.match(text))


def parse_value(text: str) -> Any:
    """A spec's ``key=value`` value: int, float, true/false, else the text itself."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text.strip()


def split_user_spec(
    spec: str, reserved: set[str] | frozenset[str] = frozenset()
) -> tuple[str, str, dict[str, Any]] | None:
    """``(label, target, kwargs)`` of a spec naming user code (``LABEL=TARGET[,key=value...]``), else ``None``.

    ``reserved``: names of installed agents, which a label may not take (``greedy=mine:X`` is refused).
    """
    label, eq, rest = spec.partition("=")
    first, _, tail = rest.partition(",")
    if not eq or not is_target(first.strip()):
        return None
    label = label.strip()
    if not label or ":" in label:
        raise AgentCodeError(f"{spec!r}: give your agent a label before '=': {SPEC_FORMS}")
    if label in reserved:
        raise AgentCodeError(
            f"{spec!r}: {label!r} is the name of an installed agent; label your own agent with another name "
            f"(e.g. mine={rest})"
        )
    kwargs: dict[str, Any] = {}
    for item in filter(None, (t.strip() for t in tail.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip().isidentifier():
            raise AgentCodeError(f"{spec!r}: {item!r} is not a key=value argument ({SPEC_FORMS})")
        kwargs[key.strip()] = parse_value(value)
    return label, first.strip(), kwargs


def load_target(target: str) -> Any:
    """The object ``target`` names (``pkg.module:attr`` or ``path/to/file.py:attr``), else ``AgentCodeError``."""
    match = _TARGET.match(target)
    if not match:
        raise AgentCodeError(f"{target!r} does not name code: write pkg.module:attr or path/to/file.py:attr")
    where, attr = match["where"], match["attr"]
    module = _load_file(where, target) if where.endswith(".py") else _import_module(where, target)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            found = ", ".join(n for n in dir(module) if not n.startswith("_"))[:300]
            raise AgentCodeError(f"{target!r}: {where} has no attribute {attr!r} (it has: {found or 'nothing public'})")
        obj = getattr(obj, part)
    return obj


def _import_module(name: str, target: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        raise AgentCodeError(
            f"{target!r}: no module named {e.name!r} (is its folder on PYTHONPATH? a file is named "
            "path/to/file.py:attr)"
        ) from None
    except Exception as e:  # the user's module failed while importing: say where, one line
        raise AgentCodeError(f"{target!r}: importing {name} raised {type(e).__name__}: {e}") from e


def _load_file(where: str, target: str) -> Any:
    path = Path(where).expanduser().resolve()
    if not path.is_file():
        raise AgentCodeError(f"{target!r}: no file {str(path)!r}")
    # one module per file path, kept in sys.modules so that loading it again (another agent, a worker) reuses it
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    stem = re.sub(r"\W", "_", path.stem)
    name = f"jericho_user_{stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise AgentCodeError(f"{target!r}: {str(path)!r} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[name]
        raise AgentCodeError(f"{target!r}: running {path.name} raised {type(e).__name__}: {e}") from e
    return module


def make_user_agent(target: str, game_id: str, **kwargs: Any) -> Any:
    """The agent of the code ``target`` names, for ``game_id``.

    ``kwargs`` holds the spec's own arguments, ``seed`` and the game's options: a class or factory is
    called as ``attr(game_id, **kwargs)`` with its own arguments and whichever of ``seed`` and the game's
    options its signature takes; an object with ``act`` is the agent itself. ``AgentCodeError`` names what
    went wrong: code that does not load, arguments it does not take, a result without ``act``.
    """
    offered_names = {"seed", *(o.name for o in rules_class(game_id).OPTIONS)}
    obj = load_target(target)
    if callable(obj) and (inspect.isclass(obj) or not callable(getattr(obj, "act", None))):
        own = {k: v for k, v in kwargs.items() if k not in offered_names}
        offered = {k: v for k, v in kwargs.items() if k in offered_names}
        accepted = _accepted(obj, offered)
        unknown = sorted(set(own) - set(_accepted(obj, own)))
        if unknown:
            raise AgentCodeError(
                f"{target!r} takes no argument(s) {', '.join(unknown)} (its signature: {_signature(obj)})"
            )
        first = (game_id,) if _takes_positional(obj) else ()  # a class without arguments is called bare
        try:
            agent = obj(*first, **own, **accepted)
        except JerichoError:
            raise
        except Exception as e:
            raise AgentCodeError(
                f"{target!r}({game_id!r}, ...) raised {type(e).__name__}: {e} (called with "
                f"{', '.join(sorted({**own, **accepted})) or 'the game id alone'})"
            ) from e
    else:
        extra = sorted(k for k in kwargs if k not in offered_names)
        if extra:
            raise AgentCodeError(
                f"{target!r} is an agent object, not a class or factory: it takes no {', '.join(extra)}"
            )
        agent = obj
    return check_agent(agent, target)


def _signature(obj: Any) -> str:
    try:
        return f"{getattr(obj, '__name__', 'it')}{inspect.signature(obj)}"
    except (TypeError, ValueError):
        return "unknown"


def _takes_positional(obj: Any) -> bool:
    """Whether ``obj`` can be called with one positional argument (the game id)."""
    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in params)


def _accepted(obj: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The items of ``kwargs`` that ``obj``'s signature takes by name (all of them if it takes ``**kwargs``)."""
    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: pass everything
        return dict(kwargs)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return dict(kwargs)
    names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return {k: v for k, v in kwargs.items() if k in names}


def check_agent(agent: Any, where: str) -> Any:
    """``agent`` if it has a callable ``act``; else ``AgentCodeError`` naming ``where`` it came from."""
    if not callable(getattr(agent, "act", None)):
        raise AgentCodeError(
            f"{where} gave {type(agent).__name__} {_short(agent)}, which has no act(observation) method: an agent "
            "needs act(observation) -> int (reset(seed) and act_batch(observations, masks) are optional; "
            "docs/your-agent.md)"
        )
    return agent


def _short(obj: Any) -> str:
    text = repr(obj)
    return text if len(text) <= 60 else text[:57] + "..."


def agent_label(agent: Any) -> str:
    """How an agent object is called in messages and tables: its ``name``, else its type's name."""
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) and name else type(agent).__name__


class RowByRowPolicy:
    """An agent as a batch policy ``(observations, masks) -> actions``, asking ``act`` once per row.

    A searching agent (``observe_view``) is handed each row's information view first: the caller hands
    them with ``observe_views`` before each call (``uses_views``).
    """

    uses_observation = True

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name = agent_label(agent)
        self.uses_views = callable(getattr(agent, "observe_view", None))
        self._views: list[Any] | None = None

    def observe_views(self, views: list[Any]) -> None:
        """Keep the rows' information views for the next call."""
        self._views = list(views)

    def __call__(self, observations: np.ndarray | None, masks: np.ndarray) -> np.ndarray:
        views, self._views = self._views, None
        if self.uses_views and (views is None or len(views) != len(masks)):
            raise ValueError(f"{self.name}: needs one information view per row (observe_views) before each call")
        actions = np.zeros(len(masks), dtype=np.int64)
        m8 = np.asarray(masks, dtype=np.int8)
        for i in range(len(masks)):
            if views is not None:
                self.agent.observe_view(views[i])
            obs = None if observations is None else observations[i]
            actions[i] = self.agent.act({"observation": obs, "action_mask": m8[i]})
        return actions


class ActBatchPolicy:
    """An agent with ``act_batch(observations, masks)`` as a batch policy: one call per batch of rows."""

    uses_observation = True

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name = agent_label(agent)

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.asarray(self.agent.act_batch(observations, np.asarray(masks, dtype=bool)))


def batch_policy_of(agent: Any) -> Any:
    """``agent`` as a batch policy: its ``act_batch`` where it has one, else its ``act`` row by row."""
    if callable(getattr(agent, "act_batch", None)):
        return ActBatchPolicy(agent)
    return RowByRowPolicy(check_agent(agent, f"agent {agent_label(agent)!r}"))


def reset_agent(agent: Any, seed: int | None) -> None:
    """Call ``agent.reset(seed)`` where the agent has a ``reset`` (the protocol's optional part)."""
    reset = getattr(agent, "reset", None)
    if callable(reset):
        reset(seed)


__all__ = [
    "ActBatchPolicy",
    "Agent",
    "AgentCodeError",
    "RowByRowPolicy",
    "agent_label",
    "batch_policy_of",
    "check_agent",
    "is_target",
    "load_target",
    "make_user_agent",
    "reset_agent",
    "split_user_spec",
]
