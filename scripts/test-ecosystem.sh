#!/usr/bin/env bash
# Create the venv of one RL library (.venv-<lib>) with jericho-env and that library, then run the tests
# marked requires_<lib> (the default test run deselects them; see pyproject.toml and docs/ecosystem.md).
#
#   bash scripts/test-ecosystem.sh rllib|torchrl|tianshou|agilerl [extra pytest args]
#   bash scripts/test-ecosystem.sh all
#
# Each library gets its own venv because each pins shared packages differently (docs/ecosystem.md
# lists the pins). torch: the CPU build is installed first, because a plain `torch` requirement
# pulls a multi-GB CUDA build. SETUP_ONLY=1 creates the venv without running the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
LIBS=(rllib torchrl tianshou agilerl)
# engine tests that need no training extra: run in every library's venv too (its gymnasium, numpy, pettingzoo)
CORE_TESTS=(tests/test_conformance.py tests/test_illegal_action.py tests/test_play_hidden.py tests/test_gymnasium_registry.py)
usage() { echo "usage: $0 {$(IFS='|'; echo "${LIBS[*]}")|all} [pytest args]" >&2; exit 2; }
[ $# -ge 1 ] || usage
lib=$1
shift
if [ "$lib" = all ]; then
  failed=()
  for l in "${LIBS[@]}"; do "$0" "$l" "$@" || failed+=("$l"); done  # one library failing does not stop the others
  [ ${#failed[@]} -eq 0 ] || { echo "== failed: ${failed[*]}" >&2; exit 1; }
  exit 0
fi
case " ${LIBS[*]} " in *" $lib "*) ;; *) echo "unknown library '$lib'" >&2; usage ;; esac

PY=${PYTHON:-python3}
venv=".venv-$lib"
start=$(date +%s)
[ -d "$venv" ] || "$PY" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
if ! "$venv/bin/python" -c "import torch" 2>/dev/null; then
  "$venv/bin/python" -m pip install -q "torch==2.13.0"
fi
"$venv/bin/python" -m pip install -q -e ".[$lib]" "pytest>=7.4" "pytest-xdist>=3.3" "pytest-timeout>=2.2"
echo "== $lib: venv $venv ready in $(($(date +%s) - start)) s"
"$venv/bin/python" -m pip list 2>/dev/null | grep -iE "^(gymnasium|pettingzoo|numpy|torch|ray|torchrl|tensordict|tianshou|agilerl) " || true
[ "${SETUP_ONLY:-0}" = 1 ] && exit 0
start=$(date +%s)
# the library's own tests, then the engine's conformance tests on the versions this library pins
"$venv/bin/python" -m pytest -p no:cacheprovider -m "requires_$lib" "tests/test_$lib.py" "$@"
core_select="not masked_ppo and not sb3"
# AgileRL pins PettingZoo < 1.27, which has no registry (pettingzoo.make): jericho_env.make is the way there
[ "$lib" != agilerl ] || core_select="$core_select and not pettingzoo_registry"
"$venv/bin/python" -m pytest -p no:cacheprovider -n 2 -q "${CORE_TESTS[@]}" -k "$core_select"
echo "== $lib: tests ran in $(($(date +%s) - start)) s"
