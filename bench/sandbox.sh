#!/usr/bin/env bash
# The sandbox's start-up overhead: `apphome run <id> -- /bin/true` (the registry, the run
# lock, prefsd's socket checked, then bubblewrap, given the seccomp filter and /.apphome-info
# while it makes the sandbox: docs/sandbox.md, "Cost") against
# a bare `bwrap` with the same namespaces and mounts running /bin/true, in the same run.
# Target: the median difference is at most 5 ms.
#
# Usage: BIN_DIR=.build/release bench/sandbox.sh   (run.sh calls it)
set -euo pipefail
BIN_DIR=${BIN_DIR:?set BIN_DIR to the directory holding apphome and prefsd}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/target.sh
. "$here/target.sh"
examples=$here/../examples
command -v bwrap > /dev/null || { echo "bench/sandbox.sh: bwrap is not installed (Debian package bubblewrap)" >&2; exit 1; }
command -v hyperfine > /dev/null || { echo "bench/sandbox.sh: hyperfine is not installed" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/apphome-sandbox-bench.XXXXXX")
prefsd_pid=
cleanup() {
    if [[ -n $prefsd_pid ]]; then kill "$prefsd_pid" 2> /dev/null || true; wait "$prefsd_pid" 2> /dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
root=$work/root
socket=$work/run/prefsd.sock
export APPHOME_PREFSD=require APPHOME_SOCKET=$socket
mkdir -p "$work/run"
ah() { "$BIN_DIR/apphome" --root "$root" "$@"; }
ah install "$examples/ScaryBugs-v1/ScaryBugs.app" > /dev/null
"$BIN_DIR/prefsd" --root "$root" --socket "$socket" --credential-socket none 2> "$work/prefsd.log" &
prefsd_pid=$!
for _ in $(seq 1 200); do [[ -S $socket ]] && break; sleep 0.05; done
[[ -S $socket ]] || { cat "$work/prefsd.log" >&2; echo "bench/sandbox.sh: prefsd did not start" >&2; exit 1; }
ah run com.example.ScaryBugs -- /bin/true || { echo "bench/sandbox.sh: apphome run cannot make a sandbox here" >&2; exit 1; }

home=$(ah container com.example.ScaryBugs data)
app=$(ah container com.example.ScaryBugs app)
printf '<plist version="1.0"><dict><key>BundleIdentifier</key><string>com.example.ScaryBugs</string></dict></plist>\n' > "$work/info.plist"
# What apphome gives bubblewrap, less the seccomp filter (built in apphome, part of its cost).
bare=(bwrap --unshare-all --unshare-user --disable-userns --die-with-parent --new-session --cap-drop ALL --share-net
      --ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin --symlink usr/sbin /sbin
      --proc /proc --dev /dev)
for f in /etc/passwd /etc/group /etc/nsswitch.conf /etc/hosts /etc/host.conf /etc/resolv.conf /etc/gai.conf /etc/localtime \
         /etc/timezone /etc/ssl /etc/ca-certificates /etc/ca-certificates.conf /etc/fonts /etc/ld.so.cache /etc/ld.so.conf \
         /etc/ld.so.conf.d /etc/alternatives /etc/mime.types /etc/os-release /etc/locale.alias /etc/protocols /etc/services; do
    bare+=(--ro-bind-try "$f" "$f")
done
case $home in /tmp/*) bare+=(--tmpfs /tmp) ;; *) bare+=(--bind "$home/tmp" /tmp) ;; esac
bare+=(--bind "$home" "$home" --ro-bind "$app" "$app" --bind "$socket" "$socket"
       --ro-bind "$work/info.plist" /.apphome-info --remount-ro / --chdir "$home" -- /bin/true)
"${bare[@]}"

# Paired rounds (ROUNDS, default 5): each round times both, one after the other, so a change
# in the machine's load between them weighs on both; the figure is the median of the rounds'
# differences of medians.
rounds=${ROUNDS:-5}
for round in $(seq 1 "$rounds"); do
    hyperfine --style basic --warmup 3 --min-runs 30 --max-runs 100 -N --export-json "$work/round$round.json" \
        -n "apphome run <id> -- /bin/true (sandboxed)" "$BIN_DIR/apphome --root $root run com.example.ScaryBugs -- /bin/true" \
        -n "bwrap, same mounts, /bin/true (peer)" "${bare[*]}" > "$work/round$round.txt"
done
cat "$work/round1.txt"
python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
ours, peer, diffs = [], [], []
for i in range(1, rounds + 1):
    r = json.load(open(f"{work}/round{i}.json"))["results"]
    o, p = r[0]["median"] * 1000, r[1]["median"] * 1000
    ours.append(o); peer.append(p); diffs.append(o - p)
    print(f"round {i}: apphome run median {o:.2f} ms, bare bwrap median {p:.2f} ms, difference {o - p:.2f} ms")
d = statistics.median(diffs)
print(f"sandbox start-up overhead: apphome run {statistics.median(ours):.2f} ms, bare bwrap {statistics.median(peer):.2f} ms "
      f"(medians of {rounds} rounds); difference, median of the rounds: {d:.2f} ms (target <= 5 ms): {'ok' if d <= 5 else 'OVER'}")
with open(f"{work}/figures", "w") as f:
    f.write(f"{statistics.median(ours):.2f} {statistics.median(peer):.2f} {d:.2f}\n")
PY
# The row of `make bench`'s table of targets (bench/target.sh): the bound is on the difference.
read -r ours peer difference < "$work/figures"
_bench_row "sandbox start-up: apphome run vs bare bwrap (at most 5 ms more)" "$ours" "$peer" ms "+$difference" "<= +5 ms" \
    "$(awk -v d="$difference" 'BEGIN { print (d <= 5) ? "met" : "MISSED" }')"
