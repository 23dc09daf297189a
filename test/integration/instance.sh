#!/usr/bin/env bash
# Integration checks of the instance manager (`redis-operator instance`) against real
# redis-server and valkey-server and the local control plane (test/env, started if
# needed; never stopped here). Managers run as plain processes on this host, each with
# its own ports and directories under a temporary work dir; Pods exist only as API
# objects (a scheduling gate keeps them unscheduled) carrying the IP and named ports
# the managers resolve. Prints one line per check and figures as "info" lines;
# records "passed failed" in $RESULTS/instance.counts.
#   INSTANCE_ENGINES="redis valkey"   engines for the replication scenarios
#   INSTANCE_BENCH=0                  skip the figures (RSS, latency, 50 switchovers)
#   INSTANCE_ONLY=safety              only the safety checks (safety_checks.sh)
#   INSTANCE_ONLY=http                only the HTTP and file-mode checks (http_checks.sh)
#   INSTANCE_ONLY=backup              only backups and restore (backup_checks.sh)
#   INSTANCE_ONLY=backup-faults       only the storage faults of backups and restore
#                                     (backup_fault_checks.sh; root: iptables, tmpfs)
#   INSTANCE_ONLY=lease               only the self-fence on a lost API server (checks.sh lease_deadline)
#   INSTANCE_ONLY=common              only the engine-independent checks (checks.sh common_suite)
#   INSTANCE_ONLY=tls                 only the server's and the manager's TLS (checks.sh tls_reload, http_tls)
#   INSTANCE_ONLY=sentinel            only sentinel mode (sentinel_checks.sh: sentinel managers
#                                     over data managers; also in the default run)
#   SENTINEL_ENGINES="redis valkey"   engines for sentinel mode (default: INSTANCE_ENGINES)
#   OPT=... LDFLAGS=...               passed to make (an ASan build: see instance/README.md)
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/env/common.sh
. test/lib.sh
SUITE=instance
BUILD=${BUILD:-build}
RESULTS=${RESULTS:-$BUILD/test-results}

# OPT and LDFLAGS pass through (e.g. an ASan build of the manager)
if ! make -s BUILD="$BUILD" ${OPT:+OPT="$OPT"} ${LDFLAGS:+LDFLAGS="$LDFLAGS"} "$BUILD/redis-operator" >/dev/null; then
  check_fail "cannot build $BUILD/redis-operator"; counts_write instance >/dev/null; exit 1
fi
BIN=$(pwd)/$BUILD/redis-operator
W=$(mktemp -d /tmp/instance-it.XXXXXX)
: >"$W/ports"
BASE=$((20000 + (RANDOM % 110) * 100)) # below the ephemeral range (32768+)
NS="inst-it-$$-$RANDOM"
WRITER=$W/writer
cc -O2 -o "$WRITER" test/integration/instance/writer.c $(pkg-config --cflags --libs hiredict) || exit 1
. test/integration/instance/lib.sh
. test/integration/instance/checks.sh
. test/integration/instance/http_checks.sh
. test/integration/instance/acl_checks.sh
. test/integration/instance/safety_checks.sh
. test/integration/instance/backup_checks.sh
. test/integration/instance/sentinel_checks.sh
. test/integration/instance/backup_fault_checks.sh
cleanup() { kill_all; $K delete namespace "$NS" --wait=false >/dev/null 2>&1; [ -n "${KEEP:-}" ] || rm -rf "$W"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

if ! api_ready && ! bash test/env/up.sh >/dev/null 2>&1; then
  check_fail "the local control plane is not up"; counts_write instance >/dev/null; exit 1
fi
$K apply -f config/crd/bases/redis.io_redisclusters.yaml >/dev/null 2>&1
kretry create namespace "$NS"
kctl get serviceaccount default >/dev/null 2>&1 || kretry create serviceaccount default

if [ "${INSTANCE_ONLY:-}" = safety ]; then safety_suite; counts_write instance; exit; fi
if [ "${INSTANCE_ONLY:-}" = http ]; then http_only; counts_write instance; exit; fi
if [ "${INSTANCE_ONLY:-}" = backup ]; then backup_suite; counts_write instance; exit; fi
if [ "${INSTANCE_ONLY:-}" = backup-faults ]; then backup_fault_suite; counts_write instance; exit; fi
if [ "${INSTANCE_ONLY:-}" = sentinel ]; then sentinel_suite; counts_write instance; exit; fi
if [ "${INSTANCE_ONLY:-}" = lease ]; then
  check "API server cut off: self-fence by the renew deadline, no write accepted" \
    lease_deadline "d$RANDOM" 3>&1
  check "API server cut off, primaryIsolation.apiServerTimeout 1s: self-fence by it" \
    lease_deadline "i$RANDOM" 1s 2500 3>&1
  counts_write instance; exit
fi
if [ "${INSTANCE_ONLY:-}" = common ]; then common_suite "c$RANDOM"; counts_write instance; exit; fi
if [ "${INSTANCE_ONLY:-}" = tls ]; then
  check "server TLS certificate renewed in its directory: reloaded live, same server pid" \
    tls_reload "t$RANDOM"
  check "HTTPS API: client certificate required for mutations; peer promote over HTTPS" \
    http_tls "t$RANDOM"
  counts_write instance; exit
fi
check "copy-binary: runs from DIR with its libraries, LD_LIBRARY_PATH unset" copy_binary
check "boot waits while the API server is unreachable (no server started)" boot_waits_api_down
for eng in ${INSTANCE_ENGINES:-redis valkey}; do
  command -v "$eng-server" >/dev/null || { echo "skip instance: $eng-server not installed"; continue; }
  engine_suite "$eng" "${eng:0:1}$RANDOM"
  check "$eng: redis.conf, RDB and AOF stay 0600 after CONFIG REWRITE and SAVE" files_private "$eng" "p$RANDOM"
  check "$eng: customer users with every grant allowed cannot touch the operator; bypasses refused" \
    acl_lockdown "$eng" "a${eng:0:1}$RANDOM"
done
common_suite "x$RANDOM"
http_suite "h$RANDOM"
safety_suite
backup_suite
backup_fault_suite
sentinel_suite
check "PID 1: orphans reaped, SIGTERM handled (unshare --pid)" pid1_reaping "z$RANDOM"
[ "${INSTANCE_BENCH:-1}" = 1 ] && bench_suite "b$RANDOM"
counts_write instance
