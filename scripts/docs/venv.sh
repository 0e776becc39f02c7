#!/usr/bin/env bash
# Installs the site generator of docs/ (scripts/docs/requirements.txt, pinned) into a virtual
# environment, once: nothing is done while the environment matches the requirements. Called by
# `make docs` and `make test`; safe to run by hand.
#
#   scripts/docs/venv.sh VENV        (e.g. build/docs-venv; then VENV/bin/mkdocs builds the site)
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=${1:?usage: scripts/docs/venv.sh VENV}
requirements=scripts/docs/requirements.txt
stamp="$venv/.gpulab-requirements"

if [ -x "$venv/bin/mkdocs" ] && cmp -s "$requirements" "$stamp"; then
  exit 0
fi
echo "gpulab: installing the docs site generator (MkDocs Material, pinned in $requirements) into $venv…"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || {
    echo "gpulab: python3 could not create $venv: install python3-venv (scripts/install-deps.sh docs)" >&2
    exit 1
  }
fi
log="$venv/install.log"
if ! "$venv/bin/python" -m pip install --disable-pip-version-check --quiet -r "$requirements" >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  echo "gpulab: pip could not install $requirements into $venv (its output is above and in $log):" \
       "PyPI must be reachable, or a pip mirror configured (PIP_INDEX_URL)" >&2
  exit 1
fi
cp "$requirements" "$stamp"
