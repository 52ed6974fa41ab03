#!/usr/bin/env bash
# bench/prefsd_bench.sh: prefsd beside dconf, in one run (called by bench/run.sh,
# or on its own after `make release`).
#
#   cli      defaults read/write through prefsd   vs  gsettings get/set (dconf)
#   latency  prefsbench latency: one key, read then write, in process
#            vs  gsettings_bench latency: g_settings_get_int, set_int + g_settings_sync
#   storm    10 clients writing at once: prefsbench storm  vs  gsettings_bench storm,
#            then the disk's own flush floor under it (bench/flush_floor.py)
#
# Everything in a temporary directory with its own HOME, XDG directories,
# schema, D-Bus session (dconf-service) and prefsd.
# Environment: BIN_DIR (default .build/release), PREFSD_OPS (default 5000),
# STORM_OPS (writes per storm client, default 1000).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
die() { printf 'bench/prefsd_bench.sh: %s\n' "$*" >&2; exit 1; }
log() { printf '\n### %s\n' "$*" >&2; }
# shellcheck source=bench/target.sh
. "$here/target.sh"

if [[ ${1:-} == --in-session ]]; then
    schema=org.apphome.prefsbench
    ops=${PREFSD_OPS:-5000}
    storm=${STORM_OPS:-1000}
    gsettings set $schema counter 1
    [[ $(gsettings get $schema counter) == 1 ]] || die "gsettings did not write through dconf"
    "$BIN_DIR/prefsd" --foreground --root "$ROOT" 2>"$WORK/prefsd.log" &
    prefsd_pid=$!
    trap 'kill $prefsd_pid 2>/dev/null || true' EXIT
    for _ in $(seq 100); do [[ -S $XDG_RUNTIME_DIR/apphome/prefsd.sock ]] && break; sleep 0.05; done
    export APPHOME_PREFSD=require
    "$BIN_DIR/defaults" --root "$ROOT" write com.apphome.bench counter -int 1
    [[ $("$BIN_DIR/defaults" --root "$ROOT" read com.apphome.bench counter) == 1 ]] || die "defaults through prefsd did not read back"

    log "cli read: defaults read (through prefsd) | gsettings get"
    hyperfine --style basic --warmup 5 --min-runs 50 -N --export-json "$WORK/prefsd-cli-read.json" \
        -n defaults-prefsd "$BIN_DIR/defaults --root $ROOT read com.apphome.bench counter" \
        -n gsettings "gsettings get $schema counter"
    log "cli write: defaults write (through prefsd) | gsettings set"
    hyperfine --style basic --warmup 5 --min-runs 50 -N --export-json "$WORK/prefsd-cli-write.json" \
        --prepare "$BIN_DIR/defaults --root $ROOT write com.apphome.bench counter -int 1" \
        -n defaults-prefsd "$BIN_DIR/defaults --root $ROOT write com.apphome.bench counter -int 2" \
        --prepare "gsettings set $schema counter 1" \
        -n gsettings "gsettings set $schema counter 2"

    log "in process: $ops single-key reads, then $ops single-key writes"
    sock=$XDG_RUNTIME_DIR/apphome/prefsd.sock
    "$BIN_DIR/prefsbench" latency --socket "$sock" --root "$ROOT" --count "$ops"
    "$WORK/gsettings_bench" latency "$ops"
    log "storm: 10 clients x $storm writes"
    ours=$("$BIN_DIR/prefsbench" storm --socket "$sock" --root "$ROOT" --clients 10 --count "$storm")
    echo "$ours"
    peer=$("$WORK/gsettings_bench" storm 10 "$storm")
    echo "$peer"
    field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$2" | tail -1; }
    bench_target_at_least "prefsd 10-client write storm: writes/s vs GSettings" "$(field ops_per_s "$ours")" "$(field ops_per_s "$peer")" "writes/s" 2
    # The disk's own floor under the storm's p99 (same file system, alone): the
    # p99 of a commit's I/O, timed with nothing else running, is the peer
    # figure of the p99 target: every acknowledged write waits for at least
    # one whole commit's I/O that began after it arrived (the two flushes the
    # durability promise needs), so no durable write's p99 is below it. The
    # lone pwrite + fdatasync is printed beside it in the log.
    log "the disk's own floor under the storm's p99 (same file system, alone): bench/flush_floor.py"
    floor=$(python3 "$here/flush_floor.py" "$WORK/flush-floor" 2000)
    echo "$floor"
    commit_p99=$(sed -n "s/^floor: a commit's I\/O .* p99 \([0-9.]*\) .*/\1/p" <<<"$floor")
    bench_bound_beside "prefsd 10-client write storm: p99 (peer: a commit's I/O alone, p99)" \
        "$(awk -v u="$(field p99_us "$ours")" 'BEGIN { printf "%.3f", u / 1000 }')" "${commit_p99:--}" ms 1
    exit 0
fi

BIN_DIR=${BIN_DIR:-$top/.build/release}
BIN_DIR=$(cd "$BIN_DIR" 2>/dev/null && pwd) || die "BIN_DIR $BIN_DIR does not exist; run \`make release\` first"
for b in defaults prefsd prefsbench; do [[ -x $BIN_DIR/$b ]] || die "$BIN_DIR/$b not found; run \`make release\` first"; done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/apphome-prefsd-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/home" "$WORK/config" "$WORK/data" "$WORK/schemas"
mkdir -m 0700 "$WORK/runtime"
ROOT=$WORK/root
export BIN_DIR WORK ROOT
export HOME=$WORK/home XDG_CONFIG_HOME=$WORK/config XDG_DATA_HOME=$WORK/data XDG_RUNTIME_DIR=$WORK/runtime
export GSETTINGS_SCHEMA_DIR=$WORK/schemas GSETTINGS_BACKEND=dconf
unset DBUS_SESSION_BUS_ADDRESS
{
    echo '<schemalist><schema id="org.apphome.prefsbench" path="/org/apphome/prefsbench/">'
    echo '<key name="counter" type="i"><default>0</default></key>'
    for i in $(seq 0 15); do echo "<key name=\"k$i\" type=\"i\"><default>0</default></key>"; done
    echo '</schema></schemalist>'
} > "$WORK/schemas/org.apphome.prefsbench.gschema.xml"
glib-compile-schemas "$WORK/schemas"
# shellcheck disable=SC2046  # pkg-config prints several flags
gcc -O2 -o "$WORK/gsettings_bench" "$here/gsettings_bench.c" $(pkg-config --cflags --libs gio-2.0)
echo "prefsd vs dconf: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(df -T "$WORK" | awk 'NR==2 {print $2}') file system for both"
dbus-run-session -- "$0" --in-session
