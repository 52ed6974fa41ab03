#!/bin/sh
# Makes (once) the virtual environment with Playwright from PyPI that the
# Settings app's browser tests and bench drive Debian's chromium with
# (DIR/bin/python; no browser is downloaded: the tests launch
# /usr/bin/chromium through executable_path). Reused when a previous run
# finished it with the same requirement (DIR/.complete holds it; a venv made
# for another requirement is made again). Prints the environment's directory.
# usage: scripts/playwright-venv.sh [DIR]   (default .build/venv-playwright)
set -eu
cd "$(dirname "$0")/.."
dir=${1:-.build/venv-playwright}
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
requirement='playwright>=1.48,<2'   # route_web_socket (the Settings app's WebSocket tests) is 1.48
if [ "$(cat "$dir/.complete" 2>/dev/null)" != "$requirement" ] || [ ! -x "$dir/bin/python" ]; then
    rm -rf "$dir"
    python3 -m venv "$dir" >&2
    if ! PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 "$dir/bin/pip" install --quiet --disable-pip-version-check "$requirement" >&2; then
        rm -rf "$dir"
        echo "playwright-venv: could not install playwright into $dir" >&2
        exit 1
    fi
    printf '%s\n' "$requirement" > "$dir/.complete"
fi
cd "$dir" && pwd
