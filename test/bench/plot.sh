#!/usr/bin/env bash
# test/bench/plot.sh RESULTS.json OUT_DIR: one small gnuplot PNG per benchmark from the
# merged results (test/bench/results.sh):
#   bench-failover-rto.png   failover RTO p50/p99: operator (kill, pod delete, partition),
#                            Sentinel, Redis Cluster
#   bench-switchover.png     write pause p50/p99: operator switchover (server side, client
#                            side) and the FAILOVER command (client side, server log)
#   bench-time-to-ready.png  creation → Ready for 1, 3, 5 instances
#   bench-memory.png         instance manager (VmRSS, private) and controller VmRSS by clusters
#                            (real pods: operator.sh; light node agent: footprint.sh)
# Missing figures are drawn as 0 and listed on stderr. Needs gnuplot (gnuplot-nox) and jq.
set -uo pipefail
r=${1:-build/bench/results.json}
out=${2:-docs}
[ -s "$r" ] || { echo "plot: no $r" >&2; exit 2; }
command -v gnuplot >/dev/null || { echo "plot: gnuplot missing (apt-get install gnuplot-nox)" >&2; exit 2; }
mkdir -p "$out"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# rows FILE JQ: a data file of "label" p50 p99 lines from a jq program printing them
rows() { jq -r "$2" "$r" >"$tmp/$1"; }
num() { echo "(if ($1 | type) == \"number\" then $1 else 0 end)"; }
pair() { echo "\"\\\"$1\\\" \\($(num "$2.p50")) \\($(num "$2.p99"))\""; }

# bars FILE PNG TITLE YLABEL: clustered p50/p99 bars
bars() {
  gnuplot <<G
set terminal pngcairo size 700,340 font ",9"
set output "$out/$2"
set title "$3"; set ylabel "$4"
set style data histograms; set style histogram clustered gap 1
set style fill solid 0.8 border -1; set boxwidth 0.9
set key top left; set grid ytics; set yrange [0:*]; set xtics noenhanced rotate by -15
plot "$tmp/$1" using 2:xtic(1) title "p50", "" using 3 title "p99"
G
}

rows rto "$(pair "operator kill" .failover_rto_ms), $(pair "operator delete" .failover_rto_pod_delete_ms),
  $(pair "operator partition" .failover_rto_partition_ms), $(pair "sentinel kill" .sentinel_rto_ms),
  $(pair "cluster kill" .cluster_rto_ms)"
bars rto bench-failover-rto.png "Failover RTO (fault -> acknowledged writes again)" ms
rows sw "\"\\\"switchover server\\\" \\($(num .switchover_pause_ms.server_p50)) \\($(num .switchover_pause_ms.server_p99))\",
  \"\\\"switchover client\\\" \\($(num .switchover_pause_ms.client_p50)) \\($(num .switchover_pause_ms.client_p99))\",
  $(pair "FAILOVER cmd client" .failover_cmd_pause_ms), $(pair "FAILOVER cmd server" .failover_cmd_server_pause_ms)"
bars sw bench-switchover.png "Planned switchover: write pause" ms

jq -r '.time_to_ready_s // {} | to_entries[] | "\(.key) \(if (.value | type) == "number" then .value else 0 end)"' "$r" |
  sort -n >"$tmp/ttr"
gnuplot <<G
set terminal pngcairo size 480,300 font ",9"
set output "$out/bench-time-to-ready.png"
set title "Time to Ready"; set ylabel "s"; set xlabel "instances"
set style fill solid 0.8 border -1; set boxwidth 0.6; set yrange [0:*]; set grid ytics; unset key
plot "$tmp/ttr" using 0:2:xtic(1) with boxes
G

jq -r '"\"instance VmRSS\" \(.instance_rss_mib.vmrss // 0)",
  "\"instance private\" \(.instance_rss_mib.private // 0)",
  (.controller_rss_real_mib // {} | to_entries[] | select(.value | type == "number") |
   "\"controller, \(.key) real\" \(.value)"),
  (.controller_rss_mib // {} | to_entries | sort_by(.key | tonumber)[] |
   select(.value | type == "number") | "\"controller, \(.key) light\" \(.value)")' "$r" >"$tmp/mem"
gnuplot <<G
set terminal pngcairo size 700,320 font ",9"
set output "$out/bench-memory.png"
set title "Memory (MiB)"; set ylabel "MiB"; set xtics noenhanced rotate by -15
set style fill solid 0.8 border -1; set boxwidth 0.6; set yrange [0:*]; set grid ytics; unset key
plot "$tmp/mem" using 0:2:xtic(1) with boxes
G
ls -l "$out"/bench-*.png | awk '{print "plot: " $NF " " $5 " bytes"}'
