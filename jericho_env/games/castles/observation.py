"""Observation of a castles state from one seat: own cards, the opponent's public counts, the table.

Version 1 (option ``obs_version=1``) appends what the seat can infer (``BELIEF_FIELDS``): its own deck's
contents, and what the opponent's forced moves revealed about its hand (the state's ``barred``,
``need_n`` and ``need_beat``, which ``determinize`` enforces too).
"""

from __future__ import annotations

import numpy as np

from jericho_env.core.layout import Field, ObsLayout
from jericho_env.games.castles.deck import DeckSpec
from jericho_env.games.castles.state import CastlesState, Phase

SETUP_DRAW = 8
HAND_SIZE = 5
NUM_SAVES = 3


OBS_VERSIONS = (0, 1)
BELIEF_FIELDS = ("own_deck", "opp_barred", "opp_need", "opp_need_rank", "opp_hand_expected")


def build_layout(deck: DeckSpec, version: int = 0) -> ObsLayout:
    """The observation layout for ``deck`` (``K = ranks + 1`` rank slots: A.. top rank, then joker).

    ``version`` 1 appends ``BELIEF_FIELDS`` to version 0's fields.
    """
    k = deck.ranks + 1
    belief = [
        Field("own_deck", (k,), "own deck's cards of each rank (known, their order not) / copies of that rank"),
        Field(
            "opp_barred",
            (k,),
            "1 for each rank the opponent's hand cannot hold (it was stuck with an empty deck and kept its hand)",
        ),
        Field(
            "opp_need",
            (1,),
            f"at least this many opponent hand cards cannot answer `opp_need_rank` (it was stuck with a short "
            f"deck) / {HAND_SIZE}",
        ),
        Field("opp_need_rank", (k,), "one-hot rank those cards could not answer (all 0 when `opp_need` is 0)"),
        Field(
            "opp_hand_expected",
            (k,),
            "expected opponent hand cards of each rank, its hand drawn uniformly from its unseen cards of ranks "
            "not barred / copies of that rank",
        ),
    ]
    return ObsLayout(
        [
            Field("own_hand", (k,), "own hand: cards of each rank (A.., joker last) / copies of that rank in a deck"),
            Field("own_saves", (k,), "own face-down saves of each rank / 3"),
            Field(
                "own_counts", (3,), f"own deck size / {deck.size}, hand size / {SETUP_DRAW}, saves left / {NUM_SAVES}"
            ),
            Field("own_out", (k,), "own cards of each rank played or discarded so far / copies of that rank"),
            Field(
                "opp_counts",
                (3,),
                f"opponent's deck size / {deck.size}, hand size / {SETUP_DRAW}, saves left / {NUM_SAVES}",
            ),
            Field("opp_out", (k,), "opponent's cards of each rank played or discarded so far / copies of that rank"),
            Field("to_beat", (k,), "one-hot rank of the card(s) to beat (all 0 during set-up)"),
            Field("to_beat_count", (1,), f"how many cards the last play put down / {deck.copies}"),
            Field("to_beat_by", (2,), "who played the card(s) to beat: [self, opponent]"),
            Field(
                "joker_turn", (1,), "1 when a joker is on top: its player is on the extra turn and may play any card"
            ),
            Field(
                "phase", (4,), "one-hot: [choosing saves, playing from hand, discarding (short deck), playing a save]"
            ),
            Field(
                "pending", (1,), f"saves still to choose, or cards still to discard, by the seat to move / {HAND_SIZE}"
            ),
            Field("to_move", (2,), "who is to move: [self, opponent] (all 0 once the game is over)"),
            Field("first_player", (2,), "who went first: [self, opponent]"),
            *(belief if version >= 1 else []),
        ]
    )


class ObsEncoder:
    """Fills observations quickly: offsets and scales precomputed once per option set."""

    def __init__(self, deck: DeckSpec, layout: ObsLayout) -> None:
        self.k = deck.ranks + 1
        self.size = layout.size
        self.off = {f.name: layout.slices[f.name].start for f in layout.fields}
        self.per_copy = [1.0 / n for n in deck.composition()]
        self.per_save = 1.0 / NUM_SAVES
        self.deck_scale = 1.0 / deck.size
        self.beat_scale = 1.0 / deck.copies
        self.joker = deck.joker
        self.over = Phase.OVER
        self.composition = deck.composition()
        self.belief = "own_deck" in self.off

    def encode(self, s: CastlesState, seat: int) -> np.ndarray:
        """A new float32 observation of ``s`` from ``seat``'s point of view."""
        o = [0.0] * self.size
        off = self.off
        k = self.k
        pc = self.per_copy
        opp = 1 - seat
        hand, saves = s.hands[seat], s.saves[seat]
        base_hand, base_saves = off["own_hand"], off["own_saves"]
        for r in range(k):
            if hand[r]:
                o[base_hand + r] = hand[r] * pc[r]
            if saves[r]:
                o[base_saves + r] = saves[r] * self.per_save
        for who, counts, out in ((seat, "own_counts", "own_out"), (opp, "opp_counts", "opp_out")):
            b = off[counts]
            o[b] = len(s.decks[who]) * self.deck_scale
            o[b + 1] = s.hand_n[who] / SETUP_DRAW
            o[b + 2] = s.save_n[who] * self.per_save
            b = off[out]
            pile, disc = s.pile[who], s.discard[who]
            for r in range(k):
                n = pile[r] + disc[r]
                if n:
                    o[b + r] = n * pc[r]
        if s.beat >= 0:
            o[off["to_beat"] + s.beat] = 1.0
            o[off["to_beat_count"]] = s.beat_n * self.beat_scale
            o[off["to_beat_by"] + (0 if s.beat_by == seat else 1)] = 1.0
            if s.beat == self.joker and s.phase != self.over:
                o[off["joker_turn"]] = 1.0
        if s.phase != self.over:
            o[off["phase"] + s.phase] = 1.0  # one-hot in Phase order
            o[off["pending"]] = s.pending / HAND_SIZE
            o[off["to_move"] + (0 if s.to_move == seat else 1)] = 1.0
        o[off["first_player"] + (0 if s.first == seat else 1)] = 1.0
        if self.belief:
            self.encode_belief(o, s, seat)
        return np.array(o, dtype=np.float32)

    def encode_belief(self, o: list[float], s: CastlesState, seat: int) -> None:
        """Version 1's fields into ``o`` (zeros there): own deck, what the opponent's hand is known to hold."""
        off, k, pc, comp = self.off, self.k, self.per_copy, self.composition
        opp = 1 - seat
        hand, saves, pile, disc = s.hands[seat], s.saves[seat], s.pile[seat], s.discard[seat]
        b = off["own_deck"]
        for r in range(k):
            o[b + r] = (comp[r] - hand[r] - saves[r] - pile[r] - disc[r]) * pc[r]
        barred = s.barred[opp]
        b = off["opp_barred"]
        for r in range(k):
            if barred >> r & 1:
                o[b + r] = 1.0
        if s.need_n[opp] > 0 and s.need_beat[opp] >= 0:
            o[off["opp_need"]] = s.need_n[opp] / HAND_SIZE
            o[off["opp_need_rank"] + s.need_beat[opp]] = 1.0
        # the opponent's unseen cards (hand, saves, deck) of ranks its hand may hold
        pile, disc = s.pile[opp], s.discard[opp]
        total = 0
        for r in range(k):
            if not barred >> r & 1:
                total += comp[r] - pile[r] - disc[r]
        hand_n = s.hand_n[opp]
        if total > 0 and hand_n > 0:
            b = off["opp_hand_expected"]
            for r in range(k):
                if not barred >> r & 1:
                    o[b + r] = float(hand_n * (comp[r] - pile[r] - disc[r])) / total * pc[r]
