# Sourced by test/integration/instance.sh: helpers to run instance managers as plain
# processes against the local control plane. Every process is tracked by PID in $W.
K="$ENV_BIN/kubectl --kubeconfig $KUBECONFIG_ADMIN"
kctl() { $K -n "$NS" "$@"; }
OPPW=operator-pw-1
DEFPW=default-pw-1

# poll (test/lib.sh) retries quietly, every 0.1 s
POLL_QUIET=1 POLL_INTERVAL=0.1
# eq WANT CMD…: CMD's output is WANT (for poll, which re-runs it)
eq() { local want=$1; shift; [ "$("$@" 2>/dev/null)" = "$want" ]; }
ne() { local no=$1; shift; local v; v=$("$@" 2>/dev/null); [ -n "$v" ] && [ "$v" != "$no" ] && [ "$v" != null ]; }
# retry a kubectl call a few times: the shared API server may be restarting
kretry() { local i; for i in 1 2 3 4 5 6 7 8 9 10; do kctl "$@" >/dev/null 2>&1 && return 0; sleep 1; done; kctl "$@"; }

mkcluster() { # NAME ENGINE INSTANCES [STORAGE]
  kretry apply -f - <<Y
apiVersion: redis.io/v1
kind: RedisCluster
metadata: {name: $1}
spec:
  instances: $3
  engine: $2
  storage: {type: ${4:-pvc}}
  failover: {leaseDuration: 4s, renewDeadline: 2s, renewPeriod: 500ms, switchoverTimeout: 5s}
Y
}
set_primary() { kretry patch rediscluster "$1" --subresource=status --type=merge -p "{\"status\":{\"currentPrimary\":\"$2\"}}"; }

# ports of pod NAME: server, http, metrics (from the per-run table)
port() { sed -n "s/^$1 //p" "$W/ports" | cut -d' ' -f"$2"; }
alloc_ports() { # NAME
  local n; n=$(wc -l <"$W/ports")
  echo "$1 $((BASE + n * 4)) $((BASE + n * 4 + 1)) $((BASE + n * 4 + 2))" >>"$W/ports"
}
mkpod() { # NAME CLUSTER [IP]
  alloc_ports "$1"
  kretry apply -f - <<Y
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {redis.io/cluster: $2}}
spec:
  automountServiceAccountToken: false
  schedulingGates: [{name: redis.io/integration-test}]
  containers:
  - name: redis
    image: none
    ports: [{name: redis, containerPort: $(port "$1" 1)}, {name: http, containerPort: $(port "$1" 2)}]
Y
  [ "${3-127.0.0.1}" = none ] && return 0
  kretry patch pod "$1" --subresource=status --type=merge \
    -p "{\"status\":{\"podIP\":\"${3-127.0.0.1}\",\"podIPs\":[{\"ip\":\"${3-127.0.0.1}\"}]}}"
}
secrets() { # NAME
  local d=$W/$1
  mkdir -p "$d/data" "$d/run" "$d/auth" "$d/opauth" "$d/users"
  [ -f "$d/auth/password" ] || printf '%s' "$DEFPW" >"$d/auth/password"
  [ -f "$d/opauth/password" ] || printf '%s' "$OPPW" >"$d/opauth/password"
}
mgr_cmd() { # NAME CLUSTER
  echo "$BIN instance --pod-name $1 --pod-namespace $NS --cluster-name $2 --pod-ip 127.0.0.1 \
    --kubeconfig ${KCFG:-$KUBECONFIG_ADMIN} --data-dir $W/$1/data --run-dir $W/$1/run \
    --auth-dir $W/$1/auth --operator-auth-dir $W/$1/opauth --users-dir $W/$1/users \
    --tls-dir $W/$1/tls --http-tls-dir $W/$1/http-tls \
    --server-port $(port "$1" 1) --http-port $(port "$1" 2) --metrics-port $(port "$1" 3) \
    --http-address 127.0.0.1 --bind 127.0.0.1 --log-format logfmt --poll-interval 200ms \
    --secret-poll-interval 500ms --shutdown-timeout 10s"
}
start_mgr() { # NAME CLUSTER [WRAPPER…]: the manager's exit code lands in $W/NAME/exit
  local n=$1 c=$2; shift 2
  secrets "$n"
  rm -f "$W/$n/pid" "$W/$n/exit"
  # shellcheck disable=SC2046
  ( "$@" $(mgr_cmd "$n" "$c") >>"$W/$n/log" 2>&1 & echo $! >"$W/$n/pid"; wait $!
    echo $? >"$W/$n/exit" ) >/dev/null 2>&1 &
  poll 5 test -s "$W/$n/pid"
}
mgr_pid() { cat "$W/$1/pid"; }
stop_mgr() { # NAME: SIGTERM, wait (bounded); prints the exit code
  kill -TERM "$(mgr_pid "$1")" 2>/dev/null
  poll 30 test -s "$W/$1/exit" && cat "$W/$1/exit"
}
kill_all() {
  local f
  for f in "$W"/*/pid; do
    [ -f "$f" ] || continue
    kill -KILL "$(cat "$f")" 2>/dev/null
  done
  wait 2>/dev/null
}

st() { curl -s --max-time 3 "http://127.0.0.1:$(port "$1" 2)/v1/status${2:-}"; }
jst() { st "$1" | jq -r "$2"; }
is() { [ "$(jst "$1" "$2")" = "$3" ]; }
post() { # NAME OP [BODY]: prints "STATUS BODY"
  curl -s --max-time 30 -o "$W/post.out" -w '%{http_code}' -X POST \
    "http://127.0.0.1:$(port "$1" 2)/v1/$2" -d "${3:-}"; echo " $(cat "$W/post.out")"
}
post_ok() { post "$@" | grep -q '^200 '; }
rcli() { # NAME ARGS…: as the operator user
  local n=$1; shift
  redis-cli -p "$(port "$n" 1)" --user redis-operator --pass "$OPPW" --no-auth-warning "$@"
}
ucli() { # NAME USER PASS ARGS…
  local n=$1 u=$2 p=$3; shift 3
  redis-cli -p "$(port "$n" 1)" --user "$u" --pass "$p" --no-auth-warning "$@"
}
server_pid() { jst "$1" .server.pid; }
ready() { is "$1" .ready true; }
