"""How the page draws each game's table and where on it each legal move is clicked.

A table is drawn by the game's own ``render.draw_image`` on an ``SvgCanvas``: the same drawing as
the ``rgb_array`` image, as SVG. On top of it the page lays transparent *targets*: named boxes in
the image's coordinates (``"hand:2"``, ``"cell:220"``, ``"wall:3"``). Each legal move of the seat to
move is a path of target names (``keys``) clicked in order: in grid a hand card then a cell, in
walls a hand card then a wall, the supply or the first-card place, in castles a hand card (or a
save). Moves whose path is the same (castles: one, two or three 7s) are offered as buttons once
the path is clicked; moves with no path (grid's pass) are buttons from the start.

Move texts (the narration and the move buttons) are the rules' own short texts, put in the words
the drawn cards use (``Table.words``): a ten is ``10`` as on the cards, not the ``T`` of the codes.

A game without an entry here still plays: ``Table`` draws its text view and every move is a button.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from jericho_env.core.rules import Rules
from jericho_env.core.svg import SvgCanvas

Box = tuple[float, float, float, float]  # x, y, width, height in the image's pixels
_GRID_CARD = re.compile(r"\b[A2-9TJQK][cdhs]\b")  # a card code of jericho_env.core.cards: "Th", "As"
_CASTLES_TEN = re.compile(r"\bT(?=x\d|\b)")  # the rank T alone or as "Tx2" (castles' move texts)


@dataclasses.dataclass(frozen=True)
class Drawing:
    """A table as the page receives it: the SVG, its size, and the click targets by name."""

    svg: str
    width: int
    height: int
    targets: dict[str, list[Box]]


class Table:
    """The text view as a table, and no targets: every move is a button (the default for any game)."""

    def canvas(self, rules: Rules[Any], state: Any, seat: int | None) -> SvgCanvas:
        """The table of ``state`` from ``seat``'s view (``None``: every card shown), drawn on an ``SvgCanvas``."""
        lines = rules.render_text(state, seat).splitlines() or [""]
        canvas = SvgCanvas(16 + 9 * max(len(line) for line in lines), 16 + 18 * len(lines))
        for i, line in enumerate(lines):
            canvas.mono_text(8, 8 + 18 * i, line)
        return canvas

    def targets(self, rules: Rules[Any], state: Any, seat: int) -> dict[str, list[Box]]:
        """The click targets of ``seat``'s view, by name."""
        return {}

    def keys(self, rules: Rules[Any], state: Any, action: int) -> list[str]:
        """The targets to click, in order, for the legal ``action`` of the seat to move (``[]``: a button)."""
        return []

    def words(self, rules: Rules[Any], text: str) -> str:
        """A move's text (``action_to_str``, ``public_action_to_str``) as the page shows it: as is by default."""
        return text

    def draw(self, rules: Rules[Any], state: Any, seat: int | None, clickable: bool) -> Drawing:
        """The ``Drawing`` of ``state`` from ``seat``'s view, with targets when ``clickable`` (the seat's turn)."""
        canvas = self.canvas(rules, state, seat)
        targets = self.targets(rules, state, seat) if clickable and seat is not None else {}
        return Drawing(canvas.to_svg(), canvas.width, canvas.height, targets)


class GridTable(Table):
    """grid: click a hand card, then an empty cell beside a card; pass and end are buttons."""

    def canvas(self, rules: Rules[Any], state: Any, seat: int | None) -> SvgCanvas:
        """The grid image (``render.draw_image``) as SVG."""
        from jericho_env.games.grid import render

        canvas = SvgCanvas(render.IMAGE_W, render.IMAGE_H)
        render.draw_image(canvas, rules.board, state, seat)  # type: ignore[attr-defined]
        return canvas

    def targets(self, rules: Rules[Any], state: Any, seat: int) -> dict[str, list[Box]]:
        """Own hand cards (``hand:SLOT``, drawn along the bottom) and the framed empty cells (``cell:CELL``)."""
        from jericho_env.games.grid import render

        board = rules.board  # type: ignore[attr-defined]
        out: dict[str, list[Box]] = {
            f"hand:{i}": [render.hand_card_box(i, top=False)] for i in range(len(state.hands[seat]))
        }
        half = render.view_half(board, state)
        for cell in sorted(state.frontier):
            box = render.cell_box(board, half, cell)
            if box is not None:
                out[f"cell:{cell}"] = [box]
        return out

    def words(self, rules: Rules[Any], text: str) -> str:
        """Cards as the table draws them: ``Th@0,-4`` -> ``10♥ at 0,-4``."""
        from jericho_env.core.cards import str_to_card
        from jericho_env.games.grid.render import card_label

        return _GRID_CARD.sub(lambda m: card_label(str_to_card(m.group(0)))[0], text).replace("@", " at ")

    def keys(self, rules: Rules[Any], state: Any, action: int) -> list[str]:
        """``hand:SLOT`` then ``cell:CELL`` for a placement; none for pass / end."""
        move = rules.actions.decode(action)  # type: ignore[attr-defined]
        return [] if move.kind == "stop" else [f"hand:{move.slot}", f"cell:{move.cell}"]


class CastlesTable(Table):
    """castles: click a hand card (play, save, discard) or one of your saves (turn it over)."""

    def canvas(self, rules: Rules[Any], state: Any, seat: int | None) -> SvgCanvas:
        """The castles image (``render.draw_image``) as SVG."""
        from jericho_env.games.castles import render

        canvas = SvgCanvas(render.IMAGE_W, render.IMAGE_H)
        render.draw_image(canvas, rules.deck, state, seat)  # type: ignore[attr-defined]
        return canvas

    def targets(self, rules: Rules[Any], state: Any, seat: int) -> dict[str, list[Box]]:
        """Own hand cards (``hand:RANK``, several boxes for several copies) and own saves (``save:RANK``)."""
        from jericho_env.games.castles import render

        y = render.player_row_y(seat, seat)
        out: dict[str, list[Box]] = {}
        hand = [code for code, n in enumerate(state.hands[seat]) for _ in range(n)]
        for i, code in enumerate(hand):
            out.setdefault(f"hand:{code}", []).append(render.hand_card_box(i, y))
        saves = [code for code, n in enumerate(state.saves[seat]) for _ in range(n)]
        for i, code in enumerate(saves):
            out.setdefault(f"save:{code}", []).append(render.save_box(i, y))
        return out

    def words(self, rules: Rules[Any], text: str) -> str:
        """The ten as its cards show it: ``T`` -> ``10``, ``Tx2`` -> ``10x2``, ``save T`` -> ``save 10``."""
        return _CASTLES_TEN.sub("10", text)

    def keys(self, rules: Rules[Any], state: Any, action: int) -> list[str]:
        """``save:RANK`` to turn a save over; ``hand:RANK`` for every other move (how many: buttons)."""
        move = rules.actions.decode(action)  # type: ignore[attr-defined]
        return [f"save:{move.rank}"] if move.kind == "play_save" else [f"hand:{move.rank}"]


class WallsTable(Table):
    """walls: click a hand card, then your wall of a colour, any wall of the colour a trumpet names, or the supply."""

    def canvas(self, rules: Rules[Any], state: Any, seat: int | None) -> SvgCanvas:
        """The walls image (``render.draw_image``) as SVG."""
        from jericho_env.games.walls import render
        from jericho_env.games.walls.state import Phase

        canvas = SvgCanvas(render.IMAGE_W, render.image_height(state.n))
        winners = rules.winners(state) if state.phase == Phase.OVER else []  # type: ignore[attr-defined]
        render.draw_image(canvas, state, seat, rules.scoring_window(state), winners)  # type: ignore[attr-defined]
        return canvas

    def targets(self, rules: Rules[Any], state: Any, seat: int) -> dict[str, list[Box]]:
        """Own hand (``hand:TYPE``), own first-card place (``first``), the supply, own walls and every wall."""
        from jericho_env.games.walls import render
        from jericho_env.games.walls.cards import counts_to_cards

        own = render.row_top(0)  # the viewer's row is drawn first
        out: dict[str, list[Box]] = {"first": [render.first_card_box(own)], "supply": [render.SUPPLY_BOX]}
        for i, card in enumerate(counts_to_cards(state.hands[seat])):
            out.setdefault(f"hand:{card}", []).append(render.hand_card_box(i, own))
        for row in range(state.n):
            for colour in range(5):
                box = render.wall_box(colour, render.row_top(row))
                out.setdefault(f"wall:{colour}", []).append(box)
                if row == 0:
                    out[f"mywall:{colour}"] = [box]
        return out

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


TABLES: dict[str, Table] = {"grid": GridTable(), "castles": CastlesTable(), "walls": WallsTable()}


def table_for(game_id: str) -> Table:
    """The table of ``game_id``: its own, or the text view with buttons for a game without one."""
    return TABLES.get(game_id, Table())
