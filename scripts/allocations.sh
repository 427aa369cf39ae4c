#!/usr/bin/env bash
# The allocation gate (issue 15): heap allocations per small GET through Bluebonnet's Session
# (`Bluebonnet:GET:Small`, Benchmarks/Benchmarks/SessionGET) against the figure checked in under
# Benchmarks/Thresholds/. package-benchmark builds the SessionGET target in release (no SwiftNIO or
# AsyncHTTPClient in it), runs the benchmark against the fixture nginx measuring only mallocs, and
# compares the p90 with the threshold plus the benchmark's tolerance (2). Mallocs do not depend on
# the machine's load, so this is a gate where wall clock could not be one. .ci/run runs it.
#
#   bash scripts/allocations.sh            # check: fails when the p90 is above threshold + 2
#   bash scripts/allocations.sh --update   # write the current p90 as the new threshold (commit it)
#
# Better than the threshold by more than the tolerance passes, and says to lower the threshold
# with --update so that the gain is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

args=(--target '^SessionGET$' --filter '^Bluebonnet:GET:Small$' --metric mallocCountTotal --no-progress)

if [ "${1:-}" = "--update" ]; then
  exec swift package --package-path Benchmarks --allow-writing-to-package-directory benchmark \
    thresholds update "${args[@]}" --path Benchmarks/Thresholds
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
swift package --package-path Benchmarks benchmark thresholds check "${args[@]}" \
  --path Benchmarks/Thresholds 2>&1 | tee "$log" || status=$?
# package-benchmark exits non-zero both when worse and when better than the threshold; its last
# verdict line says which.
if [ $status -eq 0 ]; then
  echo "allocations: Bluebonnet:GET:Small within its threshold"
elif grep -q "is BETTER than the defined thresholds" "$log" && ! grep -q "is WORSE than" "$log"; then
  echo "allocations: Bluebonnet:GET:Small is BETTER than its threshold: keep the gain with" \
    "'bash scripts/allocations.sh --update' and commit Benchmarks/Thresholds"
else
  echo "FAIL: Bluebonnet:GET:Small allocates more per request than Benchmarks/Thresholds allows," \
    "or the check did not run (status $status; see above). Find the new allocation" \
    "(Benchmarks/README.md, 'Finding allocations') or, if it is wanted, raise the threshold with --update." >&2
  exit 1
fi
