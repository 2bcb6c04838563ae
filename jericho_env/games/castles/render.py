"""Text of a castles table from one seat's point of view (hidden cards shown as ``?``)."""

from __future__ import annotations

from jericho_env.games.castles.deck import DeckSpec
from jericho_env.games.castles.state import CHOOSE_SAVES, DISCARD, EMPTIED, OVER, PLAY, PLAY_SAVE, CastlesState


def counts_text(deck: DeckSpec, counts: list[int]) -> str:
    """Cards given as counts per rank code, lowest code first: ``"A 3 3 joker"`` (``"-"`` if none)."""
    words = [deck.name(code) for code, n in enumerate(counts) for _ in range(n)]
    return " ".join(words) if words else "-"


def status_text(deck: DeckSpec, s: CastlesState) -> str:
    """One line: what happens now, or who won and why."""
    p = f"player_{s.to_move}"
    if s.phase == CHOOSE_SAVES:
        return f"set-up: {p} puts a card face down as a save ({s.pending} to go)"
    if s.phase == PLAY:
        if s.beat == deck.joker:
            return f"{p} to play: extra turn after a joker, any card"
        return f"{p} to play"
    if s.phase == DISCARD:
        return f"{p} cannot play and the deck is short: discard {s.pending} more, then draw the rest of the deck"
    if s.phase == PLAY_SAVE:
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
    if s.phase == OVER:
        return line
    if s.phase == PLAY_SAVE:
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
