#!/bin/sh
# The virtual environment the Python keyring tests use: PyPI's keyring and
# contrib/python-keyring (apphome-keyring), in .build/venv-keyring.
# Made once and reused; apphome-keyring is installed again when its files change.
# Prints the environment's directory.
set -eu
cd "$(dirname "$0")/.."
venv=.build/venv-keyring
stamp=$venv/.apphome-keyring.stamp
mkdir -p .build
exec 9>.build/.venv-keyring.lock
flock 9
if [ ! -x "$venv/bin/keyring" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check keyring >&2
fi
wanted=$(find contrib/python-keyring -type f ! -path '*/__pycache__/*' ! -path '*.egg-info*' ! -path '*/build/*' | sort | xargs sha256sum | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$wanted" ]; then
    # Built from a copy, so that setuptools leaves no build/ or egg-info in the tree.
    rm -rf .build/apphome-keyring-src
    cp -R contrib/python-keyring .build/apphome-keyring-src
    "$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps ./.build/apphome-keyring-src >&2
    echo "$wanted" > "$stamp"
fi
echo "$PWD/$venv"
