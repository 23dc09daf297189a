# Sourced by test/integration/instance.sh: the sentinel role (instance --role sentinel,
# docs/sentinel.md) against real redis-sentinel/valkey-sentinel and real data managers.
# In the default run; INSTANCE_ONLY=sentinel runs only this; SENTINEL_ENGINES picks the
# engines (default: INSTANCE_ENGINES, else redis and valkey). The data managers find the
# sentinel managers through their Pod objects (mksenpod: docs/sentinel.md).
#   sentinel_failover  1 primary + 2 replicas (data managers) + 3 sentinel managers:
#                      SENTINEL get-master-addr-by-name answers the primary; its server
#                      SIGKILLed → the sentinels agree on a promoted replica, the managers'
#                      /v1/status shows it; the old primary takes no write meanwhile and
#                      comes back a replica of the new master; every data manager's
#                      /v1/status shows the role Sentinel gave; /v1/promote is 409.
#                      Prints the failover time.
#   sentinel_old_primary_returns  the master's manager and server SIGKILLed (a deleted
#                      pod): Sentinel fails over, the restarted manager comes back a
#                      replica with 0 writes acknowledged, a WAIT-1 write is kept.
#   sentinel_quorum_lost  2 of 3 sentinels SIGSTOPped: the primary fences, no write;
#                      SIGCONT: it follows the sentinels again.
#   sentinel_master_restart  the master's manager SIGTERMed and restarted: it follows
#                      the sentinels (primary again, or a replica), a WAIT-1 write kept.
#   sentinel_safe_switchover  POST /v1/switchover to the master's data manager under
#                      a writer on every data pod: writes paused, replicas caught up,
#                      SENTINEL FAILOVER; the master moves, 0 acknowledged writes lost;
#                      prints the pause.
#   sentinel_ops       POST /v1/sentinel/failover to a sentinel manager: 200 "started",
#                      a reset right after it 409 (failover in progress), the sentinels
#                      move the master and the data managers follow; the ops are 404 on
#                      a data manager and the data ops 404 on a sentinel manager.
#   sentinel_ops_https a sentinel manager restarted with http-tls material and
#                      REDIS_OPERATOR_HTTP_TLS=required: HTTPS only; a reset without a
#                      client certificate 401, with a stranger's 401, with the client's 200.

sen_cmd() { # NAME CLUSTER: a sentinel manager (its sentinel on the pod's first port)
  echo "$(mgr_cmd "$1" "$2") --role sentinel --sentinel-port $(port "$1" 1)"
}
mksenpod() { # NAME CLUSTER: the Pod object the data managers find the sentinel by
  kretry apply -f - <<Y
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {redis.io/cluster: $2, redis.io/role: sentinel}}
spec:
  automountServiceAccountToken: false
  schedulingGates: [{name: redis.io/integration-test}]
  containers:
  - name: sentinel
    image: none
    ports: [{name: sentinel, containerPort: $(port "$1" 1)}]
Y
  kretry patch pod "$1" --subresource=status --type=merge \
    -p '{"status":{"podIP":"127.0.0.1","podIPs":[{"ip":"127.0.0.1"}]}}'
}
start_sentinel() { # NAME CLUSTER
  local n=$1 c=$2
  alloc_ports "$n"
  mksenpod "$n" "$c" >/dev/null
  secrets "$n"
  rm -f "$W/$n/pid" "$W/$n/exit"
  # shellcheck disable=SC2046
  ( $(sen_cmd "$n" "$c") >>"$W/$n/log" 2>&1 & echo $! >"$W/$n/pid"; wait $!
    echo $? >"$W/$n/exit" ) >/dev/null 2>&1 &
  poll 5 test -s "$W/$n/pid"
}
scli() { # NAME ARGS…: the sentinel, authenticated with its requirepass
  local n=$1; shift
  redis-cli -p "$(port "$n" 1)" -a "$DEFPW" --no-auth-warning "$@"
}
sen_master_port() { scli "$1" SENTINEL get-master-addr-by-name mymaster | sed -n 2p; }
all_sentinels_say() { # CLUSTER PORT
  local i
  for i in 1 2 3; do [ "$(sen_master_port "$1-s$i")" = "$2" ] || return 1; done
}
all_status_say() { # CLUSTER PORT: every sentinel manager's /v1/status names PORT, status ok
  local i
  for i in 1 2 3; do
    is "$1-s$i" .sentinel.masterPort "$2" && is "$1-s$i" .sentinel.masterStatus ok || return 1
  done
}
sentinels_settled() { # CLUSTER: each sees 3 sentinels, 2 replicas, quorum reachable
  local i
  for i in 1 2 3; do
    is "$1-s$i" .ready true && is "$1-s$i" .sentinel.sentinels 3 &&
      is "$1-s$i" .sentinel.replicas 2 || return 1
  done
}
old_is_replica_of() { # NAME PORT: the server's own ROLE
  local r; r=$(rcli "$1" ROLE 2>/dev/null | tr '\n' ' ')
  case "$r" in slave\ 127.0.0.1\ "$2"\ connected*) return 0 ;; esac
  return 1
}

status_follows() { # CLUSTER PORT: each data manager's /v1/status shows the role Sentinel gave
  local i n
  for i in 1 2 3; do
    n="$1-$i"
    if [ "$(port "$n" 1)" = "$2" ]; then
      is "$n" .role primary && is "$n" .state primary && is "$n" .leaseHeld true &&
        is "$n" .fenced false || return 1
    else
      is "$n" .role replica && is "$n" .leaseHeld false && is "$n" .fenced false || return 1
    fi
  done
}
pod_of_port() { # CLUSTER PORT
  local i
  for i in 1 2 3; do [ "$(port "$1-$i" 1)" = "$2" ] && echo "$1-$i"; done
}
writes_acked() { # PORT TRIES WHILE…: SET attempts on PORT while WHILE… succeeds; prints acks
  local p=$1 n=$2 acked=0 out k; shift 2
  for k in $(seq 1 "$n"); do
    "$@" || break
    out=$(timeout 1 redis-cli -p "$p" --user default --pass "$DEFPW" --no-auth-warning \
      SET "w:$p:$k:$RANDOM" 1 2>&1)
    [ "$out" = OK ] && acked=$((acked + 1))
    sleep 0.05
  done
  echo "$acked"
}
# Sentinel may elect once more right after a failover (a sentinel that was just
# restarted, downAfter 1 s on a loaded machine): these follow whatever master the
# sentinels name now.
now_master() { sen_master_port "$1-s1"; }
follows_now() { old_is_replica_of "$1" "$(now_master "$2")"; } # NAME CLUSTER
not_following_now() { ! follows_now "$@"; }
status_follows_now() { status_follows "$1" "$(now_master "$1")"; }
sentinels_moved() { # CLUSTER OLDPORT: the 3 sentinels agree on another master
  local p; p=$(sen_master_port "$1-s1")
  [ -n "$p" ] && [ "$p" != "$2" ] && all_sentinels_say "$1" "$p"
}

sentinel_cluster() { # CLUSTER ENGINE
  kretry apply -f - <<Y
apiVersion: redis.io/v1
kind: RedisCluster
metadata: {name: $1}
spec:
  mode: sentinel
  instances: 3
  engine: $2
  failover: {leaseDuration: 4s, renewDeadline: 2s, renewPeriod: 500ms, switchoverTimeout: 5s}
  sentinel: {count: 3, quorum: 2, downAfter: 1s, failoverTimeout: 10s, parallelSyncs: 1}
Y
}

sentinel_failover() { # CLUSTER ENGINE
  local c=$1 eng=$2 i p1 newp t0 t1 acked=0 tries=0 out
  sentinel_cluster "$c" "$eng" >/dev/null
  set_primary "$c" "$c-1" >/dev/null
  # the primary first: an empty primary parks while other pods exist (role.h rule 3b)
  for i in 1 2 3; do
    mkpod "$c-$i" "$c" >/dev/null; start_mgr "$c-$i" "$c"
    poll 30 ready "$c-$i" || { echo "$c-$i not ready: $(st "$c-$i")"; return 1; }
  done
  for i in 1 2 3; do start_sentinel "$c-s$i" "$c"; done
  p1=$(port "$c-1" 1)
  poll 30 all_sentinels_say "$c" "$p1" || { echo "sentinels: $(st "$c-s1")"; return 1; }
  poll 30 sentinels_settled "$c" || { echo "not settled: $(st "$c-s1")"; return 1; }
  echo "info instance: $eng: sentinel status $(st "$c-s1" | jq -c '.sentinel')" >>"$W/sentinel.info"
  grep -q '^sentinel myid' "$W/$c-s1/data/sentinel.conf" || { echo "sentinel.conf not rewritten"; return 1; }
  [ "$(stat -c %a "$W/$c-s1/data/sentinel.conf")" = 600 ] || { echo "sentinel.conf not 0600"; return 1; }
  ucli "$c-1" default "$DEFPW" SET before-kill 1 | grep -q OK || return 1
  t0=$(date +%s%N)
  kill -KILL "$(server_pid "$c-1")"
  # writes to the old primary until the sentinels agree on another master and the old
  # one follows it: none may be acknowledged
  newp=
  while [ "$tries" -lt 600 ]; do
    tries=$((tries + 1))
    out=$(timeout 1 redis-cli -p "$p1" --user default --pass "$DEFPW" --no-auth-warning \
      SET "after-kill:$tries" 1 2>&1)
    [ "$out" = OK ] && acked=$((acked + 1))
    if [ -z "$newp" ]; then
      i=$(sen_master_port "$c-s1")
      if [ -n "$i" ] && [ "$i" != "$p1" ] && all_sentinels_say "$c" "$i"; then
        newp=$i; t1=$(date +%s%N)
      fi
    elif follows_now "$c-1" "$c"; then
      break
    fi
    sleep 0.05
  done
  [ -n "$newp" ] || { echo "no failover: $(st "$c-s1")"; return 1; }
  echo "info instance: $eng: sentinel failover (SIGKILL → 3 sentinels agree): $(((t1 - t0) / 1000000)) ms; $tries write attempts on the old primary, $acked acknowledged" >>"$W/sentinel.info"
  [ "$acked" = 0 ] || { echo "$acked writes acknowledged by the old primary"; return 1; }
  follows_now "$c-1" "$c" || { echo "old primary not a replica of $(now_master "$c"): $(rcli "$c-1" ROLE | tr '\n' ' ')"; return 1; }
  newp=$(now_master "$c") # Sentinel may have elected once more (now_master)
  poll 20 all_status_say "$c" "$newp" || { echo "status: $(st "$c-s2")"; return 1; }
  poll 20 status_follows_now "$c" || {
    for i in 1 2 3; do echo "$c-$i: $(st "$c-$i" | jq -c '{role,state,leaseHeld,fenced,reason}')"; done
    return 1; }
  out=$(post "$(pod_of_port "$c" "$newp")" promote '{}')
  case "$out" in 409*) ;; *) echo "promote in sentinel mode: $out"; return 1 ;; esac
  is "$c-s1" .sentinel.configEpoch 1 || ne 0 jst "$c-s1" .sentinel.configEpoch || return 1
  out=$(redis-cli -p "$newp" --user default --pass "$DEFPW" --no-auth-warning GET before-kill)
  [ "$out" = 1 ] || { echo "new master lost before-kill: '$out'"; return 1; }
}

# The current master's manager and server are SIGKILLed (a deleted pod), Sentinel fails
# over, and the manager starts again: it comes back a replica of the new master (never
# writable), and an acknowledged write on the new master is kept.
sentinel_old_primary_returns() { # CLUSTER
  local c=$1 oldp newp old acked n out i
  oldp=$(sen_master_port "$c-s1"); old=$(pod_of_port "$c" "$oldp")
  [ -n "$old" ] || { echo "no pod serves the master port $oldp"; return 1; }
  out=$(printf 'SET kept 1\nWAIT 1 2000\n' |
    redis-cli -p "$oldp" --user default --pass "$DEFPW" --no-auth-warning | tr '\n' ' ')
  case "$out" in "OK 1 "|"OK 2 ") ;; *) echo "SET + WAIT 1 on the master answered '$out'"; return 1 ;; esac
  kill -KILL "$(mgr_pid "$old")" "$(server_pid "$old")" 2>/dev/null
  poll 60 sentinels_moved "$c" "$oldp" || { echo "no failover: $(st "$c-s1" | jq -c .sentinel)"; return 1; }
  newp=$(sen_master_port "$c-s1")
  start_mgr "$old" "$c"
  acked=$(writes_acked "$oldp" 400 not_following_now "$old" "$c")
  echo "info instance: $(jst "$old" .engine): restarted old primary: $acked writes acknowledged before it followed $(now_master "$c") (first new master $newp)" >>"$W/sentinel.info"
  [ "$acked" = 0 ] || { echo "$acked writes acknowledged by the returning old primary"; return 1; }
  poll 30 follows_now "$old" "$c" || { echo "not a replica: $(st "$old" | jq -c .)"; return 1; }
  poll 20 status_follows_now "$c" || {
    for i in 1 2 3; do echo "$c-$i: $(st "$c-$i" | jq -c '{role,state,leaseHeld,fenced,reason}')"; done
    return 1; }
  newp=$(now_master "$c")
  n=$(redis-cli -p "$newp" --user default --pass "$DEFPW" --no-auth-warning GET kept)
  [ "$n" = 1 ] || { echo "the new master lost an acknowledged write: '$n'"; return 1; }
}

# Sentinel quorum lost: 2 of 3 sentinels frozen (SIGSTOP). The primary, no longer named
# by a majority, fences itself within downAfter/2 (+ a round) and takes no write; once
# they run again it follows them: unfenced as primary, or demoted if they chose another.
sentinel_quorum_lost() { # CLUSTER
  local c=$1 mp m p2 p3 t0 t1 out i
  mp=$(now_master "$c"); m=$(pod_of_port "$c" "$mp")
  p2=$(jst "$c-s2" .server.pid); p3=$(jst "$c-s3" .server.pid)
  t0=$(date +%s%N)
  kill -STOP "$p2" "$p3"
  poll 50 is "$m" .fenced true || { kill -CONT "$p2" "$p3"; echo "not fenced: $(st "$m" | jq -c '{fenced,reason}')"; return 1; }
  t1=$(date +%s%N)
  out=$(timeout 2 redis-cli -p "$mp" --user default --pass "$DEFPW" --no-auth-warning SET q 1 2>&1)
  kill -CONT "$p2" "$p3"
  echo "info instance: $(jst "$m" .engine): sentinel quorum lost → primary fenced after $(((t1 - t0) / 1000000)) ms" >>"$W/sentinel.info"
  [ "$out" != OK ] || { echo "a write was acknowledged while fenced"; return 1; }
  poll 100 status_follows_now "$c" || {
    for i in 1 2 3; do echo "$c-$i: $(st "$c-$i" | jq -c '{role,state,leaseHeld,fenced,reason}')"; done
    return 1; }
  echo "info instance: $(jst "$m" .engine): after the quorum came back the master is $(now_master "$c") (was $mp)" >>"$W/sentinel.info"
  out=$(redis-cli -p "$(now_master "$c")" --user default --pass "$DEFPW" --no-auth-warning SET q 2)
  [ "$out" = OK ] || { echo "the master takes no write after the quorum came back: $out"; return 1; }
}

# The master's manager stopped cleanly (SIGTERM: a pod deletion) and started again at
# once: it boots from the sentinels' answer (role.h S1/S3), primary again if they still
# name it, else a replica of the one they chose; a WAIT-1 write survives either way.
sentinel_master_restart() { # CLUSTER
  local c=$1 mp m out i
  mp=$(now_master "$c"); m=$(pod_of_port "$c" "$mp")
  out=$(printf 'SET restart-kept 1\nWAIT 1 2000\n' |
    redis-cli -p "$mp" --user default --pass "$DEFPW" --no-auth-warning | tr '\n' ' ')
  case "$out" in "OK 1 "|"OK 2 ") ;; *) echo "SET + WAIT 1 answered '$out'"; return 1 ;; esac
  [ "$(stop_mgr "$m")" = 0 ] || { echo "$m did not stop cleanly"; return 1; }
  start_mgr "$m" "$c"
  poll 60 status_follows_now "$c" || {
    for i in 1 2 3; do echo "$c-$i: $(st "$c-$i" | jq -c '{role,state,leaseHeld,fenced,reason}')"; done
    return 1; }
  echo "info instance: $(jst "$m" .engine): master's manager restarted: $(jst "$m" .reason)" >>"$W/sentinel.info"
  out=$(redis-cli -p "$(now_master "$c")" --user default --pass "$DEFPW" --no-auth-warning GET restart-kept)
  [ "$out" = 1 ] || { echo "lost a WAIT-1 write: '$out'"; return 1; }
}

sentinel_restart_keeps_state() { # CLUSTER: a crashed sentinel comes back with its conf
  local c=$1 pid newp
  newp=$(sen_master_port "$c-s2")
  pid=$(jst "$c-s2" .server.pid)
  kill -KILL "$pid"
  poll 20 ne "$pid" jst "$c-s2" .server.pid || return 1
  poll 20 eq "$newp" sen_master_port "$c-s2" || return 1
  poll 20 is "$c-s2" .server.restarts 1 || return 1
  poll 30 is "$c-s2" .ready true
}

# The safe planned switchover (docs/sentinel.md "Planned switchover") under a writer that
# counts every +OK as acknowledged: none may be lost.
sentinel_safe_switchover() { # CLUSTER
  local c=$1 mp m other out wp wrc i
  poll 60 sentinels_settled "$c" || { echo "not settled: $(st "$c-s1" | jq -c .sentinel)"; return 1; }
  mp=$(now_master "$c"); m=$(pod_of_port "$c" "$mp")
  for i in 1 2 3; do [ "$c-$i" != "$m" ] && other=$c-$i; done
  out=$(post "$other" switchover "{\"pod\":\"$m\"}")
  [ "${out%% *}" = 409 ] || { echo "switchover at a replica: $out"; return 1; }
  "$WRITER" 8 default "$DEFPW" "127.0.0.1:$(port "$c-1" 1)" "127.0.0.1:$(port "$c-2" 1)" \
    "127.0.0.1:$(port "$c-3" 1)" >"$W/$c.swriter" 2>&1 & wp=$!
  sleep 2
  out=$(post "$m" switchover "{\"pod\":\"$other\"}")
  case "$out" in '200 {"offset":'*'"result":"started"}') ;; *) kill "$wp"; echo "switchover: $out"; return 1 ;; esac
  poll 60 sentinels_moved "$c" "$mp" || { wait "$wp"; echo "no move: $(st "$c-s1" | jq -c .sentinel)"; return 1; }
  wait "$wp"; wrc=$?
  # the request named $other: Sentinel was steered to it (instance/sentinel_steer.h)
  [ "$(now_master "$c")" = "$(port "$other" 1)" ] || { echo "steered to $other ($(port "$other" 1)), Sentinel chose $(now_master "$c")"; return 1; }
  echo "info instance: $(jst "$m" .engine): planned switchover $mp → $(now_master "$c") (named: $other): $(echo "${out#* }" | jq -c '{pausedMs,pauseBoundMs}') (writes paused until the replicas caught up); writer: $(cat "$W/$c.swriter")" >>"$W/sentinel.info"
  [ "$wrc" = 0 ] || { echo "writer: $(cat "$W/$c.swriter")"; return 1; }
  poll 60 status_follows_now "$c" || {
    for i in 1 2 3; do echo "$c-$i: $(st "$c-$i" | jq -c '{role,state,leaseHeld,fenced,reason}')"; done
    return 1; }
}

# A planned move through one sentinel manager (what the controller sends), and a reset
# refused while that failover runs.
sentinel_ops() { # CLUSTER
  local c=$1 mp out t0 t1 i
  poll 60 sentinels_settled "$c" || { echo "not settled: $(st "$c-s1" | jq -c .sentinel)"; return 1; }
  mp=$(now_master "$c")
  out=$(post "$c-1" sentinel/failover '{}'); [ "${out%% *}" = 404 ] || { echo "data manager: $out"; return 1; }
  out=$(post "$c-s1" fence '{}'); [ "${out%% *}" = 404 ] || { echo "sentinel manager fence: $out"; return 1; }
  out=$(post "$c-s1" sentinel/failover '{"pod":"x"}')
  [ "${out%% *}" = 400 ] || { echo "a body with a field: $out"; return 1; }
  t0=$(date +%s%N)
  out=$(post "$c-s1" sentinel/failover '{}')
  [ "$out" = '200 {"result":"started"}' ] || { echo "failover: $out"; return 1; }
  out=$(post "$c-s1" sentinel/reset)
  case "$out" in "409 "*"failover is in progress"*) ;; *) echo "reset during the failover: $out"; return 1 ;; esac
  poll 60 sentinels_moved "$c" "$mp" || { echo "no move: $(st "$c-s1" | jq -c .sentinel)"; return 1; }
  t1=$(date +%s%N)
  echo "info instance: $(jst "$c-s1" .engine): SENTINEL FAILOVER through the manager: master $mp → $(now_master "$c") in $(((t1 - t0) / 1000000)) ms; reset during it: ${out%% *}" >>"$W/sentinel.info"
  poll 60 status_follows_now "$c" || {
    for i in 1 2 3; do echo "$c-$i: $(st "$c-$i" | jq -c '{role,state,leaseHeld,fenced,reason}')"; done
    return 1; }
  poll 60 is "$c-s1" .sentinel.failoverInProgress false || return 1
  out=$(post "$c-s1" sentinel/reset '{}')
  [ "$out" = '200 {"result":"reset"}' ] || { echo "reset after the failover: $out"; return 1; }
}

# The sentinel manager's API behind the data role's TLS code (http.c): restarted with the
# material, it serves HTTPS only and its ops need the operator's client certificate.
sentinel_ops_https() { # CLUSTER
  local c=$1 n=$1-s3 d out
  [ -f "$W/pki-h/client.crt" ] || make_pki "$W/pki-h" || return 1
  [ "$(stop_mgr "$n")" = 0 ] || { echo "$n did not stop cleanly"; return 1; }
  d=$W/$n/http-tls; mkdir -p "$d"
  cp "$W/pki-h/tls.crt" "$W/pki-h/tls.key" "$W/pki-h/ca.crt" "$d/" || return 1
  rm -f "$W/$n/pid" "$W/$n/exit"
  # shellcheck disable=SC2046
  ( env REDIS_OPERATOR_HTTP_TLS=required $(sen_cmd "$n" "$c") >>"$W/$n/log" 2>&1 &
    echo $! >"$W/$n/pid"; wait $!; echo $? >"$W/$n/exit" ) >/dev/null 2>&1 &
  poll 5 test -s "$W/$n/pid" || return 1
  poll 60 eq 200 tls_code "$n" GET /readyz || { cat "$W/tls.out"; tail -3 "$W/$n/log"; return 1; }
  [ "$(hcode "$n" GET /healthz)" = 000 ] || { echo "plain HTTP answered"; return 1; }
  [ "$(tls_code "$n" POST /v1/sentinel/reset)" = 401 ] || { cat "$W/tls.out"; return 1; }
  [ "$(tls_code "$n" POST /v1/sentinel/reset evil)" = 401 ] || { cat "$W/tls.out"; return 1; }
  out=$(tls_code "$n" POST /v1/sentinel/reset client)
  [ "$out $(cat "$W/tls.out")" = '200 {"result":"reset"}' ] || { echo "$out $(cat "$W/tls.out")"; return 1; }
  [ "$(tls_field "$n" .role)" = sentinel ] || { cat "$W/tls.out"; return 1; }
}

sentinel_suite() {
  local eng c
  for eng in ${SENTINEL_ENGINES:-${INSTANCE_ENGINES:-redis valkey}}; do
    command -v "$eng-sentinel" >/dev/null || { echo "skip sentinel: $eng-sentinel not installed"; continue; }
    c="sn${eng:0:1}$RANDOM"
    check "$eng: sentinel managers: SIGKILLed primary → Sentinel promotes, sentinels and /v1/status agree, 0 writes acknowledged by the old primary" \
      sentinel_failover "$c" "$eng"
    check "$eng: a SIGKILLed sentinel is restarted by its manager and keeps Sentinel's view" \
      sentinel_restart_keeps_state "$c"
    check "$eng: the old primary's pod killed → Sentinel fails over; it comes back a replica, 0 writes acknowledged, WAIT-1 write kept" \
      sentinel_old_primary_returns "$c"
    check "$eng: sentinel quorum lost → the primary fences itself, no write; quorum back → it follows the sentinels again" \
      sentinel_quorum_lost "$c"
    check "$eng: the master's manager stopped (SIGTERM) and restarted → it follows the sentinels, WAIT-1 write kept" \
      sentinel_master_restart "$c"
    check "$eng: planned switchover at the master's manager under a writer: writes paused, replicas caught up, SENTINEL FAILOVER; 0 acknowledged writes lost" \
      sentinel_safe_switchover "$c"
    check "$eng: POST /v1/sentinel/failover moves the master, the managers follow; a reset during it 409, after it 200; ops 404 on the other role" \
      sentinel_ops "$c"
    check "$eng: the sentinel manager with http-tls material: HTTPS only, a reset needs the operator's client certificate (401 without, 200 with)" \
      sentinel_ops_https "$c"
  done
  [ -f "$W/sentinel.info" ] && cat "$W/sentinel.info"
}
