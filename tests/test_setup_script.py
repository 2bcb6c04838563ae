"""scripts/setup.sh: what it installs with and without --tests, and what it says without apt or sudo.

The script runs in a copy of the repository's layout whose ``.venv/bin/python`` is a stub that records
its arguments (so nothing is installed), with a PATH that holds only the tools each case gives it:
``apt-get`` and ``sudo`` stubs, or neither, and an ``id`` stub to be root or not.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

SETUP = Path(__file__).resolve().parent.parent / "scripts" / "setup.sh"
TESTS_EXTRAS = ".[train,plot,notebooks,dev,web,openspiel,ray,docs]"

# .venv/bin/python: records each call; `-c "import torch"` and the index probe succeed as the case says
PYTHON_STUB = """#!/bin/sh
echo "python $*" >> "$STUB_LOG"
case "$*" in
  *"import torch"*) [ "$STUB_TORCH" = 1 ] ;;
  *urllib*) [ "$STUB_INDEX" = 1 ] ;;
  *) exit 0 ;;
esac
"""


def _tool(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def _run(
    tmp_path: Path,
    *args: str,
    root: bool = True,
    apt: str | None = None,
    sudo: bool = False,
    torch: bool = True,
    index: bool = True,
) -> tuple[int, str, list[str]]:
    """Run setup.sh in a fresh copy; returns (exit status, stderr, the recorded calls)."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(SETUP, repo / "scripts" / "setup.sh")
    (repo / ".venv" / "bin").mkdir(parents=True)
    _tool(repo / ".venv" / "bin", "python", PYTHON_STUB.removeprefix("#!/bin/sh\n"))
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("dirname", "sh"):
        os.symlink(shutil.which(name) or f"/bin/{name}", tools / name)
    _tool(tools, "id", f"echo {0 if root else 1000}")
    if apt is not None:  # "ok" or "fail"
        _tool(tools, "apt-get", f'echo "apt-get $*" >> "$STUB_LOG"; exit {0 if apt == "ok" else 100}')
    if sudo:
        _tool(tools, "sudo", 'echo "sudo $1" >> "$STUB_LOG"; "$@"')
    log = tmp_path / "calls.log"
    log.touch()
    env = {
        "PATH": str(tools),
        "STUB_LOG": str(log),
        "STUB_TORCH": "1" if torch else "0",
        "STUB_INDEX": "1" if index else "0",
        "JERICHO_CHROMIUM": str(tmp_path / "no-chromium"),  # not installed: the browser step runs
    }
    bash = shutil.which("bash") or "/bin/bash"
    done = subprocess.run(
        [bash, str(repo / "scripts" / "setup.sh"), *args], env=env, capture_output=True, text=True, timeout=60
    )
    return done.returncode, done.stderr, log.read_text().splitlines()


def test_the_main_job_installs_train_and_plot_and_never_calls_apt(tmp_path: Path) -> None:
    code, err, calls = _run(tmp_path, apt="fail")
    assert code == 0, err
    assert "python -m pip install -q -e .[train,plot]" in calls
    assert not [c for c in calls if c.startswith(("apt-get", "sudo"))]


@pytest.mark.parametrize(("root", "apt", "sudo"), [(True, None, False), (False, "ok", False)])
def test_tests_without_apt_or_sudo_install_the_rest_then_say_what_is_missing(
    tmp_path: Path, root: bool, apt: str | None, sudo: bool
) -> None:
    code, err, calls = _run(tmp_path, "--tests", root=root, apt=apt, sudo=sudo)
    assert code == 1
    assert "no apt-get, or you are not root and have no sudo" in err
    assert "--deselect tests/test_web_browser.py" in err
    assert f"python -m pip install -q -e {TESTS_EXTRAS}" in calls  # everything else was installed first
    assert not [c for c in calls if c.startswith("apt-get")]


def test_tests_with_a_failing_apt_get_say_so(tmp_path: Path) -> None:
    code, err, calls = _run(tmp_path, "--tests", apt="fail")
    assert code == 1
    assert "apt-get could not install chromium and fonts-dejavu-core" in err
    assert f"python -m pip install -q -e {TESTS_EXTRAS}" in calls


@pytest.mark.parametrize("root", [True, False])
def test_tests_install_chromium_and_the_fonts_through_apt(tmp_path: Path, root: bool) -> None:
    code, err, calls = _run(tmp_path, "--tests", root=root, apt="ok", sudo=True)
    assert code == 0, err
    assert "apt-get install -y -qq chromium fonts-dejavu-core" in calls
    assert ("sudo apt-get" in calls) is not root  # sudo only when not root


def test_torch_comes_first_from_the_cpu_index_when_it_answers(tmp_path: Path) -> None:
    code, err, calls = _run(tmp_path, torch=False, index=True)
    assert code == 0, err
    torch = "python -m pip install -q torch==2.13.0 --extra-index-url https://download.pytorch.org/whl/cpu"
    assert calls.index(torch) < calls.index("python -m pip install -q -e .[train,plot]")


def test_an_unreachable_cpu_index_is_said_and_torch_comes_from_pypi(tmp_path: Path) -> None:
    code, err, calls = _run(tmp_path, torch=False, index=False)
    assert code == 0, err
    assert "python -m pip install -q torch==2.13.0" in calls
    assert "is not reachable: torch from PyPI alone" in err


def test_no_torch_install_when_torch_is_present(tmp_path: Path) -> None:
    code, err, calls = _run(tmp_path)
    assert code == 0, err
    assert not [c for c in calls if "torch==" in c]


@pytest.mark.parametrize("args", [("--test",), ("--tests", "extra")])
def test_unknown_arguments_are_refused_with_the_usage(tmp_path: Path, args: tuple[str, ...]) -> None:
    code, err, calls = _run(tmp_path, *args)
    assert code == 2
    assert "usage: bash scripts/setup.sh [--tests]" in err
    assert calls == []
