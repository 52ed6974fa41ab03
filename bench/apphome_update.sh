#!/usr/bin/env bash
# apphome update of an app with 1,000 files / 100 MB in Documents: the data
# must move by rename (0 bytes copied), so the time should not depend on its
# size. Peer: copying the same Documents with `cp -a` (what a copying update
# would cost). Also `apphome doctor` on a healthy root with 50 apps.
#
# Usage: BIN_DIR=.build/release bench/apphome_update.sh   (run.sh calls it)
set -euo pipefail
BIN_DIR=${BIN_DIR:?set BIN_DIR to the directory holding apphome}
here=$(cd "$(dirname "$0")" && pwd)
examples=$here/../examples
work=$(mktemp -d "${TMPDIR:-/tmp}/apphome-update-bench.XXXXXX")
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
root=$work/root
ah() { "$BIN_DIR/apphome" --root "$root" "$@"; }

ah install "$examples/ScaryBugs-v1/ScaryBugs.app" > /dev/null
docs=$(ah container com.example.ScaryBugs documents)
python3 - "$docs" <<'PY'
import os, sys
d = sys.argv[1]
block = os.urandom(1 << 20)
for i in range(1000):
    sub = os.path.join(d, "bugs%02d" % (i % 10))
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, "bug%04d.bin" % i), "wb") as f:
        f.write(block[: 100 * 1024 + (i % 7)])   # ~100 KB each, ~100 MB in all
PY
echo "Documents: $(find "$docs" -type f | wc -l) files, $(du -sm "$docs" | cut -f1) MB"
echo "one update: $(ah update "$examples/ScaryBugs-v2/ScaryBugs.app" | tail -1)"

hyperfine --style basic --warmup 2 --runs 20 -N \
    -n "apphome update (rename, journaled)" "$BIN_DIR/apphome --root $root update $examples/ScaryBugs-v2/ScaryBugs.app"
# Each update moves Documents into a new home: ask for its path afterwards.
hyperfine --style basic --warmup 1 --runs 5 -N --prepare "rm -rf $work/copy" \
    -n "cp -a Documents (copy peer)" "cp -a $(ah container com.example.ScaryBugs documents) $work/copy"

for i in $(seq 1 49); do
    mkdir -p "$work/apps/A$i.app"
    printf '{CFBundleIdentifier = "com.example.A%s"; CFBundleVersion = "1";}' "$i" > "$work/apps/A$i.app/Info.plist"
    ah install "$work/apps/A$i.app" > /dev/null
done
hyperfine --style basic --warmup 3 --runs 30 -N -n "apphome doctor (50 apps, healthy)" "$BIN_DIR/apphome --root $root doctor"
