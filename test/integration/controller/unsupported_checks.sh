# Sourced by test/integration/controller.sh: fields the operator accepts but does not act on
# (controller/unsupported.c) are reported on the cluster, never silently ignored, and the
# rest of the cluster is managed as usual.

# unsup_msg NS NAME: the UnsupportedFields condition's message
unsup_msg() { rc "$1" "$2" '{.status.conditions[?(@.type=="UnsupportedFields")].message}'; }
# unsup_events NS: the notes of the UnsupportedFields events, one a line
unsup_events() {
  $K -n "$1" get events.events.k8s.io \
    -o jsonpath='{range .items[?(@.reason=="UnsupportedFields")]}{.type} {.note}{"\n"}{end}' 2>/dev/null
}

# A cluster with three unsupported fields becomes Ready like any other and says which;
# its Warning comes once per message; dropping a field updates both; none left: no condition.
t_unsupported() {
  local ns=$RUN-unsup msg f
  newns $ns
  mkcluster $ns uns 1 "  nodeMaintenanceWindow: {inProgress: true}
  primaryIsolation: {peerTimeout: 5s}
  exposure: {enabled: true, entryPoints: [redis]}"
  poll 90 ready $ns uns || fail "not Ready: $(rc $ns uns '{.status.phase} {.status.phaseReason}')"
  [ "$(cond $ns uns UnsupportedFields)" = True ] || fail "no UnsupportedFields condition: $(rc $ns uns '{.status.conditions}')"
  msg=$(unsup_msg $ns uns)
  for f in spec.nodeMaintenanceWindow spec.primaryIsolation.peerTimeout spec.exposure; do
    case "$msg" in *"$f: "*) ;; *) fail "the condition does not name $f: $msg" ;; esac
  done
  poll 10 eval '[ -n "$(unsup_events '$ns')" ]' || fail "no UnsupportedFields event"
  unsup_events $ns | grep -q '^Warning .*spec.primaryIsolation.peerTimeout, spec.nodeMaintenanceWindow, spec.exposure' ||
    fail "event: $(unsup_events $ns)"
  [ "$(unsup_events $ns | wc -l)" = 1 ] || fail "more than one event for one message: $(unsup_events $ns)"
  poll 10 write_via_leader $ns uns || fail "no write through uns-leader: not managed"
  note "unsupported fields reported: $msg"
  $K -n $ns patch rediscluster uns --type=json -p '[{"op":"remove","path":"/spec/exposure"}]' >/dev/null
  poll 30 eval 'case "$(unsup_msg '$ns' uns)" in *spec.exposure*) false ;; *spec.nodeMaintenanceWindow*) true ;; *) false ;; esac' ||
    fail "spec.exposure removed, the condition says: $(unsup_msg $ns uns)"
  poll 10 eval '[ "$(unsup_events '$ns' | wc -l)" = 2 ]' || fail "no event for the new message: $(unsup_events $ns)"
  $K -n $ns patch rediscluster uns --type=json \
    -p '[{"op":"remove","path":"/spec/nodeMaintenanceWindow"},{"op":"remove","path":"/spec/primaryIsolation"}]' >/dev/null
  poll 30 eval '[ -z "$(cond '$ns' uns UnsupportedFields)" ]' || fail "the condition stays with none left: $(unsup_msg $ns uns)"
  # primaryIsolation is a restart input (the self-fence deadline): the pod restarts once
  poll 90 ready $ns uns || fail "not Ready after the fields were removed"
}

# mode: cluster is the one unsupported value that stops management: phase Unsupported,
# no pods, and the condition names it.
t_unsupported_cluster_mode() {
  local ns=$RUN-unsupc
  newns $ns
  $K -n $ns apply -f - >/dev/null <<Y || fail "cluster-mode RedisCluster refused"
apiVersion: redis.io/v1
kind: RedisCluster
metadata: {name: shard, labels: {redis-operator.test/run: $RUN}}
spec: {mode: cluster, shards: 3, storage: {size: 64Mi}}
Y
  poll 30 eval '[ "$(rc '$ns' shard "{.status.phase}")" = Unsupported ]' || fail "phase: $(rc $ns shard '{.status.phase}')"
  case "$(unsup_msg $ns shard)" in *"spec.mode: cluster: "*"spec.shards: "*) ;; *) fail "condition: $(unsup_msg $ns shard)" ;; esac
  [ "$(count $ns pod shard)" = 0 ] || fail "pods were created for a cluster-mode RedisCluster"
}
