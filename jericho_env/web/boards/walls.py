"""walls' board for the page: the draw pile and the supply, then a row per seat (the viewer's first):
hand, first wall card, the five walls with what each holds, cards won.

A wall shows its colour and length on a band and its cards as values high to low (``5×2`` for two
fives), trumpets last in gold. Rows of seats whose hand the viewer cannot see are a line of facts
(hand size, cards won, face-down supply cards, first card laid) beside the walls; the viewer's row
(every row in the full view) has the hand above. Narrow boxes (phones) put the facts on a line above
the walls, which then show their length under the band.

Targets: ``hand:TYPE`` (your cards, one box per copy), ``first`` (your face-down first wall card's
place), ``supply``, ``mywall:COLOUR`` (your walls) and ``wall:COLOUR`` (that colour's wall of every
seat, for a trumpet).
"""

from __future__ import annotations

from typing import Any

from jericho_env.games.walls.cards import COLOURS, NUM_SCORING, TRUMPET, VALUES, card_to_str, counts_to_cards
from jericho_env.games.walls.render import COLOUR_RGB, TRUMPET_INK, TRUMPET_RGB, result_line, seat_order, won_count
from jericho_env.games.walls.state import LENGTH_AT, PHASE_NAMES, TRUMPETS_AT, WALL_STRIDE, Phase
from jericho_env.web.boards import NARROW, Board
from jericho_env.web.boards.pen import DIM, GOLD, INK, MIN_TEXT, PALE, WHITE, Pen, text_width

HAND_SLOTS = 7
WINNER = (120, 220, 120)
LEFT_W = 100  # the wide layout's column of facts left of each seat's walls


def _ink(colour: tuple[int, int, int]) -> tuple[int, int, int]:
    """Dark ink on a light face (yellow, white), light ink on a dark one."""
    r, g, b = colour
    return INK if 0.299 * r + 0.587 * g + 0.114 * b > 150 else WHITE


def card_name(card: int) -> str:
    """A card as the page says it: ``red-5``, ``trumpet``."""
    return "trumpet" if card == TRUMPET else card_to_str(card)


class _Geometry:
    """Sizes for the box's width: hand cards, walls, the rows' parts."""

    def __init__(self, width: float, narrow: bool) -> None:
        self.narrow = narrow
        self.pad = 8 if narrow else 10
        gap = 4 if narrow else 6
        if narrow:
            inner = width - 2 * self.pad
            self.cw = int(min(40, (inner - HAND_SLOTS * 4 - 6) / (HAND_SLOTS + 1)))
            self.wall_w = int((inner - 4 * gap) / 5)
            self.walls_x = self.pad
            self.wall_h = 17 + 15 + 3 * 15 + 6  # band, length, three lines of cards
        else:
            self.cw = 32
            self.walls_x = self.pad + LEFT_W
            self.wall_w = int(min(170, (width - 2 * self.pad - LEFT_W - 4 * gap) / 5))
            self.wall_h = 17 + 2 * 15 + 6  # band (colour and length), two lines of cards
        self.ch = int(self.cw * 1.38)
        self.gap = gap
        self.width = self.walls_x + 5 * self.wall_w + 4 * gap + self.pad
        self.inner = self.width - 2 * self.pad


def draw(rules: Any, s: Any, seat: int | None, width: float, height: float) -> Board:
    """The board of ``s`` from ``seat``'s view (``None``: every card shown) for a box ``width`` wide."""
    geo = _Geometry(width, width < NARROW)
    b = Board(Pen(geo.width))
    over = s.phase == Phase.OVER
    winners = rules.winners(s) if over else []
    y = geo.pad + _header(b, s, seat, geo, geo.pad, rules.scoring_window(s), winners) + 6
    for row, o in enumerate(seat_order(s.n, seat)):
        y += _seat(b, s, o, seat, geo, y, own=row == 0 and seat is not None, winner=o in winners) + 5
    b.pen.finish(y + geo.pad - 5)
    return b


def _header(b: Board, s: Any, seat: int | None, geo: _Geometry, y0: float, window: Any, winners: list[int]) -> float:
    """The round and who is to move (or the result), the draw pile, the supply; returns the height used."""
    pen = b.pen
    x = geo.pad
    if s.phase == Phase.OVER:
        head = "game over: " + result_line(s, winners)
    else:
        head = f"round {s.scored + 1} of 3 · {PHASE_NAMES[s.phase]} · player_{s.to_move} to move"
    y = y0 + pen.lines(x, y0, head, geo.inner, size=14, bold=True) + 2
    bw, bh = 34, 46
    pen.card_back(x, y, bw, bh, str(len(s.deck)))
    left = NUM_SCORING - s.scored
    facts = [f"{left} scoring card{'' if left == 1 else 's'} to come"]
    if s.phase != Phase.OVER:
        before, n = window
        facts.append(f"next within draws {before + 1}-{before + n}")
    pen.text(x + bw + 8, y, "draw pile", size=13, bold=True)
    for i, fact in enumerate(facts):
        pen.text(x + bw + 8, y + 16 + 15 * i, fact, size=MIN_TEXT, fill=PALE)
    if geo.narrow:
        y += bh + 8
        sx = x
    else:
        sx = x + 230
    face_down = sum(s.hidden_count)
    pen.card_back(sx, y, bw, bh, str(face_down))
    b.target("supply", (sx, y, bw, bh), "the supply")
    tx = sx + bw + 8
    room = geo.width - geo.pad - tx
    mine = ""
    if seat is not None and any(s.supply_hidden[seat]):
        mine = " (yours: " + " ".join(card_to_str(c) for c in counts_to_cards(s.supply_hidden[seat])) + ")"
    pen.fitted(tx, y, f"supply: {s.supply_size} cards, {face_down} face down{mine}", room, size=MIN_TEXT)
    cx = tx
    for colour in range(5):
        k = sum(s.supply_public[colour * 5 : colour * 5 + 5])
        pen.chip(cx, y + 15, 30, 19, COLOUR_RGB[colour], str(k), ink=_ink(COLOUR_RGB[colour]))
        cx += 34
    pen.text(cx + 4, y + 17, "face up", size=MIN_TEXT, fill=PALE)
    pen.fitted(tx, y + 36, f"trumpets: {s.supply_trumpets} in supply, {s.discard} discarded", room, size=MIN_TEXT)
    return y + 51 - y0


def _seat(b: Board, s: Any, o: int, seat: int | None, geo: _Geometry, y0: float, own: bool, winner: bool) -> float:
    """One seat's row; returns its height."""
    pen = b.pen
    visible = seat is None or seat == o
    to_move = s.phase != Phase.OVER and s.to_move == o
    name = f"player_{o}" + (" (you)" if seat == o else "")
    facts = [f"won {won_count(s, o)}"]
    if not visible:
        facts.append(f"hand {s.hand_size[o]}")
    if s.hidden_count[o]:
        facts.append(f"supply +{s.hidden_count[o]}")
    if s.opening[o] >= 0 and not visible:
        facts.append("1st card laid")
    flag = "to move" if to_move else "winner" if winner else ""
    colour = GOLD if to_move else WINNER if winner else WHITE
    y = y0 + 4
    if visible:
        _hand(b, s, o, seat, geo, geo.pad + 4, y)
        y += geo.ch + 6
    if geo.narrow:
        line = " · ".join([name + (f" ({flag})" if flag else ""), *facts])
        pen.fitted(geo.pad + 4, y, line, geo.inner - 8, size=13, fill=colour, bold=True)
        y += 20
        walls_y = y
    else:
        walls_y = y
        pen.fitted(geo.pad + 4, y, f"player_{o}", LEFT_W - 8, size=13, fill=colour, bold=True)
        lines = ([flag] if flag else []) + facts  # the viewer's own row is the one with its hand above
        for i, fact in enumerate(lines[:3]):
            pen.fitted(geo.pad + 4, y + 17 + 14 * i, fact, LEFT_W - 8, size=MIN_TEXT,
                       fill=colour if fact == flag else PALE, bold=fact == flag)  # fmt: skip
    for c in range(5):
        x = geo.walls_x + c * (geo.wall_w + geo.gap)
        _wall(pen, s.walls[o], c, x, walls_y, geo)
        box = (x, walls_y, geo.wall_w, geo.wall_h)
        owner = "your" if seat == o else f"player_{o}'s"
        b.target(f"wall:{c}", box, f"{owner} {COLOURS[c]} wall")
        if own:
            b.target(f"mywall:{c}", box, f"your {COLOURS[c]} wall")
    height = walls_y + geo.wall_h - y0 + 3
    if not geo.narrow:
        height = max(height, 4 + (geo.ch + 6 if visible else 0) + 17 + 14 * 3 + 2)
    if to_move or winner:
        pen.frame(3, y0, geo.width - 3, y0 + height, colour=colour)
    return height


def _hand(b: Board, s: Any, o: int, seat: int | None, geo: _Geometry, x: float, y: float) -> None:
    """A visible hand (targets ``hand:TYPE`` for the viewer's own) and the first wall card's place beside it."""
    pen = b.pen
    cards = counts_to_cards(s.hands[o])
    step = geo.cw + 4
    for i in range(HAND_SLOTS):
        cx = x + i * step
        if i < len(cards):
            _small_card(pen, cx, y, cards[i], geo)
            if seat == o:
                b.target(f"hand:{cards[i]}", (cx, y, geo.cw, geo.ch), f"your {card_name(cards[i])}")
        else:
            pen.place(cx, y, geo.cw, geo.ch)
    fx = x + HAND_SLOTS * step + 6
    if s.opening[o] >= 0:
        _small_card(pen, fx, y, s.opening[o], geo)
    else:
        pen.place(fx, y, geo.cw, geo.ch)
        pen.text(fx + geo.cw / 2, y + geo.ch / 2, "1st", size=MIN_TEXT, fill=DIM, anchor="mm")
    if seat == o:
        b.target("first", (fx, y, geo.cw, geo.ch), "your first wall card's place")
    if not geo.narrow:
        whose = "your hand" if seat == o else f"player_{o}'s hand"
        opening = s.phase in (Phase.OPEN_WALL, Phase.OPEN_SUPPLY)
        first = " and first wall card (face down until the reveal)" if opening else ""
        pen.text(fx + geo.cw + 10, y + geo.ch / 2, whose + first, size=MIN_TEXT, fill=PALE, anchor="lm")


def _small_card(pen: Pen, x: float, y: float, card: int, geo: _Geometry) -> None:
    if card == TRUMPET:
        pen.face(x, y, geo.cw, geo.ch, "T", ink=TRUMPET_INK, fill=TRUMPET_RGB, outline=TRUMPET_INK, size=16)
        return
    colour = COLOUR_RGB[card // 5]
    pen.face(x, y, geo.cw, geo.ch, str(VALUES[card % 5]), ink=_ink(colour), fill=colour, size=16)


def _wall(pen: Pen, wall: list[int], colour: int, x: float, y: float, geo: _Geometry) -> None:
    """One wall: its colour and length, then its values high to low (``5×2``), trumpets last."""
    base = colour * WALL_STRIDE
    w, h, bottom = geo.wall_w, geo.wall_h, y + geo.wall_h - 3
    rgb, ink = COLOUR_RGB[colour], _ink(COLOUR_RGB[colour])
    length = wall[base + LENGTH_AT]
    pen.draw.rounded_rectangle((x, y, x + w, y + h), radius=5, outline=rgb, width=2 if length else 1)
    pen.draw.rounded_rectangle((x, y, x + w, y + 17), radius=5, fill=rgb)
    name = COLOURS[colour]
    pen.text(x + 5, y + 9, name, size=MIN_TEXT, fill=ink, bold=True, anchor="lm")
    y += 19
    if not length:
        pen.text(x + 5, y, "empty", size=MIN_TEXT, fill=DIM)
        return
    if not geo.narrow:  # on the band, beside the colour: the whole word where every wall has room for it
        words = f"length {length}" if w >= 150 else f"len {length}"
        pen.text(x + w - 5, y - 10, words, size=MIN_TEXT, fill=ink, bold=True, anchor="rm")
    else:
        pen.text(x + 5, y, f"length {length}", size=MIN_TEXT)
        y += 15
    tokens = [(f"{VALUES[vi]}" + (f"×{wall[base + vi]}" if wall[base + vi] > 1 else ""), WHITE)
              for vi in (4, 3, 2, 1, 0) if wall[base + vi]]  # fmt: skip
    trumpets = wall[base + TRUMPETS_AT]
    if trumpets:
        tokens.append(("T" + (f"×{trumpets}" if trumpets > 1 else ""), TRUMPET_INK))
    _tokens(pen, x + 5, y, w - 10, tokens, int((bottom - y) // 15))


def _tokens(pen: Pen, x: float, y: float, width: float, tokens: list[tuple[str, Any]], lines: int) -> None:
    """Words laid left to right, wrapping onto at most ``lines`` lines (the last one ending in ``…`` if cut)."""
    cx, line = x, 0
    for text, colour in tokens:
        w = text_width(text, 13, True)
        if cx > x and cx + w > x + width:
            line += 1
            cx = x
        if line >= lines:
            pen.text(x + width, y + (lines - 1) * 15, "…", size=13, fill=PALE, anchor="ra")
            return
        pen.text(cx, y + line * 15, text, size=13, fill=colour, bold=True)
        cx += w + 7
