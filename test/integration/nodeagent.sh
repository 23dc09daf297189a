#!/usr/bin/env bash
# The test node agent (build/nodeagent) as the kubelet of the local control plane (test/env).
# Prints one line per check and records "passed failed" in $RESULTS/nodeagent.counts, and
# pod start-up timings (create -> Running -> Ready, as seen through a watch on the API) in
# $RESULTS/nodeagent.timings. Every check has its own namespace, deleted at the end.
#
# Most checks use the environment's agent (started by test/env/up.sh): its Node NA_NODE
# (ro-node-1) and state dir NA_STATE ($ENV_DIR/nodeagent). node-lose and the agent restart
# use a private second agent that this script starts (own Node, taint, pod CIDR, cgroup,
# state dir) so that nobody else's pods are frozen or restarted. The volumes of several
# agents use a third one, Q, that runs no pod: only the agent of a pod's Node provisions
# its PVC, and Q's stop, removal and fresh start leave the volume alone. P's pod is read
# with `kubectl logs` (the API server's pods/log -> P's kubelet API, kubelet.h), and Q's
# kubelet API is asked directly for its authentication and authorization answers.
# For a development agent with a taint: NA_NODE=my-node-1 NA_TOLERATE=<taint key>
# NA_STATE=<its state dir>.
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/env/common.sh
. test/lib.sh
SUITE=nodeagent POLL_INTERVAL=0.3
RESULTS=${RESULTS:-build/test-results}
mkdir -p "$RESULTS"
NA_BIN=${NA_BIN:-${NODEAGENT_BIN:-build/nodeagent}}
NA_NODE=${NA_NODE:-ro-node-1}
NA_STATE=${NA_STATE:-$ENV_DIR/nodeagent}
NA_TOLERATE=${NA_TOLERATE:-nodeagent.redis-operator.test/none}
id="$$"
P_PREFIX="na-it-$id-" P_NODE="na-it-$id-1" P_STATE="$ENV_DIR/nodeagent-it-$id"
P_TAINT="nodeagent-it/private"
P_CIDR="10.240.$((64 + id % 64)).0/24" # runtime tests: 128-227, agents: 1-3, 12
P_CGROUP="/sys/fs/cgroup/freezer/ro-pods-it-$id"
P_PIDFILE="$ENV_DIR/nodeagent-it-$id.pid" # checks run in subshells: the pid goes in a file
Q_PREFIX="na-itq-$id-" Q_NODE="na-itq-$id-1" Q_STATE="$ENV_DIR/nodeagent-itq-$id"
Q_CIDR="10.240.$((64 + (id + 32) % 64)).0/24" Q_CGROUP="/sys/fs/cgroup/freezer/ro-pods-itq-$id"
Q_PIDFILE="$ENV_DIR/nodeagent-itq-$id.pid"
T0=$(date +%s)
namespaces=()

ms() { echo $(( $(date +%s%N) / 1000000 )); }
jp() { kctl -n "$1" get "$2" -o jsonpath="$3" 2>/dev/null; }
ready_of() { jp "$1" "pod/$2" '{.status.conditions[?(@.type=="Ready")].status}'; }
is_ready() { [ "$(ready_of "$1" "$2")" = True ]; }
is_phase() { [ "$(jp "$1" "pod/$2" '{.status.phase}')" = "$3" ]; }
pod_ip() { jp "$1" "pod/$2" '{.status.podIP}'; }
node_ready() { [ "$(kctl get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = "$2" ]; }
logs() { "$NA_BIN" logs --state-dir "${3:-$NA_STATE}" "$1/$2"; }
logs_have() { logs "$1" "$2" 2>/dev/null | grep -q -- "$3"; }
ctl() { "$NA_BIN" ctl --state-dir "$NA_STATE" "$@" >/dev/null; }
http_ok() { [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://$1:8080/")" = 200 ]; }
http_down() { ! curl -s -m 1 -o /dev/null "http://$1:8080/"; }
# newns NAME VAR: creates na-NAME-<pid> (once its default ServiceAccount exists) into $VAR.
newns() {
  local ns="na-$1-$id"
  kctl create namespace "$ns" >/dev/null || return 1
  namespaces+=("$ns")
  poll 20 kctl -n "$ns" get serviceaccount default -o name >/dev/null 2>&1
  printf -v "$2" '%s' "$ns"
}
# indent [node] [toleration key]: where the pod goes.
place() {
  printf '%*snodeSelector: {kubernetes.io/hostname: %s}\n%*stolerations: [{key: %s, operator: Exists}]\n' \
    "$1" "" "${2:-$NA_NODE}" "$1" "" "${3:-$NA_TOLERATE}"
}

stop_private() {
  local pid; pid=$(cat "${1:-$P_PIDFILE}" 2>/dev/null) || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  return 1
}
no_pods() { [ -z "$(kctl -n "$1" get pods -o name 2>/dev/null)" ]; }
cleanup() {
  for ns in "${namespaces[@]}"; do kctl delete namespace "$ns" --wait=false >/dev/null 2>&1; done
  # the private agent deletes its pods before it goes (nothing left Terminating)
  [ -n "${ns_node:-}" ] && poll 20 no_pods "$ns_node"
  stop_private
  stop_private "$Q_PIDFILE"
  kctl delete node "$P_NODE" "$Q_NODE" --ignore-not-found >/dev/null 2>&1
  kctl delete pv "na-it-$id-foreign" "na-itq-$id-own" --ignore-not-found --wait=false >/dev/null 2>&1
  rmdir "$P_CGROUP" "$Q_CGROUP" 2>/dev/null
  cp "$P_STATE.log" "$RESULTS/nodeagent-private.log" 2>/dev/null
  cp "$Q_STATE.log" "$RESULTS/nodeagent-q.log" 2>/dev/null
  rm -rf "$P_STATE" "$P_STATE.log" "$P_PIDFILE" "$Q_STATE" "$Q_STATE.log" "$Q_PIDFILE"
}
trap cleanup EXIT

if ! api_ready || ! [ -x "$NA_BIN" ]; then
  check_fail "the API server is not ready or $NA_BIN is missing (make env-up)"
  counts_write nodeagent >/dev/null; exit 1
fi

# --- the private agent (node-lose, restart) -----------------------------------------------------
# P's kubelet API authenticates as the running API server needs (kubelet_auth_args,
# test/env/common.sh); Q's always asks for a client certificate and a SubjectAccessReview.
start_private() {
  # shellcheck disable=SC2046 # kubelet_auth_args: flags
  setsid "$NA_BIN" --kubeconfig "$ENV_DIR/nodeagent.kubeconfig" --state-dir "$P_STATE" \
    --nodes 1 --node-prefix "$P_PREFIX" --register-taint "$P_TAINT=$id:NoSchedule" $(kubelet_auth_args) \
    --pod-cidr "$P_CIDR" --cgroup-root "$P_CGROUP" \
    --images test/nodeagent/images.conf >>"$P_STATE.log" 2>&1 </dev/null &
  echo $! >"$P_PIDFILE"
}
start_q() {
  mkdir -p "$Q_STATE"
  setsid "$NA_BIN" --kubeconfig "$ENV_DIR/nodeagent.kubeconfig" --state-dir "$Q_STATE" \
    --nodes 1 --node-prefix "$Q_PREFIX" --register-taint "$P_TAINT=q$id:NoSchedule" \
    --kubelet-client-ca-file "$ENV_DIR/pki/ca.crt" \
    --pod-cidr "$Q_CIDR" --cgroup-root "$Q_CGROUP" \
    --images test/nodeagent/images.conf >>"$Q_STATE.log" 2>&1 </dev/null &
  echo $! >"$Q_PIDFILE"
}
mkdir -p "$P_STATE"
start_private
start_q

# --- manifests, all applied first so that the pods start in parallel ----------------------------
apply() { kctl -n "$1" create -f - >/dev/null; }

newns web ns_web
web_t0=$(ms)
timeout 90 "$ENV_BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" -n "$ns_web" get pods -w --output-watch-events \
  -o jsonpath='{.object.status.phase} {.object.status.conditions[?(@.type=="Ready")].status}{"\n"}' 2>/dev/null |
  while read -r line; do echo "$(ms) $line"; done >"$RESULTS/nodeagent.watch" &
watch_pid=$!
apply "$ns_web" <<Y
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
$(place 6)
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: busybox:1
        command: [python3, -m, http.server, "8080"]
        ports: [{name: http, containerPort: 8080}]
        readinessProbe: {httpGet: {path: /, port: http}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80, targetPort: http}]}
Y

newns live ns_live
apply "$ns_live" <<Y
apiVersion: v1
kind: Pod
metadata: {name: live}
spec:
$(place 2)
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox:1
    command: [sleep, "3600"]
    livenessProbe: {tcpSocket: {port: 9}, periodSeconds: 1, failureThreshold: 1}
Y

newns token ns_tok
apply "$ns_tok" <<Y
apiVersion: v1
kind: Pod
metadata: {name: tok}
spec:
$(place 2)
  restartPolicy: Never
  containers:
  - name: c
    image: busybox:1
    command:
    - sh
    - -c
    - >-
      cd /var/run/secrets/kubernetes.io/serviceaccount &&
      curl -s -o /dev/null -w "code=%{http_code}\n" --cacert ca.crt
      -H "Authorization: Bearer \`cat token\`"
      https://\$KUBERNETES_SERVICE_HOST:\$KUBERNETES_SERVICE_PORT/api;
      echo "ns=\`cat namespace\`"
Y

newns secret ns_sec
apply "$ns_sec" <<Y
apiVersion: v1
kind: Secret
metadata: {name: s1}
stringData: {key: one}
---
apiVersion: v1
kind: Pod
metadata: {name: sec}
spec:
$(place 2)
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox:1
    command: [sh, -c, 'while true; do echo "v=\`cat /etc/s/key\`"; sleep 0.3; done']
    volumeMounts: [{name: s, mountPath: /etc/s}]
  volumes: [{name: s, secret: {secretName: s1}}]
Y

newns pvc ns_pvc
apply "$ns_pvc" <<Y
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: w1}
spec:
$(place 2)
  terminationGracePeriodSeconds: 10
  containers:
  - name: c
    image: busybox:1
    command: [sh, -c, 'trap "echo sigterm >> /data/events; exit 0" TERM; echo started-\$HOSTNAME >> /data/events; while true; do sleep 0.2; done']
    lifecycle: {preStop: {exec: {command: [sh, -c, 'echo prestop >> /data/events']}}}
    volumeMounts: [{name: d, mountPath: /data}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]
Y

newns downward ns_dw
apply "$ns_dw" <<Y
apiVersion: v1
kind: Pod
metadata:
  name: dw
  labels: {app: dw, tier: t1}
  annotations: {note: hello}
spec:
$(place 2)
  restartPolicy: Never
  containers:
  - name: c
    image: busybox:1
    command: [sh, -c, 'echo "name=\$MY_NAME ns=\$MY_NS ip=\$MY_IP node=\$MY_NODE app=\$MY_APP mem=\$MY_MEM sa=\$MY_SA"; cat /etc/pod/labels /etc/pod/annotations; echo; echo "cpu=\`cat /etc/pod/cpu\`"']
    resources: {limits: {memory: 64Mi, cpu: 500m}}
    env:
    - {name: MY_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
    - {name: MY_NS, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
    - {name: MY_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
    - {name: MY_NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
    - {name: MY_APP, valueFrom: {fieldRef: {fieldPath: "metadata.labels['app']"}}}
    - {name: MY_SA, valueFrom: {fieldRef: {fieldPath: spec.serviceAccountName}}}
    - {name: MY_MEM, valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}}
    volumeMounts: [{name: pi, mountPath: /etc/pod}]
  volumes:
  - name: pi
    downwardAPI:
      items:
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
      - {path: annotations, fieldRef: {fieldPath: metadata.annotations}}
      - {path: cpu, resourceFieldRef: {containerName: c, resource: limits.cpu, divisor: 1m}}
Y

newns rootfs ns_ro
apply "$ns_ro" <<Y
apiVersion: v1
kind: Pod
metadata: {name: ro}
spec:
$(place 2)
  restartPolicy: Never
  # The runtime mounts /run read-only and empty before the volume mounts under a read-only
  # root, so the token's mount point /var/run/secrets/... cannot be made there.
  automountServiceAccountToken: false
  containers:
  - name: c
    image: busybox:1
    command: [sh, -c, 'touch /x 2>/dev/null && echo root-writable || echo root-readonly; touch /scratch/y && echo scratch-writable; echo "uid=\`id -u\`"']
    securityContext: {readOnlyRootFilesystem: true, runAsUser: 1000}
    volumeMounts: [{name: s, mountPath: /scratch}]
  volumes: [{name: s, emptyDir: {sizeLimit: 10Mi}}]
Y

newns missing ns_miss
apply "$ns_miss" <<Y
apiVersion: v1
kind: Pod
metadata: {name: miss}
spec:
$(place 2)
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox:1
    command: [sleep, "3600"]
    env: [{name: X, valueFrom: {secretKeyRef: {name: nope, key: k}}}]
Y

newns fault ns_fault
apply "$ns_fault" <<Y
apiVersion: v1
kind: Pod
metadata: {name: kil}
spec:
$(place 2)
  terminationGracePeriodSeconds: 1
  containers:
  - {name: c, image: "busybox:1", command: [sh, -c, 'echo "instance at \`date +%s%N\`"; exec sleep 3600']}
---
apiVersion: v1
kind: Pod
metadata: {name: frz}
spec:
$(place 2)
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox:1
    command: [sleep, "3600"]
    readinessProbe: {exec: {command: ["true"]}, periodSeconds: 1, timeoutSeconds: 1, failureThreshold: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: net}
spec:
$(place 2)
  terminationGracePeriodSeconds: 1
  containers:
  - {name: c, image: "busybox:1", command: [python3, -m, http.server, "8080"]}
Y

# --- checks --------------------------------------------------------------------------------------
node_heartbeat() {
  node_ready "$NA_NODE" True || return 1
  kctl get node "$NA_NODE" -o jsonpath='{.spec.taints}' | grep -q not-ready && return 1
  [ "$(kctl -n kube-node-lease get lease "$NA_NODE" -o jsonpath='{.metadata.ownerReferences[0].kind}/{.spec.leaseDurationSeconds}')" = Node/40 ]
}
check "node $NA_NODE Ready, not tainted not-ready, Lease owned by the Node" poll 20 node_heartbeat

web_pod() { kctl -n "$ns_web" get pods -l app=web -o jsonpath='{.items[0].metadata.name}' 2>/dev/null; }
web_endpoint() {
  local pod ip
  pod=$(web_pod) && [ -n "$pod" ] && is_ready "$ns_web" "$pod" || return 1
  ip=$(pod_ip "$ns_web" "$pod")
  [ "$(kctl -n "$ns_web" get endpointslices -l kubernetes.io/service-name=web \
    -o jsonpath='{.items[0].endpoints[0].addresses[0]} {.items[0].endpoints[0].conditions.ready}')" = "$ip true" ] &&
    http_ok "$ip"
}
check "Deployment Ready, its pod IP in the Service's EndpointSlice and serving" poll 60 web_endpoint
kill "$watch_pid" 2>/dev/null
run_ms=$(awk '$2 == "Running" { print $1; exit }' "$RESULTS/nodeagent.watch")
ready_ms=$(awk '$2 == "Running" && $3 == "True" { print $1; exit }' "$RESULTS/nodeagent.watch")
{
  echo "pod create -> Running: $(( ${run_ms:-0} - web_t0 )) ms"
  echo "pod create -> Ready:   $(( ${ready_ms:-0} - web_t0 )) ms (readiness probe period 1 s)"
} >"$RESULTS/nodeagent.timings"

live_restarted() {
  [ "$(jp "$ns_live" pod/live '{.status.containerStatuses[0].restartCount}')" -ge 1 ] 2>/dev/null &&
    [ "$(jp "$ns_live" pod/live '{.status.containerStatuses[0].lastState.terminated.exitCode}')" = 137 ]
}
live_backoff() {
  [ "$(jp "$ns_live" pod/live '{.status.containerStatuses[0].state.waiting.reason}')" = CrashLoopBackOff ]
}
check "failing liveness probe restarts the container (restartCount >= 1)" poll 30 live_restarted
check "... and the next restart waits in CrashLoopBackOff" poll 30 live_backoff

token_auth() {
  is_phase "$ns_tok" tok Succeeded || return 1
  logs "$ns_tok" tok | grep -Eq '^code=(200|403)$' && logs_have "$ns_tok" tok "^ns=$ns_tok\$"
}
check "projected token + ca.crt authenticate to the API server from the pod (200/403)" poll 40 token_auth

sec_value() { [ "$(logs "$ns_sec" sec 2>/dev/null | tail -1)" = "v=$1" ]; }
secret_update() {
  poll 40 sec_value one || return 1
  kctl -n "$ns_sec" patch secret s1 -p '{"stringData":{"key":"two"}}' >/dev/null &&
    poll 15 sec_value two
}
check "a Secret update reaches the mounted file" secret_update

pvc_bound() { [ "$(jp "$ns_pvc" pvc/data '{.status.phase}')" = Bound ]; }
pv_of() { jp "$ns_pvc" pvc/data '{.spec.volumeName}'; }
pv_dir() { kctl get pv "$(pv_of)" -o jsonpath='{.spec.hostPath.path}' 2>/dev/null; }
pvc_prestop() {
  poll 30 pvc_bound || { echo "PVC not Bound"; return 1; }
  local dir; dir=$(pv_dir)
  [ -n "$dir" ] && [ -d "$dir" ] || { echo "PV dir $dir missing"; return 1; }
  poll 30 is_phase "$ns_pvc" w1 Running || { echo "w1 not Running"; return 1; }
  poll 10 grep -q started-w1 "$dir/events" || return 1
  kctl -n "$ns_pvc" delete pod w1 --timeout 30s >/dev/null || { echo "w1 not deleted"; return 1; }
  apply "$ns_pvc" <<Y
apiVersion: v1
kind: Pod
metadata: {name: w2}
spec:
$(place 2)
  restartPolicy: Never
  containers:
  - {name: c, image: "busybox:1", command: [cat, /data/events], volumeMounts: [{name: d, mountPath: /data}]}
  volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]
Y
  poll 30 is_phase "$ns_pvc" w2 Succeeded || { echo "w2 did not run"; return 1; }
  logs "$ns_pvc" w2
  [ "$(logs "$ns_pvc" w2 | tr '\n' ' ')" = "started-w1 prestop sigterm " ]
}
check "deleting a pod runs preStop then SIGTERM; a Bound PVC's data survives the pod" pvc_prestop
pv_gone() { ! kctl get pv "$1" >/dev/null 2>&1 && [ ! -d "$2" ]; }
pvc_resize_and_delete() {
  local pv dir; pv=$(pv_of) dir=$(pv_dir)
  kctl -n "$ns_pvc" patch pvc data -p '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}' >/dev/null &&
    poll 20 eval '[ "$(jp "$ns_pvc" pvc/data "{.status.capacity.storage}")" = 2Gi ]' || { echo "no resize"; return 1; }
  [ "$(kctl get pv "$pv" -o jsonpath='{.spec.capacity.storage}')" = 2Gi ] || { echo "PV not resized"; return 1; }
  kctl -n "$ns_pvc" delete pod w2 --wait=false >/dev/null
  kctl -n "$ns_pvc" delete pvc data --wait=false >/dev/null
  poll 40 pv_gone "$pv" "$dir"
}
check "PVC resize updates PV and PVC capacity; deleting the PVC removes PV and directory" pvc_resize_and_delete

downward() {
  is_phase "$ns_dw" dw Succeeded || return 1
  local ip; ip=$(pod_ip "$ns_dw" dw)
  logs_have "$ns_dw" dw "^name=dw ns=$ns_dw ip=$ip node=$NA_NODE app=dw mem=64 sa=default\$" &&
    logs_have "$ns_dw" dw '^app="dw"$' && logs_have "$ns_dw" dw '^note="hello"$' &&
    logs_have "$ns_dw" dw '^cpu=500$'
}
check "downward API env (fieldRef incl. status.podIP, resourceFieldRef) and volume" poll 30 downward

readonly_root() {
  is_phase "$ns_ro" ro Succeeded &&
    [ "$(logs "$ns_ro" ro | tr '\n' ' ')" = "root-readonly scratch-writable uid=1000 " ]
}
check "readOnlyRootFilesystem honoured, emptyDir writable, runAsUser applied" poll 30 readonly_root

miss_waiting() {
  [ "$(jp "$ns_miss" pod/miss '{.status.phase} {.status.containerStatuses[0].state.waiting.reason}')" = \
    "Pending CreateContainerConfigError" ] &&
    jp "$ns_miss" pod/miss '{.status.containerStatuses[0].state.waiting.message}' | grep -q 'secret "nope" not found'
}
missing_secret() {
  poll 30 miss_waiting || return 1
  kctl -n "$ns_miss" create secret generic nope --from-literal k=v >/dev/null &&
    poll 20 is_phase "$ns_miss" miss Running
}
check "a missing Secret leaves the pod Pending (CreateContainerConfigError) until it exists" missing_secret

restarts() { jp "$ns_fault" pod/kil '{.status.containerStatuses[0].restartCount}'; }
fault_kill() {
  poll 30 is_ready "$ns_fault" kil || return 1
  [ "$(restarts)" = 0 ] && ctl kill "$ns_fault/kil" c &&
    poll 15 eval '[ "$(restarts)" = 1 ]' && poll 10 is_ready "$ns_fault" kil &&
    [ "$("$NA_BIN" logs --state-dir "$NA_STATE" --previous "$ns_fault/kil" c | grep -c instance)" = 1 ]
}
check "fault kill: the container restarts (restartCount 1, logs --previous)" fault_kill

not_ready() { [ "$(ready_of "$1" "$2")" = False ]; }
fault_freeze() {
  poll 30 is_ready "$ns_fault" frz || return 1
  ctl freeze "$ns_fault/frz" && poll 15 not_ready "$ns_fault" frz || { echo "still Ready"; return 1; }
  ctl thaw "$ns_fault/frz" && poll 15 is_ready "$ns_fault" frz
}
check "fault freeze: readiness fails (Ready False), thaw: Ready True" fault_freeze

fault_net() {
  poll 30 is_phase "$ns_fault" net Running || return 1
  local ip; ip=$(pod_ip "$ns_fault" net)
  poll 20 http_ok "$ip" || { echo "not serving"; return 1; }
  ctl net-cut "$ns_fault/net" && poll 5 http_down "$ip" || { echo "still reachable"; return 1; }
  ctl net-restore "$ns_fault/net" && poll 10 http_ok "$ip"
}
check "fault net-cut: the pod IP is unreachable, net-restore: reachable" fault_net

# --- node-lose and agent restart, on the private agent ------------------------------------------
newns node ns_node
p_ctl() { "$NA_BIN" ctl --state-dir "$P_STATE" "$@" >/dev/null; }
private_up() {
  poll 20 node_ready "$P_NODE" True || { tail -5 "$P_STATE.log"; return 1; }
  apply "$ns_node" <<Y
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec:
$(place 2 "$P_NODE" "$P_TAINT")
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox:1
    command: [sh, -c, 'for i in 1 2 3 4 5; do echo line-\$i; done; exec sleep 3600']
    readinessProbe: {exec: {command: ["true"]}, periodSeconds: 1}
Y
  poll 30 is_ready "$ns_node" p1
}
check "a second agent registers its Node and runs a pod" private_up
# kubectl logs -> the API server's pods/log -> the Node's kubeletEndpoint -> P's kubelet API.
klogs() { kctl -n "$ns_node" logs p1 "$@" 2>&1; }
kubectl_logs() {
  local out
  out=$(klogs) && [ "$out" = "$(printf 'line-%s\n' 1 2 3 4 5)" ] || { echo "logs: $out"; return 1; }
  out=$(klogs --tail=2) && [ "$out" = "$(printf 'line-4\nline-5')" ] || { echo "--tail=2: $out"; return 1; }
  out=$(klogs --limit-bytes=9) && [ "$out" = "$(printf 'line-1\nli')" ] || { echo "--limit-bytes=9: $out"; return 1; }
  out=$(klogs --tail=2 --limit-bytes=7) && [ "$out" = line-4 ] || { echo "--tail=2 --limit-bytes=7: $out"; return 1; }
  out=$(klogs -c nope) && { echo "-c nope succeeded: $out"; return 1; }
  grep -q 'container nope is not valid' <<<"$out" || { echo "-c nope: $out"; return 1; }
  out=$(klogs --previous) && { echo "--previous succeeded: $out"; return 1; }
  grep -q 'previous terminated container "c" in pod "p1" not found' <<<"$out" || { echo "--previous: $out"; return 1; }
  out=$(klogs --timestamps) && { echo "--timestamps succeeded: $out"; return 1; }
  grep -q 'timestamps=true: the node agent keeps no time per log line' <<<"$out" || { echo "--timestamps: $out"; return 1; }
  out=$(klogs --since=1h) && { echo "--since succeeded: $out"; return 1; }
  grep -q 'sinceSeconds=3600' <<<"$out" || { echo "--since=1h: $out"; return 1; }
  out=$(klogs -f --previous) && { echo "-f --previous succeeded: $out"; return 1; }
  grep -q 'previous terminated container' <<<"$out" || { echo "-f --previous: $out"; return 1; }
}
check "kubectl logs through the API server (P's kubelet API): all, --tail, --limit-bytes; -c nope, --previous, --timestamps, --since refused with the reason" poll 20 kubectl_logs
# -f: the stream stays open past the end of the file, and ends when the container restarts
follow_out=$(mktemp)
follow_has() { grep -q "$1" "$follow_out"; }
kubectl_follow() {
  ( klogs -f --tail=1 >"$follow_out"; echo "rc=$?" >>"$follow_out" ) &
  poll 10 follow_has line-5 || { echo "no line-5: $(cat "$follow_out")"; return 1; }
  sleep 1 # a plain GET would have ended by now
  ! follow_has rc= || { echo "ended at the end of the file: $(cat "$follow_out")"; return 1; }
  p_ctl kill "$ns_node/p1" c || return 1
  poll 15 follow_has rc=0 || { echo "not ended by the restart: $(cat "$follow_out")"; return 1; }
  [ "$(cat "$follow_out")" = "$(printf 'line-5\nrc=0')" ] || { echo "output: $(cat "$follow_out")"; return 1; }
  poll 30 is_ready "$ns_node" p1
}
check "kubectl logs -f: open past the end of the log, ended by the container's restart" kubectl_follow
rm -f "$follow_out"
# Q's kubelet API, asked directly: the bound port on the Node, 401 without a certificate,
# 403 from a SubjectAccessReview for a user without nodes/proxy, 404 past both for admin.
kl_port() { kctl get node "$1" -o jsonpath='{.status.daemonEndpoints.kubeletEndpoint.Port}'; }
kl_get() { # PORT CERT-NAME(or none) -> "CODE BODY"
  local cert=()
  [ "$2" = none ] || cert=(--cert "$ENV_DIR/pki/$2.crt" --key "$ENV_DIR/pki/$2.key")
  curl -sk -m 5 "${cert[@]}" -w ' %{http_code}' "https://$ENV_HOST_IP:$1/containerLogs/$ns_node/p1/c"
}
kubelet_authn() {
  local pp qp out
  pp=$(kl_port "$P_NODE") qp=$(kl_port "$Q_NODE")
  [ -n "$pp" ] && [ -n "$qp" ] && [ "$pp" != 10250 ] && [ "$pp" != "$qp" ] || { echo "ports P=$pp Q=$qp"; return 1; }
  [ "$(kctl get node "$Q_NODE" -o jsonpath='{.status.addresses[*].type}={.status.addresses[0].address}')" = "InternalIP=$ENV_HOST_IP" ] ||
    { echo "Q's addresses: $(kctl get node "$Q_NODE" -o jsonpath='{.status.addresses}')"; return 1; }
  out=$(kl_get "$qp" none); [ "$out" = "Unauthorized
 401" ] || { echo "no certificate: $out"; return 1; }
  out=$(kl_get "$qp" controller-manager)
  [ "$out" = "Forbidden (user=system:kube-controller-manager, verb=get, resource=nodes, subresource=proxy)
 403" ] || { echo "controller-manager: $out"; return 1; }
  out=$(kl_get "$qp" admin)
  [ "$out" = "pod \"$ns_node/p1\" not found on this node
 404" ] || { echo "admin: $out"; return 1; }
}
check "kubelet API: each agent on its own bound port (Node kubeletEndpoint, InternalIP only); 401 without a certificate, 403 by SubjectAccessReview, admin passes" kubelet_authn
# Volumes of several agents: kube-scheduler selects the pod's Node on the PVC
# (WaitForFirstConsumer) and only that Node's agent (P) provisions it, in its own state,
# pinned to that Node. Q, another provisioning agent, makes nothing for it, and going as a
# suite's agent goes (stopped, its state dir removed) then starting afresh (its start-up
# clean-up removes a PV of its own whose claim is gone) leaves the volume, its data and a
# PV that no agent made alone.
newns pv2 ns_pv2
pv_obj() { # NAME LABELS PATH
  kctl create -f - >/dev/null <<Y
apiVersion: v1
kind: PersistentVolume
metadata: {name: $1, labels: {$2}}
spec: {capacity: {storage: 1Mi}, accessModes: [ReadWriteOnce], persistentVolumeReclaimPolicy: Retain,
       storageClassName: na-it-none-$id, hostPath: {path: "$3"}}
Y
}
pv2_bound() { [ "$(jp "$ns_pv2" pvc/d2 '{.status.phase}')" = Bound ]; }
pv_there() { kctl get pv "$1" >/dev/null 2>&1; }
two_agents() {
  local p_root q_root uid pv dir d
  poll 30 node_ready "$Q_NODE" True || { echo "agent Q not Ready: $(tail -3 "$Q_STATE.log")"; return 1; }
  p_root=$(realpath -m "$P_STATE")/pvs q_root=$(realpath -m "$Q_STATE")/pvs
  pv_obj "na-it-$id-foreign" "nodeagent.redis-operator.test/provisioned: \"true\"" "/nonexistent/na-it-$id" ||
    { echo "cannot create a PV"; return 1; }
  apply "$ns_pv2" <<Y
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: d2}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Mi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: pw}
spec:
$(place 2 "$P_NODE" "$P_TAINT")
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox:1
    command: [sh, -c, 'echo kept > /data/f; while true; do sleep 0.2; done']
    volumeMounts: [{name: d, mountPath: /data}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: d2}}]
Y
  poll 30 pv2_bound || { echo "PVC not Bound: $(jp "$ns_pv2" pvc/d2 '{.status.phase}')"; return 1; }
  uid=$(jp "$ns_pv2" pvc/d2 '{.metadata.uid}') pv=$(jp "$ns_pv2" pvc/d2 '{.spec.volumeName}')
  dir=$(kctl get pv "$pv" -o jsonpath='{.spec.hostPath.path}')
  [ "$(jp "$ns_pv2" pvc/d2 '{.metadata.annotations.volume\.kubernetes\.io/selected-node}')" = "$P_NODE" ] ||
    { echo "selected node: $(jp "$ns_pv2" pvc/d2 '{.metadata.annotations}')"; return 1; }
  [ "$dir" = "$p_root/$ns_pv2/$uid" ] || { echo "PV $pv at $dir, not in P's state"; return 1; }
  [ "$(kctl get pv "$pv" -o jsonpath='{.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values}')" = "[\"$P_NODE\"]" ] &&
    [ "$(kctl get pv "$pv" -o jsonpath='{.metadata.labels.nodeagent\.redis-operator\.test/agent}')" = "${P_PREFIX%-}" ] ||
    { echo "PV $pv: $(kctl get pv "$pv" -o jsonpath='{.metadata.labels} {.spec.nodeAffinity}')"; return 1; }
  for d in "$q_root" "$(realpath -m "$NA_STATE")/pvs"; do
    [ ! -e "$d/$ns_pv2/$uid" ] || { echo "another agent made $d/$ns_pv2/$uid"; return 1; }
  done
  poll 30 is_phase "$ns_pv2" pw Running && poll 10 grep -q kept "$dir/f" || { echo "pw did not write"; return 1; }
  stop_private "$Q_PIDFILE" || { echo "Q did not stop"; return 1; }
  rm -rf "$Q_STATE"
  pv_obj "na-itq-$id-own" "nodeagent.redis-operator.test/provisioned: \"true\", nodeagent.redis-operator.test/agent: ${Q_PREFIX%-}" \
    "$q_root/gone/uid-$id" || { echo "cannot create Q's PV"; return 1; }
  start_q
  poll 30 node_ready "$Q_NODE" True && poll 20 eval '! pv_there na-itq-$id-own' ||
    { echo "Q did not clean up its own PV: $(tail -3 "$Q_STATE.log")"; return 1; }
  pv_there "na-it-$id-foreign" || { echo "a PV no agent made was deleted"; return 1; }
  pv_there "$pv" && pv2_bound && [ -f "$dir/f" ] && is_phase "$ns_pv2" pw Running ||
    { echo "the volume did not survive Q: PV $(pv_there "$pv" && echo kept || echo gone), dir $(ls "$dir" 2>&1)"; return 1; }
  kctl -n "$ns_pv2" delete pod pw --wait=false >/dev/null && kctl -n "$ns_pv2" delete pvc d2 --wait=false >/dev/null &&
    poll 40 pv_gone "$pv" "$dir" || { echo "P did not remove its PV and directory"; return 1; }
  kctl delete pv "na-it-$id-foreign" >/dev/null
}
check "PVCs of several agents: only the pod's Node's agent provisions (its state, nodeAffinity, its id); another agent's stop, state removal and start-up clean-up leave it alone" two_agents
node_lose() {
  local t0; t0=$(ms)
  p_ctl node-lose "$P_NODE" && poll 25 node_ready "$P_NODE" Unknown || return 1
  echo "node-lose -> Node Ready Unknown: $(( $(ms) - t0 )) ms" >>"$RESULTS/nodeagent.timings"
  t0=$(ms)
  p_ctl node-restore "$P_NODE" && poll 20 node_ready "$P_NODE" True && poll 20 is_ready "$ns_node" p1 || return 1
  echo "node-restore -> Node and pod Ready: $(( $(ms) - t0 )) ms" >>"$RESULTS/nodeagent.timings"
}
check "fault node-lose: Node Ready Unknown (grace 10 s); node-restore: Node and pod Ready" node_lose
agent_restart() {
  local uid t0; uid=$(jp "$ns_node" pod/p1 '{.metadata.uid}') t0=$(ms)
  stop_private || { echo "agent did not stop"; return 1; }
  echo "agent stop (SIGTERM -> exit, pods stopped, Node deleted): $(( $(ms) - t0 )) ms" >>"$RESULTS/nodeagent.timings"
  kctl get node "$P_NODE" >/dev/null 2>&1 && { echo "its Node is still there"; return 1; }
  [ -z "$(ls "$P_STATE/pods")" ] || { echo "sandboxes left: $(ls "$P_STATE/pods")"; return 1; }
  start_private
  poll 20 node_ready "$P_NODE" True && poll 30 is_ready "$ns_node" p1 || return 1
  [ "$(jp "$ns_node" pod/p1 '{.metadata.uid}')" = "$uid" ] && [ -d "$P_STATE/pods/$uid" ]
}
check "agent restart: Node and sandboxes removed at stop; pod recreated and Ready after start" agent_restart

echo "whole script: $(( $(date +%s) - T0 )) s" >>"$RESULTS/nodeagent.timings"
sed 's/^/     timing: /' "$RESULTS/nodeagent.timings"
counts_write nodeagent
