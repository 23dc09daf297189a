#!/usr/bin/env bash
# test/bench/peers.sh: what the operator is compared against, measured on this machine with
# the same client (chaos-writer) and the same definitions (test/bench/README.md):
#
#   sentinel  1 primary + 2 replicas + 3 Sentinels (down-after 1000 ms, failover-timeout
#             5000 ms, parallel-syncs 1); SIGKILL the primary while chaos-writer writes
#             through SENTINEL get-master-addr-by-name; RTO = fault → first acked write.
#   cluster   Redis Cluster, 3 masters + 3 replicas (+1 replica on the writer's shard, so
#             WAIT 1 can still be answered after the failover), cluster-node-timeout 1000;
#             SIGKILL the master of slot {w}; the writer follows CLUSTER SLOTS.
#   failover  primary + replica; FAILOVER TO host port TIMEOUT 5000, back and forth; the
#             client-visible pause (longest gap between acks around each FAILOVER) and the
#             server-side one (log: "FAILOVER requested" → target's "MASTER MODE enabled").
#
# Every kill run is followed by `chaos-writer verify` against the final primary and every
# replica (acked writes lost, split-brain instants), and the topology is restored (the
# killed server restarts as a replica) before the next run.
#
# Environment: CHAOS_WRITER (required: the binary), BENCH_OUT (build/bench), BENCH_RUNS (20
# kill runs per scenario), BENCH_FAILOVER_RUNS (100), BENCH_SCENARIOS ("sentinel cluster
# failover"), BENCH_PORT_BASE (16500: uses base..base+40 and the cluster bus ports +10000, all below the
# ephemeral range 32768-60999, where a bus port could be taken by any outgoing connection),
# BENCH_RATE (1000 writes/s), BENCH_CLUSTER_SETTLE (5 s between cluster runs), PEER_ENGINE
# (redis|valkey), BENCH_KEEP=1 keeps the work dir.
# Writes $BENCH_OUT/peers.json; prints a table. Exit 1 if a verify failed or a scenario broke.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${CHAOS_WRITER:?set CHAOS_WRITER to the chaos-writer binary (make bench-peers does)}"
BENCH_OUT=${BENCH_OUT:-build/bench}
RUNS=${BENCH_RUNS:-20}
FO_RUNS=${BENCH_FAILOVER_RUNS:-100}
SCENARIOS=${BENCH_SCENARIOS:-sentinel cluster failover}
BASE=${BENCH_PORT_BASE:-16500}
export PEER_RATE=${BENCH_RATE:-1000}
mkdir -p "$BENCH_OUT"; export PEER_WORK=$(cd "$BENCH_OUT" && pwd)/peers-work
. test/bench/peers-lib.sh

rm -rf "$PEER_WORK"; mkdir -p "$BENCH_OUT"
peer_init
finish() {
  peer_cleanup
  [ "${BENCH_KEEP:-0}" = 1 ] || rm -rf "$PEER_WORK"
}
trap finish EXIT
trap 'exit 130' INT TERM

status=0
total_lost=0 total_split=0 total_acked=0
declare -A RTOS=() LOST=() SPLIT=() BROKEN=()

# record SCENARIO VERIFY_LINE RTO_MS: keep one run's figures.
record() {
  local lost split acked
  lost=$(peer_field "$2" lost); split=$(peer_field "$2" split_brain_instants)
  acked=$(peer_field "$2" acked)
  [ -n "$lost" ] || { lost=0; split=0; acked=0; BROKEN[$1]=$(( ${BROKEN[$1]:-0} + 1 )); status=1; }
  [ "$(peer_field "$2" replica_lost)" = 0 ] || status=1
  RTOS[$1]="${RTOS[$1]:-} $3"
  LOST[$1]=$(( ${LOST[$1]:-0} + lost )); SPLIT[$1]=$(( ${SPLIT[$1]:-0} + split ))
  total_lost=$((total_lost + lost)); total_split=$((total_split + split))
  total_acked=$((total_acked + acked))
  [ "$lost" = 0 ] && [ "$split" = 0 ] || status=1
}

# --- (a) Sentinel (peers-lib.sh holds the group) ----------------------------------------
peer_sentinel_layout "$BASE"
sentinel_setup() { peer_sentinel_setup; }
sentinel_one() {
  peer_sentinel_kill_run "$PEER_WORK/sentinel-$1" || return 1
  printf '  sentinel run %d: killed %s, new primary %s, rto_ms=%s | %s\n' "$1" "$KILLED" "$NEW" \
    "$RUN_RTO" "$VERIFY_LINE"
  record sentinel "$VERIFY_LINE" "$RUN_RTO"
}

# --- (b) Redis Cluster ------------------------------------------------------------------
CP=() ; for k in 0 1 2 3 4 5 6; do CP+=($((BASE + 20 + k))); done

# cluster_master_of PORT: "host:port" of the master serving slot {w}, as PORT sees it.
cluster_master_of() {
  local slot
  slot=$(peer_cli "$1" CLUSTER KEYSLOT '{w}') || return 1
  peer_cli "$1" CLUSTER NODES | awk -v slot="$slot" '
    $3 ~ /master/ && $3 !~ /fail/ {
      for (i = 9; i <= NF; i++) { n = split($i, r, "-"); lo = r[1]; hi = n > 1 ? r[2] : r[1];
        if (slot >= lo && slot <= hi) { split($2, a, "@"); print a[1]; exit } } }'
}
cluster_id_of() { peer_cli "$1" CLUSTER MYID; }
cluster_ok() {
  local p m
  for p in "${CP[@]}"; do
    peer_cli "$p" CLUSTER INFO | grep -q '^cluster_state:ok' || return 1
  done
  m=$(cluster_master_of "${CP[0]}"); [ -n "$m" ] || return 1
  [ "$(peer_info_field "${m##*:}" replication connected_slaves)" = 2 ] || return 1
  for p in $(cluster_replicas_of "$m"); do peer_replica_synced "${p##*:}" || return 1; done
  peer_probe_acks "${m##*:}" 2 '{w}:probe'
}
# cluster_replicas_of ADDR: the replicas ADDR reports (host:port per line).
cluster_replicas_of() {
  peer_cli "${1##*:}" INFO replication | tr -d '\r' |
    sed -n 's/^slave[0-9]*:ip=\([^,]*\),port=\([0-9]*\),.*/\1:\2/p'
}

cluster_start_node() {
  peer_start_server "$1" --cluster-enabled yes --cluster-config-file nodes.conf \
    --cluster-node-timeout "${CLUSTER_NODE_TIMEOUT_MS:-1000}" \
    --cluster-allow-replica-migration no
}

cluster_setup() {
  local p addrs=() m
  for p in "${CP[@]}"; do cluster_start_node "$p" || return 1; done
  for p in "${CP[@]:0:6}"; do addrs+=("$PEER_HOST:$p"); done
  REDISCLI_AUTH=$PEER_PASSWORD "$PEER_CLI" --cluster create "${addrs[@]}" --cluster-replicas 1 \
    --cluster-yes >"$PEER_WORK/cluster-create.log" 2>&1 || return 1
  peer_wait_until 30 "cluster state ok" bash -c "
    for p in ${CP[*]:0:6}; do
      REDISCLI_AUTH=$PEER_PASSWORD $PEER_CLI -h $PEER_HOST -p \$p CLUSTER INFO | grep -q 'cluster_state:ok' || exit 1
    done" || return 1
  m=$(cluster_master_of "${CP[0]}")
  REDISCLI_AUTH=$PEER_PASSWORD "$PEER_CLI" --cluster add-node "$PEER_HOST:${CP[6]}" \
    "$PEER_HOST:${CP[0]}" --cluster-slave --cluster-master-id "$(cluster_id_of "${m##*:}")" \
    >"$PEER_WORK/cluster-add.log" 2>&1 || return 1
  peer_wait_until 60 "cluster ready, shard {w} with 2 replicas" cluster_ok
}

cluster_one() {
  local i=$1 dir=$PEER_WORK/cluster-$1 old new nodes reps
  mkdir -p "$dir"
  old=$(cluster_master_of "${CP[0]}")
  nodes=$(printf "$PEER_HOST:%s," "${CP[@]}")
  peer_kill_and_measure "$dir" "cluster:${nodes%,}" "$old" --prefix '{w}' || return 1
  cluster_start_node "${old##*:}" || return 1
  peer_wait_until 60 "cluster restored" cluster_ok || return 1
  # A replica does not start a new election within 4 x cluster-node-timeout (at least 4 s)
  # of its previous attempt; back-to-back kills would measure that timer (and let a replica
  # that lost the last election sit out while a lagging one wins). Settle first.
  sleep "${BENCH_CLUSTER_SETTLE:-5}"
  new=$(cluster_master_of "${CP[0]}"); [ "$new" = "$old" ] && new=$(cluster_master_of "${CP[1]}")
  reps=$(cluster_replicas_of "$new" | paste -sd, -)
  peer_verify "$dir" "$new" "$reps"
  printf '  cluster run %d: killed %s, new master %s, rto_ms=%s | %s\n' "$i" "$old" "$new" \
    "$RUN_RTO" "$VERIFY_LINE"
  record cluster "$VERIFY_LINE" "$RUN_RTO"
}

# --- (c) FAILOVER command ---------------------------------------------------------------
FP=($((BASE + 30)) $((BASE + 31)))
FO_CLIENT="" FO_SERVER=""

failover_setup() {
  peer_start_server "${FP[0]}" || return 1
  peer_start_server "${FP[1]}" --replicaof "$PEER_HOST" "${FP[0]}" || return 1
  peer_wait_until 30 "replica in sync" peer_replica_synced "${FP[1]}"
}

failover_swapped() { # NEW OLD
  [ "$(peer_role "$1")" = master ] && [ "$(peer_role "$2")" = slave ] &&
    peer_replica_synced "$2" && peer_writer_acked_on "$3" "$PEER_HOST:$1"
}

failover_all() {
  local dir=$PEER_WORK/failover i p r s0 s1 line
  mkdir -p "$dir"; : >"$dir/fault"; : >"$dir/server.txt"
  peer_start_writer "$dir" "role:$PEER_HOST:${FP[0]},$PEER_HOST:${FP[1]}"
  peer_wait_until 20 "first acks" peer_writer_acked_on "$dir/writer.log" "$PEER_HOST:${FP[0]}" ||
    return 1
  for ((i = 0; i < FO_RUNS; i++)); do
    if [ "$(peer_role "${FP[0]}")" = master ]; then p=${FP[0]} r=${FP[1]}; else p=${FP[1]} r=${FP[0]}; fi
    sleep 0.2 # steady writes between switchovers
    echo "$EPOCHREALTIME" >>"$dir/fault"
    [ "$(peer_cli "$p" FAILOVER TO "$PEER_HOST" "$r" TIMEOUT 5000)" = OK ] || return 1
    peer_wait_until 30 "FAILOVER $i done" failover_swapped "$r" "$p" "$dir/writer.log" || return 1
    s0=$(peer_log_ms "$PEER_WORK/n$p/log" 'FAILOVER requested') &&
      s1=$(peer_log_ms "$PEER_WORK/n$r/log" '(MASTER|PRIMARY) MODE enabled') &&
      echo $((s1 - s0)) >>"$dir/server.txt"
  done
  sleep 0.2
  peer_stop_writer
  p=${FP[0]} r=${FP[1]}; [ "$(peer_role "$p")" = master ] || { p=${FP[1]} r=${FP[0]}; }
  peer_verify "$dir" "$PEER_HOST:$p" "$PEER_HOST:$r"
  printf '  failover x%d | %s\n' "$FO_RUNS" "$VERIFY_LINE"
  record failover "$VERIFY_LINE" -1
  FO_CLIENT=$(awk '{print $4}' "$dir/faults.tsv" | "$CHAOS_WRITER" stats)
  FO_SERVER=$("$CHAOS_WRITER" stats <"$dir/server.txt")
}

# --- run ----------------------------------------------------------------------------------
for sc in $SCENARIOS; do
  echo "== $sc ($PEER_ENGINE, $("$PEER_SERVER" --version | sed 's/.*v=\([^ ]*\).*/\1/'))"
  case $sc in
    sentinel|cluster)
      if ! "${sc}_setup"; then echo "  $sc: setup failed"; BROKEN[$sc]=1; status=1; peer_cleanup; continue; fi
      for ((n = 1; n <= RUNS; n++)); do
        "${sc}_one" "$n" || { echo "  $sc run $n broke"; BROKEN[$sc]=$(( ${BROKEN[$sc]:-0} + 1 )); status=1; peer_stop_writer; break; }
      done ;;
    failover)
      failover_setup && failover_all || { echo "  failover broke"; BROKEN[$sc]=1; status=1; peer_stop_writer; } ;;
    *) echo "unknown scenario $sc"; status=1 ;;
  esac
  peer_cleanup
done

stats_of() { # SCENARIO → stats JSON of its RTOs
  # shellcheck disable=SC2086
  [ -n "${RTOS[$1]:-}" ] && "$CHAOS_WRITER" stats ${RTOS[$1]} || echo '{"runs":0,"failed":0}'
}
SENT=$(stats_of sentinel) CLUS=$(stats_of cluster)
[ -n "$FO_CLIENT" ] || FO_CLIENT='{"runs":0,"failed":0}'
[ -n "$FO_SERVER" ] || FO_SERVER='{"runs":0,"failed":0}'
jget() { sed -n "s/.*\"$2\": *\([-0-9.e]*\).*/\1/p" <<<"$1"; }

echo
printf '%-34s %5s %9s %9s %9s %9s %6s %6s\n' "peer ($PEER_ENGINE)" runs p50_ms p95_ms p99_ms max_ms lost split
row() { printf '%-34s %5s %9s %9s %9s %9s %6s %6s\n' "$1" "$(jget "$2" runs)" "$(jget "$2" p50)" \
  "$(jget "$2" p95)" "$(jget "$2" p99)" "$(jget "$2" max)" "$3" "$4"; }
row "Sentinel failover RTO" "$SENT" "${LOST[sentinel]:-0}" "${SPLIT[sentinel]:-0}"
row "Cluster failover RTO" "$CLUS" "${LOST[cluster]:-0}" "${SPLIT[cluster]:-0}"
row "FAILOVER cmd pause, client" "$FO_CLIENT" "${LOST[failover]:-0}" "${SPLIT[failover]:-0}"
row "FAILOVER cmd pause, server log" "$FO_SERVER" - -

cat >"$BENCH_OUT/peers.json" <<EOF
{
  "peer_engine": "$PEER_ENGINE $("$PEER_SERVER" --version | sed 's/.*v=\([^ ]*\).*/\1/')",
  "sentinel_rto_ms": $SENT,
  "cluster_rto_ms": $CLUS,
  "failover_cmd_pause_ms": $FO_CLIENT,
  "failover_cmd_server_pause_ms": $FO_SERVER,
  "peer_acked_writes_lost": $total_lost,
  "peer_split_brain_instants": $total_split,
  "peer_acked_writes": $total_acked,
  "peer_broken_runs": $(( ${BROKEN[sentinel]:-0} + ${BROKEN[cluster]:-0} + ${BROKEN[failover]:-0} ))
}
EOF
echo "wrote $BENCH_OUT/peers.json"
exit $status
