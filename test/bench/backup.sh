#!/usr/bin/env bash
# test/bench/backup.sh: the backup and restore figures of issue 17 on the local environment
# (test/env: the API server, versitygw for S3, Azurite for Azure; build/env/*.env), with
# the instance-level harness (test/integration/instance/lib.sh: managers run as host
# processes against the real API server, Pods exist only as API objects).
#
# A 2-instance cluster (primary -0, replica -1) is filled with BENCH_BACKUP_MB MiB of
# incompressible values (random 16 KiB strings through redis-cli --pipe); then, on the
# replica:
#   bgsave_ms       BGSAVE alone, timed in ms by polling rdb_bgsave_in_progress
#   <p>.backup_ms   POST /v1/backup to phase completed (the RDB from the replication
#                   stream, uploaded while it arrives), for p in BENCH_BACKUP_PROVIDERS
#                   (s3 azure); ratio = backup / bgsave
#   <p>.rss_*       the replica manager's VmRSS sampled from /proc every 50 ms during the
#                   backup (peak) and its VmHWM after; peak VmRSS above BENCH_BACKUP_RSS_MIB
#                   (16) fails the run: the one hard assertion, no bound on a time
#   <p>.restore_ms  a new 1-instance cluster booted from that backup, manager start → Ready
#                   (download, checksum, server load), every key present
#   write_latency   chaos-writer (SET + WAIT 1, as fast as acknowledged) on the primary for
#                   a quiet window, then for a window of the same length while the replica
#                   backs up to the first provider: p50/p99 of the write + WAIT time
# Prints the figures and writes $BENCH_OUT/backup.json (key "backup"), which
# test/bench/results.sh merges and docs.sh renders as "Backup and restore".
#   aof.*           method aof to the first provider (BENCH_BACKUP_AOF=1, when the replica
#                   runs appendonly yes): time, archive size, the same RSS bound
#   BENCH_BACKUP_MB=1024 BENCH_BACKUP_PROVIDERS="s3 azure" BENCH_BACKUP_LATENCY=1
#   BENCH_BACKUP_RSS_MIB=16 BUILD=build BENCH_OUT=$BUILD/bench
# Disk: about 3 × BENCH_BACKUP_MB under $BUILD/bench (removed at the end); memory the same.
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/env/common.sh
. test/lib.sh
SUITE=bench-backup
BUILD=${BUILD:-build}
BENCH_OUT=${BENCH_OUT:-$BUILD/bench}
MB=${BENCH_BACKUP_MB:-1024}
PROVIDERS=${BENCH_BACKUP_PROVIDERS:-s3 azure}
RSS_MIB=${BENCH_BACKUP_RSS_MIB:-16}
RESULTS=${RESULTS:-$BUILD/test-results}
CW=$(pwd)/$BUILD/chaos-writer
make -s BUILD="$BUILD" "$BUILD/redis-operator" "$BUILD/test/objtool" "$BUILD/chaos-writer" >/dev/null ||
  { echo "bench-backup: build failed" >&2; exit 2; }
BIN=$(pwd)/$BUILD/redis-operator
mkdir -p "$BENCH_OUT"
# an absolute BENCH_OUT too; no work directory, no run (every path below is under $W)
W=$(mktemp -d "$(cd "$BENCH_OUT" && pwd)/backup-work.XXXXXX") && [ -d "$W" ] ||
  { echo "bench-backup: cannot create a work directory under $BENCH_OUT" >&2; exit 2; }
: >"$W/ports"
BASE=$((20000 + (RANDOM % 110) * 100))
NS="bench-bk-$$-$RANDOM"
RUN=bench-$$
. test/integration/instance/lib.sh
. test/integration/instance/backup_checks.sh
cleanup() {
  kill_all
  $K delete namespace "$NS" --wait=false >/dev/null 2>&1
  for p in $PROVIDERS; do (store_env "$p"; objtool "$p" rm "$RUN/" >/dev/null 2>&1); done
  [ -n "${KEEP:-}" ] || rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
api_ready || bash test/env/up.sh >/dev/null 2>&1 || { echo "bench-backup: no local environment" >&2; exit 2; }
for p in $PROVIDERS; do [ -r "build/env/$p.env" ] || { echo "bench-backup: build/env/$p.env missing" >&2; exit 2; }; done
$K apply -f config/crd/bases/redis.io_redisclusters.yaml >/dev/null 2>&1
kretry create namespace "$NS"
kctl get serviceaccount default >/dev/null 2>&1 || kretry create serviceaccount default
ms() { echo $(($(date +%s%N) / 1000000)); }
say() { echo "bench-backup: $*"; }
die() { echo "bench-backup: FAIL $*" >&2; exit 1; }

# N MiB of SET bench:<i> <16 KiB of random hex-free bytes> as RESP, for redis-cli --pipe
fill() { # POD MIB
  python3 - "$2" <<'PY' | rcli "$1" --pipe >"$W/fill.log" 2>&1
import os, sys
out = sys.stdout.buffer
for i in range(int(sys.argv[1]) * 64):
    k = b"bench:%d" % i
    v = os.urandom(16384)
    out.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v))
PY
}
info_field() { rcli "$1" INFO "$2" | tr -d '\r' | sed -n "s/^$3://p"; }
# no BGSAVE nor AOF rewrite running: each timed figure starts from a quiet server
# (the manager would wait for either before its own transfer starts)
children() { # POD: "00" when neither runs
  rcli "$1" INFO persistence | tr -d '\r' |
    awk -F: '$1 == "rdb_bgsave_in_progress" || $1 == "aof_rewrite_in_progress" { printf "%s", $2 }'
}
idle() { poll 600 eq 00 children "$1"; }
bgsave_ms() { # POD: one BGSAVE, ms from the command to rdb_bgsave_in_progress:0
  local t0 t1
  idle "$1" || return 1
  t0=$(ms); rcli "$1" BGSAVE >/dev/null
  POLL_INTERVAL=0.01 poll 3600 eq 0 info_field "$1" persistence rdb_bgsave_in_progress || return 1
  t1=$(ms)
  [ "$(info_field "$1" persistence rdb_last_bgsave_status)" = ok ] || return 1
  echo $((t1 - t0))
}
vm() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status" 2>/dev/null; }
# samples VmRSS of PID every 50 ms into FILE until STOPFILE exists
sample_rss() { # PID FILE STOPFILE
  while [ ! -e "$3" ]; do vm "$1" VmRSS >>"$2"; sleep 0.05; done
}
backup_run() { # POD P NAME [METHOD]: prints "ms peak_rss_kib hwm_kib size"
  local pod=$1 p=$2 name=$3 method=${4:-rdb} pid t0 t1 peak
  store_env "$p"; pid=$(mgr_pid "$pod")
  idle "$pod" || return 1
  rm -f "$W/rss.$name" "$W/rss.stop"
  sample_rss "$pid" "$W/rss.$name" "$W/rss.stop" &
  t0=$(ms)
  case $(post "$pod" backup "$(backup_body "$p" "$NS/$name" "$RUN" "" "" "$method")") in 202\ *) ;; *) touch "$W/rss.stop"; return 1 ;; esac
  poll 3600 ne running bphase "$pod"
  t1=$(ms); touch "$W/rss.stop"; wait
  [ "$(bphase "$pod")" = completed ] || { echo "backup $name: $(jst "$pod" .backup)" >&2; return 1; }
  peak=$(sort -n "$W/rss.$name" | tail -1)
  echo "$((t1 - t0)) $peak $(vm "$pid" VmHWM) $(jst "$pod" .backup.size)"
}
restore_run() { # P NAME KEYS: prints ms to Ready
  local p=$1 name=$2 keys=$3 c="rs$RANDOM" pod src t0 t1
  pod=$c-0; store_env "$p"
  mkcluster "$c" redis 1 pvc >/dev/null; mkpod "$pod" "$c" >/dev/null; set_primary "$c" "$pod" >/dev/null
  creds_dir "$p" "$W/$pod/restore-creds"
  src=$(jq -nc --arg n "$NS/$name" --arg m "$RUN/$CL/$NS/$name/manifest.json" --argjson d "$(dest "$p" "$RUN")" \
    '{name: $n, manifestKey: $m, destination: $d}')
  t0=$(ms)
  start_mgr "$pod" "$c" env REDIS_OPERATOR_RESTORE_SOURCE="$src" REDIS_OPERATOR_RESTORE_CREDENTIALS_DIR="$W/$pod/restore-creds"
  poll 3600 ready "$pod" || { echo "restore $name: $(jst "$pod" .restore)" >&2; return 1; }
  t1=$(ms)
  [ "$(rcli "$pod" DBSIZE)" = "$keys" ] || { echo "restore $name: $(rcli "$pod" DBSIZE) keys of $keys" >&2; return 1; }
  stop_mgr "$pod" >/dev/null; rm -rf "$W/$pod/data"
  echo $((t1 - t0))
}
# write + WAIT latency (ms) on the primary for SECS: the stats object of chaos-writer
writes() { # SECS LOG
  printf '%s' "$DEFPW" >"$W/defpw"
  "$CW" run --resolve "role:127.0.0.1:$(port "$CL-0" 1)" --log "$2" --auth-password-file "$W/defpw" \
    --duration "${1}s" --replicas 1 --wait-timeout 1s --command-timeout 2s --incr-every 0 >/dev/null 2>&1
}
lat_stats() { # LOG
  jq -r 'select(.type == "op" and .result == "acked") | (.t1 - .t0) / 1000' "$1" | "$CW" stats
}

CL="bk$RANDOM"
mkcluster "$CL" redis 2 pvc >/dev/null; set_primary "$CL" "$CL-0" >/dev/null
mkpod "$CL-0" "$CL" >/dev/null; start_mgr "$CL-0" "$CL"
poll 60 ready "$CL-0" || die "primary not ready: $(st "$CL-0")"
mkpod "$CL-1" "$CL" >/dev/null; start_mgr "$CL-1" "$CL"
poll 60 ready "$CL-1" || die "replica not ready: $(st "$CL-1")"
t0=$(ms); fill "$CL-0" "$MB" || die "fill: $(tail -3 "$W/fill.log")"
KEYS=$(rcli "$CL-0" DBSIZE)
poll 600 eq "$KEYS" rcli "$CL-1" DBSIZE || die "replica has $(rcli "$CL-1" DBSIZE) of $KEYS keys"
say "$MB MiB in $KEYS keys written and replicated in $(($(ms) - t0)) ms; used_memory $(info_field "$CL-1" memory used_memory_human) on the replica"
# no automatic AOF rewrite on the replica during the timings (best effort)
rcli "$CL-1" CONFIG SET auto-aof-rewrite-percentage 0 >/dev/null 2>&1
BGSAVE=$(bgsave_ms "$CL-1") || die "BGSAVE on the replica failed"
say "BGSAVE on the replica: $BGSAVE ms"

json="{\"data_mib\": $MB, \"keys\": $KEYS, \"bgsave_ms\": $BGSAVE, \"rss_bound_mib\": $RSS_MIB, \"source\": \"replica\""
rss_fail=""
first=""
for p in $PROVIDERS; do
  read -r bms peak hwm size <<<"$(backup_run "$CL-1" "$p" "full-$p")" || true
  [ -n "${size:-}" ] || die "backup to $p failed"
  [ -n "$first" ] || { first=$p; first_ms=$bms; }
  rms=$(restore_run "$p" "full-$p" "$KEYS") || die "restore from $p failed"
  ratio=$(awk -v a="$bms" -v b="$BGSAVE" 'BEGIN { printf "%.2f", a / b }')
  say "$p: backup of $size bytes $bms ms (${ratio}× BGSAVE); manager VmRSS peak $peak KiB, VmHWM $hwm KiB; restore to Ready $rms ms"
  [ "$peak" -le $((RSS_MIB * 1024)) ] || rss_fail="$rss_fail $p:${peak}KiB"
  json="$json, \"$p\": {\"backup_ms\": $bms, \"rdb_bytes\": $size, \"ratio_vs_bgsave\": $ratio, \"rss_peak_kib\": $peak, \"hwm_kib\": $hwm, \"restore_ms\": $rms}"
done

# method aof (BGREWRITEAOF, the tar.gz streamed through put_stream's spooled part) to the
# first provider, when the replica runs appendonly yes: its time and the manager's RSS
if [ "${BENCH_BACKUP_AOF:-1}" = 1 ] && [ "$(rcli "$CL-1" CONFIG GET appendonly | tail -1)" = yes ]; then
  read -r ams apeak ahwm asize <<<"$(backup_run "$CL-1" "$first" "aof-$first" aof)" || true
  [ -n "${asize:-}" ] || die "aof backup to $first failed"
  say "$first aof: archive of $asize bytes $ams ms; manager VmRSS peak $apeak KiB, VmHWM $ahwm KiB"
  [ "$apeak" -le $((RSS_MIB * 1024)) ] || rss_fail="$rss_fail $first-aof:${apeak}KiB"
  json="$json, \"aof\": {\"provider\": \"$first\", \"backup_ms\": $ams, \"archive_bytes\": $asize, \"rss_peak_kib\": $apeak, \"hwm_kib\": $ahwm}"
fi

if [ "${BENCH_BACKUP_LATENCY:-1}" = 1 ]; then
  # the window: the first provider's backup time, rounded up, at least 5 s
  win=$(( (first_ms + 999) / 1000 )); [ "$win" -ge 5 ] || win=5
  writes "$win" "$W/quiet.log"
  quiet=$(lat_stats "$W/quiet.log")
  store_env "$first"
  writes "$win" "$W/busy.log" &
  wpid=$!
  post "$CL-1" backup "$(backup_body "$first" "$NS/during" "$RUN")" >/dev/null
  wait "$wpid"
  poll 3600 ne running bphase "$CL-1"
  busy=$(lat_stats "$W/busy.log")
  say "write+WAIT latency on the primary over $win s: quiet $(jq -c '{p50, p99, runs}' <<<"$quiet") ms; replica backing up to $first $(jq -c '{p50, p99, runs}' <<<"$busy") ms"
  json="$json, \"write_latency_window_s\": $win, \"write_latency_quiet_ms\": $quiet, \"write_latency_backup_ms\": $busy"
fi
machine="$(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1 | tr -d '"\\'), kernel $(uname -r)"
json="$json, \"machine\": \"$machine\", \"measured_at\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}"
echo "{\"backup\": $json}" | jq . >"$BENCH_OUT/backup.json" || die "the figures are not JSON"
say "wrote $BENCH_OUT/backup.json"
[ -z "$rss_fail" ] || die "manager peak VmRSS above $RSS_MIB MiB:$rss_fail"
say "manager peak VmRSS within $RSS_MIB MiB for every provider"
