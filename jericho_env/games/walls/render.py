"""Text and image of a walls table from one seat's point of view.

Rendering reads the state and the deck constants only; what the rules derive from the set-up (the
scoring window, the winners) is passed in, so this module does not import the rules.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jericho_env.games.walls.cards import (
    COLOURS,
    NUM_SCORING,
    TRUMPET,
    VALUES,
    card_to_str,
    cards_to_str,
    counts_to_cards,
)
from jericho_env.games.walls.state import LENGTH_AT, PHASE_NAMES, TRUMPETS_AT, WALL_STRIDE, Phase, WallsState


def wall_text(wall: list[int]) -> str:
    """``red 5 4 T =11 | blue 1 =1``: each wall's cards high to low, trumpets, then its length."""
    parts = []
    for colour in range(5):
        base = colour * WALL_STRIDE
        if not wall[base + LENGTH_AT]:
            continue
        cards = [str(VALUES[vi]) for vi in (4, 3, 2, 1, 0) for _ in range(wall[base + vi])]
        cards += ["T"] * wall[base + TRUMPETS_AT]
        parts.append(f"{COLOURS[colour]} {' '.join(cards)} ={wall[base + LENGTH_AT]}")
    return " | ".join(parts) if parts else "-"


def won_count(s: WallsState, seat: int) -> int:
    """Cards ``seat`` has won so far."""
    return sum(s.won[seat])


def render_text(s: WallsState, seat: int | None, window: tuple[int, int]) -> str:
    """The table as text; hidden cards as counts unless ``seat`` is ``None``; ``window`` is the scoring window."""
    n = s.n
    over = s.phase == Phase.OVER
    if over:
        head = "game over after the third scoring"
    else:
        head = f"round {s.scored + 1} of 3, {PHASE_NAMES[s.phase]}, player_{s.to_move} to move"
    before, left = window
    lines = [
        f"walls ({n} players): {head}",
        f"draw pile {len(s.deck)} cards; scoring cards to come {NUM_SCORING - s.scored}"
        + _window_text(before, left, over),
        _supply_line(s, seat),
    ]
    order = range(n) if seat is None else [(seat + k) % n for k in range(n)]
    for o in order:
        lines.extend(_seat_lines(s, o, seat))
    return "\n".join(lines)


def _window_text(before: int, left: int, over: bool) -> str:
    if over:
        return ""
    if before == 0:
        return f" (the next is among the top {left} cards)"
    return f" (the next is among the {left} cards below the top {before})"


def _supply_line(s: WallsState, seat: int | None) -> str:
    face_down = sum(s.hidden_count)
    face_up = cards_to_str(counts_to_cards(s.supply_public) + [TRUMPET] * s.supply_trumpets)
    text = f"supply {s.supply_size} cards: face up [{face_up}], {face_down} face down"
    if seat is None:
        hidden = [f"player_{o}: {cards_to_str(counts_to_cards(h))}" for o, h in enumerate(s.supply_hidden) if any(h)]
        if hidden:
            text += " (" + "; ".join(hidden) + ")"
    elif any(s.supply_hidden[seat]):
        text += f" (yours: {cards_to_str(counts_to_cards(s.supply_hidden[seat]))})"
    return text + f"; trumpets discarded {s.discard}"


def _seat_lines(s: WallsState, o: int, seat: int | None) -> list[str]:
    visible = seat is None or seat == o
    name = f"player_{o}" + (" (you)" if seat == o else "")
    hand = f"hand [{cards_to_str(counts_to_cards(s.hands[o]))}]" if visible else f"hand {s.hand_size[o]} cards"
    line = f"{name}: {hand}; won {won_count(s, o)}"
    if s.hidden_count[o] and not visible:
        line += f"; face down in supply {s.hidden_count[o]}"
    if s.opening[o] >= 0:
        line += f"; first wall card face down: {card_to_str(s.opening[o]) if visible else '?'}"
    return [line, f"    walls: {wall_text(s.walls[o])}"]


# ---------------------------------------------------------------------------------------------- image
COLOUR_RGB: tuple[tuple[int, int, int], ...] = (
    (140, 90, 45),  # brown
    (235, 195, 50),  # yellow
    (45, 95, 200),  # blue
    (200, 35, 45),  # red
    (245, 245, 240),  # white
)
TRUMPET_RGB = (55, 40, 75)  # a dark face with a gold "T": unlike any colour of wall card
TRUMPET_INK = (240, 195, 60)
_DARK_TEXT = (False, True, False, False, True)  # colours whose face needs dark ink
_INK = (25, 25, 25)
_LIGHT = (250, 250, 245)
_DIM = (150, 190, 165)
_SMALL_W, _SMALL_H = 30, 42  # hand cards
_MINI_W, _MINI_H, _MINI_GAP = 21, 28, 4  # wall cards, one per value present (a stack when several)
_HEADER_H = 84
_ROW_H = 86
_HAND_X = 8
_OPEN_X = _HAND_X + 7 * (_SMALL_W + 4) + 10
_WALLS_X = _OPEN_X + _SMALL_W + 16
_WALL_W = 6 * (_MINI_W + _MINI_GAP) + 8
_WALL_H = 64
_WON_X = _WALLS_X + 5 * (_WALL_W + 6) + 6
IMAGE_W = _WON_X + 100


def image_height(n: int) -> int:
    """Height in pixels of the image for ``n`` players (the size depends on nothing else)."""
    return _HEADER_H + n * _ROW_H + 6


def render_image(s: WallsState, seat: int | None, window: tuple[int, int], winners: list[int]) -> np.ndarray:
    """The table as an RGB array of fixed size: hands, face-down cards as backs, walls as stacks of cards.

    ``window`` is the scoring window and ``winners`` the seats sharing the best result (shown once the game is over).
    """
    from jericho_env.core.image import Canvas  # Pillow is imported only when an image is asked for

    canvas = Canvas(IMAGE_W, image_height(s.n))
    draw_image(canvas, s, seat, window, winners)
    return canvas.to_array()


def seat_order(n: int, seat: int | None) -> list[int]:
    """The seats in the order their rows are drawn, top to bottom: ``seat`` first, then ``(seat + k) % n``."""
    return list(range(n)) if seat is None else [(seat + k) % n for k in range(n)]


def draw_image(canvas: Any, s: WallsState, seat: int | None, window: tuple[int, int], winners: list[int]) -> None:
    """Draw the image of ``render_image`` on ``canvas`` (a Pillow ``Canvas``, or an ``SvgCanvas`` for the web page)."""
    _draw_header(canvas, s, seat, window, winners)
    for row, o in enumerate(seat_order(s.n, seat)):
        _draw_seat(canvas, s, o, seat, row_top(row))


def row_top(row: int) -> int:
    """The top of the ``row``-th seat row (``seat_order`` gives the seat of each row)."""
    return _HEADER_H + row * _ROW_H


def hand_card_box(i: int, y: int) -> tuple[float, float, float, float]:
    """Where the ``i``-th hand card (by type) of the seat row at ``y`` is drawn: (x, y, width, height)."""
    return (_HAND_X + i * (_SMALL_W + 4), y + 28, _SMALL_W, _SMALL_H)


def first_card_box(y: int) -> tuple[float, float, float, float]:
    """Where the face-down first wall card of the seat row at ``y`` lies ("1st"): (x, y, width, height)."""
    return (_OPEN_X, y + 28, _SMALL_W, _SMALL_H)


def wall_box(colour: int, y: int) -> tuple[float, float, float, float]:
    """The frame of the ``colour`` wall of the seat row at ``y``: (x, y, width, height)."""
    return (_WALLS_X + colour * (_WALL_W + 6), y + 12, _WALL_W, _WALL_H)


SUPPLY_BOX = (250.0, 30.0, float(_SMALL_W + 8), float(_SMALL_H + 4))  # the supply's face-down pile in the header


def _ink(colour: int) -> tuple[int, int, int]:
    return _INK if _DARK_TEXT[colour] else _LIGHT


def _draw_small_card(canvas: Any, x: float, y: float, card: int) -> None:
    if card == TRUMPET:
        canvas.card(x, y, "T", colour=TRUMPET_INK, w=_SMALL_W, h=_SMALL_H, face=TRUMPET_RGB, outline=TRUMPET_INK)
        return
    colour = card // 5
    canvas.card(x, y, str(VALUES[card % 5]), colour=_ink(colour), w=_SMALL_W, h=_SMALL_H, face=COLOUR_RGB[colour])


def _draw_mini_stack(
    canvas: Any, x: float, y: float, label: str, count: int, face: tuple[int, int, int], ink: tuple[int, int, int]
) -> None:
    """``count`` cards of one value as a small stack showing the value, with ``xN`` under it when several."""
    outline = TRUMPET_INK if face == TRUMPET_RGB else _INK
    for k in range(min(count, 3) - 1, 0, -1):  # the cards underneath peek out to the upper right
        canvas.draw.rounded_rectangle(
            (x + 3 * k, y - 3 * k, x + _MINI_W + 3 * k, y + _MINI_H - 3 * k), radius=3, fill=face, outline=outline
        )
    canvas.draw.rounded_rectangle((x, y, x + _MINI_W, y + _MINI_H), radius=3, fill=face, outline=outline, width=2)
    canvas.text(x + _MINI_W / 2, y + _MINI_H / 2, label, size=13, fill=ink, bold=True, anchor="mm")
    if count > 1:
        canvas.text(x + _MINI_W / 2 + 2, y + _MINI_H + 7, f"x{count}", size=11, fill=_LIGHT, bold=True, anchor="mm")


def result_line(s: WallsState, winners: list[int]) -> str:
    """Who won and why: the most cards won, and the tie-break (cards in walls) where it decided or still ties."""
    won = [sum(s.won[p]) for p in range(s.n)]
    names = " and ".join(f"player_{w}" for w in winners)
    verb = "share the win" if len(winners) > 1 else "wins"
    best = won[winners[0]]
    tied = [p for p in range(s.n) if won[p] == best]
    if len(tied) == 1:
        return f"{names} {verb}: most cards won ({best})"
    walls = {p: sum(sum(s.walls[p][c * WALL_STRIDE : c * WALL_STRIDE + LENGTH_AT]) for c in range(5)) for p in tied}
    detail = ", ".join(f"player_{p} {walls[p]}" for p in tied)
    return f"{names} {verb}: {best} cards won, tie-break by cards in walls ({detail})"


def _draw_header(canvas: Any, s: WallsState, seat: int | None, window: tuple[int, int], winners: list[int]) -> None:
    if s.phase == Phase.OVER:
        head = "game over - " + result_line(s, winners)
    else:
        head = f"round {s.scored + 1}/3 - {PHASE_NAMES[s.phase]} - player_{s.to_move} to move"
    canvas.text(8, 6, head, size=15, bold=True)
    canvas.back(8, 30, w=_SMALL_W + 8, h=_SMALL_H + 4, label=str(len(s.deck)))
    canvas.text(8 + _SMALL_W + 14, 32, "draw pile", size=11)
    canvas.text(
        8 + _SMALL_W + 14,
        48,
        f"{NUM_SCORING - s.scored} scoring card{'' if NUM_SCORING - s.scored == 1 else 's'} to come",
        size=11,
    )
    if s.phase != Phase.OVER:
        before, left = window
        canvas.text(8 + _SMALL_W + 14, 64, f"next within draws {before + 1}-{before + left}", size=11)
    face_down = sum(s.hidden_count)
    sx = int(SUPPLY_BOX[0])
    canvas.back(sx, SUPPLY_BOX[1], w=_SMALL_W + 8, h=_SMALL_H + 4, label=str(face_down))
    canvas.text(
        sx + _SMALL_W + 14, 32, f"supply: {s.supply_size} cards, {face_down} face down; face up by colour:", size=11
    )
    x = sx + _SMALL_W + 14
    for colour in range(5):
        k = sum(s.supply_public[colour * 5 : colour * 5 + 5])
        canvas.draw.rounded_rectangle((x, 50, x + 34, 74), radius=4, fill=COLOUR_RGB[colour], outline=_INK)
        canvas.text(x + 17, 62, str(k), size=13, fill=_ink(colour), bold=True, anchor="mm")
        x += 40
    canvas.text(x + 6, 56, f"trumpets: {s.supply_trumpets} in supply, {s.discard} discarded", size=11)
    if seat is not None and any(s.supply_hidden[seat]):
        mine = cards_to_str(counts_to_cards(s.supply_hidden[seat]))
        canvas.text(_WALLS_X + 420, 32, f"yours face down: {mine}"[:64], size=11)


def _draw_seat(canvas: Any, s: WallsState, o: int, seat: int | None, y: int) -> None:
    visible = seat is None or seat == o
    name = f"player_{o}" + (" (you)" if seat == o else "")
    if s.phase != Phase.OVER and s.to_move == o:
        canvas.rect((3, y + 1, IMAGE_W - 3, y + _ROW_H - 3))
        name += "  to move"
    canvas.text(_HAND_X, y + 6, name, size=13, bold=True)
    cards = counts_to_cards(s.hands[o]) if visible else []
    for i in range(7):
        x = hand_card_box(i, y)[0]
        if visible and i < len(cards):
            _draw_small_card(canvas, x, y + 28, cards[i])
        elif not visible and i < s.hand_size[o]:
            canvas.back(x, y + 28, w=_SMALL_W, h=_SMALL_H)
        else:
            canvas.slot(x, y + 28, w=_SMALL_W, h=_SMALL_H)
    canvas.text(_OPEN_X + _SMALL_W / 2, y + 14, "1st", size=10, fill=_DIM, anchor="mm")
    if s.opening[o] >= 0:
        if visible:
            _draw_small_card(canvas, _OPEN_X, y + 28, s.opening[o])
        else:
            canvas.back(_OPEN_X, y + 28, w=_SMALL_W, h=_SMALL_H)
    else:
        canvas.slot(_OPEN_X, y + 28, w=_SMALL_W, h=_SMALL_H)
    for colour in range(5):
        x, top = wall_box(colour, y)[:2]
        _draw_wall(canvas, s.walls[o], colour, int(x), int(top))
    canvas.text(_WON_X, y + 24, f"won {won_count(s, o)}", size=15, bold=True)
    if s.hidden_count[o]:
        canvas.text(_WON_X, y + 48, f"supply +{s.hidden_count[o]}", size=11)


def _draw_wall(canvas: Any, wall: list[int], colour: int, x: int, y: int) -> None:
    """One wall: its colour and length, then one small card per value present (high to low), trumpets last."""
    base = colour * WALL_STRIDE
    box = (x, y, x + _WALL_W, y + _WALL_H)
    length = wall[base + LENGTH_AT]
    canvas.draw.rounded_rectangle(box, radius=5, outline=COLOUR_RGB[colour], width=2 if length else 1)
    if not length:
        canvas.text(x + _WALL_W / 2, y + _WALL_H / 2, f"no {COLOURS[colour]} wall", size=11, fill=_DIM, anchor="mm")
        return
    canvas.draw.rounded_rectangle((x, y, x + _WALL_W, y + 16), radius=5, fill=COLOUR_RGB[colour])
    canvas.text(x + 6, y + 8, COLOURS[colour], size=11, fill=_ink(colour), bold=True, anchor="lm")
    canvas.text(x + _WALL_W - 6, y + 8, f"length {length}", size=11, fill=_ink(colour), bold=True, anchor="rm")
    cx = x + 5
    for vi in (4, 3, 2, 1, 0):
        if wall[base + vi]:
            _draw_mini_stack(canvas, cx, y + 23, str(VALUES[vi]), wall[base + vi], COLOUR_RGB[colour], _ink(colour))
            cx += _MINI_W + _MINI_GAP
    if wall[base + TRUMPETS_AT]:
        _draw_mini_stack(canvas, cx, y + 23, "T", wall[base + TRUMPETS_AT], TRUMPET_RGB, TRUMPET_INK)
