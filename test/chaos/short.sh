#!/usr/bin/env bash
# test/chaos/short.sh: the short chaos check for `make test` (about 15 s).
#
# One Sentinel-managed group on 127.0.0.1 (1 primary + 2 replicas of redis-server, 3
# sentinels, down-after 1000 ms), chaos-writer writing through SENTINEL
# get-master-addr-by-name; SIGKILL the primary; restore the group; chaos-writer verify
# against the new primary and both replicas. Then a negative control: one acknowledged key
# is deleted on the new primary and verify must report it lost and fail -- the check can fail.
#
# Prints one line per check ("ok - ..." / "FAIL - ..."), writes "$RESULTS/chaos-short.counts"
# ("passed failed"), exits 1 when a check failed. Pass = 0 acknowledged writes lost and 0
# split-brain instants. Environment: CHAOS_WRITER (default build/chaos-writer), RESULTS
# (build/test-results), CHAOS_SHORT_PORT_BASE (26600: uses base..base+12), PEER_ENGINE.
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/lib.sh
CHECK_OK="ok -" CHECK_FAIL="FAIL -"
RESULTS=${RESULTS:-build/test-results}
export CHAOS_WRITER=${CHAOS_WRITER:-build/chaos-writer}
mkdir -p "$RESULTS"
started=$(date +%s)

finish() { counts_write chaos-short " in $(($(date +%s) - started)) s"; }

if [ ! -x "$CHAOS_WRITER" ]; then
  check_fail "chaos-writer binary at $CHAOS_WRITER (build it: make BUILD=... \$BUILD/chaos-writer)"
  finish; exit 1
fi
PEER_WORK=$(mktemp -d /tmp/chaos-short.XXXXXX); export PEER_WORK
. test/bench/peers-lib.sh
peer_init
trap 'peer_cleanup; [ "${CHAOS_KEEP:-0}" = 1 ] || rm -rf "$PEER_WORK"' EXIT
trap 'exit 130' INT TERM
peer_sentinel_layout "${CHAOS_SHORT_PORT_BASE:-26600}"
run=$PEER_WORK/run

field_is() { [ "$(peer_field "$VERIFY_LINE" "$1")" = "$2" ]; }
field_pos() { [ "$(peer_field "$VERIFY_LINE" "$1")" -gt 0 ] 2>/dev/null; }
recovered() { awk -v r="$RUN_RTO" 'BEGIN { exit !(r > 0) }'; }

# One acknowledged SET key of the run, deleted on the final primary: it must be reported.
lose_one_write() {
  local key
  key=$(grep -m1 '"op":"set".*"result":"acked"' "$run/writer.log" | sed 's/.*"key":"\([^"]*\)".*/\1/')
  [ -n "$key" ] && [ "$(peer_cli "${NEW##*:}" DEL "$key")" = 1 ] || return 1
  peer_verify "$run" "$NEW" "$REPS" --report "$run/negative.json"
  [ "$VERIFY_RC" = 1 ] && field_is lost 1
}

if ! check_here "sentinel group up (1 primary + 2 replicas, 3 sentinels)" peer_sentinel_setup; then
  finish; exit 1
fi
if check_here "SIGKILL of the primary under writes, writes acknowledged again elsewhere" \
  peer_sentinel_kill_run "$run"; then
  echo "    $VERIFY_LINE"
  REPS=$(for p in "${SD[@]}"; do [ "$PEER_HOST:$p" = "$NEW" ] || printf '%s:%s,' "$PEER_HOST" "$p"; done)
  REPS=${REPS%,}
  check_here "writes acknowledged (acked=$(peer_field "$VERIFY_LINE" acked)), rto_ms=$RUN_RTO" \
    eval 'field_pos acked && recovered'
  check_here "0 acknowledged writes lost (new primary ${NEW}, both replicas)" \
    eval 'field_is lost 0 && field_is replica_lost 0 && field_is not_caught_up 0'
  check_here "0 split-brain instants" field_is split_brain_instants 0
  check_here "verify passed (exit 0)" [ "$VERIFY_RC" = 0 ]
  check_here "verify detects a deliberately lost acknowledged write (lost=1, exit 1)" lose_one_write
fi
finish
