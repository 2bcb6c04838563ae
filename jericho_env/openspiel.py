"""The games as OpenSpiel (pyspiel) Python games: ``pyspiel.load_game("jericho_castles(ranks=5)")``.

Needs the ``openspiel`` extra (``pip install -e .[openspiel]``); nothing else in the package imports
this module, so the engine works without pyspiel. Importing it registers ``jericho_grid``,
``jericho_walls`` and ``jericho_castles``; each game's options are its game parameters.

Chance: **explicit chance nodes, one per random draw of the deal.** A game starts with the chance
player dealing: each chance node is one uniform choice (``i`` of ``m``) that the rules'
``initial_state`` asks its generator for (a permutation is drawn as Fisher-Yates swaps, one node
each), so the deal has exactly the distribution of ``initial_state`` and every deal can occur.
Why not the alternatives: a single chance node cannot list 52! (grid) or (42!)² (castles) deals,
and one over a few seeds would let algorithms that enumerate chance (CFR, exploitability) solve a
smaller game without saying so; a deal sampled at the start (``SAMPLED_STOCHASTIC``) would need the
game's generator state to be serialized, which OpenSpiel's Python games cannot do
(``pyspiel.random_sim_test`` fails with "GetRNGState unimplemented"). Once dealt, the hidden cards
are handled the way imperfect-information search expects: ``resample_from_infostate(player,
sampler)`` returns a state redealt by the rules' ``determinize`` (seeded from ``sampler``),
consistent with everything ``player`` has seen; ``ISMCTSBot`` uses it.

Observations: the observation tensor and the information-state tensor are both our encoder's
observation of the player (``Rules.observe``; it is not perfect recall: it carries counts, not
the order of past moves). The observation string is the table as text from the player's seat; the
information-state string is perfect recall: a digest chain of every observation the player has had
since the deal, so two states share it only if the player saw the same things at every step.

**Imperfect information, and what refuses or warns.** The games declare
``Information.IMPERFECT_INFORMATION``, but OpenSpiel's Python algorithms do not all read it, so the
bridge answers for them where they touch a state:

* ``MCTSBot`` (and every bot built on it) searches the state it is handed, which holds every
  player's hidden cards: it would play with sight of them. The bridge warns once per game
  (``PerfectInformationSearchWarning``) when ``MCTSBot``'s tree search clones a true state; a state
  of ``resample_from_infostate`` (a determinization, as in perfect-information Monte Carlo) does not
  warn. ``warnings.simplefilter("error", PerfectInformationSearchWarning)`` makes it an error.
* Tabular algorithms that walk the whole tree (``cfr``, ``exploitability``, ``best_response``,
  ``get_all_states``, ``TabularPolicy``, ``expected_game_score``) cannot finish on a deal of shuffled
  decks (``deal_histories`` counts its chance histories). ``new_initial_state`` called from one of
  them raises ``GameTreeTooLargeError`` at once, naming the count.
* ``ISMCTSBot`` is the supported search: ``make_ismcts_bot`` builds one that ``evaluate_bots``
  accepts (the stock bot leaves ``restart_at`` / ``inform_action`` to pyspiel's base class, which
  raises inside ``evaluate_bots``; outside it, ``ISMCTSBot.step(state)`` works as it is), and the
  project's ``ismcts`` agent (``agents.make("ismcts", game)``, ``backend="openspiel"`` for this bot).
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import warnings
from typing import Any, cast

import numpy as np
import pyspiel

from jericho_env.core.rules import Rules
from jericho_env.core.validate import ChanceSource
from jericho_env.registry import GAME_IDS, make_rules, rules_class

PREFIX = "jericho_"
# OpenSpiel's Python modules whose algorithms enumerate every state from the root (they cannot finish here)
TREE_WALKERS = tuple(
    f"open_spiel.python.{m}"
    for m in (
        "algorithms.cfr",
        "algorithms.exploitability",
        "algorithms.best_response",
        "algorithms.get_all_states",
        "algorithms.expected_game_score",
        "policy",
    )
)
_warned_perfect_information: set[str] = set()  # the games whose MCTSBot warning has been shown
_rules_cache: dict[tuple[str, tuple[tuple[str, Any], ...]], Rules[Any]] = {}


def short_name(game_id: str) -> str:
    """The pyspiel name of ``game_id``: ``"jericho_castles"``."""
    return PREFIX + game_id


def _rules(game_id: str, options: tuple[tuple[str, Any], ...]) -> Rules[Any]:
    """One rules engine per (game, options), shared by every state (never copied with them)."""
    key = (game_id, options)
    if key not in _rules_cache:
        _rules_cache[key] = make_rules(game_id, **dict(options))
    return _rules_cache[key]


class PerfectInformationSearchWarning(UserWarning):
    """A perfect-information search (OpenSpiel's ``MCTSBot``) is searching a state that holds hidden cards."""


class GameTreeTooLargeError(ValueError):
    """A tabular OpenSpiel algorithm was started on a game whose tree it cannot enumerate."""


def _mcts_search_code() -> tuple[Any, ...]:
    """The code objects of ``MCTSBot`` that clone the state it searches (empty if OpenSpiel has none)."""
    try:
        from open_spiel.python.algorithms import mcts
    except ImportError:  # pragma: no cover - the bridge needs open_spiel anyway
        return ()
    bot = mcts.MCTSBot
    return tuple(getattr(bot, m).__code__ for m in ("_apply_tree_policy", "mcts_search") if hasattr(bot, m))


_MCTS_CODE = _mcts_search_code()


def perfect_information_message(game_name: str) -> str:
    """The warning's text: what a perfect-information search sees here, and the supported path."""
    return (
        f"{game_name}: OpenSpiel's MCTSBot is searching the true state, which holds every player's hidden "
        "cards (the game is IMPERFECT_INFORMATION; MCTSBot does not check): its moves use information its "
        "seat does not have, so results are not comparable with any fair player. Use an information-set "
        "search: jericho_env.openspiel.make_ismcts_bot(game, simulations) (works in evaluate_bots), "
        "ISMCTSBot.step(state) outside evaluate_bots, or the project's agents.make('ismcts', game_id); "
        "or search a determinization (state.resample_from_infostate(player, sampler)), which does not warn. "
        "See docs/ecosystem.md, OpenSpiel."
    )


def deal_histories(rules: Rules[Any]) -> int:
    """How many chance histories the deal has: the product of the outcome counts of its chance nodes."""
    picks: list[int] = []
    total = 1
    while True:
        try:
            rules.initial_state(cast(Any, _ReplayRng(picks)))
            return total
        except _NeedDrawError as need:
            total *= need.outcomes
            picks.append(0)


def _refuse_tree_walkers(game: JerichoGame) -> None:
    """``GameTreeTooLargeError`` if the caller's caller is a tabular algorithm of ``TREE_WALKERS``."""
    caller = str(sys._getframe(2).f_globals.get("__name__", ""))
    if caller not in TREE_WALKERS:
        return
    histories = deal_histories(game.rules)
    raise GameTreeTooLargeError(
        f"{caller} enumerates every state of the game tree, and {game} cannot be enumerated: its deal alone "
        f"has about 10^{math.log10(histories):.0f} chance histories, each followed by a game of up to "
        f"{game.rules.info.max_game_length} moves. Use a sampling method (outcome_sampling_mccfr or "
        "external_sampling_mccfr for CFR; jericho_env.openspiel.make_ismcts_bot for search) or the project's "
        "ismcts agent; see docs/ecosystem.md, OpenSpiel."
    )


class _Held:
    """A rules state inside a pyspiel state: copied with ``Rules.clone`` when OpenSpiel clones."""

    __slots__ = ("key", "state")

    def __init__(self, key: tuple[str, tuple[tuple[str, Any], ...]], state: Any) -> None:
        self.key, self.state = key, state

    def __deepcopy__(self, memo: dict[int, Any]) -> _Held:
        return _Held(self.key, _rules(*self.key).clone(self.state))

    def __getstate__(self) -> dict[str, Any]:
        return {"key": self.key, "state": self.state}

    def __setstate__(self, data: dict[str, Any]) -> None:
        self.key, self.state = data["key"], data["state"]


def _game_type(game_id: str) -> pyspiel.GameType:
    defaults = {o.name: o.default for o in rules_class(game_id).OPTIONS}
    players = [2, 5] if "num_players" in defaults else [2]  # walls: 2-5 players by its option
    return pyspiel.GameType(
        short_name=short_name(game_id),
        long_name=f"jericho-env {game_id}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=max(players),
        min_num_players=min(players),
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=defaults,
    )


class JerichoGame(pyspiel.Game):
    """A jericho-env game under OpenSpiel's Python-game API; its parameters are the game's options."""

    game_id = ""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        rules = make_rules(self.game_id, **params)  # bad options raise OptionError naming what is allowed
        self.options = tuple(sorted(rules.options.items()))
        self.rules = _rules(self.game_id, self.options)
        info = self.rules.info
        game_info = pyspiel.GameInfo(
            num_distinct_actions=info.num_actions,
            max_chance_outcomes=_max_chance_outcomes(self.rules),
            num_players=info.num_players,
            min_utility=info.min_return,
            max_utility=info.max_return,
            utility_sum=0.0,
            max_game_length=info.max_game_length,
        )
        super().__init__(_game_type(self.game_id), game_info, dict(self.options))

    def new_initial_state(self, *args: Any) -> JerichoState:
        """A new game, at its first chance node; ``GameTreeTooLargeError`` for tabular tree walkers."""
        _refuse_tree_walkers(self)
        return JerichoState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> _Observer:
        """The observer: our observation tensor; text from the seat, or the perfect-recall digest chain."""
        if params:
            raise ValueError(f"observer parameters are not supported; got {params}")
        perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        return _Observer(self.rules, perfect_recall)


class _NeedDrawError(Exception):
    """``initial_state`` asked for a draw that the chance nodes have not made yet."""

    def __init__(self, outcomes: int) -> None:
        super().__init__(outcomes)
        self.outcomes = outcomes


@ChanceSource.register
class _ReplayRng:
    """A stand-in generator for ``initial_state``: each draw is the next chance outcome; ``_NeedDrawError`` after."""

    def __init__(self, picks: list[int]) -> None:
        self.picks, self.at = picks, 0

    def _pick(self, m: int) -> int:
        if self.at < len(self.picks):
            self.at += 1
            return self.picks[self.at - 1]
        raise _NeedDrawError(m)

    def integers(self, low: int, high: int | None = None) -> int:
        """A uniform int in ``[low, high)`` (``[0, low)`` with one argument)."""
        lo, hi = (0, int(low)) if high is None else (int(low), int(high))
        return lo + self._pick(hi - lo)

    def permutation(self, n: int) -> np.ndarray:
        """A uniform permutation of ``range(n)``: Fisher-Yates, one chance outcome per swap."""
        a = list(range(int(n)))
        for i in range(len(a) - 1, 0, -1):
            j = self._pick(i + 1)
            a[i], a[j] = a[j], a[i]
        return np.array(a, dtype=np.int64)


def _max_chance_outcomes(rules: Rules[Any]) -> int:
    """The most outcomes any chance node of the deal has (the largest draw ``initial_state`` asks for)."""
    picks: list[int] = []
    most = 0
    while True:
        try:
            rules.initial_state(cast(Any, _ReplayRng(picks)))
            return most
        except _NeedDrawError as need:
            most = max(most, need.outcomes)
            picks.append(0)


class JerichoState(pyspiel.State):
    """A pyspiel state: the deal's chance outcomes so far, then a rules state (``inner``) and digest chains."""

    def __init__(self, game: JerichoGame) -> None:
        super().__init__(game)
        self._key = (game.game_id, game.options)
        self._held: _Held | None = None
        self._recall: list[str] = []
        self._picks: list[int] = []
        self._outcomes = 0
        self._determinized = False  # True for resample_from_infostate's states and their clones
        self._deal()

    def clone(self) -> JerichoState:
        """A copy; warns once per game if ``MCTSBot`` is cloning a true (not resampled) state to search it."""
        if not self._determinized and sys._getframe(1).f_code in _MCTS_CODE:
            name = self.get_game().get_type().short_name
            if name not in _warned_perfect_information:
                _warned_perfect_information.add(name)
                warnings.warn(perfect_information_message(name), PerfectInformationSearchWarning, stacklevel=2)
        return cast(JerichoState, super().clone())

    def _deal(self) -> None:
        """Finish the deal if every draw is made; else note how many outcomes the next chance node has."""
        rules = self.rules
        try:
            state = rules.initial_state(cast(Any, _ReplayRng(self._picks)))
        except _NeedDrawError as need:
            self._outcomes = need.outcomes
            return
        self._held = _Held(self._key, state)
        self._picks, self._outcomes = [], 0
        self._recall = [self._digest(rules, p, "") for p in range(rules.info.num_players)]

    @property
    def rules(self) -> Rules[Any]:
        """The shared rules engine of this game and options."""
        return _rules(*self._key)

    @property
    def inner(self) -> Any:
        """The rules state; ``SpielError``-like ``RuntimeError`` while the deal is under way."""
        if self._held is None:
            raise RuntimeError("the cards are still being dealt (chance nodes): there is no table yet")
        return self._held.state

    def _digest(self, rules: Rules[Any], player: int, previous: str) -> str:
        raw = previous.encode() + rules.observe(self.inner, player).tobytes()
        return hashlib.blake2b(raw, digest_size=8).hexdigest()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The next draw of the deal: ``m`` equally likely outcomes."""
        m = self._outcomes
        return [(i, 1.0 / m) for i in range(m)]

    def current_player(self) -> int:
        """The player to move, ``pyspiel.PlayerId.CHANCE`` while dealing, or ``pyspiel.PlayerId.TERMINAL``."""
        if self._held is None:
            return int(pyspiel.PlayerId.CHANCE)
        p = self.rules.current_player(self.inner)
        return int(pyspiel.PlayerId.TERMINAL) if p < 0 else p

    def _legal_actions(self, player: int) -> list[int]:
        return self.rules.legal_actions(self.inner)

    def _apply_action(self, action: int) -> None:
        if self._held is None:
            self._picks.append(int(action))
            self._deal()
            return
        rules = self.rules
        rules.apply(self.inner, int(action))
        self._recall = [self._digest(rules, p, h) for p, h in enumerate(self._recall)]

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal: draw {action}"
        rules, s = self.rules, self.inner
        if player == rules.current_player(s) and action in rules.legal_actions(s):
            return rules.action_to_str(s, action)
        return rules.describe_action(action)

    def is_terminal(self) -> bool:
        """Whether the game is over."""
        return self._held is not None and self.rules.is_terminal(self.inner)

    def returns(self) -> list[float]:
        """Each player's return (zeros before the end)."""
        if self._held is None:
            return [0.0] * self.rules.info.num_players
        return [float(r) for r in self.rules.returns(self.inner)]

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> JerichoState:
        """A state ``player_id`` cannot tell from this one: the rules' ``determinize``, seeded from the sampler.

        ``player_id`` keeps its information-state string; the others' digest chains restart from the
        redealt state (their past observations in this world are unknown, and the true ones must not leak).
        """
        seed = int(float(probability_sampler()) * 2**53)
        rules = self.rules
        new = self.clone()
        new._determinized = True
        new._held = _Held(self._key, rules.determinize(self.inner, player_id, np.random.default_rng(seed)))
        new._recall = [h if p == player_id else new._digest(rules, p, "resampled") for p, h in enumerate(self._recall)]
        return new

    def __str__(self) -> str:
        if self._held is None:
            return f"dealing: draws {self._picks}"
        return json.dumps(self.rules.to_dict(self.inner), sort_keys=True)


class _Observer:
    """OpenSpiel's PyObserver protocol over ``Rules.observe`` (one flat tensor named ``observation``)."""

    def __init__(self, rules: Rules[Any], perfect_recall: bool) -> None:
        self.rules = rules
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(rules.info.observation_size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: JerichoState, player: int) -> None:
        """Fill ``tensor`` with ``player``'s observation of ``state`` (zeros while dealing)."""
        if state._held is None:
            self.tensor.fill(0.0)
        else:
            self.tensor[:] = self.rules.observe(state.inner, player)

    def string_from(self, state: JerichoState, player: int) -> str:
        """The table as ``player`` sees it, or (information state) its digest chain of every observation."""
        if state._held is None:
            return f"p{player}: dealing"
        if self.perfect_recall:
            return f"p{player}:{state._recall[player]}"
        return self.rules.render_text(state.inner, player)


def _make_class(game_id: str) -> type[JerichoGame]:
    return type(f"Jericho{game_id.title()}Game", (JerichoGame,), {"game_id": game_id})


def register(game_id: str) -> str:
    """Register ``game_id`` with pyspiel (idempotent); returns its short name."""
    name = short_name(game_id)
    if name not in {g.short_name for g in pyspiel.registered_games()}:
        pyspiel.register_game(_game_type(game_id), _make_class(game_id))
    return name


def load_game(game_id: str, **params: Any) -> Any:
    """``pyspiel.load_game`` of ``game_id`` with ``params`` (options and ``rng_seed``)."""
    return pyspiel.load_game(register(game_id), params)


def from_rules_state(game: Any, state: Any) -> JerichoState:
    """A pyspiel state of ``game`` holding a copy of the rules ``state`` (its digest chains start here)."""
    new = game.new_initial_state()
    rules = new.rules
    new._picks, new._outcomes = [], 0
    new._held = _Held(new._key, rules.clone(state))
    new._recall = [new._digest(rules, p, "") for p in range(rules.info.num_players)]
    return new


for _gid in GAME_IDS:
    register(_gid)


def make_ismcts_bot(game: Any, simulations: int, uct_c: float = 1.0, seed: int = 0) -> Any:
    """OpenSpiel's ``ISMCTSBot`` with random rollouts, ready for ``evaluate_bots``.

    The Python ``ISMCTSBot`` searches afresh from the state it is given at every step and keeps nothing
    between moves, so the ``restart_at`` / ``inform_action`` that ``evaluate_bots`` calls are no-ops here
    (pyspiel's base class raises "not implemented").
    """
    from open_spiel.python.algorithms import ismcts, mcts

    class _Bot(ismcts.ISMCTSBot):  # type: ignore[misc]
        def restart_at(self, state: Any) -> None:
            """Nothing to do: each step searches from the state it is given."""

        def inform_action(self, state: Any, player_id: int, action: int) -> None:
            """Nothing to do: each step searches from the state it is given."""

    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed % 2**32))
    return _Bot(
        game,
        evaluator,
        uct_c,
        max_simulations=simulations,
        random_state=np.random.RandomState((seed + 1) % 2**32),
        final_policy_type=ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
    )


class BridgeISMCTS:
    """OpenSpiel's ``ISMCTSBot`` (random rollouts) searching a rules state through the bridge."""

    def __init__(self, rules: Rules[Any], simulations: int, uct_c: float, seed: int) -> None:
        self.game = load_game(rules.game_id, **rules.options)
        self.bot = make_ismcts_bot(self.game, simulations, uct_c, seed)

    def step_from_view(self, view: Any, seat: int) -> int:
        """The bot's action for ``seat`` (to move) in the rules state ``view`` (not changed)."""
        state = from_rules_state(self.game, view)
        if state.current_player() != seat:
            raise ValueError(f"seat {seat} is not to move in this state")
        return int(self.bot.step(state))


def ismcts_bot(
    rules: Rules[Any],
    simulations: int | None,
    time_limit: float | None,
    uct_c: float,
    rng: np.random.Generator,
    rollout: str = "random",
) -> BridgeISMCTS:
    """OpenSpiel's ISMCTS over ``rules`` for the ``ismcts`` agent's ``backend="openspiel"`` (simulations only)."""
    if time_limit is not None or simulations is None:
        raise ValueError("ismcts with backend=openspiel takes a simulation budget only (ISMCTSBot has no time limit)")
    if rollout != "random":
        raise ValueError("ismcts with backend=openspiel rolls out at random only (OpenSpiel's RandomRolloutEvaluator)")
    return BridgeISMCTS(rules, simulations, uct_c, int(rng.integers(2**62)))
