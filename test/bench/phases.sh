#!/usr/bin/env bash
# test/bench/phases.sh DIR NS NAME CONTROLLER_LOG: where a "primary pod deleted" run's
# time went (operator.sh, part delete). Reads, all in ms since the fault (DIR/fault, the
# wall time just before `kubectl delete pod`):
#   sigterm, paused, caught_up, lease_released   the old primary's manager, its one
#       "handed over" / "no hand-over" line (DIR/old-primary.log, instance/handover.c)
#   failover_recorded   the controller's first status write of the failover (done)
#   promoted            its POST /v1/promote answered (done)
#   endpoints           the <NAME>-leader EndpointSlice written after the promote (done)
#   first_ack           the writer's first write acknowledged by the new primary (its
#                       answer's wall time, DIR/writer.log)
#   gap                 chaos-writer verify (DIR/faults.tsv): the client's longest wait
#                       for an acknowledgement
# Prints one line `phase=ms ...` (-1: not seen) and writes it to DIR/phases.
set -uo pipefail
dir=$1 ns=$2 name=$3 clog=$4
fault_ms=$(awk '{printf "%.0f", $1 * 1000; exit}' "$dir/fault")

# the manager's line: JSON, numbers relative to its sigtermWallMs
mgr=$(grep -h '"component":"handover"' "$dir/old-primary.log" 2>/dev/null | tail -1)
num() { sed -n "s/.*\"$1\":\"\\([-0-9]*\\)\".*/\\1/p" <<<"$mgr"; }
rel() { local v; v=$(num "$1"); if [ -n "$v" ] && [ "$v" != - ] && [ -n "$sig" ]; then echo $((sig + v)); else echo -1; fi; }
sig=$(num sigtermWallMs); [ -n "$sig" ] && sig=$((sig - fault_ms))

# the controller's logfmt lines for this cluster after the fault: ts → ms since the fault
ctl=$(grep -h " ns=$ns name=$name " "$clog" 2>/dev/null | TZ=UTC awk -v f="$fault_ms" '
  { t = substr($1, 4); split(t, d, /[-T:.Z]/)
    ms = mktime(d[1] " " d[2] " " d[3] " " d[4] " " d[5] " " d[6]) * 1000 + d[7] - f
    if (ms >= 0) printf "%.0f %s\n", ms, $0 }')
first() { awk -v pat="$1" -v after="${2:--1}" '$0 ~ pat && $1 > after {print $1; exit}' <<<"$ctl"; }
rec=$(first 'msg=done .*action=status'); rec=${rec:--1}
prom=$(first 'msg=done .*what=promote'); prom=${prom:--1}
eps=$(first "msg=done .*what=EndpointSlice object=$name-leader" "$prom"); eps=${eps:--1}
# the first write acknowledged by another server than the one the writer started on
ack=$(grep -h '"result":"acked"' "$dir/writer.log" 2>/dev/null | awk -v f="$fault_ms" '
  { match($0, /"server":"[^"]*"/); srv = substr($0, RSTART, RLENGTH)
    match($0, /"w1":[0-9]+/); w1 = substr($0, RSTART + 5, RLENGTH - 5)
    if (!first) first = srv
    else if (srv != first) { printf "%.0f", w1 / 1000 - f; exit } }')
ack=${ack:--1}
gap=$(awk 'NR==1 {printf "%.0f", $4}' "$dir/faults.tsv" 2>/dev/null); gap=${gap:--1}

line="sigterm=${sig:--1} paused=$(rel pausedMs) caught_up=$(rel caughtUpMs) lease_released=$(rel leaseReleasedMs) failover_recorded=$rec promoted=$prom endpoints=$eps first_ack=$ack gap=$gap handover=$(grep -q '"msg":"handed over"' <<<"$mgr" && echo yes || echo no)"
echo "$line" | tee "$dir/phases"
