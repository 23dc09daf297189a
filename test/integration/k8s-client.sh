#!/usr/bin/env bash
# lib/k8s against the real API server of test/env: builds test/integration/k8s (the
# k8s-it binary) and runs every check, one line each; records "passed failed" in
# $RESULTS/k8s-client.counts. Needs the environment up (test/env/up.sh); the
# apiserver-restart check restarts kube-apiserver alone and waits until it is ready.
# K8S_IT_CHECKS="crud-configmap watch-410" runs only those. apiserver-restart restarts a
# private kube-apiserver (same flags, 127.0.0.1, a free port) so that nobody else sees
# an outage; K8S_IT_RESTART_SHARED=1 restarts the shared one instead (only when no one
# else uses the environment: another session's up.sh that finds it not ready tears the
# whole environment down).
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/env/common.sh
. test/lib.sh
SUITE=k8s-client
RESULTS=${RESULTS:-build/test-results}
BUILD=${BUILD:-build}
mkdir -p "$RESULTS"
bin="$BUILD/test/k8s-it"
if ! make -s BUILD="$BUILD" "$bin" >"$RESULTS/k8s-client.build.log" 2>&1; then
  check_fail build; tail -20 "$RESULTS/k8s-client.build.log" | sed 's/^/     /'
  counts_write k8s-client >/dev/null; exit 1
fi
if ! api_ready; then
  check_fail "the API server at https://$ENV_HOST_IP:$ENV_API_PORT is not ready (run test/env/up.sh)"
  counts_write k8s-client >/dev/null; exit 1
fi
out="$RESULTS/k8s-client.log"
# shellcheck disable=SC2086
KUBECONFIG="$KUBECONFIG_ADMIN" KUBECTL="$ENV_BIN/kubectl" ENV_DIR="$ENV_DIR" \
  ETCD_URL="http://127.0.0.1:$ENV_ETCD_PORT" timeout 900 "$bin" ${K8S_IT_CHECKS:-} | tee "$out"
rc=${PIPESTATUS[0]}
passed=$(grep -c '^ok ' "$out")
failed=$(grep -c '^FAIL ' "$out")
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
  check_fail "k8s-it exited with $rc"
fi
counts_write k8s-client >/dev/null
