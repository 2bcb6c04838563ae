#!/usr/bin/env bash
# Install jericho-env into .venv (created if missing), for training or for the tests.
#
#   bash scripts/setup.sh           what training, evaluation and play need: the package with its `train`
#                                   and `plot` extras (torch's CPU build, Stable-Baselines3, sb3-contrib,
#                                   tqdm, Numba, matplotlib); no apt, no sudo
#   bash scripts/setup.sh --tests   the same, plus what the test suite needs: the `notebooks`, `dev`,
#                                   `web`, `openspiel`, `ray` and `docs` extras, then Debian's chromium and
#                                   fonts-dejavu-core through apt-get (sudo when not root) for the web
#                                   page's browser tests (Playwright drives that Chromium; no download)
#
# torch: torch==2.13.0 is installed first when no torch is present, with PyTorch's CPU index beside PyPI
# (TORCH_INDEX; set it empty for PyPI alone), because a plain `torch` requirement pulls a multi-GB CUDA
# build. --tests on a machine without apt-get (or not root and without sudo) installs everything else,
# then says what is missing and exits with status 1.
set -euo pipefail
cd "$(dirname "$0")/.."
tests=0
case "${1-}" in
  "") ;;
  --tests) tests=1 ;;
  *) echo "usage: bash scripts/setup.sh [--tests]" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "usage: bash scripts/setup.sh [--tests]" >&2; exit 2; }
PY=${PYTHON:-python3}
TORCH_INDEX=${TORCH_INDEX-https://download.pytorch.org/whl/cpu}
step() { echo "== $*"; }

if [ ! -d .venv ]; then
  step "creating .venv ($("$PY" --version))"
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
reachable() {  # can pip read the index at $1? (a quick look, so that pip does not retry it for every package)
  .venv/bin/python -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + '/torch/', timeout=10)" "$1" \
    >/dev/null 2>&1
}
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  step "torch 2.13.0, the CPU build"
  if [ -n "$TORCH_INDEX" ] && reachable "$TORCH_INDEX"; then
    .venv/bin/python -m pip install -q "torch==2.13.0" --extra-index-url "$TORCH_INDEX"
  else
    [ -z "$TORCH_INDEX" ] || echo "PyTorch's CPU index ($TORCH_INDEX) is not reachable: torch from PyPI alone," \
      "which on Linux is the CUDA build unless pip finds a CPU wheel elsewhere (pip.conf, --find-links)" >&2
    .venv/bin/python -m pip install -q "torch==2.13.0"
  fi
fi
extras=train,plot
[ $tests = 0 ] || extras=train,plot,notebooks,dev,web,openspiel,ray,docs
step "jericho-env with the extras $extras"
.venv/bin/python -m pip install -q -e ".[$extras]"

if [ $tests = 1 ]; then
  # tests/test_web_browser.py launches $JERICHO_CHROMIUM, else /usr/bin/chromium; the page sets its text
  # in DejaVu, whose files the server hands out from the system (fonts-dejavu-core)
  chromium=${JERICHO_CHROMIUM:-/usr/bin/chromium}
  if [ -x "$chromium" ] && [ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]; then
    step "browser: $chromium and the DejaVu fonts are already installed"
  else
    step "browser: chromium and fonts-dejavu-core through apt-get"
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    if ! command -v apt-get >/dev/null 2>&1 || { [ -n "$sudo" ] && ! command -v sudo >/dev/null 2>&1; }; then
      echo "could not install the browser: this machine has no apt-get, or you are not root and have no sudo." >&2
      echo "Everything else is installed. The web page's browser tests (tests/test_web_browser.py) need Chromium" >&2
      echo "at /usr/bin/chromium (or JERICHO_CHROMIUM=/path/to/chromium) and the DejaVu fonts; without them," >&2
      echo "run the rest of the suite with: .venv/bin/python -m pytest -n 2 --deselect tests/test_web_browser.py" >&2
      exit 1
    fi
    if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq chromium fonts-dejavu-core; }; then
      echo "apt-get could not install chromium and fonts-dejavu-core (above); everything else is installed." >&2
      echo "Without them, run the rest of the suite with: .venv/bin/python -m pytest -n 2 --deselect tests/test_web_browser.py" >&2
      exit 1
    fi
  fi
fi
echo "jericho-env installed in .venv: run .venv/bin/python, or activate it first (source .venv/bin/activate)"
