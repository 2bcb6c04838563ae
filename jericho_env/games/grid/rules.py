"""Rules engine of grid, Daniel Schulman's "Jericho" (see the game page and ``seeds/grid.md``)."""

from __future__ import annotations

from bisect import insort
from collections.abc import Mapping
from typing import Any

import numpy as np

from jericho_env.core.cards import NUM_CARDS, card_to_str
from jericho_env.core.layout import ObsLayout
from jericho_env.core.redeal import shuffled
from jericho_env.core.rules import GameInfo, Rules, int_option, obs_version_option
from jericho_env.core.validate import require_generator
from jericho_env.games.grid import serialize
from jericho_env.games.grid.actions import GridActions
from jericho_env.games.grid.knowledge import DRAW, NONE, PLACE, SOME, HandFacts, redeal_hand
from jericho_env.games.grid.observation import OBS_VERSIONS, build_layout, encoder_for
from jericho_env.games.grid.render import render, render_image
from jericho_env.games.grid.state import (
    BASE,
    COMPAT,
    EMPTY,
    HAND_SIZE,
    POINTS,
    GridState,
    captures_at,
    capturing_cells,
    disconnected_cells,
    new_state,
    place,
    remove,
)

DEFAULT_BOARD_SIZE = 21  # chosen by the board-size study (see the game page)
# A true bound on agent steps, whatever the board size. Every placement uses up a card that entered a
# hand, and only the 51 non-base cards ever do: at most 51 placements, hence at most 51 turns with a
# placement. Each such turn has at most one explicit "end" (only after a capture). Two passes in a
# row end the game, so there is at most one pass before each placing turn plus the final two:
# 51 placements + 51 ends + (51 + 2) passes = 155.
MAX_GAME_LENGTH = 51 + 51 + 51 + 2


def _odd_size(v: int) -> bool:
    return v % 2 == 1 and 3 <= v <= 101


class GridRules(Rules[GridState]):
    """Two players place cards matching every orthogonal neighbour; surrounded cards are captured."""

    game_id = "grid"
    version = 0
    batched = "jericho_env.games.grid.batched:GridBatched"  # compiled rules for make_batched (batched.py)
    OPTIONS = (
        int_option(
            "board_size",
            DEFAULT_BOARD_SIZE,
            "side of the square table window centred on the base; placements outside it are illegal",
            "an odd int in 3..101",
            _odd_size,
        ),
        obs_version_option(
            OBS_VERSIONS, "observation version: 0 (the first) or 1 (0 plus what the seat can infer, a table summary)"
        ),
    )

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.encoder = encoder_for(self.layout, self.board)  # its tables are built once per board size

    # ----------------------------------------------------------------- metadata
    def build_parts(self) -> None:
        """The action encoding and the table geometry it carries, for the chosen board size."""
        self.actions = GridActions(self.options["board_size"])
        self.board = self.actions.board
        # bound from the encoding for the hot path (legal_actions, apply)
        self.cells = self.actions.cells
        self.pass_action = self.actions.pass_action

    def build_layout(self) -> ObsLayout:
        """Observation layout for the chosen board size."""
        return build_layout(self.options["board_size"], self.options["obs_version"])

    def build_info(self) -> GameInfo:
        """Metadata: 2 players, ``5 * size**2 + 1`` actions, at most 155 steps."""
        return GameInfo(
            game_id=self.game_id,
            version=self.version,
            num_players=2,
            num_actions=self.actions.num_actions,
            max_game_length=MAX_GAME_LENGTH,
            observation_size=self.layout.size,
            options=dict(self.options),
        )

    # ----------------------------------------------------------------- state machine
    def initial_state(self, rng: np.random.Generator) -> GridState:
        """Shuffle, deal 5 to each player, put the next card face down as the base; random first player."""
        require_generator(rng)
        deck = [int(c) for c in rng.permutation(NUM_CARDS)]
        hands = [sorted(deck[0:HAND_SIZE]), sorted(deck[HAND_SIZE : 2 * HAND_SIZE])]
        base_card = deck[2 * HAND_SIZE]
        draw = deck[2 * HAND_SIZE + 1 :]
        return new_state(self.board, hands, draw, base_card, int(rng.integers(2)))

    def current_player(self, state: GridState) -> int:
        """Seat to move, -1 once both players passed in a row."""
        return -1 if state.passes_in_row >= 2 else state.to_move

    def is_terminal(self, state: GridState) -> bool:
        """Over once both players passed consecutively."""
        return state.passes_in_row >= 2

    def legal_actions(self, state: GridState) -> list[int]:
        """Placements (slot * cells + cell) that touch a card and match all face-up neighbours, plus pass/end."""
        if state.passes_in_row >= 2:
            return []
        out = self._placements(state)
        out.sort()
        out.append(self.pass_action)
        return out

    def legal_mask(self, state: GridState) -> np.ndarray:
        """The legal actions as an int8 mask (built without sorting)."""
        mask = np.zeros(self.info.num_actions, dtype=np.int8)
        if state.passes_in_row < 2:
            out = self._placements(state)
            out.append(self.pass_action)
            mask[out] = 1
        return mask

    def _placements(self, state: GridState) -> list[int]:
        """The legal placements of the seat to move, unsorted."""
        hand = state.hands[state.to_move]
        out: list[int] = []
        if hand:
            n = self.cells
            # bit of a card -> first action id of its slot; iterating set bits beats scanning the hand
            offset = {1 << c: i * n for i, c in enumerate(hand)}
            hm = sum(offset)
            cells = capturing_cells(self.board, state) if state.in_chain else state.frontier
            allowed = state.allowed
            for cell in cells:
                m = allowed[cell] & hm
                while m:
                    low = m & -m
                    out.append(offset[low] + cell)
                    m ^= low
        return out

    def is_legal(self, state: GridState, action: int) -> bool:
        """Whether ``action`` is legal now, checked directly (no list of every legal action)."""
        if state.passes_in_row >= 2 or not 0 <= action <= self.pass_action:
            return False
        if action == self.pass_action:
            return True
        slot, cell = divmod(action, self.cells)
        hand = state.hands[state.to_move]
        if slot >= len(hand) or cell not in state.frontier or not state.allowed[cell] >> hand[slot] & 1:
            return False
        return not state.in_chain or captures_at(self.board, state, cell)

    def why_illegal(self, state: GridState, action: int) -> str | None:
        """Why ``action`` is illegal now (``None`` if legal), without listing every legal action."""
        if self.is_legal(state, action):
            return None
        return super().why_illegal(state, action)

    def apply_unchecked(self, state: GridState, action: int) -> None:
        """Play ``action`` for the seat to move without checking it (see ``Rules.apply_unchecked``)."""
        p = state.to_move
        if action == self.pass_action:
            if state.in_chain:
                # ending a chain by choice: the hand held a card that fits a capturing cell
                state.hist[p] = ((SOME, self._capture_mask(state)), state.hist[p])
                self._end_turn(state, True)
            else:
                state.passes_in_row += 1
                state.last_pass[p] = True
                state.to_move = 1 - p
            return
        slot, cell = divmod(action, self.cells)
        board = self.board
        card = state.hands[p].pop(slot)
        state.hist[p] = ((PLACE, card), state.hist[p])
        cells = state.board
        place(board, state, cell, card)
        nbrs = state.nbrs
        captured = [cell] if nbrs[cell] == 4 else []
        for q in board.neighbours[cell]:
            if nbrs[q] == 4 and 0 <= cells[q] < BASE:
                captured.append(q)
        if captured:
            pile = state.captured[p]
            for q in captured:
                pile.append(cells[q])
                state.points[p] += POINTS[cells[q]]
            remove(board, state, captured)
            state.in_chain = True
            if state.hands[p]:
                fits = self._capture_mask(state)
                hm = 0
                for c in state.hands[p]:
                    hm |= 1 << c
                if fits & hm:
                    return  # the chain goes on: everyone sees that the hand holds a card of ``fits``
                if fits:
                    state.hist[p] = ((NONE, fits), state.hist[p])  # ...or, here, that it holds none
        self._end_turn(state, state.in_chain)

    def _capture_mask(self, state: GridState) -> int:
        """The cards that fit some capturing cell (a 52-bit mask)."""
        allowed = state.allowed
        m = 0
        for cell in capturing_cells(self.board, state):
            m |= allowed[cell]
        return m

    def _end_turn(self, state: GridState, captured_this_turn: bool) -> None:
        """Discard cards cut off from the base (only captures can cut any off), refill to 5, pass the turn."""
        p = state.to_move
        if captured_this_turn:
            cut = disconnected_cells(self.board, state)
            if cut:
                state.discard.extend(state.board[c] for c in cut)
                remove(self.board, state, cut)
        hand, draw = state.hands[p], state.draw
        drawn = 0
        while len(hand) < HAND_SIZE and draw:
            insort(hand, draw.pop())
            drawn += 1
        if drawn:
            state.hist[p] = ((DRAW, drawn), state.hist[p])
        state.in_chain = False
        state.passes_in_row = 0
        state.last_pass[p] = False
        state.to_move = 1 - p

    def potential(self, state: GridState, seat: int) -> float:
        """The points lead of ``seat`` / 100, clipped to [-1, 1] (reward shaping; see ``Rules.potential``)."""
        lead = (state.points[seat] - state.points[1 - seat]) / 100.0
        return max(-1.0, min(1.0, lead))

    def returns(self, state: GridState) -> list[float]:
        """+1 to the player with more points, -1 to the other, 0 each on equal points or before the end."""
        if state.passes_in_row < 2 or state.points[0] == state.points[1]:
            return [0.0, 0.0]
        return [1.0, -1.0] if state.points[0] > state.points[1] else [-1.0, 1.0]

    # ----------------------------------------------------------------- text
    def action_to_str(self, state: GridState, action: int) -> str:
        """``"Th@1,0"`` (card at x,y relative to the base), ``"pass"`` or, in a capture chain, ``"end"``."""
        return self.actions.to_str(action, state.hands[state.to_move], state.in_chain)

    def describe_action(self, action: int) -> str:
        """State-free name: ``"hand slot 2 at 1,0"`` or ``"pass/end turn"``."""
        return self.actions.describe(action)

    def illegal_reason(self, state: GridState, action: int) -> str | None:
        """Why a placement is illegal, in words."""
        move = self.actions.decode(action)
        if move.kind == "stop":
            return None
        slot, cell = move.slot, move.cell
        hand = state.hands[state.to_move]
        where = self.board.cell_name(cell)
        if slot >= len(hand):
            return f"hand slot {slot} is empty (the hand holds {len(hand)} card{'s' if len(hand) != 1 else ''})"
        card = hand[slot]
        name = card_to_str(card)
        if state.board[cell] != EMPTY:
            what = "the base" if state.board[cell] == BASE else card_to_str(state.board[cell])
            return f"cell {where} already holds {what}"
        if state.nbrs[cell] == 0:
            return f"cell {where} touches no card orthogonally"
        for q in self.board.neighbours[cell]:
            c = state.board[q]
            if 0 <= c < BASE and not COMPAT[c] >> card & 1:
                other = f"{card_to_str(c)} at {self.board.cell_name(q)}"
                return f"{name} matches neither the suit nor the rank of its neighbour {other}"
        if state.in_chain:
            return f"in a capture chain only a capturing placement is allowed, and {name}@{where} captures nothing"
        return None

    def render_text(self, state: GridState, seat: int | None) -> str:
        """Table, hands (opponent hidden unless ``seat`` is None), piles, scores, turn."""
        return render(self.board, state, seat)

    def render_image(self, state: GridState, seat: int | None) -> np.ndarray:
        """RGB image of fixed size: the table (zoomed to the cards), hands, piles, scores, turn."""
        return render_image(self.board, state, seat)

    # ----------------------------------------------------------------- copies and hidden information
    def clone(self, state: GridState) -> GridState:
        """An independent copy."""
        return state.copy()

    def determinize(self, state: GridState, seat: int, rng: np.random.Generator) -> GridState:
        """A copy with the opponent's hand, the draw pile and the base redealt, consistent with the public history.

        The unseen cards (opponent's hand, draw pile, base) are pooled in card order; the opponent's
        hand is drawn uniformly among the hands of its size that admit a drawing schedule meeting
        every fact its chains revealed (``knowledge``: it held no card of a capturing cell when its
        chain ended by itself, some card when the chain went on or was ended by choice, and a card
        for a capturing cell now if it is to move in a chain); the draw pile and base are then a
        uniform order of the rest. Every copy is a state the game can reach with the same public
        history; the opponent's choices are not weighted by any model of its play (the support of
        the posterior, not its weights). The result depends only on what ``seat`` has seen and ``rng``.
        """
        require_generator(rng)
        new = state.copy()
        opp = 1 - seat
        facts = HandFacts(state.hist[opp], len(state.hands[opp]))
        if state.to_move == opp and state.in_chain and state.passes_in_row < 2:
            facts.add_current(SOME, self._capture_mask(state))
        pool = sorted([*state.hands[opp], *state.draw, state.base_card])
        hand, rest = redeal_hand(facts, pool, len(state.hands[opp]), rng)
        rest = shuffled(rest, rng)
        new.hands[opp] = sorted(hand)
        new.draw = rest[:-1]
        new.base_card = rest[-1]
        return new

    def observe(self, state: GridState, seat: int) -> np.ndarray:
        """The observation of ``seat`` (layout on the game page)."""
        return self.encoder.encode(state, seat)

    # ----------------------------------------------------------------- serialisation
    def to_dict(self, state: GridState) -> dict[str, Any]:
        """JSON-able position: cards as text, table as ``{"x,y": card}`` (see ``serialize``)."""
        return serialize.to_dict(self.board, state)

    def from_dict(self, data: Mapping[str, Any], strict: bool = True) -> GridState:
        """Rebuild a state from ``to_dict``'s output; ``StateFormatError`` saying what is wrong (see ``serialize``)."""
        state = serialize.from_dict(self.board, data, strict)
        return self.require_playable(state) if strict else state

    def card_zones(self, state: GridState) -> dict[str, list[int]]:
        """Every card by zone: base, table, both hands, draw, discard, both capture piles."""
        return {
            "base": [state.base_card],
            "table": list(state.faceup.values()),
            "hand_0": state.hands[0][:],
            "hand_1": state.hands[1][:],
            "draw": state.draw[:],
            "discard": state.discard[:],
            "captured_0": state.captured[0][:],
            "captured_1": state.captured[1][:],
        }

    def all_cards(self) -> list[int]:
        """The 52 cards of a standard deck."""
        return list(range(NUM_CARDS))
