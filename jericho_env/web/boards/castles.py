"""castles' board for the page: each player's row (hand, saves, deck, played and discarded piles, what
has gone out of each rank) with the card(s) to beat between them, the viewer's row at the bottom.

Wide boxes keep a row on one line of cards; narrow ones (phones) put the saves and piles on a
second line and what has gone out on two more. Targets: ``hand:RANK`` (one box per copy held) and
``save:RANK`` (your face-down saves, turned over when you cannot play).
"""

from __future__ import annotations

from typing import Any

from jericho_env.games.castles.render import card_label
from jericho_env.games.castles.state import EMPTIED, Phase
from jericho_env.web.boards import NARROW, Board
from jericho_env.web.boards.pen import DIM, GOLD, INK, MIN_TEXT, PALE, PANEL, WHITE, Pen

JOKER_INK = (170, 20, 120)
PILE_FACE = (225, 220, 200)
WINNER = (120, 220, 120)
HAND_SLOTS, SAVE_SLOTS = 8, 3  # a set-up hand holds 8; three saves


def _cards(counts: list[int]) -> list[int]:
    return [code for code, n in enumerate(counts) for _ in range(n)]


def _name(deck: Any, code: int) -> str:
    """A rank as the page says it: ``7``, ``10``, ``joker``."""
    return "joker" if code == deck.joker else card_label(deck, code)


def draw(rules: Any, s: Any, seat: int | None, width: float, height: float) -> Board:
    """The board of ``s`` from ``seat``'s view (``None``: every card shown) for a box ``width`` wide."""
    narrow = width < NARROW
    geo = _Geometry(width, narrow)
    b = Board(Pen(geo.width))
    deck = rules.deck
    y: float = geo.pad
    y += _header(b.pen, deck, seat, geo, y) + 6
    below = 1 if seat is None else seat
    y += _row(b, deck, s, 1 - below, seat, geo, y) + 6
    y += _middle(b.pen, deck, s, seat, geo, y) + 6
    y += _row(b, deck, s, below, seat, geo, y)
    b.pen.finish(y + geo.pad)
    return b


class _Geometry:
    """Where things go in a row, for the box's width: card size, the x of hand, saves, piles."""

    def __init__(self, width: float, narrow: bool) -> None:
        self.narrow = narrow
        self.pad = 8 if narrow else 10
        inner = width - 2 * self.pad
        if narrow:
            self.cw = int(min(44, (inner - (HAND_SLOTS - 1) * 4) / HAND_SLOTS))
            self.ch = int(self.cw * 1.4)
            self.step = self.cw + 4
            self.hand_x = self.pad
            self.saves_x = self.pad  # on the row's second line
            self.piles_x = self.pad + SAVE_SLOTS * self.step + 14
            self.width = max(width, self.piles_x + 2 * 60 + self.cw / 2 + 34 + self.pad)
        else:
            self.cw, self.ch, self.step = 38, 54, 42
            self.hand_x = self.pad
            self.saves_x = self.hand_x + HAND_SLOTS * self.step + 8
            self.piles_x = self.saves_x + SAVE_SLOTS * self.step + 14
            self.width = self.piles_x + 2 * 60 + self.cw / 2 + 34 + self.pad  # room for "discarded" over its pile
        self.inner = self.width - 2 * self.pad


def _header(pen: Pen, deck: Any, seat: int | None, geo: _Geometry, y: float) -> float:
    order = "A high" if deck.reversed_order else "A low"
    top = "10" if deck.ranks == 10 else deck.name(deck.ranks - 1)
    title = f"castles A-{top}, {deck.size}-card decks, {order}"
    view = "every card shown" if seat is None else f"seen by player_{seat}"
    pen.text(geo.pad, y, title, size=14, bold=True)
    if geo.narrow:
        pen.text(geo.pad, y + 20, view, size=MIN_TEXT, fill=PALE)
        return 36
    pen.text(geo.width - geo.pad, y + 2, view, size=MIN_TEXT, fill=PALE, anchor="ra")
    return 20


def _row(b: Board, deck: Any, s: Any, p: int, seat: int | None, geo: _Geometry, y0: float) -> float:
    """One player's row; returns its height."""
    pen = b.pen
    sees = seat is None or seat == p
    tags = ["you"] if seat == p else ["opponent"] if seat is not None else []
    tags += ["went first"] if s.first == p else []
    name = f"player_{p}" + (f" ({', '.join(tags)})" if tags else "")
    flag, colour = "", WHITE
    if s.phase != Phase.OVER and s.to_move == p:
        flag, colour = "to move", GOLD
    elif s.phase == Phase.OVER and s.winner == p:
        flag, colour = "WINNER", WINNER
    top_card = ""
    if seat is None and s.decks[p]:
        top_card = f" · deck top {_name(deck, s.decks[p][-1])}"
    y = y0 + 4
    pen.fitted(geo.pad + 4, y, name + (f" · {flag}" if flag else "") + top_card, geo.inner - 8, size=14,
               fill=colour if flag else WHITE, bold=True)  # fmt: skip
    y += 22
    pen.text(geo.hand_x + 4, y, f"hand {s.hand_n[p]}", size=MIN_TEXT, fill=PALE)
    if not geo.narrow:
        _save_and_pile_labels(pen, s, p, sees, geo, y)
    y += 16
    hand = _cards(s.hands[p]) if sees else []
    for i in range(HAND_SLOTS):
        x = geo.hand_x + i * geo.step
        if i >= s.hand_n[p]:
            pen.place(x, y, geo.cw, geo.ch)
        elif sees:
            _face(pen, deck, x, y, hand[i], geo)
            if seat == p:
                b.target(f"hand:{hand[i]}", (x, y, geo.cw, geo.ch), f"your {_name(deck, hand[i])}")
        else:
            pen.card_back(x, y, geo.cw, geo.ch)
    if geo.narrow:
        y += geo.ch + 8
        _save_and_pile_labels(pen, s, p, sees, geo, y)
        y += 16
    _saves_and_piles(b, deck, s, p, seat, geo, y)
    y += geo.ch + 6
    y += _gone_out(pen, deck, s, p, geo, y)
    height = y - y0 + 4
    if flag:
        pen.frame(3, y0, geo.width - 3, y0 + height, colour=colour)
    return height


def _save_and_pile_labels(pen: Pen, s: Any, p: int, sees: bool, geo: _Geometry, y: float) -> None:
    pen.text(geo.saves_x + 4, y, f"saves {s.save_n[p]}" + (" (face down)" if sees else ""), size=MIN_TEXT, fill=PALE)
    for k, title in enumerate(("deck", "played", "discarded")):
        pen.text(geo.piles_x + k * 60 + geo.cw / 2, y, title, size=MIN_TEXT, fill=PALE, anchor="ma")


def _saves_and_piles(b: Board, deck: Any, s: Any, p: int, seat: int | None, geo: _Geometry, y: float) -> None:
    pen = b.pen
    sees = seat is None or seat == p
    saves = _cards(s.saves[p])
    for i in range(SAVE_SLOTS):
        x = geo.saves_x + i * geo.step
        if i >= s.save_n[p]:
            pen.place(x, y, geo.cw, geo.ch)
        elif sees:
            _known_back(pen, deck, x, y, saves[i], geo)
            if seat == p:
                b.target(f"save:{saves[i]}", (x, y, geo.cw, geo.ch), f"your face-down save {_name(deck, saves[i])}")
        else:
            pen.card_back(x, y, geo.cw, geo.ch)
    counts = (len(s.decks[p]), sum(s.pile[p]), sum(s.discard[p]))
    for k, n in enumerate(counts):
        x = geo.piles_x + k * 60
        if n == 0:
            pen.place(x, y, geo.cw, geo.ch)
            pen.text(x + geo.cw / 2, y + geo.ch / 2, "0", size=13, fill=DIM, anchor="mm")
        elif k == 0:
            pen.card_back(x, y, geo.cw, geo.ch, str(n))
        else:
            pen.face(x, y, geo.cw, geo.ch, str(n), fill=PILE_FACE, size=15)


def _gone_out(pen: Pen, deck: Any, s: Any, p: int, geo: _Geometry, y: float) -> float:
    """How many of each rank the player has played or discarded, at fixed places; returns the height used."""
    codes = list(range(deck.ranks + 1))
    per_line = 7 if geo.narrow else len(codes)
    label_w = 40
    step = (geo.inner - label_w) / per_line
    pen.text(geo.pad + 4, y, "out", size=MIN_TEXT, fill=PALE)
    for i, code in enumerate(codes):
        line, k = divmod(i, per_line)
        n = s.pile[p][code] + s.discard[p][code]
        name = "jk" if code == deck.joker else card_label(deck, code)
        pen.text(geo.pad + label_w + k * step, y + line * 17, f"{name}:{n}", size=MIN_TEXT,
                 fill=WHITE if n else DIM, bold=bool(n))  # fmt: skip
    return 17 * -(-len(codes) // per_line)


def _face(pen: Pen, deck: Any, x: float, y: float, code: int, geo: _Geometry) -> None:
    if code == deck.joker:
        pen.face(x, y, geo.cw, geo.ch, "★", ink=JOKER_INK, sub="joker" if geo.cw >= 40 else "")
    else:
        pen.face(x, y, geo.cw, geo.ch, card_label(deck, code), size=18)


def _known_back(pen: Pen, deck: Any, x: float, y: float, code: int, geo: _Geometry) -> None:
    """A face-down card its viewer knows: a back with the rank on a small tab."""
    pen.card_back(x, y, geo.cw, geo.ch)
    ink = JOKER_INK if code == deck.joker else INK
    pen.draw.rounded_rectangle((x + 5, y + geo.ch / 2 - 12, x + geo.cw - 5, y + geo.ch / 2 + 12), radius=4,
                               fill=WHITE)  # fmt: skip
    label = "★" if code == deck.joker else card_label(deck, code)
    pen.text(x + geo.cw / 2, y + geo.ch / 2, label, size=14, fill=ink, bold=True, anchor="mm")


def _middle(pen: Pen, deck: Any, s: Any, seat: int | None, geo: _Geometry, y0: float) -> float:
    """The card(s) to beat, who played them, what may follow, what the seat to move must do; returns the height."""
    x, width = geo.pad, geo.inner
    start = len(pen.elements)  # the panel goes under what the middle draws
    if s.beat < 0:
        text = "set-up: each player puts 3 of 8 cards face down as saves"
        h = 10 + pen.lines(x + 10, y0 + 10, text, width - 20, size=14, bold=True)
        h += pen.lines(x + 10, y0 + h + 2, f"player_{s.to_move} chooses ({s.pending} to go)", width - 20, fill=GOLD)
        return _panel_under(pen, geo, y0, h + 12, start)
    pen.text(x + 10, y0 + 8, "to beat", size=MIN_TEXT, bold=True, fill=PALE)
    cy = y0 + 26
    for i in range(s.beat_n):
        _face(pen, deck, x + 10 + i * geo.step, cy, s.beat, geo)
    by = f"player_{s.beat_by}" + (" (you)" if seat == s.beat_by else " (opponent)" if seat is not None else "")
    what = f"{s.beat_n} x {card_label(deck, s.beat)}" if s.beat != deck.joker else "a joker"
    lines: list[tuple[str, int, tuple[int, int, int], bool]] = [(f"{what}, played by {by}", 14, WHITE, True)]
    if s.phase == Phase.OVER:
        how = "emptied deck and hand" if s.reason == EMPTIED else f"player_{1 - s.winner} is stuck with no save"
        lines.append((f"GAME OVER: player_{s.winner} wins ({how})", 14, GOLD, True))
    elif s.beat == deck.joker:
        lines.append((f"joker: player_{s.beat_by} plays again, any card", 13, GOLD, True))
    else:
        ok = " ".join(card_label(deck, r) for r in deck.allowed[s.beat])
        lines.append((f"may go on it: {ok} or a joker", 13, WHITE, False))
    if s.phase != Phase.OVER:
        lines.append((_phase_line(s), 13, GOLD, False))
    if geo.narrow:  # the words under the cards, across the whole width
        tx, ty, tw = x + 10, cy + geo.ch + 8, width - 20
    else:
        tx = x + 10 + max(1, s.beat_n) * geo.step + 12
        ty, tw = cy, width - (tx - x) - 10
    for text, size, colour, bold in lines:
        ty += pen.lines(tx, ty, text, tw, size=size, fill=colour, bold=bold) + 3
    return _panel_under(pen, geo, y0, max(ty, cy + geo.ch) - y0 + 10, start)


def _panel_under(pen: Pen, geo: _Geometry, y0: float, height: float, start: int) -> float:
    """Draw the middle's darker panel under the elements drawn since ``start``; returns ``height``."""
    pen.draw.rounded_rectangle((geo.pad, y0, geo.width - geo.pad, y0 + height), radius=8, fill=PANEL)
    pen.elements.insert(start, pen.elements.pop())
    return height


def _phase_line(s: Any) -> str:
    p = f"player_{s.to_move}"
    if s.phase == Phase.DISCARD:
        return f"{p} cannot play, deck short: discard {s.pending} more, then take the rest of the deck"
    if s.phase == Phase.PLAY_SAVE:
        return f"{p} cannot play: hand swapped, now turns over a save"
    return f"{p} to play"
