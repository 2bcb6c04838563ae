"""What the page's boards draw with: an ``SvgCanvas`` whose height is set once the layout is done.

A board's unit is a CSS pixel: the page shows the SVG at its own size (scaled up only where the
window has room to spare), so a font size here is the size the player reads. No text is smaller
than ``MIN_TEXT``; ``Pen.text`` refuses smaller. Text is measured with the font the page uses
(DejaVu Sans, ``jericho_env.core.image.font``), so a line that would not fit its width is wrapped
(``wrap``) or shortened where it is drawn, never left to overflow.
"""

from __future__ import annotations

import math

from jericho_env.core.image import BACK, FELT, GOLD, INK, WHITE, font
from jericho_env.core.svg import SvgCanvas, _num, _rgb

Colour = tuple[int, int, int]
MIN_TEXT = 12  # px: the smallest text of any board (the page's tests ask for at least 11 on screen)
PALE: Colour = (200, 228, 210)  # secondary text on the felt
DIM: Colour = (160, 200, 175)  # absent things: an empty wall, a count of 0
PANEL: Colour = (18, 74, 45)  # the middle of the table, a little darker than the felt
__all__ = ["BACK", "DIM", "FELT", "GOLD", "INK", "MIN_TEXT", "PALE", "PANEL", "WHITE", "Pen", "text_width", "wrap"]


def text_width(s: str, size: int, bold: bool = False) -> float:
    """The width in pixels of ``s`` in DejaVu Sans of ``size`` (bold or not)."""
    return float(font(size, bold).getlength(s))


def wrap(s: str, size: int, width: float, bold: bool = False) -> list[str]:
    """``s`` cut into lines no wider than ``width`` at word breaks (a single word wider than it stays whole)."""
    lines: list[str] = []
    line = ""
    for word in s.split():
        candidate = f"{line} {word}" if line else word
        if line and text_width(candidate, size, bold) > width:
            lines.append(line)
            line = word
        else:
            line = candidate
    return [*lines, line] if line else lines or [""]


class Pen(SvgCanvas):
    """An ``SvgCanvas`` of a given width whose height is fixed at the end (``finish``), with the boards' shapes."""

    def __init__(self, width: float) -> None:
        super().__init__(math.ceil(width), 1)

    def finish(self, height: float) -> None:
        """Set the drawing's height (its background rectangle, the first element, follows)."""
        self.height = math.ceil(height)
        self.elements[0] = f'<rect width="{self.width}" height="{self.height}" fill="{_rgb(FELT)}"/>'

    def text(
        self,
        x: float,
        y: float,
        s: str,
        size: int = 13,
        fill: Colour = WHITE,
        bold: bool = False,
        anchor: str = "la",
    ) -> None:
        """Text as ``SvgCanvas.text`` draws it; ``ValueError`` for a size under ``MIN_TEXT``."""
        if size < MIN_TEXT:
            raise ValueError(f"board text of {size} px is under the page's smallest, {MIN_TEXT} px: {s!r}")
        super().text(x, y, s, size=size, fill=fill, bold=bold, anchor=anchor)

    def lines(
        self, x: float, y: float, s: str, width: float, size: int = 13, fill: Colour = WHITE, bold: bool = False
    ) -> float:
        """``s`` wrapped to ``width`` with its top-left at (x, y); returns the height used."""
        step = round(size * 1.3)
        rows = wrap(s, size, width, bold)
        for i, row in enumerate(rows):
            self.text(x, y + i * step, row, size=size, fill=fill, bold=bold)
        return len(rows) * step

    def fitted(
        self, x: float, y: float, s: str, width: float, size: int = 13, fill: Colour = WHITE, bold: bool = False,
        anchor: str = "la",
    ) -> None:  # fmt: skip
        """``s`` on one line, shortened with an ellipsis if it would be wider than ``width``."""
        if text_width(s, size, bold) > width:
            while len(s) > 1 and text_width(s + "…", size, bold) > width:
                s = s[:-1]
            s = s.rstrip() + "…"
        self.text(x, y, s, size=size, fill=fill, bold=bold, anchor=anchor)

    def face(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        label: str,
        ink: Colour = INK,
        fill: Colour = WHITE,
        outline: Colour = INK,
        size: int | None = None,
        sub: str = "",
    ) -> None:
        """A face-up card, ``label`` centred as large as fits (at least ``MIN_TEXT``), an optional ``sub`` line."""
        self.draw.rounded_rectangle((x, y, x + w, y + h), radius=4, fill=fill, outline=outline, width=2)
        big = size or fit_size(label, w - 6, min(20, int(h * 0.42)))
        dy = -MIN_TEXT * 0.55 if sub else 0.0
        self.text(x + w / 2, y + h / 2 + dy, label, size=big, fill=ink, bold=True, anchor="mm")
        if sub:
            self.text(x + w / 2, y + h - 4, sub, size=MIN_TEXT, fill=ink, anchor="md")

    def stacked(self, x: float, y: float, w: float, h: float, top: str, bottom: str, ink: Colour = INK) -> None:
        """A small face-up card with two short lines (a rank over its suit) where one line would not fit."""
        self.draw.rounded_rectangle((x, y, x + w, y + h), radius=3, fill=WHITE, outline=INK, width=1)
        self.text(x + w / 2, y + h * 0.3, top, size=MIN_TEXT, fill=ink, bold=True, anchor="mm")
        self.text(x + w / 2, y + h * 0.74, bottom, size=MIN_TEXT, fill=ink, bold=True, anchor="mm")

    def card_back(self, x: float, y: float, w: float, h: float, label: str = "") -> None:
        """A face-down card, with a count or word on it when given."""
        self.draw.rounded_rectangle((x, y, x + w, y + h), radius=4, fill=BACK, outline=WHITE, width=2)
        if w > 14 and h > 14:
            self.draw.rounded_rectangle((x + 4, y + 4, x + w - 4, y + h - 4), radius=3, outline=(120, 150, 230))
        if label:
            self.text(x + w / 2, y + h / 2, label, size=max(MIN_TEXT, 13), fill=WHITE, bold=True, anchor="mm")

    def place(self, x: float, y: float, w: float, h: float) -> None:
        """An empty place for a card."""
        self.draw.rounded_rectangle((x, y, x + w, y + h), radius=4, outline=(70, 130, 95), width=1)

    def frame(self, x0: float, y0: float, x1: float, y1: float, colour: Colour = GOLD, width: int = 3) -> None:
        """A highlight frame around a box (the seat to move)."""
        self.rect((x0, y0, x1, y1), outline=colour, width=width)

    def chip(self, x: float, y: float, w: float, h: float, fill: Colour, label: str = "", ink: Colour = INK) -> None:
        """A small coloured box with a label (a colour's count, a captured card)."""
        self.draw.rounded_rectangle((x, y, x + w, y + h), radius=3, fill=fill, outline=INK)
        if label:
            self.text(x + w / 2, y + h / 2, label, size=MIN_TEXT, fill=ink, bold=True, anchor="mm")

    def line(self, x0: float, y0: float, x1: float, y1: float, colour: Colour = PALE) -> None:
        """A thin line (a separator)."""
        self.add(f'<line x1="{_num(x0)}" y1="{_num(y0)}" x2="{_num(x1)}" y2="{_num(y1)}" stroke="{_rgb(colour)}"/>')


def fit_size(label: str, width: float, largest: int, bold: bool = True) -> int:
    """The largest size from ``largest`` down to ``MIN_TEXT`` at which ``label`` fits ``width`` (else ``MIN_TEXT``)."""
    size = max(largest, MIN_TEXT)
    while size > MIN_TEXT and text_width(label, size, bold) > width:
        size -= 1
    return size
