#!/usr/bin/env bash
# test/bench/footprint.sh: the controller's footprint with 0, 100 and 1,000 RedisClusters
# of 3 instances, on the local environment (test/env), in steady state:
#
#   controller_rss_mib               VmRSS of the controller (MiB) by number of clusters
#   controller_hwm_mib               VmHWM (peak RSS, creation included)
#   controller_cpu_s_per_min         CPU seconds (user + system, /proc/PID/stat) per minute
#   controller_api_requests_per_min  Kubernetes API requests per minute by verb, from the
#                                    controller's redis_operator_api_requests_total (both
#                                    its clients: caches, writes, events, leader Lease)
#   controller_periodic_list         whether any LIST was sent in the measured window
#   footprint_runs                   settings, time to Ready, polls per minute, ...
#
# Thousands of real pods do not fit on a 2-core machine, so the pods run on a LIGHT node
# agent (test/nodeagent --light CIDR): a separate tainted Node whose pods are not executed
# but get an address from CIDR, Running/Ready statuses and bound PVCs as usual, and whose
# instance managers are simulated by one process answering the instance API on every pod
# address (test/nodeagent/sim.h): the primary holds and renews its cluster's Lease, the
# replicas are linked at equal offsets. Everything the controller does is real: caches,
# reconciles, every child object, status polls of every pod each second, status writes.
# The clusters set spec.failover {leaseDuration 5m, renewDeadline 4m, renewPeriod 2m}
# (BENCH_FOOTPRINT_FAILOVER), so that 1,000 primaries renew 500 times a minute instead of
# 60,000 (the default 1 s period) on a machine the API server shares.
#
# Steps: the controller alone (0), then clusters are created up to each count of
# BENCH_FOOTPRINT_COUNTS ("100 1000"), BENCH_FOOTPRINT_PER_NS (100) per namespace; once all
# are Ready the system settles BENCH_FOOTPRINT_SETTLE s (60) and is measured over
# BENCH_FOOTPRINT_WINDOW s (60) with nothing else from this script touching the API.
# Writes $BENCH_OUT/footprint.json (merged by results.sh) after every step measured, so an
# interrupted run keeps what it measured. Everything it made (namespaces, the light Node,
# the route, its processes by PID) is removed at exit, Ctrl-C included.
#
# Environment: BUILD (build), BENCH_OUT ($BUILD/bench), BENCH_FOOTPRINT_CIDR
# (10.240.32.0/19: addresses no other agent of the tree hands out), BENCH_FOOTPRINT_READY_TIMEOUT
# (3600 s per step), BENCH_FOOTPRINT_BREAKDOWN=1 (after each step: heap bytes per cached
# kind, malloc_info, sockets, VmRSS after malloc_trim(0): $BENCH_OUT/footprint-breakdown-N/), KEEP=1 (keep the work directory). Run it under the e2e lock
# (flock /tmp/ro-e2e.lock) when others use the environment. Exit 1 when a step failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
BENCH_OUT=${BENCH_OUT:-$BUILD/bench}
COUNTS=${BENCH_FOOTPRINT_COUNTS:-100 1000}
PER_NS=${BENCH_FOOTPRINT_PER_NS:-100}
SETTLE=${BENCH_FOOTPRINT_SETTLE:-60}
WINDOW=${BENCH_FOOTPRINT_WINDOW:-60}
CIDR=${BENCH_FOOTPRINT_CIDR:-10.240.32.0/19}
READY_TIMEOUT=${BENCH_FOOTPRINT_READY_TIMEOUT:-3600}
FAILOVER=${BENCH_FOOTPRINT_FAILOVER:-leaseDuration: 5m, renewDeadline: 4m, renewPeriod: 2m}
INSTANCES=3

die() { echo "footprint: $*" >&2; exit 2; }
is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
prev=0
for n in $COUNTS; do
  is_uint "$n" && [ "$n" -gt "$prev" ] || die "BENCH_FOOTPRINT_COUNTS: \"$COUNTS\": want increasing positive integers"
  prev=$n
done
MAX=$prev
for v in PER_NS SETTLE WINDOW READY_TIMEOUT; do
  is_uint "${!v}" && [ "${!v}" -gt 0 ] || die "BENCH_FOOTPRINT_${v}: \"${!v}\": want a positive integer"
done
[[ $CIDR =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+/([0-9]+)$ ]] || die "BENCH_FOOTPRINT_CIDR: \"$CIDR\": want a.b.c.d/len"
[ $(( (1 << (32 - BASH_REMATCH[1])) - 2 )) -ge $((MAX * INSTANCES)) ] ||
  die "BENCH_FOOTPRINT_CIDR: $CIDR holds fewer addresses than $MAX clusters x $INSTANCES pods"

. test/env/common.sh
K="$ENV_BIN/kubectl --kubeconfig $KUBECONFIG_ADMIN"
RUN=fp$(($$ % 10000))$((RANDOM % 100))
W=$(mktemp -d /tmp/footprint.XXXXXX)
NODE=$RUN-light-1
TAINT_KEY=nodeagent.redis-operator.test/dev
OPNS=$RUN-op
HPORT=$((20000 + RANDOM % 20000)); MPORT=$((HPORT + 1))
AGENT_PID= CTL_PID= ROUTE_OURS=
mkdir -p "$BENCH_OUT"
LOG=$BENCH_OUT/footprint.log
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
ms() { echo $(( $(date +%s%N) / 1000000 )); }
T_START=$(ms)

# poll SECONDS CMD...: bounded retries
poll() {
  local deadline=$(( $(ms) + $1 * 1000 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(ms)" -lt "$deadline" ] || return 1
    sleep 0.5
  done
}

# --- clean-up (EXIT, also after Ctrl-C) --------------------------------------------------

namespaces() { cat "$W/namespaces" 2>/dev/null; }
no_pods_left() { [ -z "$($K get pods -A --field-selector "spec.nodeName=$NODE" -o name 2>/dev/null | head -1)" ]; }
namespaces_gone() { local ns; for ns in $(namespaces); do ! $K get namespace "$ns" >/dev/null 2>&1 || return 1; done; }
stop_pid() { # PID SECONDS: SIGTERM, wait, SIGKILL
  [ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 0
  kill -TERM "$1" 2>/dev/null
  poll "$2" eval "! kill -0 $1 2>/dev/null" || kill -KILL "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}
cleanup() {
  local ns
  trap '' INT TERM
  say "cleaning up (run $RUN)"
  stop_pid "$CTL_PID" 30
  for ns in $(namespaces); do $K delete namespace "$ns" --wait=false >/dev/null 2>&1; done
  # the light agent deletes the pods (no grace: nothing runs); then the namespaces go
  [ -n "$AGENT_PID" ] && poll 900 no_pods_left
  stop_pid "$AGENT_PID" 60
  $K delete node "$NODE" --wait=false >/dev/null 2>&1
  if [ -n "$ROUTE_OURS" ] && [ -n "$(ip route show table local "$CIDR" 2>/dev/null)" ]; then
    ip route del local "$CIDR" dev lo 2>/dev/null
  fi
  poll 300 namespaces_gone || say "namespaces still terminating: $(namespaces | tr '\n' ' ')"
  [ -n "${KEEP:-}" ] && say "work directory kept: $W" || rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the light node agent and the controller ---------------------------------------------

node_ready() {
  [ "$($K get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}
start_agent() {
  mkdir -p "$W/na"
  setsid "$BUILD/nodeagent" --kubeconfig "$ENV_DIR/nodeagent.kubeconfig" --state-dir "$W/na" \
    --nodes 1 --node-prefix "$RUN-light-" --register-taint "$TAINT_KEY=$RUN:NoSchedule" \
    --light "$CIDR" --operator-bin "$BUILD/redis-operator" \
    --lease-renew-interval 2s --node-status-interval 2s \
    >"$W/nodeagent.log" 2>&1 </dev/null &
  AGENT_PID=$!
  ROUTE_OURS=1
  poll 60 node_ready
}
leading() { curl -sf --max-time 2 "http://127.0.0.1:$HPORT/readyz" | grep -q '"leader":true'; }
start_controller() {
  setsid "$BUILD/redis-operator" controller --kubeconfig "$KUBECONFIG_ADMIN" --namespace "$OPNS" \
    --cluster-selector "redis-operator.test/run=$RUN" --health-port "$HPORT" \
    --metrics-port "$MPORT" --bind-address 127.0.0.1 --log-format logfmt \
    >"$W/controller.log" 2>&1 </dev/null &
  CTL_PID=$!
  poll 60 leading
}
newns() {
  echo "$1" >>"$W/namespaces"
  $K create namespace "$1" >/dev/null &&
    $K label namespace "$1" pod-security.kubernetes.io/enforce=restricted >/dev/null
}

make -s BUILD="$BUILD" "$BUILD/redis-operator" "$BUILD/nodeagent" >/dev/null || die "cannot build"
[ -z "${BENCH_FOOTPRINT_BREAKDOWN:-}" ] || make -s BUILD="$BUILD" "$BUILD/bench/cache_bytes" >/dev/null ||
  die "cannot build $BUILD/bench/cache_bytes"
$K get --raw /readyz >/dev/null 2>&1 || bash test/env/up.sh >/dev/null 2>&1 || die "control plane not up"
[ -z "$(ip route show table local "$CIDR" 2>/dev/null)" ] ||
  die "a route for $CIDR exists (another light agent?): \`ip route del local $CIDR dev lo\` if it is stale"
start_agent || die "the light node agent did not start: $(tail -3 "$W/nodeagent.log")"
$K apply -f config/crd/bases >/dev/null 2>&1
newns "$OPNS" || die "cannot create namespace $OPNS"
start_controller || die "the controller did not start: $(tail -3 "$W/controller.log")"
say "run $RUN: light node $NODE ($CIDR), controller pid $CTL_PID, agent pid $AGENT_PID, work dir $W"

# --- clusters -------------------------------------------------------------------------------

cluster_yaml() { # NS NAME
  cat <<Y
---
apiVersion: redis.io/v1
kind: RedisCluster
metadata: {name: $2, namespace: $1, labels: {redis-operator.test/run: $RUN}}
spec:
  instances: $INSTANCES
  storage: {size: 64Mi}
  failover: {$FAILOVER}
  tolerations: [{key: $TAINT_KEY, operator: Equal, value: $RUN, effect: NoSchedule}]
  nodeSelector: {kubernetes.io/hostname: $NODE}
Y
}
ns_of() { echo "$RUN-$(( ($1 - 1) / PER_NS ))"; }
# make_clusters FROM TO: clusters c<FROM>..c<TO>, one kubectl per namespace
make_clusters() {
  local i ns cur=""
  for ((i = $1; i <= $2; i++)); do
    ns=$(ns_of "$i")
    if [ "$ns" != "$cur" ]; then
      [ -n "$cur" ] && { $K create -f "$W/batch.yaml" >/dev/null || return 1; }
      grep -qx "$ns" "$W/namespaces" 2>/dev/null || newns "$ns" || return 1
      cur=$ns; : >"$W/batch.yaml"
    fi
    cluster_yaml "$ns" "c$i" >>"$W/batch.yaml"
  done
  [ -z "$cur" ] || $K create -f "$W/batch.yaml" >/dev/null
}
ready_count() {
  $K get redisclusters -A -l "redis-operator.test/run=$RUN" \
    -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>/dev/null |
    grep -c '^True$'
}
# wait_ready N: until N clusters are Ready (READY_TIMEOUT); progress every 30 s
wait_ready() {
  local t0 last=0 got
  t0=$(ms)
  while :; do
    got=$(ready_count)
    [ "${got:-0}" -ge "$1" ] && return 0
    [ $(( $(ms) - t0 )) -lt $((READY_TIMEOUT * 1000)) ] || { READY_GOT=$got; return 1; }
    if [ $(( $(ms) - last )) -ge 30000 ]; then
      say "  ... $got of $1 Ready after $(( ($(ms) - t0) / 1000 )) s"; last=$(ms)
    fi
    sleep 10
  done
}

# --- measuring -------------------------------------------------------------------------------

TICK=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$CTL_PID/stat"; }
kib() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$CTL_PID/status"; }
metrics() { curl -sf --max-time 5 "http://127.0.0.1:$MPORT/metrics"; }
VERBS="get list watch create update patch delete"
# counters FILE: "verb count" lines, plus polls and reconciles
counters() {
  metrics | awk '
    /^redis_operator_api_requests_total\{verb="/ { split($1, a, "\""); print a[2], $2 }
    /^redis_operator_instance_polls_total / { print "polls", $2 }
    /^redis_operator_instance_poll_errors_total / { print "poll_errors", $2 }
    /^redis_operator_reconciles_total / { print "reconciles", $2 }' >"$1"
}
val() { awk -v k="$2" '$1 == k {print $2}' "$1"; }
per_min() { awk -v a="${1:-0}" -v b="${2:-0}" -v ms="$3" 'BEGIN {printf "%.1f", (b - a) * 60000 / ms}'; }
mib() { awk -v k="${1:-0}" 'BEGIN {printf "%.1f", k / 1024}'; }

declare -A RSS=() HWM=() CPU=() API=() LISTED=() DETAIL=() READY_S=()
# measure N: settle, then one window; fills the maps for key N
measure() {
  local n=$1 c0 c1 t0 t1 el v verbs="" total=0 writes=0 d
  say "  settling ${SETTLE} s, then measuring ${WINDOW} s"
  sleep "$SETTLE"
  kill -0 "$CTL_PID" 2>/dev/null || { say "  the controller died"; return 1; }
  counters "$W/m0"; c0=$(cpu_ticks); t0=$(ms)
  sleep "$WINDOW"
  counters "$W/m1"; c1=$(cpu_ticks); t1=$(ms)
  el=$((t1 - t0))
  for v in $VERBS; do
    d=$(per_min "$(val "$W/m0" "$v")" "$(val "$W/m1" "$v")" "$el")
    verbs+="\"$v\": $d, "
    total=$(awk -v a="$total" -v b="$d" 'BEGIN {print a + b}')
    case $v in create|update|patch|delete) writes=$(awk -v a="$writes" -v b="$d" 'BEGIN {print a + b}') ;; esac
  done
  RSS[$n]=$(mib "$(kib VmRSS)"); HWM[$n]=$(mib "$(kib VmHWM)")
  CPU[$n]=$(awk -v a="$c0" -v b="$c1" -v t="$TICK" -v ms="$el" 'BEGIN {printf "%.2f", (b - a) / t * 60000 / ms}')
  API[$n]="{${verbs}\"total\": $total, \"writes\": $writes}"
  [ "$(val "$W/m1" list)" = "$(val "$W/m0" list)" ] && LISTED[$n]=false || LISTED[$n]=true
  DETAIL[$n]="{\"polls_per_min\": $(per_min "$(val "$W/m0" polls)" "$(val "$W/m1" polls)" "$el"), \"poll_errors_per_min\": $(per_min "$(val "$W/m0" poll_errors)" "$(val "$W/m1" poll_errors)" "$el"), \"reconciles_per_min\": $(per_min "$(val "$W/m0" reconciles)" "$(val "$W/m1" reconciles)" "$el"), \"threads\": $(kib Threads)}"
  # a Node marked unreachable marks every pod not Ready: the figures would not be steady
  if $K get node "$NODE" -o jsonpath='{.spec.taints[*].key}' | grep -q 'unreachable\|not-ready'; then
    say "  WARNING: $NODE is tainted unreachable/not-ready: its heartbeats were late"
    DETAIL[$n]="${DETAIL[$n]%\}}, \"node_unreachable\": true}"
  fi
  say "  $n clusters: VmRSS ${RSS[$n]} MiB (peak ${HWM[$n]}), CPU ${CPU[$n]} s/min, API ${API[$n]} per min, periodic LIST: ${LISTED[$n]}, ${DETAIL[$n]}"
}

# --- the breakdown (BENCH_FOOTPRINT_BREAKDOWN=1): where the memory goes ---------------------------

# plural, kubectl name, selector: the controller's caches (controller/informers.c)
MANAGED=app.kubernetes.io/managed-by=redis-operator
CACHES="redisclusters redisclusters.redis.io redis-operator.test/run=$RUN
pods pods $MANAGED
persistentvolumeclaims persistentvolumeclaims $MANAGED
services services $MANAGED
secrets secrets $MANAGED
serviceaccounts serviceaccounts $MANAGED
roles roles.rbac.authorization.k8s.io $MANAGED
rolebindings rolebindings.rbac.authorization.k8s.io $MANAGED
poddisruptionbudgets poddisruptionbudgets.policy $MANAGED
networkpolicies networkpolicies.networking.k8s.io $MANAGED
leases leases.coordination.k8s.io $MANAGED
endpointslices endpointslices.discovery.k8s.io $MANAGED,endpointslice.kubernetes.io/managed-by=redis-operator
redisbackups redisbackups.redis.io -
redisscheduledbackups redisscheduledbackups.redis.io -"
# breakdown N: heap bytes per cached kind (cache_bytes on what the caches hold), the
# allocator's own view (malloc_info through gdb), sockets and threads, into
# $BENCH_OUT/footprint-breakdown-N/
breakdown() {
  local d=$BENCH_OUT/footprint-breakdown-$1 plural name sel
  mkdir -p "$d"; : >"$d/kinds.jsonl"
  while read -r plural name sel; do
    if [ "$sel" = - ]; then $K get "$name" -A -o json >"$W/bd.json"
    else $K get "$name" -A -l "$sel" -o json >"$W/bd.json"; fi || continue
    "$BUILD/bench/cache_bytes" "$plural" "$W/bd.json" >>"$d/kinds.jsonl"
  done <<<"$CACHES"
  gdb -p "$CTL_PID" -batch -ex 'set $f = (void *)fopen("'"$d"'/malloc_info.xml", "w")' \
    -ex 'call (int)malloc_info(0, $f)' -ex 'call (int)fclose($f)' >"$d/gdb.log" 2>&1
  cp "/proc/$CTL_PID/smaps_rollup" "$d/smaps_rollup" 2>/dev/null
  grep -E '^(VmRSS|RssAnon|RssFile|Threads)' "/proc/$CTL_PID/status" >"$d/status"
  echo "sockets $(find "/proc/$CTL_PID/fd" -lname 'socket:*' 2>/dev/null | wc -l)" >>"$d/status"
  # what the allocator holds free: malloc_trim(0) gives its free pages back (the figures
  # of a later step are measured after this)
  gdb -p "$CTL_PID" -batch -ex 'call (int)malloc_trim(0)' >>"$d/gdb.log" 2>&1
  echo "VmRSS_after_malloc_trim $(kib VmRSS) kB" >>"$d/status"
  say "  breakdown in $d: $(awk -F'[:,]' '{printf "%s %s; ", $2, $NF}' "$d/kinds.jsonl" | tr -d '"}')"
}

# --- footprint.json ---------------------------------------------------------------------------

jmap() { # NAME-OF-ASSOC-ARRAY: {"0": v, "100": v, ...} in COUNTS order, measured keys only
  local -n m=$1
  local k out="" sep=""
  for k in 0 $COUNTS; do
    [ -n "${m[$k]:-}" ] || continue
    out+="$sep\"$k\": ${m[$k]}"; sep=", "
  done
  echo "{$out}"
}
# write_json: footprint.json with every step measured so far (rewritten after each step,
# so that an interrupted run keeps them; "reached" says how far it got)
write_json() {
  cat >"$BENCH_OUT/footprint.json" <<EOF
{
  "controller_rss_mib": $(jmap RSS),
  "controller_hwm_mib": $(jmap HWM),
  "controller_cpu_s_per_min": $(jmap CPU),
  "controller_api_requests_per_min": $(jmap API),
  "controller_periodic_list": $(jmap LISTED),
  "footprint_runs": {"counts": [0$(printf ', %s' $COUNTS)], "reached": $reached, "instances": $INSTANCES,
    "settle_s": $SETTLE, "window_s": $WINDOW, "per_namespace": $PER_NS,
    "failover": "$FAILOVER", "ready_s": $(jmap READY_S), "detail": $(jmap DETAIL),
    "mode": "light node agent: pods not run, instance managers simulated (test/nodeagent --light)",
    "total_s": $(( ($(ms) - T_START) / 1000 ))}
}
EOF
}
status=0
made=0 reached=0
rm -f "$BENCH_OUT/footprint.json"
measure 0 && write_json || status=1
for n in $COUNTS; do
  say "creating clusters $((made + 1))..$n ($INSTANCES instances each, $PER_NS per namespace)"
  t0=$(ms)
  make_clusters $((made + 1)) "$n" || { say "  creating clusters failed"; status=1; break; }
  made=$n
  if ! wait_ready "$n"; then
    say "  only ${READY_GOT:-?} of $n Ready after $READY_TIMEOUT s: not measured"
    status=1; READY_S[$n]=null; break
  fi
  READY_S[$n]=$(( ($(ms) - t0) / 1000 ))
  say "  all $n Ready $((READY_S[$n])) s after creation began"
  measure "$n" || { status=1; break; }
  [ -n "${BENCH_FOOTPRINT_BREAKDOWN:-}" ] && breakdown "$n"
  reached=$n
  write_json
done
write_json

say "wrote $BENCH_OUT/footprint.json"
cat "$BENCH_OUT/footprint.json"
exit $status
