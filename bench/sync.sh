#!/usr/bin/env bash
# Settings on every machine (docs/sync.md):
#   merge   one `apphome sync now` merging 100 device logs of 1,000 changes each
#           (10 stores x 100 keys, values and removals) into a fresh root
#   latency from `defaults --synced write` on root A to the change printed by
#           `defaults --synced watch` on root B (B's prefsd merges on arrival), through two
#           Syncthing instances on 127.0.0.1 (scripts/syncthing-pair.sh; a scan asked for
#           through the REST API after each write), beside Syncthing's own latency for a
#           plain file in the same folder, measured the same way
#
# Usage: BIN_DIR=.build/release bench/sync.sh   (run.sh calls it; SKIP_SYNC=1 skips it there)
#   SYNC_LOGS, SYNC_CHANGES  the merge's size (default 100 and 1000)
#   SYNC_ROUNDS              writes timed through Syncthing (default 20)
set -euo pipefail
BIN_DIR=${BIN_DIR:?set BIN_DIR to the directory holding apphome, defaults and prefsd}
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
work=$(mktemp -d "${TMPDIR:-/tmp}/apphome-sync-bench.XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    [[ -f $work/pair/pair.env ]] && "$top/scripts/syncthing-pair.sh" stop "$work/pair" || true
    rm -rf "$work"
}
trap cleanup EXIT
logs=${SYNC_LOGS:-100} changes=${SYNC_CHANGES:-1000} rounds=${SYNC_ROUNDS:-20}
export APPHOME_PREFSD=off APPHOME_KEYCHAIN_KEY_STORE=file

# --- merge: 100 logs x 1,000 changes --------------------------------------------------------
mkdir -p "$work/merge-folder"
python3 - "$work/merge-folder" "$logs" "$changes" <<'PY'
import os, plistlib, random, sys
folder, logs, changes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(7)
for d in range(logs):
    device = "%032X" % rng.getrandbits(128)
    entries = []
    for i in range(changes):
        e = {"S": "BENCHTEAM2.com.example.store%d" % rng.randrange(10), "K": "key%d" % rng.randrange(100),
             "T": 1_800_000_000_000 + rng.randrange(10_000_000), "C": rng.randrange(3), "D": device}
        if rng.random() < 0.1: e["X"] = True
        else: e["V"] = rng.choice([rng.randrange(1 << 30), "value %d" % rng.randrange(1000), rng.random() < 0.5])
        entries.append(e)
    with open(os.path.join(folder, device + ".kvlog"), "wb") as f:
        plistlib.dump({"Format": "AppHome synced preferences log", "FormatVersion": 1, "Device": device, "Entries": entries},
                      f, fmt=plistlib.FMT_BINARY, sort_keys=False)
PY
echo "merge: $logs logs x $changes changes ($(du -sk "$work/merge-folder" | cut -f1) KiB)"
hyperfine --style basic --warmup 1 --runs 5 -N \
    --prepare "bash -c 'rm -rf $work/merge-root && mkdir -p $work/merge-root && $BIN_DIR/apphome --root $work/merge-root sync setup $work/merge-folder >/dev/null'" \
    -n "apphome sync now ($logs logs x $changes changes, first pass)" "$BIN_DIR/apphome --root $work/merge-root sync now" \
    | grep -E "Time|Range|apphome"
hyperfine --style basic --warmup 1 --runs 5 -N \
    -n "apphome sync now (the same logs again, nothing new)" "$BIN_DIR/apphome --root $work/merge-root sync now" | grep -E "Time|Range|apphome"
rm -f "$work"/merge-folder/*.kvlog

# --- latency through Syncthing ----------------------------------------------------------------
command -v syncthing >/dev/null || { echo "sync: syncthing is not installed; latency skipped" >&2; exit 0; }
"$top/scripts/syncthing-pair.sh" start "$work/pair"
a=$work/rootA b=$work/rootB
"$BIN_DIR/apphome" --root "$a" keygen "$work/team.key" > "$work/team.txt"
team=$(head -1 "$work/team.txt" | awk '{print $NF}')
mkdir -p "$work/Notes.app"
printf '{ CFBundleIdentifier = com.example.Notes; CFBundleVersion = 1; "com.apple.developer.ubiquity-kvstore-identifier" = "$(TeamIdentifierPrefix)com.example.Notes"; }\n' > "$work/Notes.app/Info.plist"
printf '#!/bin/sh\n' > "$work/Notes.app/Notes"
"$BIN_DIR/apphome" --root "$a" sign "$work/Notes.app" --key "$work/team.key" > /dev/null
for r in "$a" "$b"; do "$BIN_DIR/apphome" --root "$r" install "$work/Notes.app" > /dev/null; done
"$BIN_DIR/apphome" --root "$a" sync setup "$work/pair/a/folder" > /dev/null
"$BIN_DIR/apphome" --root "$b" sync setup "$work/pair/b/folder" > /dev/null
store=$team.com.example.Notes
"$BIN_DIR/prefsd" --foreground --root "$b" --socket "$work/b.sock" 2> "$work/prefsd.log" & pids+=($!)
# Each line the watcher prints, stamped when it arrives. The watcher's own pid is the one
# kept (a pipeline in a subshell left it running after the bench, its root gone).
"$BIN_DIR/defaults" --root "$b" --synced watch "$store" \
    > >(while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done > "$work/watch.log") & pids+=($!)
sleep 1
now() { date +%s.%N; }
wait_for() { # wait_for COMMAND... : until it succeeds (20 s at most)
    for _ in $(seq 1 4000); do "$@" && return 0; sleep 0.005; done; return 1
}
kv=() st=()
for i in $(seq 1 "$rounds"); do
    t0=$(now)
    "$BIN_DIR/defaults" --root "$a" --synced write "$store" counter -int "$i"
    "$top/scripts/syncthing-pair.sh" scan "$work/pair" a
    wait_for grep -q "counter = $i\$" "$work/watch.log" || { echo "sync: change $i never reached the watcher" >&2; exit 1; }
    t1=$(grep "counter = $i\$" "$work/watch.log" | head -1 | cut -d' ' -f1)
    kv+=("$(awk "BEGIN { print ($t1 - $t0) * 1000 }")")
    t0=$(now)
    echo "$i" > "$work/pair/a/folder/plain-$i.txt"
    "$top/scripts/syncthing-pair.sh" scan "$work/pair" a
    wait_for test -f "$work/pair/b/folder/plain-$i.txt" || { echo "sync: plain file $i never arrived" >&2; exit 1; }
    t1=$(now)
    st+=("$(awk "BEGIN { print ($t1 - $t0) * 1000 }")")
done
stats() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {printf "median %.0f ms, min %.0f ms, max %.0f ms (n=%d)", a[int((NR+1)/2)], a[1], a[NR], NR}'; }
echo "write on A -> seen by a watcher on B (defaults --synced, prefsd, Syncthing): $(stats "${kv[@]}")"
echo "Syncthing alone, a plain file in the same folder A -> B:                   $(stats "${st[@]}")"
