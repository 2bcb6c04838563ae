"""Drawing cards into RGB arrays with Pillow, without opening a window (the ``rgb_array`` mode).

``Canvas`` offers the few primitives the games need (a card face with rank and suit or colour,
a card back, a labelled pile, text); each game's ``render.py`` composes them. Games that draw
nothing of their own get the text view as an image (``text_image``).
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

FELT = (24, 92, 56)
WHITE = (250, 250, 245)
INK = (25, 25, 25)
RED = (200, 30, 40)
BACK = (40, 70, 160)
GOLD = (235, 190, 60)
CARD_W, CARD_H = 44, 62


@functools.lru_cache(maxsize=16)
def font(size: int, bold: bool = False, mono: bool = False):  # type: ignore[no-untyped-def]
    """DejaVu Sans (it has the suit symbols) where found, else Pillow's built-in font."""
    from PIL import ImageFont

    name = "DejaVuSans" + ("Mono" if mono else "") + ("-Bold" if bold else "") + ".ttf"
    candidates = [Path("/usr/share/fonts/truetype/dejavu") / name]
    try:
        import matplotlib

        candidates.insert(0, Path(matplotlib.__file__).parent / "mpl-data" / "fonts" / "ttf" / name)
    except ImportError:
        pass
    for path in candidates:
        if path.is_file():
            return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size=size)


class Canvas:
    """A Pillow image with card-table drawing helpers."""

    def __init__(self, width: int, height: int, background: tuple[int, int, int] = FELT) -> None:
        from PIL import Image, ImageDraw

        self.image = Image.new("RGB", (int(width), int(height)), background)
        self.draw = ImageDraw.Draw(self.image)

    def text(
        self,
        x: float,
        y: float,
        s: str,
        size: int = 14,
        fill: tuple[int, int, int] = WHITE,
        bold: bool = False,
        anchor: str = "la",
    ) -> None:
        """Text with its top-left (or ``anchor``) at (x, y)."""
        self.draw.text((x, y), s, font=font(size, bold), fill=fill, anchor=anchor)

    def card(
        self,
        x: float,
        y: float,
        label: str,
        colour: tuple[int, int, int] = INK,
        w: int = CARD_W,
        h: int = CARD_H,
        face: tuple[int, int, int] = WHITE,
        outline: tuple[int, int, int] = INK,
        sub: str = "",
    ) -> None:
        """A face-up card with ``label`` (e.g. "10♥") in ``colour``; ``sub`` is a small second line."""
        self.draw.rounded_rectangle((x, y, x + w, y + h), radius=5, fill=face, outline=outline, width=2)
        size = max(10, min(18, int(w * 0.42) if len(label) <= 2 else int(w * 0.32)))
        self.text(x + w / 2, y + h / 2 - (6 if sub else 0), label, size=size, fill=colour, bold=True, anchor="mm")
        if sub:
            self.text(x + w / 2, y + h - 10, sub, size=max(8, size - 6), fill=colour, anchor="mm")

    def back(self, x: float, y: float, w: int = CARD_W, h: int = CARD_H, label: str = "") -> None:
        """A face-down card (optionally with a count or word on it)."""
        self.draw.rounded_rectangle((x, y, x + w, y + h), radius=5, fill=BACK, outline=WHITE, width=2)
        self.draw.rounded_rectangle((x + 5, y + 5, x + w - 5, y + h - 5), radius=3, outline=(120, 150, 230), width=1)
        if label:
            self.text(x + w / 2, y + h / 2, label, size=13, fill=WHITE, bold=True, anchor="mm")

    def slot(self, x: float, y: float, w: int = CARD_W, h: int = CARD_H) -> None:
        """An empty place for a card."""
        self.draw.rounded_rectangle((x, y, x + w, y + h), radius=5, outline=(70, 130, 95), width=1)

    def rect(
        self, box: tuple[float, float, float, float], outline: tuple[int, int, int] = GOLD, width: int = 3
    ) -> None:
        """A highlight frame."""
        self.draw.rounded_rectangle(box, radius=6, outline=outline, width=width)

    def to_array(self) -> np.ndarray:
        """The image as an (H, W, 3) uint8 array."""
        return np.asarray(self.image, dtype=np.uint8).copy()


def text_image(text: str, width: int | None = None) -> np.ndarray:
    """Monospaced text on the table colour: the fallback image of any game."""
    lines = text.splitlines() or [""]
    mono = font(14, mono=True)
    w = width or 16 + 9 * max(len(line) for line in lines)
    canvas = Canvas(w, 16 + 18 * len(lines))
    for i, line in enumerate(lines):
        canvas.draw.text((8, 8 + 18 * i), line, font=mono, fill=WHITE)
    return canvas.to_array()
