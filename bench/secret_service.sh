#!/usr/bin/env bash
# bench/secret_service.sh: AppHome's Secret Service (apphome-secretd) beside
# gnome-keyring, in one run, each the only provider on a private session bus:
#
#   lookup   N sequential `secret-tool lookup` processes (libsecret: a dh session,
#            the default alias, SearchItems, GetSecret) of one item
#   storm    10 clients at once, each M times `secret-tool store` then `secret-tool lookup`
#            of an item of its own
#
# Environment: BIN_DIR (apphome-secretd, security), SECRET_RUNS (default 300),
# SECRET_STORM (M, default 30).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
RUNS=${SECRET_RUNS:-300}
STORM=${SECRET_STORM:-30}
die() { printf 'bench/secret_service.sh: %s\n' "$*" >&2; exit 1; }
for tool in dbus-daemon gnome-keyring-daemon secret-tool; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool is missing (apt-get install dbus-daemon gnome-keyring libsecret-tools)"
done
BIN_DIR=$(cd "${BIN_DIR:-$top/.build/release}" && pwd)
for b in apphome-secretd security; do [[ -x $BIN_DIR/$b ]] || die "$BIN_DIR/$b not found; run \`make release\` first"; done

work=$(mktemp -d "${TMPDIR:-/tmp}/apphome-ssbench.XXXXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

# A private session bus; prints its address (its pid goes in $work/<name>.pid).
bus() {
    dbus-daemon --session --fork --print-address=1 --print-pid=3 3>"$work/$1.pid" 2> >(grep -v 'Failed to set fd limit' >&2)
}
wait_name() {
    for _ in $(seq 1 200); do
        DBUS_SESSION_BUS_ADDRESS=$1 gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus \
            -m org.freedesktop.DBus.GetNameOwner org.freedesktop.secrets >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    die "no provider took org.freedesktop.secrets"
}

# gnome-keyring, unlocked, in a throw-away HOME.
mkdir -m 700 "$work/gk-home" "$work/gk-run" "$work/ah-home" "$work/ah-root"
gk_bus=$(bus gk); pids+=("$(cat "$work/gk.pid")")
(export DBUS_SESSION_BUS_ADDRESS=$gk_bus HOME=$work/gk-home XDG_RUNTIME_DIR=$work/gk-run XDG_DATA_HOME=$work/gk-home
 printf %s bench-keyring | gnome-keyring-daemon --unlock --components=secrets >/dev/null)
wait_name "$gk_bus"

# apphome-secretd on a passphrase keychain, unlocked.
ah_bus=$(bus ah); pids+=("$(cat "$work/ah.pid")")
export APPHOME_ROOT=$work/ah-root APPHOME_PREFSD=off APPHOME_KEYCHAIN_KEY_CACHE=600
printf 'bench passphrase\n' | HOME=$work/ah-home "$BIN_DIR/security" create-keychain
DBUS_SESSION_BUS_ADDRESS=$ah_bus HOME=$work/ah-home "$BIN_DIR/apphome-secretd" 2>/dev/null &
pids+=("$!")
wait_name "$ah_bus"

# shellcheck source=bench/target.sh
. "$(dirname "${BASH_SOURCE[0]}")/target.sh"
declare -A per_op=()
row() { awk -v n="$1" -v a="$2" -v b="$3" -v r="$4" -v u="$5" 'BEGIN { t = b - a; printf "%-48s %6d %s in %7.3f s, %8.2f ms per %s\n", n, r, u "s", t, t / r * 1e3, u }'; }
now() { date +%s.%N; }

lookup() { # lookup NAME BUS
    DBUS_SESSION_BUS_ADDRESS=$2 HOME=$work/gk-home secret-tool store --label bench app bench key bench <<<"bench-secret"
    [[ $(DBUS_SESSION_BUS_ADDRESS=$2 HOME=$work/gk-home secret-tool lookup app bench key bench) == bench-secret ]] || die "$1: lookup gave the wrong secret"
    local a b
    a=$(now)
    for _ in $(seq 1 "$RUNS"); do DBUS_SESSION_BUS_ADDRESS=$2 HOME=$work/gk-home secret-tool lookup app bench key bench >/dev/null; done
    b=$(now)
    row "secret-tool lookup, $1" "$a" "$b" "$RUNS" "look-up"
    per_op[lookup-$1]=$(awk -v a="$a" -v b="$b" -v r="$RUNS" 'BEGIN { printf "%.3f", (b - a) / r * 1e3 }')
}

storm() { # storm NAME BUS
    local a b c
    local -a clients=()
    a=$(now)
    for c in $(seq 1 10); do
        (for i in $(seq 1 "$STORM"); do
             printf 's%s-%s' "$c" "$i" | DBUS_SESSION_BUS_ADDRESS=$2 HOME=$work/gk-home secret-tool store --label storm storm "$c" >/dev/null
             [[ $(DBUS_SESSION_BUS_ADDRESS=$2 HOME=$work/gk-home secret-tool lookup storm "$c") == "s$c-$i" ]] || { echo "storm: client $c read a stale secret" >&2; exit 1; }
         done) &
        clients+=("$!")
    done
    for c in "${clients[@]}"; do wait "$c" || die "$1: a storm client failed"; done
    b=$(now)
    row "10 clients store+lookup at once, $1" "$a" "$b" "$((10 * STORM * 2))" "call"
    per_op[storm-$1]=$(awk -v a="$a" -v b="$b" -v r="$((10 * STORM * 2))" 'BEGIN { printf "%.3f", (b - a) / r * 1e3 }')
}

echo
echo "### Secret Service: secret-tool against each provider, the only one on its bus ($(gnome-keyring-daemon --version | head -1), libsecret $(pkg-config --modversion libsecret-1 2>/dev/null || echo '?'))"
lookup "gnome-keyring" "$gk_bus"
lookup "apphome-secretd" "$ah_bus"
storm "gnome-keyring" "$gk_bus"
storm "apphome-secretd" "$ah_bus"
bench_target "secret-tool lookup: apphome-secretd vs gnome-keyring" "${per_op[lookup-apphome-secretd]}" "${per_op[lookup-gnome-keyring]}" "ms" 1.0
bench_target "10 clients store+lookup: apphome-secretd vs gnome-keyring" "${per_op[storm-apphome-secretd]}" "${per_op[storm-gnome-keyring]}" "ms" 1.0
