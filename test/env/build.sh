#!/usr/bin/env bash
# Builds the local control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl) from the official Go modules pinned in tools/go.mod, once per
# version, into a cache outside the repository. A second run with the binaries present
# only prints where they are. Prints the cache's bin directory on its last line.
# First the object storage servers (storage.sh build: versitygw with go-tool.sh, Azurite
# with npm), each cached by version too.
#
# Env: REDIS_OPERATOR_CACHE (default ~/.cache/redis-operator), ENV_BUILD_JOBS (go -p, default nproc).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.env"
cache=${REDIS_OPERATOR_CACHE:-$HOME/.cache/redis-operator}
bin="$cache/k8s/$K8S_VERSION-etcd-$ETCD_VERSION/bin"
tools="etcd kube-apiserver kube-controller-manager kube-scheduler kubectl"

bash "$here/storage.sh" build
have_all() { for t in $tools; do [ -x "$bin/$t" ] || return 1; done; }
if have_all; then echo "$bin"; exit 0; fi

command -v go >/dev/null || { echo "env-build: go is not installed (needed only to build the control plane)" >&2; exit 1; }
export GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
vflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  vflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  vflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
eflags="-X go.etcd.io/etcd/api/v3/version.GitSHA=${ETCD_VERSION}"

tmp="$bin.tmp.$$"
rm -rf "$tmp"; mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
echo "env-build: building Kubernetes $K8S_VERSION and etcd $ETCD_VERSION into $bin (cold: tens of minutes)" >&2
cd "$here/tools"
jobs=${ENV_BUILD_JOBS:-$(nproc)}
go build -p "$jobs" -trimpath -ldflags "-s -w $eflags" -o "$tmp/etcd" go.etcd.io/etcd/server/v3
for t in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  go build -p "$jobs" -trimpath -ldflags "-s -w $vflags" -o "$tmp/$t" "k8s.io/kubernetes/cmd/$t"
done
mkdir -p "$(dirname "$bin")"
rm -rf "$bin"; mv "$tmp" "$bin"
echo "env-build: done in $(( $(date +%s) - start ))s" >&2
echo "$bin"
