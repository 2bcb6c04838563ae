"""Text rendering of a walls table from one seat's point of view."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
from jericho_env.games.walls.state import LENGTH_AT, OVER, PHASE_NAMES, TRUMPETS_AT, WALL_STRIDE, WallsState

if TYPE_CHECKING:
    from jericho_env.games.walls.rules import WallsRules


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


def render_text(rules: WallsRules, s: WallsState, seat: int | None) -> str:
    """The table as text; hidden cards as counts unless ``seat`` is ``None``."""
    n = s.n
    if s.phase == OVER:
        head = "game over after the third scoring"
    else:
        head = f"round {s.scored + 1} of 3, {PHASE_NAMES[s.phase]}, player_{s.to_move} to move"
    before, left = rules.scoring_window(s)
    lines = [
        f"walls ({n} players): {head}",
        f"draw pile {len(s.deck)} cards; scoring cards to come {NUM_SCORING - s.scored}"
        + _window_text(before, left, s.phase == OVER),
        _supply_line(s, seat),
    ]
    order = range(n) if seat is None else [(seat + k) % n for k in range(n)]
    for o in order:
        lines.extend(_seat_lines(rules, s, o, seat))
    return "\n".join(lines)


def _window_text(before: int, left: int, over: bool) -> str:
    if over:
        return ""
    if before == 0:
        return f" (the next is among the top {left} cards)"
    return f" (the next is among the {left} cards below the top {before})"


def _supply_line(s: WallsState, seat: int | None) -> str:
    face_down = sum(s.hidden_count)
    face_up = cards_to_str(counts_to_cards(s.supply_public))
    text = f"supply {s.supply_size} cards: face up [{face_up}], {face_down} face down"
    if seat is None:
        hidden = [f"player_{o}: {cards_to_str(counts_to_cards(h))}" for o, h in enumerate(s.supply_hidden) if any(h)]
        if hidden:
            text += " (" + "; ".join(hidden) + ")"
    elif any(s.supply_hidden[seat]):
        text += f" (yours: {cards_to_str(counts_to_cards(s.supply_hidden[seat]))})"
    return text + f"; trumpets discarded {s.discard}"


def _seat_lines(rules: WallsRules, s: WallsState, o: int, seat: int | None) -> list[str]:
    visible = seat is None or seat == o
    name = f"player_{o}" + (" (you)" if seat == o else "")
    hand = f"hand [{cards_to_str(counts_to_cards(s.hands[o]))}]" if visible else f"hand {s.hand_size[o]} cards"
    line = f"{name}: {hand}; won {rules.won_count(s, o)}"
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
TRUMPET_RGB = (235, 190, 60)
_DARK_TEXT = (False, True, False, False, True)  # colours whose face needs dark ink
_SMALL_W, _SMALL_H = 30, 42
_HEADER_H = 84
_ROW_H = 76
_HAND_X = 8
_OPEN_X = _HAND_X + 7 * (_SMALL_W + 4) + 10
_WALLS_X = _OPEN_X + _SMALL_W + 16
_WALL_W = 128
_WON_X = _WALLS_X + 5 * (_WALL_W + 6) + 6
IMAGE_W = _WON_X + 92


def image_height(n: int) -> int:
    """Height in pixels of the image for ``n`` players (the size depends on nothing else)."""
    return _HEADER_H + n * _ROW_H + 6


def render_image(rules: WallsRules, s: WallsState, seat: int | None) -> np.ndarray:
    """The table as an RGB array of fixed size: hands, face-down cards as backs, walls as coloured boxes."""
    from jericho_env.core.image import Canvas  # Pillow is imported only when an image is asked for

    canvas = Canvas(IMAGE_W, image_height(s.n))
    _draw_header(rules, canvas, s, seat)
    order = list(range(s.n)) if seat is None else [(seat + k) % s.n for k in range(s.n)]
    for row, o in enumerate(order):
        _draw_seat(rules, canvas, s, o, seat, _HEADER_H + row * _ROW_H)
    return canvas.to_array()


def _draw_small_card(canvas: Any, x: float, y: float, card: int) -> None:
    if card == TRUMPET:
        canvas.card(x, y, "T", w=_SMALL_W, h=_SMALL_H, face=TRUMPET_RGB)
        return
    colour = card // 5
    ink = (25, 25, 25) if _DARK_TEXT[colour] else (250, 250, 245)
    canvas.card(x, y, str(VALUES[card % 5]), colour=ink, w=_SMALL_W, h=_SMALL_H, face=COLOUR_RGB[colour])


def _draw_header(rules: WallsRules, canvas: Any, s: WallsState, seat: int | None) -> None:
    if s.phase == OVER:
        head = "game over"
    else:
        head = f"round {s.scored + 1}/3 - {PHASE_NAMES[s.phase]} - player_{s.to_move} to move"
    canvas.text(8, 6, head, size=15, bold=True)
    canvas.back(8, 28, w=_SMALL_W + 8, h=_SMALL_H + 4, label=str(len(s.deck)))
    canvas.text(8 + _SMALL_W + 14, 30, f"pile, {NUM_SCORING - s.scored} scoring to come", size=11)
    face_down = sum(s.hidden_count)
    canvas.back(230, 28, w=_SMALL_W + 8, h=_SMALL_H + 4, label=str(face_down))
    canvas.text(230 + _SMALL_W + 14, 30, f"supply: {s.supply_size} cards, {face_down} face down", size=11)
    x = 230 + _SMALL_W + 14
    for colour in range(5):
        k = sum(s.supply_public[colour * 5 : colour * 5 + 5])
        canvas.draw.rounded_rectangle((x, 50, x + 34, 72), radius=4, fill=COLOUR_RGB[colour], outline=(25, 25, 25))
        ink = (25, 25, 25) if _DARK_TEXT[colour] else (250, 250, 245)
        canvas.text(x + 17, 61, str(k), size=12, fill=ink, bold=True, anchor="mm")
        x += 40
    canvas.text(x + 6, 54, f"face up; trumpets discarded {s.discard}", size=11)
    if seat is not None and any(s.supply_hidden[seat]):
        mine = cards_to_str(counts_to_cards(s.supply_hidden[seat]))
        canvas.text(_WALLS_X + 300, 30, f"yours face down: {mine}"[:60], size=11)


def _draw_seat(rules: WallsRules, canvas: Any, s: WallsState, o: int, seat: int | None, y: int) -> None:
    visible = seat is None or seat == o
    name = f"player_{o}" + (" (you)" if seat == o else "")
    if s.phase != OVER and s.to_move == o:
        canvas.rect((3, y + 1, IMAGE_W - 3, y + _ROW_H - 3))
    canvas.text(_HAND_X, y + 6, name, size=13, bold=True)
    cards = counts_to_cards(s.hands[o]) if visible else []
    for i in range(7):
        x = _HAND_X + i * (_SMALL_W + 4)
        if visible and i < len(cards):
            _draw_small_card(canvas, x, y + 26, cards[i])
        elif not visible and i < s.hand_size[o]:
            canvas.back(x, y + 26, w=_SMALL_W, h=_SMALL_H)
        else:
            canvas.slot(x, y + 26, w=_SMALL_W, h=_SMALL_H)
    if s.opening[o] >= 0:
        if visible:
            _draw_small_card(canvas, _OPEN_X, y + 26, s.opening[o])
        else:
            canvas.back(_OPEN_X, y + 26, w=_SMALL_W, h=_SMALL_H)
    else:
        canvas.slot(_OPEN_X, y + 26, w=_SMALL_W, h=_SMALL_H)
    canvas.text(_OPEN_X - 4, y + 8, "first", size=10)
    for colour in range(5):
        _draw_wall(canvas, s.walls[o], colour, _WALLS_X + colour * (_WALL_W + 6), y + 22)
    canvas.text(_WON_X, y + 26, f"won {rules.won_count(s, o)}", size=14, bold=True)
    if s.hidden_count[o]:
        canvas.text(_WON_X, y + 48, f"supply +{s.hidden_count[o]}", size=11)


def _wall_values(wall: list[int], base: int) -> str:
    values = [str(VALUES[vi]) for vi in (4, 3, 2, 1, 0) for _ in range(wall[base + vi])]
    values += ["T"] * wall[base + TRUMPETS_AT]
    text = " ".join(values)
    if len(text) <= 17:
        return text
    grouped = [f"{VALUES[vi]}x{wall[base + vi]}" for vi in (4, 3, 2, 1, 0) if wall[base + vi]]
    if wall[base + TRUMPETS_AT]:
        grouped.append(f"Tx{wall[base + TRUMPETS_AT]}")
    return " ".join(grouped)


def _draw_wall(canvas: Any, wall: list[int], colour: int, x: int, y: int) -> None:
    base = colour * WALL_STRIDE
    box = (x, y, x + _WALL_W, y + 48)
    if not wall[base + LENGTH_AT]:
        canvas.draw.rounded_rectangle(box, radius=5, outline=COLOUR_RGB[colour], width=1)
        canvas.text(x + _WALL_W / 2, y + 24, COLOURS[colour], size=11, fill=COLOUR_RGB[colour], anchor="mm")
        return
    ink = (25, 25, 25) if _DARK_TEXT[colour] else (250, 250, 245)
    canvas.draw.rounded_rectangle(box, radius=5, fill=COLOUR_RGB[colour], outline=(25, 25, 25), width=2)
    canvas.text(x + 6, y + 4, f"{COLOURS[colour]} {wall[base + LENGTH_AT]}", size=13, fill=ink, bold=True)
    canvas.text(x + 6, y + 27, _wall_values(wall, base), size=11, fill=ink)
