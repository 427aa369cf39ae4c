#!/usr/bin/env bash
# Bounded coverage-guided fuzzing of the byte consumers (Fuzz/, libFuzzer + AddressSanitizer).
#
#   scripts/fuzz.sh                 build, replay known findings, fuzz each target FUZZ_SECONDS (30)
#   FUZZ_SECONDS=600 scripts/fuzz.sh
#   FUZZ_TARGETS=FuzzResponseParser scripts/fuzz.sh
#   FUZZ_TIMEOUT=60 nice -n 19 scripts/fuzz.sh   a long run at low priority: libFuzzer's per-input
#                                                 timeout is wall time, and a starved process
#                                                 otherwise reports inputs that take 1 ms as hangs
#
# Seeds are copied into a temporary corpus, so the repository stays clean. Exits non-zero on any
# finding (crash, failed invariant, leak, timeout, OOM) and prints where the reproducer was saved.
# Called by scripts/test.sh; see Fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

# One line per target: executable target, seed directory under Fixtures/fuzz/, dictionary (or -).
TARGETS=(
  "FuzzResponseParser response-parser http.dict"
  "FuzzContentDecoder content-decoder -"
  "FuzzCacheHeaders cache-headers cache.dict"
  "FuzzCookies cookies cookies.dict"
  "FuzzAuthChallenges auth-challenges auth.dict"
  "FuzzDownloadRanges download-ranges ranges.dict"
  "FuzzMultipart multipart multipart.dict"
  "FuzzRedirects redirects uri.dict"
)

# 30 s per target by default: eight targets, about 4 minutes of fuzzing in CI's bounded pass.
seconds=${FUZZ_SECONDS:-30}
timeout=${FUZZ_TIMEOUT:-10}   # seconds one input may take before it counts as a hang
only=${FUZZ_TARGETS:-}
scratch=Fuzz/.build-fuzz
saved="$root/$scratch/findings"   # reproducers of this run (ignored by git)
build_flags=(-c release --package-path Fuzz --scratch-path "$scratch" -Xswiftc -sanitize=fuzzer,address)

work=$(mktemp -d "${TMPDIR:-/tmp}/bluebonnet-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "== fuzz: build (release, -sanitize=fuzzer,address)"
start=$SECONDS
swift build "${build_flags[@]}" 2>&1 | tee "$work/build.log"
# Zero compiler warnings in the fuzz targets (the linker's note about an ASan symbol is not ours).
if grep -E "^($root/)?Fuzz/(Sources|Package\.swift).*warning:" "$work/build.log"; then
  echo "FAIL: the fuzz build has warnings" >&2
  exit 1
fi
bin=$(swift build "${build_flags[@]}" --show-bin-path)
echo "   built in $((SECONDS - start)) s"

# ASan: report leaks, never continue after an error; libFuzzer turns either into a crash artifact.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
# Failures print through libFuzzer and ASan; Swift's own backtracer would only add noise under ASan.
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"

failed=0
for line in "${TARGETS[@]}"; do
  read -r target seeds dict <<<"$line"
  if [ -n "$only" ] && [[ ",$only," != *",$target,"* ]]; then continue; fi
  exe="$bin/$target"
  mkdir -p "$work/$target/corpus" "$work/$target/artifacts"
  if [ -d "Fixtures/fuzz/$seeds" ]; then
    cp -R "Fixtures/fuzz/$seeds/." "$work/$target/corpus/"
  fi
  args=(-max_len=65536 -rss_limit_mb=2048 -timeout="$timeout" -print_final_stats=1
        -artifact_prefix="$work/$target/artifacts/")
  if [ "$dict" != "-" ]; then args+=(-dict="Fixtures/fuzz/$dict"); fi

  # Known findings first: each file in Fixtures/fuzz/findings/<target>/ must no longer crash.
  if compgen -G "Fixtures/fuzz/findings/$target/*" >/dev/null; then
    echo "== fuzz: $target: replaying Fixtures/fuzz/findings/$target/"
    if ! "$exe" "${args[@]}" Fixtures/fuzz/findings/"$target"/* >"$work/$target/replay.log" 2>&1; then
      tail -40 "$work/$target/replay.log" >&2
      echo "FAIL: $target: a known finding in Fixtures/fuzz/findings/$target/ still fails (log above)" >&2
      failed=1
    fi
  fi

  echo "== fuzz: $target for ${seconds}s over $(find "$work/$target/corpus" -type f | wc -l) seeds"
  status=0
  "$exe" "${args[@]}" -max_total_time="$seconds" "$work/$target/corpus" >"$work/$target/fuzz.log" 2>&1 || status=$?
  grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)" "$work/$target/fuzz.log" | tail -2 || true
  grep -E "^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)" "$work/$target/fuzz.log" || true

  if [ "$status" -ne 0 ] || compgen -G "$work/$target/artifacts/*" >/dev/null; then
    tail -60 "$work/$target/fuzz.log" >&2
    mkdir -p "$saved/$target"
    cp "$work/$target/fuzz.log" "$saved/$target/fuzz.log"
    for artifact in "$work/$target/artifacts/"*; do
      [ -e "$artifact" ] || continue
      cp "$artifact" "$saved/$target/"
      echo "FAIL: $target: finding saved as $saved/$target/$(basename "$artifact")" >&2
      echo "      reproduce: $exe $saved/$target/$(basename "$artifact")" >&2
    done
    echo "FAIL: $target exited with status $status (log: $saved/$target/fuzz.log)" >&2
    failed=1
  fi
done

echo "== fuzz: done in $((SECONDS - start)) s"
exit "$failed"
