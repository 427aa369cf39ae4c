#!/usr/bin/env bash
# The README's main job: Bluebonnet against the HTTP clients a Swift service on Linux would use
# instead (AsyncHTTPClient, URLSession) and two references (wrk, a minimal C client), against the
# same local nginx, in the same run. Sets up a fresh Debian machine (scripts/setup.sh: nginx, wrk,
# cc, unshare), builds the Benchmarks package's `throughput`, runs every scenario, and writes
# results/<timestamp>/{results.md,results.json,chart.svg} with results/latest pointing there.
#
#   bash scripts/throughput.sh                 # every scenario, 3 rounds × (1 s warm-up + 5 s)
#   bash scripts/throughput.sh --quick         # every scenario once, ~2.5 s each (CI: proves it works)
#   bash scripts/throughput.sh --scenarios small-get-c64,get-64m-stream --rounds 5
#   bash scripts/throughput.sh --scenarios download-1g-file,upload-256m-file,multipart-256m-file
#                                              # the transfers: 1 GiB / 256 MiB files, with curl
#   bash scripts/throughput.sh --clients ahc,bluebonnet-async   # Bluebonnet's clients only when named
#   bash scripts/throughput.sh --list          # scenarios and which clients run them
#
# Every argument goes to the `throughput` executable (Benchmarks/README.md, "throughput").
# Build: release, except with --quick, which asserts nothing about speed and so takes the debug
# build (a first release build of AsyncHTTPClient + SwiftNIO takes ~13 minutes on two cores, a
# debug one a few); THROUGHPUT_CONFIG=release|debug overrides.
# Wall-clock numbers need a quiet machine: compare clients within one run, never across runs.
set -euo pipefail
cd "$(dirname "$0")/.."

config=release
for arg in "$@"; do
  if [ "$arg" = "--quick" ]; then config=debug; fi
done
config="${THROUGHPUT_CONFIG:-$config}"

bash scripts/setup.sh

echo "== build ($config): Benchmarks/throughput"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift build -c "$config" --package-path Benchmarks --product throughput 2>&1 | tee "$log"
# Zero warnings in our code (the C reference is built with -Wall -Wextra at run time).
if grep -E "warning:" "$log" | grep -E "Benchmarks/(Sources|Benchmarks|cref|Package\.swift)"; then
  echo "FAIL: the build above has warnings in the harness" >&2
  exit 1
fi

echo "== throughput $*"
exec "$(swift build -c "$config" --package-path Benchmarks --show-bin-path)/throughput" "$@"
