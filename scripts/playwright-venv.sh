#!/bin/sh
# Makes (once) the virtual environment with Playwright from PyPI that the
# Settings app's browser tests and bench drive Debian's chromium with
# (DIR/bin/python; no browser is downloaded: the tests launch
# /usr/bin/chromium through executable_path). Reused when a previous run
# finished it (DIR/.complete). Prints the environment's directory.
# usage: scripts/playwright-venv.sh [DIR]   (default .build/venv-playwright)
set -eu
cd "$(dirname "$0")/.."
dir=${1:-.build/venv-playwright}
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
if [ ! -f "$dir/.complete" ] || [ ! -x "$dir/bin/python" ]; then
    rm -rf "$dir"
    python3 -m venv "$dir" >&2
    if ! PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 "$dir/bin/pip" install --quiet --disable-pip-version-check 'playwright>=1.48,<2' >&2; then
        rm -rf "$dir"
        echo "playwright-venv: could not install playwright into $dir" >&2
        exit 1
    fi
    touch "$dir/.complete"
fi
cd "$dir" && pwd
