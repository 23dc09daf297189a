#!/usr/bin/env bash
# Smoke checks of a running local control plane: readyz, the default namespace, a CRD
# applied and Established, an object created and read back, a watch event seen, and the
# garbage collector deleting an owned ConfigMap when its owner is deleted. Then the object
# storage's own checks (storage-smoke.sh: S3 and Azure Blob from the host and from a pod).
# Prints one line per check; records "passed failed" in $RESULTS/env-smoke.counts (and
# env-storage.counts).
set -uo pipefail
. "$(dirname "$0")/common.sh"
. "$repo/test/lib.sh"
SUITE=env-smoke CHECK_TAIL=5
RESULTS=${RESULTS:-$repo/build/test-results}
ns="smoke-$$-$RANDOM"

crd() {
  kctl apply -f - <<Y
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.smoke.redis-operator.test}
spec:
  group: smoke.redis-operator.test
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1}
Y
  kctl wait --for condition=Established --timeout 30s crd/widgets.smoke.redis-operator.test
}
create_and_read() {
  kctl create namespace "$ns" >/dev/null &&
  kctl -n "$ns" apply -f - <<Y >/dev/null &&
apiVersion: smoke.redis-operator.test/v1
kind: Widget
metadata: {name: w1}
spec: {size: 3}
Y
  [ "$(kctl -n "$ns" get widget w1 -o jsonpath='{.spec.size}')" = 3 ]
}
rejects_invalid() {
  local out
  out=$(printf 'apiVersion: smoke.redis-operator.test/v1\nkind: Widget\nmetadata: {name: w0}\nspec: {size: 0}\n' |
    kctl -n "$ns" apply -f - 2>&1) && return 1
  grep -q 'spec.size.*should be greater than or equal to 1' <<<"$out"
}
watch_event() {
  local out="$ENV_DIR/smoke-watch.$$"
  timeout 20 "$ENV_BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" -n "$ns" get widgets --watch-only \
    --output-watch-events -o json >"$out" 2>&1 &
  local w=$! size=10
  # The watch may connect after a first patch: keep patching until an event arrives.
  bump() { size=$((size + 1)); kctl -n "$ns" patch widget w1 --type merge -p "{\"spec\":{\"size\":$size}}" >/dev/null; grep -Eq '"type": ?"MODIFIED"' "$out"; }
  poll 15 bump; local rc=$?
  kill $w 2>/dev/null; wait $w 2>/dev/null; rm -f "$out"
  return $rc
}
garbage_collection() {
  kctl -n "$ns" create configmap owner >/dev/null || return 1
  local uid; uid=$(kctl -n "$ns" get configmap owner -o jsonpath='{.metadata.uid}')
  kctl -n "$ns" apply -f - <<Y >/dev/null || return 1
apiVersion: v1
kind: ConfigMap
metadata:
  name: owned
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: "$uid"}]
Y
  kctl -n "$ns" delete configmap owner --wait=false >/dev/null
  poll 60 bash -c "! '$ENV_BIN/kubectl' --kubeconfig '$KUBECONFIG_ADMIN' -n '$ns' get configmap owned >/dev/null 2>&1"
}

check "readyz" kctl get --raw /readyz
check "default namespace" kctl get namespace default -o name
check "CRD applied and Established" crd
check "object created and read back" create_and_read
check "schema rejects invalid object" rejects_invalid
check "watch sees MODIFIED" watch_event
check "garbage collector deletes owned ConfigMap" garbage_collection
kctl delete namespace "$ns" --wait=false >/dev/null 2>&1
kctl delete crd widgets.smoke.redis-operator.test --timeout 30s >/dev/null 2>&1
counts_write env-smoke; rc=$?
bash "$here/storage-smoke.sh" || rc=1
exit $rc
