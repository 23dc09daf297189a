# test/lib.sh: what the test scripts share. Source it; it defines functions and sets the
# two counters, nothing runs.
#
#   SUITE=instance; . test/lib.sh
#   check "server starts" start_server    ->  "ok   instance: server starts"
#                                             or "FAIL instance: server starts" + output tail
#   poll 20 is_ready pod-1                ->  re-runs until true, at most 20 s
#   counts_write instance                 ->  "passed failed" in $RESULTS/instance.counts
#                                             (test/run-tests.sh adds them up) and
#                                             "instance: 3 passed, 0 failed"; false on a failure
#
# Settings (plain shell variables, read at each call):
#   SUITE          the name in the result lines
#   CHECK_OK       the result line's prefix on success (default "ok   $SUITE:")
#   CHECK_FAIL     ... on failure (default "FAIL $SUITE:")
#   CHECK_TAIL     lines of a failed check's output shown, indented (default 8)
#   POLL_INTERVAL  seconds between two tries of poll (default 0.2)
#   POLL_QUIET     1: poll discards the output of every try
#   RESULTS        the directory of the counts files (counts_write creates it)
passed=0 failed=0

# check_pass NAME / check_fail NAME [DETAIL]: count one result and print its line
# ("FAIL $SUITE: NAME: DETAIL" when DETAIL is given).
check_pass() {
  passed=$((passed + 1))
  echo "${CHECK_OK-ok   $SUITE:} $1"
}
check_fail() {
  failed=$((failed + 1))
  echo "${CHECK_FAIL-FAIL $SUITE:} $1${2+: $2}"
}

# check NAME CMD...: runs CMD in a subshell with its output captured; one result line,
# then on failure the last CHECK_TAIL lines of the output. Returns CMD's status.
check() {
  local name=$1 out rc
  shift
  out=$("$@" 2>&1)
  rc=$?
  if [ $rc -eq 0 ]; then
    check_pass "$name"
  else
    check_fail "$name"
    printf '%s\n' "$out" | tail -n "${CHECK_TAIL:-8}" | sed 's/^/     /'
  fi
  return $rc
}

# check_here NAME CMD...: like check, but CMD runs in this shell (the variables it sets
# stay set) and its output is not captured.
check_here() {
  local name=$1
  shift
  if "$@"; then
    check_pass "$name"
  else
    check_fail "$name"
    return 1
  fi
}

# poll SECONDS CMD...: re-runs CMD every POLL_INTERVAL seconds until it succeeds; false
# once SECONDS have passed without success. No fixed sleeps in the tests: wait with this.
poll() {
  local secs=$1 deadline
  shift
  deadline=$(($(date +%s%N) / 1000000 + secs * 1000))
  until poll_try "$@"; do
    [ $(($(date +%s%N) / 1000000)) -lt "$deadline" ] || return 1
    sleep "${POLL_INTERVAL:-0.2}"
  done
}
poll_try() {
  if [ "${POLL_QUIET:-0}" = 1 ]; then "$@" >/dev/null 2>&1; else "$@"; fi
}

# counts_write SUITE [SUFFIX]: writes "passed failed" to $RESULTS/SUITE.counts and prints
# "SUITE: N passed, M failed" (SUFFIX appended); false when a check failed.
counts_write() {
  mkdir -p "$RESULTS"
  echo "$passed $failed" >"$RESULTS/$1.counts"
  echo "$1: $passed passed, $failed failed${2-}"
  [ "$failed" -eq 0 ]
}
