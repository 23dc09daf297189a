#!/usr/bin/env bash
# test/monitoring/gen-chart.sh: writes the chart's PrometheusRule template
# (charts/redis-operator/templates/monitoring-rules.yaml) from
# config/monitoring/prometheusrule.yaml, its one source: the groups under spec:, with
# Prometheus's own {{ ... }} templates escaped for Helm and the runbook prefix taken from
# monitoring.runbookBaseURL. rules.sh fails when the file is not what this writes
# (--check: print the difference, write nothing).
set -eu
cd "$(dirname "$0")/../.."
. test/monitoring/lib.sh
SRC=config/monitoring/prometheusrule.yaml
DST=charts/redis-operator/templates/monitoring-rules.yaml
PREFIX='https://github.com/redis-operator/redis-operator/blob/main/runbooks/'

render() {
  cat <<'HEAD'
{{- if .Values.monitoring.prometheusRule.enabled }}
{{- $base := .Values.monitoring.runbookBaseURL }}
# Generated from config/monitoring/prometheusrule.yaml by test/monitoring/gen-chart.sh:
# edit that file, then run the script (test/monitoring/rules.sh checks they agree).
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: {{ include "redis-operator.fullname" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "redis-operator.labels" . | nindent 4 }}
    app.kubernetes.io/component: monitoring
    {{- with .Values.monitoring.prometheusRule.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
HEAD
  rules_groups "$SRC" | sed -E 's/(\{\{[^}]*\}\})/{{`\1`}}/g' | sed "s|$PREFIX|{{ \$base }}|" |
    sed 's/^/  /'
  echo '{{- end }}'
}

if [ "${1:-}" = --check ]; then
  diff -u "$DST" <(render)
else
  render >"$DST"
fi
