#!/bin/sh
# scripts/startup-order.sh: rewrites Sources/defaults/startup.order, the functions a
# release `defaults` runs to read a key, read a domain and write a key.
#
# The release link of `defaults` (Package.swift) lays these functions out side by side
# (lld's --symbol-ordering-file), so the few hundred KB of code a command runs come
# from a handful of pages of the 9 MB text instead of one page here and one there:
# each first touch of a page is a page fault, and at start-up they cost as much as
# the instructions. A name the code no longer has is skipped by the linker, so a
# stale list only makes start-up a little slower; run this again after a change
# to the read or write path (docs/STARTUP.md).
#
# Needs valgrind (apt-get install valgrind) and python3; builds into
# .build/startup-order (a release build linked with its symbol table), and
# touches nothing else but the order file.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/Sources/defaults/startup.order
scratch=$top/.build/startup-order
command -v valgrind >/dev/null 2>&1 || { echo "scripts/startup-order.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }

# The same release build, but linked keeping the symbol table (the last strip option wins).
rm -f "$scratch/release/defaults"   # relinked even when only the order file changed
swift build -c release --product defaults --package-path "$top" --scratch-path "$scratch" -Xlinker --strip-debug
bin=$scratch/release/defaults

work=$(mktemp -d "${TMPDIR:-/tmp}/startup-order.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The benchmark's domain (bench/fixtures.py): ~100 keys of every common type.
mkdir "$work/schemas"
python3 "$top/bench/fixtures.py" "$work/domain.plist" "$work/schemas" "$work/values.txt"
root=$work/root
"$bin" --root "$root" import com.example.editor "$work/domain.plist"

# Each workload once under callgrind; its function names, unmangled as the linker sees them.
n=0
profile() {
    n=$((n + 1))
    env -i PATH=/usr/bin:/bin HOME="$work" valgrind --tool=callgrind --demangle=no \
        --callgrind-out-file="$work/callgrind.$n" "$bin" --root "$root" "$@" >/dev/null 2>&1
}
profile read com.example.editor FontSize
profile read com.example.editor
profile write com.example.editor FontSize -int 14
profile read-type com.example.editor FontSize

# One function per line, those of the first workload first (the one the benchmark times
# beside dconf), then what each further workload adds.
{
    echo "# Functions \`defaults\` runs to read and write; made by scripts/startup-order.sh, do not edit."
    : > "$work/seen"
    for i in $(seq 1 "$n"); do
        sed -n -E 's/^c?fn=\([0-9]+\) (.*)$/\1/p' "$work/callgrind.$i" \
            | sed -E "s/'[0-9]+\$//" \
            | grep -v -E '^(0x[0-9a-f]+|\(below main\))$' \
            | LC_ALL=C sort -u > "$work/names"
        LC_ALL=C comm -23 "$work/names" "$work/seen"
        LC_ALL=C sort -u -o "$work/seen" "$work/seen" "$work/names"
    done
} > "$out.new"
mv "$out.new" "$out"
echo "scripts/startup-order.sh: $(($(wc -l < "$out") - 1)) functions in ${out#"$top"/}"
