# Sourced by test/integration/controller.sh: spec.mode sentinel through the controller
# (controller/sentinel.h, docs/sentinel.md). ONLY=sentinel runs these alone.
#   t_sentinel_create    3 data pods + 3 sentinel pods, all Ready; the <name>-sentinel
#                        Service's endpoints are the 3 sentinels; SENTINEL
#                        get-master-addr-by-name through each answers the primary's IP;
#                        status.sentinels and the SentinelsReady condition; no sentinel
#                        pod behind <name>-any
#   t_sentinel_failover  SIGKILL of the primary's server under a WAIT-1 writer: Sentinel
#                        promotes, status.currentPrimary, the role labels and
#                        <name>-leader follow it, a SentinelFailover Event, no
#                        acknowledged write lost, Ready again
#   t_sentinel_delete    the same with the primary's pod deleted: it is not recreated
#                        before Sentinel promoted another, then comes back a replica
#   t_sentinel_pod_lost  a deleted sentinel pod is recreated and Ready again; the others
#                        still count the gone one, and a SENTINEL RESET is asked for
#   t_sentinel_migrate   the in-place move: a standalone 1-instance cluster with data and
#                        a WAIT-1 writer is patched to mode sentinel, instances 3: the
#                        primary keeps its pod (uid) and server pid, the data from before
#                        stays, the 3 sentinels behind <name>-sentinel name it, no
#                        acknowledged write lost; its manager follows the sentinels without a
#                        restart: a SIGKILL of its server is failed over by Sentinel
#   t_sentinel_migrate_replica  the same from 2 instances: the old replica's manager
#                        follows too, in the same pod
#   t_sentinel_switchover_to  switchover-to=<pod> twice (each other replica in turn):
#                        the named pod becomes the primary, every data pod's
#                        replica-priority is back to 100 after, no WAIT-1 write lost
#   t_sentinel_rolling   a restart-input change (databases 16 → 20) under a WAIT-1 writer:
#                        every data pod replaced, the primary last through its manager's
#                        safe switchover (SENTINEL FAILOVER), no write lost, Ready
#   t_sentinel_scale     spec.sentinel.count 3 → 5 → 3: at every CKQUORUM round (0.5 s)
#                        enough sentinels answer OK for a failover (a sentinel just
#                        reset answers NOQUORUM for ~1 s: counted, shown), each counts
#                        exactly the sentinels that exist at the end (SENTINEL RESET)
#   t_sentinel_password  the auth Secret rotated: the sentinels take the new password
#                        live (old and new valid, then only the new after the grace), no
#                        sentinel restarted, the master never +sdown, currentPrimary and
#                        the config epoch unchanged; then a SIGKILL of the primary's server
#                        is failed over by Sentinel with a writer on the new password
#   t_sentinel_migrate_crash  the primary's server SIGKILLed right after that patch,
#                        before its manager follows: the sentinels come for the parked
#                        server, its manager holds it down once they name it (hold-follow),
#                        and Sentinel or, with no replica, the manager after
#                        failoverTimeout brings a primary back; the data kept; Ready

# mksentinel NS NAME: mode sentinel, 3 data instances, 3 sentinels (quick timings)
mksentinel() {
  mkcluster "$1" "$2" 3 "  mode: sentinel
  sentinel: {count: 3, quorum: 2, downAfter: 2s, failoverTimeout: 10s}"
}
sentinel_pods() { $K -n "$1" get pods -l "redis.io/cluster=$2,redis.io/role=sentinel" -o jsonpath='{.items[*].metadata.name}' 2>/dev/null; }
data_ips() { $K -n "$1" get pods -l "redis.io/cluster=$2,app.kubernetes.io/component=database" -o jsonpath='{.items[*].status.podIP}'; }
# the ready addresses of a Service's EndpointSlices
svc_ips() {
  $K -n "$1" get endpointslices -l "kubernetes.io/service-name=$2" \
    -o jsonpath='{.items[*].endpoints[?(@.conditions.ready==true)].addresses[0]}' 2>/dev/null |
    tr ' ' '\n' | grep . | sort | paste -sd' ' -
}
# scli NS NAME IP ARGS...: a sentinel, with the sentinels' password (the default user's)
# shellcheck disable=SC2086
scli() { local ns=$1 name=$2 ip=$3; shift 3; timeout 3 redis-cli ${CLI_TLS:-} -h "$ip" -p 26379 -a "$(secret "$ns" "$name-auth")" --no-auth-warning "$@"; }
sen_master_ip() { scli "$1" "$2" "$3" SENTINEL get-master-addr-by-name mymaster | head -1; }
# every sentinel pod names IP as the master
sentinels_say() {
  local ns=$1 name=$2 want=$3 p
  for p in $(sentinel_pods "$ns" "$name"); do
    [ "$(sen_master_ip "$ns" "$name" "$(pod_ip "$ns" "$p")")" = "$want" ] || return 1
  done
}
three_sentinels_ready() {
  [ "$(sentinel_pods "$1" "$2" | wc -w)" = 3 ] &&
    [ "$(svc_ips "$1" "$2-sentinel" | wc -w)" = 3 ] &&
    [ "$(cond "$1" "$2" SentinelsReady)" = True ]
}
sentinel_ready() { ready "$1" "$2" && three_sentinels_ready "$1" "$2"; }

t_sentinel_create() {
  local ns=$RUN-sen name=sen p ip pip any t0
  newns $ns
  t0=$(ms)
  mksentinel $ns $name
  poll 180 sentinel_ready $ns $name || fail "not Ready: phase '$(rc $ns $name '{.status.phase}')', sentinels $(rc $ns $name '{.status.sentinels}')"
  note "sentinel mode, 3 + 3 pods: Ready in $(( $(ms) - t0 )) ms"
  pip=$(pod_ip $ns "$(primary $ns $name)")
  for ip in $(svc_ips $ns $name-sentinel); do
    [ "$(sen_master_ip $ns $name "$ip")" = "$pip" ] ||
      fail "sentinel $ip: get-master-addr-by-name says '$(sen_master_ip $ns $name "$ip")', primary is $pip"
  done
  [ "$($K -n $ns get service $name-sentinel -o jsonpath='{.spec.ports[0].port}')" = 26379 ] || fail "$name-sentinel port"
  [ "$(rc $ns $name '{.status.sentinels[0].quorumOk}')" = true ] || fail "status.sentinels: $(rc $ns $name '{.status.sentinels}')"
  [ "$(rc $ns $name '{.status.sentinels[0].master}')" = "$(primary $ns $name)" ] || fail "status.sentinels[0].master: $(rc $ns $name '{.status.sentinels}')"
  any=$(svc_ips $ns $name-any)
  for p in $(sentinel_pods $ns $name); do
    case " $any " in *" $(pod_ip $ns $p) "*) fail "sentinel $p behind $name-any" ;; esac
    owned $ns pod $p || return 1
  done
  [ "$(echo $any | wc -w)" = 3 ] || fail "$name-any: '$any'"
  [ "$($K -n $ns get pods -l redis.io/cluster=$name,redis.io/role=primary -o name | wc -l)" = 1 ] || fail "primary label"
  # a drain may not take the sentinels below what a failover needs (quorum 2, majority 2)
  [ "$($K -n $ns get pdb $name-sentinel -o jsonpath='{.spec.minAvailable}/{.status.expectedPods}')" = 2/3 ] ||
    fail "PDB $name-sentinel: $($K -n $ns get pdb $name-sentinel -o jsonpath='{.spec}/{.status}' 2>&1)"
}

# sentinel_logs NS NAME: every pod's log into $W/<ns>.logs (read on a failure, KEEP=1)
sentinel_logs() {
  local p
  for p in $($K -n "$1" get pods -l "redis.io/cluster=$2" -o jsonpath='{.items[*].metadata.name}'); do
    { echo "=== $p"; tail -n 80 "$W/na/pods/$($K -n "$1" get pod "$p" -o jsonpath='{.metadata.uid}')"/logs/*.log; } >>"$W/$1.logs" 2>&1
  done
}

# sentinel_writer NS NAME TAG SECONDS: the WAIT-1 writer over the data pods only
sentinel_writer() {
  rm -f "$W/stop-$3"
  # shellcheck disable=SC2046
  "$WRITER" "$4" "$(secret "$1" "$2-auth")" "$W/stop-$3" $(data_ips "$1" "$2") >"$W/writer-$3.out" 2>&1 &
  WPID=$!
}

# sentinel_failover NS NAME HOW: HOW kill (the primary's server) | delete (its pod)
sentinel_failover() {
  local ns=$1 name=$2 how=$3 old oldip new newip pid t0 t1 t2
  newns $ns
  mksentinel $ns $name
  poll 180 sentinel_ready $ns $name || fail "not Ready: $(rc $ns $name '{.status.phase}')"
  old=$(primary $ns $name); oldip=$(pod_ip $ns $old)
  sentinels_say $ns $name "$oldip" || fail "sentinels do not name $old ($oldip)"
  sentinel_writer $ns $name sfo 120
  sleep 2
  if [ "$how" = kill ]; then
    pid=$(server_hostpid $ns $old) || { wstop sfo; fail "no redis-server in $old"; }
    kill -9 "$pid"; t0=$(ms)
  else
    t0=$(ms); $K -n $ns delete pod "$old" --wait=false >/dev/null
  fi
  poll 60 eval '[ -n "$(primary '$ns' '$name')" ] && [ "$(primary '$ns' '$name')" != '$old' ]' ||
    { sentinel_logs $ns $name; wstop sfo; fail "currentPrimary did not move: sentinels $(rc $ns $name '{.status.sentinels}')"; }
  t1=$(ms); new=$(primary $ns $name); newip=$(pod_ip $ns $new)
  sentinels_say $ns $name "$newip" || { wstop sfo; fail "the sentinels do not all name $new ($newip): $(rc $ns $name '{.status.sentinels}')"; }
  poll 30 write_via_leader $ns $name "$oldip" || { wstop sfo; fail "no write through $name-leader"; }
  t2=$(ms)
  note "sentinel failover ($how of $old): currentPrimary $new after $((t1 - t0)) ms, first write through $name-leader after $((t2 - t0)) ms"
  [ "$(leader_ip $ns $name)" = "$newip" ] || { wstop sfo; fail "$name-leader is not on $new"; }
  [ "$($K -n $ns get pod $new -o jsonpath='{.metadata.labels.redis\.io/role}')" = primary ] || { wstop sfo; fail "$new not labelled primary"; }
  poll 120 sentinel_ready $ns $name || { wstop sfo; fail "not Ready again: $(rc $ns $name '{.status.phase}')"; }
  wstop sfo >"$W/sfo.result" || fail "writer: $(cat $W/sfo.result)"
  note "writer through the sentinel failover ($how): $(cat $W/sfo.result)"
  events $ns | grep -q SentinelFailover || fail "no SentinelFailover event: $(events $ns)"
  ! events $ns | grep -qE 'FailoverStarted|SplitBrainFenced' || fail "the controller acted as a promoter: $(events $ns)"
  poll 60 eval '[ "$($K -n '$ns' get pod '$old' -o jsonpath="{.metadata.labels.redis\.io/role}")" = replica ]' || fail "$old not back as a replica"
  if [ "$how" = delete ]; then # recreated only once Sentinel had promoted another
    local made moved
    made=$($K -n $ns get pod $old -o jsonpath='{.metadata.creationTimestamp}')
    moved=$(rc $ns $name '{.status.lastFailover.time}')
    [[ ! "$made" < "$moved" ]] || fail "$old recreated at $made, before the move at $moved"
  fi
}
t_sentinel_failover() { sentinel_failover $RUN-senfo senfo kill; }
t_sentinel_delete() { sentinel_failover $RUN-sendel sendel delete; }

t_sentinel_pod_lost() {
  local ns=$RUN-sen name=sen victim uid
  victim=$(sentinel_pods $ns $name | awk '{print $2}')
  [ -n "$victim" ] || fail "no sentinel pods (t_sentinel_create runs first)"
  uid=$($K -n $ns get pod $victim -o jsonpath='{.metadata.uid}')
  $K -n $ns delete pod $victim --wait=false >/dev/null
  poll 60 eval '[ -n "$($K -n '$ns' get pod '$victim' -o jsonpath="{.metadata.uid}" 2>/dev/null)" ] && [ "$($K -n '$ns' get pod '$victim' -o jsonpath="{.metadata.uid}")" != '$uid' ]' ||
    fail "$victim not recreated"
  poll 120 sentinel_ready $ns $name || fail "not Ready after: sentinels $(rc $ns $name '{.status.sentinels}')"
  sentinels_say $ns $name "$(pod_ip $ns "$(primary $ns $name)")" || fail "sentinels disagree after the recreation"
  # the survivors count the gone sentinel too: the controller asks for SENTINEL RESET
  poll 60 eval 'events '$ns' | grep -q SentinelReset' || fail "no SentinelReset event: $(events $ns)"
  # served now (HTTPS, the controller's certificate): each sentinel counts 3 again
  poll 120 eval '[ "$(rc '$ns' '$name' "{.status.sentinels[*].knownSentinels}")" = "3 3 3" ]' ||
    fail "knownSentinels not back to 3 after the reset: $(rc $ns $name '{.status.sentinels}')"
  note "sentinel pod replaced: SENTINEL RESET done, knownSentinels $(rc $ns $name '{.status.sentinels[*].knownSentinels}')"
}

# The switchover annotation in sentinel mode: the primary's manager pauses writes until
# every replica has its offset, then asks Sentinel (docs/sentinel.md); no WAIT-1 write lost.
t_sentinel_switchover() {
  local ns=$RUN-sen name=sen old new t0 t1
  poll 120 sentinel_ready $ns $name || fail "not Ready (t_sentinel_create runs first)"
  old=$(primary $ns $name)
  sentinel_writer $ns $name ssw 120
  sleep 2
  t0=$(ms); $K -n $ns annotate rediscluster $name "redis.io/switchover-to=auto" >/dev/null
  poll 60 eval '[ -n "$(primary '$ns' '$name')" ] && [ "$(primary '$ns' '$name')" != '$old' ]' ||
    { sentinel_logs $ns $name; wstop ssw; fail "currentPrimary did not move: $(events $ns)"; }
  t1=$(ms); new=$(primary $ns $name)
  sentinels_say $ns $name "$(pod_ip $ns $new)" || { wstop ssw; fail "the sentinels do not name $new"; }
  poll 120 sentinel_ready $ns $name || { wstop ssw; fail "not Ready again: $(rc $ns $name '{.status.phase}')"; }
  wstop ssw >"$W/ssw.result" || fail "writer: $(cat $W/ssw.result)"
  note "sentinel switchover by annotation: $old → $new in $((t1 - t0)) ms; $(grep -ho 'planned switchover[^"]*' "$W/na/pods/"*/logs/*.log 2>/dev/null | head -1); writer: $(cat $W/ssw.result)"
  events $ns | grep -q SwitchoverStarted || fail "no SwitchoverStarted event: $(events $ns)"
  ! events $ns | grep -qE 'FailoverStarted|SplitBrainFenced' || fail "the controller acted as a promoter: $(events $ns)"
}

# t_sentinel_migrate: standalone → sentinel in place (docs/sentinel.md "Standalone to
# sentinel, in place"), then the primary's server killed: Sentinel, not the controller,
# fails over.
migrate_seed() { local i; for i in $(seq 1 200); do echo "SET before:$i v$i"; done | rcli "$1" "$2" | grep -c OK; }
migrate_kept() { [ "$(rcli "$1" "$2" GET before:1)" = v1 ] && [ "$(rcli "$1" "$2" GET before:200)" = v200 ]; }
# follows_sentinels NS UID: the manager's line of sentinel_move.c's switch (FOLLOW)
follows_sentinels() { grep -q 'spec.mode moved to sentinel: following the sentinels' "$W/na/pods/$2/logs/"*.log 2>/dev/null; }
# the data pods as name=uid
data_uids() { $K -n "$1" get pods -l "redis.io/cluster=$2,app.kubernetes.io/component=database" -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid} {end}'; }
# sentinel_migrate NS NAME N: the move of a standalone cluster of N instances
sentinel_migrate() {
  local ns=$1 name=$2 old uid pid pip pw ip t0 t1 t2 t3 new olds p
  newns $ns
  mkcluster $ns $name "$3"
  poll 120 ready $ns $name || fail "standalone not Ready: $(rc $ns $name '{.status.phase}')"
  old=$(primary $ns $name); pip=$(pod_ip $ns $old); pw=$(secret $ns $name-auth)
  uid=$($K -n $ns get pod $old -o jsonpath='{.metadata.uid}')
  pid=$(server_hostpid $ns $old) || fail "no redis-server in $old"
  olds=$(data_uids $ns $name)
  [ "$(migrate_seed "$pip" "$pw")" = 200 ] || fail "the 200 writes before the move"
  sentinel_writer $ns $name smig 300 # the data pods of before the move
  sleep 2
  t0=$(ms)
  $K -n $ns patch rediscluster $name --type merge -p '{"spec":{"mode":"sentinel","instances":3,"sentinel":{"count":3,"quorum":2,"downAfter":"2s","failoverTimeout":"10s"}}}' >/dev/null ||
    { wstop smig; fail "the patch to mode sentinel was refused"; }
  poll 180 follows_sentinels $ns "$uid" || { sentinel_logs $ns $name; wstop smig; fail "$old's manager does not follow the sentinels"; }
  t1=$(ms)
  grep -h 'sentinel' "$W/na/pods/$uid/logs/"*.log | grep -E 'spec.mode|majority' >"$W/smig.follow"
  poll 240 sentinel_ready $ns $name || { sentinel_logs $ns $name; wstop smig; fail "not Ready in sentinel mode: phase '$(rc $ns $name '{.status.phase}')', sentinels $(rc $ns $name '{.status.sentinels}')"; }
  t2=$(ms)
  for p in $olds; do # every manager of before the move follows, in the same pod
    follows_sentinels $ns "${p#*=}" || { wstop smig; fail "${p%=*}'s manager does not follow the sentinels"; }
    [ "$($K -n $ns get pod "${p%=*}" -o jsonpath='{.metadata.uid}')" = "${p#*=}" ] || { wstop smig; fail "${p%=*} was recreated"; }
  done
  wstop smig >"$W/smig.result" || fail "writer through the move: $(cat $W/smig.result)"
  note "standalone ($3) → sentinel (3) in place: $old's manager follows the sentinels after $((t1 - t0)) ms, Ready with 3 sentinels after $((t2 - t0)) ms; writer (its write pause is max_gap_ms): $(cat $W/smig.result)"
  note "$old's manager: $(tr '\n' ' ' <"$W/smig.follow")"
  [ "$(primary $ns $name)" = "$old" ] || fail "currentPrimary moved to $(primary $ns $name)"
  [ "$($K -n $ns get pod $old -o jsonpath='{.metadata.uid}')" = "$uid" ] || fail "$old was recreated"
  [ "$(server_hostpid $ns $old)" = "$pid" ] || fail "$old's server restarted: pid $pid → $(server_hostpid $ns $old)"
  migrate_kept "$pip" "$pw" || fail "the data from before the move is gone"
  for ip in $(svc_ips $ns $name-sentinel); do
    [ "$(sen_master_ip $ns $name "$ip")" = "$pip" ] || fail "sentinel $ip names '$(sen_master_ip $ns $name "$ip")', the primary is $pip"
  done
  [ "$(svc_ips $ns $name-sentinel | wc -w)" = 3 ] || fail "$name-sentinel endpoints: $(svc_ips $ns $name-sentinel)"
  ! events $ns | grep -q RollingUpdate || fail "the move rolled pods: $(events $ns)"
  # the manager follows the sentinels now: Sentinel fails over, not the controller
  sentinel_writer $ns $name smfo 120
  sleep 2
  pid=$(server_hostpid $ns $old) || { wstop smfo; fail "no redis-server in $old"; }
  kill -9 "$pid"; t0=$(ms)
  poll 60 eval '[ -n "$(primary '$ns' '$name')" ] && [ "$(primary '$ns' '$name')" != '$old' ]' ||
    { sentinel_logs $ns $name; wstop smfo; fail "currentPrimary did not move: sentinels $(rc $ns $name '{.status.sentinels}')"; }
  t3=$(ms); new=$(primary $ns $name)
  sentinels_say $ns $name "$(pod_ip $ns $new)" || { wstop smfo; fail "the sentinels do not all name $new"; }
  poll 120 sentinel_ready $ns $name || { sentinel_logs $ns $name; wstop smfo; fail "not Ready after the failover: $(rc $ns $name '{.status.phase}')"; }
  wstop smfo >"$W/smfo.result" || fail "writer through the failover: $(cat $W/smfo.result)"
  migrate_kept "$(pod_ip $ns $new)" "$pw" || fail "the data from before the move is gone from $new"
  note "after the move, SIGKILL of $old's server: Sentinel promoted $new, currentPrimary after $((t3 - t0)) ms; lastFailover.reason '$(rc $ns $name '{.status.lastFailover.reason}')'; writer: $(cat $W/smfo.result)"
  [ "$(rc $ns $name '{.status.lastFailover.reason}')" = "Sentinel failed over" ] || fail "lastFailover: $(rc $ns $name '{.status.lastFailover}')"
  events $ns | grep -q SentinelFailover || fail "no SentinelFailover event: $(events $ns)"
  ! events $ns | grep -qE 'FailoverStarted|SplitBrainFenced' || fail "the controller acted as a promoter: $(events $ns)"
  poll 60 eval '[ "$($K -n '$ns' get pod '$old' -o jsonpath="{.metadata.labels.redis\.io/role}")" = replica ]' || fail "$old not back as a replica"
}
t_sentinel_migrate() { sentinel_migrate $RUN-senmig senmig 1; }
t_sentinel_migrate_replica() { sentinel_migrate $RUN-senmig2 senmig2 2; }

t_sentinel_migrate_crash() {
  local ns=$RUN-senmigc name=senmigc old uid pip pw pid t0 t1 now
  newns $ns
  mkcluster $ns $name 1
  poll 120 ready $ns $name || fail "standalone not Ready: $(rc $ns $name '{.status.phase}')"
  old=$(primary $ns $name); pip=$(pod_ip $ns $old); pw=$(secret $ns $name-auth)
  uid=$($K -n $ns get pod $old -o jsonpath='{.metadata.uid}')
  [ "$(migrate_seed "$pip" "$pw")" = 200 ] || fail "the 200 writes before the move"
  sleep 2 # appendfsync everysec: the writes are in the AOF
  pid=$(server_hostpid $ns $old) || fail "no redis-server in $old"
  $K -n $ns patch rediscluster $name --type merge -p '{"spec":{"mode":"sentinel","instances":3,"sentinel":{"count":3,"quorum":2,"downAfter":"2s","failoverTimeout":"10s"}}}' >/dev/null ||
    fail "the patch to mode sentinel was refused"
  kill -9 "$pid"; t0=$(ms)
  poll 240 sentinel_ready $ns $name || { sentinel_logs $ns $name; fail "not Ready after the crash during the move: phase '$(rc $ns $name '{.status.phase}')', sentinels $(rc $ns $name '{.status.sentinels}')"; }
  t1=$(ms); now=$(primary $ns $name)
  grep -q '"action":"hold-follow"' "$W/na/pods/$uid/logs/"*.log || fail "$old's manager did not hold its crashed server: $(grep -h '"sentinel"' "$W/na/pods/$uid/logs/"*.log | tail -5)"
  migrate_kept "$(pod_ip $ns $now)" "$pw" || fail "the data from before the move is gone from $now"
  ! events $ns | grep -qE 'FailoverStarted|SplitBrainFenced' || fail "the controller acted as a promoter: $(events $ns)"
  [ "$($K -n $ns get pods -l redis.io/cluster=$name,redis.io/role=primary -o name | wc -l)" = 1 ] || fail "primary label"
  note "crash during the move: $old's server killed right after the patch, held down by its manager (hold-follow), Ready with $now as the primary after $((t1 - t0)) ms ($([ "$now" = "$old" ] && echo "restarted as primary after failoverTimeout: no replica existed" || echo "Sentinel promoted a replica")); data kept"
  note "$old's manager: $(grep -hE '"action":"(hold-follow|start-primary|start-replica)"' "$W/na/pods/$uid/logs/"*.log | cut -c1-220 | tr '\n' ' ')"
}

# t_sentinel_password: the auth Secret rotated reaches the sentinels live (docs/sentinel.md
# "Passwords").
proc_hostpid() { # NS POD COMM
  local uid p; uid=$($K -n "$1" get pod "$2" -o jsonpath='{.metadata.uid}')
  for p in $(cat "$CGROUP/$uid/cgroup.procs" 2>/dev/null); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$3" ] && { echo "$p"; return 0; }
  done
  return 1
}
sentinel_pids() { local p; for p in $(sentinel_pods "$1" "$2"); do proc_hostpid "$1" "$p" redis-sentinel || echo none; done | paste -sd' ' -; }
sen_auth() { [ "$(timeout 3 redis-cli -h "$2" -p 26379 -a "$3" --no-auth-warning PING 2>&1)" = PONG ]; }
sentinels_auth() { # NS NAME PASSWORD ok|fail
  local p ip
  for p in $(sentinel_pods "$1" "$2"); do
    ip=$(pod_ip "$1" "$p")
    if [ "$4" = ok ]; then sen_auth "$1" "$ip" "$3" || return 1; else ! sen_auth "$1" "$ip" "$3" || return 1; fi
  done
}
# every sentinel sees the master up: flags exactly "master" (no s_down, o_down, failover)
master_flags_ok() {
  local p ip f
  for p in $(sentinel_pods "$1" "$2"); do
    ip=$(pod_ip "$1" "$p")
    f=$(timeout 3 redis-cli -h "$ip" -p 26379 -a "$3" --no-auth-warning SENTINEL master mymaster | sed -n '/^flags$/{n;p}')
    [ "$f" = master ] || { echo "$p: flags '$f'"; return 1; }
  done
}
sentinel_log_count() { # NS NAME PATTERN: lines matching in the sentinel pods' logs
  local p n=0 c
  for p in $(sentinel_pods "$1" "$2"); do
    c=$(cat "$W/na/pods/$($K -n "$1" get pod "$p" -o jsonpath='{.metadata.uid}')"/logs/*.log 2>/dev/null | grep -c -- "$3")
    n=$((n + c))
  done
  echo $n
}

t_sentinel_password() {
  local ns=$RUN-senpw name=senpw old new pids epoch prim sdown sw t0 t1 t2 pid oldip
  newns $ns
  mksentinel $ns $name
  poll 180 sentinel_ready $ns $name || fail "not Ready: $(rc $ns $name '{.status.phase}')"
  old=$(secret $ns $name-auth); new=rotated-$RANDOM-$RANDOM
  pids=$(sentinel_pids $ns $name); prim=$(primary $ns $name)
  case " $pids " in *" none "*) fail "no redis-sentinel process found in a sentinel pod: $pids" ;; esac
  epoch=$(rc $ns $name '{.status.sentinels[*].configEpoch}')
  sdown=$(sentinel_log_count $ns $name '+sdown master'); sw=$(sentinel_log_count $ns $name '+switch-master')
  [ "$(sentinel_log_count $ns $name '+monitor master')" -gt 0 ] || fail "the sentinels' logs are not readable: the +sdown check would see nothing"
  master_flags_ok $ns $name "$old" || fail "the master is not up before the rotation"
  t0=$(ms)
  $K -n $ns patch secret $name-auth --type=merge -p "{\"stringData\":{\"password\":\"$new\"}}" >/dev/null
  poll 60 sentinels_auth $ns $name "$new" ok || { sentinel_logs $ns $name; fail "the new password is not accepted by every sentinel"; }
  t1=$(ms)
  sentinels_auth $ns $name "$old" ok || fail "a sentinel refused the old password before the grace"
  note "auth Secret rotated: every sentinel accepts the new password after $((t1 - t0)) ms, the old one still"
  poll 90 sentinels_auth $ns $name "$old" fail || { sentinel_logs $ns $name; fail "a sentinel still accepts the old password after the grace"; }
  t2=$(ms)
  sentinels_auth $ns $name "$new" ok || fail "a sentinel stopped accepting the new password"
  note "old password refused by every sentinel $((t2 - t0)) ms after the change (grace 10s)"
  poll 30 master_flags_ok $ns $name "$new" || fail "the master is not up after the rotation"
  poll 60 sentinel_ready $ns $name || fail "not Ready after the rotation: $(rc $ns $name '{.status.sentinels}')"
  [ "$(sentinel_pids $ns $name)" = "$pids" ] || fail "a sentinel restarted: pids $pids → $(sentinel_pids $ns $name)"
  [ "$(primary $ns $name)" = "$prim" ] || fail "the primary moved during the rotation: $prim → $(primary $ns $name)"
  [ "$(rc $ns $name '{.status.sentinels[*].configEpoch}')" = "$epoch" ] || fail "config epochs moved: $epoch → $(rc $ns $name '{.status.sentinels[*].configEpoch}')"
  [ "$(sentinel_log_count $ns $name '+sdown master')" = "$sdown" ] || fail "+sdown master during the rotation"
  [ "$(sentinel_log_count $ns $name '+switch-master')" = "$sw" ] || fail "+switch-master during the rotation"
  ! events $ns | grep -qE 'SentinelFailover|FailoverStarted' || fail "a failover during the rotation: $(events $ns)"
  note "rotation: sentinel pids, primary $prim and config epochs ($epoch) unchanged, no +sdown, the master's flags 'master' on every sentinel"
  # a failover after the rotation still works (the sentinels reach the data pods and each other)
  sentinel_writer $ns $name spw 120
  sleep 2
  oldip=$(pod_ip $ns $prim)
  pid=$(server_hostpid $ns $prim) || { wstop spw; fail "no redis-server in $prim"; }
  kill -9 "$pid"; t0=$(ms)
  poll 60 eval '[ -n "$(primary '$ns' '$name')" ] && [ "$(primary '$ns' '$name')" != '$prim' ]' ||
    { sentinel_logs $ns $name; wstop spw; fail "currentPrimary did not move after the rotation: $(rc $ns $name '{.status.sentinels}')"; }
  t1=$(ms)
  sentinels_say $ns $name "$(pod_ip $ns "$(primary $ns $name)")" || { wstop spw; fail "the sentinels do not all name $(primary $ns $name)"; }
  poll 120 sentinel_ready $ns $name || { wstop spw; fail "not Ready after the failover: $(rc $ns $name '{.status.phase}')"; }
  wstop spw >"$W/spw.result" || fail "writer: $(cat $W/spw.result)"
  note "failover after the rotation: currentPrimary $prim → $(primary $ns $name) after $((t1 - t0)) ms; writer: $(cat $W/spw.result)"
}

# t_sentinel_switchover_to: the annotation naming a pod steers Sentinel to it
# (instance/sentinel_steer.h): the other replicas' replica-priority 0 for the move.
prios() { # NS NAME: every data pod's replica-priority, sorted
  local p
  for p in $($K -n "$1" get pods -l "redis.io/cluster=$2,app.kubernetes.io/component=database" -o jsonpath='{.items[*].metadata.name}'); do
    opcli "$1" "$2" "$p" CONFIG GET replica-priority | tail -1
  done | sort | paste -sd' ' -
}
t_sentinel_switchover_to() {
  local ns=$RUN-sen name=sen old target round t0 t1
  poll 120 sentinel_ready $ns $name || fail "not Ready (t_sentinel_create runs first)"
  sentinel_writer $ns $name sst 240
  sleep 2
  for round in 1 2; do
    old=$(primary $ns $name)
    # the replica with the highest serial that is not the primary: each round another one
    target=$($K -n $ns get pods -l redis.io/cluster=$name,redis.io/role=replica -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\n' | sort | sed -n "${round}p")
    [ -n "$target" ] || { wstop sst; fail "no replica to name"; }
    t0=$(ms); $K -n $ns annotate rediscluster $name "redis.io/switchover-to=$target" --overwrite >/dev/null
    poll 90 eval '[ "$(primary '$ns' '$name')" = '$target' ]' ||
      { sentinel_logs $ns $name; wstop sst; fail "round $round: $target did not become the primary (primary $(primary $ns $name), events $(events $ns))"; }
    t1=$(ms)
    sentinels_say $ns $name "$(pod_ip $ns $target)" || { wstop sst; fail "the sentinels do not name $target"; }
    poll 60 eval '[ "$(prios '$ns' '$name')" = "100 100 100" ]' || { wstop sst; fail "replica-priority not restored: $(prios $ns $name)"; }
    poll 120 sentinel_ready $ns $name || { wstop sst; fail "not Ready after round $round: $(rc $ns $name '{.status.phase}')"; }
    note "switchover-to=$target: $old → $target in $((t1 - t0)) ms; replica-priority back to 100 everywhere"
  done
  wstop sst >"$W/sst.result" || { sentinel_logs $ns $name; cp "$W/$ns.logs" /tmp/sst-$RUN.logs 2>/dev/null; fail "writer: $(cat $W/sst.result)"; }
  note "writer through both steered switchovers: $(cat $W/sst.result); Sentinel saw the lowered priorities after $(grep -ho '"waited_ms":"[0-9]*' "$W/na/pods/"*/logs/*.log 2>/dev/null | grep -o '[0-9]*$' | paste -sd' ' -) ms"
  ! events $ns | grep -qE 'FailoverStarted|SplitBrainFenced' || fail "the controller acted as a promoter: $(events $ns)"
}

data_pods() { $K -n "$1" get pods -l "redis.io/cluster=$2,app.kubernetes.io/component=database" -o jsonpath='{.items[*].metadata.name}'; }
data_config_is() { # NS NAME DIRECTIVE VALUE: every data pod's server has it
  local p
  for p in $(data_pods "$1" "$2"); do
    [ "$(opcli "$1" "$2" "$p" CONFIG GET "$3" | tail -1)" = "$4" ] || return 1
  done
}
# none of the data pods' uids of before (UIDS: name=uid …) is left
all_replaced() {
  local now u; now=$(data_uids "$1" "$2")
  for u in $3; do case " $now " in *" $u "*) return 1 ;; esac; done
  [ "$(data_pods "$1" "$2" | wc -w)" = 3 ]
}

t_sentinel_rolling() {
  local ns=$RUN-sen name=sen old uids t0 t1
  poll 120 sentinel_ready $ns $name || fail "not Ready (t_sentinel_create runs first)"
  old=$(primary $ns $name); uids=$(data_uids $ns $name)
  writer_follow $ns $name sru 300 data_ips
  sleep 2
  t0=$(ms); $K -n $ns patch rediscluster $name --type=merge -p '{"spec":{"redis":{"databases":"20"}}}' >/dev/null
  poll 300 eval 'all_replaced '$ns' '$name' "'"$uids"'" && data_config_is '$ns' '$name' databases 20 && sentinel_ready '$ns' '$name ||
    { sentinel_logs $ns $name; wstop sru; fail "rolling update did not finish: $(rc $ns $name '{.status.phase} {.status.phaseReason}'), pods $(data_uids $ns $name)"; }
  t1=$(ms)
  wstop sru >"$W/sru.result" || fail "writer: $(cat $W/sru.result)"
  [ "$(primary $ns $name)" != "$old" ] || fail "the primary was not moved"
  sentinels_say $ns $name "$(pod_ip $ns "$(primary $ns $name)")" || fail "the sentinels do not name $(primary $ns $name)"
  events $ns | grep -q RollingUpdate || fail "no RollingUpdate event"
  events $ns | grep -q SwitchoverStarted || fail "the primary was not moved through a switchover: $(events $ns)"
  ! events $ns | grep -qE 'FailoverStarted|SplitBrainFenced' || fail "the controller acted as a promoter: $(events $ns)"
  note "sentinel rolling update of 3 data pods (databases 16 → 20): $((t1 - t0)) ms, primary $old → $(primary $ns $name); writer: $(cat $W/sru.result)"
}

# CKQUORUM of every running sentinel pod (not being deleted, with an IP): prints
# "OK RUNNING [pod answer]…" (the pods that did not answer OK after the counts)
ckquorum_round() {
  local p st a ok=0 run=0 out=""
  for p in $(sentinel_pods "$1" "$2"); do
    st=$($K -n "$1" get pod "$p" -o jsonpath='{.metadata.deletionTimestamp}/{.status.podIP}' 2>/dev/null)
    case "$st" in /?*) ;; *) continue ;; esac
    run=$((run + 1))
    a=$(scli "$1" "$2" "${st#/}" SENTINEL CKQUORUM mymaster 2>&1)
    case "$a" in OK*) ok=$((ok + 1)) ;; *) out="$out [$p $(echo "$a" | cut -c1-24)]" ;; esac
  done
  echo "$ok $run$out"
}
# every sentinel counts exactly N sentinels (itself and N-1 others)
sentinels_count() {
  local p n
  for p in $(sentinel_pods "$1" "$2"); do
    n=$(scli "$1" "$2" "$(pod_ip "$1" "$p")" SENTINEL master mymaster | sed -n '/^num-other-sentinels$/{n;p}')
    [ "$n" = $(($3 - 1)) ] || return 1
  done
}
# quorum_sampler NS NAME FILE: one line per round into FILE until FILE.stop exists:
# "ok" when every running sentinel answers CKQUORUM OK; "partial …" when some do not
# but enough do for a failover (at least quorum 2 and a majority of those running: a
# sentinel just reset re-learns the others within ~2 s); "bad …" when too few do
quorum_sampler() {
  local r ok run
  while [ ! -f "$3.stop" ]; do
    r=$(ckquorum_round "$1" "$2"); ok=${r%% *}; run=$(echo "$r" | awk '{print $2}')
    if [ "$ok" = "$run" ]; then echo ok
    elif [ "$ok" -ge 2 ] && [ $((ok * 2)) -gt "$run" ]; then echo "partial $r"
    else echo "bad $r"; fi
    sleep 0.5
  done >"$3"
}
settled_at() { [ "$(sentinel_pods "$1" "$2" | wc -w)" = "$3" ] && sentinels_count "$1" "$2" "$3" && sentinel_ready5 "$1" "$2" "$3"; }
# sample_scale NS NAME COUNT: waits until COUNT sentinels all count COUNT while a sampler
# runs; prints "samples bad"
sample_scale() {
  local f="$W/quorum-$3" sp rc=0
  rm -f "$f" "$f.stop"; quorum_sampler "$1" "$2" "$f" & sp=$!
  poll 240 settled_at "$1" "$2" "$3" || rc=1
  touch "$f.stop"; wait "$sp"
  echo "$(grep -c . "$f") $(grep -c '^bad' "$f") $(grep -c '^partial' "$f")"
  grep '^partial' "$f" | head -3 | sed 's/^/  /' >&2
  return $rc
}
sentinel_ready5() { ready "$1" "$2" && [ "$(svc_ips "$1" "$2-sentinel" | wc -w)" = "$3" ] && [ "$(cond "$1" "$2" SentinelsReady)" = True ]; }

t_sentinel_scale() {
  local ns=$RUN-sen name=sen r t0 t1 prim resets
  poll 120 sentinel_ready $ns $name || fail "not Ready (t_sentinel_create runs first)"
  prim=$(primary $ns $name); resets=$(events $ns | grep -o SentinelReset | wc -l)
  t0=$(ms); $K -n $ns patch rediscluster $name --type=merge -p '{"spec":{"sentinel":{"count":5}}}' >/dev/null
  r=$(sample_scale $ns $name 5) || { sentinel_logs $ns $name; fail "3 → 5 did not settle (samples/bad: $r): $(rc $ns $name '{.status.sentinels}')"; }
  t1=$(ms)
  [ "$(echo $r | awk '{print $2}')" = 0 ] || fail "too few sentinels with CKQUORUM OK for a failover during 3 → 5 (samples/bad: $r)"
  poll 30 eval '[ "$($K -n '$ns' get pdb '$name'-sentinel -o jsonpath="{.spec.minAvailable}")" = 3 ]' || fail "PDB minAvailable with 5 sentinels: $($K -n $ns get pdb $name-sentinel -o jsonpath='{.spec}')"
  note "sentinels 3 → 5: settled in $((t1 - t0)) ms, every sentinel counts 5; $(echo $r | awk '{print $1}') CKQUORUM rounds: a failover possible at each, $(echo $r | awk '{print $3}') with a sentinel not OK"
  t0=$(ms); $K -n $ns patch rediscluster $name --type=merge -p '{"spec":{"sentinel":{"count":3}}}' >/dev/null
  r=$(sample_scale $ns $name 3) || { sentinel_logs $ns $name; fail "5 → 3 did not settle (samples/bad: $r): $(rc $ns $name '{.status.sentinels}')"; }
  t1=$(ms)
  [ "$(echo $r | awk '{print $2}')" = 0 ] || fail "too few sentinels with CKQUORUM OK for a failover during 5 → 3 (samples/bad: $r)"
  [ "$(events $ns | grep -o SentinelReset | wc -l)" -gt "$resets" ] || fail "no SentinelReset for the removed sentinels: $(events $ns)"
  [ "$(primary $ns $name)" = "$prim" ] || fail "the primary moved while scaling the sentinels: $prim → $(primary $ns $name)"
  note "sentinels 5 → 3: settled in $((t1 - t0)) ms, no stale sentinel left in any view (each counts 3); $(echo $r | awk '{print $1}') CKQUORUM rounds: a failover possible at each, $(echo $r | awk '{print $3}') with a sentinel not OK (the one just reset)"
}
