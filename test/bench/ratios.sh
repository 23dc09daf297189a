#!/usr/bin/env bash
# test/bench/ratios.sh OUT_DIR: adds "ratios" to OUT_DIR/results.json: the operator's
# failover RTO (p50, p99, SIGKILL of the primary's server) divided by Sentinel's and Redis
# Cluster's (peers.json, same client, same definitions), and the switchover client-visible
# pause p99 divided by the FAILOVER command's. Below 1: the operator is faster. A missing
# figure gives null. Needs jq (the e2e harness uses it too).
set -uo pipefail
out=${1:-build/bench}
r=$out/results.json
[ -s "$r" ] || { echo "ratios: no $r" >&2; exit 2; }
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
jq '
  def ratio(a; b): if (a | type) == "number" and (b | type) == "number" and a >= 0 and b > 0
                   then (a / b * 1000 | round / 1000) else null end;
  . + {ratios: {
    rto_p50_vs_sentinel: ratio(.failover_rto_ms.p50; .sentinel_rto_ms.p50),
    rto_p99_vs_sentinel: ratio(.failover_rto_ms.p99; .sentinel_rto_ms.p99),
    rto_p50_vs_cluster: ratio(.failover_rto_ms.p50; .cluster_rto_ms.p50),
    rto_p99_vs_cluster: ratio(.failover_rto_ms.p99; .cluster_rto_ms.p99),
    switchover_client_p99_vs_failover_cmd: ratio(.switchover_pause_ms.client_p99; .failover_cmd_pause_ms.p99)}}' \
  "$r" >"$tmp" && cp "$tmp" "$r" || exit 2
echo "ratios (operator / peer): $(jq -c .ratios "$r")"
