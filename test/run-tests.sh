#!/usr/bin/env bash
# `make test`: every test layer that exists, then one closing line "N passed, N failed".
# Layers: unit (Check binaries passed as arguments, then test/monitoring's checks of the
# alert rules, dashboard and runbooks; with `make test FUZZ_SMOKE=1` also the fuzz smoke: each libFuzzer harness in $FUZZ_BINS for FUZZ_SMOKE_SECONDS, test/fuzz/run.sh),
# chaos short form, integration (test/run-integration.sh, against the local control plane).
# Exit non-zero if any layer failed.
set -u
export RESULTS=${RESULTS:-build/test-results}
rm -rf "$RESULTS"; mkdir -p "$RESULTS"
status=0
bash test/run-unit.sh "$@" || status=1
# The monitoring package and the runbooks, seconds, no cluster (test/monitoring/README.md).
for s in rules dashboard runbook-check; do bash "test/monitoring/$s.sh" || status=1; done
# FUZZ_BINS and FUZZ_SMOKE_SECONDS (2) come from test/fuzz/fuzz.mk (FUZZ_SMOKE=1).
if [ -n "${FUZZ_BINS:-}" ] && [ "${FUZZ_SMOKE_SECONDS:-2}" != 0 ]; then
  # shellcheck disable=SC2086
  bash test/fuzz/run.sh "${FUZZ_SMOKE_SECONDS:-2}" $FUZZ_BINS || status=1
fi
# Short form of the chaos suite: one Sentinel kill with the writer/verifier (~10 s).
bash test/chaos/short.sh || status=1
if [ "${SKIP_INTEGRATION:-0}" != 1 ] && [ -x test/run-integration.sh ]; then
  bash test/run-integration.sh || status=1
fi
passed=0 failed=0
for f in "$RESULTS"/*.counts; do
  read -r p q <"$f"; passed=$((passed + p)); failed=$((failed + q))
done
echo "$passed passed, $failed failed"
[ $status -eq 0 ] && [ $failed -eq 0 ]
