#!/usr/bin/env bash
# test/bench/operator.sh: the operator's own figures, measured on the local environment
# (test/env) with the same client and definitions as the peers (test/bench/README.md):
# chaos-writer writes through a shell-command resolver that prints the ready address of
# the `<name>-leader` EndpointSlice, WAIT 1 after every write.
#
#   failover_rto_ms             SIGKILL of the primary's redis-server (3 instances)
#   failover_rto_pod_delete_ms  the primary pod deleted (a hand-over: docs/failover.md)
#   pod_delete_gap_ms           the same runs' client write gap (the longest wait for an ack)
#   pod_delete_phases_ms        where each of those runs' time went (test/bench/phases.sh)
#   failover_rto_partition_ms   the primary pod's network cut (node agent ctl), then restored
#   switchover_pause_ms         redis.io/switchover-to=auto: server side from the controller's
#                               redis_operator_switchover_write_pause_seconds (delta per run),
#                               client side = the writer's longest wait for an ack (gap_ms)
#   time_to_ready_s             creation → Ready for 1, 3 and 5 instances
#   instance_rss_mib            PID 1 of a data pod (instance manager): VmRSS, private memory
#   instance_cpu_s_per_min      idle CPU (user + system) per minute over BENCH_IDLE_WINDOW s
#                               (60): the manager (PID 1) and its redis-server or valkey-server
#   controller_rss_real_mib     the host controller's VmRSS with 0 and N clusters of real
#                               pods (controller_rss_mib at 100 and 1,000 clusters: footprint.sh)
#   acked_writes_lost, split_brain_instants   summed over every run
#
# The environment is the one of test/integration/controller.sh (its helpers are sourced
# through test/bench/operator-lib.sh). Writes $BENCH_OUT/operator.json, then runs
# test/bench/results.sh (merge with peers.json) and adds the operator/peer RTO ratios.
# Environment: BUILD (build), BENCH_OUT ($BUILD/bench), BENCH_RUNS (20), BENCH_SWITCHOVER_RUNS
# (100), BENCH_READY_RUNS (10: time to Ready is the p50 of that many creations), BENCH_CONTROLLER_N ("10 50"), BENCH_PARTS (all: "kill delete partition switchover
# ready rss"), BENCH_RATE (1000).  Exit 1 when a verify failed or a part broke.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
BENCH_OUT=${BENCH_OUT:-$BUILD/bench}
RUNS=${BENCH_RUNS:-20}
SW_RUNS=${BENCH_SWITCHOVER_RUNS:-100}
TTR_RUNS=${BENCH_READY_RUNS:-10}
CTL_N=${BENCH_CONTROLLER_N:-10 50}
IDLE_WINDOW=${BENCH_IDLE_WINDOW:-60}
PARTS=${BENCH_PARTS:-kill delete partition switchover ready rss}
mkdir -p "$BENCH_OUT"
. test/bench/operator-lib.sh
trap op_cleanup EXIT
trap 'exit 130' INT TERM
status=0 total_lost=0 total_split=0 total_acked=0 broken=0
declare -A FIG=()
stats() { "$CHAOS_WRITER" stats "$@"; }
want() { [[ " $PARTS " == *" $1 "* ]]; }
say() { echo "$*" | tee -a "$BENCH_OUT/operator.log"; }
: >"$BENCH_OUT/operator.log"

op_env_up || { echo "operator bench: environment failed"; exit 1; }
say "run $RUN, node $NODE, work dir $W, controller pid $(ctl_pid)"

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
priv_kib() { awk '/^Private_(Dirty|Clean):/ {s += $2} END {print s}' "/proc/$1/smaps_rollup"; }
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
TICK=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
per_min() { awk -v a="$1" -v b="$2" -v t="$TICK" -v s="$IDLE_WINDOW" 'BEGIN {printf "%.3f", (b - a) / t * 60 / s}'; }
CTL_RSS0=$(rss_kib "$(ctl_pid)")

record() { # LIST-NAME
  local lost split acked
  lost=$(field "$VERIFY_LINE" lost); split=$(field "$VERIFY_LINE" split_brain_instants)
  acked=$(field "$VERIFY_LINE" acked)
  [ -n "$lost" ] || { lost=0 split=0 acked=0 broken=$((broken + 1)) status=1; }
  total_lost=$((total_lost + lost)) total_split=$((total_split + split)) total_acked=$((total_acked + acked))
  [ "$lost" = 0 ] && [ "$split" = 0 ] && [ "$VERIFY_RC" = 0 ] || status=1
  FIG[$1]="${FIG[$1]:-} $RUN_RTO"
}

# delete: the old primary's manager log is followed from before the fault (its pod's log
# goes with the pod), for test/bench/phases.sh; PH[phase] collects each run's ms
declare -A PH=()
PHASES="sigterm paused caught_up lease_released failover_recorded promoted endpoints first_ack gap"
trace_start() { # DIR NS POD
  local uid log
  uid=$($K -n "$2" get pod "$3" -o jsonpath='{.metadata.uid}')
  log=$W/na/pods/$uid/logs/$(container_of "$2" "$3").log
  tail -n 0 -F "$log" >"$1/old-primary.log" 2>/dev/null &
  TRACE_PID=$!
}
trace_end() { # DIR NS
  local p v
  kill "$TRACE_PID" 2>/dev/null; wait "$TRACE_PID" 2>/dev/null
  PHASE_LINE=$(bash test/bench/phases.sh "$1" "$2" b "$W/controller-main.log")
  for p in $PHASES; do v=$(field "$PHASE_LINE" "$p"); PH[$p]="${PH[$p]:-} ${v:--1}"; done
}
phases_json() {
  local p out="" sep=""
  for p in $PHASES; do out+="$sep\"$p\": $(stats ${PH[$p]:--1})"; sep=", "; done
  echo "{$out}"
}

# kill | delete | partition: BENCH_RUNS runs each on one 3-instance cluster
fault_series() { # PART KEY FAULT [RESTORE]
  local ns=$RUN-$1 i
  op_cluster "$ns" b 3 || { say "$1: cluster not Ready"; status=1; broken=$((broken + 1)); return; }
  for i in $(seq 1 "$RUNS"); do
    mkdir -p "$W/$1-$i"
    [ "$1" = delete ] && trace_start "$W/$1-$i" "$ns" "$(primary "$ns" b)"
    if op_fault_run "$W/$1-$i" "$ns" b "$3" "${4:-}"; then
      record "$2"
      [ "$1" = delete ] && { trace_end "$W/$1-$i" "$ns"; FIG[${2}_gap]="${FIG[${2}_gap]:-} $RUN_GAP"; }
      say "  $1 run $i: rto_ms=$RUN_RTO gap_ms=$RUN_GAP ready_again_ms=$OP_READY_AGAIN_MS | $VERIFY_LINE${PHASE_LINE:+ | $PHASE_LINE}"
    else
      FIG[$2]="${FIG[$2]:-} -1"; broken=$((broken + 1)); status=1
      [ "$1" = delete ] && trace_end "$W/$1-$i" "$ns"
      say "  $1 run $i: BROKEN ($(cat "$W/$1-$i/why" 2>/dev/null))"
      poll 120 ready "$ns" b
    fi
  done
  $K delete namespace "$ns" --wait=false >/dev/null 2>&1
}
want kill && fault_series kill failover_rto_ms f_server_kill
want delete && fault_series delete failover_rto_pod_delete_ms f_pod_delete
want partition && fault_series partition failover_rto_partition_ms f_net_cut r_net_restore

# switchover: one writer over SW_RUNS switchovers; a fault line per annotation
pause_sum() { curl -s "http://127.0.0.1:$MPORT/metrics" | awk '/^redis_operator_switchover_write_pause_seconds_sum/ {print $2}'; }
pause_count() { curl -s "http://127.0.0.1:$MPORT/metrics" | awk '/^redis_operator_switchover_write_pause_seconds_count/ {print $2}'; }
no_annotation() { [ -z "$(rc "$1" "$2" '{.metadata.annotations.redis\.io/switchover-to}')" ]; }
switched() { [ "$(primary "$1" "$2")" != "$3" ] && no_annotation "$1" "$2" && ready "$1" "$2" &&
  [ "$(leader_ip "$1" "$2")" = "$(pod_ip "$1" "$(primary "$1" "$2")")" ]; }
switchover_series() {
  local ns=$RUN-sw dir=$W/sw i old s0 c0 s1 c1 server=""
  op_cluster "$ns" b 3 || { say "switchover: cluster not Ready"; status=1; return; }
  mkdir -p "$dir"; : >"$dir/fault"
  op_writer_start "$dir" "$ns" b
  poll 30 acked_any "$dir/writer.log" || { op_writer_stop; say "switchover: no acks"; status=1; return; }
  for i in $(seq 1 "$SW_RUNS"); do
    sleep 1
    old=$(primary "$ns" b); s0=$(pause_sum); c0=$(pause_count)
    echo "$EPOCHREALTIME" >>"$dir/fault"
    $K -n "$ns" annotate rediscluster b redis.io/switchover-to=auto --overwrite >/dev/null
    poll 60 switched "$ns" b "$old" || { say "  switchover $i: did not complete"; status=1; broken=$((broken + 1)); continue; }
    s1=$(pause_sum); c1=$(pause_count)
    server+=" $(awk -v a="${s0:-0}" -v b="${s1:-0}" -v c="${c0:-0}" -v d="${c1:-0}" \
      'BEGIN {if (d > c) printf "%.3f", (b - a) * 1000 / (d - c); else print -1}')"
  done
  sleep 1; op_writer_stop
  op_verify "$dir" "$ns" b
  say "  switchover x$SW_RUNS: $VERIFY_LINE"
  record switchover_faults
  SW_SERVER=$(stats $server)
  SW_CLIENT=$(stats $(awk '{print $4}' "$dir/faults.tsv"))
  say "  switchover server pause ms: $SW_SERVER"
  say "  switchover client gap ms: $SW_CLIENT"
  $K delete namespace "$ns" --wait=false >/dev/null 2>&1
}
SW_SERVER='{}' SW_CLIENT='{}'
want switchover && switchover_series

# time to Ready (1, 3, 5 instances) and the instance manager's memory
declare -A TTR=()
if want ready; then
  for n in 1 3 5; do
    all=""
    for i in $(seq 1 "$TTR_RUNS"); do
      # each run in its own namespace; the last one stays (rss measures b-1 of $RUN-r1)
      ns=$RUN-r$n-$i; [ "$i" = "$TTR_RUNS" ] && ns=$RUN-r$n
      if op_cluster "$ns" b "$n"; then all+=" $OP_READY_MS"; else status=1; fi
      [ "$ns" != "$RUN-r$n" ] && $K delete namespace "$ns" --wait=false >/dev/null 2>&1
    done
    TTR[$n]=$(echo $all | tr ' ' '\n' | sort -n | awk '{a[NR] = $1} END {if (NR) printf "%.2f", a[int((NR + 1) / 2)] / 1000; else print "null"}')
    say "  time to Ready, $n instances: p50 ${TTR[$n]} s over $TTR_RUNS runs (ms:$all)"
  done
fi
INST='null' INST_CPU='null'
if want rss; then
  ns=$RUN-r1; [ -n "${TTR[1]:-}" ] || op_cluster "$ns" b 1
  sleep 5 # idle
  uid=$($K -n "$ns" get pod b-1 -o jsonpath='{.metadata.uid}')
  pid1=$(for p in $(cat "$CGROUP/$uid/cgroup.procs"); do [ "$(awk '/^NSpid:/ {print $NF}' /proc/$p/status)" = 1 ] && echo "$p"; done | head -1)
  if [ -n "$pid1" ]; then
    INST="{\"vmrss\": $(mib "$(rss_kib "$pid1")"), \"private\": $(mib "$(priv_kib "$pid1")"), \"comm\": \"$(cat /proc/$pid1/comm)\"}"
    server=$(pgrep -P "$pid1" -f 'redis-server|valkey-server' | head -1)
    m0=$(ticks "$pid1"); s0=$(ticks "${server:-0}")
    sleep "$IDLE_WINDOW"
    srv=null; [ -n "$server" ] && srv=$(per_min "$s0" "$(ticks "$server")")
    INST_CPU="{\"manager\": $(per_min "$m0" "$(ticks "$pid1")"), \"server\": $srv, \"window_s\": $IDLE_WINDOW}"
  fi
  say "  instance manager (PID 1 of b-1, host pid ${pid1:-?}): $INST; idle CPU s/min: $INST_CPU"
fi
for ns in $RUN-r1 $RUN-r3 $RUN-r5; do $K delete namespace "$ns" --wait=false >/dev/null 2>&1; done

# controller RSS with N clusters (1 instance each), measured once all are Ready
CTL="{\"0\": $(mib "$CTL_RSS0")"
if want rss; then
  made=0
  for n in $CTL_N; do
    newns "$RUN-many" 2>/dev/null
    while [ $made -lt "$n" ]; do made=$((made + 1)); mkcluster "$RUN-many" "c$made" 1; done
    all_ready() { local i; for i in $(seq 1 "$made"); do ready "$RUN-many" "c$i" || return 1; done; }
    if poll 600 all_ready; then
      sleep 5; CTL+=", \"$n\": $(mib "$(rss_kib "$(ctl_pid)")")"
    else CTL+=", \"$n\": null"; status=1; fi
    say "  controller RSS with $n clusters: $CTL}"
  done
fi
CTL+="}"

j_ttr() { echo "{\"1\": ${TTR[1]:-null}, \"3\": ${TTR[3]:-null}, \"5\": ${TTR[5]:-null}}"; }
sw_json() {
  local sp50 sp99 cp99 fld
  fld() { sed -n "s/.*\"$2\":\\([-0-9.]*\\).*/\\1/p" <<<"$1"; }
  sp50=$(fld "$SW_SERVER" p50); sp99=$(fld "$SW_SERVER" p99); cp99=$(fld "$SW_CLIENT" p99)
  echo "{\"server_p50\": ${sp50:-null}, \"server_p99\": ${sp99:-null}, \"client_p99\": ${cp99:-null}, \"client_p50\": $(fld "$SW_CLIENT" p50 | grep . || echo null), \"runs\": $SW_RUNS, \"server\": $SW_SERVER, \"client\": $SW_CLIENT}"
}
# shellcheck disable=SC2086
cat >"$BENCH_OUT/operator.json" <<EOF
{
  "failover_rto_ms": $(stats ${FIG[failover_rto_ms]:--1}),
  "failover_rto_pod_delete_ms": $(stats ${FIG[failover_rto_pod_delete_ms]:--1}),
  "pod_delete_gap_ms": $(stats ${FIG[failover_rto_pod_delete_ms_gap]:--1}),
  "pod_delete_phases_ms": $(phases_json),
  "failover_rto_partition_ms": $(stats ${FIG[failover_rto_partition_ms]:--1}),
  "switchover_pause_ms": $(sw_json),
  "time_to_ready_s": $(j_ttr),
  "instance_rss_mib": $INST,
  "instance_cpu_s_per_min": $INST_CPU,
  "controller_rss_real_mib": $CTL,
  "acked_writes_lost": $total_lost,
  "split_brain_instants": $total_split,
  "operator_acked_writes": $total_acked,
  "operator_broken_runs": $broken,
  "operator_bench_runs": {"failover": $RUNS, "switchover": $SW_RUNS, "time_to_ready": $TTR_RUNS}
}
EOF
say "wrote $BENCH_OUT/operator.json"
cat "$BENCH_OUT/operator.json"
CHAOS_WRITER=$CHAOS_WRITER BENCH_OUT=$BENCH_OUT bash test/bench/results.sh || status=1
CHAOS_WRITER=$CHAOS_WRITER bash test/bench/ratios.sh "$BENCH_OUT" || status=1
exit $status
