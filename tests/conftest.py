from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

# The workers of `pytest -n 2` share two cores. libgomp's threads (torch's; PPO's update runs on two) spin while they
# wait by default, and a thread spinning for a core the other worker holds made a tiny PPO update over 100 times
# slower. Set before anything here imports torch; the workers and every command a test starts inherit it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from jericho_env.registry import register_game

try:
    from tests.toy_game import ToyRules
except ImportError:  # pragma: no cover
    from toy_game import ToyRules  # type: ignore[no-redef]

register_game("toy", ToyRules)


# Tests of the RL libraries with their own venvs (markers requires_<lib>): every run leaves them out unless its
# -m names them (scripts/test-ecosystem.sh runs them with -m requires_<lib>), so that any -m of one's own
# (-m "not slow", the fast tier) keeps them out too; the summary says how many were left out and which
# command runs them, never silently.
_ECOSYSTEM = ("rllib", "torchrl", "tianshou", "agilerl")
_deselected: dict[str, int] = {}


def _left_out(config: Any) -> list[str]:
    """The libraries whose tests this run leaves out: those its -m does not name."""
    expr = config.getoption("markexpr") or ""
    return [lib for lib in _ECOSYSTEM if f"requires_{lib}" not in expr]


# Slow tests of files whose decorators stay as they are: the documentation site's build.
_SLOW = ("tests/test_docs_site.py::test_the_site_builds",)


@pytest.hookimpl(tryfirst=True)  # before -m reads the markers
def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    for item in items:
        if item.nodeid.startswith(_SLOW):
            item.add_marker(pytest.mark.slow)
    out = _left_out(config)
    keep, drop = [], []
    for item in items:
        libs = [lib for lib in out if item.get_closest_marker(f"requires_{lib}") is not None]
        for lib in libs:
            _deselected[lib] = _deselected.get(lib, 0) + 1
        (drop if libs else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    # The files with the most slow tests first, each file's tests together and in their order: pytest-xdist
    # hands out the tests in this order, so the run ends on quick tests that even out the workers' finish.
    slow: dict[str, int] = {}
    for item in keep:
        slow[item.path] = slow.get(item.path, 0) + (item.get_closest_marker("slow") is not None)
    first = {path: i for i, path in enumerate(slow)}
    items[:] = sorted(keep, key=lambda item: (-slow[item.path], first[item.path]))


def pytest_terminal_summary(terminalreporter: Any, config: Any) -> None:
    for text in _hang_reports():
        terminalreporter.write_sep("=", "a test that hung")
        terminalreporter.write_line(text)
    # Under pytest-xdist the workers collect, so the count is known only in a run without -n.
    for lib in _left_out(config):
        n = _deselected.get(lib)
        command = f"bash scripts/test-ecosystem.sh {lib}"
        terminalreporter.write_line(f"deselected {f'{n} ' if n else ''}requires_{lib} tests: run them with `{command}`")


# The last guard against a hang: pyproject's `timeout` (SIGALRM) fails a test that Python code can
# interrupt; a test still running HANG_SECONDS after it started (stuck in native code, or in a clean-up
# after the alarm) has every thread's stack written to a file and its process ended, so that xdist
# reports the test as crashed and goes on. The summary prints those stacks (a worker's own stderr is lost).
HANG_SECONDS = float(os.environ.get("JERICHO_TEST_HANG_SECONDS", 900))
_HANG_DIR = "JERICHO_TEST_HANG_DIR"
_hang_file: Any = None


def pytest_configure(config: Any) -> None:
    import tempfile

    global _hang_file
    if _HANG_DIR not in os.environ:  # the controller's (xdist's workers inherit it)
        os.environ[_HANG_DIR] = tempfile.mkdtemp(prefix="jericho-test-hangs-")
    folder = os.environ[_HANG_DIR]
    _hang_file = open(os.path.join(folder, os.environ.get("PYTEST_XDIST_WORKER", "main")), "w")  # noqa: SIM115


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Any:
    import faulthandler

    _hang_file.seek(0)
    _hang_file.truncate()
    _hang_file.write(f"{item.nodeid} ran for over {HANG_SECONDS:g} s; its process was ended. Its threads:\n")
    _hang_file.flush()
    faulthandler.dump_traceback_later(HANG_SECONDS, exit=True, file=_hang_file)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def _hang_reports() -> list[str]:
    if _HANG_DIR not in os.environ:
        return []
    texts = [p.read_text(errors="replace") for p in sorted(Path(os.environ[_HANG_DIR]).glob("*"))]
    return [t for t in texts if "most recent call first" in t]


def pytest_unconfigure(config: Any) -> None:
    import shutil

    if _hang_file is not None:
        _hang_file.close()
    if "PYTEST_XDIST_WORKER" not in os.environ and not _hang_reports():  # the controller (or a run without -n)
        shutil.rmtree(os.environ.pop(_HANG_DIR, ""), ignore_errors=True)
