# ruff: noqa: E501  (the Markdown tables of this page, one row per line, are wider than code lines)
"""grid: Daniel Schulman's "Jericho", a two-player game of matching cards and surrounding them.

``jericho_env.make("grid")`` — from "Jericho", an original card game by Daniel Schulman, free for
any use with credit. Full specification, credit and every rules decision: ``seeds/grid.md``.

Rules in short
--------------
A 52-card deck. Each player gets 5 cards; the next card goes face down in the middle as the
**base** (nobody knows it; it is never captured and never scores); the rest is the draw pile. The
first player is drawn at random.

On your turn place a card from your hand face up on an empty cell orthogonally next to at least one
card, matching the **suit or the rank of every face-up orthogonal neighbour** (the base accepts any
card). Every card that a placement leaves **surrounded on all four sides** (the placed card too; the
base counts as a side, but is itself never captured) is **captured** at once: it leaves the table
and goes to your capture pile. After a capturing placement you may place again, but only a
placement that captures, or end your turn; a turn ends by itself after a placement that captures
nothing, or when no capturing placement is possible (or your hand is empty). At the end of your
turn every card no longer joined to the base through orthogonal neighbours is **discarded** (face
up); then refill your hand to 5 from the draw pile while it lasts.

Instead of placing you may **pass** (always legal at the start of a turn; the only move with an
empty hand). Two passes in a row end the game. Points of captured cards: A = 1, 2-10 face value,
J/Q/K = 10. More points wins (+1/-1); equal points is a draw (0).

The table is a square window of ``board_size`` cells a side (odd, default 21) centred on the base;
cells outside it do not exist, so a card on the window's edge cannot be surrounded.

Properties
----------
| property | value |
| --- | --- |
| agents | `player_0`, `player_1` |
| actions | `Discrete(2206)` = `5 * board_size**2 + 1` (246 for board_size 7) |
| observation | `Box(0, 1, (8731,), float32)` = `19 * board_size**2 + 352`, plus `action_mask`; 8958 (`+ 227`) with `obs_version=1` |
| rewards | +1 more points, -1 fewer, 0 equal, at the end of the game |
| max_game_length | 155 steps, any board size (51 placements + 51 chain ends + 53 passes; see `rules.py`) |

A whole game, each agent playing a random legal move (the mask marks them; put your policy there).
Options are keywords (``jericho_env.make("grid", board_size=11)``):

```python
import numpy as np
import jericho_env

env = jericho_env.make("grid")
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

Game lengths under random play and the speed of the engine: ``docs/benchmarks.md``.

Observation (default board_size 21)
-----------------------------------
Own private information first, then the opponent's, then the public table and piles. Cards are
``suit * 13 + rank`` (suits c d h s, ranks A..K). The table planes are ``board_size x board_size``
with row 0 at the top (y = +10) and the base at the centre.

| field | offset | shape | meaning |
| --- | --- | --- | --- |
| `hand` | 0 | (52,) | own hand: 1 per card held (card = suit*13 + rank; suits c d h s, ranks A..K) |
| `hand_slots` | 52 | (5, 17) | own hand by action slot (sorted): suit (4) then rank (13) one-hot |
| `own_captured` | 137 | (52,) | own capture pile: 1 per card |
| `own_score` | 189 | (1,) | own points / 340 |
| `opp_hand_size` | 190 | (1,) | opponent's hand size / 5 |
| `opp_captured` | 191 | (52,) | opponent's capture pile: 1 per card |
| `opp_score` | 243 | (1,) | opponent's points / 340 |
| `opp_passed` | 244 | (1,) | 1 if the opponent's last turn was a pass |
| `table_occupied` | 245 | (21, 21) | 1 where a cell holds a card or the base (row 0 = top, base at the centre) |
| `table_base` | 686 | (21, 21) | 1 at the face-down base |
| `table_suit` | 1127 | (4, 21, 21) | suit planes c d h s of the face-up cards |
| `table_rank` | 2891 | (13, 21, 21) | rank planes A..K of the face-up cards |
| `table_cards` | 8624 | (52,) | face-up cards on the table: 1 per card |
| `discard` | 8676 | (52,) | discard pile: 1 per card |
| `draw_size` | 8728 | (1,) | draw-pile size / 41 |
| `in_chain` | 8729 | (1,) | 1 if this seat is to move in the middle of a capture chain |
| `to_move` | 8730 | (1,) | 1 if this seat is to move |
| **total** | | (8731,) | float32, every value in [0, 1] |

Never in the observation: the opponent's hand, the order of the draw pile, the base's face.

Observation version 1 (option ``obs_version=1``)
------------------------------------------------
``jericho_env.make("grid", obs_version=1)`` (and ``make_batched``, ``single_agent``, ``agents.make``,
``--option obs_version=1``): version 0's fields, unchanged and in place, then the fields below, computed
only from what the seat has seen (its own cards, the table, the piles, the public history of the
opponent's chains). Version 0 stays the default: the shipped networks read it, and a checkpoint records
the version it was trained on (``observation_version``) and refuses the other.

| field | offset | shape | meaning |
| --- | --- | --- | --- |
| `unseen` | 8731 | (52,) | 1 per card this seat has not seen: in the opponent's hand, the draw pile or the base |
| `unseen_suit` | 8783 | (4,) | unseen cards of each suit c d h s / 13 |
| `unseen_rank` | 8787 | (13,) | unseen cards of each rank A..K / 4 |
| `unseen_count` | 8800 | (1,) | unseen cards / 47 |
| `opp_lacked` | 8801 | (52,) | 1 per unseen card the opponent's hand held none of when its latest chain ended by itself (the cards that fitted a capturing cell then) |
| `opp_lacked_room` | 8853 | (1,) | how many of `opp_lacked` the opponent's hand can hold now: cards it drew since, at most its hand size / 5 |
| `fits` | 8854 | (52,) | 1 per card that matches some empty cell beside the table (where it could be placed) |
| `fits_capture` | 8906 | (52,) | 1 per card that matches some cell where a placement captures |
| **total** | | (8958,) | float32, every value in [0, 1] |

Why these. Most of version 0 is table planes, mostly empty cells far from any play, and nothing in it
says which cards are still out. ``unseen`` (and its suit and rank counts) is the set the opponent's hand
is drawn from, as ``determinize`` uses it. The rules reveal one thing about the hidden hand: a chain that
ends by itself shows that the hand held no card fitting a capturing cell (``seeds/grid.md`` decision 18);
``opp_lacked`` is that set for the opponent's latest such chain, less the cards seen since, and
``opp_lacked_room`` how many cards entered its hand since (0: its hand holds none of them now). What a
chain ended by choice shows (the hand held *some* card of a set) is not a field: it binds the current hand
only with an empty draw pile. ``fits`` and ``fits_capture`` summarise the table as the moves see it, per
card rather than per cell: which cards have somewhere to go, and which could capture now, for own and
unseen cards alike (a move in a chain must capture). The compiled engine writes the same floats
(``batched.py``; ``tests/games/test_belief_observation.py``).

Actions
-------
The encoding is written once, in ``actions.py`` (``GridActions``: offsets, ``place``, ``decode``, text).
``C = board_size**2`` cells, ``cell = row * board_size + col`` (row 0 at the top). The hand is kept
sorted by card number, so slot ``i`` is the ``i``-th lowest card held (``hand_slots`` shows it).

| action | meaning | text |
| --- | --- | --- |
| `slot * C + cell` [0 .. 5C-1] | place the card of hand slot 0-4 on that cell | `"Th@1,-2"`: card@x,y (from the base) |
| `5 * C` [2205] | at the start of a turn: pass; in a capture chain: end the turn | `"pass"` / `"end"` |

Why this encoding: a hand holds at most 5 cards, so slot x cell needs 5 planes of the table
(2,206 actions at size 21) where card x cell would need 52 (22,933), of which at most 5 planes
could ever be legal at once; the slot planes line up with the table planes of the observation for convolutional
policies. Pass and end-turn share one id because they never coexist: a pass is only possible at the
start of a turn and "end" only inside a chain, so one "stop" action covers both (ending a chain does
not count as a pass for the two-passes rule).

Options
-------
| option | default | meaning |
| --- | --- | --- |
| `board_size` | 21 | side of the square table window centred on the base: an odd int in 3..101 |
| `obs_version` | 0 | observation version: 0, or 1 (version 0 plus what the seat can infer from the public history) |

How the default was chosen: a study (``experiments.studies.grid_edge_study``, retired once its figures were
written down; commit ``08a2f07`` has it) played games on a 41x41 window and recorded, per game, the farthest
(Chebyshev) distance from the base of any legal placement ever offered; a window of side ``k`` would have cut
off some legal placement in that game iff that distance exceeds ``(k - 1) / 2``. The default, 21, is the
smallest odd size that cuts a legal placement from fewer than 1% of uniformly random games; it also cuts none
from the greedy games studied (the figures: ``docs/benchmarks.md``). A policy that builds steadily in one
direction reaches much farther, which is why greedy breaks ties at random and leans towards the base; on any
window such placements are simply illegal, and the game stays well defined.

Rendering
---------
``render_mode="ansi"`` / ``"human"``: the text view (the golden playthrough shows it).
``"rgb_array"``: a 980x860 RGB image, the same size for every state and board size. The table is
drawn in a square area that zooms between fixed views (±4, ±6, ±10, ±15... cells around the base, at
most the whole window) to the smallest one that shows every card with a margin, so cards stay legible early
and nothing is cut off late; empty cells beside a card are framed, coordinates run along two sides.
Around it: the opponent's hand as backs (top), the own hand face up with its action slots (bottom),
draw pile and discard counts with the discard's top card, both capture piles with their points, and
whose turn it is (gold) with the capture-chain marker. ``seat=None`` shows both hands and the base.

Version History
---------------
* observation version 1 (option ``obs_version=1``): version 0's fields, then ``unseen``,
  ``unseen_suit``, ``unseen_rank``, ``unseen_count``, ``opp_lacked``, ``opp_lacked_room``, ``fits`` and
  ``fits_capture`` (227 floats). The rules and version 0 are unchanged; version 0 stays the default.
* v0: first release.
"""
