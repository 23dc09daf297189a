# Sourced by test/integration/controller.sh: helpers (this file) and the checks
# (checks.sh). Every process started here is tracked by PID; nothing sleeps a fixed time
# where a condition can be polled.

# poll SECONDS CMD...: bounded retries, no fixed sleeps
poll() {
  local secs=$1; shift
  local deadline=$(( $(date +%s%N) / 1000000 + secs * 1000 ))
  until "$@" >/dev/null 2>&1; do
    [ $(( $(date +%s%N) / 1000000 )) -lt "$deadline" ] || return 1
    sleep 0.1
  done
}
ms() { echo $(( $(date +%s%N) / 1000000 )); }
# fail MESSAGE: ends the check (each check runs in its own subshell: see `check`)
fail() { echo "$*"; exit 1; }

# --- the private node agent and the host controller -------------------------------------

# AGENT_NODES (1): the private agent's Nodes, $RUN-node-1..N ($NODE is the first); with
# more than one, clusters may use any of them (nodeAffinity) and spread (anti-affinity).
AGENT_NODES=${AGENT_NODES:-1}
nodes() { seq -f "$RUN-node-%g" 1 "$AGENT_NODES"; }
node_ready() {
  local n
  for n in $(nodes); do
    [ "$($K get node "$n" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ] || return 1
  done
}
delete_nodes() { local n; for n in $(nodes); do $K delete node "$n" --wait=false >/dev/null 2>&1; done; }
start_agent() {
  mkdir -p "$W/na"
  # shellcheck disable=SC2046 # kubelet_auth_args (test/env/common.sh): flags
  setsid "$BUILD/nodeagent" --kubeconfig "$ENV_DIR/nodeagent.kubeconfig" --state-dir "$W/na" \
    --nodes "$AGENT_NODES" --node-prefix "$RUN-node-" --register-taint "$TAINT_KEY=$RUN:NoSchedule" \
    --pod-cidr "$CIDR" --cgroup-root "$CGROUP" --images test/nodeagent/images.conf \
    --operator-bin "$BUILD/redis-operator" --node-status-interval 2s $(kubelet_auth_args) \
    >"$W/nodeagent.log" 2>&1 </dev/null &
  AGENT_PID=$!
  poll 30 node_ready
}
namespaces_gone() {
  local ns
  for ns in $(cat "$W/namespaces" 2>/dev/null); do
    ! $K get namespace "$ns" >/dev/null 2>&1 || return 1
  done
}
# private_run PREFIX WORKNAME CIDR: the names of a suite that runs its own node agent and
# controller: RUN (PREFIX and random digits), the work dir W (/tmp/WORKNAME.XXXXXX), K,
# the agent's first Node and taint, its pod CIDR and cgroup, the operator namespace
# OPNS, and the controller's health and metrics ports.
private_run() {
  RUN=$1$(($$ % 10000))$((RANDOM % 100))
  W=$(mktemp -d "/tmp/$2.XXXXXX")
  K="$ENV_BIN/kubectl --kubeconfig $KUBECONFIG_ADMIN"
  NODE=$RUN-node-1
  TAINT_KEY=nodeagent.redis-operator.test/dev
  CIDR=$3
  CGROUP=/sys/fs/cgroup/freezer/ro-pods-$RUN
  OPNS=$RUN-op
  HPORT=$((20000 + RANDOM % 20000)) MPORT=$((HPORT + 1))
  AGENT_PID=
}
# The namespaces made so far deleted, and their pods gone; the operator's own namespace
# OPNS (its leader Lease) stays unless KEEP_OPNS=no.
quiesce() {
  local ns
  for ns in $(cat "$W/namespaces" 2>/dev/null); do
    [ "$ns" = "$OPNS" ] && [ "${KEEP_OPNS:-yes}" = yes ] && continue
    $K delete namespace "$ns" --wait=false >/dev/null 2>&1
  done
  poll 40 no_pods_left
}
# The end of a suite that ran a private node agent: its namespaces gone with their pods
# and PVCs (so that the agent deletes its PVs before it stops), the agent stopped, its
# Nodes deleted, the work dir removed (KEEP=1 keeps it).
stop_private_env() {
  KEEP_OPNS=no quiesce
  poll 60 namespaces_gone
  "${@:-true}" >/dev/null 2>&1 # what the suite removes once its pods are gone
  [ -n "$AGENT_PID" ] && kill -TERM "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null
  rmdir "$CGROUP" 2>/dev/null
  delete_nodes
  [ -n "${KEEP:-}" ] || rm -rf "$W"
}
no_pods_left() {
  local n
  for n in $(nodes); do
    [ -z "$($K get pods -A --field-selector "spec.nodeName=$n" -o name 2>/dev/null)" ] || return 1
  done
}
# where the data pods go: the private Node, or any of them
placement() {
  if [ "$AGENT_NODES" = 1 ]; then echo "nodeSelector: {kubernetes.io/hostname: $NODE}"
  else echo "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [$(nodes | paste -sd, -)]}]}]}}}"
  fi
}

# controller TAG HEALTH_PORT METRICS_PORT: a host controller for this run; its PID in
# $W/ctl-TAG.pid, its exit code in $W/ctl-TAG.exit once it ends, its log controller-TAG.log.
# Its leader Lease keeps the product's timing (15 s, renew deadline 10 s, retry 2 s): with
# 6 s/4 s/1 s a renewal gets 2 s, and on the 2-core CI machine, late in the suite, the API
# server sometimes took longer (its Lease cache queueing 40 updates): the leader exited.
controller() {
  rm -f "$W/ctl-$1.pid" "$W/ctl-$1.exit"
  ( setsid "$BIN" controller --kubeconfig "$KUBECONFIG_ADMIN" --namespace "$OPNS" \
      --cluster-selector "redis-operator.test/run=$RUN" --health-port "$2" --metrics-port "$3" \
      --bind-address 127.0.0.1 --log-format logfmt --password-rotation-grace 10s >"$W/controller-$1.log" 2>&1 </dev/null &
    echo $! >"$W/ctl-$1.pid"; wait $!; echo $? >"$W/ctl-$1.exit" ) &
  poll 5 test -s "$W/ctl-$1.pid"
}
# stop_controller TAG: SIGTERM, wait (bounded); prints its exit code
stop_controller() {
  [ -s "$W/ctl-$1.pid" ] && [ ! -e "$W/ctl-$1.exit" ] || return 0
  kill -TERM "$(cat "$W/ctl-$1.pid")" 2>/dev/null
  poll 30 test -s "$W/ctl-$1.exit" && cat "$W/ctl-$1.exit"
}
leading() { curl -sf --max-time 2 "http://127.0.0.1:$1/readyz" | grep -q '"leader":true'; }
start_controller() {
  controller main "$HPORT" "$MPORT" && poll 30 leading "$HPORT"
}

# --- clusters ---------------------------------------------------------------------------

# newns NAME: a namespace enforcing Pod Security "restricted", removed at the end
newns() {
  echo "$1" >>"$W/namespaces"
  $K create namespace "$1" >/dev/null &&
    $K label namespace "$1" pod-security.kubernetes.io/enforce=restricted >/dev/null
}
# mkcluster NS NAME INSTANCES [SPEC-YAML-LINES]; STORAGE (flow YAML) replaces {size: 64Mi};
# after tls_on (tls_checks.sh), the cluster serves TLS only, with the check's certificates
mkcluster() {
  local storage='{size: 64Mi}' tls=
  [ -n "${STORAGE:-}" ] && storage=$STORAGE
  [ -n "${TLS_DIR:-}" ] && { tls_secrets "$1" "$2" || return 1; tls="  tlsSecret: {name: $2-server}
  caSecret: {name: $2-ca}"; }
  $K -n "$1" apply -f - >/dev/null <<Y
apiVersion: redis.io/v1
kind: RedisCluster
metadata: {name: $2, labels: {redis-operator.test/run: $RUN}}
spec:
  instances: $3
  storage: $storage
  tolerations: [{key: $TAINT_KEY, operator: Equal, value: $RUN, effect: NoSchedule}]
  $(placement)
${4:-}
$tls
Y
}
rc() { $K -n "$1" get rediscluster "$2" -o jsonpath="$3" 2>/dev/null; }
cond() { rc "$1" "$2" "{.status.conditions[?(@.type==\"$3\")].status}"; }
# ready NS NAME: Ready=True and readyInstances == spec.instances
ready() {
  [ "$(cond "$1" "$2" Ready)" = True ] &&
    [ "$(rc "$1" "$2" '{.status.readyInstances}')" = "$(rc "$1" "$2" '{.spec.instances}')" ]
}
primary() { rc "$1" "$2" '{.status.currentPrimary}'; }
pod_ip() { $K -n "$1" get pod "$2" -o jsonpath='{.status.podIP}' 2>/dev/null; }
pod_ips() { $K -n "$1" get pods -l "redis.io/cluster=$2" -o jsonpath='{.items[*].status.podIP}'; }
secret() { $K -n "$1" get secret "$2" -o jsonpath='{.data.password}' | base64 -d; }
leader_ip() {
  $K -n "$1" get endpointslices -l "kubernetes.io/service-name=$2-leader" \
    -o jsonpath='{.items[*].endpoints[?(@.conditions.ready==true)].addresses[0]}' 2>/dev/null |
    awk '{print $1}'
}
# rcli IP PASSWORD ARGS...: as the default user (CLI_TLS: redis-cli's TLS flags, after tls_on)
# shellcheck disable=SC2086
rcli() { local ip=$1 pw=$2; shift 2; timeout 3 redis-cli ${CLI_TLS:-} -h "$ip" -a "$pw" --no-auth-warning "$@"; }
# opcli NS NAME POD ARGS...: as the operator's user
opcli() {
  local ns=$1 name=$2 pod=$3; shift 3
  # shellcheck disable=SC2086
  timeout 3 redis-cli ${CLI_TLS:-} -h "$(pod_ip "$ns" "$pod")" --user redis-operator \
    --pass "$(secret "$ns" "$name-operator")" --no-auth-warning "$@"
}
# write_via_leader NS NAME [NOT-IP]: a SET through the leader Service's endpoint answers OK
write_via_leader() {
  local ip; ip=$(leader_ip "$1" "$2")
  [ -n "$ip" ] && [ "$ip" != "${3:-}" ] &&
    [ "$(rcli "$ip" "$(secret "$1" "$2-auth")" SET "it:$RANDOM" v)" = OK ]
}
# the managers serve HTTPS (controller/pki.h); -k: their CA is per cluster, the IP is not in the certificate
inst() { curl -sk --max-time 2 "https://$(pod_ip "$1" "$2"):8000/v1/status"; }
# server_hostpid NS POD: the host PID of the pod's redis-server (its freezer cgroup)
server_hostpid() {
  local uid p; uid=$($K -n "$1" get pod "$2" -o jsonpath='{.metadata.uid}')
  for p in $(cat "$CGROUP/$uid/cgroup.procs" 2>/dev/null); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = redis-server ] && { echo "$p"; return 0; }
  done
  return 1
}
count() { $K -n "$1" get "$2" -l "redis.io/cluster=$3" -o name 2>/dev/null | grep -c .; }
events() { $K -n "$1" get events.events.k8s.io -o jsonpath='{.items[*].reason}' 2>/dev/null; }

# writer NS NAME TAG SECONDS: the WAIT-1 writer in the background (WPID); stop with wstop
writer() {
  rm -f "$W/stop-$3"
  # shellcheck disable=SC2046
  "$WRITER" "$4" "$(secret "$1" "$2-auth")" "$W/stop-$3" $(pod_ips "$1" "$2") >"$W/writer-$3.out" 2>&1 &
  WPID=$!
}
# writer_follow NS NAME TAG SECONDS [LISTER]: the same, its endpoints the cluster's pod IPs
# as they change (a file rewritten every 0.5 s until wstop): for a rolling update's new
# pods. LISTER NS NAME prints the IPs (default pod_ips; sentinel mode: data_ips)
writer_follow() {
  local ips=$W/ips-$3 lister=${5:-pod_ips}
  rm -f "$W/stop-$3"; $lister "$1" "$2" >"$ips"
  ( while [ ! -e "$W/stop-$3" ]; do $lister "$1" "$2" >"$ips.tmp" 2>/dev/null && mv "$ips.tmp" "$ips"; sleep 0.5; done ) &
  "$WRITER" "$4" "$(secret "$1" "$2-auth")" "$W/stop-$3" "@$ips" >"$W/writer-$3.out" 2>&1 &
  WPID=$!
}
wstop() { touch "$W/stop-$1"; wait "$WPID"; local rc=$?; cat "$W/writer-$1.out"; return $rc; }

. test/integration/controller/checks.sh
