"""The card-table drawing of ``jericho_env.core.image`` as SVG text, for the web page.

``SvgCanvas`` is a ``Canvas`` whose primitives write SVG elements instead of pixels: each game's
``render.draw_image(canvas, ...)`` draws the same table into either (the ``rgb_array`` image as
vectors), and the web page's boards (``jericho_env.web.boards``), laid out for the player's screen,
draw on it too. Text is placed with
the metrics of the font the image uses (DejaVu Sans), the browser is asked for that font by name,
and the web server also serves the file itself, so the two agree to the pixel where the font is found.

Only what is drawn ends up in the SVG: a game's drawing from a seat's view never draws a hidden
card's face, so the SVG of that view holds no hidden card either.
"""

from __future__ import annotations

from html import escape
from typing import Any

from jericho_env.core.image import FELT, WHITE, Canvas, font

Colour = tuple[int, int, int]
FONT_FAMILY = "'DejaVu Sans', 'Bitstream Vera Sans', Verdana, sans-serif"
MONO_FAMILY = "'DejaVu Sans Mono', 'Bitstream Vera Sans Mono', monospace"


def _rgb(c: Colour | None) -> str:
    return "none" if c is None else f"rgb({int(c[0])},{int(c[1])},{int(c[2])})"


def _num(v: float) -> str:
    """A coordinate with at most two decimals, without trailing zeros (compact SVG)."""
    text = f"{float(v):.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


class SvgDraw:
    """The few ``PIL.ImageDraw`` calls the games make on ``canvas.draw``, as SVG elements."""

    def __init__(self, canvas: SvgCanvas) -> None:
        self.canvas = canvas

    def rectangle(
        self,
        box: tuple[float, float, float, float],
        fill: Colour | None = None,
        outline: Colour | None = None,
        width: int = 1,
    ) -> None:
        """A rectangle; Pillow's box includes its last row and column, and its outline lies inside the box."""
        self.rounded_rectangle(box, radius=0, fill=fill, outline=outline, width=width)

    def rounded_rectangle(
        self,
        box: tuple[float, float, float, float],
        radius: float = 0,
        fill: Colour | None = None,
        outline: Colour | None = None,
        width: int = 1,
    ) -> None:
        """A rectangle with rounded corners, its outline drawn inside the box as Pillow draws it."""
        x0, y0, x1, y1 = (float(v) for v in box)
        w, h = x1 - x0 + 1, y1 - y0 + 1
        inset = width / 2 if outline is not None else 0.0
        attrs = (
            f'x="{_num(x0 + inset)}" y="{_num(y0 + inset)}" width="{_num(max(0.0, w - 2 * inset))}" '
            f'height="{_num(max(0.0, h - 2 * inset))}"'
        )
        if radius:
            attrs += f' rx="{_num(max(0.0, radius - inset))}"'
        stroke = f' stroke="{_rgb(outline)}" stroke-width="{width}"' if outline is not None else ""
        self.canvas.add(f'<rect {attrs} fill="{_rgb(fill)}"{stroke}/>')

    def textlength(self, text: str, font: Any = None) -> float:
        """The advance width of ``text`` in ``font`` (a Pillow font, as ``ImageDraw.textlength`` takes)."""
        return float(font.getlength(text)) if font is not None else 6.0 * len(text)


class SvgCanvas(Canvas):
    """A ``Canvas`` that writes SVG: the games' drawing code runs unchanged on it (``to_svg`` for the text)."""

    def __init__(self, width: int, height: int, background: Colour = FELT) -> None:
        self.width, self.height = int(width), int(height)
        self.elements: list[str] = [f'<rect width="{self.width}" height="{self.height}" fill="{_rgb(background)}"/>']
        self.draw = SvgDraw(self)  # type: ignore[assignment]

    def add(self, element: str) -> None:
        """Append one SVG element (already escaped)."""
        self.elements.append(element)

    def text(
        self,
        x: float,
        y: float,
        s: str,
        size: int = 14,
        fill: Colour = WHITE,
        bold: bool = False,
        anchor: str = "la",
    ) -> None:
        """Text anchored as Pillow anchors it (``la``, ``mm``, ``rm``...), on the baseline Pillow would use."""
        ascent, descent = font(size, bold).getmetrics()
        horizontal, vertical = anchor[0], anchor[1]
        baseline = {
            "a": y + ascent,
            "t": y + ascent,
            "m": y + (ascent - descent) / 2,
            "s": y,
            "b": y - descent,
            "d": y - descent,
        }[vertical]
        align = {"l": "start", "m": "middle", "r": "end"}[horizontal]
        weight = ' font-weight="bold"' if bold else ""
        self.add(
            f'<text x="{_num(x)}" y="{_num(baseline)}" font-size="{size}" text-anchor="{align}" '
            f'fill="{_rgb(fill)}"{weight}>{escape(s, quote=False)}</text>'
        )

    def mono_text(self, x: float, y: float, s: str, size: int = 14, fill: Colour = WHITE) -> None:
        """Monospaced text with its top-left at (x, y) (the text view of games that draw nothing of their own)."""
        ascent, _ = font(size, mono=True).getmetrics()
        self.add(
            f'<text x="{_num(x)}" y="{_num(y + ascent)}" font-size="{size}" font-family="{MONO_FAMILY}" '
            f'fill="{_rgb(fill)}" xml:space="preserve">{escape(s, quote=False)}</text>'
        )

    def to_svg(self, css_class: str = "table") -> str:
        """The drawing as one ``<svg>`` element scaled by its ``viewBox`` (the image's pixels as units)."""
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="{css_class}" viewBox="0 0 {self.width} {self.height}" '
            f'width="{self.width}" height="{self.height}" font-family="{FONT_FAMILY}">'
        )
        return head + "".join(self.elements) + "</svg>"

    def to_array(self) -> Any:
        """Not available: an SVG canvas has no pixels (draw on ``Canvas`` for an image)."""
        raise TypeError("SvgCanvas holds SVG, not pixels: use to_svg(), or draw on jericho_env.core.image.Canvas")
