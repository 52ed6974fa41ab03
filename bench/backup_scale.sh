#!/usr/bin/env bash
# bench/backup_scale.sh: apphome backup and restore of a home of FILES files of 1 KiB
# (100,000 by default), beside `cp -a` of the same tree, in one run.
#
#   backup   apphome backup into a new store (every object new; made durable together)
#            vs cp -a of the home's Documents to another directory
#   restore  apphome restore of that backup onto a fresh root (a new home, every file
#            checked against its checksum, made durable together) vs cp -a again
#
# Target (issue 23): backup ≤ 2× and restore ≤ 2× cp -a. cp -a does not sync; apphome
# makes its writes durable (syncfs) before it says it is done, and that is in its time.
# Called by bench/run.sh (SKIP_BACKUP_SCALE=1 skips it); runs alone too:
#   BIN_DIR=.build/release bench/backup_scale.sh
# Environment: BIN_DIR (where apphome is), FILES (default 100000).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
BIN_DIR=${BIN_DIR:-$top/.build/release}
apphome=$BIN_DIR/apphome
[[ -x $apphome ]] || { echo "bench/backup_scale.sh: $apphome not found; run \`make release\` first" >&2; exit 1; }
FILES=${FILES:-100000}

work=$(mktemp -d "${TMPDIR:-/tmp}/apphome-bench-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
id=com.example.ScaryBugs
now() { date +%s%N; }
ms_since() { echo $(( ($(now) - $1) / 1000000 )); }

"$apphome" --root "$root" install "$top/examples/ScaryBugs-v1/ScaryBugs.app" >/dev/null
home=$("$apphome" --root "$root" container "$id" data)
python3 - "$home/Documents/many" "$FILES" <<'PY'
import os, sys
os.umask(0o022)
top, n = sys.argv[1], int(sys.argv[2])
per = 1000
for d in range((n + per - 1) // per):
    os.makedirs(os.path.join(top, "%03d" % d))
for i in range(n):
    with open(os.path.join(top, "%03d" % (i // per), "%06d.txt" % i), "wb") as f:
        f.write(os.urandom(512).hex().encode())   # 1 KiB, every file different
PY
sync
# Both sides read a tree in the page cache.
find "$home/Documents/many" -type f -exec cat {} + >/dev/null
echo "home: $FILES files of 1 KiB in $(( (FILES + 999) / 1000 )) directories"

t=$(now); cp -a "$home/Documents/many" "$work/cp1"; cp1_ms=$(ms_since "$t")
t=$(now); out=$("$apphome" --root "$root" backup "$id" --to "$work/store"); backup_ms=$(ms_since "$t")
manifest=$(sed -n 1p <<<"$out" | awk '{print $NF}')
sync
# Onto a fresh root (a new machine), as cp -a writes a fresh tree: a restore over the
# installed app also removes the replaced home afterwards (100,000 more unlinks).
t=$(now); "$apphome" --root "$work/root2" restore "$manifest" --app "$top/examples/ScaryBugs-v1/ScaryBugs.app" >/dev/null
restore_ms=$(ms_since "$t")
t=$(now); cp -a "$home/Documents/many" "$work/cp2"; cp2_ms=$(ms_since "$t")
ratio() { python3 -c "print('%.2f' % ($1 / max($2, 1)))"; }
echo "backup:  apphome backup ${backup_ms} ms | cp -a ${cp1_ms} ms  (ratio $(ratio "$backup_ms" "$cp1_ms"), target <= 2)"
echo "restore: apphome restore ${restore_ms} ms | cp -a ${cp2_ms} ms  (ratio $(ratio "$restore_ms" "$cp2_ms"), target <= 2)"
