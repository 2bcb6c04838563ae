"""The rules protocol every game implements, its metadata, its options and its errors.

A rules engine is plain Python (numpy for observations only): no gymnasium, pettingzoo or torch.
State is a mutable object with a cheap ``clone``; ``apply`` changes it in place, as OpenSpiel's
``State.apply_action`` does, because copying a state per step costs more than the step itself.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from jericho_env.core.layout import ObsLayout

S = TypeVar("S")


class JerichoError(ValueError):
    """Base class of every error this package raises for bad input."""


class IllegalActionError(JerichoError):
    """An action that is not legal in the current state; the state is left unchanged."""


class ActionTypeError(TypeError, JerichoError):
    """An action that is not an integer (or is out of the action space's range)."""


class OptionError(JerichoError):
    """An unknown game id, an unknown option or an option value out of range."""


class StateFormatError(JerichoError):
    """A state dictionary that ``from_dict`` cannot rebuild."""


@dataclasses.dataclass(frozen=True)
class Option:
    """One option of a game: its default, what it means and which values are allowed."""

    name: str
    default: Any
    doc: str
    allowed: str
    check: Callable[[Any], bool]

    def validate(self, game_id: str, value: Any) -> Any:
        """Return ``value`` if allowed, else raise ``OptionError`` naming what is allowed."""
        ok = False
        try:
            ok = bool(self.check(value))
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise OptionError(
                f"option {self.name}={value!r} is not allowed for game {game_id!r}: "
                f"{self.name} must be {self.allowed} (default {self.default!r})"
            )
        return value


def int_option(name: str, default: int, doc: str, allowed: str, ok: Callable[[int], bool]) -> Option:
    """An integer option (bools are rejected) whose value must satisfy ``ok``."""

    def check(v: Any) -> bool:
        return isinstance(v, (int, np.integer)) and not isinstance(v, bool) and ok(int(v))

    return Option(name, default, doc, allowed, check)


def choice_option(name: str, default: Any, doc: str, choices: Sequence[Any]) -> Option:
    """An option whose value must be one of ``choices``."""
    allowed = "one of " + ", ".join(repr(c) for c in choices)
    return Option(name, default, doc, allowed, lambda v: any(v == c and type(v) is type(c) for c in choices))


#: The option every game offers to choose its observation version (``obs_version=1``); see ``obs_version_option``.
OBS_VERSION_OPTION = "obs_version"


def obs_version_option(versions: Sequence[int], doc: str) -> Option:
    """The ``obs_version`` option: which observation layout a game writes (0, the first, by default).

    Checkpoints record the version (``Rules.observation_version``) and refuse observations of another.
    """
    return choice_option(OBS_VERSION_OPTION, 0, doc, tuple(versions))


def parse_option_text(text: str) -> tuple[str, Any]:
    """``"KEY=VALUE"`` from a command line: VALUE as int, bool (true/false) or text."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise OptionError(f"options are written KEY=VALUE, got {text!r}")
    if raw.lower() in ("true", "false"):
        return key, raw.lower() == "true"
    try:
        return key, int(raw)
    except ValueError:
        return key, raw


def resolve_options(game_id: str, specs: Sequence[Option], given: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``given`` over the defaults of ``specs``; raise ``OptionError`` on unknown names."""
    known = {o.name: o for o in specs}
    unknown = sorted(set(given) - set(known))
    if unknown:
        allowed = ", ".join(f"{o.name} ({o.allowed}, default {o.default!r})" for o in specs) or "none"
        raise OptionError(f"unknown option(s) {', '.join(unknown)} for game {game_id!r}; allowed options: {allowed}")
    out = {o.name: o.default for o in specs}
    for name, value in given.items():
        out[name] = known[name].validate(game_id, value)
        if isinstance(value, np.integer):
            out[name] = int(value)
    return out


@dataclasses.dataclass(frozen=True)
class GameInfo:
    """Metadata of a game under given options, declared as data (OpenSpiel's ``GameInfo``)."""

    game_id: str
    version: int
    num_players: int
    num_actions: int
    max_game_length: int
    observation_size: int
    min_return: float = -1.0
    max_return: float = 1.0
    zero_sum: bool = True
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)


class Rules(ABC, Generic[S]):
    """The rules protocol: a game's state machine, observation and text, free of any RL API.

    Subclasses set ``game_id``, ``version`` (the env version, bumped when play changes),
    ``observation_version`` and ``OPTIONS`` and implement the abstract methods.
    ``current_player`` is the seat to act (0-based), or ``-1`` once the game is over. Games implement
    ``apply_unchecked``; the public ``apply`` checks legality first (``is_legal``, which games make
    cheap) and raises ``IllegalActionError``. The constructor validates the options, then calls
    ``build_parts`` (a game's board, deck and action
    encoding), ``build_layout`` and ``build_info``, in that order.
    """

    game_id: ClassVar[str]
    version: ClassVar[int]
    # Bumped when the observation's layout or the meaning of a field changes (not when only the rules
    # do): saved policies record it and refuse to play observations of another version. A game that
    # keeps older versions selectable has the option ``obs_version``, and the instance's value is then
    # the one chosen (set by the constructor).
    observation_version: int = 0
    OPTIONS: ClassVar[tuple[Option, ...]] = ()
    # The game's compiled batched rules as "module:Class" (a ``jericho_env.core.batched.BatchedGame``), or None:
    # ``jericho_env.make_batched`` then runs these Python rules under the batched interface.
    batched: ClassVar[str | None] = None

    def __init__(self, **options: Any) -> None:
        self.options: dict[str, Any] = resolve_options(self.game_id, self.OPTIONS, options)
        if OBS_VERSION_OPTION in self.options:
            self.observation_version = int(self.options[OBS_VERSION_OPTION])
        self.build_parts()
        self.layout: ObsLayout = self.build_layout()
        self.info: GameInfo = self.build_info()

    # ----------------------------------------------------------------- metadata
    def build_parts(self) -> None:
        """Build what the layout and metadata depend on (board, deck, action encoding) from ``self.options``."""

    @abstractmethod
    def build_layout(self) -> ObsLayout:
        """The observation layout under ``self.options``."""

    @abstractmethod
    def build_info(self) -> GameInfo:
        """The game's metadata under ``self.options``."""

    # ----------------------------------------------------------------- state machine
    @abstractmethod
    def initial_state(self, rng: np.random.Generator) -> S:
        """A new game, every chance event drawn from ``rng``.

        ``rng`` must be a ``np.random.Generator`` (``np.random.default_rng(seed)``): a game starts with
        ``jericho_env.core.validate.require_generator(rng)``, an ``OptionError`` for anything else (a seed,
        a legacy ``RandomState``). ``determinize`` checks its ``rng`` the same way.
        """

    @abstractmethod
    def current_player(self, state: S) -> int:
        """The seat to act, or -1 when the game is over."""

    @abstractmethod
    def legal_actions(self, state: S) -> list[int]:
        """The legal actions of the seat to act, ascending; empty once the game is over."""

    def apply(self, state: S, action: int) -> None:
        """Play ``action`` for the seat to act, changing ``state`` in place; refuse an illegal one.

        ``ActionTypeError`` if ``action`` is not an integer, ``IllegalActionError`` (saying why) if it
        is not legal now, out of the action space included; ``state`` is then unchanged.
        """
        self.apply_unchecked(state, self.check_action(state, action))

    @abstractmethod
    def apply_unchecked(self, state: S, action: int) -> None:
        """Play ``action`` for the seat to act without checking that it is legal.

        The fast path for callers that already know the action is legal: the envs (after their own
        mask check) and search code that plays moves taken from ``legal_actions``. An illegal action
        here may leave ``state`` impossible (cards lost, counts below zero); use ``apply`` otherwise.
        """

    def is_legal(self, state: S, action: int) -> bool:
        """Whether the int ``action`` is legal now; games override it with a check cheaper than the full list."""
        return action in self.legal_actions(state)

    def check_action(self, state: S, action: Any) -> int:
        """``action`` as an int if it is legal now; ``ActionTypeError`` / ``IllegalActionError`` saying why not."""
        if type(action) is int and self.is_legal(state, action):  # the common case, checked first
            return action
        if isinstance(action, np.ndarray) and action.shape == ():
            action = action.item()
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            raise ActionTypeError(
                f"{self.game_id}: an action is an int in [0, {self.info.num_actions}), "
                f"got {action!r} of type {type(action).__name__}"
            )
        a = int(action)
        if self.is_legal(state, a):
            return a
        raise IllegalActionError(
            f"{self.game_id}: cannot play {a} ({self.describe_action(a)}): {self.why_illegal(state, a)}; "
            "the state is unchanged"
        )

    @abstractmethod
    def is_terminal(self, state: S) -> bool:
        """Whether the game is over."""

    @abstractmethod
    def returns(self, state: S) -> list[float]:
        """Each seat's return: final outcome once terminal, zeros before."""

    @abstractmethod
    def action_to_str(self, state: S, action: int) -> str:
        """A short, human-readable and typeable name of ``action`` in ``state``."""

    def public_action_to_str(self, state: S, action: int, observer: int | None = None) -> str:
        """The text of ``action``, played by the seat to move in ``state``, as seat ``observer`` sees it.

        What the rules show that seat of the move: ``action_to_str`` when it sees the whole move (its
        own moves, moves made face up, and ``observer=None`` for an omniscient view), else a phrase
        that names only the visible part ("a save face down"). Narrations and replays shown to one
        seat use it; games with hidden moves override it. ``state`` is the state before the move.
        """
        return self.action_to_str(state, action)

    @abstractmethod
    def clone(self, state: S) -> S:
        """An independent copy of ``state``."""

    @abstractmethod
    def determinize(self, state: S, seat: int, rng: np.random.Generator) -> S:
        """A copy of ``state`` with every card ``seat`` cannot see redealt, consistent with everything it has seen.

        Consistent means a state the game can reach with the same public history: the seat's observation
        and mask are unchanged, and what the others' forced moves revealed still holds (each game's
        docstring and ``seeds/<game>.md`` list what is enforced). The result must depend only on what the
        seat has seen and on ``rng``, never on where the hidden cards really lie.
        """

    @abstractmethod
    def observe(self, state: S, seat: int) -> np.ndarray:
        """The observation of ``seat``: a flat float32 array laid out by ``self.layout``."""

    def observe_into(self, out: np.ndarray, states: Sequence[S], seats: Sequence[int]) -> None:
        """Row ``j`` of ``out`` (float32, ``len(states)`` rows): ``observe(states[j], seats[j])``.

        The batched envs encode a round's observations with it; a game may override it with a batched
        encoding that writes the same floats (walls converts every row in one call).
        """
        for j, (state, seat) in enumerate(zip(states, seats, strict=True)):
            out[j] = self.observe(state, seat)

    @abstractmethod
    def render_text(self, state: S, seat: int | None) -> str:
        """The table as text from ``seat``'s point of view (``None``: every card face up)."""

    @abstractmethod
    def to_dict(self, state: S) -> dict[str, Any]:
        """A JSON-able dictionary from which ``from_dict`` rebuilds ``state`` exactly."""

    @abstractmethod
    def from_dict(self, data: Mapping[str, Any], strict: bool = True) -> S:
        """Rebuild a state from ``to_dict``'s output; ``StateFormatError`` naming the first broken condition.

        Refused: malformed dictionaries (missing or unknown keys, wrong types or ranges), cards lost or
        added, and with ``strict`` (the default) any state that play cannot reach, including one where
        the seat to move has no legal action and the game is not over. ``strict=False`` skips the
        reachability checks, for positions made by hand (tests, studies); the engine's guarantees
        (a legal action always exists, and so on) may then fail.
        """

    def require_playable(self, state: S) -> S:
        """``state`` if the game is over or the seat to move has a legal action; else ``StateFormatError``."""
        if not self.is_terminal(state) and not self.legal_actions(state):
            raise StateFormatError(
                f"{self.game_id} state: seat {self.current_player(state)} is to move but has no legal action, "
                "and the game is not over"
            )
        return state

    @abstractmethod
    def card_zones(self, state: S) -> dict[str, list[int]]:
        """Every physical card of the game by zone (hands, piles, table...), for conservation tests."""

    @abstractmethod
    def all_cards(self) -> list[int]:
        """The multiset of every physical card of the game, sorted."""

    # ----------------------------------------------------------------- shared helpers
    def legal_mask(self, state: S) -> np.ndarray:
        """The legal actions as an int8 mask of shape ``(num_actions,)``."""
        mask = np.zeros(self.info.num_actions, dtype=np.int8)
        legal = self.legal_actions(state)
        if legal:
            mask[legal] = 1
        return mask

    def why_illegal(self, state: S, action: int) -> str | None:
        """Why ``action`` is illegal now (``None`` if it is legal). Games may say more."""
        if self.is_terminal(state):
            return "the game is over"
        if not 0 <= action < self.info.num_actions:
            return f"actions are integers in [0, {self.info.num_actions})"
        legal = self.legal_actions(state)
        if action in legal:
            return None
        return self.illegal_reason(state, action) or "it is not among the legal actions: " + ", ".join(
            self.action_to_str(state, a) for a in legal
        )

    def illegal_reason(self, state: S, action: int) -> str | None:
        """A game-specific sentence on why a (known illegal) ``action`` is illegal."""
        return None

    def describe_action(self, action: int) -> str:
        """A state-free name of ``action``, used when the action is out of context."""
        return f"action {action}"

    def str_to_action(self, state: S, text: str) -> int:
        """The legal action whose ``action_to_str`` is ``text`` (case-insensitive)."""
        wanted = text.strip().lower()
        for a in self.legal_actions(state):
            if self.action_to_str(state, a).lower() == wanted:
                return a
        raise IllegalActionError(f"{text!r} is not a legal action here")

    def child(self, state: S, action: int) -> S:
        """A new state: ``state`` after ``action``; ``state`` itself is untouched."""
        new = self.clone(state)
        self.apply(new, action)
        return new

    def render_image(self, state: S, seat: int | None) -> np.ndarray:
        """An RGB image (H, W, 3) uint8 of the table from ``seat``'s view; games draw their cards."""
        from jericho_env.core.image import text_image

        return text_image(self.render_text(state, seat))

    def potential(self, state: S, seat: int) -> float:
        """A heuristic worth of ``state`` for ``seat`` in [-1, 1] (0 at the start), for reward shaping.

        Games may define one (grid: the points lead); 0 everywhere by default. The batched self-play env
        pays its change as a shaping reward (``shaping``), which leaves every episode's return unchanged.
        """
        return 0.0

    def observation_dict(self, state: S, seat: int) -> dict[str, np.ndarray]:
        """The observation of ``seat`` split into its named fields (views, not copies)."""
        return self.layout.split(self.observe(state, seat))
