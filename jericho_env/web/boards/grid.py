"""grid's board for the page: the table as far as the cards reach, the two hands, piles and scores.

The table shows the cells the cards occupy plus one cell around them (where the next card may go),
not the whole ``board_size`` window: that is what the player needs, and it keeps the cells large.
Which cells are occupied is public, so the shown area never tells a seat anything hidden. Cells are
as large as the box allows, between ``MIN_TARGET`` and ``MAX_CELL`` pixels; a card too narrow for
``10♥`` on one line shows its rank over its suit.

Narrow boxes (phones) stack the opponent's hand, the table, your hand, the piles and the captured
cards in one column; wider ones put the hands, piles and scores in a column left of the table.
Targets: ``hand:SLOT`` (your cards) and ``cell:CELL`` (the empty cells beside a card).
"""

from __future__ import annotations

from typing import Any

from jericho_env.games.grid.render import RANK_LABELS, SUIT_GLYPHS, card_label
from jericho_env.games.grid.state import BASE, EMPTY, HAND_SIZE
from jericho_env.games.grid.state import Board as GridBoard
from jericho_env.web.boards import MIN_TARGET, NARROW, Board, clamp
from jericho_env.web.boards.pen import GOLD, MIN_TEXT, PALE, PANEL, WHITE, Pen, text_width

MAX_CELL = 52  # px: the largest cell (a short game on a big screen)
MIN_REACH = 3  # cells shown at least on each side of the base (a 7x7 table at the start)
TICK_W, TICK_H = 28, 18  # room for the y coordinates left of the table and the x coordinates above it
SIDE_W = 250  # the wide layout's column of hands, piles and scores
CHIP_W, CHIP_H = 36, 22  # a captured card in the list of captures


def window(board: GridBoard, s: Any) -> tuple[int, int, int, int]:
    """``(x0, x1, y0, y1)``: the occupied cells plus one cell around them, and at least ``MIN_REACH`` from the base.

    Within the table: a small board is shown whole.
    """
    occupied = [cell for cell, c in enumerate(s.board) if c != EMPTY]
    xs = [board.xy[c][0] for c in occupied]
    ys = [board.xy[c][1] for c in occupied]
    half = board.size // 2
    lo, hi = -min(MIN_REACH, half), min(MIN_REACH, half)
    return (max(min(min(xs) - 1, lo), -half), min(max(max(xs) + 1, hi), half),
            max(min(min(ys) - 1, lo), -half), min(max(max(ys) + 1, hi), half))  # fmt: skip


def draw(rules: Any, s: Any, seat: int | None, width: float, height: float) -> Board:
    """The board of ``s`` from ``seat``'s view (``None``: every card shown) for a box of ``width`` x ``height``."""
    if width < NARROW:
        return _narrow(rules.board, s, seat, width)
    return _wide(rules.board, s, seat, width, height)


def _names(s: Any, seat: int | None) -> tuple[int, int]:
    """(the seat drawn on top, the seat drawn at the bottom): the viewer at the bottom (player_0 in the full view)."""
    bottom = 0 if seat is None else seat
    return 1 - bottom, bottom


def _narrow(board: GridBoard, s: Any, seat: int | None, width: float) -> Board:
    pad = 8
    x0, x1, y0, y1 = window(board, s)
    nx = x1 - x0 + 1
    cell = int(clamp((width - 2 * pad - TICK_W) // nx, MIN_TARGET, MAX_CELL))
    full = max(width, 2 * pad + TICK_W + nx * cell)
    b = Board(Pen(full))
    inner = width - 2 * pad  # what stays in view without panning
    top, bottom = _names(s, seat)
    y: float = pad
    y += _player_line(b.pen, s, top, seat, pad, y, inner)
    cw = 36 if seat is not None else min(52, int((inner - 4 * 6) / HAND_SIZE))  # backs need not be large
    _hand(b, s, top, seat, pad, y, cw, int(cw * 1.34), 6)
    y += int(cw * 1.34) + 12
    y += _table(b, board, s, seat, pad, y, cell, (x0, x1, y0, y1)) + 12
    y += _player_line(b.pen, s, bottom, seat, pad, y, inner)
    cw = min(62, int((inner - 4 * 8) / HAND_SIZE))
    _hand(b, s, bottom, seat, pad, y, cw, int(cw * 1.34), 8)
    y += int(cw * 1.34) + 14
    y += _piles(b.pen, s, seat, pad, y) + 10
    for p in (top, bottom):
        y += _captured(b.pen, s, p, seat, pad, y, inner, rows=3) + 8
    y += _status(b.pen, board, s, pad, y, inner)
    b.pen.finish(y + pad)
    return b


def _wide(board: GridBoard, s: Any, seat: int | None, width: float, height: float) -> Board:
    pad = 10
    x0, x1, y0, y1 = window(board, s)
    nx, ny = x1 - x0 + 1, y1 - y0 + 1
    left = pad + SIDE_W + 18  # where the table starts
    room_w = width - left - pad - TICK_W
    room_h = height - 2 * pad - TICK_H
    cell = int(clamp(min(room_w // nx, room_h // ny), MIN_TARGET, MAX_CELL))
    b = Board(Pen(left + TICK_W + nx * cell + pad))
    table_h = _table(b, board, s, seat, left, pad, cell, (x0, x1, y0, y1))
    top, bottom = _names(s, seat)
    pen = b.pen
    y: float = pad
    y += _player_line(pen, s, top, seat, pad, y, SIDE_W)
    _hand(b, s, top, seat, pad, y, 44, 60, 6)
    y += 60 + 14
    y += _piles(pen, s, seat, pad, y) + 12
    for p in (top, bottom):
        y += _captured(pen, s, p, seat, pad, y, SIDE_W, rows=2) + 8
    y += _status(pen, board, s, pad, y, SIDE_W) + 10
    y = max(y, pad + table_h - 20 - 66)  # your hand level with the table's foot when the table is taller
    y += _player_line(pen, s, bottom, seat, pad, y, SIDE_W)
    _hand(b, s, bottom, seat, pad, y, 44, 66, 6)
    y += 66
    pen.finish(max(y, pad + table_h) + pad)
    return b


def _table(b: Board, board: GridBoard, s: Any, seat: int | None, x: float, y: float, cell: int, win: Any) -> float:
    """The cells of ``win`` with their coordinates, top-left at (x, y); returns the height used."""
    pen = b.pen
    x0, x1, y0, y1 = win
    nx, ny = x1 - x0 + 1, y1 - y0 + 1
    tx, ty = x + TICK_W, y + TICK_H
    pen.draw.rectangle((tx, ty, tx + nx * cell - 1, ty + ny * cell - 1), fill=PANEL)
    for i in range(nx):
        pen.text(tx + (i + 0.5) * cell, ty - 3, str(x0 + i), size=MIN_TEXT, fill=PALE, anchor="md")
    for j in range(ny):
        pen.text(tx - 5, ty + (j + 0.5) * cell, str(y1 - j), size=MIN_TEXT, fill=PALE, anchor="rm")
    gap = max(1.0, cell * 0.05)
    w = cell - 2 * gap
    for j in range(ny):
        for i in range(nx):
            cx, cy = x0 + i, y1 - j
            c = board.cell_of(cx, cy)
            px, py = tx + i * cell + gap, ty + j * cell + gap
            content = s.board[c]
            if content == EMPTY:
                if c in s.frontier:
                    pen.place(px, py, w, w)
                    b.target(f"cell:{c}", (tx + i * cell, ty + j * cell, cell, cell), f"the empty cell at {cx},{cy}")
            elif content == BASE:
                if seat is None:
                    _card(pen, px, py, w, s.base_card)
                    pen.frame(px - 1, py - 1, px + w + 1, py + w + 1, width=2)
                else:
                    pen.card_back(px, py, w, w, "base" if w >= 44 else "")
            else:
                _card(pen, px, py, w, content)
    return TICK_H + ny * cell


def _card(pen: Pen, x: float, y: float, w: float, card: int) -> None:
    """A card on the table: ``10♥`` on one line where it fits, else the rank over the suit."""
    label, ink = card_label(card)
    if text_width(label, MIN_TEXT, True) <= w - 5:
        pen.face(x, y, w, w, label, ink=ink)
    else:
        pen.stacked(x, y, w, w, RANK_LABELS[card % 13], SUIT_GLYPHS[card // 13], ink=ink)


def _player_line(pen: Pen, s: Any, p: int, seat: int | None, x: float, y: float, width: float) -> float:
    """The seat's name and turn on one line (the seat to move in gold; points are under the captures)."""
    over = s.passes_in_row >= 2
    to_move = not over and s.to_move == p
    name = f"player_{p}" + (" (you)" if p == seat else "")
    note = " · to move" if to_move else " · passed last turn" if s.last_pass[p] and not over else ""
    pen.fitted(x, y, name + note, width, size=14, fill=GOLD if to_move else WHITE, bold=True)
    return 22


def _hand(b: Board, s: Any, p: int, seat: int | None, x: float, y: float, cw: int, ch: int, gap: int) -> None:
    """A hand of up to five: face up for its own seat (targets ``hand:SLOT``) or in the full view, else backs."""
    hand = s.hands[p]
    for i in range(HAND_SIZE):
        cx = x + i * (cw + gap)
        if i >= len(hand):
            b.pen.place(cx, y, cw, ch)
        elif seat is None or seat == p:
            label, ink = card_label(hand[i])
            b.pen.face(cx, y, cw, ch, label, ink=ink)
            if seat == p:
                b.target(f"hand:{i}", (cx, y, cw, ch), f"your {label}")
        else:
            b.pen.card_back(cx, y, cw, ch)


def _piles(pen: Pen, s: Any, seat: int | None, x: float, y: float) -> float:
    """The draw pile (a back with its count) and the discard pile (its top card); returns the height used."""
    n, d = len(s.draw), len(s.discard)
    if n:
        pen.card_back(x, y, 40, 54, str(n))
    else:
        pen.place(x, y, 40, 54)
    pen.text(x + 48, y + 8, "draw pile", size=13, bold=True)
    pen.text(x + 48, y + 28, f"{n} card" + ("" if n == 1 else "s"), size=MIN_TEXT, fill=PALE)
    dx = x + 130
    if s.discard:
        label, ink = card_label(s.discard[-1])
        pen.face(dx, y, 40, 54, label, ink=ink)
    else:
        pen.place(dx, y, 40, 54)
    pen.text(dx + 48, y + 8, "discard", size=13, bold=True)
    pen.text(dx + 48, y + 28, f"{d} card" + ("" if d == 1 else "s"), size=MIN_TEXT, fill=PALE)
    return 54


def _captured(pen: Pen, s: Any, p: int, seat: int | None, x: float, y: float, width: float, rows: int) -> float:
    """A seat's captured cards as small labels, at most ``rows`` rows (then ``+N``); returns the height used."""
    cards = s.captured[p]
    name = f"player_{p}" + (" (you)" if p == seat else "")
    pen.fitted(x, y, f"{name} captured {len(cards)}: {s.points[p]} points", width, size=13)
    y += 20
    per_row = max(1, int((width + 4) // (CHIP_W + 4)))
    shown = cards if len(cards) <= per_row * rows else cards[: per_row * rows - 1]
    for i, c in enumerate(shown):
        r, k = divmod(i, per_row)
        label, ink = card_label(c)
        pen.chip(x + k * (CHIP_W + 4), y + r * (CHIP_H + 4), CHIP_W, CHIP_H, WHITE, label, ink=ink)
    if len(shown) < len(cards):
        i = len(shown)
        r, k = divmod(i, per_row)
        pen.text(x + k * (CHIP_W + 4) + 4, y + r * (CHIP_H + 4) + CHIP_H / 2, f"+{len(cards) - i}", size=13,
                 fill=PALE, anchor="lm")  # fmt: skip
    used = -(-min(len(cards), per_row * rows) // per_row) if cards else 0
    return 20 + max(used, 1) * (CHIP_H + 4)


def _status(pen: Pen, board: GridBoard, s: Any, x: float, y: float, width: float) -> float:
    """Who is to move (or the result), the capture chain, and how to read the coordinates; returns the height."""
    if s.passes_in_row >= 2:
        a, b = s.points
        result = "a draw" if a == b else f"player_{0 if a > b else 1} wins"
        used = pen.lines(x, y, f"game over: {result} ({a}-{b})", width, size=14, bold=True)
    else:
        used = pen.lines(x, y, f"player_{s.to_move} to move", width, size=14, fill=GOLD, bold=True)
        if s.in_chain:
            used += pen.lines(x, y + used, "in a capture chain: capture again or end the turn", width, fill=GOLD)
    text = f"x right, y up from the base at 0,0; table {board.size}x{board.size}"
    return used + pen.lines(x, y + used + 2, text, width, size=MIN_TEXT, fill=PALE) + 2
