# test/monitoring/lib.sh: what the monitoring checks share. Source it.
#
#   metric_names     every series name the code exports, one a line, sorted: the string
#                    literals "redis_..." of the metric tables (controller/metrics.c,
#                    controller/metrics_cluster.c, instance/metrics.c), each histogram's
#                    _bucket, _sum and _count too (a family whose TYPE is histogram: the
#                    names passed to histogram() or #defined as *_NAME)
#   external_names   the series other exporters give that rules and runbooks may use
#                    (external-metrics.txt: name, then who exports it)
#   known_names      both
#   promql_names     the metric names in PromQL read on stdin: identifiers that start
#                    with a known exporter prefix (redis_, kubelet_, kube_), label names
#                    and label values excluded
#   rules_groups F   the rule groups under spec: of a PrometheusRule file F (promtool reads
#                    plain rule files)
MON_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MON_ROOT=$(cd "$MON_DIR/../.." && pwd)
MON_SOURCES="controller/metrics.c controller/metrics_cluster.c instance/metrics.c"

metric_names() {
  local f
  {
    for f in $MON_SOURCES; do
      grep -o '"redis_[a-z0-9_]*"' "$MON_ROOT/$f" | tr -d '"'
      # histograms: histogram(o, "name", ...) and HIST_NAME "name"
      grep -oE '(histogram\([a-z]+, |_NAME )"redis_[a-z0-9_]*"' "$MON_ROOT/$f" |
        grep -o 'redis_[a-z0-9_]*' | sed 's/$/_bucket/; p; s/_bucket$/_sum/; p; s/_sum$/_count/'
    done
  } | sort -u
}

external_names() { grep -v '^#' "$MON_DIR/external-metrics.txt" | awk 'NF {print $1}' | sort -u; }

known_names() { { metric_names; external_names; } | sort -u; }

promql_names() {
  # drop quoted strings (label values, label_replace arguments) and {...} matchers' names
  sed -E 's/"([^"\\]|\\.)*"//g' |
    grep -oE '\b(redis|kubelet|kube)_[a-z0-9_]+\b' | sort -u
}

rules_groups() { sed -n '/^spec:$/,$p' "$1" | tail -n +2 | sed 's/^  //'; }

# unknown_names: the names on stdin that are not known (empty output: all known).
unknown_names() { comm -23 <(sort -u) <(known_names); }
