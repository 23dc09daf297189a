#!/usr/bin/env bash
# `make demo`: after deps and the build (the Makefile does those), brings up the local
# Kubernetes environment with the node agent, installs the operator exactly as a user
# would (`kubectl apply -k config/default`), creates the 3-instance sample cluster, waits
# until it is Ready and prints how to connect and how to tear everything down.
set -euo pipefail
cd "$(dirname "$0")/.."
. test/env/common.sh
ns=${DEMO_NAMESPACE:-demo}
cluster=ha

bash test/env/up.sh
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
