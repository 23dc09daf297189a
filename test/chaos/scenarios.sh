#!/usr/bin/env bash
# test/chaos/scenarios.sh: the fault matrix the node agent can inject, against a real
# 3-instance RedisCluster on the local environment (test/env), each with chaos-writer
# writing through the `<name>-leader` EndpointSlice (WAIT 1) and `chaos-writer verify`
# afterwards. Pass = 0 acknowledged writes lost and 0 split-brain instants (and verify's
# exit 0). One line per scenario and run, with the time from the fault to Ready again.
#
#   server-kill        SIGKILL of the primary's redis-server
#   im-kill            SIGKILL of the primary pod's PID 1 (instance manager: ctl kill); the
#                      container restarts, a failover may or may not happen
#   pod-delete         the primary pod deleted
#   freeze-thaw        the primary pod frozen (cgroup freezer) until writes resume, then thawed
#   net-cut            the primary pod's network cut until writes resume, then restored
#   two-replicas-kill  both replicas' servers SIGKILLed at once (no failover expected: WAIT 1
#                      fails until one is back)
#   controller-kill    SIGKILL of the primary's server, then of the controller; restarted
#   rolling-update     a static setting changed (databases) under load: rolling restart
#   api-cut            the primary pod cut from the API server only (iptables DROP in its
#                      netns): it must fence itself at the renew deadline, a replica takes
#                      over once the Lease lapsed; restored, the old primary rejoins
#   api-restart        SIGKILL of the primary's server, then the kube-apiserver restarted
#                      (test/env/restart-apiserver.sh: every watch and connection drops;
#                      everyone using the environment sees it, so run it alone; the
#                      outage, ~17 s, outlasts the controller's leader Lease: it exits
#                      and is started again, as its Deployment would restart it)
#   node-lost          the primary's Node lost (node agent ctl node-lose: heartbeats stop,
#                      its pods frozen) until writes resume elsewhere, then restored
#   switchover-kill    a switchover to a replica is asked and that replica's server is
#                      SIGKILLed at once (the switchover fails or completes; either way
#                      no acknowledged write is lost)
#   switchover-refused a switchover whose old primary's REPLICAOF is refused: the test image
#                      redis:7.0-fault-demotion arms instance/fault.h; the old primary stays
#                      fenced until the controller repoints it
#   fence-maxclients   every client slot of the primary taken by a customer (maxclients 64),
#                      then its API cut: it must fence itself over its reserved connection
#   switchover-api-cut a switchover asked while the primary is cut from the API server (an
#                      API server slower than any timeout: the Lease can be neither released
#                      nor taken back; there is no netem here for a finite delay, which the
#                      instance check switchover_slow_api covers): the write pause holds
#                      until a replica takes over
#   lagging-replicas   both replicas' servers frozen (SIGSTOP) and the primary cut from the
#                      API server; thawed 7 s later: at its fence the primary is ahead of
#                      them, and the promotion waits (bounded) until the elected one reached
#                      its offset (the FailoverPromoting event says which case applied)
#
# The environment is test/integration/controller.sh's (test/bench/operator-lib.sh), with a
# private node agent of AGENT_NODES (3) Nodes: the pods spread over them.
# Environment: BUILD (build), CHAOS_RUNS (3 runs of each), CHAOS_SCENARIOS (all),
# RESULTS ($BUILD/test-results: chaos-scenarios.counts "passed failed"). Exit 1 on a failure.
# (The quick Sentinel form for `make test` is test/chaos/short.sh.)
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RUNS=${CHAOS_RUNS:-3}
SCEN=${CHAOS_SCENARIOS:-server-kill im-kill pod-delete freeze-thaw net-cut api-cut node-lost two-replicas-kill switchover-kill switchover-refused fence-maxclients switchover-api-cut lagging-replicas controller-kill api-restart rolling-update}
RESULTS=${RESULTS:-$BUILD/test-results}
mkdir -p "$RESULTS"
AGENT_NODES=${AGENT_NODES:-3}
. test/bench/operator-lib.sh
trap op_cleanup EXIT
trap 'exit 130' INT TERM
passed=0 failed=0

op_env_up || { echo "0 1" >"$RESULTS/chaos-scenarios.counts"; echo "FAIL chaos: environment"; exit 1; }
echo "chaos: run $RUN, node $NODE, work dir $W"

replicas_of() { $K -n "$1" get pods -l "redis.io/cluster=$2,redis.io/role=replica" -o jsonpath='{.items[*].metadata.name}'; }
f_two_replicas() {
  local p pids=""
  for p in $(replicas_of "$1" "$2"); do pids+=" $(server_hostpid "$1" "$p")"; done
  # shellcheck disable=SC2086
  [ -n "${pids// /}" ] && kill -9 $pids
}
f_controller_kill() {
  f_server_kill "$@" || return 1
  kill -9 "$(ctl_pid)"; poll 10 test -s "$W/ctl-main.exit"
  start_controller
}
# The pod's network namespace through its PID 1 (the instance manager: the server's parent).
pod_nsenter() { local s; s=$(server_hostpid "$1" "$2") && nsenter -t "$(ps -o ppid= -p "$s" | tr -d ' ')" -n "${@:3}"; }
api_rule() { echo "OUTPUT -d $ENV_HOST_IP -p tcp --dport $ENV_API_PORT -j DROP"; }
f_api_cut() {
  # shellcheck disable=SC2046
  pod_nsenter "$1" "$3" iptables -w -I $(api_rule) && echo "$1 $3" >"$W/api-cut"
}
r_api_restore() {
  local i
  # the old primary's server may be restarting (parked): retry until its netns is found
  # shellcheck disable=SC2046
  for i in $(seq 1 50); do pod_nsenter "$1" "$3" iptables -w -D $(api_rule) 2>/dev/null && return 0; sleep 0.2; done
  return 1
}
f_node_lose() {
  local n; n=$($K -n "$1" get pod "$3" -o jsonpath='{.spec.nodeName}')
  [ -n "$n" ] && echo "$n" >"$W/lost-node" && ctl node-lose "$n"
}
r_node_restore() { ctl node-restore "$(cat "$W/lost-node")"; }
f_api_restart() {
  f_server_kill "$@" && bash test/env/restart-apiserver.sh >>"$W/api-restart.log" 2>&1 || return 1
  # As a Deployment's kubelet would: a controller that lost its leader Lease during the
  # outage (longer than its renew deadline) exited 1; it is started again.
  if [ -s "$W/ctl-main.exit" ]; then start_controller; fi
}
f_switchover_ask() {
  local t; t=$(replicas_of "$1" "$2" | awk '{print $1}')
  [ -n "$t" ] && echo "$t" >"$W/switchover-target" &&
    $K -n "$1" annotate rediscluster "$2" "redis.io/switchover-to=$t" --overwrite >/dev/null
}
f_switchover_kill() {
  f_switchover_ask "$@" && sleep 0.1 && kill -9 "$(server_hostpid "$1" "$(cat "$W/switchover-target")")"
}
f_switchover_api_cut() { f_api_cut "$@" && sleep 0.3 && f_switchover_ask "$@"; }
# A customer holding every client slot of the primary (clients.py), then its API cut.
f_fence_maxclients() {
  rm -f "$W/cust."*
  CLIENTS_HOST=$(pod_ip "$1" "$3") python3 test/integration/instance/clients.py 6379 default \
    "$(secret "$1" "$2-auth")" 1 "$W/cust.ready" "$W/cust.go" "$W/cust.out" >"$W/cust.log" 2>&1 &
  echo $! >"$W/cust.pid"
  poll 30 test -s "$W/cust.ready" && f_api_cut "$@"
}
r_fence_maxclients() { touch "$W/cust.go"; kill "$(cat "$W/cust.pid")" 2>/dev/null; r_api_restore "$@"; }
f_lagging() {
  local p pids=""
  for p in $(replicas_of "$1" "$2"); do pids+=" $(server_hostpid "$1" "$p")"; done
  [ -n "${pids// /}" ] || return 1
  # shellcheck disable=SC2086
  kill -STOP $pids && f_api_cut "$@" || return 1
  # shellcheck disable=SC2086
  (sleep 7; kill -CONT $pids) &
}
# how the last promotion judged the fenced primary's tail (its event's message)
last_promoting() { $K -n "$1" get events --field-selector reason=FailoverPromoting --sort-by=.lastTimestamp -o jsonpath='{.items[-1:].message}' 2>/dev/null | sed 's/.*: //'; }
f_rolling() {
  local n=$(( 16 + ${ROLL_N:-0} % 8 + 1 ))
  $K -n "$1" patch rediscluster "$2" --type=merge -p "{\"spec\":{\"redis\":{\"databases\":\"$n\"}}}" >/dev/null
}
hash_changed() { # NS NAME OLDHASH: every pod re-created with another spec hash, Ready
  [ "$($K -n "$1" get pods -l "redis.io/cluster=$2" -o jsonpath='{range .items[*]}{.metadata.annotations.redis\.io/spec-hash}{"\n"}{end}' | sort -u)" != "$3" ] &&
    [ "$($K -n "$1" get pods -l "redis.io/cluster=$2" -o jsonpath='{range .items[*]}{.metadata.annotations.redis\.io/spec-hash}{"\n"}{end}' | sort -u | wc -l)" = 1 ] &&
    ready "$1" "$2"
}
r_rolling_done() { local h=$ROLL_HASH; poll 240 hash_changed "$1" "$2" "$h"; }

# What a broken run leaves for reading: the cluster's status and every instance's /v1/status.
snapshot() { # DIR NS NAME
  local p
  $K -n "$2" get rediscluster "$3" -o json >"$1/cluster.json" 2>&1
  for p in $($K -n "$2" get pods -l "redis.io/cluster=$3" -o jsonpath='{.items[*].metadata.name}'); do
    echo "$p $(curl -sk --max-time 2 "https://$(pod_ip "$2" "$p"):8000/v1/status")" >>"$1/instances.status"
  done
}

# scenario NAME FAULT [RESTORE] [WAITFOR] [SPEC]: SPEC, spec lines for the cluster
scenario() {
  local name=$1 ns=$RUN-$1 i dir ok
  op_cluster "$ns" c 3 "${5:-}" || { echo "FAIL chaos $name: cluster not Ready"; failed=$((failed + 1)); return; }
  for i in $(seq 1 "$RUNS"); do
    dir=$W/$name-$i ROLL_N=$i
    ROLL_HASH=$($K -n "$ns" get pods -l redis.io/cluster=c -o jsonpath='{range .items[*]}{.metadata.annotations.redis\.io/spec-hash}{"\n"}{end}' | sort -u)
    ok=0
    if op_fault_run "$dir" "$ns" c "$2" "${3:-}" "${4:-elsewhere}"; then
      [ "$VERIFY_RC" = 0 ] && [ "$(field "$VERIFY_LINE" lost)" = 0 ] &&
        [ "$(field "$VERIFY_LINE" split_brain_instants)" = 0 ] && ok=1
      line="ready_again_ms=$OP_READY_AGAIN_MS rto_ms=$RUN_RTO | $VERIFY_LINE"
      [ "$name" = lagging-replicas ] && line+=" | promoted: $(last_promoting "$ns")"
    else
      line="broken: $(cat "$dir/why" 2>/dev/null) (ready_again: not reached)"
      snapshot "$dir" "$ns" c
      poll 180 ready "$ns" c
    fi
    if [ $ok = 1 ]; then echo "ok   chaos $name run $i: $line"; passed=$((passed + 1))
    else echo "FAIL chaos $name run $i: $line"; failed=$((failed + 1)); fi
  done
  $K delete namespace "$ns" --wait=false >/dev/null 2>&1
}

for s in $SCEN; do
  case $s in
    server-kill) scenario $s f_server_kill ;;
    im-kill) scenario $s f_im_kill "" any ;;
    pod-delete) scenario $s f_pod_delete ;;
    freeze-thaw) scenario $s f_freeze r_thaw ;;
    net-cut) scenario $s f_net_cut r_net_restore ;;
    api-cut) scenario $s f_api_cut r_api_restore ;;
    node-lost) scenario $s f_node_lose r_node_restore ;;
    two-replicas-kill) scenario $s f_two_replicas "" any ;;
    switchover-kill) scenario $s f_switchover_kill "" any ;;
    switchover-refused) scenario $s f_switchover_ask "" elsewhere "  imageName: redis:7.0-fault-demotion" ;;
    fence-maxclients) scenario $s f_fence_maxclients r_fence_maxclients elsewhere "  redis: {maxclients: \"64\"}" ;;
    switchover-api-cut) scenario $s f_switchover_api_cut r_api_restore ;;
    lagging-replicas) scenario $s f_lagging r_api_restore ;;
    controller-kill) scenario $s f_controller_kill ;;
    api-restart) scenario $s f_api_restart ;;
    rolling-update) scenario $s f_rolling r_rolling_done any ;;
    *) echo "FAIL chaos: unknown scenario $s"; failed=$((failed + 1)) ;;
  esac
done
echo "$passed $failed" >"$RESULTS/chaos-scenarios.counts"
echo "chaos scenarios: $passed passed, $failed failed"
[ $failed -eq 0 ]
