"""One PettingZoo AEC env for every game, driven through the rules protocol.

Illegal actions (``illegal_action=``, an env option beside the game's own):

* ``"raise"`` (default), a departure from PettingZoo's classic envs: an illegal action raises
  ``IllegalActionError`` (a ``ValueError``) naming the agent, the action and why, and leaves the env
  unchanged so the agent may retry. Research code that feeds masked actions never meets it; code
  with a bug learns about it at once.
* ``"lose"``: an action inside the action space that is not legal ends the game at once, as
  PettingZoo's ``TerminateIllegalWrapper`` does: the offender gets the game's ``min_return`` (-1),
  the other seats share the opposite equally (zero-sum), every agent is terminated and the
  offender's ``infos`` entry says why under ``"illegal_action"``. For libraries that probe an env
  with unmasked random actions (RLlib's env checker, SuperSuit's tests). Malformed actions (not an
  int, or outside ``Discrete(num_actions)``) still raise ``ActionTypeError``.

When ``"raise"`` meets an illegal action stepped from inside such a library (its module is on the
call stack: ``ray.rllib``, ``supersuit``), the error's message names ``illegal_action="lose"``, since
the library's own error (RLlib: "does not abide to the new gymnasium-style API") does not.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from jericho_env.core.rules import ActionTypeError, IllegalActionError, OptionError, Rules
from jericho_env.core.validate import check_optional_seed, require_keys, require_mapping
from jericho_env.registry import make_rules

RENDER_MODES = ("human", "ansi", "rgb_array")
ILLEGAL_ACTION_MODES = ("raise", "lose")
_RETRY = " The env is unchanged; choose again."
SAVED_KEYS = ("game_id", "options", "state")  # save_state's dict
# libraries that step unmasked random actions through an env (module prefix -> what to call it)
UNMASKED_PROBERS = {"ray.rllib": "RLlib (its env checker)", "supersuit": "SuperSuit"}


def unmasked_prober_hint() -> str:
    """Advice naming ``illegal_action="lose"`` if a library of ``UNMASKED_PROBERS`` is on the stack, else ``""``."""
    frame = sys._getframe(1)
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        for prefix, who in UNMASKED_PROBERS.items():
            if module == prefix or module.startswith(prefix + "."):
                return (
                    f" {who} steps unmasked random actions: build the env with "
                    "jericho_env.make(game_id, illegal_action='lose') (an illegal move then ends the game as a "
                    "loss instead of raising; jericho_env.wrappers.rllib.env_creator does this), see docs/ecosystem.md."
                )
        frame = frame.f_back  # type: ignore[assignment]
    return ""


class JerichoEnv(AECEnv):
    """A jericho-env game as a PettingZoo AEC env (use ``jericho_env.make`` to build one)."""

    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "name": "jericho", "is_parallelizable": False}

    def __init__(
        self, game_id: str, render_mode: str | None = None, illegal_action: str = "raise", **options: Any
    ) -> None:
        super().__init__()
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise OptionError(
                f"illegal_action={illegal_action!r} is not allowed: use one of {', '.join(ILLEGAL_ACTION_MODES)}"
            )
        self.illegal_action = illegal_action
        self._lost_by_illegal = False  # set when illegal_action="lose" ended the game
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise OptionError(
                f"render_mode={render_mode!r} is not supported; use None or one of {', '.join(RENDER_MODES)}"
            )
        self.rules: Rules[Any] = make_rules(game_id, **options)
        info = self.rules.info
        self.game_id = game_id
        self.metadata = {**self.metadata, "name": f"jericho/{game_id}-v{info.version}"}
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(info.num_players)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        n_act = info.num_actions
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (info.observation_size,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (n_act,), dtype=np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = {a: spaces.Discrete(n_act) for a in self.possible_agents}
        self._zero_mask = np.zeros(n_act, dtype=np.int8)
        self._mask: np.ndarray | None = None  # legal mask of the agent to move, computed once per move
        self._rng: np.random.Generator | None = None
        self._view_rng: np.random.Generator | None = None  # information views only, never the deal
        self.state: Any = None
        self.num_moves = 0

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The space of ``observe(agent)``: a ``Dict`` of ``observation`` and ``action_mask``, the same for every agent.

        ``observation`` is ``Box(0, 1, (size,), float32)`` with ``size`` = ``rules.info.observation_size``
        (the game page's observation layout table names each part; ``rules.layout.split`` cuts a vector
        into them); ``action_mask`` is ``Box(0, 1, (num_actions,), int8)``.
        """
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """``Discrete(num_actions)``, the same for every agent; the mask says which actions are legal now.

        The game page's action encoding table says what each number does; ``action_to_str`` names one
        in the current position.
        """
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ episode
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game; ``seed`` (an int in 0..2**63-1) re-seeds the env's generator, ``None`` continues it."""
        seed = check_optional_seed(seed)  # before anything changes
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
            # a stream of its own, so that views never change the deals of a seed
            self._view_rng = np.random.default_rng(None if seed is None else np.random.SeedSequence([seed, 1]))
        self.state = self.rules.initial_state(self._rng)
        self._mask = None
        self._lost_by_illegal = False
        self.num_moves = 0
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.rules.current_player(self.state)]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s view of the table now: ``{"observation": float32 vector, "action_mask": int8 vector}``.

        The observation holds only what ``agent``'s seat may see (its own cards, the public table,
        counts of what others hold), from its seat: own parts first, then the other seats in turn
        order. The mask has a 1 for each legal action when ``agent`` is the agent to move and the game
        is not over, and is all zeros otherwise. Both are fresh arrays the caller may keep or change.
        """
        seat = self._seat[agent]
        obs = self.rules.observe(self.state, seat)
        if self.agents and agent == self.agent_selection and not self.terminations[agent]:
            mask = self.current_mask().copy()
        else:
            mask = self._zero_mask.copy()
        return {"observation": obs, "action_mask": mask}

    def information_view(self, agent: str) -> Any:
        """A full state as ``agent`` knows it, for search agents: every card it cannot see freshly redealt.

        It is ``rules.determinize(state, seat, rng)`` with a generator of the env's own: a function of
        what ``agent`` has seen (its cards, the public history) and of that generator only, so an
        agent handed it learns nothing it could not see (``tests/test_search.py`` swaps hidden cards
        and checks that views and choices stay the same). Front ends hand it to agents that define
        ``observe_view`` (``jericho_env.agent_plugins.choose_action``).
        """
        if self.state is None:
            raise OptionError("information_view: call reset() first")
        if self._view_rng is None:
            self._view_rng = np.random.default_rng()
        return self.rules.determinize(self.state, self._seat[agent], self._view_rng)

    def current_mask(self) -> np.ndarray:
        """The mover's legal mask, cached until the next step (observe and step both need it); do not modify."""
        if self._mask is None:
            self._mask = self.rules.legal_mask(self.state)
        return self._mask

    def step(self, action: Any) -> None:
        """Play ``action`` (an int of the action space) for ``agent_selection``, the agent to move.

        Rewards, terminations and the next agent to move are updated as PettingZoo's AEC API says;
        rewards come at the end of the game (the game page's rewards row). Once the game is over,
        step each agent with ``None`` (as ``agent_iter`` does) to retire it. An illegal action raises
        ``IllegalActionError`` naming the agent, the action and why, the env unchanged (or, with
        ``illegal_action="lose"``, ends the game as a loss); a malformed one (not an int, or outside
        the space) raises ``ActionTypeError``.
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        try:
            a = self._check_action(agent, action)
        except IllegalActionError as err:
            if self.illegal_action == "raise":
                raise
            self._lose_by_illegal(agent, str(err).removesuffix(_RETRY))
            return
        self._cumulative_rewards[agent] = 0.0
        self.rules.apply_unchecked(self.state, a)  # _check_action checked it against the mask
        self._mask = None
        self.num_moves += 1
        if self.rules.is_terminal(self.state):
            returns = self.rules.returns(self.state)
            for i, name in enumerate(self.possible_agents):
                self.rewards[name] = float(returns[i])
                self.terminations[name] = True
        else:
            self.agent_selection = self.possible_agents[self.rules.current_player(self.state)]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _lose_by_illegal(self, agent: str, why: str) -> None:
        """``illegal_action="lose"``: end the game, ``agent`` at ``min_return``, the others sharing the rest."""
        self._lost_by_illegal = True
        self._cumulative_rewards[agent] = 0.0
        lost = float(self.rules.info.min_return)
        others = len(self.agents) - 1
        for name in self.agents:
            self.rewards[name] = lost if name == agent else -lost / others
            self.terminations[name] = True
        self.infos[agent] = {**self.infos[agent], "illegal_action": why}
        self._accumulate_rewards()

    def _check_action(self, agent: str, action: Any) -> int:
        """The action as an int; ``ActionTypeError`` / ``IllegalActionError`` saying why not."""
        n = self.rules.info.num_actions
        if isinstance(action, np.ndarray) and action.shape == ():
            action = action.item()
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            raise ActionTypeError(
                f"{agent}: action must be an int in [0, {n}), got {action!r} of type {type(action).__name__}"
            )
        a = int(action)
        if not 0 <= a < n:
            raise ActionTypeError(f"{agent}: action {a} is outside the action space [0, {n})")
        if self.current_mask()[a]:
            return a
        reason = self.rules.why_illegal(self.state, a) or "it is not legal now"
        raise IllegalActionError(
            f"{agent} cannot play {a} ({self.rules.describe_action(a)}): {reason}.{_RETRY}{unmasked_prober_hint()}"
        )

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """``(observation, reward, termination, truncation, info)`` of the agent to move (``agent_selection``).

        The observation is ``observe(agent)`` (``None`` with ``observe=False``), the reward what it has
        earned since it last acted (``_cumulative_rewards``), and the flags and info its entries of
        ``terminations``, ``truncations`` and ``infos``. The loop of every game page calls it first.
        """
        return super().last(observe)

    # ------------------------------------------------------------------ rendering
    def render(self) -> Any:
        """The table from the seat to move: text (``ansi``: returned, ``human``: printed) or an image (``rgb_array``).

        ``rgb_array`` gives an (H, W, 3) uint8 array of a fixed size per game and options (hidden
        cards as backs); text modes show hidden cards as counts. ``None``, with a warning, when the
        env was made without a ``render_mode``.
        """
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() called without a render_mode; pass render_mode= to make().")
            return None
        if self.state is None:
            raise RuntimeError("call reset() before render()")
        seat = self._seat.get(self.agent_selection, 0)
        if self.render_mode == "rgb_array":
            return self.rules.render_image(self.state, seat)
        text = self.rules.render_text(self.state, seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ extras
    def legal_actions(self) -> list[int]:
        """The legal actions of the agent to move (none once an illegal action lost the game)."""
        return [] if self._lost_by_illegal else self.rules.legal_actions(self.state)

    def action_to_str(self, action: int) -> str:
        """The text of ``action`` in the current state."""
        return self.rules.action_to_str(self.state, action)

    def seat_of(self, agent: str) -> int:
        """The seat index of ``agent``."""
        return self._seat[agent]

    def save_state(self) -> dict[str, Any]:
        """The current state as a JSON-able dict of ``SAVED_KEYS`` (``load_state`` rebuilds it)."""
        return {"game_id": self.game_id, "options": dict(self.rules.options), "state": self.rules.to_dict(self.state)}

    def load_state(self, data: dict[str, Any]) -> None:
        """Continue from a dict made by ``save_state`` (same game and options); a refused one leaves the env as it was.

        Every key of ``save_state``'s dict is required (``StateFormatError`` naming a missing one).
        """
        require_keys("saved env", require_mapping("saved env", data, "save_state"), SAVED_KEYS)
        if data["game_id"] != self.game_id or data["options"] != dict(self.rules.options):
            raise OptionError(
                f"state is for {data['game_id']!r} with options {data['options']}, "
                f"this env is {self.game_id!r} with {dict(self.rules.options)}"
            )
        state = self.rules.from_dict(data["state"])
        self.reset()
        self.state = state
        self._mask = None
        if self.rules.is_terminal(self.state):
            for a in self.agents:
                self.terminations[a] = True
        else:
            self.agent_selection = self.possible_agents[self.rules.current_player(self.state)]


class JerichoWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` with direct access to the attributes read every step.

    The base wrapper reaches ``agents``, ``agent_selection``, rewards and flags through
    ``__getattr__``, which costs more per step than some of our games' rules; the same checks
    (nothing before ``reset``) are kept.
    """

    def _inner(self, name: str) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self.env, name)

    agents = property(lambda self: self._inner("agents"))  # type: ignore[assignment]
    agent_selection = property(lambda self: self._inner("agent_selection"))  # type: ignore[assignment]
    rewards = property(lambda self: self._inner("rewards"))  # type: ignore[assignment]
    terminations = property(lambda self: self._inner("terminations"))  # type: ignore[assignment]
    truncations = property(lambda self: self._inner("truncations"))  # type: ignore[assignment]
    infos = property(lambda self: self._inner("infos"))  # type: ignore[assignment]
    _cumulative_rewards = property(lambda self: self._inner("_cumulative_rewards"))  # type: ignore[assignment]

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """``JerichoEnv.last``: the agent to move's observation, reward, flags and info; an error before ``reset``."""
        if not self._has_reset:
            from pettingzoo.utils.env_logger import EnvLogger

            EnvLogger.error_observe_before_reset()
        return self.env.last(observe)


def raw_env(game_id: str, render_mode: str | None = None, illegal_action: str = "raise", **options: Any) -> JerichoEnv:
    """The env of ``game_id`` without wrappers."""
    return JerichoEnv(game_id, render_mode=render_mode, illegal_action=illegal_action, **options)


def make(game_id: str, render_mode: str | None = None, illegal_action: str = "raise", **options: Any) -> AECEnv:
    """The env of ``game_id`` wrapped in (a faster subclass of) PettingZoo's ``OrderEnforcingWrapper``.

    Illegal and malformed actions are handled by the env itself (``illegal_action="raise"``: a clear
    error, the env unchanged; ``"lose"``: the offender loses, see the module docstring), so
    ``TerminateIllegalWrapper`` and ``AssertOutOfBoundsWrapper`` are not used.
    """
    return JerichoWrapper(raw_env(game_id, render_mode=render_mode, illegal_action=illegal_action, **options))
