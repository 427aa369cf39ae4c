#!/usr/bin/env bash
# Builds the DocC documentation of every module with a catalog (swift-docc-plugin), treating every
# warning as an error: a broken symbol link, an undocumented parameter or an article that shadows
# a symbol fails. scripts/test.sh runs it; the archives land under .build-docc/ (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=()
for catalog in Sources/*/*.docc; do
  targets+=(--target "$(basename "$(dirname "$catalog")")")
done
swift package --scratch-path .build-docc generate-documentation "${targets[@]}" --warnings-as-errors
