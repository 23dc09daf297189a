#!/usr/bin/env bash
# Integration layer of `make test`: starts the local control plane once (test/env),
# runs every integration check against it, and always stops what it started (also on
# failure or interrupt). An environment that was already up is left running.
set -uo pipefail
cd "$(dirname "$0")/.."
. test/env/common.sh
export RESULTS=${RESULTS:-build/test-results}
mkdir -p "$RESULTS"

started=0
if ! api_ready; then started=1; fi
stop() { [ $started -eq 1 ] && bash test/env/down.sh; }
trap stop EXIT
trap 'exit 130' INT TERM
if ! bash test/env/up.sh; then
  echo "0 1" >"$RESULTS/env-up.counts"
  echo "integration: the local control plane did not come up"
  exit 1
fi
status=0
bash test/env/smoke.sh || status=1
KUBECTL="$ENV_BIN/kubectl" bash test/api/run-crd-tests.sh "$KUBECONFIG_ADMIN" | tail -3 || status=1
for t in test/integration/*.sh; do
  [ -e "$t" ] || continue
  KUBECONFIG="$KUBECONFIG_ADMIN" bash "$t" || status=1
done
# The Helm chart: lint, drift from config/default, install/upgrade/uninstall (test/helm).
KUBECONFIG="$KUBECONFIG_ADMIN" bash test/helm/helm.sh || status=1
KUBECONFIG="$KUBECONFIG_ADMIN" bash test/guide/guide.sh || status=1 # docs/USER-GUIDE.md, every command run
KUBECONFIG="$KUBECONFIG_ADMIN" bash test/plugin/plugin.sh || status=1 # kubectl-redis, about a minute
KUBECONFIG="$KUBECONFIG_ADMIN" bash test/monitoring/prometheus-e2e.sh || status=1 # a real Prometheus, ~30 s
# The operator upgraded under a running cluster: HEAD~1's chart and image to this tree's.
KUBECONFIG="$KUBECONFIG_ADMIN" bash test/upgrade/upgrade.sh || status=1
exit $status
