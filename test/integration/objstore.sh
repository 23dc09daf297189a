#!/usr/bin/env bash
# lib/objstore against the real S3-compatible server and Azurite of test/env: builds
# test/integration/objstore (the objstore-it binary) and runs every check against each
# server, one line each; records "passed failed" in $RESULTS/objstore.counts.
# The servers' addresses and credentials are in build/env/s3.env and build/env/azure.env
# (written by test/env/up.sh). A missing file is a failure, not a skip: this suite is
# part of `make test`. OBJSTORE_IT_PROVIDERS="s3" runs one provider only.
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/lib.sh
SUITE=objstore
RESULTS=${RESULTS:-build/test-results}
BUILD=${BUILD:-build}
ENV_FILES=${OBJSTORE_ENV_DIR:-build/env}
mkdir -p "$RESULTS"
bin="$BUILD/test/objstore-it"
if ! make -s BUILD="$BUILD" "$bin" >"$RESULTS/objstore.build.log" 2>&1; then
  check_fail build; tail -20 "$RESULTS/objstore.build.log" | sed 's/^/     /'
  counts_write objstore >/dev/null; exit 1
fi
for provider in ${OBJSTORE_IT_PROVIDERS:-s3 azure}; do
  envfile="$ENV_FILES/$provider.env"
  if [ ! -r "$envfile" ]; then
    check_fail "$provider" "$envfile is missing: test/env/up.sh must start the $provider server"
    continue
  fi
  out="$RESULTS/objstore-$provider.log"
  # The env file's variables for this run only (set -a exports them to the driver).
  (set -a; . "$envfile"; set +a; timeout 600 "$bin" "$provider") | tee "$out"
  rc=${PIPESTATUS[0]}
  passed=$((passed + $(grep -c '^ok ' "$out")))
  failed=$((failed + $(grep -c '^FAIL ' "$out")))
  if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$out"; then
    check_fail "$provider" "objstore-it exited with $rc"
  fi
done
counts_write objstore
