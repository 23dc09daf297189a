#!/usr/bin/env bash
# End-to-end checks of kubectl-redis (plugin/) on the local environment (test/env): a
# private node agent and a host controller, started by the helpers of the controller's
# e2e suite (test/integration/controller/lib.sh), one 3-instance cluster, and the
# plugin driven as a user would, with the admin kubeconfig. Checks: status shows the
# primary, the replicas and the lease from each instance's /v1/status (through the pod
# proxy); -o json and -o yaml carry the same view; switchover moves the primary;
# fence/unfence reach the instance; approve and hibernate set what the controller reads;
# report holds the objects, Events, /v1/status and logs and no Secret value (the auth
# Secret's and one applied with kubectl, whose last-applied annotation repeats it, and one
# the servers' logs hold); logs (pods/log through the agent's kubelet API) prefixes every
# line; usage errors and a missing cluster exit 2 and 1; restart NAME POD restarts one
# instance (the primary after a switchover, under a WAIT-1 writer); restart replaces
# every pod by a rolling update; hibernate on removes the pods, off brings them back;
# backup is refused without an earlier RedisBackup, then copies its S3 destination (the
# S3-compatible server of test/env) and completes; the bash completion offers verbs,
# clusters, pods, on/off and json/yaml.
#
# Prints one line per check; records "passed failed" in $RESULTS/plugin.counts.
#   BUILD=build-x bash test/plugin/plugin.sh      (KEEP=1 keeps the work dir)
#   ONLY='t_status|t_switchover' runs only the checks whose function matches the regex.
#   PLUGIN_POD_CIDR (default 10.240.240-249.0/24, the upper part of the benchmarks' range)
#   PLUGIN_WRAP='valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=9'
#     runs every plugin call under it
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/env/common.sh
. test/lib.sh
SUITE=plugin
BUILD=${BUILD:-build}
RESULTS=${RESULTS:-$BUILD/test-results}
t0=$(date +%s)

if ! make -s BUILD="$BUILD" "$BUILD/redis-operator" "$BUILD/nodeagent" "$BUILD/kubectl-redis" \
  "$BUILD/controller-it-writer" >/dev/null; then
  check_fail "build"; counts_write plugin; exit 1
fi
if ! api_ready && ! bash test/env/up.sh >/dev/null 2>&1; then
  check_fail "the local control plane is up"; counts_write plugin; exit 1
fi

BIN=$(pwd)/$BUILD/redis-operator
WRITER=$(pwd)/$BUILD/controller-it-writer
# start_agent, start_controller, newns, mkcluster, ready, primary, stop_private_env...
. test/integration/controller/lib.sh
private_run plg plugin-it "${PLUGIN_POD_CIDR:-10.240.$((240 + RANDOM % 10)).0/24}"
NS=$RUN-p
KR="${PLUGIN_WRAP:-} $(pwd)/$BUILD/kubectl-redis --kubeconfig $KUBECONFIG_ADMIN -n $NS"

cleanup() { stop_controller main >/dev/null; stop_private_env; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# pcheck NAME FUNCTION: test/lib.sh's check, ONLY= aware
# (what a check writes to $W/info is printed after its line)
pcheck() {
  [ -n "${ONLY:-}" ] && ! [[ "$2" =~ $ONLY ]] && return 0
  : >"$W/info"
  check "$1" "$2"
  sed 's/^/info plugin: /' "$W/info"
}
view() { $KR status demo -o json; }
# jq over the status view
vq() { view | jq -e "$@" >/dev/null; }
replicas() { $K -n "$NS" get pods -l redis.io/cluster=demo,redis.io/role=replica -o jsonpath='{.items[*].metadata.name}'; }
ann() { $K -n "$NS" get rediscluster demo -o jsonpath="{.metadata.annotations.${1//./\\.}}"; }

t_status() {
  local p out; p=$(primary "$NS" demo)
  out=$($KR status demo) || fail "status failed: $out"
  echo "$out"
  grep -q "^Primary: *$p (target $p, lease held by $p)" <<<"$out" || fail "no primary line for $p"
  grep -Eq "^$p +primary +yes +primary .* yes +none +instance$" <<<"$out" || fail "no primary row"
  [ "$(grep -Ec '^demo-[0-9]+ +replica +yes +replica .* instance$' <<<"$out")" = 2 ] || fail "not 2 replica rows"
  ! grep -q $'\033' <<<"$out" || fail "colour escapes on a pipe"
  # as a kubectl plugin: found on PATH, the kubeconfig from KUBECONFIG
  KUBECONFIG=$KUBECONFIG_ADMIN PATH="$(pwd)/$BUILD:$PATH" "$ENV_BIN/kubectl" redis -n "$NS" status demo |
    grep -q "^Primary: *$p " || fail "kubectl redis status"
  # on a terminal (script(1) gives it one): colours, unless NO_COLOR is set
  script -qec "$KR status demo" /dev/null >"$W/tty.out" 2>&1 </dev/null
  grep -q $'\033\\[32mprimary' "$W/tty.out" || { cat -v "$W/tty.out"; fail "no colour on a terminal"; }
  NO_COLOR=1 script -qec "$KR status demo" /dev/null >"$W/tty.out" 2>&1 </dev/null
  grep -q '^Primary:' "$W/tty.out" && ! grep -q $'\033' "$W/tty.out" || { cat -v "$W/tty.out"; fail "NO_COLOR"; }
}

t_json_yaml() {
  local p; p=$(primary "$NS" demo)
  vq --arg p "$p" '.currentPrimary == $p and .leaseHolder == $p and .phase != null
    and ([.instancesStatus[] | select(.source == "instance")] | length) == 3
    and ([.instancesStatus[] | select(.role == "replica" and .link == "up")] | length) == 2
    and ([.instancesStatus[] | select(.leaseHolder)] | map(.pod)) == [$p]' || { view; fail "json view"; }
  view >"$W/v.json"; $KR status demo -o yaml >"$W/v.yaml" || fail "yaml failed"
  python3 - "$W/v.json" "$W/v.yaml" <<'P' || fail "yaml differs from json"
import json, sys, yaml
j = json.load(open(sys.argv[1])); y = yaml.safe_load(open(sys.argv[2]))
# the two views were fetched apart: lags and lastSeen-like values may move
for v in (j, y):
    for i in v["instancesStatus"]:
        i.pop("lagBytes", None); i.pop("lagSeconds", None)
sys.exit(0 if j == y else 1)
P
}

is_primary() { [ "$(primary "$NS" demo)" = "$1" ]; }
t_switchover() {
  local old new; old=$(primary "$NS" demo); new=$(replicas | awk '{print $1}')
  [ -n "$new" ] || fail "no replica"
  $KR switchover demo "$new" || fail "switchover refused"
  poll 60 is_primary "$new" || fail "primary still $(primary "$NS" demo)"
  poll 30 vq --arg n "$new" --arg o "$old" '.leaseHolder == $n and
    ([.instancesStatus[] | select(.pod == $n and .role == "primary")] | length) == 1 and
    ([.instancesStatus[] | select(.pod == $o and .role == "replica")] | length) == 1' || { view; fail "status after switchover"; }
  ! $KR switchover demo nope-9 2>"$W/err" || fail "a pod outside the cluster accepted"
  grep -q 'nope-9' "$W/err" || fail "message: $(cat "$W/err")"
}

t_fence() {
  local r; r=$(replicas | awk '{print $1}')
  $KR fence demo "$r" || fail "fence"
  [ "$(ann redis.io/fencedInstances)" = "[\"$r\"]" ] || fail "annotation $(ann redis.io/fencedInstances)"
  poll 30 vq --arg r "$r" '.instancesStatus[] | select(.pod == $r) | .fenced' || { view; fail "not fenced"; }
  $KR unfence demo "$r" || fail "unfence"
  [ -z "$(ann redis.io/fencedInstances)" ] || fail "annotation left: $(ann redis.io/fencedInstances)"
  poll 30 vq --arg r "$r" '.instancesStatus[] | select(.pod == $r) | .fenced | not' || { view; fail "still fenced"; }
}

na_ctl() { "$BUILD/nodeagent" ctl --state-dir "$W/na" "$@" >/dev/null; }
from_instance() { vq --arg r "$1" '.instancesStatus[] | select(.pod == $r) | .source == "instance"'; }
t_fallback() {
  local r t0 ms; r=$(replicas | awk '{print $1}')
  na_ctl freeze "$NS/$r" || fail "freeze $r"
  t0=$(ms); view >"$W/v.json"; ms=$(( $(ms) - t0 ))
  na_ctl thaw "$NS/$r" || fail "thaw $r"
  jq -e --arg r "$r" '[.instancesStatus[] | select(.pod == $r and .source == "cluster status"
    and (.error | test("proxy/v1/status")))] | length == 1' "$W/v.json" >/dev/null || { cat "$W/v.json"; fail "no fallback row for $r"; }
  jq -e '[.instancesStatus[] | select(.source == "instance")] | length == 2' "$W/v.json" >/dev/null || fail "the others"
  # one slow pod costs one timeout (5 s), not one per pod
  [ "$ms" -lt 9000 ] || fail "status took $ms ms with one pod frozen"
  echo "status with $r frozen: $ms ms" >>"$W/info"
  poll 30 from_instance "$r" || fail "$r not back"
}

t_annotations() {
  $KR approve demo || fail "approve"
  [ "$(ann redis.io/approve-primary-update)" = true ] || fail "approve annotation"
  $K -n "$NS" annotate rediscluster demo redis.io/approve-primary-update- >/dev/null
  ! $KR hibernate demo maybe 2>/dev/null || fail "hibernate maybe accepted"
}

t_report() {
  local pw extra d=$W/report p; p=$(primary "$NS" demo); pw=$(secret "$NS" demo-auth)
  # a Secret value the servers' logs hold: every log of the report must have it redacted
  local phrase="Ready to accept connections"
  grep -qF "$phrase" <<<"$($K -n "$NS" logs "$p" -c redis)" || fail "kubectl logs $p: no '$phrase' to redact"
  extra=s3cr3t-$RANDOM-$RANDOM
  [ -n "$pw" ] || fail "no password in demo-auth"
  # a Secret applied by kubectl: its last-applied annotation holds the value too
  $K -n "$NS" apply -f - >/dev/null <<Y || fail "extra Secret"
apiVersion: v1
kind: Secret
metadata: {name: demo-extra, labels: {redis.io/cluster: demo}}
stringData: {token: $extra, phrase: $phrase}
Y
  $KR report demo -o "$W/r.tar.gz" || fail "report failed"
  mkdir -p "$d" && tar -xzf "$W/r.tar.gz" -C "$d" || fail "not a tar.gz"
  tar -tzf "$W/r.tar.gz" | sed 's/^/  /'
  for f in redisclusters/demo.json events.json secrets/demo-auth.json secrets/demo-extra.json \
    leases/demo-primary.json services/demo-leader.json "status/$p.json"; do
    [ -s "$d/demo-report/$f" ] || fail "no $f"
  done
  [ "$(ls "$d/demo-report/pods" | wc -l)" = 3 ] || fail "not 3 pods"
  [ "$(ls "$d/demo-report/status" | wc -l)" = 3 ] || fail "not 3 /v1/status"
  jq -e '.role == "primary"' "$d/demo-report/status/$p.json" >/dev/null || fail "status of $p"
  # each pod's server log (pods/log through the node agent's kubelet API), redacted
  for pod in $(ls "$d/demo-report/pods" | sed 's/\.json$//'); do
    [ -s "$d/demo-report/logs/$pod/redis.log" ] || fail "no log of $pod: $(cat "$d/demo-report/errors.txt" 2>/dev/null)"
  done
  ! grep -q '^logs/' "$d/demo-report/errors.txt" 2>/dev/null || fail "errors.txt: $(grep '^logs/' "$d/demo-report/errors.txt")"
  grep -qF '[REDACTED]' "$d/demo-report/logs/$p/redis.log" || fail "no [REDACTED] in the log of $p"
  ! grep -rqF -- "$phrase" "$d" || fail "'$phrase' (a Secret value) is in $(grep -rlF -- "$phrase" "$d")"
  echo "report: $(ls "$d/demo-report/logs" | wc -l) pods' logs, $(grep -c 'REDACTED' "$d/demo-report/logs/$p/redis.log") redacted line(s) in $p's" >>"$W/info"
  jq -e '.data.password == "[REDACTED]"' "$d/demo-report/secrets/demo-auth.json" >/dev/null || fail "auth data"
  for v in "$pw" "$(printf %s "$pw" | base64 -w0)" "$extra" "$(printf %s "$extra" | base64 -w0)"; do
    ! grep -rqF -- "$v" "$d" || fail "a secret value is in $(grep -rlF -- "$v" "$d")"
    ! zcat "$W/r.tar.gz" | grep -qaF -- "$v" || fail "a secret value is in the archive"
  done
  [ "$(stat -c %a "$W/r.tar.gz")" = 600 ] || fail "mode $(stat -c %a "$W/r.tar.gz")"
}

uids() { $K -n "$NS" get pods -l redis.io/cluster=demo -o jsonpath='{range .items[*]}{.metadata.uid}{"\n"}{end}' | sort; }
# none of the pods of $1 (a file of uids) is left, and the cluster is Ready again
all_replaced() { [ -z "$(comm -12 "$1" <(uids))" ] && [ "$(uids | wc -l)" = 3 ] && ready "$NS" demo; }

t_restart() {
  local t0; t0=$(date +%s)
  uids >"$W/uids.before"
  $KR restart demo || fail "restart"
  [ -n "$($K -n "$NS" get rediscluster demo -o jsonpath='{.spec.podTemplate.metadata.annotations.kubectl\.kubernetes\.io/restartedAt}')" ] ||
    fail "no restartedAt"
  poll 150 all_replaced "$W/uids.before" || { $KR status demo; fail "not every pod restarted"; }
  echo "restart: every pod replaced and Ready in $(( $(date +%s) - t0 )) s" >>"$W/info"
}

# reload NAME: a new password in the auth Secret, then every instance re-reads its files on
# request (its log says so), status.lastReload echoes the request, the same server pids
pids() { local pod; for pod in $($K -n "$NS" get pods -l redis.io/cluster=demo -o jsonpath='{.items[*].metadata.name}'); do echo "$pod $(server_hostpid "$NS" "$pod")"; done; }
reload_logged() {
  local pod
  for pod in $1; do grep -q 'reload: Secret and TLS files re-read on request' <<<"$($K -n "$NS" logs "$pod" -c redis)" || return 1; done
}
# status.lastReload is new in the CRD, and the suites of other trees sharing the
# environment apply theirs: without the field the API server drops the controller's
# write (which it repeats at its next reconcile), so this tree's CRD is applied again
# while waiting.
crd_mine() {
  grep -q lastReload <<<"$($K get crd redisclusters.redis.io -o yaml)" ||
    $K apply -f config/crd/bases/redis.io_redisclusters.yaml >/dev/null 2>&1
}
last_reload_is() { crd_mine; [ "$(rc "$NS" demo '{.status.lastReload}')" = "$1" ]; }
pw_on() { [ "$(rcli "$1" "$2" PING)" = PONG ]; }
pw_everywhere() { local ip; for ip in $(pod_ips "$NS" demo); do [ "$(rcli "$ip" "$1" PING)" = PONG ] || return 1; done; }
t_reload() {
  local before want pw pods t0; before=$(pids) pw=new-$RANDOM-$RANDOM
  crd_mine || fail "CRD"
  pods=$($K -n "$NS" get pods -l redis.io/cluster=demo -o jsonpath='{.items[*].metadata.name}')
  [ "$(wc -l <<<"$before")" = 3 ] && ! grep -q ' $' <<<"$before" || fail "server pids: $before"
  $K -n "$NS" patch secret demo-auth --type=merge -p "{\"stringData\":{\"password\":\"$pw\"}}" >/dev/null || fail "patch demo-auth"
  t0=$(ms)
  $KR reload demo >"$W/out" || fail "reload"
  want=$(ann redis.io/reload)
  [ -n "$want" ] && grep -qF "$want" "$W/out" || fail "annotation $want, output $(cat "$W/out")"
  poll 60 last_reload_is "$want" || fail "status.lastReload: $(rc "$NS" demo '{.status.lastReload}')"
  echo "reload: status.lastReload after $(( $(ms) - t0 )) ms" >>"$W/info"
  events "$NS" | grep -qw Reloaded || fail "no Reloaded Event"
  poll 20 reload_logged "$pods" || fail "an instance did not log the reload"
  poll 20 pw_everywhere "$pw" || fail "the new password does not work everywhere"
  [ "$(pids)" = "$before" ] || fail "a server restarted: $before -> $(pids)"
}

# reload re-reads files whose stamp (inode, size, mtime) did not move, which the managers'
# own poll never does: a replica's auth password file rewritten in place, same length, its
# mtime put back. Three poll periods later the new password still fails there; after a
# reload it works, with the same server.
auth_file() { # POD: the host path of the pod's auth password file (the agent's volume)
  local uid; uid=$(pod_uid "$1")
  readlink -f "$W/na/pods/$uid/volumes/auth/password"
}
t_reload_forced() {
  local r f pw x ip pid want
  r=$($K -n "$NS" get pods -l redis.io/cluster=demo,redis.io/role=replica -o jsonpath='{.items[0].metadata.name}')
  f=$(auth_file "$r") pw=$(secret "$NS" demo-auth) ip=$(pod_ip "$NS" "$r") pid=$(server_hostpid "$NS" "$r")
  [ -f "$f" ] && [ "$(cat "$f")" = "$pw" ] || fail "auth file of $r: $f"
  x=$(head -c 64 /dev/urandom | base64 -w0 | tr -dc a-zA-Z0-9 | head -c "${#pw}")
  [ "${#x}" = "${#pw}" ] || fail "a password of ${#pw} bytes"
  touch -r "$f" "$W/stamp-ref"
  printf %s "$x" | dd of="$f" conv=notrunc status=none || fail "rewrite $f"
  touch -r "$W/stamp-ref" "$f"
  sleep 6 # three periods of --secret-poll-interval (2 s): the poll must not see it
  [ "$(rcli "$ip" "$x" PING 2>&1)" != PONG ] || fail "the poll picked up a file whose stamp did not move"
  $KR reload demo >/dev/null || fail "reload"
  want=$(ann redis.io/reload)
  poll 60 last_reload_is "$want" || fail "status.lastReload: $(rc "$NS" demo '{.status.lastReload}')"
  poll 10 pw_on "$ip" "$x" || fail "reload did not re-read $f on $r"
  [ "$(server_hostpid "$NS" "$r")" = "$pid" ] || fail "the server of $r restarted"
  echo "reload: $r took a password its poll never saw (file stamp unchanged), server pid $pid kept" >>"$W/info"
  # the Secret's value back in the file, and taken by another reload: else $r's current
  # password stays the test's (and the next rotation would drop the real one there)
  printf %s "$pw" | dd of="$f" conv=notrunc status=none && touch -r "$W/stamp-ref" "$f" || fail "restore $f"
  sleep 0.01 # two reload requests a millisecond apart would carry the same value
  $KR reload demo >/dev/null || fail "reload (restore)"
  want=$(ann redis.io/reload)
  poll 60 last_reload_is "$want" || fail "status.lastReload after the restore"
}

# restart NAME POD: one instance, on its own volume; the primary after a switchover
pod_uid() { $K -n "$NS" get pod "$1" -o jsonpath='{.metadata.uid}' 2>/dev/null; }
restarted() { # POD OLD-UID: a new pod, the annotation gone, the cluster Ready
  local u; u=$(pod_uid "$1")
  [ -n "$u" ] && [ "$u" != "$2" ] && [ -z "$(ann redis.io/restart-instance)" ] && ready "$NS" demo
}
has_key() { [ "$(rcli "$1" "$2" GET "$3")" = "$4" ]; }
refused_gone() { [ -z "$(ann redis.io/restart-instance)" ] && events "$NS" | grep -qw RestartRefused; }
t_restart_one() {
  local p r uid key val t0 pw; p=$(primary "$NS" demo) pw=$(secret "$NS" demo-auth)
  r=$($K -n "$NS" get pods -l redis.io/cluster=demo,redis.io/role=replica -o jsonpath='{.items[0].metadata.name}')
  [ -n "$r" ] || fail "no replica"
  key=restart-one:$RANDOM val=$RANDOM
  [ "$(rcli "$(pod_ip "$NS" "$p")" "$pw" SET "$key" "$val")" = OK ] || fail "SET on $p"
  poll 20 has_key "$(pod_ip "$NS" "$r")" "$pw" "$key" "$val" || fail "$r did not get $key"
  # the plugin refuses a pod that does not exist
  ! $KR restart demo nope-1 2>"$W/err" && grep -q 'not found' "$W/err" || fail "nope-1: $(cat "$W/err")"
  # a replica: its pod made again on its volume, the data there
  uid=$(pod_uid "$r") t0=$(date +%s)
  $KR restart demo "$r" || fail "restart $r"
  poll 120 restarted "$r" "$uid" || { $KR status demo; fail "$r not restarted"; }
  [ "$(rcli "$(pod_ip "$NS" "$r")" "$pw" GET "$key")" = "$val" ] || fail "$r lost $key"
  events "$NS" | grep -qw InstanceRestart || fail "no InstanceRestart Event"
  echo "restart of replica $r: new pod, $key kept, Ready in $(( $(date +%s) - t0 )) s" >>"$W/info"
  # the primary, with the WAIT-1 writer running: a switchover first, no acknowledged write lost
  uid=$(pod_uid "$p") t0=$(date +%s)
  writer "$NS" demo restart 120
  $KR restart demo "$p" || { wstop restart; fail "restart $p"; }
  poll 150 restarted "$p" "$uid" || { wstop restart; $KR status demo; fail "$p not restarted"; }
  wstop restart >"$W/writer.txt" || fail "writer: $(cat "$W/writer.txt")"
  [ "$(primary "$NS" demo)" != "$p" ] || fail "the primary did not move before its restart"
  events "$NS" | grep -qw InstanceRestartSwitchover || fail "no InstanceRestartSwitchover Event"
  [ "$(rcli "$(leader_ip "$NS" demo)" "$pw" GET "$key")" = "$val" ] || fail "$key lost"
  echo "restart of primary $p: switchover to $(primary "$NS" demo) first, Ready in $(( $(date +%s) - t0 )) s, writer: $(cat "$W/writer.txt")" >>"$W/info"
  # a request for a pod that is not the cluster's, made by hand: the controller refuses it
  $K -n "$NS" annotate rediscluster demo redis.io/restart-instance=nope-9 >/dev/null || fail "annotate"
  poll 30 refused_gone || fail "nope-9: annotation $(ann redis.io/restart-instance), events $(events "$NS")"
}

hibernated() { [ "$(rc "$NS" demo '{.status.phase}')" = Hibernated ] && [ "$(count "$NS" pods demo)" = 0 ]; }
t_hibernate() {
  $KR hibernate demo on || fail "hibernate on"
  poll 60 hibernated || { $KR status demo; fail "not hibernated"; }
  $KR status demo | grep -q '^Phase: *Hibernated' || fail "status does not say Hibernated"
  $KR hibernate demo off || fail "hibernate off"
  [ -z "$(ann redis.io/hibernation)" ] || fail "annotation left"
  poll 90 ready "$NS" demo || { $KR status demo; fail "not Ready after waking"; }
}

bk_phase() { $K -n "$NS" get redisbackup "$1" -o jsonpath='{.status.phase}' 2>/dev/null; }
bk_completed() { [ "$(bk_phase "$1")" = Completed ]; }
t_backup() {
  local dest
  ! $KR backup demo 2>"$W/err" && grep -q 'no RedisBackup to take a destination from' "$W/err" ||
    fail "no earlier backup: $(cat "$W/err")"
  ( set -a; . "${OBJSTORE_ENV_DIR:-$ENV_DIR}/s3.env"; set +a
    $K -n "$NS" create secret generic plg-s3 --from-literal=AWS_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" \
      --from-literal=AWS_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" >/dev/null &&
    $K -n "$NS" apply -f - >/dev/null <<Y ) || fail "first RedisBackup"
apiVersion: redis.io/v1
kind: RedisBackup
metadata: {name: demo-first}
spec:
  clusterName: demo
  deletionPolicy: Delete
  destination: {s3: {bucket: $S3_BUCKET, path: plg-$RUN, endpoint: '$S3_ENDPOINT', region: $S3_REGION, forcePathStyle: true, credentialsSecret: {name: plg-s3}}}
Y
  poll 90 bk_completed demo-first || fail "demo-first: $(bk_phase demo-first)"
  $KR backup demo --name demo-again || fail "backup refused"
  dest=$($K -n "$NS" get redisbackup demo-first -o json | jq -c '.spec | {destination, deletionPolicy}')
  [ "$($K -n "$NS" get redisbackup demo-again -o json | jq -c '.spec | {destination, deletionPolicy}')" = "$dest" ] ||
    fail "demo-again's spec differs from demo-first's"
  poll 90 bk_completed demo-again || fail "demo-again: $(bk_phase demo-again)"
  vq '[.backups[] | select(.phase == "Completed") | .name] | sort == ["demo-again", "demo-first"]' || { view; fail "status backups"; }
  # deletionPolicy Delete: the objects go with them, while the controller runs
  $K -n "$NS" delete redisbackup demo-first demo-again --timeout=60s >/dev/null || fail "delete"
}

# comp WORD...: what plugin/completion.bash offers for the line WORD... (last: the word
# being completed), with the environment's kubectl as `kubectl`
comp() {
  ( export PATH="$ENV_BIN:$PATH" KUBECONFIG="$KUBECONFIG_ADMIN"
    . plugin/completion.bash
    COMP_WORDS=("$@") COMP_CWORD=$(($# - 1))
    _kubectl_redis
    echo "${COMPREPLY[*]}" )
}
t_completion() {
  local got
  [ "$(comp kubectl-redis sw)" = switchover ] || fail "verb: $(comp kubectl-redis sw)"
  [ "$(comp kubectl-redis -n "$NS" status '')" = demo ] || fail "cluster: $(comp kubectl-redis -n "$NS" status '')"
  got=$(comp kubectl-redis fence --namespace "$NS" demo '' | tr ' ' '\n' | sort | paste -sd' ')
  [ "$got" = "all demo-1 demo-2 demo-3" ] || fail "pods: $got"
  [ "$(comp kubectl-redis -n "$NS" hibernate demo '')" = "on off" ] || fail "hibernate"
  [ "$(comp kubectl-redis status demo -o '')" = "json yaml" ] || fail "-o"
}

# kubectl logs (pods/log -> the private node agent's kubelet API) and the plugin: the same
# lines, the plugin's prefixed with the pod
t_logs() {
  local out pod pods first; pods=$($K -n "$NS" get pods -l redis.io/cluster=demo -o jsonpath='{.items[*].metadata.name}')
  out=$($KR logs demo 2>"$W/err") || fail "logs: rc $?, $(cat "$W/err")"
  [ ! -s "$W/err" ] || fail "stderr: $(cat "$W/err")"
  for pod in $pods; do
    first=$($K -n "$NS" logs "$pod" -c redis) || fail "kubectl logs $pod: $first"
    first=${first%%$'\n'*}
    [ -n "$first" ] || fail "kubectl logs $pod: empty"
    grep -qxF "[$pod] $first" <<<"$out" || fail "the plugin lacks $pod's first line: [$pod] $first"
  done
  ! grep -qv '^\[demo-[0-9]*\] ' <<<"$out" || fail "a line without its pod: $(grep -v '^\[demo-[0-9]*\] ' <<<"$out" | head -1)"
  echo "logs: $(wc -l <<<"$out") lines of $(wc -w <<<"$pods") pods" >>"$W/info"
}

t_errors() {
  local rc
  $KR status nope 2>"$W/err"; rc=$?
  [ $rc = 1 ] && grep -q 'not found' "$W/err" || fail "missing cluster: rc $rc, $(cat "$W/err")"
  $KR statu demo 2>/dev/null; rc=$?
  [ $rc = 2 ] || fail "unknown verb: rc $rc"
  $KR status demo -o wide 2>"$W/err"; rc=$?
  [ $rc = 1 ] && grep -q 'expected json or yaml' "$W/err" || fail "-o wide: rc $rc"
}

start_agent || { check_fail "node agent"; tail -5 "$W/nodeagent.log"; counts_write plugin; exit 1; }
$K apply -f config/crd/bases >/dev/null 2>&1
newns "$OPNS" >/dev/null
start_controller || { check_fail "controller"; tail -5 "$W/controller-main.log"; counts_write plugin; exit 1; }
newns "$NS" && mkcluster "$NS" demo 3 && poll 180 ready "$NS" demo ||
  { check_fail "3-instance cluster Ready"; counts_write plugin; exit 1; }
echo "info plugin: run $RUN, cluster Ready after $(( $(date +%s) - t0 ))s"

pcheck "status (also as kubectl redis): primary, replicas and lease from every instance's /v1/status; colours on a terminal only, not with NO_COLOR" t_status
pcheck "status -o json and -o yaml: the same view, parsed by jq and a YAML loader" t_json_yaml
pcheck "switchover NAME POD: the primary and the lease move; a foreign pod is refused" t_switchover
pcheck "fence / unfence POD: the annotation, then the instance reports it" t_fence
pcheck "a frozen pod: shown from the cluster status with the reason, the others from their instance, one timeout" t_fallback
pcheck "approve sets redis.io/approve-primary-update; hibernate checks its argument" t_annotations
pcheck "report -o FILE: a tar.gz of the objects, Events, /v1/status and logs; no secret value anywhere, in a log neither" t_report
pcheck "logs: every pod's lines (as kubectl logs reads them) prefixed with its pod" t_logs
pcheck "reload: a new password, every instance re-reads its files (its log), status.lastReload echoed, Event, same server pids" t_reload
pcheck "reload re-reads a password file whose stamp did not move (the poll never does): it works after, same server" t_reload_forced
pcheck "errors: missing cluster exits 1, unknown verb 2, bad -o 1" t_errors
pcheck "bash completion: verbs, the namespace's clusters, the cluster's pods, on/off, json/yaml" t_completion
pcheck "backup: refused without an earlier backup; a RedisBackup to that one's destination, Completed, in status" t_backup
pcheck "restart NAME POD: a replica's pod made again on its volume (data kept); the primary switched over first, no acknowledged write lost; refusals" t_restart_one
pcheck "restart: every pod replaced by a rolling update, Ready again" t_restart
pcheck "hibernate on: pods gone, Hibernated; off: Ready again" t_hibernate
echo "info plugin: suite took $(( $(date +%s) - t0 ))s"
counts_write plugin
