#!/usr/bin/env bash
# bench/settings_app.sh: the Settings app section of `make bench` (also runs alone).
#
#   page   from the request to the page drawn, for an app whose Root page holds 200
#          specifiers: the browser's load event and the moment the rows are drawn
#          (Debian's chromium, headless, driven by Playwright); target: 100 ms
#   change a switch clicked on the page to the server's answer (the domain file committed
#          by then) beside `defaults write` of the same key, same run; target: 2x at most
#
# Environment: BIN_DIR (default .build/release), SETTINGS_APP_RUNS (30).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
# shellcheck source=bench/target.sh
. "$here/target.sh"
BIN_DIR=${BIN_DIR:-$top/.build/release}
for tool in apphome apphome-settings defaults; do
    [[ -x $BIN_DIR/$tool ]] || { echo "bench/settings_app.sh: $BIN_DIR/$tool not found; run \`make release\` first" >&2; exit 1; }
done
command -v hyperfine >/dev/null || { echo "bench/settings_app.sh: hyperfine missing (apt-get install hyperfine)" >&2; exit 1; }
[[ -x /usr/bin/chromium ]] || { echo "bench/settings_app.sh: /usr/bin/chromium missing (apt-get install chromium)" >&2; exit 1; }
venv=$("$top/scripts/playwright-venv.sh")

work=$(mktemp -d "${TMPDIR:-/tmp}/apphome-settings-app-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export APPHOME_ROOT=$work/root HOME=$work APPHOME_PREFSD=off APPHOME_MANAGED_DIR=$work/managed
log() { printf '\n### %s\n' "$*" >&2; }

# An app (unsigned) whose Settings.bundle's Root page holds 200 specifiers, two localisations.
app=$work/Big.app
mkdir -p "$app"
python3 - "$top/examples/ScaryBugs-v1/ScaryBugs.app/Info.plist" "$app/Info.plist" <<'PY'
import plistlib, sys
info = plistlib.load(open(sys.argv[1], "rb"))
info.update({"CFBundleIdentifier": "com.example.BigSettings", "CFBundleName": "BigSettings", "CFBundleDisplayName": "Big Settings"})
plistlib.dump(info, open(sys.argv[2], "wb"))
PY
cp "$top/examples/ScaryBugs-v1/ScaryBugs.app/ScaryBugs" "$app/"
python3 "$here/settings_bundle_fixture.py" "$app/Settings.bundle" 200 2 1
"$BIN_DIR/apphome" install "$app" >/dev/null
domain=com.example.BigSettings

log "settings app: page of 200 specifiers and a change's round trip (chromium), SETTINGS_APP_RUNS=${SETTINGS_APP_RUNS:-30}"
"$BIN_DIR/apphome" settings > "$work/server.out" 2> "$work/server.err" &
server=$!
for _ in $(seq 100); do [[ -s $work/server.out ]] && break; sleep 0.05; done
url=$(head -1 "$work/server.out")
[[ $url == http://127.0.0.1:* ]] || { echo "bench/settings_app.sh: apphome settings printed no URL" >&2; cat "$work/server.err" >&2; kill "$server"; exit 1; }
"$venv/bin/python" "$here/settings_app_bench.py" "$url" "$domain" "${SETTINGS_APP_RUNS:-30}" > "$work/browser.json"
kill -TERM "$server"
wait "$server" || { echo "bench/settings_app.sh: apphome settings did not exit 0 on SIGTERM" >&2; exit 1; }
key=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["key"])' "$work/browser.json")

log "settings app: defaults write $domain $key (the same key, the same values)"
d="$BIN_DIR/defaults"
hyperfine --style basic --warmup 5 --min-runs 30 --max-runs 300 -N --export-json "$work/defaults.json" \
    --prepare "$d write $domain $key -bool false" -n "defaults write" "$d write $domain $key -bool true"

python3 - "$work" <<'PY'
import json, statistics, sys
w = sys.argv[1]
b = json.load(open(f"{w}/browser.json"))
d = json.load(open(f"{w}/defaults.json"))["results"][0]
write_ms = statistics.median(d["times"]) * 1000
load, drawn, trip = (statistics.median(b[k]) for k in ("load", "drawn", "roundtrip"))
print(f"settings app: page of 200 specifiers ({b['rows']} rows drawn): load event {load:.1f} ms, drawn {drawn:.1f} ms (median of {len(b['load'])}; target <= 100 ms): "
      + ("ok" if max(load, drawn) <= 100 else "OVER"))
print(f"settings app: change round trip {trip:.2f} ms vs defaults write {write_ms:.2f} ms (medians): "
      f"{trip / write_ms:.2f}x (target <= 2x): " + ("ok" if trip <= 2 * write_ms else "OVER"))
with open(f"{w}/figures", "w") as f:
    f.write(f"{load:.1f} {drawn:.1f} {trip:.2f} {write_ms:.2f}\n")
PY
# The rows of `make bench`'s table of targets (bench/target.sh).
read -r load drawn trip write_ms < "$work/figures"
bench_bound "settings app: 200-specifier page, request to load event (median)" "$load" ms 100
bench_target "settings app: a switch's round trip vs defaults write (medians)" "$trip" "$write_ms" ms 2
