"""``greedy`` for walls over a batch: ``GreedyAgent``'s choice for every row of a batch, computed in numpy.

``BatchGreedyWalls(observations (B, D), masks (B, A)) -> actions (B,)`` returns, row by row, the action
``agents.greedy.walls.GreedyAgent.act`` returns for that observation and mask, and ``scores`` its
``GreedyAgent.scores``. The heuristic is the one of ``agents/greedy/walls.py`` (read its docstring), with the
weights read from ``GreedyAgent`` when the batch policy is built; here every move of every row is simulated at
once:

* the 56 actions reduce to 35 *variants* of one colour's walls (25 builds, 5 trumpets, 5 supply colours;
  a supply card's value only adds its cost) plus the trumpet into the supply, which changes nothing;
* arrays are feature-major, the batch on the last axis (seat, colour, B), (variant, B), so that every sum and
  maximum over seats, colours and values runs elementwise over the batch;
* with ``rival_weight`` 0 only this seat's cards count, so a variant needs our wall, the longest rival wall
  and how many rivals have it; a positive ``rival_weight`` scores every seat (seat, variant, B);
* the counts are decoded as the scalar agent does and held in float32 (small integers, exact); everything
  else follows the scalar code operation by operation in float64 (the same sums in the same order), so the
  scores are the same floats, not merely close ones.

Ties: ``act`` keeps the first legal action whose score beats the running best by more than 1e-9. Scores that
differ at all differ by far more than that (floating-point noise between equal scores is far less), so this
is the first legal action within 1e-9 of the best; a row with a score near the margin, which the two rules
could read differently, runs the scalar loop itself (``first_best_actions``).

The opening wall card is ranked as in ``GreedyAgent._opening_wall``: colour with the most value in hand,
then the lowest card.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from agents.greedy import walls_kernel
from agents.greedy.walls import GreedyAgent
from jericho_env.games.walls.actions import NUM_ACTIONS, SUPPLY_BASE, TRUMPET_BASE
from jericho_env.games.walls.cards import COPIES_PER_VALUE, NUM_TRUMPETS, NUM_WALL_TYPES, TRUMPET, TRUMPET_VALUE, VALUES

SUPPLY_TRUMPET = SUPPLY_BASE + TRUMPET  # 55: a trumpet into the supply

NUM_COLOURS = 5
CARDS_PER_COLOUR = sum(COPIES_PER_VALUE)  # 17
OPEN_WALL, OPEN_SUPPLY = 0, 1  # indices in the observation's phase one-hot
TIE = 1e-9  # GreedyAgent.act's margin

_VALUES = np.array(VALUES, dtype=np.float64)
_BUILDS = np.arange(NUM_WALL_TYPES)
# variants: 0..24 build type i, 25..29 trumpet naming colour i - 25, 30..34 a card of colour i - 30 to the supply,
# 35 (a row of its own) the trumpet to the supply; each action reads one variant's score
_ACTION_VARIANT = np.array(
    [*range(NUM_WALL_TYPES), *range(TRUMPET_BASE, SUPPLY_BASE), *(30 + _BUILDS // 5), 35], dtype=np.intp
)
_VARIANT_COLOUR = np.array([*(_BUILDS // 5), *range(5), *range(5)], dtype=np.intp)
# the walls of a variant's colour: rows 0..4 of (walls now, walls after our trumpet) are now, 5..9 after it
_VARIANT_WALLS = np.array([*(_BUILDS // 5), *range(5, 10), *range(5)], dtype=np.intp)
# its supply: rows 0..4 of (supply, supply + fallen cards, supply + 1) as is, 5..9 after a trumpet, 10..14 plus ours
_VARIANT_SUPPLY = np.array([*(_BUILDS // 5), *range(5, 10), *range(10, 15)], dtype=np.intp)
# the highest value index present, from a bit set of the value indices present (none: 4)
_COLOURS = np.arange(NUM_COLOURS)[:, None]
_POWERS = np.array([1.0, 2.0, 4.0, 8.0, 16.0])[:, None]
_HIGHEST = np.array([4] + [code.bit_length() - 1 for code in range(1, 32)], dtype=np.intp)
_EARLIER = np.triu(np.ones((NUM_ACTIONS, NUM_ACTIONS), dtype=bool), 1)  # [i, j]: action i comes before j


class BatchGreedyWalls:
    """``GreedyAgent`` (walls) as a batch policy: ``(observations (B, D), masks (B, A)) -> actions (B,)``."""

    name: ClassVar[str] = "greedy"
    uses_observation: ClassVar[bool] = True

    def __init__(self, game_id: str = "walls", **game_options: Any) -> None:
        # the scalar agent decodes the observation and holds the heuristic's weights: read them from it
        agent = GreedyAgent(game_id, **game_options)
        self.n = agent.n
        self.unscale: np.ndarray = agent.unscale
        # every divisor is a small integer, exact in float32 (the agent's float64 product rounds to the same count)
        self._unscale_row = self.unscale.astype(np.float32)
        self.observation_size = int(self.unscale.shape[0])
        sl = agent.sl
        self._hand = sl["hand"].start
        self._opening = sl["own_opening"].start
        self._own_supply = sl["own_supply"].start
        self._hidden = sl["supply_face_down"]
        self._walls = sl["walls"]
        self._won = sl["won"]
        self._public = sl["supply_public"]
        self._window = sl["scoring_window"].start
        self._phase = sl["phase"]
        self.rival_weight = float(agent.rival_weight)
        self.future_rate = float(agent.future_rate)
        self.one_weight = float(agent.one_weight)
        supply_cost = [float(c) for c in agent.supply_cost]
        # per action, what is added last (GreedyAgent's ``extra``): minus the supply cost of a wall card's value
        extra = np.zeros((NUM_ACTIONS, 1), dtype=np.float64)
        extra[SUPPLY_BASE : SUPPLY_BASE + NUM_WALL_TYPES, 0] = [-supply_cost[t % 5] for t in range(NUM_WALL_TYPES)]
        self._extra = extra
        # a build adds its value to our wall's length and, for a 1, one card to our 1s (seat 0 only)
        self._build_length = _VALUES[_BUILDS % 5][:, None]
        self._build_ones = self.one_weight * (_BUILDS % 5 == 0).astype(np.float64)[:, None]
        # opening key of a build: colour value * 8 + (4 - value index); higher is preferred
        self._low_first = (4 - _BUILDS % 5).astype(np.float64)[:, None]
        # play_values' fixed arguments (greedy_walls_kernel), where it is compiled and scores only our cards
        self._kernel: tuple[Any, ...] | None = None
        if walls_kernel.KERNEL and self.rival_weight == 0.0:
            self._kernel = self._kernel_arguments()

    def _kernel_arguments(self) -> tuple[Any, ...]:
        """The fixed arguments of ``walls_kernel.play_values``: (n, field offsets, weights, tables)."""
        at = [self._hand, self._opening, self._own_supply, self._hidden.start, self._walls.start]
        at += [self._won.start, self._public.start, self._window]
        return (
            int(self.n),
            np.array(at, dtype=np.int64),
            self.future_rate,
            self.one_weight,
            float(TRUMPET_VALUE),
            _VALUES,
            np.ascontiguousarray(self._extra[:, 0]),
            _ACTION_VARIANT.astype(np.int64),
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_players={self.n})"

    # ----------------------------------------------------------------- public
    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``GreedyAgent.act``'s action for every row, as int64 (B,)."""
        raw, legal, phase = self._read(observations, masks)
        values = self._values(raw, phase)
        return _first_best(values, legal.T)

    def scores(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``GreedyAgent.scores`` for every row: ``exp(score - best)`` on legal actions, 0 elsewhere, float32 (B, A)."""
        raw, legal, phase = self._read(observations, masks)
        values = np.where(legal.T, self._play_values(raw, phase), -np.inf)
        out = np.exp(values - values.max(axis=0))
        opening = np.flatnonzero(phase == OPEN_WALL)
        if len(opening):
            out[:, opening] = self._opening_scores(
                raw[self._hand : self._hand + NUM_WALL_TYPES, opening], legal[opening]
            )
        return np.ascontiguousarray(out.T, dtype=np.float32)

    # ----------------------------------------------------------------- reading
    def _read(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Raw counts (D, B) float32, legal mask (B, A) bool and phase (B,) of a batch, after checking shapes.

        The counts are feature-major (the batch on the last axis), so that sums and maxima over seats,
        colours and values run over outer axes, elementwise over the batch. They are small integers, exact in
        float32; what is not an integer (the supply estimate and the scores) is computed in float64.
        """
        obs = np.asarray(observations)
        legal = np.asarray(masks).astype(bool, copy=False)
        if obs.ndim != 2 or obs.shape[1] != self.observation_size:
            raise ValueError(
                f"observations must be a (batch, {self.observation_size}) array for {self.n}-player walls, "
                f"got shape {obs.shape}"
            )
        if legal.shape != (obs.shape[0], NUM_ACTIONS):
            raise ValueError(
                f"masks must be a (batch, {NUM_ACTIONS}) array matching the {obs.shape[0]} observations, "
                f"got shape {legal.shape}"
            )
        playable = legal.any(axis=1)
        if not playable.all():
            raise ValueError(
                f"{self.name}: rows {np.flatnonzero(~playable)[:10].tolist()} of the action masks have no legal "
                "action (every row must be a seat to move)"
            )
        # the scalar agent's _raw (its float64 product rounds to the same counts: every divisor is a small integer)
        raw = np.multiply(obs, self._unscale_row, dtype=np.float32)
        np.rint(raw, out=raw)
        raw = np.ascontiguousarray(raw.T)
        return raw, legal, raw[self._phase].argmax(axis=0)

    def _values(self, raw: np.ndarray, phase: np.ndarray) -> np.ndarray:
        """Per action and row (56, B), what ``act`` maximises: the play score, or the opening key in the opening."""
        values = self._play_values(raw, phase)
        opening = np.flatnonzero(phase == OPEN_WALL)
        if len(opening):
            values[: TRUMPET_BASE + 1, opening] = self._opening_keys(
                raw[self._hand : self._hand + NUM_WALL_TYPES, opening]
            )
        return values

    # ----------------------------------------------------------------- the opening wall card
    def _opening_keys(self, hand: np.ndarray) -> np.ndarray:
        """Keys (26, B) of the opening actions from the hand's wall cards (25, B): higher is greedy's preference.

        A build's key is the colour's value in hand * 8 + (4 - value index) (colour with the most value in hand,
        then the lowest card); the lone face-down trumpet (action 25, legal only from a hand of trumpets) -1.
        """
        colour_value = (hand.reshape(NUM_COLOURS, 5, -1) * _VALUES[:, None]).sum(axis=1)
        keys = np.full((NUM_WALL_TYPES + 1, hand.shape[1]), -1.0)
        keys[:NUM_WALL_TYPES] = np.repeat(colour_value, 5, axis=0) * 8.0 + self._low_first
        return keys

    def _opening_scores(self, hand: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """``exp(-rank)`` (56, B) of each legal opening action, its rank among the distinct keys of the legal ones."""
        keys = self._opening_keys(hand)  # (action, B)
        m = len(keys)
        ok = legal[:, :m].T
        same = (keys[:, None] == keys[None, :]) & ok[:, None]  # [earlier, later, B]
        distinct = ok & ~(same & _EARLIER[:m, :m, None]).any(axis=0)
        rank = ((keys[:, None] > keys[None, :]) & distinct[:, None]).sum(axis=0)
        out = np.zeros((NUM_ACTIONS, legal.shape[0]))
        out[:m] = np.where(ok, np.exp(-rank.astype(np.float64)), 0.0)
        return out

    # ----------------------------------------------------------------- play, opening supply card, donations
    @staticmethod
    def _colour_value(length: np.ndarray, ones_value: np.ndarray, supply: np.ndarray) -> np.ndarray:
        """Each seat's cards from one colour (seats on the first axis): the longest wall(s) share the supply, plus 1s.

        ``ones_value`` is ``one_weight`` times the 1s in each wall; a colour nobody builds gives no share.
        """
        top = length.max(axis=0)
        longest = length == top
        share = np.where(top > 0, supply / longest.sum(axis=0), 0.0)
        return longest * share + ones_value  # longest * share: the share or 0.0, as the scalar code's ``if``

    def _play_values(self, raw: np.ndarray, phase: np.ndarray) -> np.ndarray:
        """``GreedyAgent._evaluate``'s score of every action (56, B) float64, the same arithmetic in the same order.

        Compiled row by row (``walls_kernel.play_values``) where Numba is installed and ``rival_weight``
        is 0; otherwise ``_play_values_numpy``. Both give the same floats.
        """
        if self._kernel is not None:
            return walls_kernel.play_values(raw, phase, *self._kernel)  # type: ignore[no-any-return]
        return self._play_values_numpy(raw, phase)

    def _play_values_numpy(self, raw: np.ndarray, phase: np.ndarray) -> np.ndarray:
        """``_play_values`` over the whole batch in numpy (any ``rival_weight``); ``raw``'s walls may change."""
        b, n = raw.shape[1], self.n
        walls = raw[self._walls].reshape(n, NUM_COLOURS, 7, b)  # value counts, trumpets, length
        laid = raw[self._opening : self._opening + NUM_WALL_TYPES] * (phase == OPEN_SUPPLY)
        if laid.any():  # opening supply card: our face-down first wall card counts as built
            laid = laid.reshape(NUM_COLOURS, 5, b)
            walls[0, :, :5] += laid
            walls[0, :, 6] += (laid * _VALUES[:, None]).sum(axis=1)
        counts, trumpets, length = walls[:, :, :5], walls[:, :, 5], walls[:, :, 6]
        ones = self.one_weight * walls[:, :, 0]  # what the 1s in each wall are worth
        hand = raw[self._hand : self._hand + 26]
        own = raw[self._own_supply : self._own_supply + 26]
        public = raw[self._public].reshape(NUM_COLOURS, 5, b)
        won = raw[self._won].reshape(n, NUM_COLOURS, 5, b)

        # the supply of each colour this seat expects at the next scoring (integer sums: exact in any order)
        table = counts.sum(axis=0)  # (colour, value, B): every seat's walls
        known = public.sum(axis=1) + own[:NUM_WALL_TYPES].reshape(NUM_COLOURS, 5, b).sum(axis=1)
        seen = known + hand[:NUM_WALL_TYPES].reshape(NUM_COLOURS, 5, b).sum(axis=1)
        seen += table.sum(axis=1) + won.sum(axis=(0, 2))
        unseen = CARDS_PER_COLOUR - seen
        unseen_trumpets = NUM_TRUMPETS - hand[25] - own[25] - trumpets.sum(axis=(0, 1))
        pool = unseen.sum(axis=0) + np.maximum(unseen_trumpets, 0.0)
        hidden_others = raw[self._hidden][1:].sum(axis=0, dtype=np.float64)
        ratio = np.divide(hidden_others, pool, out=np.zeros(b), where=pool != 0)
        future = self.future_rate * (raw[self._window].astype(np.float64) + 0.5 * raw[self._window + 1])
        supply = known + ratio * unseen + future  # (colour, B)

        # our trumpet naming each colour: the highest value on the table falls, trumpet-only walls collapse
        hit = _HIGHEST[((table > 0) * _POWERS).sum(axis=1).astype(np.intp)]  # (colour, B); none: 4, nothing falls
        fall = counts[:, _COLOURS, hit, np.arange(b)]  # (seat, colour, B)
        after = length - fall * _VALUES[hit]
        after[(fall > 0) & (after == 2.0 * trumpets)] = 0.0
        after[0] += np.where(after[0] != 0, float(TRUMPET_VALUE), 0.0)  # the trumpet joins our wall
        ones_after = np.where(hit == 0, 0.0, ones)
        supply_v = np.concatenate([supply, supply + fall.sum(axis=0), supply + 1.0])[_VARIANT_SUPPLY]

        won_seat = won.sum(axis=(1, 2))
        if self.rival_weight == 0.0:
            value = self._own_values(length, ones, after, ones_after, supply, supply_v, won_seat[0])
        else:
            value = self._all_values(length, ones, after, ones_after, supply, supply_v, won_seat)
        return value[_ACTION_VARIANT] + self._extra

    def _own_values(
        self,
        length: np.ndarray,
        ones: np.ndarray,
        after: np.ndarray,
        ones_after: np.ndarray,
        supply: np.ndarray,
        supply_v: np.ndarray,
        won: np.ndarray,
    ) -> np.ndarray:
        """Scores (36, B) of the variants when only this seat's cards count (``rival_weight`` 0).

        Only seat 0's cards are needed, so each variant keeps our wall, the longest rival wall and how many
        rivals have it: (variant, B) arrays, not (seat, variant, B).
        """
        rivals, rivals_after = length[1:].max(axis=0), after[1:].max(axis=0)
        tied, tied_after = (length[1:] == rivals).sum(axis=0), (after[1:] == rivals_after).sum(axis=0)
        contrib = self._own_value(length[0], ones[0], rivals, tied, supply)  # (colour, B)
        totals = won + ((((contrib[0] + contrib[1]) + contrib[2]) + contrib[3]) + contrib[4])
        mine_v = np.concatenate([length[0], after[0]])[_VARIANT_WALLS]
        mine_v[:NUM_WALL_TYPES] += self._build_length
        ones_v = np.concatenate([ones[0], ones_after[0]])[_VARIANT_WALLS]
        ones_v[:NUM_WALL_TYPES] += self._build_ones
        rivals_v = np.concatenate([rivals, rivals_after])[_VARIANT_WALLS]
        tied_v = np.concatenate([tied, tied_after])[_VARIANT_WALLS]
        value = np.empty((36, length.shape[2]))
        value[:35] = (totals - contrib[_VARIANT_COLOUR]) + self._own_value(mine_v, ones_v, rivals_v, tied_v, supply_v)
        value[35] = totals
        return value

    @staticmethod
    def _own_value(
        mine: np.ndarray, ones_value: np.ndarray, rivals: np.ndarray, tied: np.ndarray, supply: np.ndarray
    ) -> np.ndarray:
        """This seat's cards from one colour: its share of the supply if its wall is (one of) the longest, plus 1s."""
        top = np.maximum(mine, rivals)
        longest = mine == top
        share = np.where(top > 0, supply / (longest + (rivals == top) * tied), 0.0)
        return longest * share + ones_value

    def _all_values(
        self,
        length: np.ndarray,
        ones: np.ndarray,
        after: np.ndarray,
        ones_after: np.ndarray,
        supply: np.ndarray,
        supply_v: np.ndarray,
        won: np.ndarray,
    ) -> np.ndarray:
        """Scores (36, B) of the variants with every seat's cards (seat, variant, B), for a ``rival_weight`` above 0."""
        contrib = self._colour_value(length, ones, supply)  # (seat, colour, B)
        totals = won + ((((contrib[:, 0] + contrib[:, 1]) + contrib[:, 2]) + contrib[:, 3]) + contrib[:, 4])
        length_v = np.concatenate([length, after], axis=1)[:, _VARIANT_WALLS]
        length_v[0, :NUM_WALL_TYPES] += self._build_length
        ones_v = np.concatenate([ones, ones_after], axis=1)[:, _VARIANT_WALLS]
        ones_v[0, :NUM_WALL_TYPES] += self._build_ones
        tot = (totals[:, None] - contrib[:, _VARIANT_COLOUR]) + self._colour_value(length_v, ones_v, supply_v)
        rival = self.rival_weight
        value = np.empty((36, length.shape[2]))
        value[:35] = tot[0] - rival * tot[1:].max(axis=0)
        value[35] = totals[0] - rival * totals[1:].max(axis=0)
        return value


def first_best_actions(values: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Per row of ``values`` (B, A), the action ``GreedyAgent.act``'s loop keeps among the ``legal`` (B, A) ones.

    The loop keeps the first legal action whose score beats the running best by more than 1e-9.
    """
    return _first_best(np.asarray(values, dtype=np.float64).T, np.asarray(legal, dtype=bool).T)


def _first_best(values: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """``first_best_actions`` on action-major arrays (A, B): values and legal mask.

    The loop compiled (``walls_kernel.first_best``) where Numba is installed, else ``_first_best_numpy``.
    """
    if walls_kernel.KERNEL:
        return walls_kernel.first_best(values, legal, TIE)  # type: ignore[no-any-return]
    return _first_best_numpy(values, legal)


def _first_best_numpy(values: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """``_first_best`` in numpy.

    Vectorised as the first legal action within 0.5e-9 of the row's best, which is the loop's answer when no
    legal score lies between 2e-9 and 0.5e-9 below the best (scores that differ at all differ by far more);
    rows with such a score run the loop itself.
    """
    masked = np.where(legal, values, -np.inf)
    best = masked.max(axis=0)
    top = masked >= best - 0.5 * TIE
    actions = top.argmax(axis=0).astype(np.int64)
    unclear = ((masked > best - 2.0 * TIE) & ~top).any(axis=0)
    if unclear.any():
        for row in np.flatnonzero(unclear).tolist():
            best_score, best_action = -1e18, -1
            for a in np.flatnonzero(legal[:, row]).tolist():
                score = float(values[a, row])
                if score > best_score + TIE:
                    best_score, best_action = score, a
            actions[row] = best_action
    return actions


def batch_twin(agent: GreedyAgent, **options: Any) -> BatchGreedyWalls:
    """walls ``greedy`` over a batch (compiled where Numba is installed, else numpy: ``_kernel`` is None)."""
    return BatchGreedyWalls("walls", **options)
