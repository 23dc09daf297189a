#!/usr/bin/env bash
# test/bench/results.sh: merges the benchmark fragments $BENCH_OUT/*.json (peers.json from
# peers.sh; the operator's own figures from its benchmark script, later) into
# $BENCH_OUT/results.json, with a "machine" object describing where they were measured, and
# prints that machine, the versions and the number of runs behind each figure.
#
# Fragments are JSON objects; their top-level keys are merged (a later file, in name order,
# wins a key), footprint.json (footprint.sh) last: its controller_rss_mib (0, 100, 1,000
# clusters) replaces the one operator.json files written before it carried. results.json
# itself is never an input. BENCH_BASE (e.g. docs/benchmarks.json, the committed results)
# is merged first, under every fragment: a build dir that ran one benchmark only
# (bench-backup) regenerates the page with the other figures kept, not "n/a"; the base's
# "machine" (where most figures were measured) then stays, and a fragment says its own.
# Needs only bash and chaos-writer (CHAOS_WRITER, default build/chaos-writer), which does
# the JSON work.
set -uo pipefail
cd "$(dirname "$0")/../.."
BENCH_OUT=${BENCH_OUT:-build/bench}
CHAOS_WRITER=${CHAOS_WRITER:-build/chaos-writer}
[ -x "$CHAOS_WRITER" ] || { echo "results: $CHAOS_WRITER is missing" >&2; exit 2; }
mkdir -p "$BENCH_OUT"

# A JSON string of text without quotes, backslashes or control characters.
jstr() { printf '"%s"' "$(tr -d '"\\\000-\037' <<<"$1")"; }
version_of() { command -v "$1" >/dev/null && "$1" --version | sed -n 's/.*v=\([^ ]*\).*/\1/p'; }

nproc=$(nproc)
model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
kernel=$(uname -r)
redis=$(version_of redis-server)
valkey=$(version_of valkey-server)
machine=$(mktemp)
trap 'rm -f "$machine"' EXIT
cat >"$machine" <<EOF
{"machine": {"nproc": $nproc, "cpu_model": $(jstr "$model"), "kernel": $(jstr "$kernel"),
 "redis_server": $(jstr "$redis"), "valkey_server": $(jstr "$valkey"),
 "measured_at": $(jstr "$(date -u +%Y-%m-%dT%H:%M:%SZ)")}}
EOF

inputs=()
[ -n "${BENCH_BASE:-}" ] && [ -s "$BENCH_BASE" ] && inputs+=("$BENCH_BASE")
for f in "$BENCH_OUT"/*.json; do
  case $(basename "$f") in results.json | footprint.json) continue ;; esac
  [ -e "$f" ] && inputs+=("$f")
done
[ -e "$BENCH_OUT/footprint.json" ] && inputs+=("$BENCH_OUT/footprint.json")
if [ -n "${BENCH_BASE:-}" ] && [ -s "$BENCH_BASE" ]; then
  "$CHAOS_WRITER" merge "$BENCH_OUT/results.json" "$machine" "${inputs[@]}" || exit 2
else
  "$CHAOS_WRITER" merge "$BENCH_OUT/results.json" "${inputs[@]}" "$machine" || exit 2
fi

echo "machine: $nproc CPUs, $model; kernel $kernel"
echo "versions: redis-server ${redis:-absent}, valkey-server ${valkey:-absent}"
echo "fragments: ${inputs[*]:-none}"
# Each figure that is a stats object ({"runs": N, ...}) with its number of runs.
awk '/^  "[^"]+": \{/ { key = $1; gsub(/[":]/, "", key) }
     /^    "runs": / { n = $2; gsub(/,/, "", n); printf "  %-34s runs=%s\n", key, n }' \
  "$BENCH_OUT/results.json"
echo "wrote $BENCH_OUT/results.json"
