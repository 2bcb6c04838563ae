#!/usr/bin/env bash
# Build the sdist and wheel, install the wheel in a fresh venv under /tmp, and check that the model zoo
# came with it: agents.zoo() lists a ppo network for every game, and agents.make("ppo", GAME) (no path)
# loads it from the installed package and plays a game. Usage, from the checkout:
#
#   bash scripts/check-wheel.sh            # dependencies taken from .venv (torch is large)
#   PYTHON=path/to/python bash scripts/check-wheel.sh
#
# The fresh venv gets the package only from the wheel; its dependencies (numpy, torch, sb3-contrib...)
# are read from the project's venv through a .pth line, which does not run that venv's editable install.
set -euo pipefail
PY=${PYTHON:-.venv/bin/python}
tmp=$(mktemp -d /tmp/jericho-wheel.XXXXXX)
echo "building in $tmp"
"$PY" -m venv "$tmp/build"
"$tmp/build/bin/pip" install -q build
"$tmp/build/bin/python" -m build --outdir "$tmp/dist" . > "$tmp/build.log"
wheel=$(ls "$tmp"/dist/*.whl)
"$PY" -m venv "$tmp/venv"
deps=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
site=$("$tmp/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$deps" > "$site/project-deps.pth"
"$tmp/venv/bin/pip" install -q --no-deps "$wheel"
echo "wheel: $wheel ($(du -k "$wheel" | cut -f1) KiB); zoo files in it:"
"$tmp/venv/bin/python" -m zipfile -l "$wheel" | grep "agents/zoo/" || echo "  (none)"
cd "$tmp"
env -u PYTHONPATH -u JERICHO_ENV_ZOO "$tmp/venv/bin/python" - "$site" <<'PY'
import sys

import agents
import jericho_env
from experiments.play.tournament import play_game
from jericho_env.envs.aec import JerichoEnv

site = sys.argv[1]
assert agents.__file__.startswith(site), f"agents imported from {agents.__file__}, not the wheel in {site}"
print(agents.zoo())
missing = [g for g in jericho_env.GAME_IDS if agents.zoo().entry("ppo", g) is None]
for game in jericho_env.GAME_IDS:
    if game in missing:
        continue
    agent = agents.make("ppo", game)
    env = JerichoEnv(game)
    n = env.rules.info.num_players
    _, moves = play_game(env, [agent] + [agents.make("random", game) for _ in range(n - 1)], 0, list(range(n)))
    print(f"{game}: agents.make('ppo', {game!r}) loaded {agent.path} and played a game of {moves} moves")
if missing:
    sys.exit(f"no ppo shipped in the wheel for: {', '.join(missing)}")
print("the wheel ships a ppo network for every game")
PY
