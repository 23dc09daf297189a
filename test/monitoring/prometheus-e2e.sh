#!/usr/bin/env bash
# test/monitoring/prometheus-e2e.sh (make monitoring-it): a real Prometheus (the Debian
# package's binary, a process with a generated prometheus.yml) scrapes, on the local
# environment, a host controller (its metrics port) and every pod of one 3-instance
# cluster (pod IP:9121, static_configs with the labels a PodMonitor would give:
# namespace, pod, cluster). The private node agent, the controller and the cluster come
# from the controller e2e's helpers (test/integration/controller/lib.sh). Checks, through
# Prometheus's HTTP API (/api/v1/query):
#   every target up; redis_up 1 for every instance; one writable primary
#   instances and ready instances 3, time to Ready recorded, the client certificate's
#   expiry ten years out, no failover in progress
#   redis_operator_cluster_available_seconds_total increasing, equal to the observed
#   seconds while the primary stays writable
#   a switchover (redis.io/switchover-to): redis_operator_cluster_switchovers_total 1 and
#   the new primary's redis_instance_info role primary
#   SIGKILL of the primary's server: redis_operator_cluster_failovers_total 1, a writable
#   primary again
#   the alert rules loaded (config/monitoring/prometheusrule.yaml), none firing (pending allowed: a scrape may catch the failover)
# Prints one line per check; "passed failed" in $RESULTS/monitoring-e2e.counts.
#   BUILD=build-x bash test/monitoring/prometheus-e2e.sh   (KEEP=1 keeps the work dir)
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/env/common.sh
. test/lib.sh
. test/monitoring/lib.sh
SUITE=monitoring-e2e
BUILD=${BUILD:-build}
RESULTS=${RESULTS:-$BUILD/test-results}
t0=$(date +%s)

command -v prometheus >/dev/null || { check_fail "prometheus installed (test/deps.sh)"; counts_write "$SUITE"; exit 1; }
if ! make -s BUILD="$BUILD" "$BUILD/redis-operator" "$BUILD/nodeagent" >/dev/null; then
  check_fail "build"; counts_write "$SUITE"; exit 1
fi
if ! api_ready && ! bash test/env/up.sh >/dev/null 2>&1; then
  check_fail "the local control plane is up"; counts_write "$SUITE"; exit 1
fi

BIN=$(pwd)/$BUILD/redis-operator
PROM_PID=
. test/integration/controller/lib.sh
private_run mon monitoring-it "${MONITORING_POD_CIDR:-10.240.$((230 + RANDOM % 10)).0/24}"
NS=$RUN-m PPORT=$((HPORT + 2))

cleanup() {
  [ -n "$PROM_PID" ] && kill -TERM "$PROM_PID" 2>/dev/null && wait "$PROM_PID" 2>/dev/null
  stop_controller main >/dev/null
  stop_private_env
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# q PROMQL: the first sample's value of an instant query ("" when none)
q() {
  curl -sf --max-time 3 "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" |
    jq -r '.data.result[0].value[1] // empty'
}
# q_is PROMQL VALUE: the query's first value is VALUE
q_is() { [ "$(q "$1")" = "$2" ]; }
pods() { $K -n "$NS" get pods -l redis.io/cluster=mon -o jsonpath='{range .items[*]}{.metadata.name} {.status.podIP}{"\n"}{end}'; }

prom_config() {
  local name ip
  rules_groups config/monitoring/prometheusrule.yaml >"$W/rules.yaml"
  {
    printf 'global: {scrape_interval: 1s, evaluation_interval: 1s}\n'
    printf 'rule_files: [%s/rules.yaml]\n' "$W"
    printf 'scrape_configs:\n'
    printf -- '- job_name: redis-operator\n  honor_labels: true\n'
    printf '  static_configs: [{targets: ["127.0.0.1:%s"]}]\n' "$MPORT"
    printf -- '- job_name: redis-instances\n  static_configs:\n'
    while read -r name ip; do
      printf '  - {targets: ["%s:9121"], labels: {namespace: %s, pod: %s, cluster: mon}}\n' "$ip" "$NS" "$name"
    done < <(pods)
  } >"$W/prometheus.yml"
}
start_prometheus() {
  prom_config
  setsid prometheus --config.file="$W/prometheus.yml" --storage.tsdb.path="$W/tsdb" \
    --web.listen-address="127.0.0.1:$PPORT" >"$W/prometheus.log" 2>&1 </dev/null &
  PROM_PID=$!
  POLL_QUIET=1 poll 20 curl -sf "http://127.0.0.1:$PPORT/-/ready"
}

t_targets() {
  POLL_QUIET=1 poll 20 q_is 'count(up == 1)' 4 || { echo "up: $(q 'count(up == 1)') of 4"; return 1; }
  POLL_QUIET=1 poll 10 q_is 'count(redis_up{cluster="mon"} == 1)' 3 ||
    { echo "redis_up 1: $(q 'count(redis_up{cluster="mon"} == 1)') of 3"; return 1; }
  POLL_QUIET=1 poll 10 q_is "redis_operator_cluster_writable_primary{namespace=\"$NS\",cluster=\"mon\"}" 1
}
# the series read from the objects: instances, time to Ready (status and histogram), the
# controller's client certificate (90 days, just issued), no failover in progress
t_from_objects() {
  local sel="namespace=\"$NS\",cluster=\"mon\"" e
  for e in "redis_operator_cluster_instances{$sel} == 3" "redis_operator_cluster_ready_instances{$sel} == 3" \
    "redis_operator_cluster_last_time_to_ready_seconds{$sel} > 0" \
    "redis_operator_cluster_time_to_ready_seconds_count{$sel} == 1" \
    "redis_operator_cluster_client_certificate_expiry_timestamp_seconds{$sel} - time() > 89 * 86400" \
    "redis_operator_cluster_failover_in_progress{$sel} == 0"; do
    POLL_QUIET=1 poll 10 eval '[ -n "$(q "$e")" ]' || { echo "no sample for: $e"; return 1; }
  done
}
t_availability() {
  local sel="namespace=\"$NS\",cluster=\"mon\"" a b
  POLL_QUIET=1 poll 10 q_is "count(redis_operator_cluster_available_seconds_total{$sel} > 0)" 1 || return 1
  a=$(q "redis_operator_cluster_available_seconds_total{$sel}")
  POLL_QUIET=1 poll 10 eval '[ "$(q "redis_operator_cluster_available_seconds_total{$sel} > $a")" != "" ]' ||
    { echo "not increasing from $a"; return 1; }
  b=$(q "redis_operator_cluster_observed_seconds_total{$sel} - redis_operator_cluster_available_seconds_total{$sel}")
  echo "available $(q "redis_operator_cluster_available_seconds_total{$sel}") s, observed - available $b s"
  awk -v d="$b" 'BEGIN { exit !(d < 1.5) }' || { echo "unavailable seconds counted: $b"; return 1; }
}
t_switchover() {
  local sel="namespace=\"$NS\",cluster=\"mon\"" target
  target=$($K -n "$NS" get pods -l redis.io/cluster=mon,redis.io/role=replica -o jsonpath='{.items[0].metadata.name}')
  q_is "redis_operator_cluster_switchovers_total{$sel}" 0 || { echo "switchovers before: $(q "redis_operator_cluster_switchovers_total{$sel}")"; return 1; }
  $K -n "$NS" annotate rediscluster mon "redis.io/switchover-to=$target" >/dev/null || return 1
  poll 30 eval '[ "$(primary "$NS" mon)" = "$target" ]' || { echo "primary did not move to $target"; return 1; }
  POLL_QUIET=1 poll 15 q_is "redis_operator_cluster_switchovers_total{$sel}" 1 ||
    { echo "switchovers_total: $(q "redis_operator_cluster_switchovers_total{$sel}")"; return 1; }
  POLL_QUIET=1 poll 15 q_is "redis_instance_info{pod=\"$target\",role=\"primary\"}" 1 ||
    { echo "no redis_instance_info role primary for $target"; return 1; }
  POLL_QUIET=1 poll 15 q_is "redis_operator_cluster_writable_primary{$sel}" 1
}
t_failover() {
  local sel="namespace=\"$NS\",cluster=\"mon\"" old pid
  old=$(primary "$NS" mon)
  poll 20 ready "$NS" mon || { echo "not Ready after the switchover"; return 1; }
  pid=$(server_hostpid "$NS" "$old") || { echo "no redis-server of $old"; return 1; }
  kill -KILL "$pid"
  poll 30 eval '[ "$(rc "$NS" mon "{.status.lastFailover.from}")" = "$old" ]' || { echo "no failover from $old"; return 1; }
  POLL_QUIET=1 poll 15 q_is "redis_operator_cluster_failovers_total{$sel}" 1 ||
    { echo "failovers_total: $(q "redis_operator_cluster_failovers_total{$sel}")"; return 1; }
  POLL_QUIET=1 poll 15 q_is "redis_operator_cluster_writable_primary{$sel}" 1
  poll 60 ready "$NS" mon || { echo "not Ready after the failover"; return 1; }
}
t_rules() {
  local n
  n=$(curl -sf "http://127.0.0.1:$PPORT/api/v1/rules" | jq '[.data.groups[].rules[] | select(.type == "alerting")] | length')
  [ "$n" = "$(grep -c -- '- alert:' "$W/rules.yaml")" ] || { echo "alerting rules loaded: $n"; return 1; }
  curl -sf "http://127.0.0.1:$PPORT/api/v1/alerts" >"$W/alerts.json" || return 1
  jq -e '[.data.alerts[] | select(.state == "firing")] | length == 0' "$W/alerts.json" >/dev/null ||
    { jq -c '.data.alerts[] | {a: .labels.alertname, s: .state}' "$W/alerts.json"; return 1; }
}

start_agent || { check_fail "node agent"; counts_write "$SUITE"; exit 1; }
$K apply -f config/crd/bases >/dev/null 2>&1
newns "$OPNS" >/dev/null && newns "$NS" >/dev/null
start_controller || { check_fail "controller started"; counts_write "$SUITE"; exit 1; }
mkcluster "$NS" mon 3
check "cluster mon Ready (3 instances)" poll 120 ready "$NS" mon || { counts_write "$SUITE"; exit 1; }
# in this shell: cleanup stops it by $PROM_PID
check_here "prometheus started, scraping the controller and 3 pods" start_prometheus ||
  { tail -5 "$W/prometheus.log"; counts_write "$SUITE"; exit 1; }
check "every target up, redis_up 1 for every instance, a writable primary" t_targets
check "per-cluster series from the objects: instances, time to Ready, certificate expiry" t_from_objects
check "availability seconds increase with the writable primary, none lost" t_availability
check "switchover: switchovers_total 1, the new primary's role in redis_instance_info" t_switchover
check "failover after SIGKILL of the primary's server: failovers_total 1, a writable primary again" t_failover
check "the alert rules loaded, none firing (pending allowed: a scrape may catch the failover)" t_rules
counts_write "$SUITE" " ($(($(date +%s) - t0)) s)"
