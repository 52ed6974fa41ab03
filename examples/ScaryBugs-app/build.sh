#!/bin/sh
# examples/ScaryBugs-app/build.sh OUT.app: builds ScaryBugs (this package, which
# depends on AppHome by version: the tagged clone scripts/versioned-apphome.sh
# makes of this checkout) and assembles the bundle OUT.app (the executable and
# ScaryBugs.app/Info.plist). The build is kept in .build here: a second run
# rebuilds what changed. Sign and install OUT.app with apphome.
set -eu
[ $# -eq 1 ] || { echo "usage: examples/ScaryBugs-app/build.sh OUT.app" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
out=$1
version=$("$here/../../scripts/versioned-apphome.sh" "$here/../../.build/versioned-client/AppHome")
cd "$here"
# Move to the new tag only when there is one: an update re-checks out, and the
# build then starts over.
if ! grep -q "\"version\" : \"$version\"" Package.resolved 2>/dev/null; then
    swift package update >/dev/null 2>&1 || swift package update
fi
log=.build/build-app.log
mkdir -p .build
swift build --product ScaryBugs >"$log" 2>&1 || { cat "$log" >&2; echo "build.sh: ScaryBugs did not build" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
cp .build/debug/ScaryBugs "$out/ScaryBugs"
cp ScaryBugs.app/Info.plist "$out/Info.plist"
