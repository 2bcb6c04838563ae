"""Play a game in the terminal against any agent, seeing only what your seat sees.

``python -m jericho_env.play GAME [--opponent AGENT] [--seat N] [--seed S] [--option KEY=VALUE] [--save-png PATH]``

Other players' moves are narrated as this seat sees them (``Rules.public_action_to_str``: a card
laid face down is not named), and the table, the final one included, is drawn from this seat's view.

Type a move's code (listed before each prompt, case does not matter) or its number in the
list; ``moves`` lists them again, ``board`` shows the table, ``help`` explains, ``quit`` leaves.
A wrong entry is answered with a message and a new prompt; the game is unchanged.

The opponents come from the installed agent providers (``jericho_env.agent_plugins``: this
project's ``agents`` once installed, else only the built-in ``random``); this package never imports
``agents`` itself.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, TextIO

from jericho_env import agent_plugins
from jericho_env.core.rules import JerichoError, OptionError, parse_option_text
from jericho_env.core.validate import seed_from_text, shift_seed
from jericho_env.envs.aec import JerichoEnv
from jericho_env.registry import GAME_IDS
from jericho_env.user_agents import reset_agent

HELP = """Commands:
  <code>   play the move with that code (as listed), e.g. the first word of a listed line
  <n>      play the n-th move of the list
  moves    list the legal moves again
  board    show the table again
  help     this text
  quit     leave the game"""


def parse_option(text: str) -> tuple[str, Any]:
    """argparse type for ``--option KEY=VALUE``."""
    try:
        return parse_option_text(text)
    except OptionError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


class TerminalGame:
    """One game between a human at ``seat`` and agents in the other seats."""

    def __init__(
        self, env: JerichoEnv, seat: int, opponents: dict[int, Any], out: TextIO, read: Callable[[str], str]
    ) -> None:
        self.env, self.seat, self.opponents, self.out, self.read = env, seat, opponents, out, read
        self.rules = env.rules

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def moves_text(self) -> str:
        legal = self.rules.legal_actions(self.env.state)
        codes = [self.rules.action_to_str(self.env.state, a) for a in legal]
        width = max(len(str(len(codes))), 1)
        return "\n".join(f"  {i + 1:>{width}}. {c}" for i, c in enumerate(codes))

    def board(self) -> None:
        self.say(self.rules.render_text(self.env.state, self.seat))

    def human_turn(self) -> bool:
        """Read until a legal move is played (True) or the human quits (False)."""
        self.say()
        self.board()
        self.say("your moves:")
        self.say(self.moves_text())
        while True:
            try:
                line = self.read("> ").strip()
            except EOFError:
                self.say("\n(end of input: leaving the game)")
                return False
            if not line:
                self.say("type a move's code or number (help for commands)")
                continue
            low = line.lower()
            if low in ("quit", "exit", "q"):
                return False
            if low in ("help", "h", "?"):
                self.say(HELP)
                continue
            if low == "moves":
                self.say(self.moves_text())
                continue
            if low == "board":
                self.board()
                continue
            action = self.parse(line)
            if action is None:
                continue
            self.env.step(action)
            self.say(f"you play {self.last_text}")
            return True

    def parse(self, line: str) -> int | None:
        legal = self.rules.legal_actions(self.env.state)
        if line.isdigit():
            k = int(line)
            if 1 <= k <= len(legal):
                self.last_text = self.rules.action_to_str(self.env.state, legal[k - 1])
                return legal[k - 1]
            self.say(f"there is no move {k}: choose 1..{len(legal)} (moves lists them)")
            return None
        try:
            action = self.rules.str_to_action(self.env.state, line)
        except JerichoError:
            self.say(f"{line!r} is not a legal move here; type moves to list them, help for commands")
            return None
        self.last_text = self.rules.action_to_str(self.env.state, action)
        return action

    def play(self) -> int:
        """Play to the end; return 0 when finished, 1 when the human quit."""
        env = self.env
        while not self.rules.is_terminal(env.state):
            p = self.rules.current_player(env.state)
            if p == self.seat:
                if not self.human_turn():
                    self.say("game abandoned.")
                    return 1
                continue
            agent_id = env.possible_agents[p]
            action = agent_plugins.choose_action(self.opponents[p], env, agent_id)
            text = self.rules.public_action_to_str(env.state, action, self.seat)  # no face-down card named
            env.step(action)
            self.say(f"{agent_id} plays {text}")
        self.say()
        self.say("== game over ==")
        self.say(self.rules.render_text(env.state, self.seat))  # what the rules have shown this seat, no more
        returns = self.rules.returns(env.state)
        mine = returns[self.seat]
        verdict = "you win" if mine > 0 else ("you lose" if mine < 0 else "a draw")
        self.say(
            f"result: {verdict} (returns by seat: {', '.join(f'player_{i} {r:+g}' for i, r in enumerate(returns))})"
        )
        return 0


def _seed(text: str) -> int:
    """``--seed``: a whole number in 0..2**63-1 (argparse names the flag in the error)."""
    try:
        return seed_from_text(text)
    except OptionError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def main(argv: list[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Command-line entry point."""
    p = argparse.ArgumentParser(prog="python -m jericho_env.play", description=__doc__.splitlines()[0])
    p.add_argument("game", help=f"one of {', '.join(GAME_IDS)}")
    p.add_argument(
        "--opponent",
        default="random",
        help="agent of an installed provider (ours: random, greedy, greedy-capture, ppo=PATH, ismcts=BUDGET) or "
        "your own, LABEL=pkg.module:attr or LABEL=path/to/file.py:attr (docs/your-agent.md); default random",
    )
    p.add_argument("--seat", type=int, default=0, help="your seat, 0-based (default 0)")
    p.add_argument("--seed", type=_seed, default=None, help="seed of the deal and the opponents: 0..2**63-1")
    p.add_argument("--save-png", default=None, metavar="PATH", help="save a picture of the final table (your view)")
    p.add_argument("--option", type=parse_option, action="append", default=[], metavar="KEY=VALUE", help="game option")
    trust = "let --opponent ppo=PATH load a Stable-Baselines3 zip, which unpickles code: only for files you trust"
    p.add_argument("--trust-checkpoint", action="store_true", help=trust)
    args = p.parse_args(argv)
    out = stdout or sys.stdout
    inp = stdin or sys.stdin

    def read(prompt: str) -> str:
        out.write(prompt)
        out.flush()
        line = inp.readline()
        if not line:
            raise EOFError
        if not inp.isatty():  # piped input: echo it so a transcript reads like a session
            out.write(line if line.endswith("\n") else line + "\n")
        return line

    try:
        env = JerichoEnv(args.game, **dict(args.option))
        n = env.rules.info.num_players
        if not 0 <= args.seat < n:
            raise ValueError(f"--seat {args.seat} is not a seat of this game: choose 0..{n - 1}")
        label, name, kwargs = agent_plugins.parse_spec(args.opponent, args.game)
        if args.trust_checkpoint and "path" in kwargs:
            kwargs["trust"] = True
        opponents = {}
        for s in range(n):
            if s != args.seat:
                opponents[s] = agent_plugins.make_agent(name, args.game, **kwargs, **dict(args.option))
                reset_agent(opponents[s], None if args.seed is None else shift_seed(args.seed, 1 + s))
        env.reset(seed=args.seed)
    except (JerichoError, ValueError, OSError, ImportError) as e:
        p.exit(2, f"{p.prog}: error: {e}\n")
    print(f"{args.game}: you are player_{args.seat}; opponents: {label} (type help for commands)", file=out)
    status = TerminalGame(env, args.seat, opponents, out, read).play()
    if args.save_png:
        from PIL import Image

        Image.fromarray(env.rules.render_image(env.state, args.seat)).save(args.save_png)
        print(f"saved the final table to {args.save_png}", file=out)
    return status


if __name__ == "__main__":
    sys.exit(main())
