#!/usr/bin/env bash
# test/fuzz/run.sh SECONDS FUZZER... : runs each libFuzzer binary (test/fuzz/fuzz.mk) for
# SECONDS over its seed corpus (the table below) plus its working corpus
# $FUZZ_DIR/corpus-<name>, which it grows and keeps between runs (out of tree). Stdin is
# /dev/null (fuzz_k8s_kubeconfig reads nothing else). A crash, leak, sanitizer report or
# failed assert stops that fuzzer: its input is saved as $FUZZ_DIR/crash-<sha1> (or
# leak-, timeout-), the log's tail is printed and the run counts as failed.
#
# One line per fuzzer: "fuzz: <name>: ok, N runs in S s, corpus C inputs, cov X" (or FAIL).
# Writes "$RESULTS/fuzz.counts" ("passed failed", one per fuzzer) when RESULTS is set, so
# `make test` adds the fuzzers to its totals. Exit 1 if any fuzzer failed.
# Environment: FUZZ_DIR (the binaries' directory), FUZZ_MAX_LEN (65536), RESULTS.
set -uo pipefail
cd "$(dirname "$0")/../.."
seconds=$1; shift
FUZZ_MAX_LEN=${FUZZ_MAX_LEN:-65536}

seeds_of() {
  case $1 in
  fuzz_instance_request) echo test/data/instance_request ;;
  fuzz_k8s_kubeconfig) echo test/data/k8s_config ;;
  fuzz_k8s_watch) echo test/data/k8s_watch ;;
  fuzz_targz) bash test/fuzz/targz-seeds.sh "$2/seeds-targz" && echo "$2/seeds-targz" ;;
  fuzz_vk_info) echo test/data/valkey ;;
  *) echo "fuzz: no seed corpus for $1 (add it to test/fuzz/run.sh)" >&2; return 1 ;;
  esac
}

stat_of() { sed -n "s/^stat::$1: *//p" "$2" | tail -1; }

passed=0 failed=0
for bin in "$@"; do
  name=$(basename "$bin") dir=$(dirname "$bin")
  log=$dir/$name.log corpus=$dir/corpus-$name
  if ! seeds=$(seeds_of "$name" "$dir"); then failed=$((failed + 1)); continue; fi
  mkdir -p "$corpus"
  start=$(date +%s)
  "$bin" -max_total_time="$seconds" -max_len="$FUZZ_MAX_LEN" -print_final_stats=1 \
    -artifact_prefix="$dir/" "$corpus" "$seeds" </dev/null >"$log" 2>&1
  rc=$?
  took=$(($(date +%s) - start))
  runs=$(stat_of number_of_executed_units "$log")
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' "$log" | tail -1)
  inputs=$(find "$corpus" -type f | wc -l)
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1))
    echo "fuzz: $name: ok, ${runs:-?} runs in $took s, corpus $inputs inputs, cov ${cov:-?}"
  else
    failed=$((failed + 1))
    echo "fuzz: $name: FAIL (exit $rc after $took s; log $log)"
    # the report and the top of its stack, then where the input was saved
    grep -m1 -A14 -E 'ERROR: |runtime error: |Assertion |deadly signal' "$log" | sed 's/^/    /'
    grep -E 'Test unit written|^SUMMARY' "$log" | sort -u | sed 's/^/    /'
  fi
done
if [ -n "${RESULTS:-}" ]; then
  mkdir -p "$RESULTS"
  echo "$passed $failed" >"$RESULTS/fuzz.counts"
fi
echo "fuzz: $passed passed, $failed failed (${seconds} s each)"
[ $failed -eq 0 ]
