#!/usr/bin/env bash
# Builds the helm CLI the chart is tested with from the Go module proxy (helm.sh/helm/v3,
# pinned in versions.env and tools/go.mod), once per version, into a cache outside the
# repository, like test/env/build.sh builds the control plane. A second run with the
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
cache=${REDIS_OPERATOR_CACHE:-$HOME/.cache/redis-operator}
bin="$cache/helm/$HELM_VERSION/bin"
if [ -x "$bin/helm" ]; then echo "$bin/helm"; exit 0; fi

PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "helm-build: go is not installed (needed only to build helm)" >&2; exit 1; }
export GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0
cd "$here/tools"
grep -q "helm.sh/helm/v3 $HELM_VERSION" go.mod ||
  { echo "helm-build: tools/go.mod does not require helm.sh/helm/v3 $HELM_VERSION (see versions.env)" >&2; exit 1; }
client_go=$(go list -m -f '{{.Version}}' k8s.io/client-go) # v0.37.0 -> Kubernetes 1.37
k8s_minor=${client_go#v0.}; k8s_minor=${k8s_minor%%.*}
v=helm.sh/helm/v3
ldflags="-s -w -X $v/internal/version.version=$HELM_VERSION -X $v/internal/version.gitTreeState=clean"
for pkg in $v/pkg/lint/rules $v/pkg/chartutil; do
  ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$k8s_minor"
done

tmp="$bin.tmp.$$"
rm -rf "$tmp"; mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
echo "helm-build: building helm $HELM_VERSION into $bin (cold: a few minutes)" >&2
go build -p "${ENV_BUILD_JOBS:-$(nproc)}" -trimpath -ldflags "$ldflags" -o "$tmp/helm" helm.sh/helm/v3/cmd/helm
"$tmp/helm" version --short >/dev/null
mkdir -p "$(dirname "$bin")"
rm -rf "$bin"; mv "$tmp" "$bin"
echo "helm-build: done in $(( $(date +%s) - start ))s" >&2
echo "$bin/helm"
