"""Command-line plumbing shared by the ``experiments`` commands: argument types, the parser, errors, progress.

Every numeric flag goes through one of the typed helpers below (``positive_int``, ``nonnegative_int``,
``at_least(lo)``, ``seed_int``, ``int_in(lo, hi)``, ``positive_float``, ``nonnegative_float``, ``finite_float``,
``fraction``), never a bare ``int`` or ``float``: argparse then refuses a bad value before any work,
in one line naming the flag and what is allowed. ``cap_workers`` bounds a ``--workers`` count by the
cores and the work to share.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from experiments.play.backends import BackendError
from jericho_env.core.rules import JerichoError, OptionError, parse_option_text
from jericho_env.core.validate import seed_from_text
from jericho_env.processes import WorkerLostError


def parse_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with VALUE parsed as int, bool (true/false) or left as text."""
    try:
        return parse_option_text(text)
    except OptionError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _whole_number(name: str, ok: Callable[[int], bool], expected: str, must: str) -> Callable[[str], int]:
    """An argparse type named ``name``: a whole number that ``ok`` accepts (``expected``, ``must``: the errors')."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if not ok(v):
            raise argparse.ArgumentTypeError(f"{must}, got {v}")
        return v

    parse.__name__ = name
    return parse


def at_least(lo: int) -> Callable[[str], int]:
    """An argparse type: a whole number >= ``lo``."""
    return _whole_number(f"at_least_{lo}", lambda v: v >= lo, f"a whole number >= {lo}", f"must be at least {lo}")


positive_int = at_least(1)  # an int >= 1
nonnegative_int = at_least(0)  # an int >= 0


def int_in(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse type: a whole number in ``lo..hi``."""
    span = f"a whole number in {lo}..{hi}"
    return _whole_number(f"int_in_{lo}_{hi}", lambda v: lo <= v <= hi, span, f"must be {span}")


# Training's seeds (experiments.train, exit, sweep) take 32 bits: Stable-Baselines3 and numpy's legacy seeding take
# no more; every other seed of the package takes 0..2**63-1 (seed_int).
TRAIN_SEED_MAX = 2**32 - 1


def training_seed(text: str) -> int:
    """A training seed for argparse: a whole number in 0..2**32-1."""
    try:
        v = int(text)
    except ValueError:
        v = -1
    if not 0 <= v <= TRAIN_SEED_MAX or str(v) != text.strip().lstrip("+"):
        why = "Stable-Baselines3 seeds from 32 bits"
        raise argparse.ArgumentTypeError(
            f"a training seed is a whole number in 0..{TRAIN_SEED_MAX} ({why}), got {text!r}"
        )
    return v


def seed_int(text: str) -> int:
    """A seed for argparse: a whole number in 0..2**63-1, the range of every seed (``jericho_env.core.validate``)."""
    try:
        return seed_from_text(text)
    except OptionError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def positive_float(text: str) -> float:
    """A finite float > 0 for argparse."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text!r}")
    return v


def nonnegative_float(text: str) -> float:
    """A finite float >= 0 for argparse."""
    v = finite_float(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return v


def finite_float(text: str) -> float:
    """A finite float (not nan, not inf) for argparse."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return v


def fraction(text: str) -> float:
    """A number in 0..1 for argparse (not nan)."""
    v = finite_float(text)
    if not 0 <= v <= 1:
        raise argparse.ArgumentTypeError(f"must be a number in 0..1, got {text!r}")
    return v


def cap_workers(workers: int, jobs: int, what: str, flag: str = "--workers") -> int:
    """``workers`` capped by this machine's cores and by ``jobs``, the pieces of work to share (``what``: ``"deals"``);
    when capped, a note naming ``flag``, the count used and why goes to stderr."""
    cores = os.cpu_count() or 1
    used = max(1, min(workers, cores, jobs))
    if used < workers:
        why = []
        if workers > cores:
            why.append(f"this machine has {cores} core{'s' * (cores != 1)}")
        if workers > jobs:
            why.append(f"there {'is' if jobs == 1 else 'are'} {jobs} {what} to share out")
        print(f"note: {flag} {workers} capped to {used}: {' and '.join(why)}", file=sys.stderr)
    return used


def check_out(out: str | None, flag: str, run_kind: str | None = None, resume_hint: bool = False) -> None:
    """``ValueError`` if ``out`` cannot be an output folder (it or a folder above it is a file) or, with
    ``run_kind``, already holds a run (``resume_hint``: say that ``--resume`` continues it)."""
    if out is None:
        return
    path = Path(out)
    for above in [path, *path.parents]:
        if above.exists():
            if not above.is_dir():
                where = "is a file" if above == path else f"lies under {str(above)!r}, which is a file"
                raise ValueError(f"{flag} {out!r} {where}: give a folder (a new one, or an existing folder)")
            break
    if run_kind and (path / "config.json").exists():
        hint = f": continue it with --resume {out}, or" if resume_hint else "; choose"
        raise ValueError(f"{flag} {out!r} already holds a {run_kind}{hint} another folder")


def run_cli(parser: argparse.ArgumentParser, body: Callable[[], object]) -> int:
    """Run a command's ``body``: Ctrl-C exits 130; bad input or lost work (a ``WorkerLostError``) exits 2, one line
    naming it."""
    try:
        body()
    except KeyboardInterrupt:
        return 130
    except (JerichoError, ValueError, OSError, ImportError, BackendError, WorkerLostError) as e:
        parser.exit(2, f"{parser.prog}: error: {one_line(e)}\n")
    return 0


def one_line(error: BaseException) -> str:
    """An error's message on one line (file errors with their path)."""
    if isinstance(error, OSError) and error.filename and str(error.filename) not in str(error):
        text = f"{error.strerror or error}: {error.filename}"
    else:
        text = str(error) or type(error).__name__
    return " ".join(text.split())


def cli_parser(module: str, doc: str | None) -> argparse.ArgumentParser:
    """An argument parser for ``python -m MODULE`` (``"__main__"``: by its spec): ``doc``'s first paragraph above,
    its examples below."""
    if module == "__main__":
        spec = getattr(sys.modules.get("__main__"), "__spec__", None)
        module = spec.name if spec is not None else module
    text = doc or ""
    return argparse.ArgumentParser(
        prog=f"python -m {module}",
        description=text.split("\n\n")[0],
        epilog=text.split("Examples:")[1] if "Examples:" in text else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def progress_bar(total: int, desc: str, quiet: bool, unit: str = "game") -> Any:
    """A tqdm bar with ETA (a silent stand-in when quiet or tqdm is missing)."""
    if not quiet:
        try:
            from tqdm.auto import tqdm

            return tqdm(total=total, desc=desc, unit=unit, dynamic_ncols=True)
        except ImportError:
            pass

    class _Silent:
        def update(self, k: int) -> None: ...
        def close(self) -> None: ...

    return _Silent()
