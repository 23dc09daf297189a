# test/helm/lib.sh: what the Helm suite (test/helm/helm.sh) and the operator upgrade test
# (test/upgrade/upgrade.sh) share: a release of the chart on the local environment, scoped
# like test/integration/controller.sh's deployed operator (its own names, a private tainted
# Node, a cluster selector), and the checks around replacing its pod. Source it after
# test/lib.sh; it sets HELM_{CONFIG,CACHE,DATA}_HOME under $W and defines functions.
# They read, when called: HELM, K, W, RUN, NODE, TAINT_KEY, OPNS (the release's
# namespace), REL (the release), SUITE; the cluster helpers (poll, rc, inst, nodes...) are
# test/integration/controller/lib.sh's.
#
#   check NAME CMD...             test/lib.sh's, plus the time taken and, on success, the
#                                 last line of CMD's output as an "info" line
#   h ARGS...                     helm on the local control plane
#   release_values FILE TAG       the release's values, image redis-operator:TAG
#   op_pods                       the operator's pods: name uid image deletionTimestamp
#   lease_holder, one_leader      the leader Lease's holder; one live operator pod holds it
#   redis_state NS NAME           per data pod: name uid server-pid sessionId (/v1/status)
#   new_leader_looked NS NAME N   the leader polled all N instances 3 s after taking the Lease
#   release_cleanup               trap EXIT: uninstall, namespaces, the agent, its Nodes, $W

# helm keeps its repositories, cache and plugins here, not in ~/.config
export HELM_CONFIG_HOME=$W/helm/config HELM_CACHE_HOME=$W/helm/cache HELM_DATA_HOME=$W/helm/data

check() {
  local name=$1 out rc t0
  shift
  t0=$(date +%s)
  out=$("$@" 2>&1)
  rc=$?
  if [ $rc -eq 0 ]; then
    check_pass "$name ($(($(date +%s) - t0))s)"
    [ -z "$out" ] || echo "info $SUITE: $(tail -1 <<<"$out")"
  else
    check_fail "$name"
    printf '%s\n' "$out" | tail -n "${CHECK_TAIL:-8}" | sed 's/^/     /'
  fi
  return $rc
}

h() { "$HELM" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

# The release's values: names of its own (cluster-scoped ones too), the private Node, this
# run's RedisClusters only, the leader Lease's timings short enough for a quick hand-over.
release_values() {
  cat >"$1" <<Y
fullnameOverride: $RUN-redis-operator
image: {repository: redis-operator, tag: $2}
clusterSelector: redis-operator.test/run=$RUN
logFormat: logfmt
leaderElection: {enabled: true, leaseDuration: 6s, renewDeadline: 4s, retryPeriod: 1s}
tunables: {statusRefresh: 2s, resyncPeriod: 2s}
metrics: {service: {enabled: true}}
tolerations: [{key: $TAINT_KEY, operator: Equal, value: $RUN, effect: NoSchedule}]
nodeSelector: {kubernetes.io/hostname: $NODE}
Y
}

op_pods() {
  $K -n "$OPNS" get pods -l app.kubernetes.io/name=redis-operator \
    -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.uid} {.spec.containers[0].image} {.metadata.deletionTimestamp}{"\n"}{end}'
}
lease_holder() { $K -n "$OPNS" get lease "$RUN-redis-operator-leader" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
# the single live operator pod (no other, none terminating) holds the leader Lease
one_leader() {
  local p
  p=$(op_pods)
  [ "$(grep -c . <<<"$p")" = 1 ] && [ "$(awk '{print $4}' <<<"$p")" = "" ] &&
    [ "$(lease_holder)" = "$(awk '{print $1}' <<<"$p")" ]
}
# redis_state NS NAME: one line per data pod: name, uid, server pid, sessionId (/v1/status)
redis_state() {
  local p s
  for p in $($K -n "$1" get pods -l "redis.io/cluster=$2" -o jsonpath='{.items[*].metadata.name}'); do
    s=$(inst "$1" "$p") || return 1
    echo "$p $($K -n "$1" get pod "$p" -o jsonpath='{.metadata.uid}') $(jq -r '"\(.server.pid) \(.sessionId)"' <<<"$s")"
  done | sort
}

# The new leader has polled every instance and written the status more than 3 s after it
# took the Lease (lastSeen; resyncPeriod and statusRefresh are 2s): its first reconcile
# is over, and any restart it decided on has begun (seen: tunables.runAsUser=1000 in the
# same upgrade, a restart-tier change, fails this check with both pods replaced).
new_leader_looked() {
  local acq t n=0
  acq=$(date -d "$($K -n "$OPNS" get lease "$RUN-redis-operator-leader" -o jsonpath='{.spec.acquireTime}')" +%s) || return 1
  for t in $(rc "$1" "$2" '{.status.instancesStatus[*].lastSeen}'); do
    [ "$(date -d "$t" +%s)" -gt $((acq + 3)) ] || return 1
    n=$((n + 1))
  done
  [ $n = "$3" ]
}

release_cleanup() {
  local ns
  h -n "$OPNS" uninstall "$REL" --wait --timeout 60s >/dev/null 2>&1
  $K delete clusterrole,clusterrolebinding -l "app.kubernetes.io/instance=$REL" --ignore-not-found >/dev/null 2>&1
  stop_private_env
}
