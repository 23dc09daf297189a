#!/usr/bin/env bash
# `make env-down`: stops exactly what env-up started (by pid file), newest first, and
# removes its state (etcd tmpfs dir, pid files, the bridge if env-up created it), and
# the object storage (storage.sh down: its servers, their data and build/env/*.env).
# Certificates are kept so that a restarted environment keeps its CA. --quiet: no summary.
set -uo pipefail
. "$(dirname "$0")/common.sh"
stopped=0
bash "$here/storage.sh" down
for c in nodeagent kube-scheduler kube-controller-manager kube-apiserver etcd; do
  f="$ENV_DIR/$c.pid"
  [ -f "$f" ] || continue
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    stopped=$((stopped + 1))
  fi
  rm -f "$f"
done
rm -rf "$ENV_ETCD_DATA"
if [ -f "$ENV_DIR/bridge.created" ]; then
  ip link del "$ENV_BRIDGE" 2>/dev/null
  rm -f "$ENV_DIR/bridge.created"
fi
[ "${1:-}" = --quiet ] || log "down ($stopped processes stopped)"
exit 0
