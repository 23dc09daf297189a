#!/usr/bin/env bash
# The operator upgraded under running clusters, part of `make test` (test/run-integration.sh).
#
# The previous operator: UPGRADE_FROM (a commit, default HEAD~1), its image built by `make
# image` in a git worktree of that commit (own BUILD dir), kept with its chart under
# $CACHE/upgrade/<commit> so that a rerun builds nothing (the three newest commits are
# kept). The current one: this tree's chart and `make image`. A private node agent (a
# tainted Node "<run>-node-1", like test/helm/helm.sh) runs both OCI images
# (--oci-images redis-operator:prev-<commit>=...,redis-operator:cur-<commit>=...), so the
# operator and the data pods' copy-binary init container run each image's own binary.
#
# Steps: helm install of the previous chart and image, scoped to this run's RedisClusters;
# a 3-instance RedisCluster Ready under a WAIT-1 chaos-writer; then `helm upgrade` to the
# current chart and image while the Ready condition is sampled every 0.5 s. Checks: the
# operator pod replaced, the new one leading and polling every instance; no Redis pod
# uid, server pid or sessionId (/v1/status) changed; no failover (currentPrimary and
# status.lastFailover unchanged, no FailoverStarted, SwitchoverStarted, RollingUpdate,
# PrimaryRestarted or PodRecreated event); Ready=True with 3/3 at every sample; no
# acknowledged write lost (chaos-writer verify, the upgrade's start as its fault time).
# The CRDs are the current tree's throughout (the control plane is shared with other
# suites, which apply them too).
#
# A release that bumps DESIRED_POD_GENERATION (controller/desired.h) rolls every cluster on
# purpose: against the commit before it this suite fails by design.
#
# Prints one line per check; "passed failed" in $RESULTS/upgrade.counts.
#   bash test/upgrade/upgrade.sh               (BUILD=build-x, KEEP=1 keeps the work dir)
#   UPGRADE_FROM=<rev> bash test/upgrade/upgrade.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/env/common.sh
BUILD=${BUILD:-build}
export RESULTS=${RESULTS:-$BUILD/test-results}
SUITE=upgrade
. test/lib.sh
t_start=$(date +%s)
FROM=${UPGRADE_FROM:-HEAD~1}
CHART=charts/redis-operator
# 10.240.4-11: an address range no other agent of the tree hands out
CONTROLLER_POD_CIDR=${UPGRADE_POD_CIDR:-10.240.$((4 + RANDOM % 8)).0/24}
# start_agent, newns, mkcluster, ready, rc, primary, inst, events, poll, fail (the e2e
# harness's helpers) and op_writer_start, op_writer_stop, op_verify, acked_any (the
# chaos-writer glue): test/bench/operator-lib.sh, whose run names are replaced by ours
. test/bench/operator-lib.sh
rmdir "$W"
W=$(mktemp -d /tmp/upgrade-it.XXXXXX)
RUN=upg$(($$ % 10000))$((RANDOM % 100))
NODE=$RUN-node-1 CGROUP=/sys/fs/cgroup/freezer/ro-pods-$RUN
OPNS=$RUN-op DATANS=$RUN-data REL=$RUN
OP_RATE=${UPGRADE_RATE:-200}
SAMPLER_PID=
# check (timed, with an info line), h, release_values, op_pods, one_leader, redis_state,
# new_leader_looked, release_cleanup: test/helm/helm.sh's
. test/helm/lib.sh
info() { echo "info upgrade: $*"; }
end() { counts_write upgrade " ($(($(date +%s) - t_start))s)"; }

cleanup() {
  [ -n "${OP_WPID:-}" ] && op_writer_stop
  [ -n "$SAMPLER_PID" ] && touch "$W/sampler-stop" && wait "$SAMPLER_PID" 2>/dev/null
  [ -d "$W/src" ] && git worktree remove --force "$W/src" >/dev/null 2>&1
  release_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the two images ---------------------------------------------------------------------

REV=$(git rev-parse --verify -q "$FROM^{commit}") || {
  check_fail "UPGRADE_FROM=$FROM names a commit"
  end
  exit 1
}
PREV=$CACHE/upgrade/$REV
PREV_TAG=prev-${REV:0:12} CUR_TAG=cur-$(git rev-parse --short=12 HEAD)

# The previous commit's image and chart into $PREV, unless there already (complete: it is
# made under another name and renamed).
build_prev() {
  local src=$W/src rc
  [ -s "$PREV/redis-operator-oci.tar" ] && [ -f "$PREV/chart/Chart.yaml" ] && { echo "cached in $PREV"; return 0; }
  git worktree add -q --detach "$src" "$REV" || return 1
  make -C "$src" -s -j2 BUILD=build-upgrade image >"$W/prev-build.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] && [ ! -f "$src/charts/redis-operator/Chart.yaml" ] && { echo "${REV:0:12} has no chart"; rc=1; }
  if [ $rc -eq 0 ]; then
    rm -rf "$PREV.new" && mkdir -p "$PREV.new" &&
      cp "$src/build-upgrade/image/redis-operator-oci.tar" "$PREV.new/" &&
      cp -r "$src/charts/redis-operator" "$PREV.new/chart" && rm -rf "$PREV" && mv "$PREV.new" "$PREV"
    rc=$?
  else
    tail -5 "$W/prev-build.log"
  fi
  git worktree remove --force "$src"
  # keep the three newest
  ls -dt "$CACHE"/upgrade/*/ 2>/dev/null | tail -n +4 | xargs -r rm -rf
  [ $rc -eq 0 ] && echo "built into $PREV"
}

t0=$(date +%s)
if ! make -s BUILD="$BUILD" "$BUILD/redis-operator" "$BUILD/nodeagent" "$BUILD/chaos-writer" image >"$W/build.log" 2>&1 ||
  ! HELM=$(bash test/helm/build.sh | tail -1) || [ ! -x "$HELM" ] || ! UMOCI=$(bash image/tool.sh | tail -1); then
  check_fail "build (operator, node agent, chaos-writer, image, helm, umoci)"
  grep -m5 -i error "$W/build.log" | sed 's/^/     /'
  end
  exit 1
fi
check_pass "current image built: redis-operator:$CUR_TAG ($(($(date +%s) - t0))s)"
t0=$(date +%s)
if ! out=$(build_prev 2>&1); then
  check_fail "previous image (${REV:0:12}, UPGRADE_FROM=$FROM)"
  tail -8 <<<"$out" | sed 's/^/     /'
  end
  exit 1
fi
check_pass "previous image and chart of ${REV:0:12} ($FROM): redis-operator:$PREV_TAG ($(($(date +%s) - t0))s)"
info "$(tail -1 <<<"$out")"

if ! api_ready && ! bash test/env/up.sh >/dev/null 2>&1; then
  check_fail "the local control plane is up"
  end
  exit 1
fi
release_values "$W/values.yaml" "$PREV_TAG"

# --- checks -----------------------------------------------------------------------------

t_install() {
  h -n "$OPNS" install "$REL" "$PREV/chart" -f "$W/values.yaml" --wait --timeout 120s >"$W/install.out" 2>&1 ||
    fail "helm install: $(tail -5 "$W/install.out"); pods: $(op_pods)"
  poll 30 one_leader || fail "the operator pod does not hold the Lease $RUN-redis-operator-leader: $(op_pods), holder $(lease_holder)"
  [ "$(op_pods | awk '{print $3}')" = "redis-operator:$PREV_TAG" ] || fail "operator image: $(op_pods)"
  op_pods | awk '{print $1}' >"$W/op-before"
  echo "$(cat "$W/op-before") leads"
}

t_cluster() {
  newns "$DATANS" || return 1
  mkcluster "$DATANS" rc 3
  poll 120 ready "$DATANS" rc || fail "not Ready: $(rc "$DATANS" rc '{.status.phase} {.status.conditions}')"
  poll 20 eval 'redis_state "$DATANS" rc >"$W/redis-before" && [ "$(grep -c . "$W/redis-before")" = 3 ]' ||
    fail "no /v1/status from the 3 pods"
  primary "$DATANS" rc >"$W/primary-before"
  rc "$DATANS" rc '{.status.lastFailover}' >"$W/lastfailover-before"
  echo "Ready, primary $(cat "$W/primary-before"), spec-hash" \
    "$($K -n "$DATANS" get pods -l redis.io/cluster=rc -o jsonpath='{.items[*].metadata.annotations.redis\.io/spec-hash}' | tr ' ' '\n' | sort -u | paste -sd' ')"
}

# ready_sampler FILE: every 0.5 s until $W/sampler-stop exists, a line "ms Ready
# readyInstances currentPrimary" (the next sample at once when one took longer)
ready_sampler() {
  local next d
  next=$(ms)
  while [ ! -e "$W/sampler-stop" ]; do
    echo "$(ms) $(rc "$DATANS" rc '{.status.conditions[?(@.type=="Ready")].status} {.status.readyInstances} {.status.currentPrimary}')" >>"$1"
    next=$((next + 500))
    d=$((next - $(ms)))
    if [ $d -gt 0 ]; then sleep "0.$(printf %03d $d)"; else next=$(ms); fi
  done
}

t_upgrade() {
  local old new t0 t1 t2
  old=$(cat "$W/op-before")
  t0=$(date +%s)
  h -n "$OPNS" upgrade "$REL" "$CHART" -f "$W/values.yaml" --set image.tag="$CUR_TAG" --wait --timeout 120s >"$W/upgrade.out" 2>&1 ||
    fail "helm upgrade: $(tail -5 "$W/upgrade.out")"
  t1=$(date +%s)
  poll 60 one_leader || fail "no single new leader: $(op_pods), holder $(lease_holder)"
  t2=$(date +%s)
  new=$(op_pods)
  [ "$(awk '{print $1}' <<<"$new")" != "$old" ] || fail "the operator pod was not replaced: $new"
  [ "$(awk '{print $3}' <<<"$new")" = "redis-operator:$CUR_TAG" ] || fail "operator image: $new"
  poll 30 new_leader_looked "$DATANS" rc 3 ||
    fail "the new leader did not poll the 3 instances: $(rc "$DATANS" rc '{.status.instancesStatus}')"
  echo "operator $old -> $(awk '{print $1}' <<<"$new") (helm upgrade $((t1 - t0))s, one leader $((t2 - t1))s more, status $(($(date +%s) - t2))s more)"
}

t_no_restart() {
  redis_state "$DATANS" rc >"$W/redis-after" || fail "no /v1/status from every pod: $($K -n "$DATANS" get pods -o wide 2>&1)"
  diff "$W/redis-before" "$W/redis-after" || fail "Redis pods or servers restarted (name uid pid sessionId, before/after)"
  echo "same pods, server pids and sessionIds: $(awk '{print $1}' "$W/redis-after" | paste -sd' ')"
}

t_no_failover() {
  local p lf ev
  p=$(primary "$DATANS" rc) lf=$(rc "$DATANS" rc '{.status.lastFailover}')
  [ "$p" = "$(cat "$W/primary-before")" ] || fail "currentPrimary $(cat "$W/primary-before") -> $p"
  [ "$lf" = "$(cat "$W/lastfailover-before")" ] || fail "status.lastFailover changed: '$(cat "$W/lastfailover-before")' -> '$lf'"
  ev=$(events "$DATANS" | tr ' ' '\n' | grep -xE 'FailoverStarted|SwitchoverStarted|RollingUpdate|PrimaryRestarted|PodRecreated' | sort | uniq -c | paste -sd,)
  [ -z "$ev" ] || fail "events: $ev"
  echo "primary $p throughout, lastFailover '${lf:-none}' unchanged, none of FailoverStarted, SwitchoverStarted, RollingUpdate, PrimaryRestarted, PodRecreated"
}

t_ready_throughout() {
  local n bad gap span
  n=$(grep -c . "$W/ready.log")
  [ "$n" -ge 4 ] || fail "only $n samples"
  bad=$(awk '$2 != "True" || $3 != 3' "$W/ready.log")
  [ -z "$bad" ] || fail "not Ready with 3/3 at (ms Ready ready primary): $(head -3 <<<"$bad" | paste -sd';')"
  gap=$(awk 'NR > 1 && $1 - p > m {m = $1 - p} {p = $1} END {print m + 0}' "$W/ready.log")
  span=$(awk 'NR == 1 {f = $1} {l = $1} END {print l - f}' "$W/ready.log")
  [ "$gap" -le 2000 ] || fail "two samples $gap ms apart"
  echo "$n samples over $((span / 1000)).$((span % 1000 / 100)) s, all Ready=True 3/3; largest interval $gap ms"
}

t_no_write_lost() {
  [ "$VERIFY_RC" = 0 ] || fail "chaos-writer verify (exit $VERIFY_RC): $VERIFY_LINE"
  echo "$VERIFY_LINE (writer: $(tail -1 "$W/wr/writer.out"))"
}

skip_rest() {
  local c
  for c in "$@"; do check_fail "$c" "skipped: $why"; done
}

NODEAGENT_OCI_IMAGES="redis-operator:$PREV_TAG=$PREV/redis-operator-oci.tar,redis-operator:$CUR_TAG=$(pwd)/$BUILD/image/redis-operator-oci.tar" \
  NODEAGENT_UMOCI=$UMOCI start_agent
agent_rc=$?
$K apply -f config/crd/bases >/dev/null 2>&1
after=("operator replaced, the new one leads and polled every instance" "no Redis pod or server restarted"
  "no failover" "Ready throughout the upgrade (sampled every 0.5 s)" "no acknowledged write lost")
if [ $agent_rc -ne 0 ]; then
  check_fail "private node agent with both images" "$(tail -3 "$W/nodeagent.log")"
  why="no node agent" skip_rest "${after[@]}"
  end
  exit 1
fi
newns "$OPNS"
info "run $RUN, node $NODE, pods in $CIDR, from ${REV:0:12} ($FROM) to $(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- 2>/dev/null || echo '+changes')"
if ! check "helm install of ${REV:0:12}'s chart and image: operator leads" t_install ||
  ! check "a 3-instance RedisCluster Ready under the previous operator" t_cluster; then
  why="install or cluster failed" skip_rest "${after[@]}"
  end
  exit 1
fi
mkdir -p "$W/wr"
: >"$W/wr/fault"
op_writer_start "$W/wr" "$DATANS" rc
if ! poll 30 acked_any "$W/wr/writer.log"; then
  check_fail "the WAIT-1 writer is acknowledged" "$(tail -3 "$W/wr/writer.err")"
  why="no writer" skip_rest "${after[@]}"
  end
  exit 1
fi
ready_sampler "$W/ready.log" &
SAMPLER_PID=$!
# a few samples and acknowledged writes before the upgrade, a few after
acks_since() { [ "$(tail -n +$(($1 + 1)) "$W/wr/writer.log" | grep -c '"result":"acked"')" -ge "$2" ]; }
poll 10 eval '[ "$(grep -c . "$W/ready.log" 2>/dev/null)" -ge 2 ]' && poll 10 acks_since 0 20
echo "$EPOCHREALTIME" >"$W/wr/fault"
check "helm upgrade to the current chart and image: ${after[0]}" t_upgrade
touch "$W/sampler-stop"
wait "$SAMPLER_PID"
SAMPLER_PID=
poll 10 acks_since "$(wc -l <"$W/wr/writer.log")" 20
op_writer_stop
op_verify "$W/wr" "$DATANS" rc
check "${after[1]} (pod uids, server pids, sessionIds)" t_no_restart
check "${after[2]}: currentPrimary, status.lastFailover, no failover or rolling Event" t_no_failover
check "${after[3]}" t_ready_throughout
check "${after[4]} (chaos-writer verify, WAIT 1)" t_no_write_lost
end
