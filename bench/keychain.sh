#!/usr/bin/env bash
# bench/keychain.sh: the AppHome keychain beside gnome-keyring, in one run.
#
#   cli         N sequential `security find-generic-password -w` processes
#               (device key in the Secret Service, cached in the kernel keyring or
#               fetched every time, and in the key file)
#               vs N sequential `secret-tool lookup` processes
#   in-process  N look-ups in one process: keychainbench (warm: key loaded once;
#               cold: key fetched from the Secret Service every time)
#               vs libsecret's secret_password_lookupv_sync (bench/secret_lookup_bench.c)
#
# Runs inside its own D-Bus session with a fresh, unlocked gnome-keyring in a
# throw-away HOME (it calls itself back through dbus-run-session).
# Environment: BIN_DIR (security, apphome, keychainbench), KEYCHAIN_RUNS (default 1000).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
RUNS=${KEYCHAIN_RUNS:-1000}
die() { printf 'bench/keychain.sh: %s\n' "$*" >&2; exit 1; }

if [[ ${1:-} != --in-session ]]; then
    for tool in dbus-run-session gnome-keyring-daemon secret-tool gcc pkg-config; do
        command -v "$tool" >/dev/null 2>&1 || die "$tool is missing (apt-get install dbus-daemon gnome-keyring libsecret-tools gcc pkg-config)"
    done
    BIN_DIR=$(cd "${BIN_DIR:-$top/.build/release}" && pwd)
    for b in security apphome keychainbench; do [[ -x $BIN_DIR/$b ]] || die "$BIN_DIR/$b not found; run \`make release\` first"; done
    KWORK=$(mktemp -d "${TMPDIR:-/tmp}/apphome-kcbench.XXXXXX")
    trap 'rm -rf "$KWORK"' EXIT
    mkdir -m 700 "$KWORK/home" "$KWORK/run" "$KWORK/data" "$KWORK/config"
    export BIN_DIR KWORK
    HOME=$KWORK/home XDG_RUNTIME_DIR=$KWORK/run XDG_DATA_HOME=$KWORK/data XDG_CONFIG_HOME=$KWORK/config \
        dbus-run-session -- "$here/keychain.sh" --in-session 2> >(grep -v 'Failed to set fd limit' >&2)
    exit
fi

printf %s "apphome-bench-keyring" | gnome-keyring-daemon --unlock --components=secrets >/dev/null
app=com.example.ScaryBugs
bundle=$top/examples/ScaryBugs-v1/ScaryBugs.app
ns() { date +%s%N; }
per() { # per <name> <start-ns> <end-ns>
    awk -v n="$1" -v a="$2" -v b="$3" -v r="$RUNS" 'BEGIN { t = (b - a) / 1e9; printf "%-62s %5d runs in %7.3f s, %8.1f µs per look-up\n", n, r, t, t / r * 1e6 }'
}

for store in secret-service file; do
    root=$KWORK/root-$store
    "$BIN_DIR/apphome" --root "$root" install "$bundle" >/dev/null
    if [[ $store == file ]]; then export APPHOME_KEYCHAIN_KEY_STORE=file; else unset APPHOME_KEYCHAIN_KEY_STORE; fi
    printf 'bench-secret' | "$BIN_DIR/security" --root "$root" --app "$app" add-generic-password -a bench -s bench
    [[ $("$BIN_DIR/security" --root "$root" --app "$app" find-generic-password -a bench -s bench -w) == bench-secret ]] \
        || die "security find-generic-password did not return the secret ($store)"
done
unset APPHOME_KEYCHAIN_KEY_STORE
[[ -s $KWORK/root-file/Keychains/device.key && ! -e $KWORK/root-secret-service/Keychains/device.key ]] \
    || die "the device keys are not where the bench expects them"
printf 'bench-secret' | secret-tool store --label 'AppHome bench' app bench key bench
[[ $(secret-tool lookup app bench key bench) == bench-secret ]] || die "secret-tool lookup did not return the secret"

echo
echo "### keychain: $RUNS sequential look-ups, one process each ($(gnome-keyring-daemon --version | head -1), libsecret $(pkg-config --modversion libsecret-1))"
# secret-service: the device key cached in the kernel keyring between runs (the
# default, here for 60 s), then fetched from gnome-keyring by every run; file: the key file.
for mode in secret-service:60 secret-service:0 file:0; do
    store=${mode%:*} cache=${mode#*:}
    root=$KWORK/root-$store
    a=$(ns)
    for ((i = 0; i < RUNS; i++)); do
        APPHOME_KEYCHAIN_KEY_CACHE=$cache "$BIN_DIR/security" --root "$root" --app "$app" find-generic-password -a bench -s bench -w >/dev/null
    done
    b=$(ns)
    label=$store
    [[ $store == secret-service ]] && label="$store, key cache ${cache}s"
    per "security find-generic-password -w ($label)" "$a" "$b"
done
a=$(ns)
for ((i = 0; i < RUNS; i++)); do secret-tool lookup app bench key bench >/dev/null; done
b=$(ns)
per "secret-tool lookup" "$a" "$b"

echo
echo "### keychain: $RUNS look-ups in one process"
"$BIN_DIR/keychainbench" "$KWORK/root-secret-service" "$app" bench bench "$RUNS" | sed 's/^/keychainbench (secret-service) /'
APPHOME_KEYCHAIN_KEY_STORE=file "$BIN_DIR/keychainbench" "$KWORK/root-file" "$app" bench bench "$RUNS" | sed 's/^/keychainbench (file) /'
# shellcheck disable=SC2046  # pkg-config prints several flags
gcc -O2 -o "$KWORK/secret_lookup_bench" "$here/secret_lookup_bench.c" $(pkg-config --cflags --libs libsecret-1)
"$KWORK/secret_lookup_bench" app bench key bench "$RUNS"
