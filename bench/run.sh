#!/usr/bin/env bash
# bench/run.sh: AppHome's `defaults` beside its peers, in one run.
#
#   read    defaults read D K      vs  dconf read  vs  gsettings get (dconf)  vs  python3 plistlib
#   write   defaults write D K -int N  vs  gsettings set     vs  python3 plistlib read-modify-write
#   start   defaults read D K  vs  /bin/true (the floor of starting a process)  vs  dconf read
#   codec   plistbench decode/encode (10 MB)  vs  python3 plistlib (bench/codec_peers.py)  vs  libplist
#   containers  apphome update (1,000 files / 100 MiB) and first/second backup  vs  cp -a (bench/containers.sh)
#   database  apphome backup of a 100 MiB SQLite database under a writer, and twice idle,
#             vs sqlite3 db ".backup out" (bench/database_backup.sh; SKIP_DATABASE=1 skips it)
#   settings  defaults lint (500 specifiers, 20 languages); validated vs unvalidated write
#             (bench/settings_bundle.sh, runs alone too; SKIP_SETTINGS=1 skips it)
#   settings-app  apphome settings: a 200-specifier page in chromium (load event, drawn; target
#             100 ms) and a switch's round trip vs defaults write (target 2x) (bench/settings_app.sh;
#             SKIP_SETTINGS_APP=1 skips it)
#   scale   apphome backup and restore of 100,000 files of 1 KiB vs cp -a
#           (bench/backup_scale.sh; SKIP_BACKUP_SCALE=1 skips it, FILES_SCALE sets the count)
#   restic  apphome backup --to restic: of a 100 MiB home under a database writer, first and
#           second, vs plain restic backup (bench/restic_backup.sh; SKIP_RESTIC=1 skips it)
#   update  apphome update (rename, journaled) vs cp -a; apphome doctor on 50 healthy apps
#           (bench/apphome_update.sh; SKIP_APPHOME_UPDATE=1 skips it)
#   sandbox apphome run <id> -- /bin/true vs a bare bwrap with the same mounts, median
#           difference <= 5 ms (bench/sandbox.sh; SKIP_SANDBOX=1 skips it)
#   keychain  1,000 `security find-generic-password -w` runs and 1,000 in-process look-ups per
#             accessibility class (unlocked, locked, key file)
#             vs `secret-tool lookup` and libsecret on gnome-keyring (bench/keychain.sh; SKIP_KEYCHAIN=1)
#   secret-service  `secret-tool lookup` against apphome-secretd vs against gnome-keyring, and 10
#             clients storing and looking up at once (bench/secret_service.sh; SKIP_SECRET_SERVICE=1)
#   prefsd  defaults through prefsd vs gsettings (CLI, in-process, 10-client storm)
#           (bench/prefsd_bench.sh; SKIP_PREFSD=1 skips it)
#   sync    synced key-value stores: a merge of 100 logs x 1,000 changes; a write on one root
#           to a watcher on another through two Syncthing instances, beside Syncthing's own
#           latency (bench/sync.sh; SKIP_SYNC=1 skips it)
#   archive keyed-archive decode and encode vs swift-corelibs-foundation's NSKeyedUnarchiver
#           and NSKeyedArchiver (bench/keyed_archive.sh; SKIP_ARCHIVE=1 skips it)
#
# Called by `make bench` after `make release` (the Makefile's RELEASE_FLAGS; Package.swift makes
# the shipped executables static in release), so the figures are those of the shipped binaries.
# Environment:
#   BIN_DIR          where `defaults` and `plistbench` are (default .build/release)
#   SKIP_STARTUP=1   skip the start-up comparison
#   SKIP_CODEC=1     skip the codec comparison
#   SKIP_CONTAINERS=1  skip the update and backup figures
#   CODEC_MB         size of the codec file (default 10)
#   CODEC_RUNS       in-process runs of plistbench and plistlib (default 10 and 3)
#   LIBPLIST_RUNS    runs of the libplist bench (default 1: its encoder takes ~20 s on 10 MB)
#
# Everything runs in a temporary directory: its own AppHome root, HOME, XDG
# directories, GSettings schema and D-Bus session. Nothing of the user's is touched.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")

# The gsettings part runs inside one `dbus-run-session`, which calls this script back.
if [[ ${1:-} == --in-dbus-session ]]; then
    in_session=1
else
    in_session=0
fi

log() { printf '\n### %s\n' "$*" >&2; }
die() { printf 'bench/run.sh: %s\n' "$*" >&2; exit 1; }

hyperfine_common=(--style basic --warmup 5 --min-runs 30 --max-runs 300 -N)

# --- the gsettings block: read and write, all three tools, one hyperfine each ----------
run_session_block() {
    local defaults=$BIN_DIR/defaults
    local domain_file=$ROOT/Library/Preferences/$DOMAIN.plist
    local schema=org.apphome.bench

    # Fill dconf with the domain's values so reads hit a real database.
    while IFS=$'\t' read -r key value; do
        gsettings set "$schema" "$key" "$value"
    done < "$WORK/gsettings-values.txt"
    [[ -s $XDG_CONFIG_HOME/dconf/user ]] \
        || die "gsettings did not write through dconf ($XDG_CONFIG_HOME/dconf/user missing); install dconf-gsettings-backend and dconf-service"
    [[ $(gsettings get "$schema" font-size) == 13 ]] || die "gsettings get font-size did not return 13"

    [[ $(dconf read /org/apphome/bench/font-size) == 13 ]] || die "dconf read /org/apphome/bench/font-size did not return 13"
    log "read: defaults read $DOMAIN FontSize | dconf read /org/apphome/bench/font-size | gsettings get $schema font-size | plistlib"
    hyperfine "${hyperfine_common[@]}" --export-json "$WORK/read.json" \
        -n defaults "$defaults --root $ROOT read $DOMAIN FontSize" \
        -n "dconf read" "dconf read /org/apphome/bench/font-size" \
        -n gsettings "gsettings get $schema font-size" \
        -n plistlib "$PYTHON $here/plistlib_peer.py read $domain_file FontSize"

    # Each timed write changes the value: --prepare sets it back first, because dconf
    # skips writes that change nothing.
    log "write: defaults write $DOMAIN FontSize -int 14 | gsettings set | plistlib read-modify-write"
    hyperfine "${hyperfine_common[@]}" --export-json "$WORK/write.json" \
        --prepare "$defaults --root $ROOT write $DOMAIN FontSize -int 13" \
        -n defaults "$defaults --root $ROOT write $DOMAIN FontSize -int 14" \
        --prepare "gsettings set $schema font-size 13" \
        -n gsettings "gsettings set $schema font-size 14" \
        --prepare "$PYTHON $here/plistlib_peer.py write $domain_file FontSize 13" \
        -n plistlib "$PYTHON $here/plistlib_peer.py write $domain_file FontSize 14"
}

if (( in_session )); then
    run_session_block
    exit 0
fi

# --- tools -----------------------------------------------------------------------------
missing=()
need() { # need <command> <debian package>
    command -v "$1" >/dev/null 2>&1 || missing+=("$1 (apt-get install $2)")
}
need hyperfine hyperfine
need gsettings libglib2.0-bin
need dconf dconf-cli
need glib-compile-schemas libglib2.0-bin
need dbus-run-session dbus
need dbus-daemon dbus-daemon
need python3 python3
if [[ ${SKIP_CODEC:-0} != 1 ]]; then
    need gcc gcc
    need pkg-config pkg-config
fi
compgen -G '/usr/libexec/dconf-service' >/dev/null || compgen -G '/usr/lib/dconf/dconf-service' >/dev/null \
    || missing+=("dconf-service (apt-get install dconf-service)")
compgen -G '/usr/lib/*/gio/modules/libdconfsettings.so' >/dev/null \
    || compgen -G '/usr/lib/gio/modules/libdconfsettings.so' >/dev/null \
    || missing+=("the GIO dconf module (apt-get install dconf-gsettings-backend)")
if [[ ${SKIP_CODEC:-0} != 1 ]] && command -v pkg-config >/dev/null 2>&1 \
    && ! pkg-config --exists libplist-2.0; then
    missing+=("libplist-2.0.pc (apt-get install libplist-dev)")
fi
if (( ${#missing[@]} )); then
    printf 'bench/run.sh: missing: %s\n' "${missing[@]}" >&2
    exit 1
fi

BIN_DIR=${BIN_DIR:-$top/.build/release}
BIN_DIR=$(cd "$BIN_DIR" 2>/dev/null && pwd) || die "BIN_DIR $BIN_DIR does not exist; run \`make release\` first"
[[ -x $BIN_DIR/defaults ]] || die "$BIN_DIR/defaults not found; run \`make release\` first"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/apphome-bench.XXXXXX")
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT
ROOT=$WORK/root
DOMAIN=com.example.editor
mkdir -p "$WORK/home" "$WORK/config" "$WORK/data" "$WORK/schemas"
mkdir -m 0700 "$WORK/runtime"
# The interpreter itself, not a wrapper such as a pyenv shim, so that the peer's
# start-up is Python's own.
PYTHON=$(python3 -c 'import sys; print(sys.executable)')
export BIN_DIR WORK ROOT DOMAIN PYTHON
export HOME=$WORK/home XDG_CONFIG_HOME=$WORK/config XDG_DATA_HOME=$WORK/data XDG_RUNTIME_DIR=$WORK/runtime
export GSETTINGS_SCHEMA_DIR=$WORK/schemas GSETTINGS_BACKEND=dconf
unset DBUS_SESSION_BUS_ADDRESS

started=$SECONDS
echo "AppHome bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(uname -sr)"
echo "defaults: $BIN_DIR/defaults ($(ldd "$BIN_DIR/defaults" 2>/dev/null | grep -c 'libswift' || true) Swift shared libraries linked)"
echo "peers: gsettings $(gsettings --version), dconf backend, $("$PYTHON" --version), $(hyperfine --version)"

# --- fixtures: one ~100-key domain, the same keys as a GSettings schema ---------------
python3 "$here/fixtures.py" "$WORK/domain.plist" "$WORK/schemas" "$WORK/gsettings-values.txt"
glib-compile-schemas "$WORK/schemas"
"$BIN_DIR/defaults" --root "$ROOT" import "$DOMAIN" "$WORK/domain.plist"
[[ $("$BIN_DIR/defaults" --root "$ROOT" read "$DOMAIN" FontSize) == 13 ]] \
    || die "defaults read $DOMAIN FontSize did not print 13"

# --- read and write, inside one D-Bus session ------------------------------------------
dbus-run-session -- "$here/run.sh" --in-dbus-session

# --- start-up: defaults beside the floor (/bin/true) and dconf read (no D-Bus needed) ----
if [[ ${SKIP_STARTUP:-0} != 1 ]]; then
    if ldd "$BIN_DIR/defaults" >/dev/null 2>&1; then
        echo "defaults loads: $(ldd "$BIN_DIR/defaults" | awk '{ print $1 }' | tr '\n' ' ')"
    else
        echo "defaults: statically linked (loads no shared library)"
    fi
    log "start-up: defaults read $DOMAIN FontSize | /bin/true | dconf read (same database as above)"
    hyperfine "${hyperfine_common[@]}" --export-json "$WORK/startup.json" \
        -n defaults "$BIN_DIR/defaults --root $ROOT read $DOMAIN FontSize" \
        -n /bin/true "/bin/true" \
        -n "dconf read" "dconf read /org/apphome/bench/font-size"
fi

# --- codec: plistbench vs plistlib vs libplist --------------------------------------------
if [[ ${SKIP_CODEC:-0} != 1 ]]; then
    codec_file=$WORK/codec.plist
    : > "$WORK/codec.log"
    if [[ -x $BIN_DIR/plistbench ]]; then
        log "codec: plistbench generate ${CODEC_MB:-10} MB"
        "$BIN_DIR/plistbench" generate "$codec_file" "${CODEC_MB:-10}"
        {
            echo "== plistbench"
            "$BIN_DIR/plistbench" decode "$codec_file" "${CODEC_RUNS:-10}"
            "$BIN_DIR/plistbench" encode "$codec_file" "${CODEC_RUNS:-10}"
        } | tee -a "$WORK/codec.log"
        if [[ -f $here/codec_peers.py ]]; then
            { echo "== plistlib"; "$PYTHON" "$here/codec_peers.py" "$codec_file" "${CODEC_RUNS:-3}"; } | tee -a "$WORK/codec.log"
        else
            echo "codec: bench/codec_peers.py is missing; python peer skipped" >&2
        fi
        if [[ -f $here/libplist_bench.c ]]; then
            # shellcheck disable=SC2046  # pkg-config prints several flags
            gcc -O2 -o "$WORK/libplist_bench" "$here/libplist_bench.c" $(pkg-config --cflags --libs libplist-2.0)
            { echo "== libplist"; "$WORK/libplist_bench" "$codec_file" "${LIBPLIST_RUNS:-1}"; } | tee -a "$WORK/codec.log"
        else
            echo "codec: bench/libplist_bench.c is missing; libplist peer skipped" >&2
        fi
    else
        echo "codec: $BIN_DIR/plistbench not found; codec comparison skipped" >&2
    fi
fi

# Every part runs, whatever another one did: a part that fails is named (and is a
# row of the final table), and the others still run. Each part's targets are kept in
# $BENCH_TARGETS (bench/target.sh) and its output in $WORK/part-NAME.log; one table
# of every target, met or missed, with the peer's figure beside ours, ends the run.
export BENCH_TARGETS=$WORK/targets.tsv
: > "$BENCH_TARGETS"
failed=()
part() { # part NAME COMMAND...
    local name=$1
    shift
    if ! "$@" | tee "$WORK/part-$name.log"; then
        printf 'bench/run.sh: the %s part failed\n' "$name" >&2
        printf '%s\t-\t-\t-\t-\t-\tFAILED\n' "$name (the whole part)" >> "$BENCH_TARGETS"
        failed+=("$name")
    fi
}

# --- apphome update: rename vs copy; doctor on a healthy root ----------------------------
if [[ ${SKIP_APPHOME_UPDATE:-0} != 1 && -x $BIN_DIR/apphome ]]; then
    log "apphome update of 1,000 files / 100 MB in Documents vs cp -a"
    part update "$here/apphome_update.sh"
fi

# --- the sandbox: apphome run vs a bare bwrap with the same mounts ------------------------------
if [[ ${SKIP_SANDBOX:-0} != 1 && -x $BIN_DIR/apphome ]]; then
    log "apphome run <id> -- /bin/true vs bwrap with the same mounts (target: <= 5 ms more)"
    BIN_DIR=$BIN_DIR "$here/sandbox.sh"
fi

# --- containers: update by rename, incremental backup (bench/containers.sh) ------------------
if [[ ${SKIP_CONTAINERS:-0} != 1 ]]; then
    log "containers: update of an app with ${FILES:-1000} files / ${MB:-100} MiB; first and second backup"
    part containers "$here/containers.sh"
fi

# --- a live SQLite database: apphome backup vs sqlite3 .backup (bench/database_backup.sh) ---
if [[ ${SKIP_DATABASE:-0} != 1 ]]; then
    log "database: backup of a ${DB_MB:-100} MiB SQLite database under a writer; apphome backup vs sqlite3 .backup"
    part database "$here/database_backup.sh"
fi

# --- backups at scale: 100,000 files of 1 KiB, apphome backup/restore vs cp -a ------------
if [[ ${SKIP_BACKUP_SCALE:-0} != 1 ]]; then
    log "backups at scale: ${FILES_SCALE:-100000} files of 1 KiB; apphome backup and restore vs cp -a"
    part backup_scale env FILES="${FILES_SCALE:-100000}" "$here/backup_scale.sh"
fi

# --- backups to restic: a 100 MiB home under a writer vs plain restic backup ------------
if [[ ${SKIP_RESTIC:-0} != 1 ]]; then
    log "restic: apphome backup --to restic: of a ${HOME_MB:-100} MiB home (database under a writer) vs restic backup"
    part restic "$here/restic_backup.sh"
fi

# --- settings bundles: lint time, validated vs unvalidated write ------------------------
if [[ ${SKIP_SETTINGS:-0} != 1 ]]; then
    part settings "$here/settings_bundle.sh"
fi

# --- the Settings app: a 200-row page in chromium, a change's round trip vs defaults write
if [[ ${SKIP_SETTINGS_APP:-0} != 1 ]]; then
    part settings-app "$here/settings_app.sh"
fi

# --- keychain: security / keychainbench vs secret-tool / libsecret on gnome-keyring ------
if [[ ${SKIP_KEYCHAIN:-0} != 1 ]]; then
    part keychain "$here/keychain.sh"
fi

# --- Secret Service: apphome-secretd vs gnome-keyring through secret-tool ----------------
if [[ ${SKIP_SECRET_SERVICE:-0} != 1 ]]; then
    part secret_service "$here/secret_service.sh"
fi

# --- prefsd vs dconf (bench/prefsd_bench.sh): CLI, in-process latency, 10-client storm ---
if [[ ${SKIP_PREFSD:-0} != 1 ]]; then
    part prefsd "$here/prefsd_bench.sh"
fi

# --- synced key-value stores: merge, and latency through Syncthing (bench/sync.sh) ---------
if [[ ${SKIP_SYNC:-0} != 1 ]]; then
    log "sync: merge of 100 logs x 1,000 changes; write -> watcher through Syncthing vs Syncthing alone"
    part sync "$here/sync.sh"
fi

# --- keyed archives: KeyedArchive vs swift-corelibs-foundation (bench/keyed_archive.sh) ---
if [[ ${SKIP_ARCHIVE:-0} != 1 ]]; then
    log "archive: keyed-archive decode and encode vs NSKeyedUnarchiver/NSKeyedArchiver"
    part archive "$here/keyed_archive.sh"
fi

"$PYTHON" "$here/summarize.py" "$WORK"
echo "bench took $((SECONDS - started)) s"
if (( ${#failed[@]} )); then
    printf 'bench/run.sh: parts that failed: %s (their output is above)\n' "${failed[*]}" >&2
    exit 1
fi
