# Sourced by test/integration/controller/lib.sh: the checks of controller.sh. Each runs
# in a subshell of `check` (its output is shown only when it fails), in its own
# namespace, and echoes its figures as "info" lines through $W/info (printed by the
# parent after the check).

note() { echo "$*" >>"$W/info"; }

t_process() {
  curl -sf "http://127.0.0.1:$HPORT/healthz" | grep -q ok || fail "no /healthz"
  leading "$HPORT" || fail "/readyz does not say leading"
  grep -q '^redis_operator_leader 1' <<<"$(curl -sf "http://127.0.0.1:$MPORT/metrics")" ||
    fail "no redis_operator_leader 1 in /metrics"
  $K -n "$OPNS" get lease redis-operator-leader -o jsonpath='{.spec.holderIdentity}' | grep -q . ||
    fail "the leader Lease has no holder"
  # the workload profile (controller/profile.h): a fresh environment is small; the suite
  # sets no tunable, so every value is the profile's
  grep -qE '^redis_operator_workload_info\{profile="small",workers="4",kube_api_qps="50",kube_api_burst="100"\} 1' \
    <<<"$(curl -sf "http://127.0.0.1:$MPORT/metrics")" ||
    fail "no small workload profile in /metrics: $(curl -sf "http://127.0.0.1:$MPORT/metrics" | grep workload_info)"
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
  # three-leader has no selector: its one EndpointSlice is the controller's, on the primary
  [ -z "$($K -n $ns get service three-leader -o jsonpath='{.spec.selector}')" ] || fail "three-leader has a selector"
  owned $ns endpointslice three-leader || return 1
  [ "$($K -n $ns get endpointslices -l kubernetes.io/service-name=three-leader -o jsonpath='{.items[*].metadata.labels.endpointslice\.kubernetes\.io/managed-by}')" = redis-operator ] ||
    fail "three-leader EndpointSlices: $($K -n $ns get endpointslices -l kubernetes.io/service-name=three-leader -o name)"
  [ "$(leader_ip $ns three)" = "$(pod_ip $ns "$(primary $ns three)")" ] || fail "three-leader is not on the primary"
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

# switchover NS NAME: to the first replica while the writer runs
switchover() {
  local ns=$1 sw=$2 old target t0 t1
  newns $ns
  mkcluster $ns $sw 3
  poll 120 ready $ns $sw || fail "not Ready"
  old=$(primary $ns $sw)
  target=$($K -n $ns get pods -l redis.io/cluster=$sw,redis.io/role=replica -o jsonpath='{.items[0].metadata.name}')
  writer $ns $sw $sw 60
  sleep 2
  t0=$(ms); $K -n $ns annotate rediscluster $sw "redis.io/switchover-to=$target" >/dev/null
  poll 30 eval '[ "$(leader_ip '$ns' '$sw')" = "$(pod_ip '$ns' '$target')" ]' || { wstop $sw; fail "leader did not move to $target"; }
  t1=$(ms)
  note "switchover $old -> $target: leader endpoint moved in $((t1 - t0)) ms; write pause (instance manager) $(curl -s http://127.0.0.1:$MPORT/metrics | awk '/^redis_operator_switchover_write_pause_seconds_sum/ {s=$2} /^redis_operator_switchover_write_pause_seconds_count/ {n=$2} END {if (n) printf "%.1f ms average over %d", s*1000/n, n}')"
  [ "$(primary $ns $sw)" = "$target" ] || { wstop $sw; fail "currentPrimary is not $target"; }
  poll 20 eval '[ -z "$(rc '$ns' '$sw' "{.metadata.annotations.redis\.io/switchover-to}")" ]' || { wstop $sw; fail "annotation not removed"; }
  poll 60 ready $ns $sw || { wstop $sw; fail "not Ready after"; }
  wstop $sw >"$W/$sw.result" || fail "writer: $(cat $W/$sw.result)"
  note "writer through the switchover: $(cat $W/$sw.result)"
}

t_switchover() { switchover $RUN-sw sw; }

snapshot() { # NS NAME: "pod uid server-pid restarts" per pod
  local p
  for p in $($K -n $1 get pods -l redis.io/cluster=$2 -o jsonpath='{.items[*].metadata.name}'); do
    echo "$p $($K -n $1 get pod $p -o jsonpath='{.metadata.uid}') $(inst $1 $p | jq -r '"\(.server.pid) \(.server.restarts)"')"
  done
}
config_is() { # NS NAME DIRECTIVE VALUE: every pod's server has it
  local p
  for p in $($K -n $1 get pods -l redis.io/cluster=$2 -o jsonpath='{.items[*].metadata.name}'); do
    [ "$(opcli $1 $2 $p CONFIG GET $3 | tail -1)" = "$4" ] || return 1
  done
}

t_live() {
  local ns=$RUN-live before after t0
  newns $ns
  mkcluster $ns live 3
  poll 120 ready $ns live || fail "not Ready"
  before=$(snapshot $ns live)
  t0=$(ms); $K -n $ns patch rediscluster live --type=merge -p '{"spec":{"memory":{"maxMemory":"100Mi"}}}' >/dev/null
  poll 30 config_is $ns live maxmemory 104857600 || fail "maxmemory not applied everywhere"
  note "live maxmemory change applied on 3 instances in $(( $(ms) - t0 )) ms"
  after=$(snapshot $ns live)
  [ "$before" = "$after" ] || fail "pods or servers restarted: before [$before] after [$after]"
  events $ns | grep -q ConfigApplied || fail "no ConfigApplied event"
}

hashes_all() { # NS NAME HASH: every pod carries HASH
  [ "$($K -n $1 get pods -l redis.io/cluster=$2 -o jsonpath='{range .items[*]}{.metadata.annotations.redis\.io/spec-hash}{"\n"}{end}' | sort -u)" = "$3" ]
}

# rolling NS NAME [WRITE]: a restart-tier change; WRITE=yes runs the WAIT-1 writer through it
rolling() {
  local ns=$1 roll=$2 old h0 t0
  newns $ns
  mkcluster $ns $roll 3
  poll 120 ready $ns $roll || fail "not Ready"
  old=$(primary $ns $roll)
  h0=$($K -n $ns get pod $old -o jsonpath='{.metadata.annotations.redis\.io/spec-hash}')
  [ "${3:-}" = yes ] && writer_follow $ns $roll $roll 240
  t0=$(ms); $K -n $ns patch rediscluster $roll --type=merge -p '{"spec":{"redis":{"databases":"20"}}}' >/dev/null
  poll 180 eval 'config_is '$ns' '$roll' databases 20 && ready '$ns' '$roll' && ! hashes_all '$ns' '$roll' '$h0' && [ "$(count '$ns' pods '$roll')" = 3 ]' ||
    { [ "${3:-}" = yes ] && wstop $roll; fail "rolling update did not finish: $(rc $ns $roll '{.status.phase} {.status.phaseReason}')"; }
  note "rolling update of 3 instances (databases 16 -> 20): $(( $(ms) - t0 )) ms, primary $old -> $(primary $ns $roll)"
  if [ "${3:-}" = yes ]; then
    wstop $roll >"$W/$roll.result" || fail "writer: $(cat $W/$roll.result)"
    note "writer through the rolling update: $(cat $W/$roll.result)"
  fi
  [ "$(primary $ns $roll)" != "$old" ] || fail "the primary was not switched over"
  events $ns | grep -q RollingUpdate || fail "no RollingUpdate event"
  poll 10 write_via_leader $ns $roll || fail "no write after the update"
}
t_rolling() { rolling $RUN-roll roll; }

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
  [ -z "$(rc $ns sc '{.status.danglingPVCs}')" ] || fail "danglingPVCs after the scale down: $(rc $ns sc '{.status.danglingPVCs}')"
  # a PVC labelled for the cluster that no pod mounts and the controller never reuses
  $K -n $ns apply -f - >/dev/null <<Y || fail "cannot create a PVC"
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: sc-restored, labels: {app.kubernetes.io/managed-by: redis-operator, redis.io/cluster: sc}}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Mi}}}
Y
  poll 20 eval '[ "$(rc '$ns' sc "{.status.danglingPVCs[*]}")" = sc-restored ]' ||
    fail "sc-restored not in status.danglingPVCs: '$(rc $ns sc '{.status.danglingPVCs}')'"
  [ "$(count $ns pods sc)" = 2 ] && [ "$(count $ns pvc sc)" = 3 ] || fail "the controller acted on sc-restored"
  $K -n $ns delete pvc sc-restored --wait=false >/dev/null
  poll 30 eval '[ -z "$(rc '$ns' sc "{.status.danglingPVCs}")" ]' || fail "danglingPVCs not cleared"
  # a pod made by hand with the cluster's labels (no owner reference; it never schedules):
  # not the cluster's, so not counted, relabelled or removed by the scale-down; reported
  $K -n $ns apply -f - >/dev/null <<Y || fail "cannot create a pod"
apiVersion: v1
kind: Pod
metadata: {name: sc-7, labels: {app.kubernetes.io/managed-by: redis-operator, redis.io/cluster: sc, redis.io/role: primary}}
spec:
  nodeSelector: {redis-operator.test/no-such-node: "true"}
  securityContext: {runAsNonRoot: true, runAsUser: 999, seccompProfile: {type: RuntimeDefault}}
  containers: [{name: c, image: busybox, command: [sleep, "3600"], securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}]
Y
  poll 20 eval '[ "$(rc '$ns' sc "{.status.foreignPods[*]}")" = sc-7 ]' ||
    fail "sc-7 not in status.foreignPods: '$(rc $ns sc '{.status.foreignPods}')'"
  poll 10 eval 'events '$ns' | grep -q ForeignPod' || fail "no ForeignPod event"
  ready $ns sc && [ "$(rc $ns sc '{.status.instances}')" = 2 ] || fail "counted: $(rc $ns sc '{.status.instances}')"
  [ "$($K -n $ns get pod sc-7 -o jsonpath='{.metadata.labels.redis\.io/role}/{.metadata.deletionTimestamp}')" = primary/ ] ||
    fail "the controller acted on sc-7"
  $K -n $ns delete pod sc-7 --wait=false >/dev/null
  poll 30 eval '[ -z "$(rc '$ns' sc "{.status.foreignPods}")" ]' || fail "foreignPods not cleared"
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
# shellcheck disable=SC2086
auth_ok() { [ "$(timeout 3 redis-cli ${CLI_TLS:-} -h "$3" --no-auth-warning AUTH "$4" 2>&1)" = OK ]; }
all_auth() { # NS NAME PASSWORD WANT(ok|fail)
  local ip
  for ip in $(pod_ips $1 $2); do
    if [ "$4" = ok ]; then auth_ok $1 $2 $ip "$3" || return 1; else ! auth_ok $1 $2 $ip "$3" || return 1; fi
  done
}
conn_password() { $K -n $1 get secret "$2" -o jsonpath='{.data.password}' | base64 -d; }

# password NS NAME: the auth Secret rotated; old and new valid, then the old dropped
password() {
  local ns=$1 pw=$2 old new t0 rv
  newns $ns
  mkcluster $ns $pw 2 "  connectionSecret: {name: $pw-conn}"
  poll 120 ready $ns $pw || fail "not Ready"
  poll 20 eval '[ -n "$(rc '$ns' '$pw' "{.status.secretsResourceVersion.$pw-auth}")" ]' || fail "secretsResourceVersion not recorded"
  old=$(secret $ns $pw-auth); new=rotated-$RANDOM-$RANDOM
  [ "$(conn_password $ns $pw-conn)" = "$old" ] || fail "connection Secret does not hold the password"
  t0=$(ms)
  $K -n $ns patch secret $pw-auth --type=merge -p "{\"stringData\":{\"password\":\"$new\"}}" >/dev/null
  rv=$($K -n $ns get secret $pw-auth -o jsonpath='{.metadata.resourceVersion}')
  poll 30 all_auth $ns $pw "$new" ok || fail "the new password is not accepted everywhere"
  all_auth $ns $pw "$old" ok || fail "the old password stopped working before the grace"
  note "auth Secret rotated: new password accepted on every instance after $(( $(ms) - t0 )) ms, old one still valid"
  poll 20 eval '[ "$(conn_password '$ns' '$pw'-conn)" = "'$new'" ]' || fail "connection Secret not updated"
  poll 60 all_auth $ns $pw "$old" fail || fail "the old password is still accepted after the grace"
  all_auth $ns $pw "$new" ok || fail "the new password stopped working"
  [ "$(rc $ns $pw "{.status.secretsResourceVersion.$pw-auth}")" = "$rv" ] || fail "secretsResourceVersion not updated"
  note "old password dropped everywhere $(( $(ms) - t0 )) ms after the change (grace 10s)"
  events $ns | grep -q PasswordRotated || fail "no PasswordRotated event"
}
t_password() { password $RUN-pw pw; }

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
  poll 25 test -s "$W/ctl-standby.exit" || fail "the controller kept running without its Lease"
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
  poll 30 config_is $RUN-three three maxmemory 52428800 || fail "the new leader does not reconcile"
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
- target: {kind: ConfigMap, name: redis-operator-config}
  patch: |-
    - op: add
      path: /data
      value: {REDIS_OPERATOR_STATUS_REFRESH: "7s", REDIS_OPERATOR_LOG_FORMAT: logfmt, REDIS_OPERATOR_IMAGE: "configmap-loses:0"}
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
  settings_from_configmap || return 1
  $K -n redis-operator-system delete deployment/redis-operator configmap/redis-operator-config --wait=false >/dev/null
}

# The operator pod's start-up line shows what came from redis-operator-config (envFrom):
# logfmt and status-refresh=7s; the Deployment's own env IMAGE wins over the ConfigMap's.
settings_from_configmap() {
  local pod line
  pod=$($K -n redis-operator-system get pods -l app.kubernetes.io/name=redis-operator \
    --field-selector "spec.nodeName=$NODE" -o jsonpath='{.items[0].metadata.name}')
  line=$("$BUILD/nodeagent" logs --state-dir "$W/na" "redis-operator-system/$pod" manager 2>&1 | grep -m1 'msg=starting')
  [ -n "$line" ] || fail "no logfmt 'msg=starting' line in $pod's log (REDIS_OPERATOR_LOG_FORMAT from the ConfigMap)"
  grep -q 'status-refresh=7s' <<<"$line" || fail "status-refresh from the ConfigMap not in force: $line"
  grep -q "image=redis-operator:$(sed -n 's/^ *newTag: *//p' config/manager/kustomization.yaml) " <<<"$line" ||
    fail "the ConfigMap overrode the Deployment's env: $line"
  note "settings ConfigMap: $pod started with $(grep -o 'status-refresh=7s' <<<"$line"), log-format=logfmt; env IMAGE kept over the ConfigMap's"
}

# --- supervised primary update, hibernation, emptyDir, storage growth ----------------------

hash_of() { $K -n $1 get pod $2 -o jsonpath='{.metadata.annotations.redis\.io/spec-hash}' 2>/dev/null; }
uid_of() { $K -n $1 get pod $2 -o jsonpath='{.metadata.uid}' 2>/dev/null; }
# awaiting_approval NS NAME PRIMARY OLD-HASH: every replica rolled out and ready, the
# primary still on OLD-HASH, the status waiting for the user
awaiting_approval() {
  local p n=0
  [ "$(rc $1 $2 '{.status.phase}')" = "Waiting for the user to approve the primary's update" ] || return 1
  for p in $($K -n $1 get pods -l redis.io/cluster=$2 -o jsonpath='{.items[*].metadata.name}'); do
    n=$((n + 1))
    [ "$p" = "$3" ] && continue
    [ "$(hash_of $1 $p)" != "$4" ] || return 1
  done
  [ $n = "$(rc $1 $2 '{.spec.instances}')" ] && [ "$(rc $1 $2 '{.status.readyInstances}')" = $n ]
}

t_supervised() {
  local ns=$RUN-sup old uid h0 h1 t0 t1 r
  newns $ns
  mkcluster $ns sup 3 "  primaryUpdateStrategy: supervised"
  poll 120 ready $ns sup || fail "not Ready"
  old=$(primary $ns sup); uid=$(uid_of $ns $old); h0=$(hash_of $ns $old)
  t0=$(ms); $K -n $ns patch rediscluster sup --type=merge -p '{"spec":{"redis":{"databases":"20"}}}' >/dev/null
  poll 180 awaiting_approval $ns sup $old $h0 ||
    fail "replicas not rolled / not waiting: $(rc $ns sup '{.status.phase} {.status.readyInstances}')"
  t1=$(ms)
  note "supervised update: 2 replicas rolled in $((t1 - t0)) ms, then waiting for approval"
  [ "$(cond $ns sup Progressing)" = True ] || fail "Progressing is not True while waiting"
  rc $ns sup '{.status.phaseReason}' | grep -q 'redis.io/approve-primary-update=true' ||
    fail "phaseReason does not name the annotation: $(rc $ns sup '{.status.phaseReason}')"
  # it must keep waiting: nothing touches the primary without the annotation
  ! poll 8 eval '[ "$(primary '$ns' sup)" != "'$old'" ] || [ "$(uid_of '$ns' '$old')" != "'$uid'" ]' ||
    fail "the primary changed without approval"
  [ "$(hash_of $ns $old)" = "$h0" ] || fail "the primary was updated without approval"
  r=$($K -n $ns get pods -l redis.io/cluster=sup,redis.io/role=replica -o jsonpath='{.items[0].metadata.name}')
  h1=$(hash_of $ns $r)
  t0=$(ms); $K -n $ns annotate rediscluster sup redis.io/approve-primary-update=true >/dev/null
  poll 60 eval '[ "$(primary '$ns' sup)" != "'$old'" ]' || fail "no switchover after the approval"
  t1=$(ms)
  poll 120 eval 'ready '$ns' sup && hashes_all '$ns' sup '$h1' && [ "$(count '$ns' pods sup)" = 3 ]' ||
    fail "update not finished after the approval: $(rc $ns sup '{.status.phase}')"
  note "approved -> primary switched over $old -> $(primary $ns sup) in $((t1 - t0)) ms; all 3 on the new spec $(( $(ms) - t0 )) ms after the approval"
  poll 10 eval '[ -z "$(rc '$ns' sup "{.metadata.annotations.redis\.io/approve-primary-update}")" ]' ||
    fail "approval annotation not removed"
  [ "$(hash_of $ns $old)" = "$h1" ] || fail "the old primary was not updated"
  events $ns | grep -q SwitchoverCompleted || fail "no SwitchoverCompleted event"
  poll 10 write_via_leader $ns sup || fail "no write after the update"
}

t_hibernation() {
  local ns=$RUN-hib key=hib:$RANDOM p0 t0
  newns $ns
  mkcluster $ns hib 2
  poll 120 ready $ns hib || fail "not Ready"
  p0=$(primary $ns hib)
  poll 10 eval '[ "$(rcli "$(leader_ip '$ns' hib)" "$(secret '$ns' hib-auth)" SET '$key' kept)" = OK ]' ||
    fail "no write before hibernating"
  t0=$(ms); $K -n $ns annotate rediscluster hib redis.io/hibernation=on >/dev/null
  poll 60 eval '[ "$(count '$ns' pods hib)" = 0 ] && [ "$(rc '$ns' hib "{.status.phase}")" = Hibernated ]' ||
    fail "not hibernated: pods $(count $ns pods hib), phase $(rc $ns hib '{.status.phase}')"
  note "hibernation on: pods gone, phase Hibernated after $(( $(ms) - t0 )) ms"
  [ "$(count $ns pvc hib)" = 2 ] || fail "PVCs not kept: $(count $ns pvc hib)"
  [ "$(cond $ns hib Ready)" != True ] || fail "Ready while hibernated"
  events $ns | grep -q Hibernating || fail "no Hibernating event"
  t0=$(ms); $K -n $ns annotate --overwrite rediscluster hib redis.io/hibernation=off >/dev/null
  poll 120 ready $ns hib || fail "not Ready after waking: $(rc $ns hib '{.status.phase} {.status.readyInstances}')"
  note "hibernation off: Ready again after $(( $(ms) - t0 )) ms"
  [ "$(primary $ns hib)" = "$p0" ] || fail "primary $(primary $ns hib), was $p0"
  poll 10 eval '[ "$(rcli "$(leader_ip '$ns' hib)" "$(secret '$ns' hib-auth)" GET '$key')" = kept ]' ||
    fail "the key written before hibernating is gone"
  poll 10 write_via_leader $ns hib || fail "no write after waking"
}

# has_key NS NAME POD KEY VALUE: the pod's server answers VALUE for KEY
has_key() { [ "$(rcli "$(pod_ip $1 $3)" "$(secret $1 $2-auth)" GET "$4")" = "$5" ]; }

# new_pod NS NAME OLD-NAMES: the name of a pod of the cluster not in OLD-NAMES
new_pod() {
  local p
  for p in $($K -n $1 get pods -l redis.io/cluster=$2 -o jsonpath='{.items[*].metadata.name}'); do
    grep -qw "$p" <<<"$3" || { echo "$p"; return 0; }
  done
  return 1
}

t_emptydir() {
  local ns=$RUN-ed key=ed:$RANDOM p pods victim fresh t0
  newns $ns
  STORAGE='{type: emptyDir, size: 64Mi}' mkcluster $ns ed 3
  poll 120 ready $ns ed || fail "not Ready"
  [ "$(count $ns pvc ed)" = 0 ] || fail "PVCs exist with emptyDir storage"
  poll 10 eval '[ "$(rcli "$(leader_ip '$ns' ed)" "$(secret '$ns' ed-auth)" SET '$key' cached)" = OK ]' ||
    fail "no write"
  pods=$($K -n $ns get pods -l redis.io/cluster=ed -o jsonpath='{.items[*].metadata.name}')
  for p in $pods; do
    poll 10 has_key $ns ed $p $key cached || fail "$p does not have the key"
  done
  victim=$($K -n $ns get pods -l redis.io/cluster=ed,redis.io/role=replica -o jsonpath='{.items[0].metadata.name}')
  [ -n "$($K -n $ns get pod $victim -o jsonpath='{.spec.volumes[?(@.name=="data")].emptyDir}')" ] ||
    fail "$victim has no emptyDir data volume"
  # nothing keeps an emptyDir serial: the replacement gets the next one
  t0=$(ms); $K -n $ns delete pod $victim --wait=false >/dev/null
  poll 120 eval 'new_pod '$ns' ed "'"$pods"'" && ready '$ns' ed && [ "$(count '$ns' pods ed)" = 3 ]' ||
    fail "no replacement for $victim: $(rc $ns ed '{.status.phase} {.status.readyInstances}')"
  fresh=$(new_pod $ns ed "$pods")
  poll 20 has_key $ns ed $fresh $key cached || fail "the new $fresh did not resync the key"
  note "emptyDir replica $victim deleted -> $fresh created, resynced from the primary, Ready in $(( $(ms) - t0 )) ms"
  [ "$(inst $ns $fresh | jq -r .state)" = replica ] || fail "$fresh is not a replica"
  [ "$(count $ns pvc ed)" = 0 ] || fail "PVCs exist with emptyDir storage"
}

# pvcs_grown NS NAME SIZE: every PVC asks for SIZE and has it (status.capacity); records the
# cluster's phase at each try in $W/grow.phases
pvcs_grown() {
  local p
  rc $1 $2 '{.status.phase}' >>"$W/grow.phases"; echo >>"$W/grow.phases"
  for p in $($K -n $1 get pvc -l redis.io/cluster=$2 -o jsonpath='{.items[*].metadata.name}'); do
    [ "$($K -n $1 get pvc $p -o jsonpath='{.spec.resources.requests.storage}/{.status.capacity.storage}')" = "$3/$3" ] || return 1
  done
}

t_grow() {
  local ns=$RUN-grow before after t0 pv p
  newns $ns
  mkcluster $ns gr 2
  poll 120 ready $ns gr || fail "not Ready"
  before=$(snapshot $ns gr)
  : >"$W/grow.phases"
  t0=$(ms); $K -n $ns patch rediscluster gr --type=merge -p '{"spec":{"storage":{"size":"128Mi"}}}' >/dev/null
  poll 60 pvcs_grown $ns gr 128Mi || fail "PVCs not grown: $($K -n $ns get pvc -o jsonpath='{range .items[*]}{.metadata.name} {.spec.resources.requests.storage}/{.status.capacity.storage} {end}')"
  note "storage 64Mi -> 128Mi: both PVCs requested and at capacity in $(( $(ms) - t0 )) ms (phases seen: $(sort -u "$W/grow.phases" | grep . | paste -sd, -))"
  for p in gr-1 gr-2; do
    pv=$($K -n $ns get pvc $p -o jsonpath='{.spec.volumeName}')
    [ "$($K get pv $pv -o jsonpath='{.spec.capacity.storage}')" = 128Mi ] || fail "PV $pv of $p not grown"
  done
  poll 30 eval 'ready '$ns' gr && [ "$(rc '$ns' gr "{.status.phase}")" = Healthy ] && [ "$(cond '$ns' gr Progressing)" = False ]' ||
    fail "not Healthy after the resize: $(rc $ns gr '{.status.phase} {.status.phaseReason}')"
  after=$(snapshot $ns gr)
  [ "$before" = "$after" ] || fail "pods or servers restarted: before [$before] after [$after]"
  events $ns | grep -q StorageResized || fail "no StorageResized event"
  note "kube-controller-manager on a hostPath PV: $($K -n $ns get events --field-selector reason=ExternalExpanding -o jsonpath='{.items[0].message}' 2>/dev/null || echo 'no ExternalExpanding event')"
}

# --- the instance managers' API: HTTPS with client certificates (controller/pki.h) ---------

# tls_key NS SECRET KEY FILE: one key of a Secret into a file
tls_key() { $K -n "$1" get secret "$2" -o jsonpath="{.data.${3//./\\.}}" | base64 -d >"$4"; }
# post_code IP OP BODY [CURL-ARGS...]: the HTTP status of POST https://IP:8000/v1/OP (000: no answer)
post_code() {
  local ip=$1 op=$2 body=$3; shift 3
  curl -sk --max-time 3 -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -d "$body" "$@" "https://$ip:8000/v1/$op"
}

t_tls() {
  local ns=$RUN-tls d=$W/tls ip code sa
  newns $ns
  mkcluster $ns tls 1
  poll 90 ready $ns tls || fail "not Ready: $(rc $ns tls '{.status.phase} {.status.phaseReason}')"
  owned $ns secret tls-operator-tls && owned $ns secret tls-instance-tls || return 1
  mkdir -p "$d"
  tls_key $ns tls-instance-tls tls.crt "$d/server.crt"; tls_key $ns tls-instance-tls tls.key "$d/server.key"
  tls_key $ns tls-instance-tls peer.crt "$d/peer.crt"; tls_key $ns tls-instance-tls peer.key "$d/peer.key"
  tls_key $ns tls-operator-tls server-ca.crt "$d/server-ca.crt"
  tls_key $ns tls-operator-tls tls.crt "$d/op.crt"; tls_key $ns tls-operator-tls tls.key "$d/op.key"
  ip=$(pod_ip $ns tls-1)
  # reads stay open: status over HTTPS, from a server certificate of the cluster's server CA
  curl -sfk --max-time 3 "https://$ip:8000/v1/status" | jq -e '.role == "primary"' >/dev/null ||
    fail "GET https://$ip:8000/v1/status: $(curl -sk --max-time 3 "https://$ip:8000/v1/status")"
  openssl verify -CAfile "$d/server-ca.crt" "$d/server.crt" >/dev/null || fail "server certificate not from the server CA"
  code=$(curl -s --max-time 3 -o /dev/null -w '%{http_code}' "http://$ip:8000/healthz")
  [ "$code" = 000 ] || fail "plain HTTP still answers ($code)"
  # mutations: no client certificate, or the pod's own server certificate: 401
  code=$(post_code $ip fence '{"reason": "e2e t_tls"}'); [ "$code" = 401 ] || fail "POST /v1/fence without a client certificate: $code, want 401"
  code=$(post_code $ip fence '{"reason": "e2e t_tls"}' --cert "$d/server.crt" --key "$d/server.key")
  [ "$code" = 401 ] || fail "POST /v1/fence with the instance's own server certificate: $code, want 401"
  # the peer certificate every pod holds may only promote
  code=$(post_code $ip fence '{"reason": "e2e t_tls"}' --cert "$d/peer.crt" --key "$d/peer.key")
  [ "$code" = 403 ] || fail "POST /v1/fence with the peer certificate: $code, want 403"
  [ "$(inst $ns tls-1 | jq -r .fenced)" = false ] || fail "the primary got fenced"
  # the controller's certificate is accepted (unfence of an unfenced primary changes nothing)
  code=$(post_code $ip unfence '{}' --cert "$d/op.crt" --key "$d/op.key")
  [ "$code" = 200 ] || fail "POST /v1/unfence with the controller's certificate: $code, want 200"
  # the pods' service account reads no Secret through the API (their volumes hold
  # theirs: controller/rbac.c), least of all the operator's
  sa=system:serviceaccount:$ns:tls
  [ "$($K -n $ns auth can-i get secret/tls-instance-tls --as=$sa)" = no ] || fail "pods can read tls-instance-tls through the API"
  [ "$($K -n $ns auth can-i get secret/tls-operator-tls --as=$sa)" = no ] || fail "pods can read tls-operator-tls"
  ! grep -q 'PRIVATE KEY' "$W/controller-main.log" || fail "key material in the controller's log"
  note "TLS: status over HTTPS, fence refused without a client certificate (401), with the pod's server certificate (401), with the peer certificate (403); the controller's certificate accepted"
}

# fp FILE: a certificate's SHA-256 fingerprint as controller/pki.h records it (hex, lower case)
fp() { openssl x509 -noout -fingerprint -sha256 -in "$1" | sed 's/.*=//; s/://g' | tr A-F a-f; }
# served_by IP CA: the pod's HTTPS server certificate chains to CA
served_by() { openssl s_client -connect "$1:8000" -CAfile "$2" -verify_return_error </dev/null >/dev/null 2>&1; }
# polled NS NAME: Ready, and every instancesStatus entry has a known role and no message
polled() {
  ready "$1" "$2" && [ "$(rc "$1" "$2" '{.status.instancesStatus}' |
    jq '[.[] | select(.role == "unknown" or has("message"))] | length')" = 0 ]
}

# Deleting <cluster>-operator-tls heals without restarts (controller/pki.h, renewal): new
# CAs; the instance Secret is re-issued from them (its annotation names them); the
# managers reload their HTTPS files from the volume (server certificate and client CA);
# the controller's polls work again. Same pod uids, server pids and restarts.
t_tls_heal() {
  local ns=$RUN-tlsheal c=th d=$W/tlsheal before after want ip p t0 t1 gap=0
  newns $ns
  mkcluster $ns $c 2
  poll 120 ready $ns $c || fail "not Ready"
  mkdir -p "$d"
  tls_key $ns $c-operator-tls tls.crt "$d/old.crt"; tls_key $ns $c-operator-tls tls.key "$d/old.key"
  tls_key $ns $c-operator-tls server-ca.crt "$d/old-server-ca.crt"
  tls_key $ns $c-operator-tls client-ca.crt "$d/old-client-ca.crt"
  [ "$($K -n $ns get secret $c-instance-tls -o jsonpath='{.metadata.annotations.redis\.io/operator-ca}')" = \
    "$(fp "$d/old-server-ca.crt").$(fp "$d/old-client-ca.crt")" ] || fail "annotation redis.io/operator-ca does not name the operator Secret's CAs"
  before="$(primary $ns $c) $(snapshot $ns $c)"
  $K -n $ns delete secret $c-operator-tls >/dev/null; t0=$(ms)
  poll 30 eval '$K -n '$ns' get secret '$c'-operator-tls -o jsonpath="{.data.server-ca\.crt}" | grep -q .' || fail "operator Secret not made again"
  tls_key $ns $c-operator-tls server-ca.crt "$d/server-ca.crt"; tls_key $ns $c-operator-tls client-ca.crt "$d/client-ca.crt"
  tls_key $ns $c-operator-tls tls.crt "$d/op.crt"; tls_key $ns $c-operator-tls tls.key "$d/op.key"
  ! cmp -s "$d/server-ca.crt" "$d/old-server-ca.crt" || fail "the new operator Secret has the old server CA"
  want="$(fp "$d/server-ca.crt").$(fp "$d/client-ca.crt")"
  poll 30 eval '[ "$($K -n '$ns' get secret '$c'-instance-tls -o jsonpath="{.metadata.annotations.redis\.io/operator-ca}")" = '$want' ]' ||
    fail "instance Secret not re-issued from the new CAs"
  # the kubelet's projection delay, then the managers' --secret-poll-interval
  for p in $($K -n $ns get pods -l redis.io/cluster=$c -o jsonpath='{.items[*].metadata.name}'); do
    ip=$(pod_ip $ns $p)
    poll 120 served_by $ip "$d/server-ca.crt" || fail "$p does not serve a certificate of the new server CA"
    [ "$(post_code $ip unfence '{}' --cert "$d/op.crt" --key "$d/op.key")" = 200 ] || fail "$p refuses the controller's new certificate"
    [ "$(post_code $ip unfence '{}' --cert "$d/old.crt" --key "$d/old.key")" = 401 ] || fail "$p still trusts the old client CA"
  done
  poll 60 polled $ns $c || fail "polls not recovered: $(rc $ns $c '{.status.instancesStatus}')"
  t1=$(ms)
  after="$(primary $ns $c) $(snapshot $ns $c)"
  [ "$before" = "$after" ] || fail "primary changed or pods or servers restarted: before [$before] after [$after]"
  note "operator-tls deleted: instance Secret re-issued, both managers serve the new server CA and trust the new client CA, polls back $((t1 - t0)) ms after the deletion; primary, pods, server pids and restarts unchanged [$after]"
}

# backdated DIR CA-CRT CA-KEY CN EKU NAME: DIR/NAME.crt/.key, a leaf signed by the CA valid
# from 70 days ago to 20 days from now (of 90: past 2/3, so due for renewal)
backdated() {
  local d=$1 db=$1/ca-db
  mkdir -p "$db"; : >"$db/index.txt"; echo 01 >"$db/serial"
  cat >"$d/ca.cnf" <<C
[ca]
default_ca = c
[c]
database = $db/index.txt
serial = $db/serial
new_certs_dir = $db
default_md = sha256
policy = p
unique_subject = no
[p]
commonName = supplied
[ext]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = $5
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
C
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$4" \
    -keyout "$d/$6.key" -out "$d/$6.csr" 2>/dev/null &&
    openssl ca -batch -notext -config "$d/ca.cnf" -cert "$2" -keyfile "$3" -in "$d/$6.csr" \
      -out "$d/$6.crt" -extensions ext -startdate "$(date -u -d '-70 days' +%y%m%d%H%M%SZ)" \
      -enddate "$(date -u -d '+20 days' +%y%m%d%H%M%SZ)" 2>/dev/null
}
# put_pair NS SECRET NAME-IN-DIR DIR: data tls.crt/tls.key of SECRET := DIR/NAME.crt/.key
put_pair() {
  $K -n "$1" patch secret "$2" --type merge -p "{\"data\": {\"tls.crt\": \"$(base64 -w0 <"$4/$3.crt")\", \"tls.key\": \"$(base64 -w0 <"$4/$3.key")\"}}" >/dev/null
}
# renewed_msg NS SECRET: the message of the CertificatesRenewed event that names SECRET
renewed_msg() {
  $K -n "$1" get events --field-selector reason=CertificatesRenewed -o json |
    jq -r --arg s "Secret $1/$2 " '[.items[] | select(.message | startswith($s)) | .message][0] // empty'
}

# Renewal (controller/pki.h): a certificate past 2/3 of its life is re-issued. The
# controller's client certificate, swapped for one signed by the same client CA 70 days
# ago (of 90): a new one from the same CA, the CAs and the instance Secret untouched.
# The pods' server certificate, swapped likewise: the instance Secret re-issued, served
# by the managers without a restart. A Normal event names each Secret and the key.
t_tls_renew() {
  local ns=$RUN-tlsrenew c=tr d=$W/tlsrenew before after ann ip msg
  newns $ns
  mkcluster $ns $c 1
  poll 120 ready $ns $c || fail "not Ready"
  mkdir -p "$d"
  for k in server-ca.crt server-ca.key client-ca.crt client-ca.key; do tls_key $ns $c-operator-tls $k "$d/$k"; done
  ann=$($K -n $ns get secret $c-instance-tls -o jsonpath='{.metadata.annotations.redis\.io/operator-ca}')
  before="$(primary $ns $c) $(snapshot $ns $c)"
  backdated "$d" "$d/client-ca.crt" "$d/client-ca.key" redis-operator clientAuth old-client || fail "openssl ca: client certificate"
  put_pair $ns $c-operator-tls old-client "$d" || fail "cannot patch $c-operator-tls"
  poll 30 eval '[ -n "$(renewed_msg '$ns' '$c'-operator-tls)" ]' || fail "no CertificatesRenewed event for $c-operator-tls"
  msg=$(renewed_msg $ns $c-operator-tls)
  [[ $msg == *"key tls.crt: due for renewal (expires "* ]] || fail "event: $msg"
  poll 20 eval 'tls_key '$ns' '$c'-operator-tls tls.crt "'$d'/new-client.crt" && ! cmp -s "'$d'/new-client.crt" "'$d'/old-client.crt"' || fail "client certificate not renewed"
  openssl x509 -checkend $((80 * 86400)) -noout -in "$d/new-client.crt" >/dev/null || fail "the new client certificate does not last 80 days"
  openssl verify -CAfile "$d/client-ca.crt" "$d/new-client.crt" >/dev/null || fail "the new client certificate is not from the same client CA"
  tls_key $ns $c-operator-tls server-ca.crt "$d/now-server-ca.crt"
  cmp -s "$d/now-server-ca.crt" "$d/server-ca.crt" || fail "the server CA changed"
  [ "$($K -n $ns get secret $c-instance-tls -o jsonpath='{.metadata.annotations.redis\.io/operator-ca}')" = "$ann" ] || fail "instance Secret re-issued for a client certificate"
  # the pods' server certificate
  backdated "$d" "$d/server-ca.crt" "$d/server-ca.key" "$c instance" serverAuth old-server || fail "openssl ca: server certificate"
  put_pair $ns $c-instance-tls old-server "$d" || fail "cannot patch $c-instance-tls"
  poll 30 eval '[ -n "$(renewed_msg '$ns' '$c'-instance-tls)" ]' || fail "no CertificatesRenewed event for $c-instance-tls"
  msg=$(renewed_msg $ns $c-instance-tls)
  [[ $msg == *"key tls.crt: due for renewal (expires "* ]] || fail "event: $msg"
  poll 20 eval 'tls_key '$ns' '$c'-instance-tls tls.crt "'$d'/new-server.crt" && ! cmp -s "'$d'/new-server.crt" "'$d'/old-server.crt"' || fail "server certificate not renewed"
  ip=$(pod_ip $ns $c-1)
  poll 120 eval '[ "$(openssl s_client -connect '$ip':8000 </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256)" = "$(openssl x509 -noout -fingerprint -sha256 -in "'$d'/new-server.crt")" ]' ||
    fail "$c-1 does not serve the renewed server certificate"
  poll 60 polled $ns $c || fail "polls: $(rc $ns $c '{.status.instancesStatus}')"
  after="$(primary $ns $c) $(snapshot $ns $c)"
  [ "$before" = "$after" ] || fail "primary changed or pods or servers restarted: before [$before] after [$after]"
  note "renewal: client certificate (70 of 90 days) re-issued from the same client CA, instance Secret untouched; server certificate re-issued and served by $c-1; same primary, pod, server pid [$after]"
}

# mkca DIR NAME: a CA DIR/NAME.crt/.key (EC P-256, 2 days)
mkca() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=$2" \
    -keyout "$1/$2.key" -out "$1/$2.crt" 2>/dev/null
}

# Server TLS (spec.tlsSecret, spec.caSecret): the connection Secret gives rediss:// URIs
# and the CA as ca.crt; redis-cli --tls --cacert <its ca.crt> -u <its url> answers PONG
# from the pod's address; another CA is refused, and there is no plain port.
t_tls_conn() {
  local ns=$RUN-tlsconn c=tc d=$W/tlsconn url ip host out k
  newns $ns
  mkdir -p "$d"
  mkca "$d" ca && mkca "$d" other-ca || fail "openssl: CA"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$c" \
    -keyout "$d/tls.key" -out "$d/tls.csr" 2>/dev/null &&
    openssl x509 -req -in "$d/tls.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 2 \
      -extfile <(printf 'subjectAltName=DNS:%s-leader.%s.svc,DNS:%s-any.%s.svc\nextendedKeyUsage=serverAuth\n' $c $ns $c $ns) \
      -out "$d/tls.crt" 2>/dev/null || fail "openssl: server certificate"
  $K -n $ns create secret tls $c-server --cert "$d/tls.crt" --key "$d/tls.key" >/dev/null || fail "Secret $c-server"
  $K -n $ns create secret generic $c-ca --from-file=ca.crt="$d/ca.crt" >/dev/null || fail "Secret $c-ca"
  mkcluster $ns $c 1 "  tlsSecret: {name: $c-server}
  caSecret: {name: $c-ca}
  connectionSecret: {name: $c-conn}"
  poll 120 ready $ns $c || fail "not Ready: $(rc $ns $c '{.status.phase} {.status.phaseReason}')"
  poll 30 eval '[ -n "$($K -n '$ns' get secret '$c'-conn -o jsonpath="{.data.ca\.crt}")" ]' || fail "connection Secret: no ca.crt"
  tls_key $ns $c-conn ca.crt "$d/conn-ca.crt"
  cmp -s "$d/conn-ca.crt" "$d/ca.crt" || fail "connection Secret: ca.crt is not spec.caSecret's"
  for k in url url-replica url-any; do
    url=$($K -n $ns get secret $c-conn -o jsonpath="{.data.$k}" | base64 -d)
    [[ $url == rediss://default:* ]] || fail "connection Secret: $k is ${url%%:*}://, want rediss://"
  done
  url=$($K -n $ns get secret $c-conn -o jsonpath='{.data.url}' | base64 -d)
  ip=$(pod_ip $ns $c-1); host=${url##*@}; host=${host%:*}
  out=$(timeout 5 redis-cli --tls --cacert "$d/conn-ca.crt" --sni "$host" -u "${url/@$host:/@$ip:}" --no-auth-warning PING 2>&1)
  [ "$out" = PONG ] || fail "redis-cli --tls --cacert <ca.crt> -u <url> (host $host as $ip): $out"
  out=$(timeout 5 redis-cli --tls --cacert "$d/other-ca.crt" --sni "$host" -u "${url/@$host:/@$ip:}" --no-auth-warning PING 2>&1)
  [ "$out" != PONG ] || fail "a server certificate of another CA was accepted"
  out=$(timeout 3 redis-cli -u "redis${url#rediss}" --no-auth-warning -h "$ip" PING 2>&1)
  [ "$out" != PONG ] || fail "plain TCP still answers on $ip"
  note "server TLS: connection Secret with rediss:// (url, url-replica, url-any) and ca.crt; redis-cli --tls with its CA: PONG from $ip; another CA refused; no plain port"
}

# pvcRetention Retain: scaling down keeps the removed replica's PVC (listed as dangling);
# scaling up again reuses it, and the replica comes back with its old data.
t_retain() {
  local ns=$RUN-retain uid
  newns $ns
  STORAGE='{size: 64Mi, pvcRetention: Retain}' mkcluster $ns rt 2
  poll 120 ready $ns rt || fail "not Ready"
  [ "$(primary $ns rt)" = rt-1 ] || fail "primary $(primary $ns rt)"
  rcli "$(pod_ip $ns rt-1)" "$(secret $ns rt-auth)" SET kept:key v >/dev/null || fail "no write"
  poll 20 eval '[ "$(rcli "$(pod_ip '$ns' rt-2)" "$(secret '$ns' rt-auth)" GET kept:key)" = v ]' || fail "not replicated"
  uid=$($K -n $ns get pvc rt-2 -o jsonpath='{.metadata.uid}')
  $K -n $ns scale rediscluster rt --replicas=1 >/dev/null
  poll 60 eval 'ready '$ns' rt && [ "$(count '$ns' pods rt)" = 1 ]' || fail "not scaled down"
  [ "$(count $ns pvc rt)" = 2 ] || fail "PVCs: $(count $ns pvc rt)"
  poll 20 eval '[ "$(rc '$ns' rt "{.status.danglingPVCs[*]}")" = rt-2 ]' ||
    fail "danglingPVCs: '$(rc $ns rt '{.status.danglingPVCs}')'"
  $K -n $ns scale rediscluster rt --replicas=2 >/dev/null
  poll 120 eval 'ready '$ns' rt && [ "$(count '$ns' pods rt)" = 2 ]' || fail "not scaled up"
  [ "$($K -n $ns get pvc rt-2 -o jsonpath='{.metadata.uid}')" = "$uid" ] || fail "rt-2's PVC was replaced"
  [ "$(rcli "$(pod_ip $ns rt-2)" "$(secret $ns rt-auth)" GET kept:key)" = v ] || fail "rt-2 lost its data"
  poll 20 eval '[ -z "$(rc '$ns' rt "{.status.danglingPVCs}")" ]' || fail "danglingPVCs not cleared"
}
