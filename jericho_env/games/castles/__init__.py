# ruff: noqa: E501  (the Markdown tables of this page, one row per line, are wider than code lines)
"""Castles (Working Title): a two-player shedding race with own decks, wild jokers and hidden saves.

``jericho_env.make("castles")`` — from "Castles (Working Title)", a free card-game design whose
author is not named. Full specification, credit and every rules decision: ``seeds/castles.md``.

Rules in short
--------------
Each player has an own deck: A-10 in four suits plus two jokers (42 cards; suits play no part).
Set-up: each draws 8 and puts 3 of them face down as **saves** (one at a time: the first player
chooses first); the other 5 are the hand. The first player (drawn at random, known to both)
turns over the top card of their deck: that is their play, and the opponent must answer it.

On your turn play one or more cards **of one rank**, equal to or higher than the card(s) to beat
(A lowest, 10 highest; an **Ace may also go on a 10**, and since everything beats an Ace the
cycle restarts). A **joker** may go on anything; you then take an extra turn and may play any
card. Then draw back up to 5 from your own deck while it lasts. A player who can play must play.

If you **cannot play**: with a save left, discard your hand (face up), draw 5 and turn over one
save of your choice, whatever its rank: it is the new card to beat. If fewer than 5 cards are left
in your deck, discard only as many hand cards as the deck holds (your choice) and draw the rest
of the deck; with an empty deck keep your hand. With no save left you **lose**. You **win** as
soon as your turn leaves you with no cards in deck and hand (saves do not count).

Properties
----------
| property | value |
| --- | --- |
| agents | `player_0`, `player_1` |
| actions | `Discrete(74)` with A-10 and the full deck; `R*C + 1 + 3*(R+1)` in general |
| observation | `Box(0, 1, (74,), float32)` plus `action_mask` (sizes vary with `ranks`); 119 with `obs_version=1` |
| rewards | +1 win, -1 loss, at the end (there are no draws) |
| max_game_length | 90 steps: `2 * (deck size + 3)`; 50 (A-5), 114 (A-K), 48 (small deck) |

A whole game, each agent playing a random legal move (the mask marks them; put your policy there).
Options are keywords (``jericho_env.make("castles", ranks=13)``):

```python
import numpy as np
import jericho_env

env = jericho_env.make("castles")
env.reset(seed=42)
rng = np.random.default_rng(42)
for agent in env.agent_iter():
    observation, reward, termination, truncation, info = env.last()
    if termination or truncation:
        action = None
    else:
        mask = observation["action_mask"]  # 1 for each legal action of the agent to move
        action = int(rng.choice(np.flatnonzero(mask)))
    env.step(action)
env.close()
```

Game lengths under random play: ``docs/benchmarks.md``.

Observation (default options; ``K = ranks + 1`` rank slots, joker last)
------------------------------------------------------------------------
| field | offset | shape | meaning |
| --- | --- | --- | --- |
| `own_hand` | 0 | (11,) | own hand: cards of each rank (A.., joker last) / copies of that rank in a deck |
| `own_saves` | 11 | (11,) | own face-down saves of each rank / 3 |
| `own_counts` | 22 | (3,) | own deck size / 42, hand size / 8, saves left / 3 |
| `own_out` | 25 | (11,) | own cards of each rank played or discarded so far / copies of that rank |
| `opp_counts` | 36 | (3,) | opponent's deck size / 42, hand size / 8, saves left / 3 |
| `opp_out` | 39 | (11,) | opponent's cards of each rank played or discarded so far / copies of that rank |
| `to_beat` | 50 | (11,) | one-hot rank of the card(s) to beat (all 0 during set-up) |
| `to_beat_count` | 61 | (1,) | how many cards the last play put down / 4 |
| `to_beat_by` | 62 | (2,) | who played the card(s) to beat: [self, opponent] |
| `joker_turn` | 64 | (1,) | 1 when a joker is on top: its player is on the extra turn and may play any card |
| `phase` | 65 | (4,) | one-hot: [choosing saves, playing from hand, discarding (short deck), playing a save] |
| `pending` | 69 | (1,) | saves still to choose, or cards still to discard, by the seat to move / 5 |
| `to_move` | 70 | (2,) | who is to move: [self, opponent] (all 0 once the game is over) |
| `first_player` | 72 | (2,) | who went first: [self, opponent] |
| **total** | | (74,) | float32, every value in [0, 1] |

Never in the observation: the opponent's hand, the opponent's saves, and the order of either deck.

Observation version 1 (option ``obs_version=1``; default options)
-----------------------------------------------------------------
``jericho_env.make("castles", obs_version=1)`` (and ``make_batched``, ``single_agent``, ``agents.make``,
``--option obs_version=1``): version 0's fields, unchanged and in place, then the fields below, computed
only from what the seat has seen. Version 0 stays the default: the shipped networks read it, and a
checkpoint records the version it was trained on (``observation_version``) and refuses the other.

| field | offset | shape | meaning |
| --- | --- | --- | --- |
| `own_deck` | 74 | (11,) | own deck's cards of each rank (known, their order not) / copies of that rank |
| `opp_barred` | 85 | (11,) | 1 for each rank the opponent's hand cannot hold (it was stuck with an empty deck and kept its hand) |
| `opp_need` | 96 | (1,) | at least this many opponent hand cards cannot answer `opp_need_rank` (it was stuck with a short deck) / 5 |
| `opp_need_rank` | 97 | (11,) | one-hot rank those cards could not answer (all 0 when `opp_need` is 0) |
| `opp_hand_expected` | 108 | (11,) | expected opponent hand cards of each rank, its hand drawn uniformly from its unseen cards of ranks not barred / copies of that rank |
| **total** | | (119,) | float32, every value in [0, 1] |

Why these. The opponent's unseen cards per rank are already version 0's (``1 - opp_out``), and so, as
a sum of four fields, are the seat's own deck contents; ``own_deck`` gives them directly (what the seat
will draw, in an unknown order). The rules reveal a hand through forced moves (``seeds/castles.md``
decision 21), facts the state keeps for ``determinize``: a player stuck with an empty deck kept a hand
holding none of the ranks in ``opp_barred``; a player stuck with a short deck kept at least
``opp_need`` cards that could not answer ``opp_need_rank``. ``opp_hand_expected`` is each rank's
expected count in the opponent's hand if it were drawn uniformly from its unseen cards of ranks not
barred (the short-deck fact and the opponent's choices are not modelled): the cards the opponent may
answer with, a number a network would otherwise have to work out from several fields. The compiled
engine writes the same floats (``batched.py``; ``tests/games/test_belief_observation.py``).

Actions
-------
Written once, in ``actions.py`` (``CastlesActions``: offsets, ``play`` / ``save`` / ..., ``decode``, text).
``R`` = ``ranks``; ``C`` = copies of a rank per deck (4, or 2 with ``small_deck``); rank code
``r`` runs 0..R-1 for A..top rank and ``R`` is the joker. Default offsets in brackets; ``T`` is the ten.

| action | meaning | text |
| --- | --- | --- |
| `r*C + k-1` [0-39] | play k cards of rank r (k = 1..C) | `"7"`, `"7x2"`, `"Tx4"` |
| `R*C` [40] | play a joker | `"joker"` |
| `R*C+1 + code` [41-51] | set-up: put a card face down as a save | `"save 7"`, `"save joker"` |
| `R*C+R+2 + code` [52-62] | stuck: turn over a save | `"play save 7"` |
| `R*C+2R+3 + code` [63-73] | stuck with a short deck: discard a card | `"discard 7"` |

Options
-------
| option | default | meaning |
| --- | --- | --- |
| `ranks` | 10 | 5 (A-5), 10 (A-10) or 13 (A-K): four of each rank plus two jokers |
| `small_deck` | False | two of each rank and one joker (21 cards with A-10) |
| `reversed_order` | False | A highest, top rank lowest; the top rank may go on an A |
| `obs_version` | 0 | observation version: 0, or 1 (version 0 plus what the seat can infer from the public history) |

Cards for the conservation test are ``16 * owner + rank code`` (84 ints by default).

Rendering and baseline agent
----------------------------
``render_mode="ansi"`` prints the table as text; ``"rgb_array"`` draws it as a 760x440 image (the
same size for every option set and step) from the seat to move's view: own hand face up, own
saves as backs marked with their ranks, the opponent's hand and saves as plain backs, both decks
with their counts, the card(s) to beat with who played them (and the joker's extra turn), the
played and discarded piles, and each player's cards gone out per rank. ``agents.make("greedy",
"castles")`` (``agents/greedy/castles.py``) plays the lowest legal rank with all its copies, one
step higher when that makes the opponent markedly likelier to be stuck, keeps jokers for when
nothing else is legal and saves the strongest cards (how strong it plays: ``docs/agents.md``).

Version History
---------------
* observation version 1 (option ``obs_version=1``): version 0's fields, then ``own_deck``,
  ``opp_barred``, ``opp_need``, ``opp_need_rank`` and ``opp_hand_expected`` (``4K + 1`` floats). The rules
  and version 0 are unchanged; version 0 stays the default.
* v0: first release.
"""

from __future__ import annotations

from typing import Any

# Option sets beyond the default that the shared conformance tests also run (each must pass api_test).
VARIANTS: list[dict[str, Any]] = [
    {"ranks": 5},
    {"ranks": 13},
    {"small_deck": True},
    {"reversed_order": True},
    {"ranks": 5, "small_deck": True, "reversed_order": True},
]
