"""A grid state to and from a JSON-able dictionary: cards as text (``"Ah"``), the table as ``{"x,y": card}``.

The table lists the face-up cards by their coordinates relative to the base; the draw pile is listed
bottom to top. Derived data (neighbour counts, the frontier, points) is rebuilt, not stored.

``from_dict`` refuses, with a ``StateFormatError`` naming the first broken condition, any dictionary
that is malformed (a missing key, as every key is required and none is given a default, or an unknown
key; wrong types: ``board_size=21.0`` or ``passes_in_row=True`` are not ints) or does not hold each of
the 52 cards once, and (``strict=True``, the default) any that play cannot reach: a face-up card that
does not match a face-up neighbour, is surrounded (it would have been captured) or, outside a capture
chain, is not joined to the base; a hand that should have been refilled; passes and capture chains that
contradict each other. ``strict=False`` keeps the first two kinds only, for positions made by hand in
tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jericho_env.core.cards import NUM_CARDS, card_to_str, str_to_card
from jericho_env.core.rules import StateFormatError
from jericho_env.core.validate import require_keys, require_mapping, strict_bool, strict_int, strict_list, text_of
from jericho_env.games.grid.knowledge import DRAW, KIND_NAMES, PLACE, entries, from_entries
from jericho_env.games.grid.state import (
    BASE,
    COMPAT,
    HAND_SIZE,
    POINTS,
    Board,
    GridState,
    captures_at,
    disconnected_cells,
    new_state,
    place,
)

KEYS = (
    "board_size",
    "base",
    "table",
    "hands",
    "draw_bottom_to_top",
    "discard",
    "captured",
    "to_move",
    "in_chain",
    "passes_in_row",
    "last_pass",
    "history",
)


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


def from_dict(board: Board, data: Mapping[str, Any], strict: bool = True) -> GridState:
    """Rebuild a state from ``to_dict``'s output; ``StateFormatError`` saying what is wrong otherwise."""
    try:
        state = _from_dict(board, data)
        if strict:
            _check_reachable(board, state)
        return state
    except StateFormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        raise StateFormatError(f"grid state: {e}") from e


def _fail(message: str) -> StateFormatError:
    return StateFormatError("grid state: " + message)


def _cards(v: Any, what: str) -> list[int]:
    if not isinstance(v, list):
        raise _fail(f"{what} must be a list of cards like 'Ah', got {v!r}")
    return [str_to_card(text_of("grid", t, what)) for t in v]


def _from_dict(board: Board, d: Mapping[str, Any]) -> GridState:
    """Parse every field, check types and ranges and that the zones hold the 52 cards once each."""
    d = require_mapping("grid", d)
    require_keys("grid", d, KEYS)
    if d["board_size"] != board.size or not isinstance(d["board_size"], int) or isinstance(d["board_size"], bool):
        raise _fail(f"it is for board_size={d['board_size']!r}, these rules use board_size={board.size}")
    hands = [sorted(_cards(h, f"hands[{i}]")) for i, h in enumerate(strict_list("grid", d["hands"], "hands", 2))]
    captured = [_cards(c, f"captured[{i}]") for i, c in enumerate(strict_list("grid", d["captured"], "captured", 2))]
    for i, h in enumerate(hands):
        if len(h) > HAND_SIZE:
            raise _fail(f"hands[{i}] holds {len(h)} cards; a hand holds at most {HAND_SIZE}")
    base = str_to_card(text_of("grid", d["base"], "base"))
    draw = _cards(d["draw_bottom_to_top"], "draw_bottom_to_top")
    discard = _cards(d["discard"], "discard")
    if not isinstance(d["table"], Mapping):
        raise _fail(f'table must be a dict {{"x,y": card}}, got {d["table"]!r}')
    table: dict[int, int] = {}
    for name, text in d["table"].items():
        try:
            x, y = (int(t) for t in str(name).split(","))
        except ValueError:
            raise _fail(f"table cell {name!r} is not written x,y (e.g. '1,-2')") from None
        cell = board.cell_of(x, y)
        if cell == board.center or cell in table:
            raise _fail(f"table cell {name} is the base's cell or given twice")
        table[cell] = str_to_card(text_of("grid", text, f"table[{name}]"))
    every = sorted([base, *table.values(), *hands[0], *hands[1], *draw, *discard, *captured[0], *captured[1]])
    if every != list(range(NUM_CARDS)):
        seen = set(every)
        extra = sorted({card_to_str(c) for c in every if every.count(c) > 1})
        lost = [card_to_str(c) for c in range(NUM_CARDS) if c not in seen]
        raise _fail(
            f"the zones must hold each of the 52 cards exactly once: twice {extra or 'none'}, missing {lost or 'none'}"
        )
    to_move = strict_int("grid", d, "to_move", 0, 1)
    in_chain = strict_bool("grid", d, "in_chain")
    passes = strict_int("grid", d, "passes_in_row", 0, 2)
    last_pass = strict_list("grid", d["last_pass"], "last_pass", 2)
    if not all(isinstance(v, bool) for v in last_pass):
        raise _fail(f"last_pass must be two booleans (one per seat), got {last_pass!r}")
    state = new_state(board, hands, draw, base, to_move)
    for cell in sorted(table):
        place(board, state, cell, table[cell])
    state.discard = discard
    state.captured = captured
    state.points = [sum(POINTS[c] for c in pile) for pile in captured]
    state.in_chain = in_chain
    state.passes_in_row = passes
    state.last_pass = list(last_pass)
    # what each seat's moves revealed of its hand; [[], []] (nothing known) in a position written by hand
    hist = d["history"]
    if not (isinstance(hist, list) and len(hist) == 2):
        raise _fail(f"history must be a list of two lists (one per seat), got {hist!r}")
    state.hist = [_history(hist[0]), _history(hist[1])]
    return state


def _check_reachable(board: Board, s: GridState) -> None:
    """What every state reached by play satisfies, beyond format and conservation; the first failure raised."""
    cells = s.board
    for cell, card in sorted(s.faceup.items()):
        where = f"{card_to_str(card)} at {board.cell_name(cell)}"
        for q in board.neighbours[cell]:
            other = cells[q]
            if 0 <= other < BASE and not COMPAT[card] >> other & 1:
                raise _fail(f"{where} matches neither the suit nor the rank of {card_to_str(other)} beside it")
        if s.nbrs[cell] == 4:
            raise _fail(f"{where} is surrounded on all four sides, so it would have been captured")
    if not s.in_chain:
        cut = disconnected_cells(board, s)
        if cut:
            names = ", ".join(f"{card_to_str(cells[c])} at {board.cell_name(c)}" for c in cut)
            raise _fail(f"{names} not joined to the base (cards cut off are discarded at the end of a turn)")
    p = s.to_move
    if s.in_chain:
        if s.passes_in_row == 2:
            raise _fail("two passes in a row ended the game, so nobody can be in a capture chain")
        if not s.captured[p]:
            raise _fail(f"in_chain says seat {p} captured this turn, but its capture pile is empty")
        if not s.hands[p] or not any(captures_at(board, s, cell) for cell in s.frontier):
            raise _fail("in_chain needs a hand card and a capturing cell (else the turn would have ended)")
    # passes_in_row counts the passes that ended the last turns; a capture chain does not reset it yet
    if s.passes_in_row == 2 and not all(s.last_pass):
        raise _fail("the game ended with two passes in a row, so last_pass must be [true, true]")
    if s.passes_in_row < 2 and s.last_pass[1 - p] != (s.passes_in_row == 1):
        raise _fail(
            f"passes_in_row is {s.passes_in_row}, so last_pass[{1 - p}] (the seat that moved last) "
            f"must be {str(s.passes_in_row == 1).lower()}"
        )
    if s.passes_in_row == 1 and s.last_pass[p]:
        raise _fail(f"seat {p} passed last turn and seat {1 - p} passed after it: that ends the game (passes_in_row 2)")
    if s.draw:
        for seat in (0, 1):
            mid_turn = seat == p and s.in_chain
            if mid_turn and len(s.hands[seat]) >= HAND_SIZE:
                raise _fail(f"hands[{seat}] holds {HAND_SIZE} cards in a capture chain, after placing a card")
            if not mid_turn and len(s.hands[seat]) != HAND_SIZE:
                raise _fail(
                    f"hands[{seat}] holds {len(s.hands[seat])} cards while the draw pile holds {len(s.draw)}: "
                    f"hands are refilled to {HAND_SIZE} at the end of each turn"
                )
