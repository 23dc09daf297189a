#!/usr/bin/env bash
# `make demo`: after deps, the build and `make image` (the Makefile does those), brings up
# the local Kubernetes environment with the node agent, installs the operator exactly as a
# user would (`kubectl apply -k config/default`), creates the 3-instance sample cluster,
# waits until it is Ready and prints how to connect and how to tear everything down.
#
# The operator runs from the image `make image` built: the node agent is started with
# NODEAGENT_OCI_IMAGES=<ref>=<tar> (IMAGE_REF, IMAGE_OCI: the Makefile's), so the
# Deployment's image (config/manager names the same tag) and the data pods' copy-binary
# init container, which uses that image too, run the image's files, not the host's. A node
# agent already running without that image is not restarted (its pods would be): the
# demo says so and stops.
set -euo pipefail
cd "$(dirname "$0")/.."
. test/env/common.sh
ns=${DEMO_NAMESPACE:-demo}
cluster=ha
IMAGE_OCI=${IMAGE_OCI:-$repo/build/image/redis-operator-oci.tar}
IMAGE_REF=${IMAGE_REF:-redis-operator:$(sed -n 's/^ *newTag: *//p' config/manager/kustomization.yaml)}

[ -s "$IMAGE_OCI" ] || { echo "demo: $IMAGE_OCI is missing: make image" >&2; exit 1; }
grep -q "image: $IMAGE_REF\$" config/manager/manager.yaml ||
  { echo "demo: config/manager does not name $IMAGE_REF" >&2; exit 1; }
export NODEAGENT_OCI_IMAGES="$IMAGE_REF=$IMAGE_OCI"
NODEAGENT_UMOCI=$(bash image/tool.sh | tail -1)
export NODEAGENT_UMOCI
# The environment's agent must have been started with the image (by up.sh, below, with
# the variables above; or earlier by another `make demo`).
agent_has_image() {
  tr '\0' '\n' <"/proc/$(cat "$ENV_DIR/nodeagent.pid")/environ" 2>/dev/null |
    grep -qxF "NODEAGENT_OCI_IMAGES=$NODEAGENT_OCI_IMAGES"
}
if pid_alive nodeagent && ! agent_has_image; then
  echo "demo: the node agent (pid $(cat "$ENV_DIR/nodeagent.pid")) runs without the operator image;" \
    "restart the environment (make env-down; make demo) to run the operator from $IMAGE_REF" >&2
  exit 1
fi

bash test/env/up.sh
agent_has_image || { echo "demo: the node agent did not start with $IMAGE_REF" >&2; exit 1; }
# The agent unpacks at start-up into images/<manifest digest>/rootfs: the one it logged
# last must be this build's.
rootfs=$(grep -o "msg=\"image loaded\" image=$IMAGE_REF rootfs=[^ ]*" "$ENV_DIR/logs/nodeagent.log" |
  tail -1 | sed 's/.*rootfs=//')
digest=$(cat "$IMAGE_OCI.digest")
[ "$(basename "$(dirname "$rootfs")")" = "${digest#sha256:}" ] || {
  echo "demo: the node agent runs an older build of $IMAGE_REF ($rootfs, not $digest);" \
    "restart the environment (make env-down; make demo)" >&2; exit 1; }
echo "demo: operator image $IMAGE_REF $digest, run by the node agent from $rootfs"
echo "demo: installing the operator (kubectl apply -k config/default)"
kctl apply -k config/default >/dev/null
kctl -n redis-operator-system rollout status deployment/redis-operator --timeout 180s

kctl create namespace "$ns" --dry-run=client -o yaml | kctl apply -f - >/dev/null
# The sample names its password Secret; the demo makes one (the operator would generate
# <name>-auth itself if spec.authSecret were unset).
if ! kctl -n "$ns" get secret ha-password >/dev/null 2>&1; then
  kctl -n "$ns" create secret generic ha-password \
    --from-literal=password="$(head -c 18 /dev/urandom | base64 | tr -d '/+=')" >/dev/null
fi
echo "demo: creating RedisCluster $ns/$cluster (config/samples/redis_v1_rediscluster_ha.yaml)"
kctl -n "$ns" apply -f config/samples/redis_v1_rediscluster_ha.yaml >/dev/null
start=$(date +%s)
kctl -n "$ns" wait --for=condition=Ready --timeout 300s "rediscluster/$cluster"
echo "demo: Ready in $(( $(date +%s) - start ))s"
kctl -n "$ns" get redisc,pods -o wide

primary=$(kctl -n "$ns" get rediscluster "$cluster" -o jsonpath='{.status.currentPrimary}')
ip=$(kctl -n "$ns" get pod "$primary" -o jsonpath='{.status.podIP}')
cli=redis-cli
command -v valkey-cli >/dev/null && [ "$(kctl -n "$ns" get rediscluster "$cluster" -o jsonpath='{.status.engine}')" = valkey ] && cli=valkey-cli
cat <<MSG

Connect (no DNS or kube-proxy here: use the primary's pod IP, which <name>-leader selects):
  export KUBECONFIG=$KUBECONFIG_ADMIN
  PASS=\$(kubectl -n $ns get secret ha-password -o jsonpath='{.data.password}' | base64 -d)
  $cli -h $ip -a "\$PASS" --no-auth-warning SET hello world
  kubectl -n $ns get endpointslices -l kubernetes.io/service-name=$cluster-leader
Watch it:
  kubectl -n $ns get redisc $cluster -w
Tear down:
  make env-down
MSG
