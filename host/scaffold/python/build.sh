#!/usr/bin/env bash
# Build this Python source plugin into a WebAssembly component with componentize-py.
#
#   ./build.sh OUT.wasm
#
# Creates (or reuses) a venv in .venv with componentize-py, then builds against wit/ (the
# Capstan contract in wit/deps/capstan, WASI in wit/deps/wasi-*, this plugin's world in
# wit/world.wit).
set -euo pipefail
COMPONENTIZE_PY_VERSION=0.25.1
if [ $# -ne 1 ]; then
    echo "usage: $0 OUT.wasm" >&2
    exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$1"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
venv="${COMPONENTIZE_PY_VENV:-$here/.venv}"
componentize="$venv/bin/componentize-py"
if ! "$componentize" --version 2>/dev/null | grep -qx "componentize-py $COMPONENTIZE_PY_VERSION"; then
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        "componentize-py==$COMPONENTIZE_PY_VERSION"
fi
mkdir -p "$(dirname "$out")"
cd "$here"
"$componentize" -d wit -w url-source componentize -p . app -o "$out.partial"
mv "$out.partial" "$out"
ls -l "$out"
