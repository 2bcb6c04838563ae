"""The tables the page draws, laid out for the width of the player's screen.

The ``rgb_array`` image of a game (``games/<game>/render.py``) has one fixed size, made to be looked
at whole; scaled down to a phone or beside a laptop's form and move log its text shrinks to a few
pixels and its cards to specks. The page's boards are drawn here instead, from the same state and
with the same rule on hidden cards (only what the seat may see is drawn; ``seat=None``: everything),
for the space the page has: ``width`` and ``height`` of the board's box in CSS pixels, one board unit
being one CSS pixel. Under ``NARROW`` pixels (a phone held upright) a board stacks its parts in one
column; wider, it puts them side by side. Either way no text is under ``pen.MIN_TEXT`` pixels and
every card or place a player may choose is at least ``MIN_TARGET`` pixels a side, so a board that
cannot fit its width at those sizes (grid's table late in a game on a phone) is drawn wider and the
page lets the player pan it inside its box.

Each board says where its click targets are (``Board.targets``: named boxes, the names of
``jericho_env.web.tables``) and what each is, in words (``Board.labels``, box by box: read out by screen readers,
and used in the page's one-line explanations).
"""

from __future__ import annotations

import dataclasses

from jericho_env.web.boards.pen import Pen

Box = tuple[float, float, float, float]  # x, y, width, height in board units (CSS pixels)
NARROW = 600  # px: boxes narrower than this get the one-column layouts
MIN_TARGET = 26  # px: the smallest card or place a player chooses (WCAG 2.2 asks for 24)
DEFAULT_WIDTH, DEFAULT_HEIGHT = 760, 520  # the box assumed when the page does not say


@dataclasses.dataclass
class Board:
    """A drawn table: the pen holding its SVG, its click targets by name and what each target is."""

    pen: Pen
    targets: dict[str, list[Box]] = dataclasses.field(default_factory=dict)
    labels: dict[str, list[str]] = dataclasses.field(default_factory=dict)  # what each box is, box by box

    def target(self, key: str, box: Box, label: str) -> None:
        """Add a box to target ``key`` (several boxes may share one name: copies of a card) and say what it is."""
        self.targets.setdefault(key, []).append(box)
        self.labels.setdefault(key, []).append(label)


def clamp(value: float, low: float, high: float) -> float:
    """``value`` held within ``low..high``."""
    return max(low, min(high, value))
