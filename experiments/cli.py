"""Command-line plumbing shared by the ``experiments`` commands: argument types, the parser, errors, progress."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from jericho_env.core.rules import JerichoError, OptionError, parse_option_text


def parse_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with VALUE parsed as int, bool (true/false) or left as text."""
    try:
        return parse_option_text(text)
    except OptionError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def positive_int(text: str) -> int:
    """An int >= 1 for argparse."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {v}")
    return v


def positive_float(text: str) -> float:
    """A finite float > 0 for argparse."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text!r}")
    return v


def run_cli(parser: argparse.ArgumentParser, body: Callable[[], object]) -> int:
    """Run a command's ``body``: Ctrl-C exits 130; bad input (our errors) exits 2 with the parser's prefix."""
    try:
        body()
    except KeyboardInterrupt:
        return 130
    except (JerichoError, ValueError, FileNotFoundError) as e:
        parser.exit(2, f"{parser.prog}: error: {e}\n")
    return 0


def cli_parser(module: str, doc: str | None) -> argparse.ArgumentParser:
    """An argument parser for ``python -m MODULE``: the docstring's first paragraph above, its examples below."""
    text = doc or ""
    return argparse.ArgumentParser(
        prog=f"python -m {module}",
        description=text.split("\n\n")[0],
        epilog=text.split("Examples:")[1] if "Examples:" in text else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def progress_bar(total: int, desc: str, quiet: bool) -> Any:
    """A tqdm bar with ETA (a silent stand-in when quiet or tqdm is missing)."""
    if not quiet:
        try:
            from tqdm.auto import tqdm

            return tqdm(total=total, desc=desc, unit="game", dynamic_ncols=True)
        except ImportError:
            pass

    class _Silent:
        def update(self, k: int) -> None: ...
        def close(self) -> None: ...

    return _Silent()
