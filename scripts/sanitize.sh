#!/usr/bin/env bash
# The test suite under a sanitizer (docs/RELIABILITY.md, "Sanitizers"), each in a build directory
# of its own, with the suppression files in scripts/sanitizers/ (every entry says why it is
# there). Exits non-zero on any sanitizer report, any failed test, or a run that reports no tests.
#
#   bash scripts/sanitize.sh thread           # ThreadSanitizer, the whole suite
#   bash scripts/sanitize.sh address          # AddressSanitizer with LeakSanitizer, the whole suite
#   bash scripts/sanitize.sh thread --short   # CI's pass: the concurrency core only
#
# ThreadSanitizer builds define BLUEBONNET_TSAN: every module's `Mutex` is then BluebonnetCore's
# `SanitizerMutex`, which tells ThreadSanitizer about the lock's hand-offs (it cannot see
# Synchronization's futex lock), and every module's `withCheckedContinuation` (and siblings)
# acquires what the resume released (`SanitizerContinuation`: the runtime leaves that out when the
# resume comes before the await). Both sanitizers set BLUEBONNET_SANITIZER, which the few checks a
# sanitizer makes meaningless (peak memory, wall-clock bounds) read to skip themselves, each saying why.
set -euo pipefail
cd "$(dirname "$0")/.."

kind=${1:-}
short=0
if [ "${2:-}" = "--short" ]; then short=1; elif [ -n "${2:-}" ]; then kind=; fi
case "$kind" in
  thread) flags=(--sanitize=thread -Xswiftc -DBLUEBONNET_TSAN) ;;
  address) flags=(--sanitize=address) ;;
  *) echo "usage: scripts/sanitize.sh thread|address [--short]" >&2; exit 2 ;;
esac
scratch=".build-${kind:0:1}san"  # .build-tsan, .build-asan
suppressions="$(pwd)/scripts/sanitizers"
export BLUEBONNET_SANITIZER="$kind"
# Reports go to standard error and are counted from the log. ThreadSanitizer goes on after a
# report (so one run shows them all) and fails the process at exit; AddressSanitizer stops the
# process at a memory error; LeakSanitizer reports at exit.
export TSAN_OPTIONS="suppressions=$suppressions/tsan.supp:halt_on_error=0:second_deadlock_stack=1:history_size=4${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$suppressions/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

bash scripts/setup.sh >/dev/null

# Each run's whole output (the reports' stacks) is kept in $scratch/sanitize-logs/.
logs="$scratch/sanitize-logs"
mkdir -p "$logs"
runs=0
start=$(date +%s)

echo "== build ($kind sanitizer, $scratch)"
swift build --build-tests --scratch-path "$scratch" "${flags[@]}" 2>&1 | tail -n 3

reports=0
failures=0
tests=0
# One `swift test` run; its sanitizer reports and its test count are added up.
run() {
  local label=$1; shift
  runs=$(( runs + 1 ))
  local name=${label%%:*}
  local log="$logs/$runs-${name// /-}.log"
  echo "== tests ($label): $log"
  # The run's own status (the first command of the pipe): a sanitizer report fails the process.
  set +e
  env "$@" 2>&1 | tee "$log" | grep -E "^(WARNING: ThreadSanitizer|ERROR: (Address|Leak)Sanitizer|SUMMARY: |✘|Test run with|.*error: )"
  local status=${PIPESTATUS[0]}
  set -e
  local found
  found=$(grep -cE "^(WARNING: ThreadSanitizer|ERROR: AddressSanitizer|Direct leak|Indirect leak)" "$log" || true)
  reports=$(( reports + found ))
  local line
  if line=$(grep -E "Test run with [0-9]+ tests?" "$log" | tail -n 1); then
    tests=$(( tests + $(echo "$line" | sed -E 's/.*Test run with ([0-9]+) tests?.*/\1/') ))
  fi
  if [ "$status" -ne 0 ] || ! grep -qE "Test run with [1-9][0-9]* tests? .*passed" "$log"; then
    echo "FAIL ($label): status $status, $found sanitizer report(s)" >&2
    failures=$(( failures + 1 ))
  fi
}

swift_test=(swift test --skip-build --scratch-path "$scratch" "${flags[@]}")
if [ "$short" -eq 1 ]; then
  # The concurrency core: the event loop, the connection, the connector and the pool, the
  # exchange and upload pump, a session's requests and streamed responses (docs/RELIABILITY.md
  # says what it costs).
  run "short: loop, connection, pool, exchange, session, streaming" "${swift_test[@]}" --filter \
    'PosixTests/EventLoopTests/|TransportSocketTests/(ConnectionTests|ConnectionPoolTests|ConnectorTests)/|BluebonnetTests\.(HTTP1ExchangeIntegrationTests|StreamBackpressureTests|UploadPlanTests)|BluebonnetIntegrationTests\.(SessionTests|RequestLifecycleTests|StreamingTests)'
else
  run "main set" "${swift_test[@]}" --skip BluebonnetPosixTests --skip BluebonnetTransportTests \
    --skip BluebonnetLoadTests --skip BluebonnetDiskFaultTests --skip BluebonnetTelemetryBootstrapTests
  run "BluebonnetPosix" BLUEBONNET_FD_LEAK_CHECK=1 "${swift_test[@]}" --filter BluebonnetPosixTests
  run "BluebonnetTransport" BLUEBONNET_TRANSPORT_FD_LEAK_CHECK=1 "${swift_test[@]}" --filter BluebonnetTransportTests
  run "BluebonnetLoad" BLUEBONNET_LOAD_FD_CHECK=1 "${swift_test[@]}" --filter BluebonnetLoadTests
  run "BluebonnetDiskFault" BLUEBONNET_DISK_FAULTS=1 "${swift_test[@]}" --filter BluebonnetDiskFaultTests
  run "BluebonnetTelemetryBootstrap" BLUEBONNET_TELEMETRY_BOOTSTRAP=1 "${swift_test[@]}" --filter BluebonnetTelemetryBootstrapTests
fi

echo "sanitize ($kind$([ "$short" -eq 1 ] && echo ", short")): $tests tests, $reports sanitizer report(s), $failures failed run(s), $(( $(date +%s) - start )) s"
[ "$reports" -eq 0 ] && [ "$failures" -eq 0 ]
