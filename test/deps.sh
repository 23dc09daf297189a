#!/usr/bin/env bash
# Installs every Debian package that building, testing and `make demo` need, on a fresh
# Debian 12 (bookworm) machine, as root. Idempotent: a second run only checks.
#
# Go is not installed here: it comes with the machine image and is used only to build the
# local control plane (test/env/build.sh says so clearly if it is missing).
set -euo pipefail

packages=(
  build-essential pkg-config git ca-certificates curl openssl
  libcurl4-openssl-dev libjansson-dev libmicrohttpd-dev libssl-dev libyaml-dev check
  libgnutls28-dev zlib1g-dev
  redis-server redis-tools redis-sentinel
  iproute2 iptables procps psmisc util-linux gnuplot-nox jq
  clang clang-tidy clang-format cppcheck valgrind gdb libclang-rt-14-dev
  prometheus # promtool and the server for test/monitoring (its service is not started)
)
# libhiredict-dev: the server client with TLS (lib/valkey/README.md); bookworm has only
# hiredis 0.14, without TLS.
backports=(valkey-server valkey-tools valkey-sentinel libhiredict-dev)
# Azurite (test/env/storage.sh, the Azure Blob emulator) is installed with npm. A Node.js
# that brings its own npm (a vendor's nodejs package, as on our machine image: Node 20) is
# kept; otherwise Debian's nodejs 18 and npm 9.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo

missing() { for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || echo "$p"; done; }

need=$(missing "${packages[@]}")
need_bp=$(missing "${backports[@]}")
if [ -z "$need" ] && [ -z "$need_bp" ]; then
  echo "deps: all packages present"
  exit 0
fi

if [ -n "$need_bp" ] && ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo "deps: adding the bookworm-backports source"
  $SUDO tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi

export DEBIAN_FRONTEND=noninteractive
# Packages must not start their services here: tests start their own servers.
policy=/usr/sbin/policy-rc.d
added_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null; $SUDO chmod +x "$policy"; added_policy=1
fi
trap '[ $added_policy -eq 1 ] && $SUDO rm -f "$policy"' EXIT

$SUDO apt-get update -qq
# shellcheck disable=SC2086
[ -z "$need" ] || $SUDO apt-get install -y -qq --no-install-recommends $need
# shellcheck disable=SC2086
[ -z "$need_bp" ] || $SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports $need_bp
echo "deps: installed $(echo $need $need_bp | wc -w) packages"
