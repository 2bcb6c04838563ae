"""tests/conftest.py's last guard: a test that outlives JERICHO_TEST_HANG_SECONDS is ended and its stacks shown."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_a_hung_test_is_ended_named_and_its_stacks_printed_and_the_run_goes_on(tmp_path: Path) -> None:
    env = {**os.environ, "JERICHO_TEST_HANG_SECONDS": "3", "JERICHO_TEST_HANG_DIR": str(tmp_path)}
    options = ["-n", "2", "-p", "no:cacheprovider", "-o", "timeout=0"]  # timeout=0: the alarm off, the guard alone
    argv = [sys.executable, "-m", "pytest", *options, "tests/hang_target.py"]
    start = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert time.monotonic() - start < 100, "the sleeping test was not ended by the guard"
    out = done.stdout
    assert done.returncode == 1, out[-3000:]
    assert "a test that hung" in out and "tests/hang_target.py::test_sleeps_past_the_guard ran for over 3 s" in out
    assert "in test_sleeps_past_the_guard" in out  # the hung test's own frame, from faulthandler
    assert "1 failed, 1 passed" in out
