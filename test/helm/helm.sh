#!/usr/bin/env bash
# The Helm chart (charts/redis-operator), part of `make test` (test/run-integration.sh).
#
# Offline: helm lint --strict; bad values refused with the field named; the CRDs in the
# chart's crds/ are config/crd/bases byte for byte; `helm template` with the default values
# renders the objects of `kubectl kustomize config/default` (normalised: sorted, Helm's own
# labels and the config checksum dropped, no Namespace); every setting the chart can
# render is one the binary accepts, with the value given.
#
# On the local environment (test/env): the rendered chart accepted by `kubectl apply
# --dry-run=server` in a namespace enforcing Pod Security "restricted"; then, like
# test/integration/controller.sh's t_deployed, a private node agent (a tainted Node
# "<run>-node-1") and `helm install` into a namespace of its own with values that confine
# the operator to that Node and to the RedisClusters labelled redis-operator.test/run=<run>
# (other operators in the same control plane never see them); a RedisCluster brought to
# Ready through it; `helm upgrade` to another image tag restarts the operator and no
# Redis pod (same pod uids, server pids and sessionIds); `helm uninstall` leaves the
# PVCs, the CRDs and the data.
#
# Prints one line per check; "passed failed" in $RESULTS/helm.counts.
#   bash test/helm/helm.sh            (BUILD=build-x for another build dir, KEEP=1 keeps the work dir)
#   OFFLINE=1 bash test/helm/helm.sh  (only the checks that need no API server)
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/env/common.sh
BUILD=${BUILD:-build}
export RESULTS=${RESULTS:-$BUILD/test-results}
SUITE=helm
. test/lib.sh
CHART=charts/redis-operator
t_start=$(date +%s)
W=$(mktemp -d /tmp/helm-it.XXXXXX)
# check (timed, with an info line), h, release_values, op_pods, one_leader, redis_state,
# new_leader_looked, release_cleanup: shared with test/upgrade/upgrade.sh
. test/helm/lib.sh
if ! make -s BUILD="$BUILD" "$BUILD/redis-operator" "$BUILD/nodeagent" >"$W/build.log" 2>&1 ||
  ! HELM=$(bash test/helm/build.sh | tail -1) || [ ! -x "$HELM" ] || [ ! -x "$ENV_BIN/kubectl" ]; then
  check_fail "build (operator, node agent, helm; kubectl from make env-build)"
  grep -m5 error "$W/build.log" | sed 's/^/     /'
  rm -rf "$W"
  counts_write helm
  exit 1
fi
BIN=$(pwd)/$BUILD/redis-operator
KUBECTL=$ENV_BIN/kubectl
RUN=hit$(($$ % 10000))$((RANDOM % 100))
# to_json: YAML documents on stdin -> one JSON array of the objects (kubectl --local: no server)
to_json() { KUBECONFIG=/dev/null "$KUBECTL" label --local -o json -f - helm-it- | jq -s .; }

# --- offline ----------------------------------------------------------------------------

t_lint() {
  "$HELM" lint --strict "$CHART"
}

# Each value is refused by the schema or the templates, with the field in the message.
bad_values=(
  "--set logLevel=verbose|/logLevel"
  "--set image.pullPolicy=Sometimes|/image/pullPolicy"
  "--set tunables.workers=0|/tunables/workers"
  "--set tunables.pollPeriod=5|/tunables/pollPeriod"
  "--set-string tunables.pollPeriod=5x|/tunables/pollPeriod"
  "--set tunables.pollEvery=1s|pollEvery"
  "--set-string leaderElection.enabled=yes|/leaderElection/enabled"
  "--set metrics.port=70000|/metrics/port"
  "--set fullnameOverride=Bad_Name|/fullnameOverride"
  "--set replicaCount=2,leaderElection.enabled=false|needs leaderElection.enabled"
  "--set serviceAccount.create=false|serviceAccount.name is required"
)
t_bad_values() {
  local b args want out bad=0
  for b in "${bad_values[@]}"; do
    args=${b%%|*} want=${b#*|}
    # shellcheck disable=SC2086
    if out=$("$HELM" template x "$CHART" $args 2>&1); then
      echo "accepted: $args"; bad=1
    elif ! grep -qF -- "$want" <<<"$out"; then
      echo "refused without naming '$want': $args: $(tail -2 <<<"$out")"; bad=1
    fi
  done
  return $bad
}

t_crds_copied() {
  local f bad=0
  for f in config/crd/bases/*.yaml; do
    cmp -s "$f" "$CHART/crds/${f##*/}" || { echo "$CHART/crds/${f##*/} differs from $f (cp config/crd/bases/*.yaml $CHART/crds/)"; bad=1; }
  done
  for f in "$CHART"/crds/*; do
    [ -e "config/crd/bases/${f##*/}" ] || { echo "$f is not in config/crd/bases"; bad=1; }
  done
  return $bad
}

# normalise: JSON array -> the objects without Helm's own labels (helm.sh/chart,
# app.kubernetes.io/{managed-by: Helm,instance,version}), the pod template's
# checksum/config annotation, empty label/annotation maps and the Namespace; sorted.
normalise() {
  jq -S '
    def nohelm: del(.["helm.sh/chart"], .["app.kubernetes.io/instance"], .["app.kubernetes.io/version"])
      | if .["app.kubernetes.io/managed-by"] == "Helm" then del(.["app.kubernetes.io/managed-by"]) else . end;
    def noempty(f): if (f // {}) == {} then delpaths([path(f)]) else . end;
    [ .[] | select(.kind != "Namespace")
      | .metadata.labels |= ((. // {}) | nohelm)
      | noempty(.metadata.labels) | noempty(.metadata.annotations)
      | if .spec.template.metadata? then
          .spec.template.metadata.labels |= ((. // {}) | nohelm)
          | .spec.template.metadata.annotations |= ((. // {}) | del(.["checksum/config"]))
          | noempty(.spec.template.metadata.labels) | noempty(.spec.template.metadata.annotations)
        else . end ]
    | sort_by(.kind, .metadata.namespace // "", .metadata.name)'
}
t_no_drift() {
  local names
  "$KUBECTL" kustomize config/default | to_json | normalise >"$W/kustomize.json" || return 1
  "$HELM" template redis-operator "$CHART" -n redis-operator-system --include-crds | to_json | normalise >"$W/helm.json" || return 1
  names=$(jq -r '[.[] | .kind + "/" + .metadata.name] | join(" ")' "$W/kustomize.json")
  [ "$(jq length "$W/kustomize.json")" -ge 12 ] || { echo "kustomize rendered only: $names"; return 1; }
  diff -u "$W/kustomize.json" "$W/helm.json" || {
    echo "(- config/default, + the chart: mirror the change in $CHART; the image tag is Chart.yaml's appVersion)"
    return 1
  }
  # the comparison sees a difference in the Deployment (it does not normalise everything away)
  "$HELM" template redis-operator "$CHART" -n redis-operator-system --include-crds --set podLabels.x=y |
    to_json | normalise | cmp -s - "$W/kustomize.json" && { echo "a pod label went unnoticed"; return 1; }
  echo "same $(jq length "$W/helm.json") objects: $names"
}

# Every value set (values-all.yaml below) reaches the binary as a setting it accepts: the
# rendered ConfigMap and env given to `redis-operator controller`, which parses them,
# logs them (line "starting", key settings) and then fails on the missing kubeconfig
# (exit 3; a bad setting is exit 2).
cat >"$W/values-all.yaml" <<'Y'
image: {repository: example.org/ro, tag: v9}
logLevel: debug
logFormat: json
logDebug: lease,poller
leaderElection: {enabled: false, leaseDuration: 20s, renewDeadline: 12s, retryPeriod: 3s}
watchNamespace: prod
clusterSelector: team
tunables:
  workers: 8
  pollPeriod: 2s
  pollTimeout: 900ms
  pollFailuresDown: 3
  apiTimeout: 15s
  kubeApiQps: 100000
  kubeApiBurst: 200
  instanceTimeout: 6s
  resyncPeriod: 1m
  statusRefresh: 7s
  backoffBase: 200ms
  backoffCap: 1m
  promoteTimeout: 40s
  restartTimeout: 10m
  passwordRotationGrace: 45s
  maxLag: 2Mi
  runAsUser: 2147483647
metrics: {port: 9090}
health: {port: 9091}
Y
t_settings_accepted() {
  local vars n=0 v flag settings rc bad=0
  "$HELM" template x "$CHART" -f "$W/values-all.yaml" | to_json >"$W/all.json" || return 1
  mapfile -t vars < <(jq -r '.[] | (select(.kind == "ConfigMap") | .data // {} | to_entries[] | "\(.key)=\(.value)"),
      (select(.kind == "Deployment") | .spec.template.spec.containers[0].env[] | select(.value) | "\(.name)=\(.value)")' "$W/all.json")
  [ "${#vars[@]}" -ge 27 ] || { echo "only ${#vars[@]} settings rendered: ${vars[*]}"; return 1; }
  env -i "${vars[@]}" timeout 10 "$BIN" controller --kubeconfig /nonexistent >"$W/settings.out" 2>&1
  rc=$?
  [ $rc -eq 3 ] || { echo "exit $rc (2: a setting refused)"; tail -3 "$W/settings.out"; return 1; }
  settings=" $(jq -r 'select(.msg == "starting") | .settings' "$W/settings.out" 2>/dev/null) "
  for v in "${vars[@]}"; do
    flag=${v%%=*}; flag=${flag#REDIS_OPERATOR_}; flag=${flag,,}; flag=${flag//_/-}
    [[ "$settings" == *" $flag=${v#*=} "* ]] || { echo "$v: not in force ($settings)"; bad=1; }
    n=$((n + 1))
  done
  [ $bad -eq 0 ] && echo "$n settings in force"
}

check "helm lint --strict" t_lint
check "bad values refused, the field named (${#bad_values[@]} cases)" t_bad_values
check "crds/ is config/crd/bases, byte for byte" t_crds_copied
CHECK_TAIL=40 check "default values render the objects of kubectl kustomize config/default" t_no_drift
check "every value reaches the binary as a setting it accepts (ConfigMap, env)" t_settings_accepted

if [ "${OFFLINE:-0}" = 1 ]; then
  rm -rf "$W"
  counts_write helm " (offline, $(($(date +%s) - t_start))s)"
  exit
fi

# --- on the local environment -----------------------------------------------------------

if ! api_ready && ! bash test/env/up.sh >/dev/null 2>&1; then
  check_fail "the local control plane is up"
  rm -rf "$W"
  counts_write helm
  exit 1
fi
K="$KUBECTL --kubeconfig $KUBECONFIG_ADMIN"
NODE=$RUN-node-1
TAINT_KEY=nodeagent.redis-operator.test/dev
# 10.240.13-31: an address range no other agent of the tree hands out
CIDR=${HELM_POD_CIDR:-10.240.$((13 + RANDOM % 19)).0/24}
CGROUP=/sys/fs/cgroup/freezer/ro-pods-$RUN
OPNS=$RUN-op DATANS=$RUN-data REL=$RUN
AGENT_PID=
# start_agent, newns, mkcluster, ready, inst, secret, leader_ip, rcli, nodes...: the
# helpers of the controller's integration tests (their poll is quiet: same contract)
. test/integration/controller/lib.sh

trap release_cleanup EXIT
trap 'exit 130' INT TERM
release_values "$W/values.yaml" dev

metrics_ep() {
  $K -n "$OPNS" get endpointslices -l "kubernetes.io/service-name=$RUN-redis-operator-metrics" \
    -o jsonpath='{range .items[*]}{range .endpoints[?(@.conditions.ready==true)]}{.addresses[0]}:{end}{.ports[0].port}{end}' 2>/dev/null |
    grep -E '^[0-9.]+:[0-9]+$'
}
pvcs() { $K -n "$DATANS" get pvc -l redis.io/cluster=rc -o jsonpath='{range .items[*]}{.metadata.name}={.status.phase} {end}'; }

t_dry_run() {
  "$HELM" template redis-operator "$CHART" -n "$OPNS" --include-crds >"$W/default.yaml" || return 1
  $K apply --dry-run=server -f "$W/default.yaml" >"$W/dry-run.out" 2>&1 || { cat "$W/dry-run.out"; return 1; }
  ! grep -i 'podsecurity\|would violate' "$W/dry-run.out" || fail "Pod Security warnings"
  echo "$(grep -c 'server dry run' "$W/dry-run.out") objects accepted"
}

t_install() {
  local pod line
  h -n "$OPNS" install "$REL" "$CHART" -f "$W/values.yaml" --wait --timeout 120s >"$W/install.out" 2>&1 ||
    fail "helm install: $(tail -5 "$W/install.out"); pods: $(op_pods)"
  poll 30 one_leader || fail "the operator pod does not hold the Lease $RUN-redis-operator-leader: $(op_pods), holder $(lease_holder)"
  pod=$(op_pods | awk '{print $1}')
  line=$("$BUILD/nodeagent" logs --state-dir "$W/na" "$OPNS/$pod" manager 2>&1 | grep -m1 'msg=starting')
  for want in "cluster-selector=\\\"redis-operator.test/run=$RUN\\\"" "image=redis-operator:dev " \
    "lease-duration=6s" "leader-election-lease=$RUN-redis-operator-leader" "status-refresh=2s" "namespace=$OPNS "; do
    grep -qF -- "$want" <<<"$line" || fail "$want not in the operator's start-up line: $line"
  done
  # /metrics through the metrics Service's endpoints (no kube-proxy here: the slice's address)
  poll 30 eval '[ -n "$(metrics_ep)" ]' || fail "no ready endpoint in the $RUN-redis-operator-metrics EndpointSlice"
  # read whole first: grep -q leaving early makes curl fail on a larger body (pipefail)
  grep -q '^redis_operator_leader 1' <<<"$(curl -sf --max-time 2 "http://$(metrics_ep)/metrics")" ||
    fail "no redis_operator_leader 1 at http://$(metrics_ep)/metrics"
  echo "$pod" >"$W/op-before"
  echo "$pod leads; /metrics at $(metrics_ep) (Service $RUN-redis-operator-metrics)"
}

t_ready() {
  newns "$DATANS" || return 1
  mkcluster "$DATANS" rc 2
  poll 120 ready "$DATANS" rc || fail "not Ready: $(rc "$DATANS" rc '{.status.phase} {.status.conditions}')"
  poll 20 eval '[ "$(rcli "$(leader_ip "$DATANS" rc)" "$(secret "$DATANS" rc-auth)" SET helm-it kept)" = OK ]' ||
    fail "no write through rc-leader"
  poll 20 eval 'redis_state "$DATANS" rc >"$W/redis-before" && [ "$(grep -c . "$W/redis-before")" = 2 ]' || fail "no /v1/status from the pods"
  poll 10 eval '[ "$(pvcs | wc -w)" = 2 ]' || fail "PVCs: $(pvcs)"
  echo "Ready; $(pvcs)"
}

t_upgrade() {
  local old new looked t0 t1 t2
  old=$(cat "$W/op-before")
  t0=$(date +%s)
  h -n "$OPNS" upgrade "$REL" "$CHART" -f "$W/values.yaml" --set image.tag=dev2 --wait --timeout 120s >"$W/upgrade.out" 2>&1 ||
    fail "helm upgrade: $(tail -5 "$W/upgrade.out")"
  t1=$(date +%s)
  poll 60 one_leader || fail "no single new leader: $(op_pods), holder $(lease_holder)"
  t2=$(date +%s)
  new=$(op_pods)
  [ "$(awk '{print $1}' <<<"$new")" != "$old" ] || fail "the operator pod was not replaced: $new"
  [ "$(awk '{print $3}' <<<"$new")" = redis-operator:dev2 ] || fail "operator image: $new"
  poll 30 new_leader_looked "$DATANS" rc 2
  looked=$?
  echo "upgrade $((t1 - t0))s, new leader $((t2 - t1))s, status $(($(date +%s) - t2))s"
  redis_state "$DATANS" rc >"$W/redis-after"
  diff "$W/redis-before" "$W/redis-after" || fail "Redis pods or servers restarted (name uid pid sessionId, before/after)"
  [ $looked = 0 ] || fail "the new leader did not poll the instances: $(rc "$DATANS" rc '{.status.instancesStatus}')"
  ready "$DATANS" rc || fail "not Ready after the upgrade"
  echo "operator $old -> $(awk '{print $1}' <<<"$new") (helm upgrade $((t1 - t0))s, one leader $((t2 - t1))s more, status $(($(date +%s) - t2))s more); Redis unchanged: $(awk '{print $1}' "$W/redis-after" | paste -sd' ')"
}

t_uninstall() {
  local ip
  h -n "$OPNS" uninstall "$REL" --wait --timeout 60s >"$W/uninstall.out" 2>&1 || fail "helm uninstall: $(tail -3 "$W/uninstall.out")"
  poll 30 eval '[ -z "$(op_pods)" ]' || fail "operator pods left: $(op_pods)"
  [ -z "$($K get clusterrole,clusterrolebinding -l "app.kubernetes.io/instance=$REL" -o name)" ] || fail "cluster roles left"
  [ -z "$($K -n "$OPNS" get deployment,configmap,serviceaccount,role,rolebinding -l "app.kubernetes.io/instance=$REL" -o name)" ] ||
    fail "release objects left"
  $K get crd redisclusters.redis.io redisbackups.redis.io redisscheduledbackups.redis.io >/dev/null || fail "a CRD is gone"
  $K -n "$DATANS" get rediscluster rc >/dev/null || fail "the RedisCluster is gone"
  [ "$(pvcs | grep -o '=Bound' | wc -l)" = 2 ] || fail "PVCs: '$(pvcs)'"
  ip=$(leader_ip "$DATANS" rc)
  [ "$(rcli "$ip" "$(secret "$DATANS" rc-auth)" GET helm-it)" = kept ] || fail "the key written before is not read back"
  echo "kept: $(pvcs), the CRDs, the RedisCluster and its data"
}

info() { echo "info helm: $*"; }
if ! start_agent; then
  check_fail "private node agent" "$(tail -3 "$W/nodeagent.log")"
else
  newns "$OPNS" && $K label namespace "$OPNS" pod-security.kubernetes.io/warn=restricted >/dev/null
  info "run $RUN, node $NODE, pods in $CIDR, helm $("$HELM" version --short)"
  check "helm template (default values) accepted by kubectl apply --dry-run=server, no Pod Security warning" t_dry_run
  if check "helm install: operator Ready on the private Node, leader, values in force, /metrics behind its Service" t_install &&
    check "a RedisCluster Ready through the installed operator (2 instances, PVCs)" t_ready; then
    check "helm upgrade to image tag dev2: operator replaced, no Redis pod or server restarted" t_upgrade
    check "helm uninstall: operator objects gone; PVCs, CRDs, RedisCluster and data kept" t_uninstall
  else
    check_fail "helm upgrade" "skipped: install or cluster failed"
    check_fail "helm uninstall" "skipped: install or cluster failed"
  fi
fi
counts_write helm " ($(($(date +%s) - t_start))s)"
