# test/bench/peers-lib.sh: helpers the peer benchmarks (peers.sh) and the short chaos test
# (test/chaos/short.sh) share. Source it; it defines functions and nothing runs.
#
# Every server runs on 127.0.0.1 as a child of the calling script, with its PID recorded
# in $PEER_WORK/pids/<port>; peer_cleanup (install it with `trap peer_cleanup EXIT`) kills
# exactly those PIDs. Nothing is ever killed by name.
#
# Inputs (environment):
#   PEER_WORK       working directory (created; holds configs, logs, writer logs)
#   PEER_ENGINE     redis (default) or valkey: which server/sentinel/cli binaries
#   CHAOS_WRITER    path of the chaos-writer binary
# Every wait is bounded (peer_wait_until); a timeout returns 1 with a message on stderr.

PEER_ENGINE=${PEER_ENGINE:-redis}
case $PEER_ENGINE in
  redis) PEER_SERVER=redis-server PEER_SENTINEL=redis-sentinel PEER_CLI=redis-cli ;;
  valkey) PEER_SERVER=valkey-server PEER_SENTINEL=valkey-sentinel PEER_CLI=valkey-cli ;;
  *) echo "PEER_ENGINE must be redis or valkey" >&2; return 2 ;;
esac
PEER_PASSWORD=${PEER_PASSWORD:-chaos-$$-$RANDOM}
PEER_HOST=127.0.0.1

peer_init() {
  case $PEER_WORK in /*) ;; *) PEER_WORK=$(pwd)/$PEER_WORK ;; esac
  mkdir -p "$PEER_WORK/pids"
  PEER_PWFILE=$PEER_WORK/password
  (umask 077; printf '%s\n' "$PEER_PASSWORD" >"$PEER_PWFILE")
}

# peer_cli PORT ARGS...: a command to a data node (with AUTH).
peer_cli() {
  local port=$1; shift
  REDISCLI_AUTH=$PEER_PASSWORD timeout 5 "$PEER_CLI" -h "$PEER_HOST" -p "$port" "$@" 2>/dev/null
}
# peer_scli PORT ARGS...: a command to a sentinel (no AUTH).
peer_scli() {
  local port=$1; shift
  timeout 5 "$PEER_CLI" -h "$PEER_HOST" -p "$port" "$@" 2>/dev/null
}

# peer_wait_until SECONDS WHAT CMD...: runs CMD every 50 ms until it succeeds.
peer_wait_until() {
  local secs=$1 what=$2 end; shift 2
  end=$(( $(date +%s%N) + secs * 1000000000 ))
  until "$@"; do
    if [ "$(date +%s%N)" -gt "$end" ]; then
      echo "timeout after ${secs}s waiting for: $what" >&2
      return 1
    fi
    sleep 0.05
  done
}

peer_pid() { cat "$PEER_WORK/pids/$1" 2>/dev/null; }

# peer_start_server PORT [DIRECTIVE VALUE]...: starts a data node (directives as flags).
peer_start_server() {
  local port=$1 dir=$PEER_WORK/n$1; shift
  mkdir -p "$dir"
  "$PEER_SERVER" --port "$port" --bind "$PEER_HOST" --dir "$dir" --save '' --appendonly no \
    --requirepass "$PEER_PASSWORD" --masterauth "$PEER_PASSWORD" \
    --repl-diskless-sync yes --repl-diskless-sync-delay 0 --logfile "$dir/log" \
    --daemonize no "$@" >/dev/null 2>&1 &
  echo $! >"$PEER_WORK/pids/$port"
  peer_wait_until 10 "server :$port answers" peer_is_up "$port"
}

peer_is_up() { [ "$(peer_cli "$1" PING)" = PONG ]; }

# peer_start_sentinel PORT MASTER_PORT: a sentinel watching master "m" (quorum 2).
peer_start_sentinel() {
  local port=$1 mport=$2 dir=$PEER_WORK/s$1
  mkdir -p "$dir"
  cat >"$dir/sentinel.conf" <<EOF
port $port
bind $PEER_HOST
dir $dir
logfile $dir/log
sentinel resolve-hostnames no
sentinel monitor m $PEER_HOST $mport 2
sentinel down-after-milliseconds m ${SENTINEL_DOWN_AFTER_MS:-1000}
sentinel failover-timeout m ${SENTINEL_FAILOVER_TIMEOUT_MS:-5000}
sentinel parallel-syncs m 1
sentinel auth-pass m $PEER_PASSWORD
EOF
  chmod 600 "$dir/sentinel.conf"
  "$PEER_SENTINEL" "$dir/sentinel.conf" >/dev/null 2>&1 &
  echo $! >"$PEER_WORK/pids/$port"
  peer_wait_until 10 "sentinel :$port answers" \
    bash -c "[ \"\$(timeout 5 $PEER_CLI -h $PEER_HOST -p $port PING 2>/dev/null)\" = PONG ]"
}

# peer_kill9 PORT: SIGKILL the process serving PORT and reap it.
peer_kill9() {
  local pid; pid=$(peer_pid "$1")
  [ -n "$pid" ] || return 0
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rm -f "$PEER_WORK/pids/$1"
}

peer_cleanup() {
  local f pid
  for f in "$PEER_WORK"/pids/*; do
    [ -e "$f" ] || continue
    pid=$(cat "$f"); kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -f "$f"
  done
}

# peer_role PORT: master / slave / "" (down).
peer_role() { peer_cli "$1" ROLE | head -1; }

# peer_info_field PORT SECTION FIELD
peer_info_field() { peer_cli "$1" INFO "$2" | tr -d '\r' | sed -n "s/^$3://p"; }

# peer_replica_synced PORT: a replica whose link is up and whose offset reached its master's.
peer_replica_synced() {
  local port=$1 mhost mport moff roff
  [ "$(peer_info_field "$port" replication master_link_status)" = up ] || return 1
  mhost=$(peer_info_field "$port" replication master_host)
  mport=$(peer_info_field "$port" replication master_port)
  moff=$(peer_info_field "$mport" replication master_repl_offset)
  roff=$(peer_info_field "$port" replication slave_repl_offset)
  [ -n "$moff" ] && [ -n "$roff" ] && [ "$roff" -ge "$moff" ] && [ "$mhost" = "$PEER_HOST" ]
}

# peer_sentinel_master SENTINEL_PORT: "host:port" of master m as that sentinel sees it.
peer_sentinel_master() { peer_scli "$1" SENTINEL get-master-addr-by-name m | paste -sd: -; }

# peer_log_ms FILE PATTERN: wall ms of the last log line of a server matching PATTERN.
peer_log_ms() {
  local line
  line=$(grep -E "$2" "$1" | tail -1) || return 1
  [ -n "$line" ] || return 1
  date -d "$(awk '{print $2, $3, $4, $5}' <<<"$line")" +%s%3N
}

# peer_field LINE NAME: the value of NAME=value in a summary line.
peer_field() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"$1"; }

# peer_probe_acks PORT NREPLICAS KEY: a SET on PORT then WAIT NREPLICAS 2000 on the same
# connection answers NREPLICAS: every replica streams (a replica fresh from a diskless full
# sync gets no stream until its first REPLCONF ACK, up to a second later, though its offset
# already matches while nothing is written).
peer_probe_acks() {
  local got
  got=$(printf 'SET %s 1\nWAIT %s 2000\n' "$3" "$2" |
    REDISCLI_AUTH=$PEER_PASSWORD timeout 5 "$PEER_CLI" -h "$PEER_HOST" -p "$1" 2>/dev/null | tail -1)
  [ "$got" = "$2" ]
}

# --- chaos-writer ------------------------------------------------------------------------
PEER_RATE=${PEER_RATE:-1000}

# peer_start_writer DIR RESOLVE [ARGS...]: chaos-writer in the background (WRITER_PID),
# logging to DIR/writer.log, with DIR/fault as its fault file.
peer_start_writer() {
  local dir=$1 resolve=$2; shift 2
  "$CHAOS_WRITER" run --resolve "$resolve" --auth-password-file "$PEER_PWFILE" \
    --log "$dir/writer.log" --rate "$PEER_RATE" --fault-file "$dir/fault" "$@" \
    >"$dir/writer.out" 2>"$dir/writer.err" &
  WRITER_PID=$!
}
peer_stop_writer() {
  [ -n "${WRITER_PID:-}" ] || return 0
  kill -TERM "$WRITER_PID" 2>/dev/null; wait "$WRITER_PID" 2>/dev/null; WRITER_PID=
}

# peer_writer_acked_on LOG ADDR: the writer's latest lines hold an acknowledged write on ADDR.
peer_writer_acked_on() {
  tail -n 2 "$1" 2>/dev/null | grep -q "\"server\":\"$2\".*\"result\":\"acked\""
}
# peer_writer_acked_elsewhere LOG ADDR: ... on a server other than ADDR.
peer_writer_acked_elsewhere() {
  tail -n 2 "$1" 2>/dev/null | grep '"result":"acked"' | grep -vq "\"server\":\"$2\""
}

# peer_kill_and_measure DIR RESOLVE OLD_ADDR [WRITER ARGS...]: writes, SIGKILLs the server
# at OLD_ADDR, waits until writes are acknowledged elsewhere, stops the writer.
peer_kill_and_measure() {
  local dir=$1 resolve=$2 old=$3 pid t; shift 3
  : >"$dir/fault"
  peer_start_writer "$dir" "$resolve" "$@"
  peer_wait_until 20 "acks on $old" peer_writer_acked_on "$dir/writer.log" "$old" || return 1
  sleep 0.5 # steady writes before the fault
  # The timestamp is taken just before the signal; the RTO is measured to the end of the
  # longest wait for an acknowledgement after it (chaos_verify.h), so a write that slips
  # through between the two does not count as a recovery.
  pid=$(peer_pid "${old##*:}")
  t=$EPOCHREALTIME; kill -9 "$pid"; echo "$t" >"$dir/fault"
  peer_kill9 "${old##*:}"
  peer_wait_until 60 "acks after the failover" peer_writer_acked_elsewhere "$dir/writer.log" \
    "$old" || return 1
  sleep 0.5 # steady writes after it
  peer_stop_writer
}

# peer_verify DIR PRIMARY REPLICAS [ARGS...]: chaos-writer verify over DIR/writer.log.
# Sets VERIFY_LINE (its summary line, or "verify failed: ..."), VERIFY_RC, and RUN_RTO
# (the first fault's rto_ms from DIR/faults.tsv, -1 when none).
peer_verify() {
  local dir=$1 primary=$2 replicas=$3; shift 3
  VERIFY_LINE=$("$CHAOS_WRITER" verify --logs "$dir/writer.log" --primary "$primary" \
    --replicas "$replicas" --auth-password-file "$PEER_PWFILE" --fault-file "$dir/fault" \
    --report "$dir/report.json" --faults-out "$dir/faults.tsv" "$@" 2>"$dir/verify.err")
  VERIFY_RC=$?
  RUN_RTO=$(awk 'NR==1{print $3}' "$dir/faults.tsv" 2>/dev/null)
  [ -n "$RUN_RTO" ] || RUN_RTO=-1
  [ -n "$VERIFY_LINE" ] || VERIFY_LINE="verify failed: $(head -c 300 "$dir/verify.err")"
}

# --- a Sentinel-managed group: 1 primary + 2 replicas, 3 sentinels ----------------------
# peer_sentinel_layout BASE: data nodes on BASE..BASE+2 (SD), sentinels on BASE+10..+12
# (SS), SLIST = "host:port,..." of the sentinels.
peer_sentinel_layout() {
  SD=($1 $(($1 + 1)) $(($1 + 2))) SS=($(($1 + 10)) $(($1 + 11)) $(($1 + 12)))
  SLIST=$(printf "$PEER_HOST:%s," "${SS[@]}"); SLIST=${SLIST%,}
}

peer_sentinel_field() {
  peer_scli "$1" SENTINEL master m | paste - - | awk -v k="$2" '$1==k{print $2}'
}
peer_sentinel_healthy_replicas() {
  peer_scli "$1" SENTINEL replicas m | paste - - | awk '$1=="flags" && $2=="slave"' | wc -l
}
# All sentinels agree on a master, see it and both replicas healthy and each other; the
# replicas are in sync and stream (a probe write is acknowledged by both).
peer_sentinel_ready() {
  local s m first=""
  for s in "${SS[@]}"; do
    m=$(peer_sentinel_master "$s"); [ -n "$m" ] || return 1
    [ -z "$first" ] && first=$m; [ "$m" = "$first" ] || return 1
    [ "$(peer_sentinel_field "$s" num-other-sentinels)" = 2 ] || return 1
    [ "$(peer_sentinel_healthy_replicas "$s")" = 2 ] || return 1
    [ "$(peer_sentinel_field "$s" flags)" = master ] || return 1
  done
  [ "$(peer_role "${first##*:}")" = master ] || return 1
  for s in "${SD[@]}"; do
    [ "$s" = "${first##*:}" ] || peer_replica_synced "$s" || return 1
  done
  peer_probe_acks "${first##*:}" 2 probe
}

peer_sentinel_setup() {
  local s
  peer_start_server "${SD[0]}" || return 1
  peer_start_server "${SD[1]}" --replicaof "$PEER_HOST" "${SD[0]}" || return 1
  peer_start_server "${SD[2]}" --replicaof "$PEER_HOST" "${SD[0]}" || return 1
  for s in "${SS[@]}"; do peer_start_sentinel "$s" "${SD[0]}" || return 1; done
  peer_wait_until 30 "sentinel group ready" peer_sentinel_ready
}

# peer_sentinel_kill_run DIR: kill the primary under writes, restore the group (the old
# primary restarts as a replica of the new one), verify. Sets KILLED, NEW, and peer_verify's
# variables.
peer_sentinel_kill_run() {
  local dir=$1 reps="" p
  mkdir -p "$dir"
  KILLED=$(peer_sentinel_master "${SS[0]}")
  peer_kill_and_measure "$dir" "sentinel:m@$SLIST" "$KILLED" || return 1
  NEW=$(peer_sentinel_master "${SS[0]}")
  peer_start_server "${KILLED##*:}" --replicaof "${NEW%:*}" "${NEW##*:}" || return 1
  peer_wait_until 60 "sentinel group restored" peer_sentinel_ready || return 1
  NEW=$(peer_sentinel_master "${SS[0]}")
  for p in "${SD[@]}"; do [ "$PEER_HOST:$p" = "$NEW" ] || reps+="$PEER_HOST:$p,"; done
  peer_verify "$dir" "$NEW" "${reps%,}"
}
