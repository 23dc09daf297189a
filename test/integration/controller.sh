#!/usr/bin/env bash
# End-to-end checks of `redis-operator controller` on the local environment (test/env):
# a real API server, kube-controller-manager (endpoint slices, garbage collector, PVC
# binding) and a node agent running the data pods as processes.
#
# The script starts its own node agent (a tainted Node "<run>-node-1", its own pod range
# and state dir) so that the pods run the redis-operator binary just built
# ($BUILD/redis-operator), and its own controller as a host process
# (--kubeconfig, --cluster-selector redis-operator.test/run=<run>, so it only touches the
# clusters made here). Every check has its own namespace (Pod Security "restricted"
# enforced). The last check deploys the operator itself with `kubectl apply -k` of an
# overlay of config/default (only a toleration and nodeSelector for the private Node and
# the same cluster selector) and drives a cluster through it.
#
# Prints one line per check and "info" lines with figures (time to Ready, failover and
# switchover times); records "passed failed" in $RESULTS/controller.counts.
#   BUILD=build/h12 bash test/integration/controller.sh      (KEEP=1 keeps the work dir)
#   ONLY='t_one|t_scale' runs only the checks whose function matches the regex.
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/env/common.sh
BUILD=${BUILD:-build}
RESULTS=${RESULTS:-$BUILD/test-results}
mkdir -p "$RESULTS"
counts="$RESULTS/controller.counts"
passed=0 failed=0
# check NAME FUNCTION: runs FUNCTION in a subshell (`fail` exits it: errexit would be
# ignored in an if condition); what it notes in $W/info is printed after its line.
check() {
  local name=$1; shift
  local t0=$(date +%s)
  [ -n "${ONLY:-}" ] && ! [[ "$1" =~ $ONLY ]] && return 0
  : >"$W/info"
  if ( "$@" ) >"$W/check.out" 2>&1; then
    echo "ok   controller: $name ($(( $(date +%s) - t0 ))s)"; passed=$((passed + 1))
  else
    echo "FAIL controller: $name"; tail -12 "$W/check.out" | sed 's/^/     /'; failed=$((failed + 1))
  fi
  sed 's/^/info controller: /' "$W/info"
}
info() { echo "info controller: $*"; }
finish() { echo "$passed $failed" >"$counts"; echo "controller: $passed passed, $failed failed"; }

if ! make -s BUILD="$BUILD" "$BUILD/redis-operator" "$BUILD/nodeagent" "$BUILD/controller-it-writer" >/dev/null; then
  echo "0 1" >"$counts"; echo "FAIL controller: cannot build"; exit 1
fi
if ! api_ready && ! bash test/env/up.sh >/dev/null 2>&1; then
  echo "0 1" >"$counts"; echo "FAIL controller: the local control plane is not up"; exit 1
fi

BIN=$(pwd)/$BUILD/redis-operator
WRITER=$(pwd)/$BUILD/controller-it-writer
. test/integration/controller/lib.sh
private_run cit controller-it "${CONTROLLER_POD_CIDR:-10.240.$((100 + RANDOM % 100)).0/24}"
. test/integration/controller/bootstrap_checks.sh
. test/integration/controller/backup_checks.sh
. test/integration/controller/unsupported_checks.sh
. test/integration/controller/acl_checks.sh
. test/integration/controller/sentinel_checks.sh
. test/integration/controller/tls_checks.sh

cleanup() {
  local ns
  stop_controller main >/dev/null; stop_controller standby >/dev/null
  [ -s "$W/deployed" ] && $K -n redis-operator-system delete deployment/redis-operator \
    configmap/redis-operator-config --ignore-not-found --wait=false >/dev/null 2>&1
  stop_private_env
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_agent || { echo "0 1" >"$counts"; echo "FAIL controller: node agent"; tail -5 "$W/nodeagent.log"; exit 1; }
$K apply -f config/crd/bases >/dev/null 2>&1
newns "$OPNS" >/dev/null
start_controller || { echo "0 1" >"$counts"; echo "FAIL controller: controller did not start"; tail -5 "$W/controller-main.log"; exit 1; }
info "run $RUN, node $NODE, pods in $CIDR, work dir $W"

check "controller: health, readiness, leader Lease, metrics" t_process
check "1 instance: Ready, writes through <name>-leader, children with owner references" t_one
check "3 instances: Ready, replicas streaming, role labels, PDBs, restricted pods" t_three
check "failover after SIGKILL of the primary's server: no WAIT-acknowledged write lost" t_failover_kill
check "failover after deleting the primary pod: no WAIT-acknowledged write lost" t_failover_delete
check "switchover on request (redis.io/switchover-to): leader follows, no write lost" t_switchover
check "instance API over HTTPS: client certificates, two CAs, pods cannot act as the operator" t_tls
check "operator-tls deleted: instance Secret re-issued from the new CAs, managers reload, polls back, no restart" t_tls_heal
check "server TLS: the connection Secret gives rediss:// and ca.crt; redis-cli --tls with them answers PONG" t_tls_conn
check "certificate renewal at 2/3 of the lifetime: the controller's client certificate and the pods' server certificate re-issued, served without a restart" t_tls_renew
check "server TLS, 3 instances: Ready, replicas streaming over TLS, no plain port, a client of another CA refused" t_tls_create
check "server TLS, tlsClientAuth required: tls-auth-clients yes, a client without a certificate refused, replicas and managers still connect" t_tls_client_auth
check "server TLS: switchover on request, the managers' peer calls over TLS, no WAIT-acknowledged write lost" t_tls_switchover
check "server TLS: failover after SIGKILL of the primary's server, no WAIT-acknowledged write lost" t_tls_failover_kill
check "server TLS: rolling update (primary by switchover) with the writer, no WAIT-acknowledged write lost" t_tls_rolling
check "server TLS: scale 3 -> 5 -> 2, new replicas sync over TLS" t_tls_scale
check "server TLS: password rotation, old and new valid over TLS, old dropped" t_tls_password
check "server TLS, sentinel mode: TLS-only sentinels name the primary; SIGKILL of its server, Sentinel promotes over TLS, no WAIT-1 write lost" t_tls_sentinel_failover
# quiesce between groups: the clusters of the checks above are not used below, and on 2
# cores ~40 live clusters (each primary renewing its Lease every second, the sentinels,
# the pollers) stalled the API server for 3 s: every primary's Lease PUT timed out, every
# primary fenced itself and the sentinel checks below waited 46 s for a failover that
# Sentinel had done in 3 (a CI run of this session). Each group keeps its own clusters.
quiesce
check "live maxmemory change: no restart (same pod uids, same server pids)" t_live
check "restart-tier change: rolling update, replicas first, primary by switchover" t_rolling
check "scale 3 -> 5 -> 2: highest serials removed, PVCs too, primary kept; dangling PVCs and a hand-made pod left alone, in status" t_scale
check "delete: every child garbage-collected" t_delete
check "password rotation: old and new valid, connection Secret updated, old dropped" t_password
check "supervised primary update: replicas rolled, primary waits for redis.io/approve-primary-update" t_supervised
check "hibernation: pods removed, PVCs kept, Hibernated; woken with the data, Ready" t_hibernation
check "emptyDir, 3 instances: a deleted replica resyncs from the primary, no PVCs" t_emptydir
check "storage.size grown: PVCs expanded in place, no restart" t_grow
check "pvcRetention Retain: scale down keeps the PVC (dangling), scale up reuses it" t_retain
quiesce
check "bootstrap from a RedisBackup on S3: every key and value on every pod, the restore source on the first primary only" t_bootstrap_s3
check "bootstrap from a RedisBackup on Azurite: every key and value on every pod" t_bootstrap_azure
check "bootstrap naming a missing backup: BackupNotFound, no pod for 20 s, proceeds once it exists" t_bootstrap_missing
check "bootstrap from a corrupt dump: RestoreFailed from status.restore, no empty primary" t_bootstrap_corrupt
check "RedisBackup to S3 (prefer-replica): Pending, Running, Completed on a replica; manifest and dump stored, size and checksum in status" t_backup_s3
check "RedisBackup to Azurite (primary, the destination's own Secret): Completed, manifest and dump stored" t_backup_azure
check "RedisBackup with wrong credentials: Failed naming the storage's 403, no manifest, no secret in Events" t_backup_wrong_credentials
check "RedisBackup to a missing bucket: Failed naming NoSuchBucket" t_backup_missing_bucket
check "RedisBackup without credentials: a missing Secret is said, none at all fails with a clear message" t_backup_no_credentials
check "RedisBackup whose source pod is deleted mid-upload: retried elsewhere or failed, never Running, no partial manifest" t_backup_pod_deleted
check "RedisBackup with deletionPolicy Delete: deleting it deletes its objects, then the finalizer" t_backup_delete_policy
check "RedisScheduledBackup every minute: fires twice, one at a time, retention deletes the older, the newest kept, suspend stops it" t_backup_schedule
check "RedisScheduledBackup retention with Object Lock: a held run kept whole (RetentionBlocked, an Event), deleted once released" t_backup_retention_lock
check "fields accepted but not acted on: UnsupportedFields names them, one Warning per message, the cluster still managed" t_unsupported
check "mode: cluster: phase Unsupported, no pods, UnsupportedFields names spec.mode and spec.shards" t_unsupported_cluster_mode
check "aclConfigSecret: the file's users on every pod, changed and removed live, a refused file (spec.users' or the operator's user) changes nothing and is reported by line" t_acl_config
quiesce
check "sentinel mode: 3 data + 3 sentinel pods Ready, get-master-addr-by-name through each sentinel answers the primary, status.sentinels" t_sentinel_create
check "sentinel mode: a deleted sentinel pod is recreated, Ready again, the sentinels agree, a SENTINEL RESET asked for" t_sentinel_pod_lost
check "sentinel mode: switchover by annotation: the primary's manager pauses writes until the replicas have its offset, then Sentinel moves the master; no WAIT-1 write lost" t_sentinel_switchover
check "sentinel mode: switchover-to=<pod> twice: the named replica becomes the primary (the others' replica-priority 0 for the move, restored after), no WAIT-1 write lost" t_sentinel_switchover_to
check "sentinel mode: rolling update under a WAIT-1 writer: every data pod replaced, the primary last through SENTINEL FAILOVER, no write lost" t_sentinel_rolling
check "sentinel mode: spec.sentinel.count 3 → 5 → 3: enough sentinels with CKQUORUM OK for a failover throughout, no stale sentinel left in any view" t_sentinel_scale
check "sentinel mode: the auth Secret rotated: the sentinels take the new password live, then drop the old one; no restart, no +sdown, no failover; a failover after it works" t_sentinel_password
check "sentinel mode: SIGKILL of the primary's server: Sentinel promotes, currentPrimary/labels/leader follow, no WAIT-1 write lost" t_sentinel_failover
check "sentinel mode: the primary's pod deleted: not recreated before Sentinel promotes, back as a replica, no WAIT-1 write lost" t_sentinel_delete
check "sentinel mode: standalone → sentinel in place: same primary pod and server, data kept, 3 sentinels name it, no WAIT-1 write lost; then Sentinel fails over" t_sentinel_migrate
check "sentinel mode: standalone 2 → sentinel 3 in place: both managers follow in their pods, data kept, no WAIT-1 write lost; then Sentinel fails over" t_sentinel_migrate_replica
check "sentinel mode: the primary's server killed right after the move to sentinel: held down by its manager once the sentinels name it, a primary back with the data, Ready" t_sentinel_migrate_crash
# The checks below restart the suite's controller and time its Lease: they run without
# the clusters of the checks above (quiesce keeps only the operator's namespace). On 2
# cores, the clusters of those 26 namespaces (their managers each renewing a primary
# Lease every second) kept the API server from answering the new leader's Lease PUT
# within the 2 s its client allows ("http: Handler timeout" in the API server's log),
# and the leader lost its Lease 4 s after taking it.
quiesce
check "failover resumed from status.failover by a restarted controller" t_resume
check "standby controller: ready, not leading, takes over when the leader stops" t_standby
check "leader Lease lost: writes stop, the controller exits 1" t_lease_lost
check "deployed with kubectl apply -k (Deployment, RBAC, in-cluster config, settings ConfigMap)" t_deployed
finish
[ $failed -eq 0 ]
