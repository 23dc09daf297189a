#!/usr/bin/env bash
# Runs Check unit-test binaries, prints each runner's summary line, and records the
# totals in $RESULTS/unit.counts ("passed failed"). Exit 1 if any test failed.
# VALGRIND=1 runs each binary under valgrind (Check's forked children too; definite leaks
# are errors; time bounds and Check timeouts scaled by 10).
set -u
RESULTS=${RESULTS:-build/test-results}
mkdir -p "$RESULTS"
passed=0 failed=0
for bin in "$@"; do
  out="$RESULTS/$(basename "$bin").log"
  if [ "${VALGRIND:-0}" = 1 ]; then
    TEST_TIME_SCALE=10 CK_TIMEOUT_MULTIPLIER=10 valgrind -q --error-exitcode=99 --leak-check=full \
      --errors-for-leak-kinds=definite "$bin" >"$out" 2>&1
  else
    "$bin" >"$out" 2>&1
  fi
  rc=$?
  line=$(grep -E '^[0-9]+%: Checks: ' "$out" | tail -1)
  if [ -z "$line" ]; then
    echo "$(basename "$bin"): no Check summary (exit $rc)"; sed 's/^/    /' "$out" | tail -20
    failed=$((failed + 1)); continue
  fi
  checks=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$line")
  fails=$(sed -E 's/.*Failures: ([0-9]+).*/\1/' <<<"$line")
  errs=$(sed -E 's/.*Errors: ([0-9]+).*/\1/' <<<"$line")
  bad=$((fails + errs))
  [ $rc -ne 0 ] && [ $bad -eq 0 ] && bad=1   # valgrind errors or a crash after the summary
  printf '%-24s %s\n' "$(basename "$bin")" "$line"
  [ $bad -gt 0 ] && grep -vE '^[0-9]+%: Checks: ' "$out" | sed 's/^/    /' | tail -40
  passed=$((passed + checks - fails - errs)); failed=$((failed + bad))
done
echo "$passed $failed" >"$RESULTS/unit.counts"
echo "unit: $passed passed, $failed failed"
[ $failed -eq 0 ]
