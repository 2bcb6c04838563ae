"""A Gymnasium view of one seat: the opponents are stepped inside ``step`` until the learner moves.

Made for sb3-contrib's MaskablePPO: ``action_masks()`` gives the learner's legal actions, and the
reward is the learner's own return, paid when the game ends. Opponents are agents (anything with
``act(observation_dict) -> int``, optionally ``reset(seed)``), plain callables, or agent names
(``"random"``, ``"greedy"``, ``"ppo=PATH"``...: any spec ``jericho_env.agent_plugins`` resolves,
built for the view's game and options); a list of them is a pool from which each other seat's
opponent is drawn per episode.

An action the learner may not play ends the episode as a loss by default
(``illegal_action="lose"``: reward ``min_return``, ``info["illegal_action"]`` says why), as
PettingZoo's ``TerminateIllegalWrapper`` does, so that learners without masks and the standard
checkers (Gymnasium's and SB3's ``check_env``, which step random actions) work;
``illegal_action="raise"`` raises ``IllegalActionError`` instead and leaves the game unchanged.
The first game a view ends that way warns once (``IllegalMoveLossWarning``, naming
``action_masks()`` and sb3-contrib's ``use_masking=True``): an unmasked policy otherwise scores
about ``min_return`` with no word of why.

This module does not import ``agents`` (the layers flow one way): agent names reach the ``agents``
package through its plugin entry point (``jericho_env.agent_plugins``), or pass agent objects.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from jericho_env.agent_plugins import UniformRandomAgent, choose_action, make_agent, parse_spec
from jericho_env.core.rules import ActionTypeError, IllegalActionError, OptionError
from jericho_env.core.validate import check_optional_seed
from jericho_env.envs.aec import JerichoEnv

Policy = Any  # an object with act(obs_dict) -> int, or a callable(obs_dict) -> int


class IllegalMoveLossWarning(UserWarning):
    """The learner's illegal move ended a game as a loss (``illegal_action="lose"``): is the policy masked?"""


def illegal_move_message(game_id: str, reason: str, min_return: float) -> str:
    """The one-time warning's text: what happened, and the masked ways out."""
    return (
        f"jericho-env {game_id}: the learner's move was illegal, so the game ends as a loss "
        f"(reward {min_return:g}; illegal_action='lose'): {reason} A policy that ignores the action mask "
        "loses most games this way. Mask its choices with env.action_masks() (sb3-contrib: MaskablePPO, "
        "and use_masking=True in predict() and evaluate_policy(), the default), or build the view with "
        "illegal_action='raise' to stop at the first illegal move; info['illegal_action'] gives each reason. "
        "Shown once per view."
    )


def _as_policy(p: Policy, game_id: str, options: dict[str, Any]) -> Policy:
    if p is None or p == "random":
        return UniformRandomAgent()  # the built-in opponent, seeded by reset
    if isinstance(p, str):
        _, name, kwargs = parse_spec(p, game_id)  # unknown names: OptionError listing the installed agents
        return make_agent(name, game_id, **kwargs, **options)
    if hasattr(p, "act") or callable(p):
        return p
    raise OptionError(
        f"opponent {p!r} is not usable: pass an agent name ('random', 'greedy', ...; "
        "jericho_env.agent_plugins.agent_names(game_id) lists them), an agent with act(observation) "
        "(e.g. agents.make('greedy', game_id)), a callable, or a list of these"
    )


class SingleAgentEnv(gym.Env[np.ndarray, np.int64]):
    """One learner seat of a jericho-env game as a ``gymnasium.Env`` with ``action_masks()``."""

    metadata = {"render_modes": ["ansi", "human", "rgb_array"]}

    def __init__(
        self,
        game_id: str,
        opponents: Policy | Sequence[Policy] = "random",
        seat: int | str = "random",
        render_mode: str | None = None,
        illegal_action: str = "lose",
        **options: Any,
    ) -> None:
        if illegal_action not in ("lose", "raise"):
            raise OptionError(f"illegal_action={illegal_action!r} is not allowed: use 'lose' or 'raise'")
        self.illegal_action = illegal_action
        self._lost_by_illegal = False
        self._warned_illegal = False
        self.aec = JerichoEnv(game_id, render_mode=render_mode, **options)
        self.rules = self.aec.rules
        self.render_mode = render_mode
        n = self.rules.info.num_players
        if not (
            seat == "random" or (isinstance(seat, (int, np.integer)) and not isinstance(seat, bool) and 0 <= seat < n)
        ):
            raise OptionError(f"seat={seat!r} is not allowed: use 'random' or an int in 0..{n - 1}")
        self.seat_choice = seat
        pool = list(opponents) if isinstance(opponents, (list, tuple)) else [opponents]
        if not pool:
            raise OptionError("opponents must not be empty")
        self._options = dict(self.rules.options)  # agent names are built for this game and these options
        self.pool: list[Policy] = [self._policy(p) for p in pool]
        self._fixed = len(self.pool)  # opponents given at construction; add_opponent appends after them
        self.observation_space = gym.spaces.Box(0.0, 1.0, (self.rules.info.observation_size,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(self.rules.info.num_actions)
        self.seat = 0
        self.opponents: dict[int, Policy] = {}

    # ------------------------------------------------------------------ pool management
    def add_opponent(self, policy: Policy, max_added: int | None = None) -> None:
        """Add ``policy`` to the pool; beyond ``max_added`` added ones, the oldest added is dropped."""
        self.pool.append(self._policy(policy))
        if max_added is not None and len(self.pool) - self._fixed > max_added:
            del self.pool[self._fixed]

    def set_opponents(self, policies: Sequence[Policy]) -> None:
        """Replace the pool (all of it counts as given at construction)."""
        self.pool = [self._policy(p) for p in policies]
        self._fixed = len(self.pool)

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=check_optional_seed(seed))  # an int in 0..2**63-1 or None, checked before any change
        self._lost_by_illegal = False
        while True:
            n = self.rules.info.num_players
            self.seat = int(self.np_random.integers(n)) if self.seat_choice == "random" else int(self.seat_choice)
            self.opponents = {}
            for s in range(n):
                if s != self.seat:
                    opp = self.pool[int(self.np_random.integers(len(self.pool)))]
                    opp_seed = int(
                        self.np_random.integers(2**62)
                    )  # drawn for every seat (the batched view draws it too)
                    if hasattr(opp, "reset"):
                        opp.reset(seed=opp_seed)
                    self.opponents[s] = opp
            self.aec.reset(seed=int(self.np_random.integers(2**62)))
            self._advance_opponents()
            if not self.rules.is_terminal(self.aec.state):
                break  # a game the opponents end before the learner moves is dealt again
        return self._obs(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._done():
            raise IllegalActionError("the game is over: call reset()")
        try:
            self.aec.step(action)
        except (IllegalActionError, TypeError) as err:
            if self.illegal_action == "raise":
                raise
            self._lost_by_illegal = True
            if not self._warned_illegal:
                self._warned_illegal = True
                reason = str(err).split(" The env is unchanged")[0]  # the AEC env's retry advice does not apply here
                message = illegal_move_message(self.aec.game_id, reason, self.rules.info.min_return)
                warnings.warn(message, IllegalMoveLossWarning, stacklevel=2)
            info = {**self._info(), "illegal_action": str(err)}
            return self._obs(), float(self.rules.info.min_return), True, False, info
        self._advance_opponents()
        done = self.rules.is_terminal(self.aec.state)
        reward = float(self.rules.returns(self.aec.state)[self.seat]) if done else 0.0
        return self._obs(), reward, done, False, self._info()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as booleans (all False once the game is over)."""
        if self._done():
            return np.zeros(self.rules.info.num_actions, dtype=bool)
        return self.aec.current_mask().astype(bool)  # the env's per-move cache: _info and SB3 both ask

    def render(self) -> Any:
        return self.aec.render()

    # ------------------------------------------------------------------ internals
    def _policy(self, p: Policy) -> Policy:
        return _as_policy(p, self.aec.game_id, self._options)

    def _done(self) -> bool:
        if self.aec.state is None:
            raise gym.error.ResetNeeded("no game yet: call reset() before step() or action_masks()")
        return self._lost_by_illegal or self.rules.is_terminal(self.aec.state)

    def _advance_opponents(self) -> None:
        rules, aec = self.rules, self.aec
        while not rules.is_terminal(aec.state):
            p = rules.current_player(aec.state)
            if p == self.seat:
                return
            opp = self.opponents[p]
            choice = choose_action(opp, aec, aec.possible_agents[p])  # a searching agent gets its view first
            try:
                aec.step(choice)
            except (ActionTypeError, IllegalActionError) as e:  # the opponent's fault, not the learner's
                who = getattr(opp, "name", None) or getattr(opp, "__name__", None) or type(opp).__name__
                raise type(e)(f"opponent {who!r} in seat {p} returned {choice!r}: {e}") from None

    def _obs(self) -> np.ndarray:
        return self.rules.observe(self.aec.state, self.seat)

    def _info(self) -> dict[str, Any]:
        return {"seat": self.seat, "action_mask": self.action_masks()}


class ActionMasks(gym.Wrapper[np.ndarray, np.int64, np.ndarray, np.int64], gym.utils.RecordConstructorArgs):
    """``action_masks()`` on the outside of ``gymnasium.make("jericho/<game>-v<version>")``'s wrappers.

    Gymnasium 1.x wrappers forward no attribute they do not define, so ``OrderEnforcing`` and
    ``PassiveEnvChecker`` would hide the view's ``action_masks``. The registration adds this wrapper last
    (``additional_wrappers``); it asks the env below with ``get_wrapper_attr``, as sb3-contrib's
    ``get_action_masks`` does, so a wrapper added on top still answers ``get_wrapper_attr("action_masks")``.
    """

    def __init__(self, env: gym.Env[np.ndarray, np.int64]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as booleans (all False once the game is over)."""
        masks: np.ndarray = self.env.get_wrapper_attr("action_masks")()
        return masks
