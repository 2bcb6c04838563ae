"""Text and image of a castles table from one seat's point of view (hidden cards as ``?`` or card backs)."""

from __future__ import annotations

from typing import Any

import numpy as np

from jericho_env.core.image import GOLD, Canvas, font  # Pillow itself is imported only when drawing
from jericho_env.games.castles.deck import DeckSpec
from jericho_env.games.castles.state import EMPTIED, CastlesState, Phase


def counts_text(deck: DeckSpec, counts: list[int]) -> str:
    """Cards given as counts per rank code, lowest code first: ``"A 3 3 joker"`` (``"-"`` if none)."""
    words = [deck.name(code) for code, n in enumerate(counts) for _ in range(n)]
    return " ".join(words) if words else "-"


def status_text(deck: DeckSpec, s: CastlesState) -> str:
    """One line: what happens now, or who won and why."""
    p = f"player_{s.to_move}"
    if s.phase == Phase.CHOOSE_SAVES:
        return f"set-up: {p} puts a card face down as a save ({s.pending} to go)"
    if s.phase == Phase.PLAY:
        if s.beat == deck.joker:
            return f"{p} to play: extra turn after a joker, any card"
        return f"{p} to play"
    if s.phase == Phase.DISCARD:
        return f"{p} cannot play and the deck is short: discard {s.pending} more, then draw the rest of the deck"
    if s.phase == Phase.PLAY_SAVE:
        return f"{p} could not play, so swapped the hand for new cards as far as the deck allowed: turn over one save"
    w = f"player_{s.winner}"
    if s.reason == EMPTIED:
        return f"game over: {w} wins, with no cards left in deck and hand"
    return f"game over: {w} wins, player_{1 - s.winner} cannot play and has no save left"


def table_text(deck: DeckSpec, s: CastlesState) -> str:
    """The card(s) to beat and what may be played on them."""
    if s.beat < 0:
        return "to beat: nothing yet (set-up)"
    top = f"{deck.name(s.beat)}x{s.beat_n}" if s.beat_n > 1 else deck.name(s.beat)
    line = f"to beat: {top} (played by player_{s.beat_by})"
    if s.phase == Phase.OVER:
        return line
    if s.phase == Phase.PLAY_SAVE:
        return line + "; a save goes on it whatever its rank"
    if s.beat == deck.joker:
        return line + "; anything may follow"
    ok = " ".join(deck.name(r) for r in deck.allowed[s.beat])
    return line + f"; playable on it: {ok} or a joker"


def render(deck: DeckSpec, s: CastlesState, seat: int | None) -> str:
    """The table as text; ``seat=None`` shows every card, deck order included (top first)."""
    order = "reversed (A high)" if deck.reversed_order else "A low"
    top = "10" if deck.ranks == 10 else deck.name(deck.ranks - 1)
    lines = [f"castles: ranks A-{top}, {deck.size}-card decks, {order}", status_text(deck, s)]
    for p in range(2):
        sees = seat is None or seat == p
        tag = " (you)" if seat == p else ""
        hand = counts_text(deck, s.hands[p]) if sees else " ".join("?" * s.hand_n[p]) or "-"
        saves = counts_text(deck, s.saves[p]) if sees else " ".join("?" * s.save_n[p]) or "-"
        out = [a + b for a, b in zip(s.pile[p], s.discard[p], strict=True)]
        lines.append(
            f"player_{p}{tag}: deck {len(s.decks[p])}, hand {s.hand_n[p]}: {hand} | saves {s.save_n[p]}: {saves}"
        )
        lines.append(f"  played or discarded: {counts_text(deck, out)}")
        if seat is None:
            top_first = " ".join(deck.name(c) for c in reversed(s.decks[p])) or "-"
            lines.append(f"  deck, top first: {top_first}")
    lines.append(table_text(deck, s))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------- image
# Fixed geometry: the image size depends on nothing (not even the options), so it never changes in a game.
IMAGE_W, IMAGE_H = 760, 440
_CW, _CH = 44, 62  # card size
_GAP = 4
_HAND_X = 10
_SAVES_X = _HAND_X + 8 * (_CW + _GAP) + 14  # eight hand slots (a set-up hand holds 8)
_DECK_X = _SAVES_X + 3 * (_CW + _GAP) + 14
_PLAYED_X = _DECK_X + _CW + 20
_DISC_X = _PLAYED_X + _CW + 22
_ROW_H = 124
_TOP_Y, _MID_Y = 46, 46 + _ROW_H + 2
_BOTTOM_Y = _MID_Y + 126
_JOKER_RGB = (170, 20, 120)
_PILE_RGB = (225, 220, 200)


def player_row_y(p: int, seat: int | None) -> int:
    """The top of player ``p``'s row: the viewer's along the bottom (player_1's in the full view)."""
    below = 1 if seat is None else seat
    return _BOTTOM_Y if p == below else _TOP_Y


def hand_card_box(i: int, row_y: int) -> tuple[float, float, float, float]:
    """Where the ``i``-th hand card (lowest rank first) of the row at ``row_y`` is drawn: (x, y, width, height)."""
    return (_HAND_X + i * (_CW + _GAP), row_y + 38, _CW, _CH)


def save_box(i: int, row_y: int) -> tuple[float, float, float, float]:
    """Where the ``i``-th save (lowest rank first) of the row at ``row_y`` is drawn: (x, y, width, height)."""
    return (_SAVES_X + i * (_CW + _GAP), row_y + 38, _CW, _CH)


def card_label(deck: DeckSpec, code: int) -> str:
    """A rank as printed on a card: ``"A"``, ``"7"``, ``"10"``, ``"K"``; the joker is a star."""
    return "★" if code == deck.joker else ("10" if deck.name(code) == "T" else deck.name(code))


def _face(canvas: Any, deck: DeckSpec, x: float, y: float, code: int, sub: str = "") -> None:
    if code == deck.joker:
        canvas.card(x, y, "★", colour=_JOKER_RGB, w=_CW, h=_CH, sub=sub or "joker")
    else:
        canvas.card(x, y, card_label(deck, code), w=_CW, h=_CH, sub=sub)


def _known_back(canvas: Any, deck: DeckSpec, x: float, y: float, code: int) -> None:
    """A face-down card its viewer knows: a back with the rank on a small tab."""
    canvas.back(x, y, w=_CW, h=_CH)
    ink = _JOKER_RGB if code == deck.joker else (25, 25, 25)
    canvas.draw.rounded_rectangle((x + 7, y + 16, x + _CW - 7, y + 44), radius=4, fill=(250, 250, 245))
    canvas.text(x + _CW / 2, y + 30, card_label(deck, code), size=14, fill=ink, bold=True, anchor="mm")


def _cards(counts: list[int]) -> list[int]:
    return [code for code, n in enumerate(counts) for _ in range(n)]


def _draw_out(canvas: Any, deck: DeckSpec, s: CastlesState, p: int, y: float) -> None:
    """Cards of each rank the player has played or discarded: one cell per rank, at fixed places."""
    canvas.text(_HAND_X, y + 1, "gone out", size=11, fill=(215, 230, 215))
    for code in range(deck.ranks + 1):
        n = s.pile[p][code] + s.discard[p][code]
        x = _HAND_X + 62 + code * 46
        fill = (215, 230, 215) if n else (110, 160, 125)
        name = "jk" if code == deck.joker else card_label(deck, code)
        canvas.text(x, y + 1, f"{name}:{n}", size=11, fill=fill, bold=bool(n))


def _draw_player(canvas: Any, deck: DeckSpec, s: CastlesState, p: int, seat: int | None, y: int) -> None:
    """One player's row: hand, saves, deck, played and discarded piles, what has gone out."""
    sees = seat is None or seat == p
    tags = (["you"] if seat == p else ["opponent"] if seat is not None else []) + (
        ["went first"] if s.first == p else []
    )
    name = f"player_{p}" + (f" ({', '.join(tags)})" if tags else "")
    flag = ""
    if s.phase != Phase.OVER and s.to_move == p:
        canvas.rect((3, y - 4, IMAGE_W - 3, y + _ROW_H - 2))
        flag = "to move"
    elif s.phase == Phase.OVER and s.winner == p:
        canvas.rect((3, y - 4, IMAGE_W - 3, y + _ROW_H - 2), outline=(120, 220, 120))
        flag = "WINNER"
    canvas.text(_HAND_X, y, name, size=14, bold=True)
    if flag:
        x = _HAND_X + canvas.draw.textlength(name, font=font(14, bold=True)) + 12
        canvas.text(x, y, flag, size=14, bold=True, fill=GOLD)
    cy = y + 38
    canvas.text(_HAND_X, y + 21, f"hand {s.hand_n[p]}", size=11)
    hand = _cards(s.hands[p]) if sees else []
    for i in range(8):
        x = hand_card_box(i, y)[0]
        if i < s.hand_n[p]:
            if sees:
                _face(canvas, deck, x, cy, hand[i])
            else:
                canvas.back(x, cy, w=_CW, h=_CH)
        else:
            canvas.slot(x, cy, w=_CW, h=_CH)
    canvas.text(_SAVES_X, y + 21, f"saves {s.save_n[p]}" + (" (face down)" if sees else ""), size=11)
    saves = _cards(s.saves[p])
    for i in range(3):
        x = save_box(i, y)[0]
        if i < s.save_n[p]:
            if sees:
                _known_back(canvas, deck, x, cy, saves[i])
            else:
                canvas.back(x, cy, w=_CW, h=_CH)
        else:
            canvas.slot(x, cy, w=_CW, h=_CH)
    _pile(canvas, _DECK_X, y, cy, "deck", len(s.decks[p]), back=True)
    if seat is None and s.decks[p]:
        canvas.text(_DECK_X + _CW / 2, cy + _CH + 10, f"next {card_label(deck, s.decks[p][-1])}", size=10, anchor="mm")
    _pile(canvas, _PLAYED_X, y, cy, "played", sum(s.pile[p]), back=False)
    _pile(canvas, _DISC_X, y, cy, "discarded", sum(s.discard[p]), back=False)
    _draw_out(canvas, deck, s, p, cy + _CH + 5)


def _pile(canvas: Any, x: int, y: int, cy: int, title: str, n: int, back: bool) -> None:
    """A pile drawn as one card carrying its count (an empty slot when empty)."""
    canvas.text(x + _CW / 2, y + 27, title, size=11, anchor="mm")
    if n == 0:
        canvas.slot(x, cy, w=_CW, h=_CH)
        canvas.text(x + _CW / 2, cy + _CH / 2, "0", size=13, fill=(150, 190, 160), anchor="mm")
    elif back:
        canvas.back(x, cy, w=_CW, h=_CH, label=str(n))
    else:
        canvas.card(x, cy, str(n), face=_PILE_RGB, w=_CW, h=_CH)


def _draw_middle(canvas: Any, deck: DeckSpec, s: CastlesState, seat: int | None) -> None:
    """The card(s) to beat, who played them, and what may follow."""
    y = _MID_Y
    canvas.draw.rounded_rectangle((6, y, IMAGE_W - 6, y + 116), radius=8, fill=(18, 74, 45))
    if s.beat < 0:
        canvas.text(
            IMAGE_W / 2, y + 45, "set-up: each player puts 3 of 8 cards face down as saves", size=15, anchor="mm"
        )
        canvas.text(IMAGE_W / 2, y + 72, f"player_{s.to_move} chooses ({s.pending} to go)", size=13, anchor="mm")
        return
    canvas.text(16, y + 8, "to beat", size=12, bold=True)
    x0 = 16
    for i in range(s.beat_n):
        _face(canvas, deck, x0 + i * (_CW + _GAP), y + 28, s.beat)
    x = x0 + s.beat_n * (_CW + _GAP) + 16
    by = f"player_{s.beat_by}" + (" (you)" if seat == s.beat_by else " (opponent)" if seat is not None else "")
    what = f"{s.beat_n} x {card_label(deck, s.beat)}" if s.beat != deck.joker else "a joker"
    canvas.text(x, y + 28, f"{what}, played by {by}", size=14, bold=True)
    if s.phase == Phase.OVER:
        how = "emptied deck and hand" if s.reason == EMPTIED else f"player_{1 - s.winner} is stuck with no save"
        canvas.text(x, y + 56, f"GAME OVER: player_{s.winner} wins ({how})", size=15, bold=True, fill=GOLD)
        return
    if s.beat == deck.joker:
        canvas.draw.rounded_rectangle((x - 4, y + 50, x + 420, y + 76), radius=5, fill=_JOKER_RGB)
        canvas.text(
            x + 4, y + 63, f"JOKER TURN: player_{s.beat_by} plays again, any card", size=13, bold=True, anchor="lm"
        )
    else:
        ok = " ".join(card_label(deck, r) for r in deck.allowed[s.beat])
        canvas.text(x, y + 56, f"may go on it: {ok} or a joker", size=13)
    canvas.text(x, y + 86, _phase_line(s), size=13, fill=GOLD)


def _phase_line(s: CastlesState) -> str:
    p = f"player_{s.to_move}"
    if s.phase == Phase.DISCARD:
        return f"{p} cannot play, deck short: discard {s.pending} more, then take the rest of the deck"
    if s.phase == Phase.PLAY_SAVE:
        return f"{p} cannot play: hand swapped, now turns over a save"
    return f"{p} to play"


def render_image(deck: DeckSpec, s: CastlesState, seat: int | None) -> np.ndarray:
    """The table as an (H, W, 3) uint8 array of fixed size, from ``seat``'s view (``None``: all cards shown)."""
    canvas = Canvas(IMAGE_W, IMAGE_H)
    draw_image(canvas, deck, s, seat)
    return canvas.to_array()


def draw_image(canvas: Any, deck: DeckSpec, s: CastlesState, seat: int | None) -> None:
    """Draw the image of ``render_image`` on ``canvas`` (a Pillow ``Canvas``, or an ``SvgCanvas`` for the web page)."""
    order = "A high" if deck.reversed_order else "A low"
    top = "10" if deck.ranks == 10 else deck.name(deck.ranks - 1)
    view = "everything shown" if seat is None else f"seen by player_{seat}"
    canvas.text(10, 8, f"castles  A-{top}, {deck.size}-card decks, {order}", size=16, bold=True)
    canvas.text(IMAGE_W - 10, 12, view, size=12, anchor="ra")
    below = 1 if seat is None else seat
    _draw_player(canvas, deck, s, 1 - below, seat, player_row_y(1 - below, seat))
    _draw_middle(canvas, deck, s, seat)
    _draw_player(canvas, deck, s, below, seat, player_row_y(below, seat))
