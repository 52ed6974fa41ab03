#!/bin/sh
# scripts/integration-passes.sh SUITES: the passes of `make test-integration` over a
# debug build made with `swift build --build-tests` (docs/testing.md):
#
#   1. every integration suite (the regular expression SUITES), under
#      scripts/with-keyring.sh;
#   2. LockedKeyringTests alone, with APPHOME_TEST_LOCKING=1 (they lock the
#      keyring of their own session);
#   3. EndToEndTests again with APPHOME_TEST_PREFSD=daemon, every command
#      through a prefsd of its own test's.
#
# Pass 3 runs beside pass 1, as a second test process (the test binary itself:
# `swift test` holds .build's lock): they share nothing but the fixture cache,
# whose builds are locked (RealClients.cached), and pass 1 leaves a third of the
# two cores idle on its own. Pass 3's output is kept in .build/daemon-pass.log
# and printed whole after pass 1's. Exits non-zero when any pass failed.
set -u
[ $# -eq 1 ] || { echo "usage: scripts/integration-passes.sh SUITES" >&2; exit 2; }
suites=$1
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}
bin=$("$swift" build --show-bin-path) || exit 1
tests=$bin/AppHomePackageTests.xctest
[ -x "$tests" ] || { echo "integration-passes.sh: $tests is missing: run swift build --build-tests" >&2; exit 1; }
log=.build/daemon-pass.log

APPHOME_TEST_PREFSD=daemon "$tests" --testing-library swift-testing \
    --filter EndToEndTests --skip PrefsdReliabilityTests >"$log" 2>&1 &
daemon=$!
trap 'kill "$daemon" 2>/dev/null || true' EXIT INT TERM

status=0
echo "== pass 1: the integration suites (pass 3 runs beside it, its output below)"
APPHOME_TEST_VIA_MAKE=1 scripts/with-keyring.sh "$swift" test --skip-build --filter "$suites" || status=1
daemon_status=0
wait "$daemon" || daemon_status=$?
trap - EXIT INT TERM
echo "== pass 3: EndToEndTests through prefsd (APPHOME_TEST_PREFSD=daemon), beside pass 1"
cat "$log"
[ "$daemon_status" -eq 0 ] || { echo "== pass 3 failed (exit status $daemon_status)"; status=1; }
echo "== pass 2: LockedKeyringTests (APPHOME_TEST_LOCKING=1)"
APPHOME_TEST_LOCKING=1 scripts/with-keyring.sh "$swift" test --skip-build --filter LockedKeyringTests || status=1
exit $status
