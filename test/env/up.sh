#!/usr/bin/env bash
# `make env-up`: starts etcd, kube-apiserver, kube-controller-manager and kube-scheduler
# on this machine, and waits until the API server is ready and the default namespace
# exists. Already up and healthy: says so and succeeds. Stale or half-started: cleaned
# first. Writes the admin kubeconfig to build/env/kubeconfig.
# Then starts the node agent ($NODEAGENT_BIN, default build/nodeagent: the kubelet of
# ENV_NODES Nodes ro-node-1..N, default 1) and waits until its Nodes are Ready and no
# longer tainted not-ready; an environment found up without its agent gets one.
# And the object storage for backup tests (storage.sh up: versitygw for S3, Azurite for
# Azure Blob, on the bridge address; build/env/s3.env and azure.env), also when the
# control plane was up already.
set -euo pipefail
. "$(dirname "$0")/common.sh"
NODEAGENT_BIN=${NODEAGENT_BIN:-$repo/build/nodeagent}
ENV_NODES=${ENV_NODES:-1}

all_alive() { for c in $ENV_COMPONENTS; do pid_alive "$c" || return 1; done; }
# The node agent: pods in network namespaces on the bridge; logs/nodeagent.log.
start_nodeagent() {
  [ -x "$NODEAGENT_BIN" ] || die "$NODEAGENT_BIN is missing: make $NODEAGENT_BIN"
  mkdir -p "$ENV_DIR/logs"
  # shellcheck disable=SC2046 # kubelet_auth_args: flags
  setsid "$NODEAGENT_BIN" --kubeconfig "$ENV_DIR/nodeagent.kubeconfig" \
    --state-dir "$ENV_DIR/nodeagent" --nodes "$ENV_NODES" --images "$repo/test/nodeagent/images.conf" \
    --operator-bin "${OPERATOR_BIN:-$repo/build/redis-operator}" $(kubelet_auth_args) \
    >>"$ENV_DIR/logs/nodeagent.log" 2>&1 </dev/null 9>&- & # 9: the up.lock, not to be inherited
  echo $! >"$ENV_DIR/nodeagent.pid"
}
nodes_ready() {
  local i
  for i in $(seq "$ENV_NODES"); do
    [ "$(kctl get node "ro-node-$i" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ] || return 1
    ! kctl get node "ro-node-$i" -o jsonpath='{.spec.taints[*].key}' | grep -q node.kubernetes.io/not-ready || return 1
  done
}
# One env-up at a time: a second caller waits for the first, then finds it up.
mkdir -p "$ENV_DIR"
exec 9>"$ENV_DIR/.up.lock"
flock -w 300 9 || die "another env-up holds $ENV_DIR/.up.lock"
# Every process alive but the API not ready: it may be restarting; give it a moment
# before calling it stale.
for _ in $(seq 50); do
  all_alive && ! api_ready || break
  sleep 0.2
done
if all_alive && api_ready; then
  if ! pid_alive nodeagent && [ ! -x "$NODEAGENT_BIN" ]; then
    log "warning: $NODEAGENT_BIN is not built: no node agent (make $NODEAGENT_BIN)"
  elif ! pid_alive nodeagent; then
    start_nodeagent
    for _ in $(seq 150); do nodes_ready && break; pid_alive nodeagent || break; sleep 0.2; done
    nodes_ready || { tail -20 "$ENV_DIR/logs/nodeagent.log" >&2; die "nodeagent: Nodes not Ready"; }
    log "node agent started: $ENV_NODES node(s) Ready"
  fi
  bash "$here/storage.sh" up
  log "already up (kubeconfig: $KUBECONFIG_ADMIN)"
  exit 0
fi
bash "$here/down.sh" --quiet

start=$(date +%s%N)
bash "$here/build.sh" >/dev/null
mkdir -p "$ENV_DIR/logs"

if ! ip link show "$ENV_BRIDGE" >/dev/null 2>&1; then
  ip link add "$ENV_BRIDGE" type bridge
  ip addr add "$ENV_HOST_IP/${ENV_POD_CIDR#*/}" dev "$ENV_BRIDGE"
  echo "$ENV_BRIDGE" >"$ENV_DIR/bridge.created"
fi
ip link set "$ENV_BRIDGE" up
bash "$here/certs.sh"
pki="$ENV_DIR/pki"
# The object storage starts meanwhile (Azurite takes seconds); waited for at the end.
bash "$here/storage.sh" up &
storage_pid=$!


mkdir -p "$ENV_ETCD_DATA"
run etcd --name local --data-dir "$ENV_ETCD_DATA" --unsafe-no-fsync \
  --listen-client-urls "http://127.0.0.1:$ENV_ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ENV_ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$((ENV_ETCD_PORT + 10))" \
  --initial-advertise-peer-urls "http://127.0.0.1:$((ENV_ETCD_PORT + 10))" \
  --initial-cluster "local=http://127.0.0.1:$((ENV_ETCD_PORT + 10))" \
  --listen-metrics-urls "http://127.0.0.1:$((ENV_ETCD_PORT + 20))" --log-level warn
wait_for etcd 30 curl -sf --max-time 1 -o /dev/null "http://127.0.0.1:$ENV_ETCD_PORT/health"

start_apiserver

run kube-controller-manager --kubeconfig "$ENV_DIR/controller-manager.kubeconfig" \
  --authentication-kubeconfig "$ENV_DIR/controller-manager.kubeconfig" \
  --authorization-kubeconfig "$ENV_DIR/controller-manager.kubeconfig" \
  --bind-address 127.0.0.1 --leader-elect=false --controllers '*' \
  --root-ca-file "$pki/ca.crt" --service-account-private-key-file "$pki/sa.key" \
  --use-service-account-credentials=true \
  --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
  --node-monitor-period 1s --node-monitor-grace-period 10s --profiling=false --v=1
run kube-scheduler --kubeconfig "$ENV_DIR/scheduler.kubeconfig" \
  --authentication-kubeconfig "$ENV_DIR/scheduler.kubeconfig" \
  --authorization-kubeconfig "$ENV_DIR/scheduler.kubeconfig" \
  --bind-address 127.0.0.1 --leader-elect=false --profiling=false --v=1
wait_for kube-apiserver 30 kctl get namespace default -o name >/dev/null 2>&1
wait_for kube-controller-manager 30 curl -sfk --max-time 1 https://127.0.0.1:10257/healthz -o /dev/null
wait_for kube-scheduler 30 curl -sfk --max-time 1 https://127.0.0.1:10259/healthz -o /dev/null
start_nodeagent
wait_for nodeagent 30 nodes_ready
wait "$storage_pid" || die "the object storage did not come up (logs/versitygw.log, logs/azurite.log)"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
log "up in $((ms / 1000)).$(printf '%03d' $((ms % 1000)))s: Kubernetes $K8S_VERSION at https://$ENV_HOST_IP:$ENV_API_PORT, $ENV_NODES node(s) Ready, S3 and Azure Blob up (kubeconfig: $KUBECONFIG_ADMIN)"
