# Sourced by test/integration/instance.sh: the checks. Each function returns 0 on
# success and prints what went wrong otherwise. $c is a cluster name, pods are $c-N.

lease_holder() { kctl get lease "$1-primary" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
info_field() { rcli "$1" INFO "$2" | tr -d '\r' | sed -n "s/^$3://p"; }
addr_body() { echo "{\"host\":\"127.0.0.1\",\"port\":$(port "$1" 1)}"; }

copy_binary() {
  local rb="$W/rpath" d="$W/copied"
  mkdir -p "$rb"
  # the Makefile's objects and libraries with its DT_RPATH $ORIGIN/lib, whatever LDFLAGS
  # this run passed (an ASan build replaces the Makefile's)
  # shellcheck disable=SC2046
  cc ${LDFLAGS:-} -pie -Wl,-z,relro,-z,now -Wl,--disable-new-dtags,-rpath,'$ORIGIN/lib' -o "$rb/redis-operator" \
    $(make -s --no-print-directory BUILD="$BUILD" print-link) || return 1
  env -u LD_LIBRARY_PATH "$rb/redis-operator" copy-binary "$d" || return 1
  [ -x "$d/redis-operator" ] && ls "$d/lib" | grep -q libmicrohttpd || return 1
  env -u LD_LIBRARY_PATH "$d/redis-operator" version | grep -q '^redis-operator ' || return 1
  # every non-glibc library resolves from DIR/lib
  local bad; bad=$(env -u LD_LIBRARY_PATH ldd "$d/redis-operator" | grep '=>' |
    grep -vE "=> $d/lib/|lib(c|m|pthread|dl|rt|resolv)\.so|ld-linux" || true)
  [ -z "$bad" ] || { echo "resolved outside DIR/lib: $bad"; return 1; }
  ls "$d/lib" | grep -qE '^lib(c|m)\.so' && { echo "glibc was copied"; return 1; }
  echo "$(ls "$d/lib" | wc -l) libraries copied"
}

boot_waits_api_down() {
  local c="w$RANDOM" k="$W/dead-kubeconfig"
  sed -E 's#server: .*#server: https://127.0.0.1:1#' "$KUBECONFIG_ADMIN" >"$k"
  alloc_ports "$c-1"
  KCFG=$k start_mgr "$c-1" "$c"
  poll 10 is "$c-1" .reason "API server unreachable" || { st "$c-1"; return 1; }
  is "$c-1" .state booting && is "$c-1" .server.pid null || return 1
  [ "$(stop_mgr "$c-1")" = 0 ]
}

# --- replication scenarios, per engine ---------------------------------------------

boot_primary() {
  poll 20 ready "$1" || { st "$1"; return 1; }
  is "$1" .state primary && is "$1" .leaseHeld true && is "$1" .role primary || return 1
  [ "$(lease_holder "${1%-*}")" = "$1" ] || { echo "lease holder: $(lease_holder "${1%-*}")"; return 1; }
}

boot_replica() { # PRIMARY REPLICA…
  local p=$1 r; shift
  for r in "$@"; do poll 20 ready "$r" || { st "$r"; return 1; }; done
  rcli "$p" SET boot:key hello >/dev/null
  for r in "$@"; do
    is "$r" .state replica || return 1
    poll 5 eq hello rcli "$r" GET boot:key || return 1
  done
  rcli "$p" SET replica:write x >/dev/null
  ucli "$1" default "$DEFPW" SET x 1 | grep -q READONLY
}

switchover_writes() { # CLUSTER FROM TO OTHER
  local c=$1 from=$2 to=$3 other=$4 out pause
  "$WRITER" 3 default "$DEFPW" "127.0.0.1:$(port "$from" 1)" "127.0.0.1:$(port "$to" 1)" \
    "127.0.0.1:$(port "$other" 1)" >"$W/writer.out" 2>&1 &
  local wp=$!
  sleep 1
  out=$(post "$from" switchover "{\"pod\":\"$to\"}")
  wait $wp; local wrc=$?
  echo "$out" | grep -q '^200 ' || { echo "$out"; return 1; }
  pause=$(echo "${out#* }" | jq -r .writePauseMs)
  echo "info instance: $c switchover write pause ${pause} ms; writer: $(cat "$W/writer.out")" >&3
  [ $wrc -eq 0 ] || { cat "$W/writer.out"; return 1; }
  set_primary "$c" "$to"
  poll 10 is "$to" .role primary && is "$to" .leaseHeld true || return 1
  poll 10 is "$from" .state replica || return 1
  poll 10 is "$from" .replication.link up || return 1
  [ "$(lease_holder "$c")" = "$to" ]
}

replicate_partial() { # REPLICA NEWPRIMARY
  local r=$1 p=$2 before after
  before=$(info_field "$p" stats sync_partial_ok)
  post_ok "$r" replicate "$(addr_body "$p")" || return 1
  poll 10 is "$r" .replication.masterPort "$(port "$p" 1)" || return 1
  poll 10 is "$r" .replication.link up || return 1
  after=$(info_field "$p" stats sync_partial_ok)
  [ "$after" -gt "$before" ] || { echo "sync_partial_ok $before -> $after"; return 1; }
  grep -q "partial resynchronization\|Successful partial" "$W/$r/log"
}

fence_promote() { # CLUSTER PRIMARY NEWPRIMARY OTHER
  local c=$1 p=$2 n=$3 o=$4 out
  post_ok "$p" fence '{"reason":"test"}' || return 1
  is "$p" .fenced true || return 1
  # writes are refused (they block behind the pause; the client times out)
  out=$(timeout 2 redis-cli -p "$(port "$p" 1)" --user default --pass "$DEFPW" \
    --no-auth-warning SET fenced:key 1 2>&1) && [ "$out" = OK ] && { echo "write accepted"; return 1; }
  poll 5 eq "" lease_holder "$c" || { echo "holder $(lease_holder "$c")"; return 1; }
  post_ok "$n" promote || { post "$n" promote; return 1; }
  set_primary "$c" "$n"
  post_ok "$p" replicate "$(addr_body "$n")" || return 1
  post_ok "$o" replicate "$(addr_body "$n")" || return 1
  poll 10 ready "$p" && poll 10 ready "$o" && is "$p" .fenced false || return 1
  rcli "$n" SET after:promote 1 >/dev/null
  poll 5 eq 1 rcli "$p" GET after:promote
}

engine_suite() { # ENGINE CLUSTER
  local e=$1 c=$2 i
  mkcluster "$c" "$e" 3 >/dev/null
  set_primary "$c" "$c-1" >/dev/null
  # as the controller does: the primary's pod first, the replicas once it runs
  mkpod "$c-1" "$c" >/dev/null
  start_mgr "$c-1" "$c"
  check "$e: boots as primary (currentPrimary + lease acquired)" boot_primary "$c-1"
  for i in 2 3; do mkpod "$c-$i" "$c" >/dev/null; start_mgr "$c-$i" "$c"; done
  check "$e: boots as replica and syncs; replicas refuse writes" boot_replica "$c-1" "$c-2" "$c-3"
  check "$e: switchover under continuous writes loses no acknowledged write" \
    switchover_writes "$c" "$c-1" "$c-2" "$c-3" 3>&1
  check "$e: replicate to the new primary with a partial resync" replicate_partial "$c-3" "$c-2"
  check "$e: fence refuses writes and releases the lease; promote; others follow" \
    fence_promote "$c" "$c-2" "$c-3" "$c-1"
}

# --- the rest, on one engine -------------------------------------------------------

lease_loss() { # CLUSTER PRIMARY
  local c=$1 p=$2 t0 t1 out
  t0=$(date +%s%N)
  kretry patch lease "$c-primary" --type=merge -p '{"spec":{"holderIdentity":"intruder"}}' || return 1
  poll 5 is "$p" .fenced true || { st "$p"; return 1; }
  t1=$(date +%s%N)
  echo "info instance: lease taken away -> fenced in $(( (t1 - t0) / 1000000 )) ms (renewDeadline 2s)" >&3
  [ $(( (t1 - t0) / 1000000 )) -le 3000 ] || return 1
  out=$(timeout 2 redis-cli -p "$(port "$p" 1)" --user default --pass "$DEFPW" \
    --no-auth-warning SET lost:key 1 2>&1) && [ "$out" = OK ] && { echo "write accepted"; return 1; }
  is "$p" .leaseHeld false && is "$p" .ready false || return 1
  # unfence needs the lease: refused while the intruder holds it
  post "$p" unfence | grep -q '^409 ' || return 1
  kretry delete lease "$c-primary" || return 1
  post_ok "$p" unfence || { post "$p" unfence; return 1; }
  rcli "$p" SET after:unfence 1 | grep -q OK && is "$p" .leaseHeld true
}

crash_primary() { # CLUSTER PRIMARY REPLICA
  local c=$1 p=$2 r=$3 old new
  old=$(server_pid "$p")
  kill -KILL "$old" || return 1
  poll 10 is "$p" .primaryCrashed true || { st "$p"; return 1; }
  poll 10 ne "$old" server_pid "$p" || return 1
  poll 10 is "$p" .server.up true || return 1
  is "$p" .fenced true && is "$p" .state parked || { st "$p"; return 1; }
  rcli "$p" ROLE | head -1 | grep -q slave || return 1
  ucli "$p" default "$DEFPW" SET crashed 1 | grep -q READONLY || return 1
  poll 5 eq "" lease_holder "$c" || return 1
  new=$(server_pid "$p")
  # recovery, as the controller would: promote the replica, the old primary follows
  post_ok "$r" promote && set_primary "$c" "$r" >/dev/null || return 1
  post_ok "$p" replicate "$(addr_body "$r")" || return 1
  poll 10 ready "$p" && is "$p" .fenced false && [ "$(server_pid "$p")" = "$new" ]
}

replica_restart() { # REPLICA PRIMARY
  local r=$1 p=$2 old
  old=$(server_pid "$r")
  kill -KILL "$old" || return 1
  poll 15 ne "$old" server_pid "$r" || return 1
  poll 15 ready "$r" || { st "$r"; return 1; }
  is "$r" .state replica && is "$r" .replication.masterPort "$(port "$p" 1)" &&
    is "$r" .server.restarts 1
}

live_config() { # REPLICA
  local r=$1 pid out
  pid=$(server_pid "$r")
  out=$(post "$r" config '{"redis":{"maxclients":"1234","hz":"20"},"maxMemory":"64Mi","maxMemoryPolicy":"allkeys-lru"}')
  echo "$out" | grep -q '^200 ' && [ "$(echo "${out#* }" | jq -c .restartRequired)" = '[]' ] || { echo "$out"; return 1; }
  [ "$(rcli "$r" CONFIG GET maxclients | tail -1)" = 1234 ] || return 1
  [ "$(rcli "$r" CONFIG GET maxmemory | tail -1)" = 67108864 ] || return 1
  [ "$(rcli "$r" CONFIG GET maxmemory-policy | tail -1)" = allkeys-lru ] || return 1
  [ "$(server_pid "$r")" = "$pid" ] || return 1
  grep -q '^maxclients 1234' "$W/$r/data/redis.conf" || { echo "not persisted"; return 1; }
  out=$(post "$r" config '{"redis":{"maxclients":"1234","hz":"20","databases":"32"},"maxMemory":"64Mi"}')
  [ "$(echo "${out#* }" | jq -c .restartRequired)" = '["databases"]' ] || { echo "$out"; return 1; }
  post_ok "$r" restart || return 1
  [ "$(server_pid "$r")" != "$pid" ] && [ "$(rcli "$r" CONFIG GET databases | tail -1)" = 32 ]
}

users_acl() { # PRIMARY REPLICA
  local p=$1 r=$2 n
  for n in "$p" "$r"; do
    mkdir -p "$W/$n/users/app" && printf 'app-pw' >"$W/$n/users/app/one"
    post_ok "$n" config '{"users":[{"name":"app","rules":["~app:*","+@all"]}]}' || { post "$n" config '{}'; return 1; }
  done
  # the password file reaches the server with the next secret poll
  poll 10 eq OK ucli "$p" app app-pw SET app:1 x || return 1
  ucli "$p" app app-pw SET other 1 | grep -q NOPERM || return 1
  ucli "$p" app app-pw CLIENT KILL TYPE normal | grep -q NOPERM || return 1
  ucli "$p" app app-pw CONFIG SET maxclients 1 | grep -q NOPERM || return 1
  ucli "$p" default "$DEFPW" ACL SETUSER redis-operator off | grep -q NOPERM || return 1
  ucli "$p" default "$DEFPW" CLIENT KILL USER redis-operator | grep -q NOPERM || return 1
  ucli "$p" default "$DEFPW" REPLICAOF NO ONE | grep -q NOPERM
}

old_refused() { ucli "$1" default "$2" PING 2>&1 | grep -q WRONGPASS; }

password_rotation() { # PRIMARY REPLICA…
  local p=$1 n full slaves; shift
  # the baseline is taken once every replica is linked: live_config restarted one, which
  # may still be connecting or in its full sync (a later sync_full would read as ours)
  poll 20 eq "$#" info_field "$p" replication connected_slaves || { echo "replicas not all connected"; return 1; }
  for n in "$@"; do poll 20 is "$n" .replication.link up || { echo "$n: link not up before"; return 1; }; done
  full=$(info_field "$p" stats sync_full)
  slaves=$(info_field "$p" replication connected_slaves)
  for n in "$p" "$@"; do
    printf 'default-pw-2' >"$W/$n/auth/password"; printf 'operator-pw-2' >"$W/$n/opauth/password"
  done
  for n in "$p" "$@"; do
    poll 10 eq PONG ucli "$n" default default-pw-2 PING || { echo "$n: new default pw"; return 1; }
    [ "$(ucli "$n" default "$DEFPW" PING)" = PONG ] || { echo "$n: old pw dropped too early"; return 1; }
    poll 10 eq PONG ucli "$n" redis-operator operator-pw-2 PING || { echo "$n: new operator pw"; return 1; }
  done
  OPPW=operator-pw-2
  for n in "$@"; do is "$n" .replication.link up || { echo "$n: link down after adding"; st "$n"; return 1; }; done
  for n in "$p" "$@"; do
    post_ok "$n" config '{"users":[{"name":"app","rules":["~app:*","+@all"]}],"dropOldPasswords":true}' ||
      { echo "$n: config: $(cat "$W/post.out")"; return 1; }
  done
  for n in "$p" "$@"; do
    poll 5 old_refused "$n" "$DEFPW" || { echo "$n: old pw still valid"; rcli "$n" ACL LIST; return 1; }
    [ "$(ucli "$n" default default-pw-2 PING)" = PONG ] || { echo "$n: new pw refused after drop"; return 1; }
  done
  DEFPW=default-pw-2
  for n in "$@"; do is "$n" .replication.link up || { echo "$n: link down after dropping"; st "$n"; return 1; }; done
  local full2 slaves2
  full2=$(info_field "$p" stats sync_full); slaves2=$(info_field "$p" replication connected_slaves)
  [ "$full2" = "$full" ] && [ "$slaves2" = "$slaves" ] ||
    { echo "replication re-synced: sync_full $full -> $full2, connected_slaves $slaves -> $slaves2"; return 1; }
  # a replica reconnecting now authenticates with the new operator password
  rcli "$1" CLIENT KILL TYPE replica >/dev/null
  poll 10 is "$2" .replication.link up || { echo "$2: no reconnect with the new operator pw"; st "$2"; return 1; }
}

bad_inputs() { # PRIMARY REPLICA
  local p=$1 r=$2 big line rc
  big=$(head -c 70000 /dev/zero | tr '\0' ' ')
  while IFS='|' read -r who method path body want; do
    [ -n "$who" ] || continue
    local n=$p; [ "$who" = r ] && n=$r
    [ "$body" = BIG ] && body="{$big}"
    [ "$body" = SELF ] && body=$(addr_body "$n")
    rc=$(curl -s -o "$W/bad.out" -w '%{http_code}' -X "$method" --max-time 10 \
      "http://127.0.0.1:$(port "$n" 2)$path" ${body:+--data-binary "$body"})
    [ "$rc" = "$want" ] || { echo "$method $path $body: got $rc want $want: $(cat "$W/bad.out")"; return 1; }
    if [ "$want" != 200 ]; then jq -e .error "$W/bad.out" >/dev/null || { echo "no JSON error: $path"; return 1; }; fi
  done <<'T'
p|GET|/nope||404
p|GET|/v1|   |404
p|POST|/healthz||405
p|GET|/v1/fence||405
p|DELETE|/v1/status||405
p|PUT|/v1/promote|{}|405
p|POST|/v1/replicate|{"host":"x"}|400
p|POST|/v1/replicate|not json|400
p|POST|/v1/replicate|{"host":"x","port":99999}|400
p|POST|/v1/replicate|SELF|400
p|POST|/v1/config|{"redis":{"port":"1"}}|400
p|POST|/v1/config|{"redis":{"maxclients":"1\n2"}}|400
p|POST|/v1/config|{"users":[{"name":"default"}]}|400
p|POST|/v1/config|{"nope":1}|400
p|POST|/v1/switchover|{}|400
p|POST|/v1/switchover|{"pod":"no-such-pod"}|503
p|POST|/v1/fence|{"zzz":1}|400
p|POST|/v1/promote|[1]|400
p|POST|/v1/restart|{"x":1}|400
p|POST|/v1/fence|BIG|413
p|POST|/v1/unfence|{}|200
p|POST|/v1/promote|{}|200
r|POST|/v1/switchover|{"pod":"x"}|409
T
}

metrics_has() { curl -s "http://127.0.0.1:$(port "$1" 3)/metrics" | grep -qF "$2"; }

metrics_check() { # PRIMARY
  local m
  poll 5 metrics_has "$1" 'redis_db_keys{db="db0"}' || return 1
  m=$(curl -s "http://127.0.0.1:$(port "$1" 3)/metrics")
  for want in 'redis_up 1' 'redis_connected_slaves 2' 'redis_operator_instance_fenced 0' \
    'redis_operator_instance_lease_held 1' 'redis_db_keys{db="db0"}' 'redis_commands_processed_total ' \
    'redis_connected_slave_offset_bytes{slave_ip="127.0.0.1"' 'redis_operator_instance_server_restarts_total 0'; do
    grep -qF "$want" <<<"$m" || { echo "missing: $want"; return 1; }
  done
  curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$(port "$1" 3)/nope" | grep -q 404
}

sigterm_replica() { # REPLICA
  local r=$1 spid t0 rc
  spid=$(server_pid "$r")
  t0=$(date +%s)
  rc=$(stop_mgr "$r")
  [ "$rc" = 0 ] || { echo "exit code $rc"; return 1; }
  [ $(( $(date +%s) - t0 )) -le 10 ] || return 1
  ! kill -0 "$spid" 2>/dev/null
}

sigterm_primary() { # CLUSTER PRIMARY
  local c=$1 p=$2 rc
  rc=$(stop_mgr "$p")
  [ "$rc" = 0 ] || { echo "exit code $rc"; return 1; }
  poll 5 eq "" lease_holder "$c"
}

common_suite() { # CLUSTER
  local c=$1 i
  mkcluster "$c" redis 3 >/dev/null
  set_primary "$c" "$c-1" >/dev/null
  mkpod "$c-1" "$c" >/dev/null; start_mgr "$c-1" "$c"; poll 20 ready "$c-1"
  for i in 2 3; do mkpod "$c-$i" "$c" >/dev/null; start_mgr "$c-$i" "$c"; done
  check "redis: three instances up" boot_replica "$c-1" "$c-2" "$c-3"
  check "metrics: redis_exporter names plus the manager's own series" metrics_check "$c-1"
  check "every endpoint answers bad input with a JSON error and the right status" \
    bad_inputs "$c-1" "$c-2"
  check "live config change without restart; static change reported, applied by restart" \
    live_config "$c-2"
  check "users: customer ACLs cannot touch the operator user" users_acl "$c-1" "$c-2"
  check "password rotation: old and new valid, replication stays up, then old dropped" \
    password_rotation "$c-1" "$c-2" "$c-3"
  DEFPW=default-pw-2 OPPW=operator-pw-2 # the check ran in a subshell
  check "replica's server killed: restarted as replica of the same primary" \
    replica_restart "$c-3" "$c-1"
  check "lease taken away: self-fence within the renew deadline, no write accepted" \
    lease_loss "$c" "$c-1" 3>&1
  check "API server cut off: self-fence by the renew deadline, no write accepted" \
    lease_deadline "d$RANDOM" 3>&1
  check "API server cut off, primaryIsolation.apiServerTimeout 1s: self-fence by it" \
    lease_deadline "i$RANDOM" 1s 2500 3>&1
  check "primary's server killed: not restarted writable; fenced, lease released, parked" \
    crash_primary "$c" "$c-1" "$c-2"
  check "a replica whose primary has no address starts parked, then follows it" \
    parked_follows "f$RANDOM"
  check "old primary's manager restarted mid-failover: parks, never takes the lease back" \
    failover_away "o$RANDOM"
  check "a replica that kept reading the Lease takes a lapsed one at the first ask" \
    lease_observed "l$RANDOM" 3>&1
  check "server TLS certificate renewed in its directory: reloaded live, same server pid" \
    tls_reload "t$RANDOM"
  check "HTTPS API: client certificate required for mutations; peer promote over HTTPS" \
    http_tls "t$RANDOM"
  check "SIGTERM on a replica's manager: clean exit within the deadline" sigterm_replica "$c-3"
  check "SIGTERM on the primary's manager: clean exit, lease released" sigterm_primary "$c" "$c-2"
}

# no zombie and no sleep left among PID's children
no_orphans() { ! ps -o stat=,comm= --ppid "$1" | grep -qE '^Z|sleep'; }

pid1_reaping() { # CLUSTER
  local c=$1 u mpid zombies
  mkcluster "$c" redis 1 >/dev/null; set_primary "$c" "$c-1" >/dev/null; mkpod "$c-1" "$c" >/dev/null
  start_mgr "$c-1" "$c" unshare --pid --fork --mount-proc --kill-child || return 1
  u=$(mgr_pid "$c-1")
  # unshare's child appears (and may be replaced by its exec) a moment after unshare:
  # wait for a child that is PID 1 of the new namespace.
  pid1_child() { mpid=$(pgrep -P "$u" | head -1); [ -n "$mpid" ] && grep -qE "^NSpid:.*[[:space:]]1$" "/proc/$mpid/status" 2>/dev/null; }
  poll 10 pid1_child || { echo "no child of $u is PID 1 of a new PID namespace"; return 1; }
  poll 20 ready "$c-1" || return 1
  # an orphan inside the namespace is reparented to the manager, which must reap it
  nsenter -t "$mpid" -p -m sh -c 'sleep 0.3 & sleep 0.6 & exit 0' || return 1
  poll 3 no_orphans "$mpid" || { ps -o pid,stat,comm --ppid "$mpid"; return 1; }
  kill -TERM "$mpid"
  poll 15 test -s "$W/$c-1/exit" || return 1
  [ "$(cat "$W/$c-1/exit")" = 0 ] || { echo "exit $(cat "$W/$c-1/exit")"; return 1; }
}

bench_suite() { # CLUSTER
  local c=$1 i out pauses="$W/pauses" lat
  mkcluster "$c" redis 2 >/dev/null; set_primary "$c" "$c-1" >/dev/null
  mkpod "$c-1" "$c" >/dev/null; start_mgr "$c-1" "$c"; poll 20 ready "$c-1"
  mkpod "$c-2" "$c" >/dev/null; start_mgr "$c-2" "$c"
  poll 20 ready "$c-1" && poll 20 ready "$c-2" ||
    { check_fail "bench cluster not ready: $c-1 $(st "$c-1" | head -c 600); $c-2 $(st "$c-2" | head -c 600)"; return; }
  sleep 2
  echo "info instance: idle RSS of the manager: $(grep VmRSS "/proc/$(mgr_pid "$c-1")/status" | awk '{print $2, $3}')"
  lat=$(python3 - "$(port "$c-1" 2)" <<'PY'
import http.client, sys, time
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
t = []
for _ in range(1000):
    s = time.perf_counter(); c.request("GET", "/v1/status"); r = c.getresponse(); r.read()
    t.append((time.perf_counter() - s) * 1000)
t.sort()
print("p50 %.3f ms, p99 %.3f ms" % (t[500], t[990]))
PY
)
  echo "info instance: /v1/status latency over 1000 sequential requests: $lat"
  : >"$pauses"
  local from=$c-1 to=$c-2
  for i in $(seq 50); do
    out=$(post "$from" switchover "{\"pod\":\"$to\"}")
    echo "${out#* }" | jq -r '.writePauseMs // empty' >>"$pauses"
    poll 10 is "$from" .replication.link up
    local t=$from; from=$to; to=$t
  done
  echo "info instance: switchover write pause over $(wc -l <"$pauses") runs: $(sort -n "$pauses" |
    awk '{a[NR]=$1} END {printf "p50 %.2f ms, p99 %.2f ms, max %.2f ms", a[int(NR*0.5)+1], a[int(NR*0.99)+(NR*0.99>int(NR*0.99))], a[NR]}')"
  check "50 switchovers in a row all succeeded" test "$(wc -l <"$pauses")" = 50
}

make_pki() { # DIR: a CA, a serving cert for 127.0.0.1, a client cert, and a stranger
  local d=$1
  mkdir -p "$d" && (
    cd "$d" || exit 1
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=ca
    openssl req -newkey rsa:2048 -nodes -keyout tls.key -out tls.csr -subj /CN=127.0.0.1
    printf 'subjectAltName=IP:127.0.0.1\n' >ext
    openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out tls.crt -days 2 -extfile ext
    openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj /CN=controller
    openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt -days 2
    openssl req -x509 -newkey rsa:2048 -nodes -keyout evil.key -out evil.crt -days 2 -subj /CN=evil
  ) >/dev/null 2>&1
}

https_code() { # NAME METHOD PATH [CERT]
  local pki=$W/pki
  curl -s -o "$W/https.out" -w '%{http_code}' --max-time 30 --cacert "$pki/ca.crt" \
    ${4:+--cert "$pki/$4.crt" --key "$pki/$4.key"} -X "$2" "https://127.0.0.1:$(port "$1" 2)$3"
}

http_tls() { # CLUSTER
  local c=$1 n
  make_pki "$W/pki" || return 1
  mkcluster "$c" redis 2 >/dev/null; set_primary "$c" "$c-1" >/dev/null
  for n in 1 2; do
    mkpod "$c-$n" "$c" >/dev/null; secrets "$c-$n"
    mkdir -p "$W/$c-$n/http-tls" && cp "$W/pki/tls.crt" "$W/pki/tls.key" "$W/pki/ca.crt" "$W/$c-$n/http-tls/"
    start_mgr "$c-$n" "$c"
    poll 20 eq 200 https_code "$c-$n" GET /readyz || { cat "$W/https.out"; return 1; }
  done
  [ "$(https_code "$c-1" GET /v1/status)" = 200 ] || return 1
  [ "$(https_code "$c-1" POST /v1/unfence)" = 401 ] || return 1
  [ "$(https_code "$c-1" POST /v1/unfence evil)" = 401 ] || return 1
  [ "$(https_code "$c-1" POST /v1/unfence client)" = 200 ] || return 1
  curl -s --max-time 3 "http://127.0.0.1:$(port "$c-1" 2)/readyz" && { echo "plain HTTP answered"; return 1; }
  # the manager calls its peer's /v1/promote over HTTPS with its own certificate
  [ "$(https_code "$c-1" POST "/v1/switchover" client)" = 400 ] || return 1
  curl -s -o "$W/https.out" -w '%{http_code}' --max-time 30 --cacert "$W/pki/ca.crt" \
    --cert "$W/pki/client.crt" --key "$W/pki/client.key" -X POST \
    "https://127.0.0.1:$(port "$c-1" 2)/v1/switchover" -d "{\"pod\":\"$c-2\"}" | grep -q 200 ||
    { cat "$W/https.out"; return 1; }
  poll 10 https_role "$c-2" primary
}
https_role() { https_code "$1" GET /v1/status >/dev/null && [ "$(jq -r .role "$W/https.out")" = "$2" ]; }

# The API server becomes unreachable (a relay in front of it is killed): the primary
# must fence itself by the renew deadline, from its own clock, with no help. With
# APISERVERTIMEOUT the cluster gets spec.primaryIsolation.apiServerTimeout and a renew
# deadline of 4s (lease 6s): the fence must come within BOUND ms of the cut, which the 4s
# deadline could not (the last renewal was sent at most renewPeriod 500ms before it).
lease_deadline() { # CLUSTER [APISERVERTIMEOUT BOUND]
  local c=$1 relay k="$W/relay-kubeconfig-$1" rp t0 t1 ms out
  alloc_ports "relay-$c"; relay=$(port "relay-$c" 1)
  sed -E "s#server: .*#server: https://127.0.0.1:$relay#" "$KUBECONFIG_ADMIN" >"$k"
  python3 test/integration/instance/tcpproxy.py "$relay" "$ENV_HOST_IP" "$ENV_API_PORT" &
  rp=$!
  mkcluster "$c" redis 1 >/dev/null; set_primary "$c" "$c-1" >/dev/null; mkpod "$c-1" "$c" >/dev/null
  [ -z "${2:-}" ] || kretry patch rediscluster "$c" --type=merge \
    -p "{\"spec\":{\"failover\":{\"leaseDuration\":\"6s\",\"renewDeadline\":\"4s\"},\"primaryIsolation\":{\"apiServerTimeout\":\"$2\"}}}" >/dev/null
  KCFG=$k start_mgr "$c-1" "$c"
  poll 20 ready "$c-1" || { kill "$rp"; st "$c-1"; return 1; }
  sleep 1
  kill -KILL "$rp"; wait "$rp" 2>/dev/null
  t0=$(date +%s%N)
  poll 5 is "$c-1" .fenced true || { st "$c-1"; return 1; }
  t1=$(date +%s%N); ms=$(( (t1 - t0) / 1000000 ))
  echo "info instance: API server cut off -> fenced after $ms ms (renewPeriod 500ms, renewDeadline ${2:+4s, primaryIsolation.apiServerTimeout }${2:-2s})" >&3
  [ "$ms" -le "${3:-2300}" ] || return 1
  out=$(timeout 2 redis-cli -p "$(port "$c-1" 1)" --user default --pass "$DEFPW" \
    --no-auth-warning SET cut:key 1 2>&1) && [ "$out" = OK ] && { echo "write accepted"; return 1; }
  grep -q "primary lease lost: fenced" "$W/$c-1/log" && is "$c-1" .fenced true
}

# A replica whose primary has no address yet starts parked and follows once it has one.
parked_follows() { # CLUSTER
  local c=$1
  mkcluster "$c" redis 2 >/dev/null; set_primary "$c" "$c-1" >/dev/null
  mkpod "$c-1" "$c" none >/dev/null
  start_mgr "$c-1" "$c"
  poll 20 ready "$c-1" || return 1
  mkpod "$c-2" "$c" >/dev/null
  start_mgr "$c-2" "$c"
  poll 20 is "$c-2" .state parked || { st "$c-2"; return 1; }
  is "$c-2" .reason "the current primary's address is unknown" || return 1
  kretry patch pod "$c-1" --subresource=status --type=merge \
    -p '{"status":{"podIP":"127.0.0.1","podIPs":[{"ip":"127.0.0.1"}]}}' || return 1
  poll 15 ready "$c-2" || { st "$c-2"; return 1; }
  is "$c-2" .state replica && is "$c-2" .replication.masterPort "$(port "$c-1" 1)"
}

# The old primary's manager restarts while a failover away from it runs (status.failover
# set by the controller first): it parks instead of taking its lapsed lease back, the
# replica is promoted, and the old primary rejoins as its replica with its data.
failover_away() { # CLUSTER
  local c=$1
  mkcluster "$c" redis 2 >/dev/null; set_primary "$c" "$c-1" >/dev/null
  mkpod "$c-1" "$c" >/dev/null; start_mgr "$c-1" "$c"; poll 20 ready "$c-1" || return 1
  mkpod "$c-2" "$c" >/dev/null; start_mgr "$c-2" "$c"; poll 20 ready "$c-2" || return 1
  rcli "$c-1" SET before:failover 1 | grep -q OK || return 1
  poll 10 eq 1 rcli "$c-2" GET before:failover || return 1
  kill -KILL "$(mgr_pid "$c-1")" # its server dies with it (PDEATHSIG)
  kretry patch rediscluster "$c" --subresource=status --type=merge \
    -p "{\"status\":{\"failover\":{\"phase\":\"Fencing\",\"from\":\"$c-1\",\"reason\":\"test\"}}}" || return 1
  start_mgr "$c-1" "$c"
  poll 20 is "$c-1" .state parked || { st "$c-1"; return 1; }
  is "$c-1" .reason "a failover away from this pod is running" || { st "$c-1"; return 1; }
  ucli "$c-1" default "$DEFPW" SET x 1 | grep -q READONLY || return 1
  is "$c-1" .leaseHeld false || return 1
  poll 10 post_ok "$c-2" promote || { post "$c-2" promote; return 1; }
  kretry patch rediscluster "$c" --subresource=status --type=merge \
    -p "{\"status\":{\"currentPrimary\":\"$c-2\",\"failover\":null}}" || return 1
  post_ok "$c-1" replicate "$(addr_body "$c-2")" || return 1
  poll 15 ready "$c-1" && is "$c-1" .state replica && eq 1 rcli "$c-1" GET before:failover
}

# A replica reads the primary Lease every renewPeriod, so after the primary is cut from
# the API server it may take the Lease a leaseDuration after the last renewal it saw,
# not a leaseDuration after it was asked to promote. Asked once, just after that
# moment (leaseDuration 4s + renewPeriod 500ms + tick), it must succeed at once.
lease_observed() { # CLUSTER
  local c=$1 relay k="$W/relay-observe-kubeconfig" rp t0 ms
  alloc_ports "relay-$c"; relay=$(port "relay-$c" 1)
  sed -E "s#server: .*#server: https://127.0.0.1:$relay#" "$KUBECONFIG_ADMIN" >"$k"
  python3 test/integration/instance/tcpproxy.py "$relay" "$ENV_HOST_IP" "$ENV_API_PORT" &
  rp=$!
  mkcluster "$c" redis 2 >/dev/null; set_primary "$c" "$c-1" >/dev/null
  mkpod "$c-1" "$c" >/dev/null; KCFG=$k start_mgr "$c-1" "$c"
  poll 20 ready "$c-1" || { kill "$rp"; st "$c-1"; return 1; }
  mkpod "$c-2" "$c" >/dev/null; start_mgr "$c-2" "$c"
  poll 20 ready "$c-2" || { kill "$rp"; return 1; }
  sleep 2
  kill -KILL "$rp"; wait "$rp" 2>/dev/null
  t0=$(date +%s%N)
  poll 5 is "$c-1" .fenced true || { st "$c-1"; return 1; }
  ms=$(( 5000 - ($(date +%s%N) - t0) / 1000000 ))
  [ "$ms" -gt 0 ] && sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
  post "$c-2" promote >"$W/observe.out"
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  echo "info instance: primary cut from the API server -> replica promoted at the first ask, $ms ms after the cut (leaseDuration 4s)" >&3
  grep -q '^200 ' "$W/observe.out" || { cat "$W/observe.out"; return 1; }
  is "$c-2" .leaseHeld true && [ "$(lease_holder "$c")" = "$c-2" ]
}

# A renewed server certificate in the TLS directory is loaded live: the server serves
# the new one with the same pid (CONFIG SET of the same paths re-reads them).
served_cn() { echo | timeout 5 openssl s_client -connect "127.0.0.1:$1" 2>/dev/null | sed -n 's/^subject=.*CN = //p'; }
tls_reload() { # CLUSTER
  local c=$1 d n pid
  d=$W/tlsx; mkdir -p "$d"
  ( cd "$d" || exit 1
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=ca
    for n in a b; do
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $n.key -out $n.csr -subj "/CN=server-$n"
      openssl x509 -req -in $n.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out $n.crt -days 2
    done ) >/dev/null 2>&1 || { echo "openssl could not make the test certificates"; return 1; }
  mkcluster "$c" redis 1 >/dev/null; set_primary "$c" "$c-1" >/dev/null; mkpod "$c-1" "$c" >/dev/null
  mkdir -p "$W/$c-1/tls" && cp "$d/a.crt" "$W/$c-1/tls/tls.crt" && cp "$d/a.key" "$W/$c-1/tls/tls.key" &&
    cp "$d/ca.crt" "$W/$c-1/tls/ca.crt" || { echo "cannot copy the certificates"; return 1; }
  start_mgr "$c-1" "$c"
  poll 20 ready "$c-1" || { st "$c-1"; return 1; }
  [ "$(served_cn "$(port "$c-1" 1)")" = server-a ] || { echo "served: $(served_cn "$(port "$c-1" 1)")"; return 1; }
  pid=$(server_pid "$c-1")
  cp "$d/b.key" "$W/$c-1/tls/tls.key.new" && cp "$d/b.crt" "$W/$c-1/tls/tls.crt.new" &&
    mv "$W/$c-1/tls/tls.key.new" "$W/$c-1/tls/tls.key" && mv "$W/$c-1/tls/tls.crt.new" "$W/$c-1/tls/tls.crt"
  poll 10 eq server-b served_cn "$(port "$c-1" 1)" || { echo "still $(served_cn "$(port "$c-1" 1)")"; return 1; }
  [ "$(server_pid "$c-1")" = "$pid" ] || { echo "server pid $pid -> $(server_pid "$c-1")"; return 1; }
  grep -q "the server reloaded them" "$W/$c-1/log" || { echo "no reload in the log:"; grep -i tls "$W/$c-1/log" | tail -5; return 1; }
}
