#!/usr/bin/env bash
# Builds umoci (the OCI image layout tool `make image` uses) from the Go module proxy,
# pinned by tools/go.mod and tools/go.sum, once per version, into a cache outside the
# repository: ${REDIS_OPERATOR_CACHE:-~/.cache/redis-operator}/umoci/<version>/bin/umoci.
# A second run with the binary present only prints its path (the last line, always).
#
# Env: REDIS_OPERATOR_CACHE, GOPROXY (the go command's default otherwise).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.env"
cache=${REDIS_OPERATOR_CACHE:-$HOME/.cache/redis-operator}
bin="$cache/umoci/$UMOCI_VERSION/bin"

if [ -x "$bin/umoci" ]; then echo "$bin/umoci"; exit 0; fi
grep -q "github.com/opencontainers/umoci $UMOCI_VERSION" "$here/tools/go.mod" ||
  { echo "image-tool: tools/go.mod does not require umoci $UMOCI_VERSION (versions.env)" >&2; exit 1; }
command -v go >/dev/null || export PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "image-tool: go is not installed (needed only to build umoci)" >&2; exit 1; }
# Static and reproducible: no cgo, no VCS stamp, no local paths.
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0
tmp="$bin.tmp.$$"
rm -rf "$tmp"; mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
echo "image-tool: building umoci $UMOCI_VERSION into $bin" >&2
cd "$here/tools"
go build -trimpath -ldflags "-s -w" -o "$tmp/umoci" github.com/opencontainers/umoci/cmd/umoci
"$tmp/umoci" --version >/dev/null
mkdir -p "$(dirname "$bin")"
rm -rf "$bin"; mv "$tmp" "$bin"
echo "image-tool: done in $(( $(date +%s) - start ))s" >&2
echo "$bin/umoci"
