#!/usr/bin/env bash
# bench/containers.sh: app-home update and incremental backup, beside `cp -a`.
#
#   update   apphome update of an app with FILES files / MB MiB in Documents:
#            time, and bytes of user data copied (0: the data moves by rename)
#            peer: cp -a of the same Documents (what a copying update costs)
#   backup   apphome backup, first (stores everything) and second of the
#            unchanged app (should read and store ~0 bytes): time and bytes stored
#            peer: cp -a of the home (a full copy every time)
#
# Called by bench/run.sh; runs alone too:  BIN_DIR=.build/release bench/containers.sh
# Environment: BIN_DIR (where apphome is), FILES (default 1000), MB (default 100).
# Everything happens in a temporary root; one run of each (page cache warm after
# the files are generated, as for an app that just wrote them).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
BIN_DIR=${BIN_DIR:-$top/.build/release}
apphome=$BIN_DIR/apphome
[[ -x $apphome ]] || { echo "bench/containers.sh: $apphome not found; run \`make release\` first" >&2; exit 1; }
FILES=${FILES:-1000}
MB=${MB:-100}

work=$(mktemp -d "${TMPDIR:-/tmp}/apphome-bench-containers.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
root=$work/root
id=com.example.ScaryBugs

now() { date +%s%N; }
ms_since() { echo $(( ($(now) - $1) / 1000000 )); }

"$apphome" --root "$root" install "$top/examples/ScaryBugs-v1/ScaryBugs.app" >/dev/null
home=$("$apphome" --root "$root" container "$id" data)
# FILES files of random bytes, MB MiB in all.
per=$((MB * 1048576 / FILES))
head -c $((per * FILES)) /dev/urandom | split -b "$per" -a 4 -d - "$home/Documents/bug-"
count=$(find "$home/Documents" -type f | wc -l)
bytes=$(du -sb "$home/Documents" | cut -f1)
echo "containers: $count files, $bytes bytes in Documents"

t=$(now)
cp -a "$home/Documents" "$work/peer-documents"
peer_update=$(ms_since "$t")
rm -rf "$work/peer-documents"

# Inodes before and after, checked independently of what apphome reports.
inodes_before=$(find "$home/Documents" -type f -printf '%f %i\n' | sort | md5sum)
t=$(now)
update=$("$apphome" --root "$root" update "$top/examples/ScaryBugs-v2/ScaryBugs.app")
update_ms=$(ms_since "$t")
copied=$(sed -n 's/.*(\([0-9]*\) bytes copied).*/\1/p' <<<"$update")
new_home=$("$apphome" --root "$root" container "$id" data)
inodes_after=$(find "$new_home/Documents" -type f -printf '%f %i\n' | sort | md5sum)
[[ $inodes_before == "$inodes_after" ]] && same="every file kept its inode (renamed)" || same="INODES CHANGED (copied)"
echo "update:  apphome update ${update_ms} ms, user data copied: ${copied} bytes, ${same} | peer cp -a Documents: ${peer_update} ms, ${bytes} bytes copied"

home=$("$apphome" --root "$root" container "$id" data)
t=$(now)
first=$("$apphome" --root "$root" backup "$id" | tail -1)
first_ms=$(ms_since "$t")
t=$(now)
second=$("$apphome" --root "$root" backup "$id" | tail -1)
second_ms=$(ms_since "$t")
t=$(now)
cp -a "$home" "$work/peer-backup"
peer_backup=$(ms_since "$t")
stored() { sed -n 's/.*read, \([0-9]*\) bytes stored.*/\1/p' <<<"$1"; }
echo "backup:  first  ${first_ms} ms, $(stored "$first") bytes stored ($first)"
echo "backup:  second ${second_ms} ms, $(stored "$second") bytes stored ($second)"
echo "backup:  peer cp -a of the home: ${peer_backup} ms, $(du -sb "$work/peer-backup" | cut -f1) bytes copied, every time"
