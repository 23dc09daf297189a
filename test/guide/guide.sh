#!/usr/bin/env bash
# docs/USER-GUIDE.md, run: every shell block of the guide, in order, against the local
# environment (test/env). Part of `make test` (test/run-integration.sh).
#
# Blocks (the convention; the guide states it too, "How this guide is tested"):
#   ```sh               run, in the guide's order, each in a fresh bash with errexit and
#                       pipefail, from the repository root. The UPPERCASE shell variables a
#                       block sets reach the blocks after it (as in one terminal).
#   ```sh vars          the guide's variables: not run; this script sets the same names to
#                       its own values (below) and fails when the block names others.
#   ```sh skip REASON   not run, reported as "skip" with REASON; at most $MAX_SKIP of them.
#   any other fence     (yaml, text, console...) output or file samples: not run.
# The heading above a block names it in the result line ("Connect (2/3)" when a heading
# has several blocks).
#
# Variables (the vars block's names): NS=<run>-redis, OPERATOR_NS=<run>-op,
# IMAGE=redis-operator, TAG=config/manager's newTag, NEW_TAG=<TAG>-guide,
# OVERLAY=<work dir>/overlay. BUILD is exported, so `make image` builds into this run's
# build directory.
#
# Scope. The control plane is shared with other suites and operators, so the operator the
# guide installs must touch nothing but this run's objects. The commands are run as
# written; around them:
#   - a private node agent (a tainted Node <run>-node-1: start_agent of
#     test/integration/controller/lib.sh, as test/helm/helm.sh does) that serves
#     redis-operator:TAG and :NEW_TAG from the OCI image `make image` built; the script
#     checks that every operator process it sees has that image's files as its root;
#   - test/guide/bin/helm: `helm install` and `helm upgrade` get one more values file
#     (fullnameOverride <run>-redis-operator, clusterSelector redis-operator.test/run=<run>,
#     the Node's toleration and nodeSelector);
#   - test/guide/bin/kubectl: `-k $OVERLAY` is given an overlay of $OVERLAY with namePrefix
#     <run>-, the same toleration, nodeSelector and selector, and without CRDs; and it
#     refuses to delete CRDs (the other suites' RedisClusters would go with them);
#   - a MutatingAdmissionPolicy <run>-guide: every RedisCluster created or updated in $NS
#     gets the label redis-operator.test/run=<run>, the toleration and the nodeSelector;
#   - test/guide/bin/redis-cli: no cluster DNS or kube-proxy here, so a host
#     <service>.<namespace>.svc is replaced by a ready endpoint of that Service.
#
# Prints one line per block: "ok   guide: HEADING (Ns)", "FAIL guide: HEADING
# (GUIDE:LINE)" and the tail of its output, "skip guide: HEADING: REASON"; after a failed
# block the rest are reported "FAIL ...: not run" (GUIDE_KEEP_GOING=1 runs them anyway).
# Writes "passed failed" to $RESULTS/guide.counts.
#   bash test/guide/guide.sh                     (BUILD=build-x; KEEP=1 keeps the work dir)
#   GUIDE=/tmp/copy.md bash test/guide/guide.sh  (another copy of the guide)
#   LIST=1 bash test/guide/guide.sh              (the blocks as extracted; runs nothing)
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/env/common.sh
BUILD=${BUILD:-build}
export RESULTS=${RESULTS:-$BUILD/test-results}
SUITE=guide
. test/lib.sh
GUIDE=${GUIDE:-docs/USER-GUIDE.md}
MAX_SKIP=3
BLOCK_TIMEOUT=${GUIDE_BLOCK_TIMEOUT:-300}
VARS="NS OPERATOR_NS IMAGE TAG NEW_TAG OVERLAY"
t_start=$(date +%s)
W=$(mktemp -d /tmp/guide-it.XXXXXX)

# extract GUIDE DIR: each shell block to DIR/NNN.sh; DIR/index gets one line per block,
# "N<TAB>KIND<TAB>LINE<TAB>HEADING<TAB>REASON" (KIND run, vars or skip; LINE: the
# guide's line of the block's first command). False on an unknown kind, an unclosed
# fence or a skip without a reason.
extract() {
  mkdir -p "$2"
  awk -v dir="$2" '
    function fail(msg) { printf "%s:%d: %s\n", FILENAME, NR, msg > "/dev/stderr"; bad = 1 }
    inblock && /^```[ \t]*$/ {
      inblock = 0; close(file)
      printf "%d\t%s\t%d\t%s\t%s\n", n, kind, start, heading, reason > (dir "/index")
      next
    }
    inblock { print > file; next }
    infence && /^```/ { infence = 0; next }
    infence { next }
    /^```/ {
      info = substr($0, 4)
      if (info !~ /^sh([ \t]|$)/) { infence = 1; next }
      sub(/^sh[ \t]*/, "", info)
      kind = info; reason = ""
      if (info == "") kind = "run"
      else if (info ~ /^skip([ \t]|$)/) {
        kind = "skip"; reason = info; sub(/^skip[ \t]*/, "", reason)
        if (reason == "") fail("a skip block needs a reason: ```sh skip REASON")
      } else if (info != "vars") fail("unknown block kind \"" info "\" (```sh, ```sh vars, ```sh skip REASON)")
      n++; inblock = 1; start = NR + 1
      file = sprintf("%s/%03d.sh", dir, n); printf "" > file
      next
    }
    BEGIN { heading = "(before the first heading)" }
    /^#+ / { heading = $0; sub(/^#+ +/, "", heading); sub(/ +#+$/, "", heading) }
    END {
      if (inblock || infence) fail("unclosed fence")
      if (n == 0) fail("no ```sh block")
      exit bad
    }' "$1"
}

# names INDEX: "HEADING" or "HEADING (i/n)" per block, in order
names() {
  awk -F'\t' '{ h[NR] = $4; c[$4]++ } END {
    for (i = 1; i <= NR; i++) { k[h[i]]++; print (c[h[i]] > 1 ? h[i] " (" k[h[i]] "/" c[h[i]] ")" : h[i]) } }' "$1"
}

if ! extract "$GUIDE" "$W/blocks" 2>"$W/extract.err"; then
  check_fail "$GUIDE: its shell blocks" "$(cat "$W/extract.err")"
  rm -rf "$W"
  counts_write guide
  exit 1
fi
mapfile -t NAMES < <(names "$W/blocks/index")
if [ "${LIST:-0}" = 1 ]; then
  i=0
  while IFS=$'\t' read -r n kind line _ reason; do
    printf '== %s %s (%s:%s)%s\n' "$kind" "${NAMES[$i]}" "$GUIDE" "$line" "${reason:+: $reason}"
    sed 's/^/   /' "$W/blocks/$(printf %03d "$n").sh"
    i=$((i + 1))
  done <"$W/blocks/index"
  rm -rf "$W"
  exit 0
fi

# --- the environment ------------------------------------------------------------------

if ! make -s BUILD="$BUILD" "$BUILD/redis-operator" "$BUILD/nodeagent" image >"$W/build.log" 2>&1 ||
  ! UMOCI=$(bash image/tool.sh 2>>"$W/build.log" | tail -1) || [ ! -x "$UMOCI" ] ||
  ! HELM=$(bash test/helm/build.sh | tail -1) || [ ! -x "$HELM" ] || [ ! -x "$ENV_BIN/kubectl" ]; then
  check_fail "build (operator, node agent, image, umoci, helm; kubectl from make env-build)" "$(grep -m5 error "$W/build.log")"
  rm -rf "$W"
  counts_write guide
  exit 1
fi
if ! api_ready && ! bash test/env/up.sh >/dev/null 2>&1; then
  check_fail "the local control plane is up"
  rm -rf "$W"
  counts_write guide
  exit 1
fi
RUN=gd$(($$ % 10000))$((RANDOM % 100))
K="$ENV_BIN/kubectl --kubeconfig $KUBECONFIG_ADMIN"
NODE=$RUN-node-1
TAINT_KEY=nodeagent.redis-operator.test/dev
# 10.240.250-254: a range no other agent of the tree hands out
CIDR=${GUIDE_POD_CIDR:-10.240.$((250 + RANDOM % 5)).0/24}
CGROUP=/sys/fs/cgroup/freezer/ro-pods-$RUN
AGENT_PID=
# start_agent, no_pods_left, namespaces_gone, delete_nodes, poll: the helpers of the
# controller's integration tests, as test/helm/helm.sh uses them
. test/integration/controller/lib.sh

# The guide's variables (the vars block), this run's values
export NS=$RUN-redis OPERATOR_NS=$RUN-op IMAGE=redis-operator
export TAG
TAG=$(sed -n 's/^ *newTag: *//p' config/manager/kustomization.yaml)
export NEW_TAG=$TAG-guide OVERLAY=$W/overlay
printf '%s\n' "$NS" "$OPERATOR_NS" >"$W/namespaces" # for namespaces_gone
export BUILD KUBECONFIG=$KUBECONFIG_ADMIN
export HELM_CONFIG_HOME=$W/helm/config HELM_CACHE_HOME=$W/helm/cache HELM_DATA_HOME=$W/helm/data
export GUIDE_KUBECTL=$ENV_BIN/kubectl GUIDE_HELM=$HELM
GUIDE_REDIS_CLI=$(command -v redis-cli) || GUIDE_REDIS_CLI=/usr/bin/redis-cli
export GUIDE_REDIS_CLI
export PATH=$PWD/test/guide/bin:$ENV_BIN:$PATH

# The scope (see the header)
mkdir -p "$W/scope/kustomize"
TOLERATION="{key: $TAINT_KEY, operator: Equal, value: $RUN, effect: NoSchedule}"
export GUIDE_SCOPE_VALUES=$W/scope/values.yaml GUIDE_SCOPE_KUSTOMIZE=$W/scope/kustomize
cat >"$GUIDE_SCOPE_VALUES" <<Y
fullnameOverride: $RUN-redis-operator
clusterSelector: redis-operator.test/run=$RUN
tolerations: [$TOLERATION]
nodeSelector: {kubernetes.io/hostname: $NODE}
Y
cat >"$GUIDE_SCOPE_KUSTOMIZE/kustomization.yaml" <<Y
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namePrefix: $RUN-
resources:
- $(realpath -m --relative-to="$GUIDE_SCOPE_KUSTOMIZE" "$OVERLAY")
patches:
- target: {kind: Deployment}
  patch: |-
    - {op: add, path: /spec/template/spec/tolerations, value: [$TOLERATION]}
    - {op: add, path: /spec/template/spec/nodeSelector, value: {kubernetes.io/hostname: $NODE}}
    - op: add
      path: /spec/template/spec/containers/0/env/-
      value: {name: REDIS_OPERATOR_CLUSTER_SELECTOR, value: "redis-operator.test/run=$RUN"}
# never the shared CRDs: deleting them would delete every RedisCluster of the control plane
- target: {kind: CustomResourceDefinition}
  patch: |-
    \$patch: delete
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata: {name: any}
Y
# The policy also matches a dry-run probe in "default", by which the script sees that the
# API server applies it before the guide creates anything.
cat >"$W/scope/policy.yaml" <<Y
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: $RUN-guide}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [redis.io], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: [redisclusters]}
  matchConditions:
  - name: this-run
    expression: request.namespace == "$NS" || (request.namespace == "default" && request.name == "$RUN-probe")
  failurePolicy: Fail
  reinvocationPolicy: IfNeeded
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"redis-operator.test/run": "$RUN"}}}'
  - patchType: JSONPatch
    jsonPatch:
      expression: >
        [JSONPatch{op: "add", path: "/spec/tolerations",
                   value: [{"key": "$TAINT_KEY", "operator": "Equal", "value": "$RUN", "effect": "NoSchedule"}]},
         JSONPatch{op: "add", path: "/spec/nodeSelector", value: {"kubernetes.io/hostname": "$NODE"}}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: $RUN-guide}
spec: {policyName: $RUN-guide}
Y
policy_active() {
  $K create --dry-run=server -o jsonpath='{.metadata.labels.redis-operator\.test/run}' -f - <<Y | grep -qx "$RUN"
apiVersion: redis.io/v1
kind: RedisCluster
metadata: {name: $RUN-probe, namespace: default}
spec: {instances: 1}
Y
}

cleanup() {
  local ns
  [ -n "${SAMPLER_PID:-}" ] && kill "$SAMPLER_PID" 2>/dev/null
  "$HELM" -n "$OPERATOR_NS" uninstall redis-operator --wait --timeout 60s >/dev/null 2>&1
  $K delete clusterrole "$RUN-redis-operator" "$RUN-redis-operator-edit" "$RUN-redis-operator-view" --ignore-not-found >/dev/null 2>&1
  $K delete clusterrolebinding "$RUN-redis-operator" --ignore-not-found >/dev/null 2>&1
  stop_private_env $K delete mutatingadmissionpolicybinding,mutatingadmissionpolicy "$RUN-guide" --ignore-not-found
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The operator runs from the image the guide's `make image` builds (the same build as
# above: it finds it up to date): the private agent serves that OCI layout as both tags
# the guide installs, so the Deployment and the data pods' copy-binary init container run
# the image's files. The guide's "upgrade" changes the tag, not the files.
IMAGE_TAR=$BUILD/image/redis-operator-oci.tar
IMAGE_DIGEST=$(cat "$IMAGE_TAR.digest")
if ! NODEAGENT_OCI_IMAGES="$IMAGE:$TAG=$PWD/$IMAGE_TAR,$IMAGE:$NEW_TAG=$PWD/$IMAGE_TAR" \
  NODEAGENT_UMOCI=$UMOCI start_agent; then
  check_fail "private node agent" "$(tail -3 "$W/nodeagent.log")"
  counts_write guide
  exit 1
fi
loaded=$(grep -c "msg=\"image loaded\" image=$IMAGE:\($TAG\|$NEW_TAG\) rootfs=[^ ]*/${IMAGE_DIGEST#sha256:}/rootfs" "$W/nodeagent.log")
if [ "$loaded" = 2 ]; then
  check_pass "the node agent serves $IMAGE:$TAG and :$NEW_TAG from the built image ($IMAGE_DIGEST)"
else
  check_fail "the node agent serves $IMAGE:$TAG and :$NEW_TAG from the built image ($IMAGE_DIGEST)" \
    "$(grep "image loaded" "$W/nodeagent.log" | tail -2)"
fi
# The probe needs the CRDs: the guide's helm install brings them, but only later (and
# leaves them in place, as Helm does).
if ! $K apply -f config/crd/bases >"$W/policy.out" 2>&1 ||
  ! $K apply -f "$W/scope/policy.yaml" >>"$W/policy.out" 2>&1 || ! poll 20 policy_active; then
  check_fail "the scope policy $RUN-guide is applied" "$(tail -3 "$W/policy.out")"
  counts_write guide
  exit 1
fi
echo "info guide: run $RUN, node $NODE, pods in $CIDR, $GUIDE: $(grep -c . "$W/blocks/index") blocks"

# Which files the operator runs while the guide goes on: each second, the root mount of
# every operator process (the controller and the copy-binary init container) of this
# run's agent (its overlay lives under $W/na), "PID MOUNTINFO-LINE".
sample_operator_roots() {
  local pid
  while sleep 1; do
    for pid in $(pgrep -f '^/usr/local/bin/redis-operator '); do
      awk -v p="$pid" '$5 == "/" { print p, $0 }' "/proc/$pid/mountinfo" 2>/dev/null
    done | grep -F "$W/na/"
  done >>"$W/operator-roots"
}
sample_operator_roots &
SAMPLER_PID=$!

# --- the blocks -----------------------------------------------------------------------

# run_block FILE LOG: the block in a fresh bash (errexit, pipefail) after the state the
# blocks before it left ($W/state.sh); on success the state is updated: every UPPERCASE
# variable that is not in the baseline environment.
compgen -v >"$W/baseline"
: >"$W/state.sh"
run_block() {
  local t0=$SECONDS rc
  timeout -k 5 "$BLOCK_TIMEOUT" bash -c '
    . "$1"
    trap '\''echo "guide: exit $? at line $LINENO of the block: $BASH_COMMAND" >&2'\'' ERR
    set -eEo pipefail
    . "$2"
    set +eE
    trap - ERR
    for v in $(compgen -v); do
      [[ "$v" =~ ^[A-Z][A-Z0-9_]*$ ]] && ! grep -qxF "$v" "$3" && declare -p "$v"
    done >"$1.new"
    exit 0' guide-block "$W/state.sh" "$1" "$W/baseline" >"$2" 2>&1
  rc=$?
  [ $((SECONDS - t0)) -lt "$BLOCK_TIMEOUT" ] || echo "guide: the block timed out after ${BLOCK_TIMEOUT}s (GUIDE_BLOCK_TIMEOUT)" >>"$2"
  [ $rc -eq 0 ] && mv "$W/state.sh.new" "$W/state.sh"
}

check_vars() {
  local have
  have=$(sed -nE 's/^(export +)?([A-Za-z_][A-Za-z0-9_]*)=.*/\2/p' "$1" | sort | paste -sd' ')
  [ "$have" = "$(tr ' ' '\n' <<<"$VARS" | sort | paste -sd' ')" ] ||
    { echo "the vars block sets '$have'; this script sets '$VARS': change both"; return 1; }
  for v in $VARS; do printf '%s=%s\n' "$v" "${!v}"; done | paste -sd' '
}

i=0 nskip=0 broken=
while IFS=$'\t' read -r n kind line _ reason; do
  name=${NAMES[$i]} f=$W/blocks/$(printf %03d "$n").sh log=$W/blocks/$(printf %03d "$n").log
  i=$((i + 1))
  case $kind in
  vars)
    if out=$(check_vars "$f"); then
      check_pass "$name (set by the test: $out)"
    else
      check_fail "$name ($GUIDE:$line)" "$out"
      broken=$name
    fi
    continue ;;
  skip)
    nskip=$((nskip + 1))
    echo "skip guide: $name: $reason"
    [ $nskip -le $MAX_SKIP ] || check_fail "$name ($GUIDE:$line)" "more than $MAX_SKIP blocks not run: run it, or say in fewer blocks what is not run"
    continue ;;
  esac
  if [ -n "$broken" ] && [ "${GUIDE_KEEP_GOING:-0}" != 1 ]; then
    check_fail "$name: not run (\"$broken\" failed)"
    continue
  fi
  t0=$(date +%s)
  if run_block "$f" "$log"; then
    check_pass "$name ($(($(date +%s) - t0))s)"
  else
    check_fail "$name ($GUIDE:$line, $(($(date +%s) - t0))s)"
    tail -n "${CHECK_TAIL:-8}" "$log" | sed 's/^/     /'
    broken=$name
  fi
done <"$W/blocks/index"
kill "$SAMPLER_PID" 2>/dev/null
wait "$SAMPLER_PID" 2>/dev/null
seen=$(cut -d' ' -f1 "$W/operator-roots" | sort -u | wc -l)
from_image=$(grep -F "/images/${IMAGE_DIGEST#sha256:}/rootfs" "$W/operator-roots" | cut -d' ' -f1 | sort -u | wc -l)
if [ "$seen" -gt 0 ] && [ "$seen" = "$from_image" ]; then
  check_pass "every operator process of the guide ran from the image ($seen seen)"
else
  check_fail "every operator process of the guide ran from the image" \
    "$from_image of $seen operator processes had the image's rootfs as their root"
fi
counts_write guide " ($(($(date +%s) - t_start))s)"
