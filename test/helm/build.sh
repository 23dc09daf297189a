#!/usr/bin/env bash
# Builds the helm CLI the chart is tested with from the Go module proxy (helm.sh/helm/v3,
# pinned in versions.env and tools/go.mod), once per version, into a cache outside the
# repository (test/env/go-tool.sh, the builder shared with image/tool.sh and the object
# storage's versitygw), like test/env/build.sh builds the control plane. A second run with the
# binary present only prints where it is. Prints the path of the helm binary on its last
# line.
#
# The version variables are set as helm's own Makefile sets them, so that `helm version`
# prints v3.22.0 and the Kubernetes version helm assumes without a cluster (`helm template`,
# `helm lint`: .Capabilities.KubeVersion) is the client-go minor helm is built with.
#
# Env: REDIS_OPERATOR_CACHE (default ~/.cache/redis-operator), ENV_BUILD_JOBS (go -p, default nproc).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.env"
gotool="$here/../env/go-tool.sh"
helm=$(bash "$gotool" --path helm "$HELM_VERSION")
if [ -x "$helm" ]; then echo "$helm"; exit 0; fi

PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "helm-build: go is not installed (needed only to build helm)" >&2; exit 1; }
client_go=$(cd "$here/tools" && GOTOOLCHAIN=local GOFLAGS=-mod=mod go list -m -f '{{.Version}}' k8s.io/client-go) # v0.37.0 -> Kubernetes 1.37
k8s_minor=${client_go#v0.}; k8s_minor=${k8s_minor%%.*}
v=helm.sh/helm/v3
ldflags="-X $v/internal/version.version=$HELM_VERSION -X $v/internal/version.gitTreeState=clean"
for pkg in $v/pkg/lint/rules $v/pkg/chartutil; do
  ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$k8s_minor"
done
# The shared builder (test/env/go-tool.sh): checks that tools/go.mod requires helm at
# HELM_VERSION, builds with "-s -w" added, and runs `helm version --short` before caching.
GO_TOOL_MODDIR="$here/tools" GO_TOOL_MOD=mod GO_TOOL_CHECK="version --short" GO_TOOL_LOG=helm-build \
  exec bash "$gotool" helm "$HELM_VERSION" helm.sh/helm/v3/cmd/helm "$ldflags"
