#!/usr/bin/env bash
# test/monitoring/rules.sh: the PrometheusRule (config/monitoring/prometheusrule.yaml) and
# the chart's copy of it, with promtool (Debian's prometheus package):
#   promtool check rules   the groups under spec: parse and their expressions are valid
#   promtool test rules    rules.test.yaml: every alert firing and not firing
#   every alert tested     each alert of the file has a test case that expects it to fire
#   names exist            every metric an expression uses is one the code exports
#                          (lib.sh metric_names) or external-metrics.txt lists
#   chart in step          charts/.../templates/monitoring-rules.yaml holds the same groups
#                          (its runbook prefix templated)
# Seconds; no cluster needed. BUILD (default build) holds the extracted rules.
set -u
cd "$(dirname "$0")/../.."
SUITE=monitoring-rules
. test/lib.sh
. test/monitoring/lib.sh
RULES=config/monitoring/prometheusrule.yaml
CHART=charts/redis-operator/templates/monitoring-rules.yaml
OUT=${BUILD:-build}/monitoring
RESULTS=${RESULTS:-${BUILD:-build}/test-results}
mkdir -p "$OUT"
rules_groups "$RULES" >"$OUT/rules.yaml"
cp test/monitoring/rules.test.yaml "$OUT/"

alerts() { grep -oE '^ *- alert: [A-Za-z]+' "$1" | awk '{print $3}' | sort; }
tested() { grep -oE '^ *alertname: [A-Za-z]+' "$OUT/rules.test.yaml" | awk '{print $2}' | sort -u; }
# alerts with an exp_alerts that is not empty, as promtool's file lists them
fired() {
  awk '/alertname:/ {a=$2} /exp_labels:/ {print a}' "$OUT/rules.test.yaml" | sort -u
}
every_alert_fires() {
  local missing
  missing=$(comm -23 <(alerts "$OUT/rules.yaml") <(fired))
  [ -z "$missing" ] || { echo "alerts without a firing test: $missing"; return 1; }
  missing=$(comm -23 <(alerts "$OUT/rules.yaml") <(tested))
  [ -z "$missing" ] || { echo "alerts without a test: $missing"; return 1; }
  missing=$(comm -13 <(alerts "$OUT/rules.yaml") <(tested))
  [ -z "$missing" ] || { echo "tests of alerts that do not exist: $missing"; return 1; }
}
names_exist() {
  local bad
  bad=$(grep -E '^ *expr:' "$OUT/rules.yaml" | promql_names | unknown_names)
  [ -z "$bad" ] || { echo "not exported by the code nor in external-metrics.txt: $bad"; return 1; }
}
# The chart's template is what gen-chart.sh writes, and (when the helm CLI of test/helm is
# built) it renders to the same groups with the default runbook prefix.
chart_in_step() {
  local helm
  bash test/monitoring/gen-chart.sh --check || { echo "run test/monitoring/gen-chart.sh"; return 1; }
  helm=$(ls "${REDIS_OPERATOR_CACHE:-$HOME/.cache/redis-operator}"/helm/*/bin/helm 2>/dev/null | tail -1)
  [ -n "$helm" ] || { echo "(no helm CLI built: the template's text only)"; return 0; }
  "$helm" template t charts/redis-operator --set monitoring.prometheusRule.enabled=true \
    --show-only templates/monitoring-rules.yaml >"$OUT/chart-rules.yaml" || return 1
  diff -u "$OUT/rules.yaml" <(rules_groups "$OUT/chart-rules.yaml")
}

command -v promtool >/dev/null || { check_fail "promtool installed" "apt-get install prometheus (test/deps.sh)"; counts_write "$SUITE"; exit 1; }
check "promtool check rules: $(alerts "$OUT/rules.yaml" | wc -l) alerts" promtool check rules "$OUT/rules.yaml"
check "promtool test rules: every alert firing and not firing" sh -c "cd '$OUT' && promtool test rules rules.test.yaml"
check "every alert has a firing test, every test an alert" every_alert_fires
check "every metric in an expression exists" names_exist
check "the chart's rules are the same groups" chart_in_step
counts_write "$SUITE"
