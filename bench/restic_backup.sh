#!/usr/bin/env bash
# bench/restic_backup.sh: apphome backup --to restic: of a home of about HOME_MB MiB (a
# SQLite database under a writer, plus files), first and second time, beside plain
# `restic backup` of the same folder into another repository, in one run.
#
# Plain restic is not consistent (it copies the database's file while the writer
# changes it), but it sets the speed to match. Target (issue 26): ≤ 1.5× its time.
# Both repositories are local; the password reaches restic on standard input (apphome:
# from the login keychain item apphome-restic; plain: the same way, from a pipe).
# Called by bench/run.sh (SKIP_RESTIC=1 skips it); runs alone too:
#   BIN_DIR=.build/release bench/restic_backup.sh
# Environment: BIN_DIR (where apphome and security are), HOME_MB (default 100).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
BIN_DIR=${BIN_DIR:-$top/.build/release}
apphome=$BIN_DIR/apphome
security=$BIN_DIR/security
[[ -x $apphome && -x $security ]] || { echo "bench/restic_backup.sh: $apphome or $security not found; run \`make release\` first" >&2; exit 1; }
command -v restic >/dev/null || { echo "bench/restic_backup.sh: restic not found (Debian package restic)" >&2; exit 1; }
HOME_MB=${HOME_MB:-100}

work=$(mktemp -d "${TMPDIR:-/tmp}/apphome-bench-restic.XXXXXX")
writer_pid=
cleanup() {
    [[ -n $writer_pid ]] && { touch "$work/stop"; wait "$writer_pid" 2>/dev/null || true; }
    rm -rf "$work"
}
trap cleanup EXIT
root=$work/root
id=com.example.ScaryBugs
export APPHOME_KEYCHAIN_KEY_STORE=file APPHOME_PREFSD=off HOME=$work/home XDG_CACHE_HOME=$work/cache
mkdir -p "$HOME"
unset RESTIC_PASSWORD RESTIC_PASSWORD_FILE RESTIC_PASSWORD_COMMAND RESTIC_REPOSITORY
now() { date +%s%N; }
ms_since() { echo $(( ($(now) - $1) / 1000000 )); }
password="bench password"

"$apphome" --root "$root" install "$top/examples/ScaryBugs-v1/ScaryBugs.app" >/dev/null
home=$("$apphome" --root "$root" container "$id" data)
mkdir -p "$home/Library/Application Support" "$home/Documents/files"
db=$home/Library/Application\ Support/app.db
db_mb=$(( HOME_MB * 6 / 10 ))
python3 - "$db" "$db_mb" "$home/Documents/files" $(( HOME_MB - db_mb )) <<'PY'
import os, sqlite3, sys
path, mb, files, files_mb = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
db = sqlite3.connect(path, isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("CREATE TABLE t(n INTEGER PRIMARY KEY, payload BLOB NOT NULL)")
db.execute("BEGIN")
db.executemany("INSERT INTO t(payload) VALUES (randomblob(4000))", ([] for _ in range(mb * 1024 * 1024 // 4096)))
db.execute("COMMIT")
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
for i in range(files_mb * 4):
    with open(os.path.join(files, "f%04d.bin" % i), "wb") as f:
        f.write(os.urandom(256 * 1024))
PY
echo "home: $(du -sb "$home" | cut -f1) bytes (a ${db_mb} MiB database in WAL mode, $(( (HOME_MB - db_mb) * 4 )) files of 256 KiB)"

printf '%s\n' "$password" | "$security" --root "$root" add-generic-password -s apphome-restic -a "$work/repo" -w >/dev/null
printf '%s\n' "$password" | restic -q -r "$work/plain" init >/dev/null
printf '%s\n' "$password" | restic -q -r "$work/repo" init >/dev/null   # both created before the timing

# The writer: one row a transaction until $work/stop appears.
python3 - "$db" "$work/stop" <<'PY' &
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=30, isolation_level=None)
while not os.path.exists(sys.argv[2]):
    db.execute("INSERT INTO t(payload) VALUES (randomblob(200))")
PY
writer_pid=$!
sleep 1

added() { sed -n 's/.*restic added \([0-9]*\) bytes.*/\1/p' <<<"$1"; }
t=$(now); a1=$("$apphome" --root "$root" backup "$id" --to "restic:$work/repo"); a1_ms=$(ms_since "$t")
t=$(now); p1=$(printf '%s\n' "$password" | restic -r "$work/plain" backup --json "$home" 2>/dev/null | tail -1); p1_ms=$(ms_since "$t")
t=$(now); a2=$("$apphome" --root "$root" backup "$id" --to "restic:$work/repo"); a2_ms=$(ms_since "$t")
t=$(now); p2=$(printf '%s\n' "$password" | restic -r "$work/plain" backup --json "$home" 2>/dev/null | tail -1); p2_ms=$(ms_since "$t")
touch "$work/stop"; wait "$writer_pid"; writer_pid=
padded() { python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("data_added", "?"))' "$1"; }
ratio() { python3 -c "print('%.2f' % ($1 / max($2, 1)))"; }
echo "first:   apphome backup --to restic: ${a1_ms} ms, $(added "$a1") bytes added | restic backup ${p1_ms} ms, $(padded "$p1") bytes added  (ratio $(ratio "$a1_ms" "$p1_ms"), target <= 1.5)"
echo "second:  apphome backup --to restic: ${a2_ms} ms, $(added "$a2") bytes added | restic backup ${p2_ms} ms, $(padded "$p2") bytes added  (ratio $(ratio "$a2_ms" "$p2_ms"), target <= 1.5)"
