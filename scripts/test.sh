#!/usr/bin/env bash
# The whole test suite from a fresh machine: set-up, a warning-free build, every test, a bounded
# fuzz pass. This is the README's test command; .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

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

echo "== tests"
swift test --skip-build 2>&1 | tee "$log"
grep -qE "Test run with [0-9]+ tests? .*passed|Executed [1-9][0-9]* tests?, with 0 failures" "$log" || {
  echo "FAIL: no passing test run reported" >&2; exit 1; }

if [ -f Fuzz/Package.swift ]; then
  echo "== fuzz (bounded)"
  bash scripts/fuzz.sh
fi
