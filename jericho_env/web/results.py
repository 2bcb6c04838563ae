"""How a finished game ended, in the game's own terms, for the page's game-over banner.

The environment pays each seat a reward (``Rules.returns``: +1/-1, or walls' shared split such as
-1/2), which is not what the players of the card game count. So the banner gives both: the game's
own result (``result_text``: grid's points, walls' cards won and, where it decided, the tie-break of
cards in walls, castles' way of winning) and the reward beside it, with the game's rule for it
(``jericho_env.web.catalog.reward_rule``).

Each game's result is read from what its rules and state expose (grid's ``points``, walls'
``ranking_keys`` and ``winners``, castles' ``winner`` and ``reason``); a game not known here gets
the "game over" line of its text view.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Name = Callable[[int], str]  # a seat as the page names it: "you", "player_1 (greedy)"


def joined(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def grid_result(state: Any, name: Name) -> str:
    """grid: each player's points; more points wins, equal points is a draw."""
    points = [int(p) for p in state.points]
    each = ", ".join(f"{name(s)} {p}" for s, p in enumerate(points))
    best = max(points)
    top = [s for s, p in enumerate(points) if p == best]
    if len(top) == len(points):
        return f"points of captured cards: {each}; equal points, a draw"
    return f"points of captured cards: {each}; {joined([name(s) for s in top])} won on points"


def walls_result(rules: Any, state: Any, name: Name) -> str:
    """walls: cards won by each; the most cards won wins, a tie broken by the cards in the walls."""
    keys = rules.ranking_keys(state)
    won = ", ".join(f"{name(s)} {w}" for s, (w, _) in enumerate(keys))
    text = f"cards won: {won}"
    most = max(w for w, _ in keys)
    tied = [s for s, (w, _) in enumerate(keys) if w == most]
    winners = list(rules.winners(state))
    if len(tied) == 1:
        return f"{text}; {name(tied[0])} won the most cards"
    walls = ", ".join(f"{name(s)} {keys[s][1]}" for s in tied)
    text += f"; {joined([name(s) for s in tied])} each won {most}, so cards in walls decided ({walls})"
    if len(winners) == len(keys):
        return text + ": still equal, everyone ties"
    if len(winners) == 1:
        return text + f": {name(winners[0])} won"
    return text + f": still equal, {joined([name(s) for s in winners])} share the win"


def castles_result(state: Any, name: Name) -> str:
    """castles: the winner emptied deck and hand, or the loser could not play with no save left."""
    from jericho_env.games.castles.state import EMPTIED

    winner = int(state.winner)
    if int(state.reason) == EMPTIED:
        return f"{name(winner)} won with no cards left in deck and hand"
    return f"{name(winner)} won: {name(1 - winner)} could not play and had no save left"


def result_text(rules: Any, state: Any, name: Name) -> str:
    """How the finished ``state`` ended, in the game's own terms (see the module)."""
    game = rules.game_id
    try:
        if game == "grid":
            return grid_result(state, name)
        if game == "walls":
            return walls_result(rules, state, name)
        if game == "castles":
            return castles_result(state, name)
    except (AttributeError, TypeError, ValueError, IndexError):  # a state without those fields: the text view's line
        pass
    lines = [line for line in rules.render_text(state, None).splitlines() if "game over" in line]
    return lines[-1].strip() if lines else "the game is over"
