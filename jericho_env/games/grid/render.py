"""Text and image of a grid position from one seat's point of view (or of everything: ``seat=None``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from jericho_env.core.cards import card_to_str, cards_to_str
from jericho_env.games.grid.state import BASE, EMPTY, HAND_SIZE, Board, GridState


def table_rows(board: Board, s: GridState) -> list[str]:
    """The occupied part of the table plus a one-cell margin, with x/y labels relative to the base."""
    occupied = [cell for cell, c in enumerate(s.board) if c != EMPTY]
    xs = [board.xy[c][0] for c in occupied]
    ys = [board.xy[c][1] for c in occupied]
    half = board.size // 2
    x0, x1 = max(min(xs) - 1, -half), min(max(xs) + 1, half)
    y0, y1 = max(min(ys) - 1, -half), min(max(ys) + 1, half)
    rows = ["  y\\x " + " ".join(f"{x:>3}" for x in range(x0, x1 + 1))]
    for y in range(y1, y0 - 1, -1):
        cells = []
        for x in range(x0, x1 + 1):
            c = s.board[board.cell_of(x, y)]
            if c == EMPTY:
                cells.append("  .")
            elif c == BASE:
                cells.append(" ##")
            else:
                cells.append(f"{card_to_str(c):>3}")
        rows.append(f"  {y:>3} " + " ".join(cells))
    return rows


def _hidden(n: int) -> str:
    return f"{n} hidden card" + ("" if n == 1 else "s")


def render(board: Board, s: GridState, seat: int | None) -> str:
    """The table, hands (the opponent's hidden unless ``seat`` is None), piles, scores and turn."""
    lines = [f"table {board.size}x{board.size} (base ## at 0,0; x right, y up)"]
    lines += table_rows(board, s)
    if seat is None:
        lines.append(f"base (face down): {card_to_str(s.base_card)}")
    for p in (0, 1):
        who = f"player_{p}" + (" (you)" if p == seat else "")
        shown = seat is None or p == seat
        hand = "[" + cards_to_str(s.hands[p]) + "]" if shown else _hidden(len(s.hands[p]))
        cap = cards_to_str(s.captured[p]) or "-"
        lines.append(f"{who}: hand {hand}; {s.points[p]} points; captured {cap}")
    draw = f"{len(s.draw)} cards"
    if seat is None and s.draw:
        draw += " (top first: " + cards_to_str(reversed(s.draw)) + ")"
    lines.append(f"draw pile: {draw}; discard: {cards_to_str(s.discard) or '-'}")
    if s.passes_in_row >= 2:
        lines.append("game over: both players passed in a row")
    else:
        note = " (capture chain: place a capturing card or end)" if s.in_chain else ""
        lines.append(f"to move: player_{s.to_move}{note}")
        other = 1 - s.to_move
        if s.last_pass[other]:
            lines.append(f"player_{other} passed last turn")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- image
IMAGE_W, IMAGE_H = 980, 860  # fixed for every state and board size
TABLE_X, TABLE_Y, TABLE_PX = 16, 128, 600  # the square table area
SIDE_X = TABLE_X + TABLE_PX + 24  # the right-hand column: piles, scores, turn
ZOOM_HALVES = (4, 6, 10, 15, 25, 50)  # half-widths (cells from the base) of the views the table zooms between
SUIT_GLYPHS = "♣♦♥♠"
RANK_LABELS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")


HAND_DX, HAND_CARD_W, HAND_CARD_H = 54, 48, 66  # a hand card's step and size


def hand_card_box(slot: int, top: bool) -> tuple[float, float, float, float]:
    """Where hand ``slot`` is drawn (x, y, width, height): the hand along the top or the bottom of the image."""
    return (TABLE_X + slot * HAND_DX, 30 if top else IMAGE_H - 100, HAND_CARD_W, HAND_CARD_H)


def cell_box(board: Board, half: int, cell: int) -> tuple[float, float, float, float] | None:
    """The square of ``cell`` in a table view of half-width ``half`` (x, y, width, height); ``None`` outside it."""
    n = 2 * half + 1
    r, c = divmod(cell, board.size)
    row, col = r - (board.size // 2 - half), c - (board.size // 2 - half)
    if not (0 <= row < n and 0 <= col < n):
        return None
    step = TABLE_PX / n
    return (TABLE_X + col * step, TABLE_Y + row * step, step, step)


def card_label(card: int) -> tuple[str, tuple[int, int, int]]:
    """``("10♥", red)``: rank and suit symbol, red for hearts and diamonds."""
    from jericho_env.core.image import INK, RED

    suit = card // 13
    return RANK_LABELS[card % 13] + SUIT_GLYPHS[suit], (RED if suit in (1, 2) else INK)


def view_half(board: Board, s: GridState) -> int:
    """Half-width of the table view: the smallest zoom level showing every card with a one-cell margin.

    It depends only on where cards lie (public), so a seat's image never reveals hidden cards.
    """
    half = board.size // 2
    reach = max(board.distance[cell] for cell in s.faceup) if s.faceup else 0
    for h in ZOOM_HALVES:
        if reach + 1 <= h < half:
            return h
    return half


def render_image(board: Board, s: GridState, seat: int | None) -> np.ndarray:
    """The position as an RGB image of fixed size: table, hands (the opponent's face down), piles, scores, turn."""
    from jericho_env.core.image import Canvas

    canvas = Canvas(IMAGE_W, IMAGE_H)
    draw_image(canvas, board, s, seat)
    return canvas.to_array()


def draw_image(canvas: Any, board: Board, s: GridState, seat: int | None) -> None:
    """Draw the image of ``render_image`` on ``canvas`` (a Pillow ``Canvas``, or an ``SvgCanvas`` for the web page)."""
    bottom = 0 if seat is None else seat  # the seat whose hand is drawn along the bottom
    _draw_table(canvas, board, s, seat)
    _draw_hand(canvas, s, 1 - bottom, seat, top=True)
    _draw_hand(canvas, s, bottom, seat, top=False)
    _draw_side(canvas, board, s, seat)


def _draw_table(canvas: Any, board: Board, s: GridState, seat: int | None) -> None:
    """The square table area: cards, the base, empty cells where a card may go, coordinates."""
    from jericho_env.core.image import GOLD

    half = view_half(board, s)
    n = 2 * half + 1
    step = TABLE_PX / n
    pad = max(1.0, step * 0.06)
    canvas.draw.rectangle((TABLE_X, TABLE_Y, TABLE_X + TABLE_PX, TABLE_Y + TABLE_PX), fill=(20, 80, 48))
    tick = max(9, min(13, int(step * 0.4)))
    every = 1 if step >= 24 else 2
    for i in range(n):
        v = i - half
        if v % every == 0:
            cx = TABLE_X + (i + 0.5) * step
            canvas.text(cx, TABLE_Y - 4, str(v), size=tick, fill=(190, 220, 200), anchor="md")
            canvas.text(TABLE_X + TABLE_PX + 4, TABLE_Y + (half - v + 0.5) * step, str(v), size=tick,
                        fill=(190, 220, 200), anchor="lm")  # fmt: skip
    w = int(step - 2 * pad)
    for row in range(n):
        y = board.size // 2 - half + row
        for col in range(n):
            x = board.size // 2 - half + col
            cell = y * board.size + x
            px, py = TABLE_X + col * step + pad, TABLE_Y + row * step + pad
            c = s.board[cell]
            if c == EMPTY:
                if cell in s.frontier:
                    canvas.slot(px, py, w, w)
            elif c == BASE:
                if seat is None:
                    label, colour = card_label(s.base_card)
                    sub = "base" if w >= 40 else ""
                    canvas.card(px, py, label, colour, w=w, h=w, face=(235, 225, 190), sub=sub)
                    canvas.rect((px - 1, py - 1, px + w + 1, py + w + 1), outline=GOLD, width=2)
                else:
                    canvas.back(px, py, w, w, label="base" if w >= 40 else "")
            else:
                label, colour = card_label(c)
                canvas.card(px, py, label, colour, w=w, h=w)


def _mini_cards(canvas: Any, x: float, y: float, cards: list[int], width: int, rows: int = 2) -> None:
    """Small overlapping face-up cards in up to ``rows`` rows within ``width`` pixels."""
    if not cards:
        canvas.text(x, y + 4, "-", size=13)
        return
    w, h = 30, 38
    fits = int((width - w) // (w + 2)) + 1  # cards per row without overlap
    per_row = max(fits, -(-len(cards) // rows))
    dx = min(w + 2, (width - w) / max(1, per_row - 1))
    for i, c in enumerate(cards):
        r, k = divmod(i, per_row)
        label, colour = card_label(c)
        canvas.card(x + k * dx, y + r * (h + 4), label, colour, w=w, h=h)


def _draw_hand(canvas: Any, s: GridState, p: int, seat: int | None, top: bool) -> None:
    """A player's hand (face up if ``seat`` may see it, else backs), name, score and turn marker."""
    from jericho_env.core.image import GOLD, WHITE

    y = hand_card_box(0, top)[1]
    to_move = s.passes_in_row < 2 and s.to_move == p
    name = f"player_{p}" + (" (you)" if p == seat else "")
    label_y = y - 24
    canvas.text(TABLE_X, label_y, name, size=16, bold=True, fill=GOLD if to_move else WHITE)
    notes = [f"{s.points[p]} points"]
    if to_move:
        notes.append("TO MOVE" + (" — capture chain" if s.in_chain else ""))
    if s.last_pass[p] and s.passes_in_row < 2:
        notes.append("passed last turn")
    canvas.text(TABLE_X + 190, label_y + 2, " · ".join(notes), size=14, fill=GOLD if to_move else WHITE)
    hand = s.hands[p]
    x0 = TABLE_X
    for i in range(HAND_SIZE):
        x = hand_card_box(i, top)[0]
        if i >= len(hand):
            canvas.slot(x, y, HAND_CARD_W, HAND_CARD_H)
        elif seat is None or seat == p:
            label, colour = card_label(hand[i])
            canvas.card(x, y, label, colour, w=HAND_CARD_W, h=HAND_CARD_H, sub=f"slot {i}" if seat == p else "")
        else:
            canvas.back(x, y, HAND_CARD_W, HAND_CARD_H)
    if to_move and s.passes_in_row < 2:
        canvas.rect((x0 - 5, y - 5, x0 + 4 * HAND_DX + HAND_CARD_W + 5, y + HAND_CARD_H + 5), width=3)


def _draw_side(canvas: Any, board: Board, s: GridState, seat: int | None) -> None:
    """Draw pile, discard pile, both capture piles with their scores, and the game state line."""
    from jericho_env.core.image import GOLD, WHITE

    x = SIDE_X
    width = IMAGE_W - SIDE_X - 16
    canvas.text(x, TABLE_Y - 4, "draw pile", size=14, bold=True)
    if s.draw:
        canvas.back(x, TABLE_Y + 18, 48, 66, label=str(len(s.draw)))
    else:
        canvas.slot(x, TABLE_Y + 18, 48, 66)
    canvas.text(x + 58, TABLE_Y + 40, f"{len(s.draw)} card" + ("" if len(s.draw) == 1 else "s"), size=14)
    canvas.text(x + 150, TABLE_Y - 4, "discard", size=14, bold=True)
    if s.discard:
        label, colour = card_label(s.discard[-1])
        canvas.card(x + 150, TABLE_Y + 18, label, colour, w=48, h=66, sub="top")
    else:
        canvas.slot(x + 150, TABLE_Y + 18, 48, 66)
    canvas.text(x + 208, TABLE_Y + 40, f"{len(s.discard)} card" + ("" if len(s.discard) == 1 else "s"), size=14)
    y = TABLE_Y + 110
    bottom = 0 if seat is None else seat
    order = [1 - bottom, bottom]
    for p in order:
        who = f"player_{p}" + (" (you)" if p == seat else "")
        n = len(s.captured[p])
        canvas.text(x, y, f"{who}: {s.points[p]} points", size=14, bold=True)
        canvas.text(x + width, y + 2, f"captured {n} card" + ("" if n == 1 else "s"), size=12, anchor="ra")
        _mini_cards(canvas, x, y + 22, s.captured[p], width, rows=3)
        y += 22 + 3 * 42 + 14
    if s.passes_in_row >= 2:
        a, b = s.points
        result = "draw" if a == b else f"player_{0 if a > b else 1} wins"
        status = f"game over: {result} ({a}-{b})"
    else:
        status = f"player_{s.to_move} to move"
    canvas.text(x, y + 4, status, size=15, bold=True, fill=GOLD if s.passes_in_row < 2 else WHITE)
    if s.in_chain and s.passes_in_row < 2:
        canvas.text(x, y + 24, "in a capture chain: capture again or end", size=13, fill=GOLD)
    half = view_half(board, s)
    pale = (190, 220, 200)
    canvas.text(x, y + 50, f"table {board.size}x{board.size}, shown ±{half} around the base", size=12, fill=pale)
    canvas.text(x, y + 66, "x right, y up; frames: cells beside a card", size=12, fill=pale)
