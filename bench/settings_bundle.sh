#!/usr/bin/env bash
# bench/settings_bundle.sh: the settings-bundle section of `make bench` (also runs alone).
#
#   lint    defaults lint of a 500-specifier bundle with 20 localisations
#   write   defaults write of a key a settings bundle declares (validated) beside the
#           same write to a domain with no bundle (unvalidated); target: +10% at most
#
# Environment: BIN_DIR (default .build/release), SETTINGS_SPECIFIERS (500), SETTINGS_LANGUAGES (20).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
BIN_DIR=${BIN_DIR:-$top/.build/release}
defaults=$BIN_DIR/defaults
[[ -x $defaults ]] || { echo "bench/settings_bundle.sh: $defaults not found; run \`make release\` first" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "bench/settings_bundle.sh: hyperfine missing (apt-get install hyperfine)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/apphome-settings-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
big=$work/Big.bundle
common=(--style basic --warmup 5 --min-runs 30 --max-runs 300 -N)
log() { printf '\n### %s\n' "$*" >&2; }

python3 "$here/settings_bundle_fixture.py" "$big" "${SETTINGS_SPECIFIERS:-500}" "${SETTINGS_LANGUAGES:-20}"
"$defaults" lint "$big" > "$work/lint.txt" || { cat "$work/lint.txt" >&2; exit 1; }
echo "settings: $(ls "$big"/*.plist | wc -l) pages, $(ls -d "$big"/*.lproj | wc -l) localisations; lint: $(tail -1 "$work/lint.txt")"

log "settings lint: defaults lint of ${SETTINGS_SPECIFIERS:-500} specifiers, ${SETTINGS_LANGUAGES:-20} localisations"
hyperfine "${common[@]}" --export-json "$work/settings-lint.json" -n lint "$defaults lint $big"

# Register schemas under the root: ScaryBugs' bundle (7 keys) and the big one (400 keys).
mkdir -p "$root/Library/SettingsBundles"
ln -s "$top/examples/ScaryBugs-v1/ScaryBugs.app/Settings.bundle" "$root/Library/SettingsBundles/com.example.ScaryBugs.bundle"
ln -s "$big" "$root/Library/SettingsBundles/com.example.big.bundle"
d="$defaults --root $root"
$d write com.example.plain volume -int 1
$d write com.example.ScaryBugs volume -int 1
$d write com.example.big key5 -int 1
$d write com.example.ScaryBugs volume -int 9 2>/dev/null && { echo "validation did not refuse volume 9" >&2; exit 1; }

log "settings write: unvalidated vs validated (ScaryBugs) vs validated (500-row bundle)"
hyperfine "${common[@]}" --export-json "$work/settings-write.json" \
    --prepare "$d write com.example.plain volume -int 1" -n unvalidated "$d write com.example.plain volume -int 2" \
    --prepare "$d write com.example.ScaryBugs volume -int 1" -n "validated ScaryBugs" "$d write com.example.ScaryBugs volume -int 2" \
    --prepare "$d write com.example.big key5 -int 1" -n "validated 500 rows" "$d write com.example.big key5 -int 2"

# Instructions executed per write (valgrind, when installed): unlike times, they do not
# move with the load of a shared machine.
if command -v valgrind >/dev/null 2>&1; then
    for args in "com.example.plain volume -int 1" "com.example.ScaryBugs volume -int 1" "com.example.big key5 -int 1"; do
        n=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null $d write $args 2>&1 | sed -n 's/.*refs: *//p' | tr -d ,)
        printf '%s\t%s\n' "${args%% *}" "$n"
    done > "$work/instructions.tsv"
fi

# Medians and CPU time (user + system) as well as means: on a shared machine the
# mean follows the load; CPU time is what validation itself costs.
python3 - "$work" <<'PY'
import json, os, sys
w = sys.argv[1]
lint = json.load(open(f"{w}/settings-lint.json"))["results"][0]
print(f"settings lint (500 specifiers, 20 languages): median {lint['median']*1000:.1f} ms, mean {lint['mean']*1000:.1f} ms ± {lint['stddev']*1000:.1f}")
res = {r["command"]: r for r in json.load(open(f"{w}/settings-write.json"))["results"]}
base = res["unvalidated"]
cpu = lambda r: r["user"] + r["system"]
for name in ("unvalidated", "validated ScaryBugs", "validated 500 rows"):
    r = res[name]
    print(f"settings write {name:>20}: median {r['median']*1000:.2f} ms ({(r['median']/base['median'] - 1)*100:+.1f}%), "
          f"mean {r['mean']*1000:.2f} ms ± {r['stddev']*1000:.2f}, cpu {cpu(r)*1000:.2f} ms ({(cpu(r)/cpu(base) - 1)*100:+.1f}%)"
          + ("" if name == "unvalidated" else "  [target: +10% at most]"))
# The targets, for the table at the end of `make bench` (bench/target.sh's rows).
# Both the median time (what a user waits, mostly the write's fsync) and the CPU
# time (what validation itself costs), each at most +10%.
for name in ("validated ScaryBugs", "validated 500 rows"):
    for what, ours, peer, unit in (("median", res[name]["median"] * 1000, base["median"] * 1000, "ms"),
                                   ("cpu", cpu(res[name]) * 1000, cpu(base) * 1000, "ms cpu")):
        met = "met" if ours / peer <= 1.10 else "MISSED"
        row = (f"defaults write, {name} vs unvalidated ({what})", f"{ours:.3f}", f"{peer:.3f}", unit, f"{ours / peer:.3f}", "<= 1.10", met)
        print("target: %s: ours %s %s, peer %s, ratio %s (target %s): %s" % (row[0], row[1], row[3], row[2], row[4], row[5], row[6]))
        if os.environ.get("BENCH_TARGETS"):
            with open(os.environ["BENCH_TARGETS"], "a") as out:
                out.write("\t".join(row) + "\n")
import os
if os.path.exists(f"{w}/instructions.tsv"):
    rows = dict(line.split("\t") for line in open(f"{w}/instructions.tsv").read().split("\n") if line)
    base = int(rows["com.example.plain"])
    for domain, label in (("com.example.plain", "unvalidated"), ("com.example.ScaryBugs", "validated ScaryBugs"), ("com.example.big", "validated 500 rows")):
        n = int(rows[domain])
        print(f"settings write {label:>20}: {n:,} instructions ({(n / base - 1) * 100:+.1f}%)")
PY
