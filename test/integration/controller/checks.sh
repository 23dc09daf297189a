# Sourced by test/integration/controller/lib.sh: the checks of controller.sh. Each runs
# in a subshell of `check` (its output is shown only when it fails), in its own
# namespace, and echoes its figures as "info" lines through $W/info (printed by the
# parent after the check).

note() { echo "$*" >>"$W/info"; }

t_process() {
  curl -sf "http://127.0.0.1:$HPORT/healthz" | grep -q ok || fail "no /healthz"
  leading "$HPORT" || fail "/readyz does not say leading"
  curl -sf "http://127.0.0.1:$MPORT/metrics" | grep -q '^redis_operator_leader 1' ||
    fail "no redis_operator_leader 1 in /metrics"
  $K -n "$OPNS" get lease redis-operator-leader -o jsonpath='{.spec.holderIdentity}' | grep -q . ||
    fail "the leader Lease has no holder"
}

# owned NS KIND NAME: exists, owned by a RedisCluster (controller, blockOwnerDeletion), labelled
owned() {
  local j; j=$($K -n "$1" get "$2" "$3" -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].controller}/{.metadata.ownerReferences[0].blockOwnerDeletion}/{.metadata.labels.app\.kubernetes\.io/managed-by}')
  [ "$j" = "RedisCluster/true/true/redis-operator" ] || fail "$2/$3: $j"
}

t_one() {
  local ns=$RUN-one t0 t1 o
  newns $ns
  t0=$(ms); mkcluster $ns one 1
  poll 90 ready $ns one || fail "not Ready: $(rc $ns one '{.status.phase} {.status.phaseReason}')"
  t1=$(ms)
  note "time to Ready, 1 instance: $((t1 - t0)) ms (status.timeToReadySeconds $(rc $ns one '{.status.timeToReadySeconds}'))"
  poll 10 write_via_leader $ns one || fail "no write through one-leader"
  for o in serviceaccount/one role/one rolebinding/one secret/one-auth secret/one-operator \
           service/one-leader service/one-replica service/one-any lease/one-primary pvc/one-1 pod/one-1; do
    owned $ns "${o%/*}" "${o#*/}" || return 1
  done
  [ "$(count $ns pdb one)" = 0 ] || fail "a PDB for one instance"
  [ "$($K -n $ns get pod one-1 -o jsonpath='{.metadata.labels.redis\.io/role}')" = primary ] || fail "role label"
  $K -n $ns get pod one-1 -o jsonpath='{.metadata.annotations.redis\.io/spec-hash}' | grep -qE '^[0-9a-f]{16}$' || fail "no spec hash"
}

t_three() {
  local ns=$RUN-three t0 t1
  newns $ns
  t0=$(ms); mkcluster $ns three 3
  poll 120 ready $ns three || fail "not Ready: $(rc $ns three '{.status.phase} {.status.readyInstances}')"
  t1=$(ms)
  note "time to Ready, 3 instances: $((t1 - t0)) ms (status.timeToReadySeconds $(rc $ns three '{.status.timeToReadySeconds}'))"
  poll 10 write_via_leader $ns three || fail "no write through three-leader"
  [ "$(rc $ns three '{.status.instancesStatus[*].link}' | tr ' ' '\n' | grep -c up)" = 2 ] ||
    fail "replicas not streaming: $(rc $ns three '{.status.instancesStatus}')"
  [ "$($K -n $ns get pods -l redis.io/cluster=three,redis.io/role=primary -o name | wc -l)" = 1 ] || fail "primary labels"
  [ "$($K -n $ns get pods -l redis.io/cluster=three,redis.io/role=replica -o name | wc -l)" = 2 ] || fail "replica labels"
  owned $ns pdb three-primary && owned $ns pdb three-replica || return 1
  [ "$($K -n $ns get pdb three-replica -o jsonpath='{.spec.minAvailable}')" = 1 ] || fail "replica PDB minAvailable"
  [ "$($K -n $ns get pod three-2 -o jsonpath='{.spec.securityContext.runAsNonRoot}/{.spec.containers[0].securityContext.readOnlyRootFilesystem}')" = true/true ] ||
    fail "pod security context"
}

# failover NS NAME TAG HOW: HOW kill|delete of the primary while the writer runs
failover() {
  local ns=$1 name=$2 tag=$3 how=$4 old oldip t0 t1 pid
  newns $ns
  mkcluster $ns $name 3
  poll 120 ready $ns $name || fail "not Ready"
  old=$(primary $ns $name); oldip=$(pod_ip $ns $old)
  writer $ns $name $tag 90
  sleep 2
  if [ "$how" = kill ]; then
    pid=$(server_hostpid $ns $old) || fail "no redis-server in $old"
    kill -9 "$pid"; t0=$(ms)
  else
    t0=$(ms); $K -n $ns delete pod "$old" --wait=false >/dev/null
  fi
  poll 60 write_via_leader $ns $name "$oldip" || { wstop $tag; fail "no write through $name-leader after the failover"; }
  t1=$(ms)
  note "failover ($how of the primary) -> first write through $name-leader: $((t1 - t0)) ms (lastFailover.durationMs $(rc $ns $name '{.status.lastFailover.durationMs}'))"
  [ "$(primary $ns $name)" != "$old" ] || { wstop $tag; fail "currentPrimary did not move"; }
  poll 120 ready $ns $name || { wstop $tag; fail "not Ready again: $(rc $ns $name '{.status.phase}')"; }
  sleep 1
  wstop $tag >"$W/$tag.result" || fail "writer: $(cat $W/$tag.result)"
  note "writer through the $how failover: $(cat $W/$tag.result)"
  [ "$(inst $ns $old | jq -r .state)" = replica ] || fail "$old did not rejoin as a replica"
  events $ns | grep -q FailoverCompleted || fail "no FailoverCompleted event"
}
t_failover_kill() { failover $RUN-fokill fk fk kill; }
t_failover_delete() { failover $RUN-fodel fd fd delete; }

t_switchover() {
  local ns=$RUN-sw old target t0 t1
  newns $ns
  mkcluster $ns sw 3
  poll 120 ready $ns sw || fail "not Ready"
  old=$(primary $ns sw)
  target=$($K -n $ns get pods -l redis.io/cluster=sw,redis.io/role=replica -o jsonpath='{.items[0].metadata.name}')
  writer $ns sw sw 60
  sleep 2
  t0=$(ms); $K -n $ns annotate rediscluster sw "redis.io/switchover-to=$target" >/dev/null
  poll 30 eval '[ "$(leader_ip '$ns' sw)" = "$(pod_ip '$ns' '$target')" ]' || { wstop sw; fail "leader did not move to $target"; }
  t1=$(ms)
  note "switchover $old -> $target: leader endpoint moved in $((t1 - t0)) ms; write pause (instance manager) $(curl -s http://127.0.0.1:$MPORT/metrics | awk '/^redis_operator_switchover_write_pause_seconds_sum/ {s=$2} /^redis_operator_switchover_write_pause_seconds_count/ {n=$2} END {if (n) printf "%.1f ms average over %d", s*1000/n, n}')"
  [ "$(primary $ns sw)" = "$target" ] || { wstop sw; fail "currentPrimary is not $target"; }
  poll 20 eval '[ -z "$(rc '$ns' sw "{.metadata.annotations.redis\.io/switchover-to}")" ]' || { wstop sw; fail "annotation not removed"; }
  poll 60 ready $ns sw || { wstop sw; fail "not Ready after"; }
  wstop sw >"$W/sw.result" || fail "writer: $(cat $W/sw.result)"
  note "writer through the switchover: $(cat $W/sw.result)"
}

snapshot() { # NS NAME: "pod uid server-pid restarts" per pod
  local p
  for p in $($K -n $1 get pods -l redis.io/cluster=$2 -o jsonpath='{.items[*].metadata.name}'); do
    echo "$p $($K -n $1 get pod $p -o jsonpath='{.metadata.uid}') $(inst $1 $p | jq -r '"\(.server.pid) \(.server.restarts)"')"
  done
}
maxmemory_is() { # NS NAME BYTES
  local p
  for p in $($K -n $1 get pods -l redis.io/cluster=$2 -o jsonpath='{.items[*].metadata.name}'); do
    [ "$(opcli $1 $2 $p CONFIG GET maxmemory | tail -1)" = "$3" ] || return 1
  done
}

t_live() {
  local ns=$RUN-live before after t0
  newns $ns
  mkcluster $ns live 3
  poll 120 ready $ns live || fail "not Ready"
  before=$(snapshot $ns live)
  t0=$(ms); $K -n $ns patch rediscluster live --type=merge -p '{"spec":{"memory":{"maxMemory":"100Mi"}}}' >/dev/null
  poll 30 maxmemory_is $ns live 104857600 || fail "maxmemory not applied everywhere"
  note "live maxmemory change applied on 3 instances in $(( $(ms) - t0 )) ms"
  after=$(snapshot $ns live)
  [ "$before" = "$after" ] || fail "pods or servers restarted: before [$before] after [$after]"
  events $ns | grep -q ConfigApplied || fail "no ConfigApplied event"
}

hashes_all() { # NS NAME HASH: every pod carries HASH
  [ "$($K -n $1 get pods -l redis.io/cluster=$2 -o jsonpath='{range .items[*]}{.metadata.annotations.redis\.io/spec-hash}{"\n"}{end}' | sort -u)" = "$3" ]
}
databases_is() {
  local p
  for p in $($K -n $1 get pods -l redis.io/cluster=$2 -o jsonpath='{.items[*].metadata.name}'); do
    [ "$(opcli $1 $2 $p CONFIG GET databases | tail -1)" = "$3" ] || return 1
  done
}

t_rolling() {
  local ns=$RUN-roll old h0 t0
  newns $ns
  mkcluster $ns roll 3
  poll 120 ready $ns roll || fail "not Ready"
  old=$(primary $ns roll)
  h0=$($K -n $ns get pod $old -o jsonpath='{.metadata.annotations.redis\.io/spec-hash}')
  t0=$(ms); $K -n $ns patch rediscluster roll --type=merge -p '{"spec":{"redis":{"databases":"20"}}}' >/dev/null
  poll 180 eval 'databases_is '$ns' roll 20 && ready '$ns' roll && ! hashes_all '$ns' roll '$h0' && [ "$(count '$ns' pods roll)" = 3 ]' ||
    fail "rolling update did not finish: $(rc $ns roll '{.status.phase} {.status.phaseReason}')"
  note "rolling update of 3 instances (databases 16 -> 20): $(( $(ms) - t0 )) ms, primary $old -> $(primary $ns roll)"
  [ "$(primary $ns roll)" != "$old" ] || fail "the primary was not switched over"
  events $ns | grep -q RollingUpdate || fail "no RollingUpdate event"
  poll 10 write_via_leader $ns roll || fail "no write after the update"
}

t_scale() {
  local ns=$RUN-scale p0
  newns $ns
  mkcluster $ns sc 3
  poll 120 ready $ns sc || fail "not Ready"
  p0=$(primary $ns sc)
  $K -n $ns scale rediscluster sc --replicas=5 >/dev/null
  poll 120 eval 'ready '$ns' sc && [ "$(count '$ns' pods sc)" = 5 ]' || fail "not 5 ready: $(rc $ns sc '{.status.readyInstances}')"
  $K -n $ns scale rediscluster sc --replicas=2 >/dev/null
  poll 120 eval 'ready '$ns' sc && [ "$(count '$ns' pods sc)" = 2 ] && [ "$(count '$ns' pvc sc)" = 2 ]' ||
    fail "not 2: pods $(count $ns pods sc) pvcs $(count $ns pvc sc)"
  [ "$(primary $ns sc)" = "$p0" ] || fail "primary changed"
  [ "$($K -n $ns get pods -l redis.io/cluster=sc -o jsonpath='{.items[*].metadata.name}')" = "sc-1 sc-2" ] ||
    fail "kept $($K -n $ns get pods -l redis.io/cluster=sc -o jsonpath='{.items[*].metadata.name}')"
  poll 10 write_via_leader $ns sc || fail "no write"
}

none_left() {
  local k
  for k in pods pvc services secrets serviceaccounts roles rolebindings leases pdb networkpolicies; do
    [ "$(count $1 $k $2)" = 0 ] || return 1
  done
}
t_delete() {
  local ns=$RUN-one
  $K -n $ns delete rediscluster one --wait=false >/dev/null
  poll 90 none_left $ns one || fail "left: $($K -n $ns get all,pvc,secrets,sa,roles,rolebindings,leases -l redis.io/cluster=one -o name)"
}

# auth NS NAME IP PASSWORD: AUTH as default with PASSWORD answers OK
auth_ok() { [ "$(timeout 3 redis-cli -h "$3" --no-auth-warning AUTH "$4" 2>&1)" = OK ]; }
all_auth() { # NS NAME PASSWORD WANT(ok|fail)
  local ip
  for ip in $(pod_ips $1 $2); do
    if [ "$4" = ok ]; then auth_ok $1 $2 $ip "$3" || return 1; else ! auth_ok $1 $2 $ip "$3" || return 1; fi
  done
}
conn_password() { $K -n $1 get secret "$2" -o jsonpath='{.data.password}' | base64 -d; }

t_password() {
  local ns=$RUN-pw old new t0 rv
  newns $ns
  mkcluster $ns pw 2 "  connectionSecret: {name: pw-conn}"
  poll 120 ready $ns pw || fail "not Ready"
  poll 20 eval '[ -n "$(rc '$ns' pw "{.status.secretsResourceVersion.pw-auth}")" ]' || fail "secretsResourceVersion not recorded"
  old=$(secret $ns pw-auth); new=rotated-$RANDOM-$RANDOM
  [ "$(conn_password $ns pw-conn)" = "$old" ] || fail "connection Secret does not hold the password"
  t0=$(ms)
  $K -n $ns patch secret pw-auth --type=merge -p "{\"stringData\":{\"password\":\"$new\"}}" >/dev/null
  rv=$($K -n $ns get secret pw-auth -o jsonpath='{.metadata.resourceVersion}')
  poll 30 all_auth $ns pw "$new" ok || fail "the new password is not accepted everywhere"
  all_auth $ns pw "$old" ok || fail "the old password stopped working before the grace"
  note "auth Secret rotated: new password accepted on every instance after $(( $(ms) - t0 )) ms, old one still valid"
  poll 20 eval '[ "$(conn_password '$ns' pw-conn)" = "'$new'" ]' || fail "connection Secret not updated"
  poll 60 all_auth $ns pw "$old" fail || fail "the old password is still accepted after the grace"
  all_auth $ns pw "$new" ok || fail "the new password stopped working"
  [ "$(rc $ns pw '{.status.secretsResourceVersion.pw-auth}')" = "$rv" ] || fail "secretsResourceVersion not updated"
  note "old password dropped everywhere $(( $(ms) - t0 )) ms after the change (grace 10s)"
  events $ns | grep -q PasswordRotated || fail "no PasswordRotated event"
}

t_resume() {
  local ns=$RUN-resume old target now
  newns $ns
  mkcluster $ns rs 3
  poll 120 ready $ns rs || fail "not Ready"
  old=$(primary $ns rs)
  target=$($K -n $ns get pods -l redis.io/cluster=rs,redis.io/role=replica -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\n' | sort | tail -1)
  [ "$(stop_controller main)" = 0 ] || fail "controller did not stop cleanly"
  kill -9 "$(server_hostpid $ns $old)"
  poll 20 eval '[ "$(inst '$ns' '$old' | jq -r .fenced)" = true ]' || fail "$old did not fence itself"
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  $K -n $ns patch rediscluster rs --subresource=status --type=merge -p "{\"status\":{\"failover\":{\"phase\":\"Promoting\",\"from\":\"$old\",\"to\":\"$target\",\"reason\":\"test: resumed\",\"startedAt\":\"$now\"}}}" >/dev/null
  [ "$(rc $ns rs '{.status.failover.to}')" = "$target" ] || fail "status.failover was not stored (CRD schema?)"
  start_controller || fail "controller did not start again"
  poll 60 eval '[ "$(primary '$ns' rs)" = "'$target'" ]' || fail "not resumed: primary $(primary $ns rs)"
  poll 60 ready $ns rs || fail "not Ready after the resumed failover"
  [ "$(rc $ns rs '{.status.lastFailover.reason}')" = "test: resumed" ] || fail "lastFailover: $(rc $ns rs '{.status.lastFailover}')"
  [ -z "$(rc $ns rs '{.status.failover}')" ] || fail "status.failover not cleared"
  note "failover resumed from status.failover (Promoting $old -> $target) by a restarted controller"
}

t_lease_lost() {
  local hp=$((HPORT + 2)) code
  leading $hp || fail "the standby does not lead"
  $K -n "$OPNS" patch lease redis-operator-leader --type=merge \
    -p "{\"spec\":{\"holderIdentity\":\"thief\",\"renewTime\":\"$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)\"}}" >/dev/null
  poll 15 test -s "$W/ctl-standby.exit" || fail "the controller kept running without its Lease"
  code=$(cat "$W/ctl-standby.exit")
  [ "$code" = 1 ] || fail "exit code $code, want 1"
  grep -q "leader lease lost" "$W/controller-standby.log" || fail "no log line"
}

t_standby() {
  local hp=$((HPORT + 2)) mp=$((HPORT + 3)) t0 rc
  controller standby $hp $mp
  poll 20 curl -sf "http://127.0.0.1:$hp/readyz" || fail "standby not ready"
  ! leading $hp || fail "two leaders"
  t0=$(ms); rc=$(stop_controller main)
  [ "$rc" = 0 ] || fail "the stopped leader exited '$rc'"
  poll 20 leading $hp || fail "the standby did not take over"
  note "leader stopped -> standby leading in $(( $(ms) - t0 )) ms (Lease released on shutdown)"
  mkcluster $RUN-three three 3 "  memory: {maxMemory: 50Mi}"
  poll 30 maxmemory_is $RUN-three three 52428800 || fail "the new leader does not reconcile"
}

t_deployed() {
  local ns=$RUN-dep d=$W/kz rel
  stop_controller main >/dev/null; stop_controller standby >/dev/null
  mkdir -p $d
  rel=$(python3 -c "import os,sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))" "$(pwd)/config/default" "$d")
  cat >$d/kustomization.yaml <<Y
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $rel
patches:
- target: {kind: Deployment, name: redis-operator}
  patch: |-
    - op: add
      path: /spec/template/spec/tolerations
      value: [{key: $TAINT_KEY, operator: Equal, value: $RUN, effect: NoSchedule}]
    - op: add
      path: /spec/template/spec/nodeSelector
      value: {kubernetes.io/hostname: $NODE}
    - op: add
      path: /spec/template/spec/containers/0/env/-
      value: {name: REDIS_OPERATOR_CLUSTER_SELECTOR, value: "redis-operator.test/run=$RUN"}
Y
  echo yes >"$W/deployed"
  $K apply -k $d >"$W/apply.out" 2>&1 || fail "apply -k: $(tail -3 $W/apply.out)"
  poll 120 eval '[ "$($K -n redis-operator-system get deployment redis-operator -o jsonpath="{.status.availableReplicas}")" = 1 ]' ||
    fail "operator Deployment not available: $($K -n redis-operator-system get pods -o wide)"
  newns $ns
  mkcluster $ns dep 1
  poll 90 ready $ns dep || fail "not Ready through the deployed operator: $(rc $ns dep '{.status.phase}')"
  poll 10 write_via_leader $ns dep || fail "no write"
  owned $ns role dep || return 1
  $K -n redis-operator-system get lease redis-operator-leader -o jsonpath='{.spec.holderIdentity}' | grep -q '^redis-operator-' ||
    fail "the leader Lease is not held by the operator pod"
  $K -n redis-operator-system delete deployment redis-operator --wait=false >/dev/null
}
