#!/usr/bin/env bash
# Bounded coverage-guided fuzzing of the byte consumers (Fuzz/, libFuzzer + AddressSanitizer).
#
#   scripts/fuzz.sh                 build, replay known findings, fuzz each target FUZZ_SECONDS (30),
#                                   FUZZ_JOBS (the cores) targets at a time
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

# 30 s per target by default: eight targets, about 2 minutes of fuzzing in CI's bounded pass on
# two cores (4 minutes of fuzzing time).
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

# One target: its known findings replayed, then fuzzed. Everything it prints goes to its own log
# ($work/<target>/out.log), printed whole once it is done, so that targets running side by side
# do not interleave their lines. Returns non-zero on a finding.
fuzz_target() {
  local target=$1 seeds=$2 dict=$3
  local exe="$bin/$target"
  mkdir -p "$work/$target/corpus" "$work/$target/artifacts"
  if [ -d "Fixtures/fuzz/$seeds" ]; then
    cp -R "Fixtures/fuzz/$seeds/." "$work/$target/corpus/"
  fi
  local args=(-max_len=65536 -rss_limit_mb=2048 -timeout="$timeout" -print_final_stats=1
        -artifact_prefix="$work/$target/artifacts/")
  if [ "$dict" != "-" ]; then args+=(-dict="Fixtures/fuzz/$dict"); fi
  local failed=0

  # Known findings first: each file in Fixtures/fuzz/findings/<target>/ must no longer crash.
  if compgen -G "Fixtures/fuzz/findings/$target/*" >/dev/null; then
    echo "== fuzz: $target: replaying Fixtures/fuzz/findings/$target/"
    if ! "$exe" "${args[@]}" Fixtures/fuzz/findings/"$target"/* >"$work/$target/replay.log" 2>&1; then
      tail -40 "$work/$target/replay.log"
      echo "FAIL: $target: a known finding in Fixtures/fuzz/findings/$target/ still fails (log above)"
      failed=1
    fi
  fi

  echo "== fuzz: $target for ${seconds}s over $(find "$work/$target/corpus" -type f | wc -l) seeds"
  local status=0
  "$exe" "${args[@]}" -max_total_time="$seconds" "$work/$target/corpus" >"$work/$target/fuzz.log" 2>&1 || status=$?
  grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)" "$work/$target/fuzz.log" | tail -2 || true
  grep -E "^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)" "$work/$target/fuzz.log" || true

  if [ "$status" -ne 0 ] || compgen -G "$work/$target/artifacts/*" >/dev/null; then
    tail -60 "$work/$target/fuzz.log"
    mkdir -p "$saved/$target"
    cp "$work/$target/fuzz.log" "$saved/$target/fuzz.log"
    local artifact
    for artifact in "$work/$target/artifacts/"*; do
      [ -e "$artifact" ] || continue
      cp "$artifact" "$saved/$target/"
      echo "FAIL: $target: finding saved as $saved/$target/$(basename "$artifact")"
      echo "      reproduce: $exe $saved/$target/$(basename "$artifact")"
    done
    echo "FAIL: $target exited with status $status (log: $saved/$target/fuzz.log)"
    failed=1
  fi
  return "$failed"
}

# The targets run side by side, FUZZ_JOBS at a time (the machine's cores by default): libFuzzer
# runs one input at a time, on one core, so on two cores two targets take the time of one, each
# still for its full FUZZ_SECONDS. Their logs are printed in the table's order as they end.
jobs=${FUZZ_JOBS:-$(nproc)}
selected=()
for line in "${TARGETS[@]}"; do
  read -r target _ _ <<<"$line"
  if [ -n "$only" ] && [[ ",$only," != *",$target,"* ]]; then continue; fi
  selected+=("$line")
done
failed=0
next_to_print=0
# Prints, in the table's order, the logs of the targets that have ended (each writes its status
# to a file as it ends), and collects their statuses; with --all, waits for every target.
print_ended() {
  while [ "$next_to_print" -lt "$started" ]; do
    local target
    read -r target _ _ <<<"${selected[$next_to_print]}"
    if [ ! -f "$work/$target/status" ]; then
      [ "${1:-}" = "--all" ] || return 0
      wait -n 2>/dev/null || true
      continue
    fi
    cat "$work/$target/out.log"
    if [ "$(cat "$work/$target/status")" != 0 ]; then failed=1; fi
    next_to_print=$((next_to_print + 1))
  done
}
started=0
for line in "${selected[@]}"; do
  read -r target seeds dict <<<"$line"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
    wait -n 2>/dev/null || true
  done
  print_ended
  mkdir -p "$work/$target"
  (
    status=0
    fuzz_target "$target" "$seeds" "$dict" >"$work/$target/out.log" 2>&1 || status=$?
    echo "$status" >"$work/$target/status"
  ) &
  started=$((started + 1))
done
print_ended --all
if [ "$failed" -ne 0 ]; then echo "FAIL: fuzz: findings above" >&2; fi

echo "== fuzz: done in $((SECONDS - start)) s"
exit "$failed"
