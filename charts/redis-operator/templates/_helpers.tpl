{{/*
Names and labels. The defaults give config/default's names: <fullname> is
"redis-operator". app.kubernetes.io/name stays "redis-operator" whatever the release is
called: the NetworkPolicies the operator writes for each RedisCluster admit the operator's
pods by that label (controller/desired_objects.c).
*/}}
{{- define "redis-operator.fullname" -}}
{{- default "redis-operator" .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{- define "redis-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "redis-operator.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end }}

{{- define "redis-operator.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag | toString) -}}
{{- end }}

{{/* The labels of config/default, then Helm's own (test/helm/helm.sh drops those). */}}
{{- define "redis-operator.labels" -}}
app.kubernetes.io/name: redis-operator
app.kubernetes.io/part-of: redis-operator
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ default .Chart.AppVersion .Values.image.tag | toString | trunc 63 | quote }}
{{- end }}

{{- define "redis-operator.controllerLabels" -}}
{{ include "redis-operator.labels" . }}
app.kubernetes.io/component: controller
{{- end }}

{{/* The Deployment's selector, as in config/default (immutable once installed). */}}
{{- define "redis-operator.selectorLabels" -}}
app.kubernetes.io/name: redis-operator
app.kubernetes.io/component: controller
{{- end }}

{{/*
The ConfigMap's data: one REDIS_OPERATOR_* key per value that is set (neither null nor
""), as strings; a value left unset keeps the binary's default. Tunables are named after
their setting: tunables.kubeApiQps is --kube-api-qps, REDIS_OPERATOR_KUBE_API_QPS.
Numbers are printed as integers (Helm reads values.yaml numbers as floats).
*/}}
{{- define "redis-operator.settings" -}}
{{- $v := .Values -}}
{{- $le := $v.leaderElection -}}
{{- $pairs := list
  (list "LOG_LEVEL" $v.logLevel) (list "LOG_FORMAT" $v.logFormat) (list "LOG_DEBUG" $v.logDebug)
  (list "LEASE_DURATION" $le.leaseDuration) (list "RENEW_DEADLINE" $le.renewDeadline)
  (list "RETRY_PERIOD" $le.retryPeriod)
  (list "WATCH_NAMESPACE" $v.watchNamespace) (list "CLUSTER_SELECTOR" $v.clusterSelector) -}}
{{- if not $le.enabled -}}
{{- $pairs = append $pairs (list "LEADER_ELECT" "false") -}}
{{- end -}}
{{- range $k, $t := $v.tunables -}}
{{- $pairs = append $pairs (list ($k | snakecase | upper) $t) -}}
{{- end -}}
{{- $out := dict -}}
{{- range $p := $pairs -}}
{{- $val := index $p 1 -}}
{{- if and (not (kindIs "invalid" $val)) (ne (toString $val) "") -}}
{{- if or (kindIs "float64" $val) (kindIs "int64" $val) (kindIs "int" $val) -}}
{{- $val = int64 $val -}}
{{- end -}}
{{- $_ := set $out (printf "REDIS_OPERATOR_%s" (index $p 0)) (toString $val) -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end }}
