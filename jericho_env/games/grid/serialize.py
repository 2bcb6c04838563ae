"""A grid state to and from a JSON-able dictionary: cards as text (``"Ah"``), the table as ``{"x,y": card}``.

The table lists the face-up cards by their coordinates relative to the base; the draw pile is listed
bottom to top. Derived data (neighbour counts, the frontier, points) is rebuilt, not stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jericho_env.core.cards import NUM_CARDS, card_to_str, str_to_card
from jericho_env.core.rules import StateFormatError
from jericho_env.games.grid.knowledge import DRAW, KIND_NAMES, PLACE, entries, from_entries
from jericho_env.games.grid.state import HAND_SIZE, POINTS, Board, GridState, new_state, place


def to_dict(board: Board, state: GridState) -> dict[str, Any]:
    """JSON-able position: cards as text, table as ``{"x,y": card}``."""

    def cs(cards: list[int]) -> list[str]:
        return [card_to_str(c) for c in cards]

    table = {board.cell_name(cell): card_to_str(state.faceup[cell]) for cell in sorted(state.faceup)}
    return {
        "board_size": board.size,
        "base": card_to_str(state.base_card),
        "table": table,
        "hands": [cs(state.hands[0]), cs(state.hands[1])],
        "draw_bottom_to_top": cs(state.draw),
        "discard": cs(state.discard),
        "captured": [cs(state.captured[0]), cs(state.captured[1])],
        "to_move": state.to_move,
        "in_chain": state.in_chain,
        "passes_in_row": state.passes_in_row,
        "last_pass": list(state.last_pass),
        "history": [_history_text(state.hist[0]), _history_text(state.hist[1])],
    }


def _history_text(history: Any) -> list[str]:
    """``"draw 3"``, ``"place Ah"``, ``"none Ah 2h"`` / ``"some ..."`` (the cards of the mask), oldest first."""
    out = []
    for kind, value in entries(history):
        if kind == DRAW:
            out.append(f"draw {value}")
        elif kind == PLACE:
            out.append(f"place {card_to_str(value)}")
        else:
            cards = " ".join(card_to_str(c) for c in range(NUM_CARDS) if value >> c & 1)
            out.append(f"{KIND_NAMES[kind]} {cards}")
    return out


def _history(v: Any) -> Any:
    """The persistent history from its text (see ``_history_text``)."""
    if not isinstance(v, list) or not all(isinstance(t, str) for t in v):
        raise StateFormatError(f"a seat's history must be a list of texts like 'draw 3', 'place Ah', got {v!r}")
    items = []
    for text in v:
        word, _, rest = text.partition(" ")
        if word not in KIND_NAMES:
            raise StateFormatError(f"history entry {text!r} must start with one of {', '.join(KIND_NAMES)}")
        kind = KIND_NAMES.index(word)
        if kind == DRAW:
            value = int(rest)
        elif kind == PLACE:
            value = str_to_card(rest)
        else:
            value = sum(1 << str_to_card(t) for t in rest.split())
        items.append((kind, value))
    return from_entries(items)


def from_dict(board: Board, data: Mapping[str, Any]) -> GridState:
    """Rebuild a state from ``to_dict``'s output; ``StateFormatError`` saying what is wrong otherwise."""
    try:
        return _from_dict(board, data)
    except StateFormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        raise StateFormatError(f"not a grid state: {type(e).__name__}: {e}") from e


def _from_dict(board: Board, d: Mapping[str, Any]) -> GridState:
    if not isinstance(d, Mapping):
        raise StateFormatError(f"a grid state must be a dict, got {type(d).__name__}")
    if d["board_size"] != board.size:
        raise StateFormatError(f"state is for board_size={d['board_size']}, these rules use {board.size}")

    def cards(v: Any, what: str) -> list[int]:
        if not isinstance(v, list):
            raise StateFormatError(f"{what} must be a list of cards like 'Ah', got {v!r}")
        return [str_to_card(t) for t in v]

    hands = [sorted(cards(h, "a hand")) for h in d["hands"]]
    captured = [cards(c, "a capture pile") for c in d["captured"]]
    if len(hands) != 2 or len(captured) != 2:
        raise StateFormatError("hands and captured must each hold two lists (one per seat)")
    if any(len(h) > HAND_SIZE for h in hands):
        raise StateFormatError(f"a hand holds at most {HAND_SIZE} cards")
    base = str_to_card(d["base"])
    draw = cards(d["draw_bottom_to_top"], "the draw pile")
    discard = cards(d["discard"], "the discard pile")
    table: dict[int, int] = {}
    for name, text in dict(d["table"]).items():
        x, y = (int(t) for t in str(name).split(","))
        cell = board.cell_of(x, y)
        if cell == board.center or cell in table:
            raise StateFormatError(f"table cell {name} is the base's cell or given twice")
        table[cell] = str_to_card(text)
    every = sorted([base, *table.values(), *hands[0], *hands[1], *draw, *discard, *captured[0], *captured[1]])
    if every != list(range(NUM_CARDS)):
        raise StateFormatError("the zones must hold each of the 52 cards exactly once")
    to_move, passes = d["to_move"], d["passes_in_row"]
    if (
        type(to_move) is not int
        or to_move not in (0, 1)
        or passes not in (0, 1, 2)
        or not isinstance(d["in_chain"], bool)
    ):
        raise StateFormatError("to_move must be 0 or 1, passes_in_row 0..2, in_chain a boolean")
    if not (isinstance(d["last_pass"], list) and len(d["last_pass"]) == 2):
        raise StateFormatError("last_pass must be a list of two booleans (one per seat)")
    state = new_state(board, hands, draw, base, int(to_move))
    for cell in sorted(table):
        place(board, state, cell, table[cell])
    state.discard = discard
    state.captured = captured
    state.points = [sum(POINTS[c] for c in pile) for pile in captured]
    state.in_chain = d["in_chain"]
    state.passes_in_row = int(passes)
    state.last_pass = [bool(v) for v in d["last_pass"]]
    # optional: a position written by hand has no history, so nothing is known of the hands beyond their sizes
    hist = d.get("history", [[], []])
    if not (isinstance(hist, list) and len(hist) == 2):
        raise StateFormatError("history must be a list of two lists (one per seat)")
    state.hist = [_history(hist[0]), _history(hist[1])]
    return state
