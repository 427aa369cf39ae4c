#!/usr/bin/env bash
# The whole test suite from a fresh machine: set-up, a warning-free build, every test, a bounded
# fuzz pass. This is the README's test command; .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

# The repository stands alone: nothing in it may reach for a folder beside or outside the
# checkout (the corpus, the replay server and the design doc used to live in a shared folder next
# to it). Checked first, before anything is installed or built. The patterns are written so that
# this file does not match itself.
echo "== standalone check"
found=0
grep -rInE --exclude-dir='.build*' --exclude-dir=.swiftpm \
  -e '\.\./shared' -e '/work/share[d]' -e "[\"']shared[\"']" \
  Sources Tests scripts Fixtures Fuzz Benchmarks Package.swift || found=$?
if [ "$found" -eq 0 ]; then
  echo "FAIL: the lines above refer to a shared folder outside the repository; what the build and the tests need belongs inside it (Fixtures/, ARCHITECTURE.md)" >&2
  exit 1
elif [ "$found" -ne 1 ]; then
  echo "FAIL: the standalone check could not read the tree (grep status $found)" >&2
  exit 1
fi

# Foundation's Process crashes the test process now and then in Swift 6.3.1 (an over-read in
# Process.run(), swift-corelibs-foundation PR 5472): tests run programs through ChildProcess.
echo "== no Foundation Process in the tests"
if grep -rnE --include='*.swift' -e '[^A-Za-z]Process\(\)' Sources Tests; then
  echo "FAIL: the lines above use Foundation's Process; use BluebonnetTestSupport's ChildProcess" >&2
  exit 1
fi

bash scripts/setup.sh

log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "== build (tests included)"
swift build --build-tests 2>&1 | tee "$log"
# Zero warnings in our own code (Sources/, Tests/, the manifest). Dependencies' warnings don't count.
root=$(pwd)
if grep -E "warning:" "$log" | grep -E "^($root/)?(Sources|Tests|Package\.swift)|'main':|'bluebonnet'" ; then
  echo "FAIL: the build above has warnings in our code" >&2
  exit 1
fi

total=0
check_passed() {
  local line
  line=$(grep -E "Test run with [1-9][0-9]* tests? .*passed" "$log" | tail -n 1) || {
    echo "FAIL: no passing test run reported" >&2; exit 1; }
  total=$(( total + $(echo "$line" | sed -E 's/.*Test run with ([0-9]+) tests?.*/\1/') ))
}

# Alamofire's documents' Swift samples, type-checked against this build with only the module name
# changed (Fixtures/alamofire-samples/README.md): the floors are today's counts, so a change that
# breaks a sample that compiled fails here.
echo "== Alamofire document samples"
python3 scripts/alamofire-samples.py --min-5 34 --min-4 114

# A download without a destination ends in a temporary file its caller owns (Alamofire's
# behaviour), and the tests that make such downloads leave those files. Everything from here on
# (servers' folders, the nginx docroot, those files) goes to a temporary folder of this run's own,
# removed when the script ends, so a run leaves nothing behind in /tmp.
run_tmp=$(mktemp -d "${TMPDIR:-/tmp}/bluebonnet-run.XXXXXX")
export TMPDIR="$run_tmp"
trap 'rm -f "$log"; rm -rf "$run_tmp" 2>/dev/null || true' EXIT

echo "== tests"
swift test --skip-build --skip BluebonnetPosixTests --skip BluebonnetTransportTests --skip BluebonnetLoadTests \
  --skip BluebonnetDiskFaultTests --skip BluebonnetTelemetryBootstrapTests 2>&1 | tee "$log"
check_passed

# The kernel-door tests count the process's descriptors to catch leaks: they run alone.
echo "== tests (BluebonnetPosix, alone, with descriptor-leak checks)"
BLUEBONNET_FD_LEAK_CHECK=1 swift test --skip-build --filter BluebonnetPosixTests 2>&1 | tee "$log"
check_passed

# The transport tests count the process's sockets around each socket test likewise: alone.
echo "== tests (BluebonnetTransport, alone, with descriptor-leak checks)"
BLUEBONNET_TRANSPORT_FD_LEAK_CHECK=1 swift test --skip-build --filter BluebonnetTransportTests 2>&1 | tee "$log"
check_passed

# 500 sequential and 500 concurrent requests, then the process's sockets against the baseline: alone.
echo "== tests (BluebonnetLoad, alone, with descriptor-leak checks)"
BLUEBONNET_LOAD_FD_CHECK=1 swift test --skip-build --filter BluebonnetLoadTests 2>&1 | tee "$log"
check_passed

# The documentation of every module, warnings (broken symbol links among them) as errors.
echo "== docs (DocC, warnings are errors)"
bash scripts/docs.sh

# A lowered file-size limit (a disk that fills up under a download) is per process: alone. As
# root, in a mount namespace of its own (unshare --mount), where the tests also mount small
# tmpfs file systems that fill up or turn read-only; elsewhere those tests are skipped.
echo "== tests (BluebonnetDiskFault, alone, with RLIMIT_FSIZE lowered and small tmpfs mounts)"
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && unshare --mount true 2>/dev/null; then
  BLUEBONNET_DISK_FAULTS=1 BLUEBONNET_OUTER_MOUNT_NAMESPACE="$(readlink /proc/self/ns/mnt)" \
    unshare --mount --propagation private \
    swift test --skip-build --filter BluebonnetDiskFaultTests 2>&1 | tee "$log"
else
  echo "(not root or no unshare: the tmpfs tests are skipped)"
  BLUEBONNET_DISK_FAULTS=1 swift test --skip-build --filter BluebonnetDiskFaultTests 2>&1 | tee "$log"
fi
check_passed

# MetricsSystem and InstrumentationSystem are bootstrapped once per process, for good: alone.
echo "== tests (BluebonnetTelemetryBootstrap, alone, with metrics and tracing bootstrapped)"
BLUEBONNET_TELEMETRY_BOOTSTRAP=1 swift test --skip-build --filter BluebonnetTelemetryBootstrapTests 2>&1 | tee "$log"
check_passed

# The soak's short pass (docs/RELIABILITY.md): 30,000 requests over HTTP and over HTTPS at 256
# concurrent tasks on the debug build, no error, flat resident set and descriptors.
echo "== soak (short pass)"
bash scripts/soak.sh --short

# The concurrency core under ThreadSanitizer (docs/RELIABILITY.md, "Sanitizers"): a build of its
# own (.build-tsan), the connection, pool, exchange and session suites, zero reports.
echo "== sanitizers (ThreadSanitizer, short pass)"
bash scripts/sanitize.sh thread --short

if [ -f Fuzz/Package.swift ]; then
  echo "== fuzz (bounded)"
  bash scripts/fuzz.sh
fi

# One closing line for whoever reads the end of this log.
echo "tests: ${total} passed, 0 failed"
