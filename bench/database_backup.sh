#!/usr/bin/env bash
# bench/database_backup.sh: apphome backup of a live SQLite database, beside
# the sqlite3 shell's `.backup`, in one run.
#
#   writer   Python's sqlite3 commits one small transaction after another, as
#            fast as it can, in WAL mode, into a database of DB_MB MiB
#   busy     apphome backup under the writer | sqlite3 db ".backup out" under
#            the writer (the shell copies 100 pages a step and starts again
#            when another connection commits between steps; PEER_TIMEOUT caps it)
#   idle     the writer stopped: apphome backup twice (the second stores 0
#            bytes: the copy of an unchanged database is the same bytes)
#            | sqlite3 .backup
#
# Called by bench/run.sh (SKIP_DATABASE=1 skips it); runs alone too:
#   BIN_DIR=.build/release bench/database_backup.sh
# Environment: BIN_DIR (where apphome is), DB_MB (default 100), PEER_TIMEOUT (s, default 60).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
BIN_DIR=${BIN_DIR:-$top/.build/release}
apphome=$BIN_DIR/apphome
[[ -x $apphome ]] || { echo "bench/database_backup.sh: $apphome not found; run \`make release\` first" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "bench/database_backup.sh: sqlite3 not found (Debian package sqlite3)" >&2; exit 1; }
DB_MB=${DB_MB:-100}
PEER_TIMEOUT=${PEER_TIMEOUT:-60}

work=$(mktemp -d "${TMPDIR:-/tmp}/apphome-bench-database.XXXXXX")
writer_pid=
cleanup() {
    [[ -n $writer_pid ]] && { touch "$work/stop"; wait "$writer_pid" 2>/dev/null || true; }
    rm -rf "$work"
}
trap cleanup EXIT
root=$work/root
id=com.example.ScaryBugs

now() { date +%s%N; }
ms_since() { echo $(( ($(now) - $1) / 1000000 )); }
stored() { sed -n 's/.*read, \([0-9]*\) bytes stored.*/\1/p' <<<"$1"; }
progress() { cat "$work/progress" 2>/dev/null || echo 0; }

"$apphome" --root "$root" install "$top/examples/ScaryBugs-v1/ScaryBugs.app" >/dev/null
home=$("$apphome" --root "$root" container "$id" data)
mkdir -p "$home/Library/Application Support"
db=$home/Library/Application\ Support/app.db

python3 - "$db" "$DB_MB" <<'EOF'
import sqlite3, sys
path, mb = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect(path, isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("CREATE TABLE t(n INTEGER PRIMARY KEY, payload BLOB NOT NULL)")
db.execute("BEGIN")
db.executemany("INSERT INTO t(payload) VALUES (randomblob(4000))", ([] for _ in range(mb * 1024 * 1024 // 4096)))
db.execute("COMMIT")
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
EOF
echo "database: $(du -b "$db" | cut -f1) bytes, WAL mode"

# The writer: one row a transaction, as fast as it can, until $work/stop appears.
python3 - "$db" "$work/stop" "$work/progress" <<'EOF' &
import os, sqlite3, sys
path, stop, progress = sys.argv[1:4]
db = sqlite3.connect(path, timeout=30, isolation_level=None)
n = 0
while not os.path.exists(stop):
    db.execute("INSERT INTO t(payload) VALUES (randomblob(200))")
    n += 1
    if n % 100 == 0:
        with open(progress + ".tmp", "w") as f:
            f.write(str(n))
        os.replace(progress + ".tmp", progress)
EOF
writer_pid=$!
sleep 1

before=$(progress); t=$(now)
busy=$("$apphome" --root "$root" backup "$id" | sed -n 2p)
busy_ms=$(ms_since "$t"); busy_commits=$(( $(progress) - before ))
before=$(progress); t=$(now)
if timeout "$PEER_TIMEOUT" sqlite3 "$db" ".backup '$work/peer-busy.db'" 2>"$work/peer.err"; then
    peer_busy="$(ms_since "$t") ms"
else
    peer_busy="did not finish in ${PEER_TIMEOUT} s ($(head -c 200 "$work/peer.err" | tr '\n' ' '))"
fi
peer_commits=$(( $(progress) - before ))
touch "$work/stop"; wait "$writer_pid"; writer_pid=
echo "busy:    apphome backup under the writer: ${busy_ms} ms, $(stored "$busy") bytes stored, ${busy_commits} commits meanwhile"
echo "busy:    peer sqlite3 .backup under the writer: ${peer_busy}, ${peer_commits} commits meanwhile"

t=$(now)
first=$("$apphome" --root "$root" backup "$id" | sed -n 2p)
first_ms=$(ms_since "$t")
t=$(now)
second=$("$apphome" --root "$root" backup "$id" | sed -n 2p)
second_ms=$(ms_since "$t")
t=$(now)
sqlite3 "$db" ".backup '$work/peer-idle.db'"
peer_idle=$(ms_since "$t")
# Object names are BLAKE2b-256 (b2sum -l 256): is the shell's copy what the store holds?
hash=$(b2sum -l 256 "$work/peer-idle.db" | cut -c1-64)
[[ -f $root/Backups/objects/${hash:0:2}/${hash:2} ]] \
    && same="the same bytes as apphome's stored copy" || same="other bytes than apphome's stored copy"
echo "idle:    apphome backup after the writer stopped: ${first_ms} ms, $(stored "$first") bytes stored"
echo "idle:    apphome backup again (unchanged):        ${second_ms} ms, $(stored "$second") bytes stored"
echo "idle:    peer sqlite3 .backup: ${peer_idle} ms, $(du -b "$work/peer-idle.db" | cut -f1) bytes written every time ($same)"
