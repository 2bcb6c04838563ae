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
python -m pip install -q -e ".[train,plot,notebooks,dev,ray]"
echo "jericho-env installed in .venv (activate with: source .venv/bin/activate)"
