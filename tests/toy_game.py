"""A toy game ("toy") registered only in tests: proves the generic env needs no game-specific code.

Two players each hold one private card from ten (0..9); a pile of 7 tokens; each turn take 1 or
2 tokens. Taking the last token scores 1; the higher card scores 1; more points wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jericho_env.core.layout import Field, ObsLayout
from jericho_env.core.rules import GameInfo, Rules, StateFormatError, int_option


@dataclass
class ToyState:
    cards: list[int]
    deck: list[int]
    pile: int
    to_move: int
    last_taker: int = -1
    history: list[int] = field(default_factory=list)


class ToyRules(Rules[ToyState]):
    game_id = "toy"
    version = 0
    batched = "tests.toy_batched:ToyBatched"  # compiled rules for the batched env (tests/toy_batched.py)
    OPTIONS = (int_option("pile", 7, "tokens at the start", "an int in 2..20", lambda v: 2 <= v <= 20),)

    def build_layout(self) -> ObsLayout:
        return ObsLayout([Field("own_card", (10,), "one-hot own card"), Field("pile", (1,), "tokens left / 20")])

    def build_info(self) -> GameInfo:
        return GameInfo("toy", 0, 2, 2, self.options["pile"], self.layout.size, options=self.options)

    def initial_state(self, rng: np.random.Generator) -> ToyState:
        deck = [int(c) for c in rng.permutation(10)]
        return ToyState([deck[0], deck[1]], deck[2:], self.options["pile"], int(rng.integers(2)))

    def current_player(self, s: ToyState) -> int:
        return -1 if s.pile == 0 else s.to_move

    def legal_actions(self, s: ToyState) -> list[int]:
        return [] if s.pile == 0 else ([0] if s.pile == 1 else [0, 1])

    def apply_unchecked(self, s: ToyState, action: int) -> None:
        s.pile -= action + 1
        s.history.append(action)
        if s.pile == 0:
            s.last_taker = s.to_move
        s.to_move = 1 - s.to_move

    def is_terminal(self, s: ToyState) -> bool:
        return s.pile == 0

    def returns(self, s: ToyState) -> list[float]:
        if s.pile:
            return [0.0, 0.0]
        pts = [0, 0]
        pts[s.last_taker] += 1
        pts[0 if s.cards[0] > s.cards[1] else 1] += 1
        if pts[0] == pts[1]:
            return [0.0, 0.0]
        return [1.0, -1.0] if pts[0] > pts[1] else [-1.0, 1.0]

    def action_to_str(self, s: ToyState, action: int) -> str:
        return f"take{action + 1}"

    def describe_action(self, action: int) -> str:
        return f"take{action + 1}"

    def clone(self, s: ToyState) -> ToyState:
        return ToyState(s.cards[:], s.deck[:], s.pile, s.to_move, s.last_taker, s.history[:])

    def determinize(self, s: ToyState, seat: int, rng: np.random.Generator) -> ToyState:
        new = self.clone(s)
        unseen = [s.cards[1 - seat], *s.deck]
        rng.shuffle(unseen)
        new.cards[1 - seat] = unseen[0]
        new.deck = unseen[1:]
        return new

    def observe(self, s: ToyState, seat: int) -> np.ndarray:
        obs = self.layout.zeros()
        obs[s.cards[seat]] = 1.0
        obs[10] = s.pile / 20
        return obs

    def render_text(self, s: ToyState, seat: int | None) -> str:
        return f"pile {s.pile}; your card {s.cards[seat or 0]}"

    def to_dict(self, s: ToyState) -> dict[str, Any]:
        return {
            "cards": s.cards,
            "deck": s.deck,
            "pile": s.pile,
            "to_move": s.to_move,
            "last_taker": s.last_taker,
            "history": s.history,
        }

    def from_dict(self, d: Mapping[str, Any], strict: bool = True) -> ToyState:
        try:
            return ToyState(
                list(d["cards"]),
                list(d["deck"]),
                int(d["pile"]),
                int(d["to_move"]),
                int(d["last_taker"]),
                list(d["history"]),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise StateFormatError(f"not a toy state: {e}") from e

    def card_zones(self, s: ToyState) -> dict[str, list[int]]:
        return {"hands": s.cards[:], "deck": s.deck[:]}

    def all_cards(self) -> list[int]:
        return list(range(10))
