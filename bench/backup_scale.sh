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
# Nothing is deleted until the end: ext4 skips inodes freed in the last minutes when it
# allocates new ones, reading each one's table block (recently_deleted), so creating
# 100,000 files right after an rm -rf of as many took cp -a 20 s of system time instead
# of 3. Each pair runs ROUNDS times, the two sides next to each other, and the ratio given
# is the median of the rounds' ratios; every round is printed. Files deleted just before
# the run (a test suite's clean-up) still slow both sides of the first round.
# Called by bench/run.sh (SKIP_BACKUP_SCALE=1 skips it); runs alone too:
#   BIN_DIR=.build/release bench/backup_scale.sh
# Environment: BIN_DIR (where apphome is), FILES (default 100000), ROUNDS (default 3).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
BIN_DIR=${BIN_DIR:-$top/.build/release}
apphome=$BIN_DIR/apphome
[[ -x $apphome ]] || { echo "bench/backup_scale.sh: $apphome not found; run \`make release\` first" >&2; exit 1; }
FILES=${FILES:-100000}
ROUNDS=${ROUNDS:-3}

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

ratio() { python3 -c "print('%.2f' % ($1 / max($2, 1)))"; }
median() { python3 -c "import statistics, sys; print('%.2f' % statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }
backup_ratios=() restore_ratios=()
for round in $(seq 1 "$ROUNDS"); do
    dir=$work/round$round
    mkdir "$dir"
    # Each side starts with nothing of the other's still to be written.
    sync
    t=$(now); cp -a "$home/Documents/many" "$dir/cp1"; cp1_ms=$(ms_since "$t")
    sync
    t=$(now); out=$("$apphome" --root "$root" backup "$id" --to "$dir/store"); backup_ms=$(ms_since "$t")
    manifest=$(sed -n 1p <<<"$out" | awk '{print $NF}')
    sync
    # Onto a fresh root (a new machine), as cp -a writes a fresh tree: a restore over the
    # installed app also removes the replaced home afterwards (100,000 more unlinks).
    t=$(now); "$apphome" --root "$dir/root" restore "$manifest" --app "$top/examples/ScaryBugs-v1/ScaryBugs.app" >/dev/null
    restore_ms=$(ms_since "$t")
    sync
    t=$(now); cp -a "$home/Documents/many" "$dir/cp2"; cp2_ms=$(ms_since "$t")
    b=$(ratio "$backup_ms" "$cp1_ms") r=$(ratio "$restore_ms" "$cp2_ms")
    backup_ratios+=("$b") restore_ratios+=("$r")
    echo "round $round: backup ${backup_ms} ms | cp -a ${cp1_ms} ms (${b}); restore ${restore_ms} ms | cp -a ${cp2_ms} ms (${r})"
done
echo "backup:  apphome backup / cp -a, median of $ROUNDS rounds: $(median "${backup_ratios[@]}") (target <= 2)"
echo "restore: apphome restore / cp -a, median of $ROUNDS rounds: $(median "${restore_ratios[@]}") (target <= 2)"
