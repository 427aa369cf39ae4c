#!/usr/bin/env bash
# The soak (docs/RELIABILITY.md, "Soak"): Bluebonnet against the fixture nginx on loopback, at 256
# concurrent tasks, over HTTP and then HTTPS, sampling the process's resident set and descriptors
# once a second (Sources/BluebonnetSoak). Fails on any request error or wrong body, a resident
# set leaving ±10 % of its post-warm-up value, descriptors growing after warm-up, or a descriptor
# left open after the session shuts down.
#
#   bash scripts/soak.sh               # 1,000,000 requests per scheme, release build (a few minutes)
#   bash scripts/soak.sh --short       # 30,000 per scheme on the debug build (CI's pass)
#   bash scripts/soak.sh --requests 5000000 --max-seconds 3600
#
# Other arguments go to BluebonnetSoak (--requests, --concurrency, --warmup, --max-seconds,
# --schemes, --connections, --report FILE). The JSON report with every sample is written to
# results/soak-<timestamp>.json unless --report names another file.
set -euo pipefail
cd "$(dirname "$0")/.."

config=release
arguments=()
for arg in "$@"; do
  if [ "$arg" = "--short" ]; then
    config=debug
    arguments+=(--requests 30000 --warmup 15000 --max-seconds 600)
  else
    arguments+=("$arg")
  fi
done
report=()
if [[ " ${arguments[*]-} " != *" --report "* ]]; then
  mkdir -p results
  report=(--report "results/soak-$(date -u +%Y%m%dT%H%M%SZ).json")
fi

bash scripts/setup.sh >/dev/null
echo "== build ($config): BluebonnetSoak"
swift build -c "$config" --product BluebonnetSoak 2>&1 | tail -n 1
bin="$(swift build -c "$config" --show-bin-path)/BluebonnetSoak"
"$bin" "${arguments[@]}" "${report[@]}"
