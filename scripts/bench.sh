#!/usr/bin/env bash
# Runs the Benchmarks package (package-benchmark builds it in release) and prints its tables:
# Bluebonnet's HTTP/1 response parser next to SwiftNIO's decoder, one table per metric so that
# each `HTTP1:` row sits above its `NIO:` twin. Not part of CI.
#
#   scripts/bench.sh                          # everything
#   scripts/bench.sh --filter 'APIResponse'   # extra arguments go to `swift package benchmark`
#   scripts/bench.sh --grouping benchmark     # one table per benchmark instead
#
# Reading the tables: Benchmarks/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

grouping=(--grouping metric)
for arg in "$@"; do
  if [ "$arg" = "--grouping" ]; then grouping=(); fi
done

exec swift package --package-path Benchmarks benchmark --no-progress "${grouping[@]}" "$@"
