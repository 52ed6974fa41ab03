#!/bin/sh
# scripts/with-keyring.sh CMD [ARG...]: runs CMD inside a private D-Bus
# session with a real, unlocked gnome-keyring (Secret Service), in a
# throw-away HOME and XDG directories, so the keychain's integration tests
# run against the real thing and nothing of the user's is touched.
#
# The keyring password is fixed and passed on stdin (never argv). Never
# run `secret-tool lock` in here: libsecret 0.20.5 (Debian 12) crashes
# after locking. Lock with org.freedesktop.Secret.Service.Lock over D-Bus;
# unlock again with `security unlock-keychain` and the password on stdin
# (gnome-keyring's internal UnlockWithMasterPassword: Service.Unlock needs a
# prompt, which fails without a display, and running
# `gnome-keyring-daemon --unlock` again does not unlock a running daemon).
set -eu

if [ "${1:-}" = "--inside" ]; then
    shift
    printf %s "apphome-ci-keyring" | gnome-keyring-daemon --unlock --components=secrets >/dev/null
    # The daemon may take its bus name a moment after --unlock returns; a
    # test must not race it (or have the bus start a second one).
    i=0
    until gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
        --method org.freedesktop.DBus.GetNameOwner org.freedesktop.secrets >/dev/null 2>&1; do
        i=$((i + 1))
        [ "$i" -lt 100 ] || { echo "with-keyring.sh: gnome-keyring did not take org.freedesktop.secrets" >&2; exit 1; }
        sleep 0.05
    done
    export APPHOME_TEST_SECRET_SERVICE=1
    # Keys a test leaves in the kernel's user keyring expire instead of
    # staying until the machine reboots.
    export APPHOME_KEYCHAIN_KEY_CACHE="${APPHOME_KEYCHAIN_KEY_CACHE:-600}"
    exec "$@"
fi

for tool in dbus-run-session gnome-keyring-daemon; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "with-keyring.sh: $tool is missing (apt-get install dbus-daemon gnome-keyring)" >&2
        exit 1
    }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/apphome-keyring.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -m 700 "$tmp/home" "$tmp/run" "$tmp/data" "$tmp/config" "$tmp/cache"
# Keep the toolchain's own caches where they were (the build directory,
# module caches) while HOME and XDG point at the throw-away tree.
HOME="$tmp/home" XDG_RUNTIME_DIR="$tmp/run" XDG_DATA_HOME="$tmp/data" \
XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache" \
    dbus-run-session -- "$0" --inside "$@"
