"""How the page draws each game's table, where on it each legal move is chosen, and why a choice is refused.

A table is a *board* drawn for the page's box (``jericho_env.web.boards``: laid out for the width the
page has, its text and cards at sizes a player reads and taps on a phone). On top of it the page lays
transparent *targets*: named boxes in the board's coordinates (``"hand:2"``, ``"cell:220"``,
``"wall:3"``), each with what it is in words (``labels``, one per box: read out by screen readers). Each
legal move of the seat to move is a path of target names (``keys``) chosen in order: in grid a hand
card then a cell, in walls a hand card then a wall, the supply or the first-card place, in castles a
hand card (or a save). Moves whose path is the same (castles: one, two or three 7s) are offered as
buttons once the path is chosen; moves with no path (grid's pass) are buttons from the start.

A choice that starts no move says why in one line (``refusals``: a card that cannot be played now
and the rule that stops it, a place chosen before a card); a second choice that does not fit the
card chosen first says where that card may go (``hints``, by the first choice).

Move texts (the narration and the move buttons) are the rules' own short texts, put in the words
the drawn cards use (``Table.words``): a ten is ``10`` as on the cards, not the ``T`` of the codes.

A game without an entry here still plays: ``Table`` draws its text view and every move is a button.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from jericho_env.core.rules import Rules
from jericho_env.core.svg import SvgCanvas
from jericho_env.web.boards import DEFAULT_HEIGHT, DEFAULT_WIDTH, Board, Box
from jericho_env.web.boards import castles as castles_board
from jericho_env.web.boards import grid as grid_board
from jericho_env.web.boards import walls as walls_board

_GRID_CARD = re.compile(r"\b[A2-9TJQK][cdhs]\b")  # a card code of jericho_env.core.cards: "Th", "As"
_CASTLES_TEN = re.compile(r"\bT(?=x\d|\b)")  # the rank T alone or as "Tx2" (castles' move texts)
CHOOSE_FIRST = "choose one of your highlighted cards first, then where it goes"


@dataclasses.dataclass(frozen=True)
class Drawing:
    """A table as the page receives it: the SVG, its size, the click targets by name and what each box is."""

    svg: str
    width: int
    height: int
    targets: dict[str, list[Box]]
    labels: dict[str, list[str]] = dataclasses.field(default_factory=dict)


class Table:
    """The text view as a table, and no targets: every move is a button (the default for any game)."""

    def board(self, rules: Rules[Any], state: Any, seat: int | None, width: float, height: float) -> Board | None:
        """The game's board for a box of ``width`` x ``height`` (``None``: the text view)."""
        return None

    def canvas(self, rules: Rules[Any], state: Any, seat: int | None) -> SvgCanvas:
        """The text view of ``state`` from ``seat``'s view (``None``: every card shown), on an ``SvgCanvas``."""
        lines = rules.render_text(state, seat).splitlines() or [""]
        canvas = SvgCanvas(16 + 9 * max(len(line) for line in lines), 16 + 18 * len(lines))
        for i, line in enumerate(lines):
            canvas.mono_text(8, 8 + 18 * i, line)
        return canvas

    def keys(self, rules: Rules[Any], state: Any, action: int) -> list[str]:
        """The targets to choose, in order, for the legal ``action`` of the seat to move (``[]``: a button)."""
        return []

    def words(self, rules: Rules[Any], text: str) -> str:
        """A move's text (``action_to_str``, ``public_action_to_str``) as the page shows it: as is by default."""
        return text

    def refusal(self, rules: Rules[Any], state: Any, seat: int, key: str) -> str:
        """Why target ``key`` starts no move now, in one line."""
        return CHOOSE_FIRST

    def hint(self, rules: Rules[Any], state: Any, seat: int, key: str) -> str:
        """Where the card of first choice ``key`` may go, for a second choice that does not fit it."""
        return "that does not go with your first choice: choose a highlighted place, or choose again"

    def draw(
        self,
        rules: Rules[Any],
        state: Any,
        seat: int | None,
        clickable: bool,
        width: float = DEFAULT_WIDTH,
        height: float = DEFAULT_HEIGHT,
    ) -> Drawing:
        """The ``Drawing`` of ``state`` from ``seat``'s view, with targets when ``clickable`` (the seat's turn)."""
        board = self.board(rules, state, seat, width, height)
        if board is None:
            canvas = self.canvas(rules, state, seat)
            return Drawing(canvas.to_svg(), canvas.width, canvas.height, {})
        show = clickable and seat is not None
        targets = board.targets if show else {}
        labels = board.labels if show else {}
        return Drawing(board.pen.to_svg(), board.pen.width, board.pen.height, targets, labels)

    def explain(
        self, rules: Rules[Any], state: Any, seat: int, targets: Mapping[str, Sequence[Box]], paths: Sequence[list[str]]
    ) -> tuple[dict[str, str], dict[str, str]]:
        """``(refusals, hints)``: why each target that starts no move is refused; where each first choice goes."""
        first = {p[0] for p in paths if p}
        refusals = {key: self.refusal(rules, state, seat, key) for key in targets if key not in first}
        hints = {key: self.hint(rules, state, seat, key) for key in first if any(len(p) > 1 and p[0] == key
                                                                                   for p in paths)}  # fmt: skip
        return refusals, hints


class GridTable(Table):
    """grid: choose a hand card, then an empty cell beside a card; pass and end are buttons."""

    def board(self, rules: Rules[Any], state: Any, seat: int | None, width: float, height: float) -> Board | None:
        """The grid board (``jericho_env.web.boards.grid``)."""
        return grid_board.draw(rules, state, seat, width, height)

    def words(self, rules: Rules[Any], text: str) -> str:
        """Cards as the table draws them: ``Th@0,-4`` -> ``10♥ at 0,-4``."""
        from jericho_env.core.cards import str_to_card
        from jericho_env.games.grid.render import card_label

        return _GRID_CARD.sub(lambda m: card_label(str_to_card(m.group(0)))[0], text).replace("@", " at ")

    def keys(self, rules: Rules[Any], state: Any, action: int) -> list[str]:
        """``hand:SLOT`` then ``cell:CELL`` for a placement; none for pass / end."""
        move = rules.actions.decode(action)  # type: ignore[attr-defined]
        return [] if move.kind == "stop" else [f"hand:{move.slot}", f"cell:{move.cell}"]

    def refusal(self, rules: Rules[Any], state: Any, seat: int, key: str) -> str:
        """A card that fits no cell (in a capture chain: captures nowhere), or a cell chosen before a card."""
        if not key.startswith("hand:"):
            return CHOOSE_FIRST
        card = self._card(state, seat, key)
        if state.in_chain:
            return f"{card} captures nowhere: in a capture chain only a card that captures may go, or end the turn"
        return f"{card} fits no empty cell now: it must match the suit or rank of every card beside the cell"

    def hint(self, rules: Rules[Any], state: Any, seat: int, key: str) -> str:
        """Where the chosen card may go: a highlighted cell (in a capture chain, where it captures)."""
        card = self._card(state, seat, key)
        if state.in_chain:
            return f"{card} captures nothing there: choose a highlighted cell, where it captures, or another card"
        return f"{card} cannot go there: choose a highlighted cell, where every card beside it shares its suit or rank"

    @staticmethod
    def _card(state: Any, seat: int, key: str) -> str:
        from jericho_env.games.grid.render import card_label

        return card_label(state.hands[seat][int(key.split(":")[1])])[0]


class CastlesTable(Table):
    """castles: choose a hand card (play, save, discard) or one of your saves (turn it over)."""

    PHASE_KIND = {0: "save", 1: "play", 2: "discard", 3: "play"}  # by Phase: the move a hand card makes

    def board(self, rules: Rules[Any], state: Any, seat: int | None, width: float, height: float) -> Board | None:
        """The castles board (``jericho_env.web.boards.castles``)."""
        return castles_board.draw(rules, state, seat, width, height)

    def words(self, rules: Rules[Any], text: str) -> str:
        """The ten as its cards show it: ``T`` -> ``10``, ``Tx2`` -> ``10x2``, ``save T`` -> ``save 10``."""
        return _CASTLES_TEN.sub("10", text)

    def keys(self, rules: Rules[Any], state: Any, action: int) -> list[str]:
        """``save:RANK`` to turn a save over; ``hand:RANK`` for every other move (how many: buttons)."""
        move = rules.actions.decode(action)  # type: ignore[attr-defined]
        return [f"save:{move.rank}"] if move.kind == "play_save" else [f"hand:{move.rank}"]

    def refusal(self, rules: Rules[Any], state: Any, seat: int, key: str) -> str:
        """The rules' own reason (``why_illegal``) for the card's move of this phase: ``7 does not beat 9: ...``."""
        actions = rules.actions  # type: ignore[attr-defined]
        mine = [a for a in range(rules.info.num_actions) if self.keys(rules, state, a) == [key]]
        wanted = self.PHASE_KIND.get(int(state.phase), "play")
        mine.sort(key=lambda a: (actions.decode(a).kind not in (wanted, "joker"), actions.decode(a).n_cards))
        reason = rules.why_illegal(state, mine[0]) if mine else None
        return self.words(rules, reason or "not a move now")


class WallsTable(Table):
    """walls: choose a hand card, then your wall of its colour, a wall of the colour a trumpet names, or the supply."""

    def board(self, rules: Rules[Any], state: Any, seat: int | None, width: float, height: float) -> Board | None:
        """The walls board (``jericho_env.web.boards.walls``)."""
        return walls_board.draw(rules, state, seat, width, height)

    def keys(self, rules: Rules[Any], state: Any, action: int) -> list[str]:
        """The card, then where it goes: ``first`` (opening), ``mywall:C`` (build), ``wall:C`` (trumpet), ``supply``."""
        from jericho_env.games.walls.cards import TRUMPET
        from jericho_env.games.walls.state import Phase

        move = rules.actions.decode(action)  # type: ignore[attr-defined]
        if state.phase == Phase.OPEN_WALL:
            return [f"hand:{TRUMPET if move.kind == 'trumpet' else move.card}", "first"]
        if move.kind == "supply":
            return [f"hand:{move.card}", "supply"]
        if move.kind == "trumpet":
            return [f"hand:{TRUMPET}", f"wall:{move.colour}"]
        return [f"hand:{move.card}", f"mywall:{move.colour}"]

    def refusal(self, rules: Rules[Any], state: Any, seat: int, key: str) -> str:
        """A hand card the rules refuse now (their ``why_illegal``), or a place chosen before a card."""
        if not key.startswith("hand:"):
            return CHOOSE_FIRST
        mine = [a for a in range(rules.info.num_actions) if self.keys(rules, state, a)[:1] == [key]]
        reason = rules.why_illegal(state, mine[0]) if mine else None
        return reason or "not a move now"

    def hint(self, rules: Rules[Any], state: Any, seat: int, key: str) -> str:
        """Where the chosen card goes in this phase: the first-card place, the supply, its wall or a trumpet's."""
        from jericho_env.games.walls.cards import COLOURS, TRUMPET
        from jericho_env.games.walls.state import Phase
        from jericho_env.web.boards.walls import card_name

        card = int(key.split(":")[1])
        name = card_name(card)
        if state.phase == Phase.OPEN_WALL:
            return f"your {name} goes face down on your first wall card's place (1st)"
        if state.phase in (Phase.OPEN_SUPPLY, Phase.DONATE):
            return f"your {name} goes face down into the supply now"
        if card == TRUMPET:
            return "a trumpet goes on a highlighted wall (anyone's, of the colour it names) or into the supply"
        return f"your {name} goes on your own {COLOURS[card // 5]} wall, or into the supply"


TABLES: dict[str, Table] = {"grid": GridTable(), "castles": CastlesTable(), "walls": WallsTable()}


def table_for(game_id: str) -> Table:
    """The table of ``game_id``: its own, or the text view with buttons for a game without one."""
    return TABLES.get(game_id, Table())
