#!/usr/bin/env bash
# Restarts the running environment's kube-apiserver alone (SIGTERM, wait for it to exit,
# start it again with the same flags, wait until ready): every client's connections and
# watches drop, etcd keeps the state. For chaos scenarios; everyone using the
# environment sees the outage. Prints the outage in ms. Holds up.sh's lock meanwhile.
set -euo pipefail
. "$(dirname "$0")/common.sh"
pid_alive kube-apiserver || die "kube-apiserver is not running (make env-up)"
# The API server must inherit no descriptor of ours: a caller's lock (flock's fd) would
# stay held for as long as the server runs.
for fd in /proc/$$/fd/*; do
  fd=${fd##*/}
  [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
done
exec 9>"$ENV_DIR/.up.lock"
flock -w 300 9 || die "another env-up holds $ENV_DIR/.up.lock"
t0=$(date +%s%N)
pid=$(cat "$ENV_DIR/kube-apiserver.pid")
kill -TERM "$pid"
for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -KILL "$pid" 2>/dev/null || true
start_apiserver
echo "kube-apiserver restarted: $(( ($(date +%s%N) - t0) / 1000000 )) ms without an API server"
