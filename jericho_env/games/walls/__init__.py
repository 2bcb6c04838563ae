# ruff: noqa: E501  (the Markdown tables of this page, one row per line, are wider than code lines)
"""walls: Tom Lehmann's *Jericho* (Abacus Spiele, 2006), a card game of walls, trumpets and majorities.

The full specification, with credit and every decision taken, is ``seeds/walls.md``.

Rules in short
--------------
110 cards: 85 wall cards in five colours (brown, yellow, blue, red, white), per colour four 1s,
five 3s, four 4s, three 5s and one 7; 22 trumpets (worth 2 in a wall, any colour); 3 scoring
cards. Each player is dealt 7; the rest is stacked in six piles with a scoring card shuffled into
piles 2, 4 and 6. To open, every player secretly lays a wall card face down as the start of a
wall and puts a card face down into the *supply*; the wall cards are revealed together.

On a turn a player does one of: build (lay a wall card on their wall of its colour; a wall's
length is the sum of its values), blow a trumpet (name a colour: every wall card of that colour
with the highest value on the table, in anyone's wall, falls face up into the supply; walls left
with trumpets only collapse and their trumpets go face up into the supply too; the trumpet joins
the player's own wall of that colour, or is discarded if they have none), or put any card face down
into the supply. Then they draw a card.

Drawing a scoring card triggers a scoring at once (the drawer draws a replacement): the supply is
revealed, its trumpets discarded, and each colour's cards go to the longest wall of that colour
(ties split evenly, the remainder stays; a colour nobody builds stays). After scorings 1 and 2
every player puts one hand card face down into the supply with no redraw (hands go 5, 4, 3) and
the drawer's left neighbour plays next. After scoring 3, each player adds the value-1 cards of
their walls to the cards they won; most cards won wins, ties broken by cards in walls.

Properties
----------
| property | value |
| --- | --- |
| agents | `player_0` .. `player_{n-1}`, n = `num_players` (default 4) |
| actions | `Discrete(56)` |
| observation | `Box(0, 1, (306,)/(370,)/(434,))` float32 for 3/4/5 players (242 for the 2-player variant); `+ 25 + 2n` with `obs_version=1` |
| action mask | int8 `(56,)`, zeros for seats not to move |
| rewards | at the end only; zero-sum: winners share +1 (each +1/w), the others share -1 (each -1/(n-w)); all 0 if every seat ties |
| render modes | `ansi` / `human` (text, hidden cards as counts), `rgb_array` (fixed-size image, 1228 px wide, 90 + 86n high: own hand face up, others' as backs, each wall a row of small cards one per value with `xN` for several, trumpets dark with a gold T, supply and pile counts, cards won, the seat to move framed) |
| max game length | 108 - 3n steps (opening 2n, donations 2n, at most 110 - 7n - 2 play turns) |

A whole game, each agent playing a random legal move (the mask marks them; put your policy there).
Options are keywords (``jericho_env.make("walls", num_players=3)``):

```python
import numpy as np
import jericho_env

env = jericho_env.make("walls", num_players=4)
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

Action encoding
---------------
Written once, in ``actions.py`` (``WallsActions``: offsets, ``build`` / ``trumpet`` / ``supply``, ``decode``, text).

| actions | meaning | text |
| --- | --- | --- |
| 0..24 | build the wall card of type `a` = colour*5 + value index (values 1,3,4,5,7; colours brown, yellow, blue, red, white); in the opening: lay it face down as the first wall card | `red-5` |
| 25 | in the opening only, and only from a hand of seven trumpets: lay a trumpet face down as the first wall card (it collapses at the reveal) | `T` |
| 25..29 | trumpet naming colour `a-25` | `T-red` |
| 30..55 | put a card of type `a-30` (25 wall card types, then 25 = trumpet) face down into the supply; also the opening supply card and the round-start donations | `supply-red-5`, `supply-T` |

Phases (``state.Phase``): opening wall card, opening supply card (each seat in turn from the first player,
its choices hidden until the reveal), play, donation (after scorings 1 and 2, each seat from the drawer's left).

Observation layout (4 players; `n` rows for per-seat fields, the observer first, then `(seat+k) % n`)
---------------------------------------------------------------------------------------------------
| field | offset | shape | meaning |
| --- | --- | --- | --- |
| `hand` | 0 | (26,) | own hand: count of each card type (25 wall cards colour-major, then T) / copies |
| `own_opening` | 26 | (26,) | own face-down first wall card before the reveal (one-hot by type) |
| `own_supply` | 52 | (26,) | cards this seat put face down into the supply since the last scoring / copies |
| `hand_sizes` | 78 | (4,) | hand size of each seat, self first then (seat+k)%n / 7 |
| `opening_laid` | 82 | (4,) | 1 if that seat has a face-down first wall card not yet revealed |
| `supply_face_down` | 86 | (4,) | face-down supply cards each seat put there since the last scoring / 110 |
| `walls` | 90 | (4, 5, 7) | each seat's wall of each colour: counts of values 1,3,4,5,7 / copies, trumpets / 22, length / 101 |
| `won` | 230 | (4, 25) | wall cards each seat has won, by type / copies |
| `supply_public` | 330 | (25,) | supply cards everyone has seen (fallen from walls, left after a scoring) / copies |
| `supply_size` | 355 | (1,) | cards in the supply, the trumpets of collapsed walls included / 110 |
| `deck_size` | 356 | (1,) | cards in the draw pile / 110 |
| `scoring_window` | 357 | (2,) | cards to draw before the pile holding the next scoring card begins, and cards left in that pile / 40 |
| `round` | 359 | (3,) | round 1, 2, 3 (one-hot) |
| `phase` | 362 | (4,) | opening wall card, opening supply card, play, donation (one-hot) |
| `to_move` | 366 | (4,) | seat to move, self first then (seat+k)%n (one-hot) |
| **total** | | (370,) | float32, every value in [0, 1] |

The trumpets of collapsed walls waiting in the supply are not a field of their own: they are
``supply_size`` less the public wall cards and the face-down cards (both observed).

Never observed: other seats' hands, their face-down first wall cards before the reveal, the cards
they put face down into the supply (only how many), the order of the draw pile.

Observation version 1 (option ``obs_version=1``; 4 players)
-----------------------------------------------------------
``jericho_env.make("walls", obs_version=1)`` (and ``make_batched``, ``single_agent``, ``agents.make``,
``--option obs_version=1``): version 0's fields, unchanged and in place, then the fields below, computed
only from what the seat has seen. Version 0 stays the default: the shipped networks read it, and a
checkpoint records the version it was trained on (``observation_version``) and refuses the other.

| field | offset | shape | meaning |
| --- | --- | --- | --- |
| `unseen` | 370 | (26,) | cards of each type this seat has not seen (in others' hands, face-down openings and supply cards, or the draw pile) / copies |
| `unseen_count` | 396 | (1,) | cards this seat has not seen, scoring cards aside / 110 |
| `known_trumpets` | 397 | (3, 2) | each other seat, (seat+k)%n for k >= 1: trumpets it is known to hold in hand and face-down supply cards / 7, and 1 if one of them is known to be in the supply (only a seat seen to open with a trumpet) |
| **total** | | (403,) | float32, every value in [0, 1] |

Why these. ``unseen`` counts, per card type, the copies the seat has not seen: the copies of the type
less those in its hand, its face-down opening and supply cards, every wall, every seat's won cards, the
public supply, and (trumpets) the trumpets face up in the supply or out of the game. They are the cards
the others' hands, openings and face-down supply cards and the draw pile are drawn from, the pool
``determinize`` redeals; version 0 holds them only as a sum of many fields. No move of walls is forced
(any card may go to the supply), so play reveals nothing about a hand, with one exception
(``seeds/walls.md`` decision 26): a seat seen to open with a trumpet was dealt seven, and
``known_trumpets`` is the floor that decision keeps (``state.trumpet_floor``), zero for every other
seat. Per-seat shares of the unseen cards are not fields: with nothing forced they are the hand sizes
(observed) times ``unseen``. The compiled engine writes the same floats (``batched.py``;
``tests/games/test_belief_observation.py``).

Options
-------
| option | default | allowed |
| --- | --- | --- |
| `num_players` | 4 | 3, 4, 5 (published); 2 is a variant, not in the published rules |
| `obs_version` | 0 | observation version: 0, or 1 (version 0 plus what the seat can infer from the public history) |

Baseline agent
--------------
``agents.make("greedy", "walls", num_players=n)`` simulates each legal move on the observed table
(trumpets included) and keeps the one that most raises the cards its seat would hold if a scoring
came now (see ``agents/greedy/walls.py`` for the rule, ``docs/agents.md`` for how strong it plays).

Cards as text (``jericho_env.games.walls.cards``): ``red-5``, ``T`` (trumpet), ``S`` (scoring card);
a trumpet in a wall is ``T-red``.

Version History
---------------
* observation version 1 (option ``obs_version=1``): version 0's fields, then ``unseen``,
  ``unseen_count`` and ``known_trumpets`` (25 + 2n floats). The rules (v1) and observation version 0
  are unchanged; version 0 stays the default.
* v1: the trumpets of a wall that loses its last wall card go face up into the supply, as the
  Italian seed says ("vengono scartate e messe nella riserva"), and the next scoring throws them
  out with the supply's other trumpets; v0 discarded them at once. The same moves give the same
  scores and outcome; the supply's size (observed) and the trumpets-discarded count differ until
  that scoring.
  The observation layout is unchanged.
* v0: first release.
"""
