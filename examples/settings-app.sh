#!/bin/sh
# The Settings app on a throw-away root holding the ScaryBugs example: run after
# `make demo` (or `make release`), open the URL it prints, stop it with Ctrl-C.
# BIN_DIR names the built executables (default .build/release).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
BIN_DIR=${BIN_DIR:-$here/../.build/release}
[ -x "$BIN_DIR/apphome-settings" ] || { echo "settings-app.sh: $BIN_DIR/apphome-settings not found; run 'make demo' first" >&2; exit 1; }
APPHOME_ROOT=$(mktemp -d "${TMPDIR:-/tmp}/apphome-settings-demo.XXXXXX")
export APPHOME_ROOT
trap 'rm -rf "$APPHOME_ROOT"' EXIT
trap 'exit 0' INT TERM
"$BIN_DIR/apphome" install "$here/ScaryBugs-v1/ScaryBugs.app" >&2
echo "the root is $APPHOME_ROOT; try: APPHOME_ROOT=$APPHOME_ROOT $BIN_DIR/defaults write com.example.ScaryBugs showRatings -bool false" >&2
"$BIN_DIR/apphome" settings "$@"
