# Sourced by the test/env scripts: where things live. Every address is on this machine.
#   bridge ro-br0 10.240.0.1/16: the API server listens here so that pods in their own
#   network namespaces (node agent, 10.240.x.y) reach it; the host reaches it too.
#   etcd 127.0.0.1:23790 (client) / :23800 (peer), tmpfs data dir, no fsync.
#   kube-controller-manager 127.0.0.1:10257, kube-scheduler 127.0.0.1:10259.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/versions.env"
ENV_DIR=${ENV_DIR:-$repo/build/env}
ENV_BRIDGE=${ENV_BRIDGE:-ro-br0}
ENV_HOST_IP=${ENV_HOST_IP:-10.240.0.1}
ENV_POD_CIDR=${ENV_POD_CIDR:-10.240.0.0/16}
ENV_SERVICE_CIDR=${ENV_SERVICE_CIDR:-10.96.0.0/16}
ENV_API_PORT=${ENV_API_PORT:-6443}
ENV_ETCD_PORT=${ENV_ETCD_PORT:-23790}
ENV_ETCD_DATA=${ENV_ETCD_DATA:-/dev/shm/redis-operator-etcd-$(echo "$ENV_DIR" | md5sum | cut -c1-8)}
KUBECONFIG_ADMIN="$ENV_DIR/kubeconfig"
CACHE=${REDIS_OPERATOR_CACHE:-$HOME/.cache/redis-operator}
ENV_BIN="$CACHE/k8s/$K8S_VERSION-etcd-$ETCD_VERSION/bin"
ENV_COMPONENTS="etcd kube-apiserver kube-controller-manager kube-scheduler"

log() { echo "env: $*" >&2; }
die() { echo "env: $*" >&2; exit 1; }
pid_alive() { [ -f "$ENV_DIR/$1.pid" ] && kill -0 "$(cat "$ENV_DIR/$1.pid")" 2>/dev/null; }
kctl() { "$ENV_BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }
api_ready() { curl -sf --max-time 2 --cacert "$ENV_DIR/pki/ca.crt" "https://$ENV_HOST_IP:$ENV_API_PORT/readyz" >/dev/null 2>&1; }
