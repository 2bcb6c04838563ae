#!/usr/bin/env bash
# Create .venv (if missing) and install jericho-env with every extra the tests and training need.
# torch: the CPU build is installed first, because a plain `torch` requirement pulls a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -d .venv ] || "$PY" -m venv .venv
source .venv/bin/activate
python -m pip install -q --upgrade pip
if ! python -c "import torch" 2>/dev/null; then
  python -m pip install -q "torch==2.13.0"
fi
python -m pip install -q -e ".[train,plot,notebooks,dev,web,openspiel,ray]"
# the web page's browser tests drive Debian's Chromium through Playwright (no browser download)
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium chromium-driver fonts-dejavu-core
  else sudo apt-get update -qq && sudo apt-get install -y -qq chromium chromium-driver fonts-dejavu-core; fi
fi
echo "jericho-env installed in .venv (activate with: source .venv/bin/activate)"
