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
RUN=cit$(( $$ % 10000 ))$(( RANDOM % 100 ))
W=$(mktemp -d /tmp/controller-it.XXXXXX)
K="$ENV_BIN/kubectl --kubeconfig $KUBECONFIG_ADMIN"
NODE=$RUN-node-1
TAINT_KEY=nodeagent.redis-operator.test/dev
CIDR=${CONTROLLER_POD_CIDR:-10.240.$(( 100 + RANDOM % 100 )).0/24}
CGROUP=/sys/fs/cgroup/freezer/ro-pods-$RUN
OPNS=$RUN-op
HPORT=$(( 20000 + RANDOM % 20000 )); MPORT=$((HPORT + 1))
AGENT_PID=
. test/integration/controller/lib.sh

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
check "failover resumed from status.failover by a restarted controller" t_resume
check "standby controller: ready, not leading, takes over when the leader stops" t_standby
check "leader Lease lost: writes stop, the controller exits 1" t_lease_lost
check "deployed with kubectl apply -k (Deployment, RBAC, in-cluster config, settings ConfigMap)" t_deployed
finish
[ $failed -eq 0 ]
