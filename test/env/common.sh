# Sourced by the test/env scripts: where things live. Every address is on this machine.
#   bridge ro-br0 10.240.0.1/16: the API server listens here so that pods in their own
#   network namespaces (node agent, 10.240.x.y) reach it; the host reaches it too.
#   etcd 127.0.0.1:23790 (client) / :23800 (peer), tmpfs data dir, no fsync.
#   kube-controller-manager 127.0.0.1:10257, kube-scheduler 127.0.0.1:10259.
#   Object storage (storage.sh), on the bridge address so that pods reach it:
#   versitygw (S3) :7070, Azurite (Azure Blob) :10000.
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
ENV_S3_PORT=${ENV_S3_PORT:-7070}
ENV_AZURE_PORT=${ENV_AZURE_PORT:-10000}

log() { echo "env: $*" >&2; }
die() { echo "env: $*" >&2; exit 1; }
pid_alive() { [ -f "$ENV_DIR/$1.pid" ] && kill -0 "$(cat "$ENV_DIR/$1.pid")" 2>/dev/null; }
kctl() { "$ENV_BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }
api_ready() { curl -sf --max-time 2 --cacert "$ENV_DIR/pki/ca.crt" "https://$ENV_HOST_IP:$ENV_API_PORT/readyz" >/dev/null 2>&1; }

# name args...: runs a component in its own session, logs to logs/<name>.log
run() {
  local name=$1; shift
  setsid "$ENV_BIN/$name" "$@" >"$ENV_DIR/logs/$name.log" 2>&1 < /dev/null 9>&- &
  echo $! >"$ENV_DIR/$name.pid"
}
# name seconds command...: polls until the command succeeds or the component died
wait_for() {
  local name=$1 secs=$2; shift 2
  local deadline=$(( $(date +%s) + secs ))
  until "$@"; do
    pid_alive "$name" || { tail -20 "$ENV_DIR/logs/$name.log" >&2; die "$name exited during start-up"; }
    [ "$(date +%s)" -lt "$deadline" ] || { tail -20 "$ENV_DIR/logs/$name.log" >&2; die "$name not ready after ${secs}s"; }
    sleep 0.2
  done
}
# The flags of the API server's calls to kubelets (pods/log): a client certificate, and
# the Nodes' InternalIP first (the node agent's Node names resolve nowhere). An older PKI
# without the certificate: no flags (the node agents then serve anonymous requests:
# kubelet_auth_args).
apiserver_kubelet_args() {
  local pki="$ENV_DIR/pki"
  [ -f "$pki/apiserver-kubelet-client.crt" ] || return 0
  echo --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types InternalIP,Hostname
}
# The node agent's kubelet API flags for the running API server: certificate
# authentication and Webhook authorization when the API server presents its kubelet
# client certificate; otherwise (an environment started before it had one) anonymous
# requests with AlwaysAllow, the kubelet's own defaults without a config file.
kubelet_auth_args() {
  local pid
  pid=$(cat "$ENV_DIR/kube-apiserver.pid" 2>/dev/null) || true
  if [ -n "$pid" ] && tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -x -- --kubelet-client-certificate >/dev/null; then
    echo --kubelet-client-ca-file "$ENV_DIR/pki/ca.crt"
  else
    echo --kubelet-anonymous-auth --kubelet-authorization-mode AlwaysAllow
  fi
}
# The API server (up.sh; test/env/restart-apiserver.sh restarts it alone), until ready.
start_apiserver() {
  local pki="$ENV_DIR/pki"
  # shellcheck disable=SC2046 # the flags are words
  run kube-apiserver $(apiserver_kubelet_args) --etcd-servers "http://127.0.0.1:$ENV_ETCD_PORT" \
    --bind-address "$ENV_HOST_IP" --advertise-address "$ENV_HOST_IP" --secure-port "$ENV_API_PORT" \
    --service-cluster-ip-range "$ENV_SERVICE_CIDR" \
    --client-ca-file "$pki/ca.crt" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --authorization-mode Node,RBAC --allow-privileged=true \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --api-audiences https://kubernetes.default.svc.cluster.local \
    --profiling=false --v=1
  wait_for kube-apiserver 60 api_ready
}
