#!/usr/bin/env bash
# Build the Python `https-url` source plugin into a WebAssembly component.
#
#   plugins/examples/python-url-source/build.sh OUT.wasm
#
# Uses (and creates if missing) a venv at <repo>/target/python-venv with componentize-py.
# Copies Capstan's WIT from <repo>/wit into wit/deps/capstan (not committed), then runs
# componentize-py against the local world `url-source` on a copy of the Python sources.
# Does nothing when OUT.wasm is newer than every input.
set -euo pipefail

COMPONENTIZE_PY_VERSION=0.25.1

if [ $# -ne 1 ]; then
    echo "usage: $0 OUT.wasm" >&2
    exit 2
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="$1"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac

venv="$root/target/python-venv"
componentize="$venv/bin/componentize-py"

# Inputs: the Python sources, the local world, the vendored WASI WIT, Capstan's WIT and
# this script. Everything under wit/deps/capstan is a build-time copy of $root/wit.
inputs=("$here"/*.py "$here/wit/world.wit" "$here"/wit/deps/wasi-*/*.wit "$root"/wit/*.wit "$here/build.sh")

if [ -f "$out" ] && [ -x "$componentize" ] \
    && "$componentize" --version 2>/dev/null | grep -qx "componentize-py $COMPONENTIZE_PY_VERSION"; then
    stale=0
    for input in "${inputs[@]}"; do
        case "$input" in */test_*.py) continue ;; esac
        if [ "$input" -nt "$out" ]; then
            stale=1
            break
        fi
    done
    if [ "$stale" = 0 ]; then
        echo "$out is up to date"
        exit 0
    fi
fi

if ! "$componentize" --version 2>/dev/null | grep -qx "componentize-py $COMPONENTIZE_PY_VERSION"; then
    if [ ! -x "$venv/bin/python" ]; then
        python3 -m venv "$venv"
    fi
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        "componentize-py==$COMPONENTIZE_PY_VERSION"
fi

# Capstan's contract, copied fresh from the repository (one source of truth).
rm -rf "$here/wit/deps/capstan"
mkdir -p "$here/wit/deps/capstan"
cp "$root"/wit/*.wit "$here/wit/deps/capstan/"

mkdir -p "$(dirname "$out")"
# componentize-py compiles the app's modules into __pycache__ next to them: build from a
# copy under target/ so that the source folder stays clean.
stage="$(mktemp -d "$root/target/python-url-source.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
cp "$here"/*.py "$stage/"
rm -f "$stage"/test_*.py
tmp="$out.partial"
cd "$stage"
"$componentize" -d "$here/wit" -w url-source componentize -p "$stage" app -o "$tmp"
mv "$tmp" "$out"
ls -l "$out"
