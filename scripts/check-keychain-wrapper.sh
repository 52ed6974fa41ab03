#!/usr/bin/env bash
# scripts/check-keychain-wrapper.sh [OPTIONS] DIR: builds a keychain wrapper
# library written for Apple platforms (KeychainAccess, Valet, …) from its own,
# unchanged sources in DIR against AppHome's `Security` module, with its XCTest
# tests, in a throw-away package that depends on AppHome by version (a tagged
# clone of this checkout, scripts/versioned-apphome.sh); installs the test
# binary as an app on a throw-away AppHome root, runs it inside `apphome run`,
# and prints XCTest's counts (the whole log is kept, its path printed).
#
# Options (the defaults are read from DIR's Package.swift where it says):
#   --name NAME         the library's module (default: the first library product)
#   --sources PATH      its sources, relative to DIR (default: the target's path:,
#                       else Sources/NAME)
#   --tests PATH        its XCTest sources (default: Tests/NAMETests, else the
#                       sources' sibling NAMETests)
#   --skip FILE         leave this test file out (one that needs UI or an API
#                       AppHome does not offer); may be repeated
#   --skip-test NAME    leave this test out (Class/testMethod, or testMethod),
#                       one that cannot pass here for a reason the report
#                       must give (a hard-coded Apple team id); may be repeated
#   --bundle-id ID      the test app's bundle id (default com.example.NAME.tests)
#   --group GROUP       a keychain-access-groups entry of the app (the app is
#                       signed with a throw-away key; $(AppIdentifierPrefix)
#                       is its team); may be repeated
#   --key KEYFILE       sign the app with this key (apphome keygen) instead, so
#                       that a test can know its team
#   --prefsd            run a prefsd on the throw-away root; the calls go through it
#   --no-error-bridging leave out the NSError bridging of the library's own
#                       error types (below)
# Environment: BIN_DIR (AppHome's built commands, default .build/debug),
# WORK_DIR (the kept build directory, default .build/wrapper-check/NAME).
# Nothing of the wrapper is copied into the checkout; exit status is the
# test binary's.
#
# Error bridging: on Apple platforms the Swift runtime turns any Error into an
# NSError for `catch let e as NSError` and `e as? NSError` (with a
# CustomNSError's domain, code and userInfo). Without the Objective-C runtime
# that cast fails for every enum or struct that does not conform to
# _ObjectiveCBridgeable (swift's DynamicCast.cpp: the Error-to-NSError path is
# under SWIFT_OBJC_INTEROP), so such a `catch` never matches on Linux. The
# script gives each top-level, non-generic enum or struct of the library that
# declares Error (or CustomNSError, LocalizedError) that conformance in one added
# file, AppHomeErrorBridging.swift: the NSError is the one Foundation's `as
# NSError` coercion makes of the value, and casts back to the type only from an
# NSError made so. The types are named in the output.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
usage() { echo "usage: scripts/check-keychain-wrapper.sh [--name NAME] [--sources PATH] [--tests PATH] [--skip FILE]... [--skip-test NAME]... [--bundle-id ID] [--group GROUP]... [--key KEYFILE] [--prefsd] [--no-error-bridging] DIR" >&2; exit 2; }
die() { echo "check-keychain-wrapper.sh: $*" >&2; exit 1; }

name='' sources='' tests='' bundle_id='' key='' prefsd=0 bridging=1 skips=() skip_tests=() groups=() dir=''
while [ $# -gt 0 ]; do
    case "$1" in
        --name) [ $# -ge 2 ] || usage; name=$2; shift 2 ;;
        --sources) [ $# -ge 2 ] || usage; sources=$2; shift 2 ;;
        --tests) [ $# -ge 2 ] || usage; tests=$2; shift 2 ;;
        --skip) [ $# -ge 2 ] || usage; skips+=("$2"); shift 2 ;;
        --skip-test) [ $# -ge 2 ] || usage; skip_tests+=("$2"); shift 2 ;;
        --bundle-id) [ $# -ge 2 ] || usage; bundle_id=$2; shift 2 ;;
        --group) [ $# -ge 2 ] || usage; groups+=("$2"); shift 2 ;;
        --key) [ $# -ge 2 ] || usage; key=$2; shift 2 ;;
        --prefsd) prefsd=1; shift ;;
        --no-error-bridging) bridging=0; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        -*) echo "check-keychain-wrapper.sh: unknown option $1" >&2; usage ;;
        *) [ -z "$dir" ] || usage; dir=$1; shift ;;
    esac
done
[ -n "$dir" ] || usage
[ -d "$dir" ] || die "$dir is not a directory"
[ -z "$key" ] || [ -f "$key" ] || die "no key at $key (apphome keygen KEYFILE makes one)"
[ -z "$key" ] || key=$(cd "$(dirname "$key")" && pwd)/$(basename "$key")
dir=$(cd "$dir" && pwd)
for tool in git swift; do command -v "$tool" >/dev/null 2>&1 || die "$tool is missing"; done
bin=${BIN_DIR:-$here/.build/debug}
[ -x "$bin/apphome" ] || die "$bin/apphome not found; build AppHome first (swift build) or set BIN_DIR"

manifest=$dir/Package.swift
if [ -z "$name" ]; then
    [ -f "$manifest" ] && name=$(sed -n 's/.*\.library( *name: *"\([A-Za-z0-9_]*\)".*/\1/p' "$manifest" | head -n 1)
    [ -n "$name" ] || die "cannot tell the library's name from $manifest; pass --name"
fi
[[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "'$name' is not a module name"
if [ -z "$sources" ]; then
    [ -f "$manifest" ] && sources=$(tr -d '\n' < "$manifest" | sed -n "s/.*\.target( *name: *\"$name\"[^)]*path: *\"\([^\"]*\)\".*/\1/p")
    [ -n "$sources" ] || sources=Sources/$name
fi
[ -d "$dir/$sources" ] || die "no sources at $dir/$sources; pass --sources"
if [ -z "$tests" ]; then
    for t in "Tests/${name}Tests" "$(dirname "$sources")/${name}Tests"; do
        [ -d "$dir/$t" ] && { tests=$t; break; }
    done
    [ -n "$tests" ] || die "no tests found next to $sources; pass --tests"
fi
[ -d "$dir/$tests" ] || die "no tests at $dir/$tests"
bundle_id=${bundle_id:-com.example.$name.tests}

work=${WORK_DIR:-$here/.build/wrapper-check/$name}
mkdir -p "$work"
version=$("$here/scripts/versioned-apphome.sh" "$here/.build/versioned-client/AppHome")

# The package: the wrapper's Swift files as they are (nothing else of it).
pkg=$work/package
copy_swift() { # FROM TO [SKIP...]
    local from=$1 to=$2; shift 2
    mkdir -p "$to"
    find "$to" -name '*.swift' -type f -delete
    (cd "$from" && find . -name '*.swift' -type f) | while IFS= read -r f; do
        local base skip=0
        base=$(basename "$f")
        for s in "$@"; do [ "$s" = "$base" ] && skip=1; done
        [ $skip -eq 1 ] && continue
        mkdir -p "$to/$(dirname "$f")"
        cp -p "$from/$f" "$to/$f"
    done
}
copy_swift "$dir/$sources" "$pkg/Sources/$name"
copy_swift "$dir/$tests" "$pkg/Tests/${name}Tests" ${skips[@]+"${skips[@]}"}
# On Apple platforms the Security framework is visible to whatever imports the
# wrapper (its tests use kSec… with only `import KeychainAccess`); the one file
# the package adds to the library says so here.
cat > "$pkg/Sources/$name/AppHomeSecurityVisible.swift" <<'SHIM'
// Added by scripts/check-keychain-wrapper.sh: Security is visible to the
// library's clients, as the framework is on Apple platforms.
@_exported import Security
SHIM
# Darwin's Error-to-NSError bridging for the library's own error types (see the
# header): their declarations, `[public] [final|indirect] enum|struct NAME...: ...Error`
# or `extension NAME: ...Error` of a top-level one, found in its sources.
bridged=()
rm -f "$pkg/Sources/$name/AppHomeErrorBridging.swift"
if [ $bridging -eq 1 ]; then
    libsrc=$work/library-sources.swift
    find "$pkg/Sources/$name" -name '*.swift' -type f ! -name 'AppHome*.swift' -exec cat {} + > "$libsrc"
    error_protocols='(Error|CustomNSError|LocalizedError)([ ,{]|$)'
    decl='^(public |open |internal |package )?(final |indirect )?(enum|struct) '
    candidates=$( { grep -E "$decl[A-Za-z_][A-Za-z0-9_]* *:[^{]*[:, ]$error_protocols" "$libsrc" | sed -E "s/$decl([A-Za-z_][A-Za-z0-9_]*).*/\4/"
                    grep -E "^extension [A-Za-z_][A-Za-z0-9_]* *:[^{]*[:, ]$error_protocols" "$libsrc" | sed -E 's/^extension ([A-Za-z_][A-Za-z0-9_]*).*/\1/'; } | sort -u) || true
    for t in $candidates; do
        declaration=$(grep -m 1 -E "$decl$t([ :<{]|\$)" "$libsrc" || true)
        [ -n "$declaration" ] || continue                       # not declared here at top level
        case "$declaration" in *"$t<"*) continue ;; esac        # generic
        grep -qE "extension $t *:.*_ObjectiveCBridgeable" "$libsrc" && continue
        bridged+=("$t")
    done
    if [ ${#bridged[@]} -gt 0 ]; then
        {
            cat <<'BRIDGE'
// Added by scripts/check-keychain-wrapper.sh: the library's error types bridge
// to NSError as every Error does on Apple platforms (`catch let e as NSError`).
import Foundation

final class AppHomeBridgedError<Value: Error>: NSError, @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        // Foundation's own coercion: a CustomNSError's domain, code and userInfo.
        let plain = (value as any Error) as NSError
        self.value = value
        super.init(domain: plain.domain, code: plain.code, userInfo: plain.userInfo)
    }

    required init?(coder: NSCoder) { nil }
}
BRIDGE
            for t in "${bridged[@]}"; do
                access=''
                grep -qE "^(public |open )(final |indirect )?(enum|struct) $t([ :<{]|\$)" "$libsrc" && access='public '
                cat <<BRIDGE

extension $t: _ObjectiveCBridgeable {
    ${access}func _bridgeToObjectiveC() -> NSError { AppHomeBridgedError(self) }

    ${access}static func _forceBridgeFromObjectiveC(_ source: NSError, result: inout $t?) {
        result = (source as? AppHomeBridgedError<$t>)?.value
    }

    ${access}static func _conditionallyBridgeFromObjectiveC(_ source: NSError, result: inout $t?) -> Bool {
        result = (source as? AppHomeBridgedError<$t>)?.value
        return result != nil
    }

    ${access}static func _unconditionallyBridgeFromObjectiveC(_ source: NSError?) -> $t {
        guard let value = (source as? AppHomeBridgedError<$t>)?.value else {
            preconditionFailure("\(source.map { "\(\$0.domain) \(\$0.code)" } ?? "nil") is not a $t")
        }
        return value
    }
}
BRIDGE
            done
        } > "$pkg/Sources/$name/AppHomeErrorBridging.swift"
    fi
fi
cat > "$pkg/Package.swift.new" <<MANIFEST
// swift-tools-version:6.0
// Made by scripts/check-keychain-wrapper.sh: $name's own sources against AppHome's Security.
import PackageDescription

let package = Package(
    name: "WrapperCheck",
    dependencies: [.package(url: "file://$here/.build/versioned-client/AppHome", from: "0.1.0")],
    targets: [
        .target(name: "$name", dependencies: [.product(name: "Security", package: "AppHome")]),
        .testTarget(name: "${name}Tests", dependencies: ["$name"]),
    ],
    swiftLanguageModes: [.v5]
)
MANIFEST
cmp -s "$pkg/Package.swift.new" "$pkg/Package.swift" 2>/dev/null && rm "$pkg/Package.swift.new" || mv "$pkg/Package.swift.new" "$pkg/Package.swift"

echo "== $name from $dir ($(git -C "$dir" rev-parse --short HEAD 2>/dev/null || echo 'not a git checkout')), AppHome $version"
if [ ${#bridged[@]} -gt 0 ]; then
    echo "== NSError bridging as on Apple platforms (AppHomeErrorBridging.swift) for: ${bridged[*]}"
elif [ $bridging -eq 1 ]; then
    echo "== no error type of $name to bridge to NSError"
fi
(cd "$pkg" && swift package update >/dev/null 2>&1 && swift build --build-tests 2>&1 | grep -E 'error|warning: .*Security|Compiling '"$name"'|Build complete' | grep -v '^\[' ) || true
xctest=$pkg/.build/debug/WrapperCheckPackageTests.xctest
[ -x "$xctest" ] && [ "$xctest" -nt "$pkg/Package.swift" ] || (cd "$pkg" && swift build --build-tests >/dev/null 2>&1) || die "the package did not build (cd $pkg && swift build --build-tests)"

# A throw-away AppHome root; the test binary installed as an app.
root=$(mktemp -d "${TMPDIR:-/tmp}/apphome-wrapper.XXXXXX")
daemon=''
cleanup() { [ -z "$daemon" ] || { kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null || true; }; rm -rf "$root"; }
trap cleanup EXIT
export APPHOME_ROOT=$root/root APPHOME_KEYCHAIN_KEY_STORE=file APPHOME_PREFSD=off
app=$root/${name}Tests.app
mkdir -p "$app"
cp "$xctest" "$app/${name}Tests"
{
    printf '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict>\n'
    printf '<key>CFBundleIdentifier</key><string>%s</string>\n' "$bundle_id"
    printf '<key>CFBundleVersion</key><string>1</string>\n<key>CFBundleExecutable</key><string>%sTests</string>\n' "$name"
    if [ ${#groups[@]} -gt 0 ]; then
        printf '<key>keychain-access-groups</key><array>\n'
        for g in "${groups[@]}"; do printf '<string>%s</string>\n' "$g"; done
        printf '</array>\n'
    fi
    printf '</dict></plist>\n'
} > "$app/Info.plist"
if [ -n "$key" ]; then
    "$bin/apphome" sign "$app" --key "$key" >/dev/null
elif [ ${#groups[@]} -gt 0 ]; then
    "$bin/apphome" keygen "$root/team.key" >/dev/null
    "$bin/apphome" sign "$app" --key "$root/team.key" >/dev/null
fi
"$bin/apphome" install "$app" >/dev/null
if [ $prefsd -eq 1 ]; then
    "$bin/prefsd" --foreground --root "$APPHOME_ROOT" --socket "$root/prefsd.sock" 2>"$root/prefsd.log" &
    daemon=$!
    for _ in $(seq 200); do [ -S "$root/prefsd.sock" ] && break; sleep 0.05; done
    export APPHOME_PREFSD=require APPHOME_SOCKET=$root/prefsd.sock
fi
log=$work/test.log
executable="$("$bin/apphome" container "$bundle_id" app)/${name}Tests"
# The tests to run: all of them, or all but the skipped ones (XCTest takes a
# comma-separated list of Module.Class/test names).
selection=()
if [ ${#skip_tests[@]} -gt 0 ]; then
    chosen=''
    count=0
    while IFS= read -r t; do
        case "$t" in *.*/*) ;; *) continue ;; esac
        skip=0
        for s in "${skip_tests[@]}"; do
            [ "${t#*.}" = "$s" ] || [ "${t##*/}" = "$s" ] && skip=1
        done
        if [ $skip -eq 1 ]; then echo "  skipped: $t"; continue; fi
        chosen=${chosen:+$chosen,}$t
        count=$((count + 1))
    done < <("$executable" --list-tests 2>/dev/null)
    [ $count -gt 0 ] || die "every test is skipped"
    selection=("$chosen")
fi
echo "== apphome run $bundle_id -- ${name}Tests  (keychain through $([ $prefsd -eq 1 ] && echo prefsd || echo 'the files'))"
set +e
# Through prefsd the tests run in the app's sandbox (prefsd is its one door to the
# keychain); on the files they need the app's files, so they run unconfined.
sandbox=(); [ $prefsd -eq 1 ] || sandbox=(--no-sandbox)
"$bin/apphome" run "$bundle_id" ${sandbox[@]+"${sandbox[@]}"} -- "$executable" ${selection[@]+"${selection[@]}"} > "$log" 2>&1
status=$?
set -e
grep -E "error: |: error -|Test Case .* failed|Executed [0-9]+ tests?" "$log" | sed 's/^/  /'
echo "== exit status $status; the whole log: $log"
exit $status
