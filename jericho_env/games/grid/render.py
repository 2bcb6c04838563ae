"""Text picture of a grid position from one seat's point of view (or of everything)."""

from __future__ import annotations

from jericho_env.core.cards import card_to_str, cards_to_str
from jericho_env.games.grid.state import BASE, EMPTY, Board, GridState


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
