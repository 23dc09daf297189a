#!/usr/bin/env bash
# Builds umoci (the OCI image layout tool `make image` uses) from the Go module proxy,
# pinned by tools/go.mod and tools/go.sum, once per version, into a cache outside the
# repository: ${REDIS_OPERATOR_CACHE:-~/.cache/redis-operator}/umoci/<version>/bin/umoci,
# with the shared builder test/env/go-tool.sh. A second run with the binary present only
# prints its path (the last line, always).
#
# Env: REDIS_OPERATOR_CACHE, GOPROXY (the go command's default otherwise), ENV_BUILD_JOBS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.env"
# -mod=readonly: tools/go.sum must already hold every checksum.
GO_TOOL_MODDIR="$here/tools" GO_TOOL_MOD=readonly GO_TOOL_CHECK=--version GO_TOOL_LOG=image-tool \
  exec bash "$here/../test/env/go-tool.sh" umoci "$UMOCI_VERSION" github.com/opencontainers/umoci/cmd/umoci
