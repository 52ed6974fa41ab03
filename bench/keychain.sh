#!/usr/bin/env bash
# bench/keychain.sh: the AppHome keychain beside gnome-keyring, in one run.
#
#   cli         N sequential `security find-generic-password -w` processes, per
#               accessibility class: with the Secret Service unlocked a whenUnlocked
#               item (device key fetched from gnome-keyring by every run) and an
#               afterFirstUnlock item (its keys from the kernel keyring); with the
#               collection locked the afterFirstUnlock item; with the key file
#               vs N sequential `secret-tool lookup` processes
#   in-process  N look-ups in one process per class: keychainbench (warm: one open
#               keychain; cold: a new one per look-up)
#               vs libsecret's secret_password_lookupv_sync (bench/secret_lookup_bench.c)
#   prefsd      with a prefsd running (its keybag keeps the class keys): N `security
#               find-generic-password -w` processes through it vs N `secret-tool lookup`
#               (target <= 0.25x); N AppKeychain look-ups in one process through it vs
#               libsecret in one process (target <= 0.5x); 1,000 loads on its credential
#               socket by 10 concurrent peers, as systemd makes them (target p99 <= 2 ms);
#               N SecItemCopyMatching in an app (secitembench in `apphome run`, the Security
#               module) through it vs libsecret in one process (target <= 0.25x; the first
#               call of the process, connect included, printed on its own)
#
# Runs inside its own D-Bus session with a fresh, unlocked gnome-keyring in a
# throw-away HOME (it calls itself back through dbus-run-session).
# Environment: BIN_DIR (security, apphome, keychainbench, secitembench, prefsd), KEYCHAIN_RUNS (default 1000),
# KEYCHAIN_PREFSD_ONLY=1 (only the prefsd figures, with secret-tool and libsecret beside them).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
RUNS=${KEYCHAIN_RUNS:-1000}
die() { printf 'bench/keychain.sh: %s\n' "$*" >&2; exit 1; }
# shellcheck source=bench/target.sh
. "$here/target.sh"
# A failure is never silent (set -e would end the script without a word).
trap 'printf "bench/keychain.sh: line %s: a command failed (status %s)\n" "$LINENO" "$?" >&2' ERR

if [[ ${1:-} != --in-session ]]; then
    for tool in dbus-run-session gnome-keyring-daemon secret-tool gcc pkg-config; do
        command -v "$tool" >/dev/null 2>&1 || die "$tool is missing (apt-get install dbus-daemon gnome-keyring libsecret-tools gcc pkg-config)"
    done
    BIN_DIR=$(cd "${BIN_DIR:-$top/.build/release}" && pwd)
    for b in security apphome keychainbench secitembench prefsd; do [[ -x $BIN_DIR/$b ]] || die "$BIN_DIR/$b not found; run \`make release\` first"; done
    KWORK=$(mktemp -d "${TMPDIR:-/tmp}/apphome-kcbench.XXXXXX")
    trap 'rm -rf "$KWORK"' EXIT
    mkdir -m 700 "$KWORK/home" "$KWORK/run" "$KWORK/data" "$KWORK/config"
    export BIN_DIR KWORK
    HOME=$KWORK/home XDG_RUNTIME_DIR=$KWORK/run XDG_DATA_HOME=$KWORK/data XDG_CONFIG_HOME=$KWORK/config \
        dbus-run-session -- "$here/keychain.sh" --in-session 2> >(grep -v 'Failed to set fd limit' >&2)
    exit
fi

printf %s "apphome-bench-keyring" | gnome-keyring-daemon --unlock --components=secrets >/dev/null
# The daemon may take the bus name a moment after --unlock returns.
for _ in $(seq 100); do
    gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
        --method org.freedesktop.DBus.GetNameOwner org.freedesktop.secrets >/dev/null 2>&1 && break
    sleep 0.05
done
# The session's gnome-keyring is ended here, before the session and before the
# outer script removes its HOME: it would outlive the bus for a while, writing there.
keyring_pid=$(gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
    --method org.freedesktop.DBus.GetConnectionUnixProcessID org.freedesktop.secrets | tr -cd '0-9 ' | awk '{print $NF}')
stop_keyring() {
    kill "$keyring_pid" 2>/dev/null || return 0
    for _ in $(seq 100); do kill -0 "$keyring_pid" 2>/dev/null || return 0; sleep 0.05; done
}
# Only what this session started is ended here; $KWORK is the outer script's to
# remove. (This trap used to end with `kill` of the prefsd the script had
# already ended: under set -e that failure ended the trap, and the script, with
# status 1 and no message, so `make bench` stopped after this script.)
trap 'stop_keyring' EXIT
app=com.example.ScaryBugs
bundle=$top/examples/ScaryBugs-v1/ScaryBugs.app
ns() { date +%s%N; }
per() { # per <name> <start-ns> <end-ns>
    awk -v n="$1" -v a="$2" -v b="$3" -v r="$RUNS" 'BEGIN { t = (b - a) / 1e9; printf "%-62s %5d runs in %7.3f s, %8.1f µs per look-up\n", n, r, t, t / r * 1e6 }'
}

# The after-first-unlock keys expire from the kernel keyring after 10 minutes
# here, so the bench leaves nothing behind until reboot.
export APPHOME_KEYCHAIN_KEY_CACHE=600
classes="whenUnlocked afterFirstUnlock"
for store in secret-service file; do
    root=$KWORK/root-$store
    "$BIN_DIR/apphome" --root "$root" install "$bundle" >/dev/null
    if [[ $store == file ]]; then export APPHOME_KEYCHAIN_KEY_STORE=file; else unset APPHOME_KEYCHAIN_KEY_STORE; fi
    for class in $classes; do
        printf 'bench-secret' | "$BIN_DIR/security" --root "$root" --app "$app" add-generic-password -a bench -s "$class" --accessibility "$class"
        [[ $("$BIN_DIR/security" --root "$root" --app "$app" find-generic-password -a bench -s "$class" -w) == bench-secret ]] \
            || die "security find-generic-password did not return the secret ($store, $class)"
    done
done
unset APPHOME_KEYCHAIN_KEY_STORE
[[ -s $KWORK/root-file/Keychains/device.key && ! -e $KWORK/root-secret-service/Keychains/device.key ]] \
    || die "the device keys are not where the bench expects them"
printf 'bench-secret' | secret-tool store --label 'AppHome bench' app bench key bench
[[ $(secret-tool lookup app bench key bench) == bench-secret ]] || die "secret-tool lookup did not return the secret"

only_prefsd=${KEYCHAIN_PREFSD_ONLY:-0}
# shellcheck disable=SC2046  # pkg-config prints several flags
gcc -O2 -o "$KWORK/secret_lookup_bench" "$here/secret_lookup_bench.c" $(pkg-config --cflags --libs libsecret-1)
echo
echo "### keychain: $RUNS sequential look-ups, one process each ($(gnome-keyring-daemon --version | head -1), libsecret $(pkg-config --modversion libsecret-1))"
cli() { # cli <label> <root> <class>
    local a b
    a=$(ns)
    for ((i = 0; i < RUNS; i++)); do
        "$BIN_DIR/security" --root "$2" --app "$app" find-generic-password -a bench -s "$3" -w >/dev/null
    done
    b=$(ns)
    per "security find-generic-password -w ($1)" "$a" "$b"
}
if [[ $only_prefsd != 1 ]]; then
cli "secret-service unlocked, whenUnlocked" "$KWORK/root-secret-service" whenUnlocked
cli "secret-service unlocked, afterFirstUnlock" "$KWORK/root-secret-service" afterFirstUnlock
cli "file, whenUnlocked" "$KWORK/root-file" whenUnlocked
a=$(ns)
for ((i = 0; i < RUNS; i++)); do secret-tool lookup app bench key bench >/dev/null; done
b=$(ns)
per "secret-tool lookup" "$a" "$b"

echo
echo "### keychain: $RUNS look-ups in one process"
for class in $classes; do
    "$BIN_DIR/keychainbench" "$KWORK/root-secret-service" "$app" bench "$class" "$RUNS" | sed "s/^/keychainbench (secret-service, $class) /"
done
APPHOME_KEYCHAIN_KEY_STORE=file "$BIN_DIR/keychainbench" "$KWORK/root-file" "$app" bench whenUnlocked "$RUNS" | sed 's/^/keychainbench (file, whenUnlocked) /'
"$KWORK/secret_lookup_bench" app bench key bench "$RUNS"
fi

# prefsd as the keybag: the same look-ups through a running prefsd, which keeps the
# open class keys (no Secret Service round trip per call) and serves credentials.
echo
echo "### keychain: through prefsd (its keybag), the device key in gnome-keyring"
sock=$KWORK/run/apphome-bench/prefsd.sock
"$BIN_DIR/prefsd" --foreground --root "$KWORK/root-secret-service" --socket "$sock" 2>"$KWORK/prefsd.log" &
prefsd_pid=$!
trap 'kill "$prefsd_pid" 2>/dev/null || true; stop_keyring' EXIT
for _ in $(seq 100); do [[ -S $KWORK/run/apphome-bench/credentials.sock ]] && break; sleep 0.05; done
[[ -S $KWORK/run/apphome-bench/credentials.sock ]] || die "prefsd did not start: $(cat "$KWORK/prefsd.log")"
export APPHOME_PREFSD=require APPHOME_SOCKET=$sock
[[ $("$BIN_DIR/security" --root "$KWORK/root-secret-service" --app "$app" find-generic-password -a bench -s whenUnlocked -w) == bench-secret ]] \
    || die "security through prefsd did not return the secret"
us() { awk -v a="$1" -v b="$2" -v r="$RUNS" 'BEGIN { printf "%.1f", (b - a) / r / 1e3 }'; }
a=$(ns); for ((i = 0; i < RUNS; i++)); do secret-tool lookup app bench key bench >/dev/null; done; b=$(ns)
peer_cli=$(us "$a" "$b")
per "secret-tool lookup" "$a" "$b"
a=$(ns)
for ((i = 0; i < RUNS; i++)); do
    "$BIN_DIR/security" --root "$KWORK/root-secret-service" --app "$app" find-generic-password -a bench -s whenUnlocked -w >/dev/null
done
b=$(ns)
ours_cli=$(us "$a" "$b")
per "security find-generic-password -w (through prefsd, whenUnlocked)" "$a" "$b"
bench_target "security -w through prefsd vs secret-tool lookup" "$ours_cli" "$peer_cli" "µs" 0.25
ours_in=$("$BIN_DIR/keychainbench" --app-keychain "$KWORK/root-secret-service" "$app" bench whenUnlocked "$RUNS")
echo "$ours_in"
peer_in=$("$KWORK/secret_lookup_bench" app bench key bench "$RUNS")
echo "$peer_in"
per_lookup() { awk '{ split($0, a, " µs per"); n = split(a[1], x, " "); print x[n] }' <<<"$1"; }
bench_target "AppKeychain through prefsd vs secret_password_lookup_sync" "$(per_lookup "$ours_in")" "$(per_lookup "$peer_in")" "µs" 0.5
# An app's own code: SecItemCopyMatching (the Security module) in a running app, through prefsd.
ours_app=$("$BIN_DIR/apphome" --root "$KWORK/root-secret-service" run "$app" -- "$BIN_DIR/secitembench" whenUnlocked bench "$RUNS")
echo "$ours_app"
peer_in=$("$KWORK/secret_lookup_bench" app bench key bench "$RUNS")
echo "$peer_in"
bench_target "SecItemCopyMatching in an app through prefsd vs secret_password_lookup_sync" "$(per_lookup "$(tail -n 1 <<<"$ours_app")")" "$(per_lookup "$peer_in")" "µs" 0.25
head -c 48 /dev/urandom | "$BIN_DIR/security" --root "$KWORK/root-secret-service" add-credential -u bench.service -c token
credentials=$("$BIN_DIR/keychainbench" --credentials "$KWORK/run/apphome-bench/credentials.sock" bench.service token 1000 10)
echo "$credentials"
bench_bound "credential socket, 1,000 loads by 10 peers: p99" "$(sed -n 's/.*p99 \([0-9.]*\) ms.*/\1/p' <<<"$credentials")" ms 2
unset APPHOME_PREFSD APPHOME_SOCKET
kill "$prefsd_pid"; wait "$prefsd_pid" 2>/dev/null || true
trap 'stop_keyring' EXIT
if grep -q 'bench-secret' "$KWORK/prefsd.log"; then die "a secret is in prefsd's log"; fi

[[ $only_prefsd == 1 ]] && exit 0

# The login collection locked (as a screen locker does): whenUnlocked items
# answer -25308, afterFirstUnlock items are served from the kernel's keys.
gdbus call --session --dest org.freedesktop.secrets --object-path /org/freedesktop/secrets \
    --method org.freedesktop.Secret.Service.Lock "['/org/freedesktop/secrets/collection/login']" >/dev/null
if "$BIN_DIR/security" --root "$KWORK/root-secret-service" --app "$app" find-generic-password -a bench -s whenUnlocked -w >/dev/null 2>&1; then
    die "a whenUnlocked item was served with the collection locked"
fi
echo
echo "### keychain: the login collection locked"
cli "secret-service locked, afterFirstUnlock" "$KWORK/root-secret-service" afterFirstUnlock
"$BIN_DIR/keychainbench" "$KWORK/root-secret-service" "$app" bench afterFirstUnlock "$RUNS" | sed 's/^/keychainbench (secret-service locked, afterFirstUnlock) /'
