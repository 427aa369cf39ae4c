#!/usr/bin/env bash
# The README's main job: Bluebonnet against the HTTP clients a Swift service on Linux would use
# instead (AsyncHTTPClient, URLSession) and two references (wrk, a minimal C client), against the
# same local nginx, in the same run. Sets up a fresh Debian machine (scripts/setup.sh: nginx, wrk,
# cc, unshare), builds the Benchmarks package in release, runs every scenario, and writes
# results/<timestamp>/{results.md,results.json,chart.svg} with results/latest pointing there.
#
#   bash scripts/throughput.sh                 # every scenario, 3 rounds × (1 s warm-up + 5 s)
#   bash scripts/throughput.sh --quick         # every scenario once, ~2.5 s each (CI: proves it works)
#   bash scripts/throughput.sh --scenarios small-get-c64,get-64m-stream --rounds 5
#   bash scripts/throughput.sh --clients ahc,bluebonnet-async   # Bluebonnet's clients only when named
#   bash scripts/throughput.sh --list          # scenarios and which clients run them
#
# Every argument goes to the `throughput` executable (Benchmarks/README.md, "throughput").
# Wall-clock numbers need a quiet machine: compare clients within one run, never across runs.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

echo "== build (release): Benchmarks/throughput"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift build -c release --package-path Benchmarks --product throughput 2>&1 | tee "$log"
# Zero warnings in our code (the harness and the C client are built with -Wall -Wextra at run time).
if grep -E "warning:" "$log" | grep -E "Benchmarks/(Sources|cref|Package\.swift)"; then
  echo "FAIL: the build above has warnings in the harness" >&2
  exit 1
fi

echo "== throughput $*"
exec "$(swift build -c release --package-path Benchmarks --show-bin-path)/throughput" "$@"
