"""The games the web server keeps: played, watched or replayed, each behind its own lock.

A ``Session`` holds the rules, every state of the game so far (so any ply can be shown again), the
actions, and the agents in their seats. What leaves the server is a *view* (``Session.view``): one
seat's table (or the full one, where allowed) drawn for the page's box, that seat's legal moves when
it is a human's turn with the targets that choose each and why a target that starts no move is
refused (``jericho_env.web.tables``), and the narration of every move as that seat may know it
(``Rules.public_action_to_str``).

Who may see what:

* ``play``: only the human's seat, at any ply of the game; the seed (which determines every hidden
  card) is sent only once the game is over.
* ``watch`` and ``replay``: any seat's view, or the full view (``seat=None``), which the page marks
  as showing hidden cards. Nobody plays a hidden hand there, so there is nothing to keep hidden.

Whose games: every session belongs to the visitor who made it (``SessionStore``: a visitor is the
cookie the server hands out, ``jericho_env.web.guard``). Another visitor's session is an unknown id
to them. A visitor holds at most ``per_visitor`` sessions (beyond it, their own least recently used
goes) and the server at most ``limit`` in all: when it is full, a new game is refused (503) rather
than pushing out anyone else's. A request that came without a cookie (a script that keeps none)
is a new visitor every time, so its games share one small pool of their own (``anonymous``: beyond
it the pool's least recently used goes) and cannot fill the server for everyone; once its maker
comes back with the cookie it was given, a game leaves the pool. Games idle for ``idle_seconds``
(6 h) are forgotten, and for ``crowded_idle_seconds`` (10 min) once the server holds ``crowded``
(80 %) of its limit.

What the page shows at the end: the game's own result (``jericho_env.web.results``) beside the
reward the environment pays; looking back at an earlier position of a game, the status says in the
past tense what the last move before it was (as that seat may know it: never the next move, which
the position does not yet show), or who moved first.

Bad requests raise ``WebError`` (an HTTP status and a message naming what was wrong and what is
allowed); the session is then unchanged.
"""

from __future__ import annotations

import dataclasses
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, Literal

import numpy as np

from jericho_env.agent_plugins import PlayingAgent
from jericho_env.core.rules import JerichoError, Rules
from jericho_env.web.boards import DEFAULT_HEIGHT, DEFAULT_WIDTH
from jericho_env.web.catalog import reward_rule
from jericho_env.web.results import result_text
from jericho_env.web.tables import table_for

Kind = Literal["play", "watch", "replay"]
MAX_MESSAGE = 600  # characters of an error message: a request's own text is never echoed at length


class WebError(Exception):
    """A request the server refuses: an HTTP ``status`` and a message for the page (cut to ``MAX_MESSAGE``).

    ``field`` names the form field to change, when one is to blame (``"agent-1"``, ``"option:ranks"``,
    ``"seat"``): the page marks it beside the message.
    """

    def __init__(self, status: int, message: str, field: str | None = None) -> None:
        if len(message) > MAX_MESSAGE:
            message = message[: MAX_MESSAGE - 3] + "..."
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field

    def payload(self) -> dict[str, Any]:
        """The JSON of the answer: ``{"error": message}``, and ``"field"`` when one is named."""
        return {"error": self.message} if self.field is None else {"error": self.message, "field": self.field}


def brief(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, to name a bad value in a message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def seat_name(seat: int) -> str:
    """``player_<seat>``, the name the envs use."""
    return f"player_{seat}"


def score_text(value: float) -> str:
    """A return as a player reads it: ``+1``, ``0``, ``-1/3``, ``+0.25``; otherwise two decimals (``-0.37``)."""
    if value == 0:
        return "0"
    frac = Fraction(value).limit_denominator(12)
    if abs(float(frac) - value) < 1e-9:
        sign = "+" if frac > 0 else "-"
        whole = frac.denominator == 1
        return f"{sign}{abs(frac.numerator)}" + ("" if whole else f"/{frac.denominator}")
    return f"{value:+.2f}"


class Session:
    """One game on the server: its states so far, the actions, the agents; every call under ``self.lock``."""

    def __init__(
        self,
        sid: str,
        kind: Kind,
        rules: Rules[Any],
        start: Any,
        labels: Sequence[str],
        agents: dict[int, PlayingAgent] | None = None,
        human: int | None = None,
        seed: int | None = None,
        actions: Sequence[int] = (),
        states: Sequence[Any] | None = None,
        info: dict[str, Any] | None = None,
    ) -> None:
        self.id, self.kind, self.rules, self.seed = sid, kind, rules, seed
        self.labels = list(labels)
        self.agents = dict(agents or {})
        self.human = human
        self.info = dict(info or {})
        self.owner = ""  # the visitor who made it (SessionStore.add sets it)
        self.anonymous = False  # made by a request without a cookie: kept in the store's small pool
        self.lock = threading.Lock()
        self.touched = time.monotonic()
        self.actions: list[int] = list(actions)
        self.states: list[Any] = list(states) if states is not None else [rules.clone(start)]
        # search agents that want a full state get one redealt from their own view (never the true one)
        self._view_rng = np.random.default_rng(None if seed is None else np.random.SeedSequence([seed, 1]))
        self.table = table_for(rules.game_id)

    # ------------------------------------------------------------------ the game
    @property
    def state(self) -> Any:
        """The current state (after every action so far)."""
        return self.states[-1]

    @property
    def over(self) -> bool:
        """Whether the game has ended."""
        return self.rules.is_terminal(self.state)

    @property
    def first(self) -> int:
        """The seat that moved first (drawn by the deal in every game here): the seat to move at ply 0."""
        return self.rules.current_player(self.states[0])

    def _apply(self, action: int) -> None:
        nxt = self.rules.clone(self.state)
        self.rules.apply(nxt, action)  # checked: an illegal action leaves the session unchanged
        self.states.append(nxt)
        self.actions.append(action)

    def agent_move(self) -> int:
        """Let the agent of the seat to move play once; ``WebError`` 500 naming it if it fails."""
        state = self.state
        seat = self.rules.current_player(state)
        agent = self.agents[seat]
        try:
            hook = getattr(agent, "observe_view", None)
            if callable(hook):  # search agents (ismcts): a full state consistent with what the seat knows
                hook(self.rules.determinize(state, seat, self._view_rng))
            obs = {"observation": self.rules.observe(state, seat), "action_mask": self.rules.legal_mask(state)}
            action = int(agent.act(obs))
            self._apply(action)
        except Exception as e:  # whatever an agent raises, the page gets one line and the game stays as it was
            raise WebError(500, f"the agent of {seat_name(seat)} ({self.labels[seat]}) failed: {e}") from e
        return action

    def run_agents(self) -> None:
        """Play the agents' moves until it is the human's turn or the game is over (``play`` sessions)."""
        while not self.over and self.rules.current_player(self.state) != self.human:
            self.agent_move()

    def human_move(self, action: Any, ply: Any) -> None:
        """The human's move at ``ply`` (the ply the page showed), then the agents' replies."""
        if self.kind != "play":
            raise WebError(409, f"this is a {self.kind} session: nobody plays moves in it (start a game under Play)")
        check_ply(ply, len(self.actions))
        if self.over:
            raise WebError(409, "the game is over: start a new one")
        if self.rules.current_player(self.state) != self.human:  # cannot happen between requests: agents reply at once
            raise WebError(409, "it is not your turn")
        if isinstance(action, bool) or not isinstance(action, int):
            raise WebError(
                400, f"action must be an integer (a move's number from the view's moves), got {brief(action)}"
            )
        if not 0 <= action < self.rules.info.num_actions:
            raise WebError(
                400, f"illegal move: action {action} is not a move of this game (0..{self.rules.info.num_actions - 1})"
            )
        try:
            self._apply(action)
        except JerichoError as e:
            raise WebError(400, f"illegal move: {e}") from None
        self.run_agents()

    def step(self, ply: Any) -> None:
        """One agent move in a ``watch`` session; ``ply`` is the ply the page showed."""
        if self.kind != "watch":
            raise WebError(409, f"only watched games step on their own; this is a {self.kind} session")
        check_ply(ply, len(self.actions))
        if self.over:
            raise WebError(409, "the game is over: nothing more to watch")
        self.agent_move()

    # ------------------------------------------------------------------ what the page sees
    def check_view(self, seat: int | None, ply: int) -> None:
        """``WebError`` unless this session may show ``seat``'s view (``None``: full) at ``ply``."""
        n = self.rules.info.num_players
        if self.kind == "play" and seat != self.human:
            raise WebError(
                403,
                f"a game you play shows only your seat's view ({seat_name(self.human or 0)}); "
                "other views and the full view are for watched and replayed games",
            )
        if seat is not None and not 0 <= seat < n:
            raise WebError(400, f"seat {seat} is not a seat of this game: choose 0..{n - 1}, or all for the full view")
        if not 0 <= ply <= len(self.actions):
            raise WebError(400, f"ply {ply} is outside this game: choose 0..{len(self.actions)}")

    def view(
        self,
        seat: int | None = None,
        ply: int | None = None,
        full: bool = False,
        box: tuple[float, float] = (DEFAULT_WIDTH, DEFAULT_HEIGHT),
    ) -> dict[str, Any]:
        """What the page shows of ply ``ply`` (default: now) from ``seat``'s view (``None``: the human's in ``play``).

        ``full`` asks for the full view (every card shown): refused in ``play`` sessions. ``box`` is the
        width and height in CSS pixels the page has for the table (``jericho_env.web.boards``).
        """
        if self.kind == "play" and seat is None and not full:
            seat = self.human
        ply = len(self.actions) if ply is None else ply
        self.check_view(seat, ply)
        rules, state = self.rules, self.states[ply]
        over = rules.is_terminal(state)
        to_move = -1 if over else rules.current_player(state)
        yours = self.kind == "play" and ply == len(self.actions) and to_move == self.human
        drawing = self.table.draw(rules, state, seat, clickable=yours, width=box[0], height=box[1])
        moves = self._moves(state) if yours else []
        refusals, hints = (
            ({}, {})
            if not yours or seat is None
            else self.table.explain(rules, state, seat, drawing.targets, [m["keys"] for m in moves])
        )
        first = self.first
        out: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "game": rules.game_id,
            "options": dict(rules.options),
            "players": [
                {"seat": i, "name": seat_name(i), "agent": label, "you": i == self.human, "first": i == first}
                for i, label in enumerate(self.labels)
            ],
            "human": self.human,
            "first": first,
            "seat": seat,
            "full_view": seat is None,
            "ply": ply,
            "plies": len(self.actions),
            "to_move": to_move,
            "over": over,
            "finished": self.over,
            "your_turn": yours,
            "svg": drawing.svg,
            "width": drawing.width,
            "height": drawing.height,
            "targets": {k: [[round(v, 2) for v in b] for b in boxes] for k, boxes in drawing.targets.items()},
            "labels": drawing.labels,
            "refusals": refusals,
            "hints": hints,
            "moves": moves,
            "log": self.narration(seat, ply),
            "status": self._status(state, seat, ply, over, to_move),
            "info": self.info,
        }
        if over:
            out["returns"] = [float(r) for r in rules.returns(state)]
            out["result"] = self._result(state, seat)
        if self.kind != "play" or self.over:  # the seed deals every hidden card: never during a played game
            out["seed"] = self.seed
        return out

    def _moves(self, state: Any) -> list[dict[str, Any]]:
        rules, table = self.rules, self.table
        return [
            {
                "action": a,
                "text": table.words(rules, rules.action_to_str(state, a)),
                "keys": table.keys(rules, state, a),
            }
            for a in rules.legal_actions(state)
        ]

    def narration(self, seat: int | None, ply: int) -> list[dict[str, Any]]:
        """Every move up to ``ply`` as ``seat`` may know it (its own in full; others' face-down cards unnamed)."""
        out = []
        for k in range(ply):
            before = self.states[k]
            mover = self.rules.current_player(before)
            text = self.table.words(self.rules, self.rules.public_action_to_str(before, self.actions[k], seat))
            out.append({"ply": k + 1, "seat": mover, "who": self._who(mover, seat), "text": text})
        return out

    def _who(self, mover: int, seat: int | None) -> str:
        if self.kind == "play" and mover == self.human:
            return "you"
        return f"{seat_name(mover)} ({self.labels[mover]})"

    def _name(self, seat: int | None) -> Callable[[int], str]:
        return lambda i: "you" if self.kind == "play" and i == self.human else self._who(i, seat)

    def _result(self, state: Any, seat: int | None) -> dict[str, str]:
        """The game's own result and the reward the environment pays (see ``jericho_env.web.results``)."""
        name = self._name(seat)
        returns = self.rules.returns(state)
        reward = ", ".join(f"{name(i)} {score_text(float(r))}" for i, r in enumerate(returns))
        text = result_text(self.rules, state, name)
        return {"text": text, "reward": reward, "reward_rule": reward_rule(self.rules.game_id)}

    def _verdict(self, state: Any, seat: int | None) -> str:
        returns = [float(r) for r in self.rules.returns(state)]
        name = self._name(seat)
        if self.kind == "play" and self.human is not None:
            mine = returns[self.human]
            shared = sum(r == mine for r in returns) > 1
            if mine > 0:
                return "you share the win" if shared else "you win"
            return "you lose" if mine < 0 else "a draw"
        best = max(returns)
        if best <= 0:
            return "a draw"
        winners = [name(i) for i, r in enumerate(returns) if r == best]
        return f"{' and '.join(winners)} {'win' if len(winners) > 1 else 'wins'}"

    def _status(self, state: Any, seat: int | None, ply: int, over: bool, to_move: int) -> str:
        if over:
            return f"game over: {self._verdict(state, seat)}"
        n = len(self.actions)
        if ply < n:  # looking back at an earlier position: the move that led there, in the past tense
            name = self._name(seat)
            if ply == 0:
                return f"the start of the game ({n} moves in all): {name(to_move)} moved first"
            before = self.states[ply - 1]
            mover = self.rules.current_player(before)
            done = self.table.words(self.rules, self.rules.public_action_to_str(before, self.actions[ply - 1], seat))
            return f"after move {ply} of {n}: {name(mover)} {past_tense(done)}"
        if self.kind == "play" and to_move == self.human:
            return "your move"
        return f"{self._who(to_move, seat)} to move"


def past_tense(move: str) -> str:
    """A move's text as something done: ``played 7x2``, ``passed``, ``ended the turn``."""
    return {"pass": "passed", "end": "ended the turn"}.get(move, f"played {move}")


def _duration(seconds: float) -> str:
    """``6 h``, ``10 min``, ``45 s``."""
    if seconds >= 3600:
        return f"{seconds / 3600:g} h"
    return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"


def check_ply(ply: Any, now: int) -> None:
    """``WebError`` 409 unless the page's ``ply`` is the game's current one (a stale or doubled request)."""
    if isinstance(ply, bool) or not isinstance(ply, int):
        raise WebError(400, f"ply must be an integer: the ply of the view the move was made on, got {brief(ply)}")
    if ply != now:
        raise WebError(409, f"stale request: the game is at ply {now}, not {ply}; the view has been refreshed")


@dataclasses.dataclass
class SessionStore:
    """The sessions of one server by unguessable id, each owned by a visitor; caps per visitor, anonymous and in all.

    ``per_visitor``: a visitor's sessions beyond it push out that visitor's own least recently used
    one. ``anonymous``: the sessions made by requests without a cookie, all together (default a tenth
    of ``limit``, at least 1); beyond it the least recently used of them goes. ``limit``: the
    sessions of everyone; when full, ``add`` refuses (503) instead of pushing out another visitor's
    game. Sessions idle for ``idle_seconds`` are forgotten, and for ``crowded_idle_seconds`` once the
    store holds ``crowded`` (a fraction) of ``limit``.
    """

    limit: int = 200
    per_visitor: int = 12
    idle_seconds: float = 6 * 3600
    clock: Callable[[], float] = time.monotonic
    anonymous: int | None = None
    crowded_idle_seconds: float = 10 * 60
    crowded: float = 0.8

    def __post_init__(self) -> None:
        if not 1 <= self.per_visitor <= self.limit:
            raise ValueError(f"per_visitor must be 1..limit ({self.limit}), got {self.per_visitor}")
        if self.anonymous is None:
            self.anonymous = max(1, self.limit // 10)
        if not 1 <= self.anonymous <= self.limit:
            raise ValueError(f"anonymous must be 1..limit ({self.limit}), got {self.anonymous}")
        if not 0 < self.crowded <= 1:
            raise ValueError(f"crowded must be a fraction of the limit in (0, 1], got {self.crowded}")
        self._sessions: OrderedDict[str, Session] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()

    def new_id(self) -> str:
        """A fresh id that nobody can guess (other people's games stay theirs)."""
        return secrets.token_hex(8)

    def idle_limit(self) -> float:
        """Seconds a game may stay idle now: ``crowded_idle_seconds`` if the store is crowded, else ``idle_seconds``."""
        if len(self._sessions) >= self.crowded * self.limit:
            return min(self.idle_seconds, self.crowded_idle_seconds)
        return self.idle_seconds

    def _expire(self, now: float) -> None:
        limit = self.idle_limit()
        for sid in [s for s, v in self._sessions.items() if now - v.touched > limit]:
            del self._sessions[sid]

    def _idle_words(self) -> str:
        slow, fast = _duration(self.idle_seconds), _duration(min(self.idle_seconds, self.crowded_idle_seconds))
        return slow if slow == fast else f"{slow} ({fast} while the server is nearly full)"

    def _check_room(self, visitor: str, anonymous: bool) -> list[str]:
        """Sessions to push out to make room for one more (own ones, or the anonymous pool's); 503 if full."""
        if anonymous:  # a request without a cookie: a new visitor each time, so the pool is the cap
            pool = [sid for sid, s in self._sessions.items() if s.anonymous]
            drop = pool[: max(0, len(pool) - int(self.anonymous or 1) + 1)]
        else:
            own = [sid for sid, s in self._sessions.items() if s.owner == visitor]
            drop = own[: max(0, len(own) - self.per_visitor + 1)]
        if len(self._sessions) - len(drop) >= self.limit:
            raise WebError(
                503,
                f"the server is busy: it holds {len(self._sessions)} games, its limit (--max-games {self.limit}). "
                f"Games left idle are forgotten after {self._idle_words()}: try again in a few minutes, "
                "or close games you no longer need",
            )
        return drop

    def check_room(self, visitor: str, anonymous: bool = False) -> None:
        """``WebError`` 503 if a new session of ``visitor`` could not be kept (asked before building one)."""
        with self._lock:
            self._expire(self.clock())
            self._check_room(visitor, anonymous)

    def add(self, session: Session, visitor: str, anonymous: bool = False) -> Session:
        """Keep ``session`` as ``visitor``'s (``anonymous``: made without a cookie, in the small pool)."""
        with self._lock:
            now = self.clock()
            self._expire(now)
            for sid in self._check_room(visitor, anonymous):
                del self._sessions[sid]
            session.owner = visitor
            session.anonymous = anonymous
            session.touched = now
            self._sessions[session.id] = session
        return session

    def get(self, sid: str, visitor: str) -> Session:
        """The session ``sid`` of ``visitor``; ``WebError`` 404 for an unknown, ended, forgotten or another's id.

        A game made without a cookie whose maker comes back with the cookie it was given leaves the
        anonymous pool: it is then kept as any visitor's game.
        """
        with self._lock:
            session = self._sessions.get(sid)
            if session is not None and self.clock() - session.touched > self.idle_limit():
                del self._sessions[sid]
                session = None
            if session is None or session.owner != visitor:  # another's game is as unknown as no game
                raise WebError(
                    404,
                    f"unknown game id {sid[:40]!r}: the server does not know it (closed, idle for "
                    f"{self._idle_words()}, pushed out by your own newer games (at most "
                    f"{self.per_visitor} each), or the server restarted); start a new game",
                )
            session.touched = self.clock()
            session.anonymous = False
            self._sessions.move_to_end(sid)
            return session

    def remove(self, sid: str, visitor: str) -> None:
        """Forget ``visitor``'s session ``sid`` (404 if it is not theirs or unknown)."""
        self.get(sid, visitor)
        with self._lock:
            self._sessions.pop(sid, None)

    def owned_by(self, visitor: str) -> list[str]:
        """The ids of ``visitor``'s sessions, least recently used first."""
        with self._lock:
            return [sid for sid, s in self._sessions.items() if s.owner == visitor]

    def __len__(self) -> int:
        return len(self._sessions)
