#!/usr/bin/env bash
# Build the documentation site, offline, with warnings as errors (broken links, anchors, references fail):
#
#   bash scripts/docs.sh                   stage the sources (scripts/docs_pages.py: the README, docs/, game
#                                          pages from the games' own tables, the rules, the API pages, the
#                                          notebooks executed) into build/docs-src, then `mkdocs build
#                                          --strict` (mkdocs.yml) into site/ (git-ignored): open site/index.html
#   bash scripts/docs.sh --no-execute      the same without running the notebooks (they render without outputs)
#   bash scripts/docs.sh --out DIR         stage into DIR/src and build into DIR/site instead (the tests do)
#
# Needs the `docs` extra (MkDocs, Material, mkdocstrings, mkdocs-jupyter) and, to execute the notebooks,
# the `notebooks` and `train` extras: `bash scripts/setup.sh --tests` installs them all.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
usage() { echo "usage: bash scripts/docs.sh [--no-execute] [--out DIR]" >&2; exit 2; }
execute=""
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-execute) execute=--no-execute ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift ;;
    *) usage ;;
  esac
  shift
done
start=$(date +%s)
config=mkdocs.yml
if [ -z "$out" ]; then
  stage=build/docs-src
  site=site
else
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  stage="$out/src"
  site="$out/site"
  config="$out/mkdocs.yml"
  # the project's configuration, with the folders moved (INHERIT: MkDocs merges this over it)
  printf 'INHERIT: %s\ndocs_dir: %s\nsite_dir: %s\n' "$PWD/mkdocs.yml" "$stage" "$site" > "$config"
fi
"$PY" scripts/docs_pages.py "$stage" $execute
NO_MKDOCS_2_WARNING=1 "$PY" -m mkdocs build --strict --clean --config-file "$config"
echo "== site built in $site ($(find "$site" -name '*.html' | wc -l) pages) in $(($(date +%s) - start)) s"
