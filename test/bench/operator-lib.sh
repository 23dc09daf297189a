# test/bench/operator-lib.sh: the environment the operator benchmark (operator.sh) and the
# chaos scenarios (test/chaos/scenarios.sh) share. Source it after `cd` to the repo root
# with BUILD set; it sets up exactly what test/integration/controller.sh does (its own
# tainted node agent, a host controller with --cluster-selector) by sourcing the e2e
# harness's helpers (test/integration/controller/lib.sh, reused unchanged), and adds the
# chaos-writer glue: a resolver reading the <name>-leader EndpointSlice, fault runs, verify.
#
#   op_env_up            builds, starts the node agent and the controller (returns 1 on failure)
#   op_cluster NS NAME N wait until Ready (120 s); OP_READY_MS = creation → Ready
#   op_fault_run DIR NS NAME FAULT [RESTORE]   writer + fault + verify (see below)
# Every process is tracked by PID (the harness's cleanup); nothing is killed by name.

. test/env/common.sh
BIN=$(pwd)/$BUILD/redis-operator
WRITER=$(pwd)/$BUILD/controller-it-writer
CHAOS_WRITER=${CHAOS_WRITER:-$(pwd)/$BUILD/chaos-writer}
OP_RATE=${BENCH_RATE:-1000}
. test/integration/controller/lib.sh
private_run ob operator-bench "${CONTROLLER_POD_CIDR:-10.240.$((200 + RANDOM % 50)).0/24}"

op_cleanup() {
  local ns
  [ -n "${OP_WPID:-}" ] && op_writer_stop # an interrupted run's writer (it holds the e2e lock)
  stop_controller main >/dev/null
  for ns in $(cat "$W/namespaces" 2>/dev/null); do $K delete namespace "$ns" --wait=false >/dev/null 2>&1; done
  poll 60 no_pods_left
  poll 90 namespaces_gone
  [ -n "$AGENT_PID" ] && kill -TERM "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null
  rmdir "$CGROUP" 2>/dev/null
  delete_nodes
  [ -n "${KEEP:-}" ] || rm -rf "$W"
}

op_env_up() {
  make -s BUILD="$BUILD" "$BUILD/redis-operator" "$BUILD/nodeagent" "$BUILD/chaos-writer" \
    "$BUILD/controller-it-writer" >/dev/null || { echo "cannot build" >&2; return 1; }
  api_ready || bash test/env/up.sh >/dev/null 2>&1 || { echo "control plane not up" >&2; return 1; }
  start_agent || { echo "node agent did not start" >&2; return 1; }
  $K apply -f config/crd/bases >/dev/null 2>&1
  newns "$OPNS" >/dev/null
  start_controller || { echo "controller did not start" >&2; return 1; }
}

# ctl OP ARGS: the private node agent's fault injection
ctl() { "$BUILD/nodeagent" ctl --state-dir "$W/na" "$@" >/dev/null; }
ctl_pid() { cat "$W/ctl-main.pid"; }

op_cluster() { # NS NAME INSTANCES [SPEC]
  local t0
  newns "$1" 2>/dev/null
  t0=$(ms); mkcluster "$1" "$2" "$3" "${4:-}"
  poll 180 ready "$1" "$2" || return 1
  OP_READY_MS=$(($(ms) - t0))
}

# The resolver: a shell command printing the leader EndpointSlice's ready address:6379.
op_resolver() {
  echo "$K -n $1 get endpointslices -l kubernetes.io/service-name=$2-leader -o jsonpath='{.items[*].endpoints[?(@.conditions.ready==true)].addresses[0]}' | awk 'NF {print \$1 \":6379\"; exit}'"
}

op_writer_start() { # DIR NS NAME
  secret "$2" "$3-auth" >"$1/password"
  "$CHAOS_WRITER" run --resolve "$(op_resolver "$2" "$3")" --auth-password-file "$1/password" \
    --log "$1/writer.log" --rate "$OP_RATE" --fault-file "$1/fault" --resolve-timeout 3s \
    >"$1/writer.out" 2>"$1/writer.err" &
  OP_WPID=$!
}
op_writer_stop() { kill -TERM "$OP_WPID" 2>/dev/null; wait "$OP_WPID" 2>/dev/null; OP_WPID=; }
acked_on() { tail -n 3 "$1" 2>/dev/null | grep -q "\"server\":\"$2\".*\"result\":\"acked\""; }
acked_elsewhere() { tail -n 3 "$1" 2>/dev/null | grep '"result":"acked"' | grep -vq "\"server\":\"$2\""; }
acked_any() { tail -n 3 "$1" 2>/dev/null | grep -q '"result":"acked"'; }

# op_verify DIR NS NAME: chaos-writer verify against the final primary and every replica.
# Sets VERIFY_LINE, VERIFY_RC, RUN_RTO (first fault), RUN_GAP.
op_verify() {
  local dir=$1 ns=$2 name=$3 p ip reps=""
  p=$(leader_ip "$ns" "$name")
  for ip in $(pod_ips "$ns" "$name"); do [ "$ip" = "$p" ] || reps+="$ip:6379,"; done
  VERIFY_LINE=$("$CHAOS_WRITER" verify --logs "$dir/writer.log" --primary "$p:6379" \
    --replicas "${reps%,}" --auth-password-file "$dir/password" --fault-file "$dir/fault" \
    --report "$dir/report.json" --faults-out "$dir/faults.tsv" 2>"$dir/verify.err")
  VERIFY_RC=$?
  RUN_RTO=$(awk 'NR==1{print $3}' "$dir/faults.tsv" 2>/dev/null); RUN_RTO=${RUN_RTO:--1}
  RUN_GAP=$(awk 'NR==1{print $4}' "$dir/faults.tsv" 2>/dev/null); RUN_GAP=${RUN_GAP:--1}
  [ -n "$VERIFY_LINE" ] || VERIFY_LINE="verify failed: $(head -c 300 "$dir/verify.err")"
}
field() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"$1"; }

# KEEP=1: POD's /v1/status every 500 ms for 60 s, a line each (ms, JSON), to read why a
# pod rejoined late (trace_status FILE NS POD).
trace_status() {
  local i ip; ip=$(pod_ip "$2" "$3")
  for i in $(seq 120); do
    echo "$(ms) $(curl -sk --max-time 1 "https://$ip:8000/v1/status" | jq -c . 2>/dev/null)" >>"$1"
    sleep 0.5
  done
}

# op_fault_run DIR NS NAME FAULT [RESTORE] [WAITFOR]: the writer writes through the leader;
# once acknowledged on the primary, the fault time is recorded and FAULT (a function given
# NS NAME PRIMARY-POD) runs; we wait for acknowledged writes on another server (WAITFOR
# "elsewhere", default) or on any (WAITFOR "any"), run RESTORE (same arguments), wait for
# Ready, stop the writer and verify. OP_READY_AGAIN_MS = fault → Ready again.
op_fault_run() {
  local dir=$1 ns=$2 name=$3 fault=$4 restore=${5:-} waitfor=${6:-elsewhere} old oldaddr t0
  mkdir -p "$dir"; : >"$dir/fault"
  old=$(primary "$ns" "$name"); oldaddr=$(pod_ip "$ns" "$old"):6379
  op_writer_start "$dir" "$ns" "$name"
  poll 30 acked_on "$dir/writer.log" "$oldaddr" || { op_writer_stop; echo "no acks on $oldaddr" | tee "$dir/why" >&2; return 1; }
  sleep 0.5
  t0=$(ms); echo "$EPOCHREALTIME" >"$dir/fault"
  "$fault" "$ns" "$name" "$old" || { op_writer_stop; echo "fault failed" | tee "$dir/why" >&2; return 1; }
  sleep 0.2
  if [ "$waitfor" = any ]; then
    sleep 1 # no failover expected: let the fault take effect, then any acknowledged write
    poll 90 acked_any "$dir/writer.log"
  else
    poll 90 acked_elsewhere "$dir/writer.log" "$oldaddr"
  fi || { [ -n "$restore" ] && "$restore" "$ns" "$name" "$old"; op_writer_stop; echo "no acks after the fault" | tee "$dir/why" >&2; return 1; }
  [ -n "$restore" ] && "$restore" "$ns" "$name" "$old"
  [ "${KEEP:-0}" = 1 ] && { echo "$(ms) restored" >"$dir/old-primary.status"
    trace_status "$dir/old-primary.status" "$ns" "$old" & }
  # a failover must show in the status (another currentPrimary) before Ready counts
  if [ "$waitfor" = elsewhere ]; then
    poll 180 eval 'ready "$ns" "$name" && [ "$(primary "$ns" "$name")" != "$old" ]'
  else
    poll 180 ready "$ns" "$name"
  fi || { op_writer_stop; echo "not Ready again" | tee "$dir/why" >&2; return 1; }
  OP_READY_AGAIN_MS=$(($(ms) - t0))
  sleep 0.5
  op_writer_stop
  op_verify "$dir" "$ns" "$name"
}

# --- faults (NS NAME POD) ---------------------------------------------------------------
container_of() { $K -n "$1" get pod "$2" -o jsonpath='{.spec.containers[0].name}'; }
f_server_kill() { local pid; pid=$(server_hostpid "$1" "$3") && kill -9 "$pid"; }
f_im_kill() { ctl kill "$1/$3" "$(container_of "$1" "$3")"; }
f_pod_delete() { $K -n "$1" delete pod "$3" --wait=false >/dev/null; }
f_net_cut() { ctl net-cut "$1/$3"; }
r_net_restore() { ctl net-restore "$1/$3"; }
f_freeze() { ctl freeze "$1/$3"; }
r_thaw() { ctl thaw "$1/$3"; }
