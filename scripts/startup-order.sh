#!/bin/sh
# scripts/startup-order.sh: rewrites Sources/defaults/startup.order, the functions a
# release `defaults` runs, and the data it touches, to read a key, read a domain and
# write a key.
#
# The release link of `defaults` (Package.swift) lays these out side by side (lld's
# --symbol-ordering-file), so the code and data a command touches come from a few
# pages of the 13 MB binary instead of one page here and one there: each first touch
# of a page is a page fault, and at start-up they cost as much as the instructions. A name the code no longer has is skipped by the linker, so a
# stale list only makes start-up a little slower; run this again after a change
# to the read or write path (docs/STARTUP.md).
#
# Needs valgrind (apt-get install valgrind) and python3; builds into
# .build/startup-order (a release build linked with its symbol table; or takes
# STARTUP_ORDER_BIN), and touches nothing else but the order file.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/Sources/defaults/startup.order
scratch=$top/.build/startup-order
command -v valgrind >/dev/null 2>&1 || { echo "scripts/startup-order.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }

# The same release build, but linked keeping the symbol table (the last strip option wins).
# STARTUP_ORDER_BIN names such a binary made otherwise (e.g. the release link command
# of .build/release.yaml run again without --strip-all), instead of building one here.
if [ -n "${STARTUP_ORDER_BIN:-}" ]; then
    bin=$STARTUP_ORDER_BIN
else
    rm -f "$scratch/release/defaults"   # relinked even when only the order file changed
    swift build -c release -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors --product defaults --package-path "$top" --scratch-path "$scratch" -Xlinker --strip-debug
    bin=$scratch/release/defaults
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/startup-order.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The benchmark's domain (bench/fixtures.py): ~100 keys of every common type.
mkdir "$work/schemas"
python3 "$top/bench/fixtures.py" "$work/domain.plist" "$work/schemas" "$work/values.txt"
root=$work/root
"$bin" --root "$root" import com.example.editor "$work/domain.plist"
# A validated write (bench/settings_bundle.sh's): ScaryBugs' Settings.bundle registered
# for its domain, its compiled form made once before the profile.
mkdir -p "$root/Library/SettingsBundles"
ln -s "$top/examples/ScaryBugs-v1/ScaryBugs.app/Settings.bundle" "$root/Library/SettingsBundles/com.example.ScaryBugs.bundle"
"$bin" --root "$root" write com.example.ScaryBugs volume -int 1

# Each workload once under callgrind (the functions it runs, by the names the linker
# sees) and once under lackey (every address it loads or stores, for its data). As in a
# desktop session, XDG_RUNTIME_DIR is set: the command first looks for prefsd's socket.
mkdir -m 0700 "$work/runtime"
n=0
profile() {
    n=$((n + 1))
    for tool in callgrind lackey; do
        case $tool in
            callgrind) options="--demangle=no --callgrind-out-file=$work/callgrind.$n" ;;
            lackey) options="--trace-mem=yes --log-file=$work/lackey.$n" ;;
        esac
        # shellcheck disable=SC2086  # the options are words
        env -i PATH=/usr/bin:/bin HOME="$work" XDG_RUNTIME_DIR="$work/runtime" \
            valgrind --tool=$tool $options "$bin" --root "$root" "$@" >/dev/null 2>&1
    done
}
profile read com.example.editor FontSize
profile read com.example.editor
profile write com.example.editor FontSize -int 14
profile read-type com.example.editor FontSize
profile write com.example.ScaryBugs volume -int 2

# The data symbols (in the writable segments: relro, data, bss) a lackey log touched.
# Each object's data sits in a few sections the linker can move like functions: listed,
# the sections a command writes come together instead of one page here and one there.
data_symbols() {
    python3 - "$bin" "$1" <<'PY'
import bisect, subprocess, sys
binary, log = sys.argv[1], sys.argv[2]
segments = []
for line in subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True).stdout.splitlines():
    f = line.split()
    if f and f[0] == "LOAD" and "W" in "".join(f[6:-1]):
        segments.append((int(f[2], 16), int(f[2], 16) + int(f[5], 16)))
symbols = []
for line in subprocess.run(["nm", "-n", "-S", "--defined-only", binary], capture_output=True, text=True, check=True).stdout.splitlines():
    f = line.split()
    if len(f) == 4 and f[2] in "bBdDrRvV":
        start = int(f[0], 16)
        if any(lo <= start < hi for lo, hi in segments):
            symbols.append((start, start + int(f[1], 16), f[3]))
symbols.sort()
starts = [s[0] for s in symbols]
seen = set()
with open(log) as trace:
    for line in trace:
        if len(line) < 4 or line[0] != " " or line[1] not in "LSM":
            continue
        address = int(line[3:].split(",")[0], 16)
        i = bisect.bisect_right(starts, address) - 1
        if i >= 0 and address < symbols[i][1] and symbols[i][2] not in seen:
            seen.add(symbols[i][2])
            print(symbols[i][2])
PY
}

# One symbol per line: the functions of the first workload (the one the benchmark times
# beside dconf), then what each further workload adds; then the data the same way.
{
    echo "# Functions and data \`defaults\` touches to read and write; made by scripts/startup-order.sh, do not edit."
    : > "$work/seen"
    for i in $(seq 1 "$n"); do
        sed -n -E 's/^c?fn=\([0-9]+\) (.*)$/\1/p' "$work/callgrind.$i" \
            | sed -E "s/'[0-9]+\$//" \
            | grep -v -E '^(0x[0-9a-f]+|\(below main\))$' \
            | LC_ALL=C sort -u > "$work/names"
        LC_ALL=C comm -23 "$work/names" "$work/seen"
        LC_ALL=C sort -u -o "$work/seen" "$work/seen" "$work/names"
    done
    : > "$work/seen-data"
    for i in $(seq 1 "$n"); do
        data_symbols "$work/lackey.$i" | while read -r name; do
            grep -q -x -F -e "$name" "$work/seen-data" || { echo "$name"; echo "$name" >> "$work/seen-data"; }
        done
    done
} > "$out.new"
mv "$out.new" "$out"
echo "scripts/startup-order.sh: $(($(wc -l < "$out") - 1)) symbols in ${out#"$top"/}"
