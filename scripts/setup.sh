#!/usr/bin/env bash
# Installs what building and testing Bluebonnet needs on a fresh Debian machine. Idempotent:
# packages already present are not touched, and apt-get update runs only when something is missing.
set -euo pipefail

APT_PACKAGES=(
  pkg-config
  libssl-dev      # CBluebonnetOpenSSL (system OpenSSL 3)
  openssl         # `openssl` CLI: Fixtures/certs/make-certs.sh and the s_server tests
  zlib1g-dev      # CBluebonnetZlib
  python3         # fixture and replay servers
)

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

command -v swift >/dev/null || { echo "setup: swift is not on PATH (Swift 6.x toolchain required)" >&2; exit 1; }
echo "setup: ok"
