#!/bin/sh
# scripts/versioned-apphome.sh DIR: makes DIR a throw-away git repository holding
# this checkout as it is now (tracked and new files, not what .gitignore leaves
# out), committed and tagged with a version, and prints the version. A package
# can then depend on AppHome as any user's package does:
#     .package(url: "file://DIR", from: "0.1.0")
# Run again, it commits what changed and tags the next patch version (0.1.N), so
# `swift package update` in the client moves to it. When neither Package.swift
# nor Sources/ changed (what a client builds), it prints the last tag again: a
# new version makes SwiftPM check the dependency out anew and rebuild all of it.
# Nothing outside DIR is written.
set -eu
[ $# -eq 1 ] || { echo "usage: scripts/versioned-apphome.sh DIR" >&2; exit 2; }
command -v git >/dev/null 2>&1 || { echo "versioned-apphome.sh: git is missing" >&2; exit 1; }
src=$(cd "$(dirname "$0")/.." && pwd)
dest=$1
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
case "$dest/" in "$src"/.build/*) ;; "$src"/*) echo "versioned-apphome.sh: $dest is inside the checkout; use a directory outside it or under .build" >&2; exit 2 ;; esac
g() { git -C "$dest" -c user.name=AppHome -c user.email=apphome@localhost -c commit.gpgsign=false -c tag.gpgsign=false "$@"; }
[ -d "$dest/.git" ] || git init -q "$dest"
# The checkout's files as they are: replace everything but .git.
find "$dest" -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
(cd "$src" && git ls-files -z -co --exclude-standard) | (cd "$src" && xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) \
    | (cd "$src" && tar --null -T - -cf -) | (cd "$dest" && tar -xf -)
g add -A
last=$(g tag --list '0.1.*' --sort=-v:refname | head -n 1)
if [ -n "$last" ] && g diff --cached --quiet "$last" -- Package.swift Sources; then
    echo "$last"
    exit 0
fi
g commit -q --allow-empty -m "AppHome snapshot"
if [ -n "$last" ]; then n=$(( ${last##*.} + 1 )); else n=0; fi
g tag "0.1.$n"
echo "0.1.$n"
