"""Not collected by a plain run (no test_ prefix): tests/test_hang_guard.py runs it to see a hang ended."""

import os
import time


def test_sleeps_past_the_guard() -> None:
    time.sleep(120)


def test_quick() -> None:
    assert os.environ.get("JERICHO_TEST_HANG_DIR"), "the controller's folder for hang reports did not reach the worker"
