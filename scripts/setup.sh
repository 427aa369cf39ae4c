#!/usr/bin/env bash
# Installs what building and testing Bluebonnet needs on a fresh Debian machine. Idempotent:
# packages already present are not touched, and apt-get update runs only when something is missing.
#
# Integration-test servers (Fixtures/servers/README.md): nginx (never left running as a system
# service: the tests start their own), openssl s_server, python3 for the fault and replay
# servers, and httpbin + gunicorn in a pinned virtual environment. The throughput harness
# (scripts/throughput.sh) adds wrk, a C compiler and unshare.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  pkg-config
  libssl-dev      # CBluebonnetOpenSSL (system OpenSSL 3)
  openssl         # `openssl` CLI: Fixtures/certs/make-certs.sh and the s_server tests (TLS, integration)
  zlib1g-dev      # CBluebonnetZlib
  python3         # fixture, fault and replay servers
  python3-venv    # the httpbin virtual environment
  nginx           # integration tests: static files, keep-alive, gzip, chunked, TLS (nginx-light is a transitional alias in Debian 12)
  wrk             # throughput harness: the small-request reference (scripts/throughput.sh)
  gcc             # throughput harness: `cc` builds the C reference client (Benchmarks/cref/cref.c)
  util-linux      # throughput harness: `unshare` gives the URLSession worker the test CA (Benchmarks/README.md)
  curl            # integration tests: a request's cURLDescription is run for real (CURLDescriptionRunTests)
  iproute2        # reachability tests: `ip netns`, veth links, addresses and routes in a private network namespace
)

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  # Debian starts a freshly installed nginx on port 80; a policy-rc.d that says "no" (101) stops
  # invoke-rc.d from starting any service during this install. Ours only if none was there.
  policy=/usr/sbin/policy-rc.d
  made_policy=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    made_policy=1
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    || { [ -n "$made_policy" ] && $SUDO rm -f "$policy"; exit 1; }
  if [ -n "$made_policy" ]; then $SUDO rm -f "$policy"; fi
fi

# The system nginx service stays off, now and at boot (tests run their own nginx on OS-picked
# loopback ports). systemctl and update-rc.d also work when systemd is not running.
if command -v systemctl >/dev/null; then
  if [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now nginx >/dev/null 2>&1 || true
  else
    $SUDO systemctl disable nginx >/dev/null 2>&1 || true
  fi
fi
if command -v update-rc.d >/dev/null && [ -e /etc/init.d/nginx ]; then
  $SUDO update-rc.d nginx disable >/dev/null 2>&1 || true
fi
if [ -s /run/nginx.pid ]; then
  pid=$(cat /run/nginx.pid)
  if kill -0 "$pid" 2>/dev/null; then
    echo "setup: stopping the system nginx (pid $pid)"
    $SUDO kill -TERM "$pid" || true
  fi
fi

# httpbin + gunicorn: a virtual environment of pinned versions, rebuilt when the pins change.
requirements=Fixtures/servers/httpbin-requirements.txt
venv="${BLUEBONNET_HTTPBIN_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/bluebonnet/httpbin-venv}"
if ! { cmp -s "$requirements" "$venv/requirements.txt" \
       && "$venv/bin/python" -c "import httpbin, gunicorn" >/dev/null 2>&1; }; then
  echo "setup: installing httpbin and gunicorn into $venv"
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$requirements"
  cp "$requirements" "$venv/requirements.txt"
fi

command -v swift >/dev/null || { echo "setup: swift is not on PATH (Swift 6.x toolchain required)" >&2; exit 1; }
echo "setup: ok"
