#!/usr/bin/env bash
# Regenerates the INFO golden files in this directory from real servers:
#   bash test/data/valkey/capture.sh            # both engines
# For each engine (redis-server 7.0, valkey-server 8.0) it builds the states the
# failover code reads and saves the server's exact INFO bytes (CRLF kept) as
# <engine>-<state>.txt. The expected parsed values (<engine>-<state>.expect) are
# derived from the same text with awk, independently of lib/valkey/info.c, and were
# reviewed by hand. Servers run in a temporary directory and are always killed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vk-capture.XXXXXX")
pids=()
stop_all() {
  local p
  for p in "${pids[@]}"; do { kill -9 "$p"; wait "$p"; } 2>/dev/null || true; done
  pids=()
}
cleanup() { stop_all; rm -rf "$tmp"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

# start NAME PORT [extra args...]: a server on 127.0.0.1:PORT and $tmp/NAME/s.sock.
start() {
  local name=$1 port=$2; shift 2
  mkdir -p "$tmp/$name"; rm -f "$tmp/$name/s.sock"
  "$server" --port "$port" --bind 127.0.0.1 --unixsocket "$tmp/$name/s.sock" --save "" \
    --appendonly no --daemonize no --dir "$tmp/$name" --enable-debug-command local "$@" \
    >"$tmp/$name/log" 2>&1 &
  pids+=($!)
  eval "pid_$name=$!"
  for _ in $(seq 200); do cli "$name" ping 2>&1 | grep -qE 'PONG|LOADING' && return 0; sleep 0.02; done
  echo "capture: $name did not start" >&2; cat "$tmp/$name/log" >&2; return 1
}
cli() { local name=$1; shift; "$client" -s "$tmp/$name/s.sock" "$@"; }
# until NAME SECTION REGEX: polls INFO (bounded) until a line matches.
until_info() {
  for _ in $(seq 500); do
    cli "$1" info "$2" | tr -d '\r' | grep -Eq "$3" && return 0
    sleep 0.02
  done
  echo "capture: $1 never matched $3" >&2; return 1
}
# save NAME STATE: the exact bytes of the INFO bulk reply (redis-cli would rewrite them).
save() {
  python3 - "$tmp/$1/s.sock" >"$here/$engine-$2.txt" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(b"INFO\r\n")
data = b""
while b"\r\n" not in data or len(data) < data.index(b"\r\n") + 2 + int(data[1:data.index(b"\r\n")]) + 2:
    data += s.recv(65536)
hdr = data.index(b"\r\n")
assert data[:1] == b"$", data[:80]
sys.stdout.buffer.write(data[hdr + 2:hdr + 2 + int(data[1:hdr])])
PY
  expect "$here/$engine-$2.txt"
}

# The oracle for the golden tests: field, then value, for what vk_info parses.
expect() {
  tr -d '\r' <"$1" | awk -F: '
    BEGIN {
      n = split("redis_version valkey_version server_name run_id process_id uptime_in_seconds " \
        "tcp_port connected_clients blocked_clients used_memory used_memory_rss maxmemory " \
        "maxmemory_policy loading rdb_bgsave_in_progress aof_enabled aof_rewrite_in_progress " \
        "rdb_last_bgsave_status rdb_changes_since_last_save total_commands_processed " \
        "total_connections_received keyspace_hits keyspace_misses evicted_keys expired_keys " \
        "instantaneous_ops_per_sec role connected_slaves master_replid master_replid2 " \
        "master_repl_offset second_repl_offset repl_backlog_active master_host master_port " \
        "master_link_status master_last_io_seconds_ago master_sync_in_progress " \
        "slave_repl_offset slave_read_only replica_read_only", f, " ")
      for (i = 1; i <= n; i++) want[f[i]] = 1
    }
    /^#/ || NF < 2 { next }
    {
      k = $1; v = substr($0, length(k) + 2)
      if (k in want) { print k, v; next }
      if (k ~ /^(slave|db)[0-9]+$/) {
        m = split(v, kv, ",")
        for (i = 1; i <= m; i++) { split(kv[i], p, "="); print k "." p[1], p[2] }
      }
    }' >"${1%.txt}.expect"
}

capture_engine() {
  engine=$1 server=$2-server client=$2-cli
  rm -rf "${tmp:?}"/*
  local p1 p2 p3
  p1=$(free_port); p2=$(free_port); p3=$(free_port)

  # Standalone primary with keys in two databases, some with a TTL, a few hits/misses.
  start a "$p1" --repl-diskless-sync-delay 0
  cli a debug populate 100 >/dev/null
  cli a -n 3 set k1 v >/dev/null
  cli a -n 3 set k2 v ex 1000 >/dev/null
  cli a get key:1 >/dev/null
  cli a get nosuchkey >/dev/null
  cli a config set maxmemory 104857600 >/dev/null
  cli a config set maxmemory-policy allkeys-lru >/dev/null
  save a primary-standalone

  # One replica in the middle of its full sync: the primary writes the RDB slowly
  # (rdb-key-save-delay, a hidden debug config, in microseconds per key).
  cli a config set rdb-key-save-delay 20000 >/dev/null
  start b "$p2"
  cli b replicaof 127.0.0.1 "$p1" >/dev/null
  until_info b replication '^master_sync_in_progress:1'
  save b replica-syncing
  save a primary-syncing
  cli a config set rdb-key-save-delay 0 >/dev/null
  until_info b replication '^master_link_status:up'

  # Two replicas online, after some writes.
  start c "$p3"
  cli c replicaof 127.0.0.1 "$p1" >/dev/null
  until_info a replication '^slave1:.*state=online'
  for i in $(seq 20); do cli a set "w$i" "$i" >/dev/null; done
  # Replicas report their offset once a second (REPLCONF ACK).
  until_info a replication '^slave0:.*offset=[1-9]'
  until_info a replication '^slave1:.*offset=[1-9]'
  save a primary-2replicas
  save b replica-linked

  # Promote c: new replication id, the old one kept as master_replid2.
  cli c replicaof no one >/dev/null
  until_info c replication '^role:master'
  save c primary-promoted

  # Primary gone: the replica's link goes down.
  { kill -9 "$pid_a"; wait "$pid_a"; } 2>/dev/null || true
  until_info b replication '^master_link_status:down'
  save b replica-link-down

  # Loading: an RDB with many keys, a per-key load delay (a hidden debug config) and
  # events served every KiB so INFO answers while loading.
  cli c debug populate 20000 >/dev/null
  cli c save >/dev/null
  cli c shutdown nosave >/dev/null 2>&1 || true
  mkdir -p "$tmp/d"; mv "$tmp/c/dump.rdb" "$tmp/d/dump.rdb"
  start d "$(free_port)" --key-load-delay 100 --loading-process-events-interval-bytes 1024
  until_info d persistence '^loading:1'
  save d loading
}

capture_engine redis redis
stop_all
capture_engine valkey valkey
echo "capture: wrote $(ls "$here"/*.txt | wc -l) INFO files"
