#!/usr/bin/env bash
# test/monitoring/dashboard.sh: the Grafana dashboard (config/monitoring/dashboard.json):
#   valid JSON, unique panel ids, every panel but the rows has a query
#   every query parses   the panels' and variables' PromQL, Grafana's variables replaced
#                        ($__rate_interval 5m, $__range 1h, $namespace .*), as recording
#                        rules through promtool check rules
#   every metric exists  each name a query uses is one the code exports (lib.sh
#                        metric_names) or external-metrics.txt lists
# Seconds; no cluster needed.
set -u
cd "$(dirname "$0")/../.."
SUITE=monitoring-dashboard
. test/lib.sh
. test/monitoring/lib.sh
DASH=config/monitoring/dashboard.json
OUT=${BUILD:-build}/monitoring
RESULTS=${RESULTS:-${BUILD:-build}/test-results}
mkdir -p "$OUT"

queries() {
  jq -r '[.panels[] | .targets[]?.expr] + [.templating.list[] | .query.query? // empty] | .[]' "$DASH" |
    sed -E 's/^label_values\(([^,]*), *[a-z_]+\)$/\1/'
}
structure() {
  jq -e . "$DASH" >/dev/null || return 1
  local dup empty
  dup=$(jq -r '.panels[].id' "$DASH" | sort | uniq -d)
  [ -z "$dup" ] || { echo "panel ids used twice: $dup"; return 1; }
  empty=$(jq -r '.panels[] | select(.type != "row" and ((.targets // []) | length) == 0) | .title' "$DASH")
  [ -z "$empty" ] || { echo "panels without a query: $empty"; return 1; }
}
parses() {
  {
    echo 'groups: [{name: dashboard, rules: ['
    queries | sed -e 's/\$__rate_interval/5m/g; s/\$__range/1h/g; s/\$[a-z_]*/.*/g' |
      awk '{ gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); printf "  {record: q%d, expr: \"%s\"},\n", NR, $0 }'
    echo ']}]'
  } >"$OUT/dashboard-rules.yaml"
  promtool check rules "$OUT/dashboard-rules.yaml"
}
names_exist() {
  local bad
  bad=$(queries | promql_names | unknown_names)
  [ -z "$bad" ] || { echo "not exported by the code nor in external-metrics.txt: $bad"; return 1; }
}

check "valid JSON, $(jq '[.panels[] | select(.type != "row")] | length' "$DASH") panels, each with a query" structure
check "every query parses ($(queries | wc -l) queries)" parses
check "every metric a query uses exists ($(queries | promql_names | wc -l) names)" names_exist
counts_write "$SUITE"
