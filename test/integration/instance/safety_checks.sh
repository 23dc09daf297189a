# Sourced by test/integration/instance.sh: the one-writable-primary promise under faults
# the normal checks never meet (issue 14). Each check injects its fault on real servers:
#   demotion_refused  REPLICAOF refused on the old primary during a switchover (the fault
#                     point REDIS_OPERATOR_FAULTS=switchover-demotion-refused:1, instance/fault.h)
#   fence_maxclients  every client slot taken by a customer when the Lease is lost
#   fence_busy        the server busy in a script when the Lease is lost
#   switchover_slow_api  the old primary's API server slower than its lease client's
#                     timeout during a switchover (its pause used to expire mid-hand-over)
#   handover_stop     the primary's manager SIGTERMed (a pod deletion): with its replicas
#                     caught up it hands over (Lease released before the server's stop);
#                     with one replica's server frozen it does not, and holds the Lease
#                     until its server stopped (instance/handover.h)
# Each asserts what a client sees: no write gets +OK from an instance that lost the
# right to be primary.

server_role() { rcli "$1" ROLE 2>/dev/null | head -1; }
write_refused() { # NAME: a new default-user SET gets no OK within 2 s
  local out
  out=$(timeout 2 redis-cli -p "$(port "$1" 1)" --user default --pass "$DEFPW" \
    --no-auth-warning SET safety:probe 1 2>&1)
  [ "$out" != OK ]
}
take_lease_away() { kretry patch lease "$1-primary" --type=merge -p '{"spec":{"holderIdentity":"intruder"}}'; }
cluster_of() { # CLUSTER INSTANCES LEASE RENEW-DEADLINE RENEW-PERIOD [REDIS-MAP]
  kretry apply -f - <<Y
apiVersion: redis.io/v1
kind: RedisCluster
metadata: {name: $1}
spec:
  instances: $2
  engine: redis
  redis: ${6:-{\}}
  failover: {leaseDuration: $3, renewDeadline: $4, renewPeriod: $5, switchoverTimeout: 5s}
Y
  set_primary "$1" "$1-1" >/dev/null
}
one_primary() { # CLUSTER [REDIS-MAP]: a one-instance cluster, booted
  local c=$1
  cluster_of "$c" 1 4s 2s 500ms "${2:-}"
  mkpod "$c-1" "$c" >/dev/null
  start_mgr "$c-1" "$c"
  poll 20 ready "$c-1" || { st "$c-1"; return 1; }
}
customer() { # NAME FILL: clients.py in the background; waits until it is ready
  rm -f "$W/cust."*
  python3 test/integration/instance/clients.py "$(port "$1" 1)" default "$DEFPW" "$2" \
    "$W/cust.ready" "$W/cust.go" "$W/cust.out" >"$W/cust.log" 2>&1 &
  echo $! >"$W/cust.pid"
  poll 30 test -s "$W/cust.ready"
}
customer_reply() { # waits for clients.py; prints what its SET got
  touch "$W/cust.go"
  poll 15 test -s "$W/cust.out"; cat "$W/cust.out"
}

demotion_refused() { # CLUSTER
  local c=$1 out i
  mkcluster "$c" redis 3 >/dev/null
  set_primary "$c" "$c-1" >/dev/null
  mkpod "$c-1" "$c" >/dev/null
  start_mgr "$c-1" "$c" env REDIS_OPERATOR_FAULTS=switchover-demotion-refused:1
  poll 20 ready "$c-1" || return 1
  for i in 2 3; do mkpod "$c-$i" "$c" >/dev/null; start_mgr "$c-$i" "$c"; done
  poll 20 ready "$c-2" && poll 20 ready "$c-3" || return 1
  out=$(post "$c-1" switchover "{\"pod\":\"$c-2\"}")
  # still a master (the demotion was refused), but fenced: no write is accepted
  write_refused "$c-1" || { echo "the old primary accepted a write; switchover: $out"; return 1; }
  echo "$out" | grep -q '^200 ' && [ "$(echo "${out#* }" | jq -r .demoted)" = false ] ||
    { echo "switchover: $out"; return 1; }
  [ "$(server_role "$c-1")" = master ] && is "$c-1" .fenced true || { st "$c-1"; return 1; }
  poll 5 is "$c-2" .role primary && [ "$(lease_holder "$c")" = "$c-2" ] || return 1
  # the controller's repair: /v1/replicate confirms the server's ROLE before unfencing
  set_primary "$c" "$c-2" >/dev/null
  post_ok "$c-3" replicate "$(addr_body "$c-2")" || return 1
  out=$(post "$c-1" replicate "$(addr_body "$c-2")")
  echo "$out" | grep -q '^200 ' || { echo "replicate: $out"; return 1; }
  [ "$(server_role "$c-1")" = slave ] && is "$c-1" .fenced false || { st "$c-1"; return 1; }
  ucli "$c-1" default "$DEFPW" SET x 1 | grep -q READONLY
}

fence_maxclients() { # CLUSTER
  local c=$1 p=$1-1 pid0 got
  one_primary "$c" '{maxclients: "24"}' || return 1
  pid0=$(server_pid "$p")
  customer "$p" 1 || { cat "$W/cust.log"; return 1; }
  echo "info instance: $(cat "$W/cust.ready" | tr -d '\n') idle customer connections fill every slot" >&3
  take_lease_away "$c" || return 1
  poll 5 is "$p" .fenced true || { st "$p"; return 1; }
  got=$(customer_reply)
  [ "$got" != "+OK" ] || { echo "a write was acknowledged after the lease was lost"; return 1; }
  # the fence held over the reserved connection: the server was not halted
  [ "$(server_pid "$p")" = "$pid0" ] || { echo "the server was halted: $(jst "$p" .fenceReason)"; return 1; }
  write_refused "$p" || { echo "a new connection's write was accepted"; return 1; }
}

fence_busy() { # CLUSTER
  local c=$1 p=$1-1 pid0 got
  one_primary "$c" || return 1
  pid0=$(server_pid "$p")
  customer "$p" 0 || { cat "$W/cust.log"; return 1; }
  # a 3 s busy script (below busy-reply-threshold: other commands wait, none is refused)
  ucli "$p" default "$DEFPW" EVAL "local e = tonumber(redis.call('TIME')[1]) + 3
    while tonumber(redis.call('TIME')[1]) < e do end return 1" 0 >/dev/null 2>&1 &
  sleep 0.2
  touch "$W/cust.go" # its SET now waits behind the script
  take_lease_away "$c" || return 1
  got=$(customer_reply)
  [ "$got" != "+OK" ] || { echo "a write was acknowledged after the lease was lost"; return 1; }
  poll 10 ne "$pid0" server_pid "$p" || { echo "the server was not halted"; st "$p"; return 1; }
  poll 10 is "$p" .server.up true && is "$p" .fenced true && is "$p" .primaryCrashed true ||
    { st "$p"; return 1; }
  write_refused "$p"
}

switchover_slow_api() { # CLUSTER
  local c=$1 relay k="$W/slow-kubeconfig" rp out wp
  alloc_ports "relay-$c"; relay=$(port "relay-$c" 1) # never a port another check took
  sed -E "s#server: .*#server: https://127.0.0.1:$relay#" "$KUBECONFIG_ADMIN" >"$k"
  rm -f "$W/api.delay"
  python3 test/integration/instance/tcpproxy.py "$relay" "$ENV_HOST_IP" "$ENV_API_PORT" \
    "$W/api.delay" &
  rp=$!
  cluster_of "$c" 2 20s 12s 1s # the lease client's timeout is then 6 s
  mkpod "$c-1" "$c" >/dev/null; KCFG=$k start_mgr "$c-1" "$c"
  poll 20 ready "$c-1" || { kill "$rp"; st "$c-1"; return 1; }
  mkpod "$c-2" "$c" >/dev/null; start_mgr "$c-2" "$c"
  poll 20 ready "$c-2" || { kill "$rp"; st "$c-2"; return 1; }
  echo 6.5 >"$W/api.delay" # every request of the old primary's manager now outlasts its timeout
  post "$c-1" switchover "{\"host\":\"127.0.0.1\",\"port\":$(port "$c-2" 1),\"httpPort\":$(port "$c-2" 2),\"timeout\":\"100ms\"}" \
    >"$W/slow.sw" &
  local sp=$!
  sleep 0.5 # a write that waits behind the switchover's pause
  timeout 30 redis-cli -p "$(port "$c-1" 1)" --user default --pass "$DEFPW" --no-auth-warning \
    SET slow:key 1 >"$W/slow.out" 2>&1 &
  wp=$!
  wait "$sp"; wait "$wp"
  kill "$rp" 2>/dev/null; wait "$rp" 2>/dev/null
  out=$(cat "$W/slow.out")
  [ "$out" != OK ] || { echo "the old primary acknowledged a write without the lease; switchover: $(cat "$W/slow.sw")"; return 1; }
  # it could neither release nor take back the lease: the hand-over failed, it stays fenced
  grep -q '^502 ' "$W/slow.sw" || { cat "$W/slow.sw"; return 1; }
  is "$c-1" .fenced true && is "$c-2" .role replica
}

handover_log() { grep "component=handover" "$W/$1/log" | tail -1; }
handover_stop() { # CLUSTER
  local c=$1 d=$1-b rc line frozen t0 i
  # caught up: a hand-over, every write kept
  mkcluster "$c" redis 3 >/dev/null; set_primary "$c" "$c-1" >/dev/null
  mkpod "$c-1" "$c" >/dev/null; start_mgr "$c-1" "$c"; poll 20 ready "$c-1" || return 1
  for i in 2 3; do mkpod "$c-$i" "$c" >/dev/null; start_mgr "$c-$i" "$c"; done
  poll 20 ready "$c-2" && poll 20 ready "$c-3" || return 1
  ucli "$c-1" default "$DEFPW" SET hand:over 1 >/dev/null
  rc=$(stop_mgr "$c-1"); line=$(handover_log "$c-1")
  [ "$rc" = 0 ] && [[ $line == *'msg="handed over"'* ]] && [[ $line == *replicasCaughtUp=2/2* ]] &&
    [[ $line != *leaseReleasedMs=-* ]] || { echo "exit $rc; $line"; return 1; }
  [ -z "$(lease_holder "$c")" ] || { echo "lease held by $(lease_holder "$c")"; return 1; }
  for i in 2 3; do [ "$(ucli "$c-$i" default "$DEFPW" GET hand:over)" = 1 ] || return 1; done
  echo "info instance: hand-over: $line" >&3
  # a replica's server frozen: no hand-over, the Lease held until the server stopped
  mkcluster "$d" redis 2 >/dev/null; set_primary "$d" "$d-1" >/dev/null
  mkpod "$d-1" "$d" >/dev/null; start_mgr "$d-1" "$d"; poll 20 ready "$d-1" || return 1
  mkpod "$d-2" "$d" >/dev/null; start_mgr "$d-2" "$d"; poll 20 ready "$d-2" || return 1
  poll 10 eq 1 eval "ucli $d-1 default $DEFPW WAIT 1 500" || return 1
  frozen=$(server_pid "$d-2"); kill -STOP "$frozen"
  ucli "$d-1" default "$DEFPW" SET not:caught 1 >/dev/null
  t0=$(date +%s%N); kill -TERM "$(mgr_pid "$d-1")"
  sleep 1 # inside the drain's bound (shutdown-timeout 10 s: 2.5 s)
  [ "$(lease_holder "$d")" = "$d-1" ] || { kill -CONT "$frozen"; echo "lease released early: '$(lease_holder "$d")'"; return 1; }
  poll 30 test -s "$W/$d-1/exit"; rc=$(cat "$W/$d-1/exit"); kill -CONT "$frozen"
  line=$(handover_log "$d-1")
  [ "$rc" = 0 ] && [[ $line == *'msg="no hand-over: stopping as before"'* ]] &&
    [[ $line == *replicasCaughtUp=0/1* ]] || { echo "exit $rc; $line"; return 1; }
  poll 5 eq "" lease_holder "$d" || return 1
  echo "info instance: no hand-over (replica frozen): stopped in $((($(date +%s%N) - t0) / 1000000)) ms; $line" >&3
}

safety_suite() {
  check "switchover with REPLICAOF refused on the old primary: it stays fenced, then is repointed" \
    demotion_refused "s$RANDOM"
  check "lease lost with every client slot taken: the reserved connection fences" \
    fence_maxclients "m$RANDOM" 3>&1
  check "lease lost while the server is busy: the fence is not confirmed, the server is halted" \
    fence_busy "y$RANDOM"
  check "switchover with the old primary's API server too slow for its lease: its pause holds" \
    switchover_slow_api "w$RANDOM"
  check "primary's manager SIGTERMed: a hand-over with its replicas caught up, none with one frozen" \
    handover_stop "h$RANDOM" 3>&1
}
