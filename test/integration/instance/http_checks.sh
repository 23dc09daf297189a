# Sourced by test/integration/instance.sh: checks of the manager's HTTP endpoints (TLS
# material incomplete, connection limits, ?fresh=1 off the serving thread) and of the
# server's file modes. Helpers of lib.sh and checks.sh (make_pki) are used as they are.

# plain HTTP: NAME METHOD PATH [BODY] [PORT-FIELD: 2 api, 3 metrics]; prints the status
# ("000": nothing answered), the body lands in $W/h.out
hcode() {
  curl -s -o "$W/h.out" -w '%{http_code}' --max-time 3 -X "$2" ${4:+-d "$4"} \
    "http://127.0.0.1:$(port "$1" "${5:-2}")$3"
}
# HTTPS with the CA of $W/pki-h: NAME METHOD PATH [CERT]; body in $W/tls.out
tls_code() {
  local pki=$W/pki-h
  curl -s -o "$W/tls.out" -w '%{http_code}' --max-time 5 --cacert "$pki/ca.crt" \
    ${4:+--cert "$pki/$4.crt" --key "$pki/$4.key"} -X "$2" "https://127.0.0.1:$(port "$1" 2)$3"
}
tls_field() { tls_code "$1" GET /v1/status >/dev/null && jq -r "$2" "$W/tls.out"; }
one_pod() { # CLUSTER [ENGINE]: a one-instance cluster and its pod CLUSTER-1 (not started)
  mkcluster "$1" "${2:-redis}" 1 >/dev/null; set_primary "$1" "$1-1" >/dev/null
  mkpod "$1-1" "$1" >/dev/null
}

# --http-tls required, ca.crt missing: probes and status over plain HTTP carrying the
# reason (/healthz still 200), every mutation 503 with it, no HTTPS, logged once; then
# ca.crt arrives: the same process serves HTTPS (client certificates) and no plain HTTP.
http_tls_incomplete() { # CLUSTER
  local c=$1 n=$1-1 d want op pid spid
  [ -f "$W/pki-h/client.crt" ] || make_pki "$W/pki-h" || return 1
  one_pod "$c"
  d=$W/$n/http-tls; mkdir -p "$d" && cp "$W/pki-h/tls.crt" "$W/pki-h/tls.key" "$d/" || return 1
  want="TLS material incomplete: ca.crt missing in $d; mutations refused"
  start_mgr "$n" "$c" env REDIS_OPERATOR_HTTP_TLS=required
  poll 20 ready "$n" || { st "$n"; return 1; }
  for p in 2 3; do
    [ "$(hcode "$n" GET /healthz "" $p)" = 200 ] || return 1
    [ "$(jq -r .status "$W/h.out")" = degraded ] && [ "$(jq -r .error "$W/h.out")" = "$want" ] ||
      { cat "$W/h.out"; return 1; }
  done
  is "$n" .httpTls refused && is "$n" .httpTlsError "$want" || { st "$n"; return 1; }
  for op in fence unfence promote restart config; do
    [ "$(hcode "$n" POST "/v1/$op" '{}')" = 503 ] || { echo "$op: $(cat "$W/h.out")"; return 1; }
    [ "$(cat "$W/h.out")" = "$(jq -cn --arg e "$want" '{error: $e}')" ] || { cat "$W/h.out"; return 1; }
  done
  is "$n" .fenced false || return 1
  [ "$(tls_code "$n" GET /healthz)" = 000 ] || { echo "HTTPS answered without ca.crt"; return 1; }
  pid=$(mgr_pid "$n"); spid=$(server_pid "$n")
  cp "$W/pki-h/ca.crt" "$d/ca.crt.new" && mv "$d/ca.crt.new" "$d/ca.crt" || return 1
  poll 10 eq 200 tls_code "$n" GET /readyz || { cat "$W/tls.out"; tail -3 "$W/$n/log"; return 1; }
  [ "$(tls_field "$n" .httpTls)" = https ] && [ "$(tls_field "$n" .httpTlsError)" = null ] || return 1
  [ "$(tls_code "$n" POST /v1/unfence)" = 401 ] || { cat "$W/tls.out"; return 1; }
  [ "$(tls_code "$n" POST /v1/unfence client)" = 200 ] || { cat "$W/tls.out"; return 1; }
  [ "$(hcode "$n" GET /healthz)" = 000 ] || { echo "plain HTTP still answered"; return 1; }
  [ "$(mgr_pid "$n")" = "$pid" ] && kill -0 "$pid" && [ ! -s "$W/$n/exit" ] || { echo "restarted"; return 1; }
  [ "$(tls_field "$n" .server.pid)" = "$spid" ] || { echo "server restarted"; return 1; }
  [ "$(grep -c 'msg="mutations refused"' "$W/$n/log")" = 1 ] || { grep 'refused' "$W/$n/log"; return 1; }
  grep -q 'TLS material complete: serving HTTPS' "$W/$n/log" || return 1
  [ "$(stop_mgr "$n")" = 0 ]
}

# --http-tls auto (the default) with tls.crt alone: not the plain HTTP of a directory
# without TLS, but read-only with the reason. Then a key that does not match the
# certificate: still read-only ("unusable"); the right key: HTTPS.
http_tls_auto_partial() { # CLUSTER
  local c=$1 n=$1-1 d want
  [ -f "$W/pki-h/client.crt" ] || make_pki "$W/pki-h" || return 1
  one_pod "$c"
  d=$W/$n/http-tls; mkdir -p "$d" && cp "$W/pki-h/tls.crt" "$d/" || return 1
  want="TLS material incomplete: tls.key, ca.crt missing in $d; mutations refused"
  start_mgr "$n" "$c"
  poll 20 eq 200 hcode "$n" GET /healthz || return 1
  [ "$(jq -r .error "$W/h.out")" = "$want" ] || { cat "$W/h.out"; return 1; }
  [ "$(hcode "$n" POST /v1/fence '{"reason":"x"}')" = 503 ] || { cat "$W/h.out"; return 1; }
  [ "$(jq -r .error "$W/h.out")" = "$want" ] && is "$n" .fenced false || return 1
  cp "$W/pki-h/evil.key" "$d/tls.key" && cp "$W/pki-h/ca.crt" "$d/ca.crt" || return 1
  want="TLS material unusable: libmicrohttpd refused tls.crt, tls.key or ca.crt in $d; mutations refused"
  poll 10 is "$n" .httpTlsError "$want" || { st "$n"; return 1; }
  [ "$(hcode "$n" POST /v1/fence '{"reason":"x"}')" = 503 ] || { cat "$W/h.out"; return 1; }
  cp "$W/pki-h/tls.key" "$d/tls.key.new" && mv "$d/tls.key.new" "$d/tls.key" || return 1
  poll 10 eq https tls_field "$n" .httpTls || { tail -3 "$W/$n/log"; return 1; }
  [ "$(stop_mgr "$n")" = 0 ]
}

# 70 idle sockets from 127.0.0.1 on each port: 127.0.0.2 still gets /healthz within 1 s
# (per-address limit), the sockets past that limit are closed at once, the others after
# the idle timeout (seconds, not the 30 s of before).
http_limits() { # NAME
  python3 - "$(port "$1" 2)" "$(port "$1" 3)" <<'PY' >&3
import select, socket, sys, time
held = {}
t0 = time.monotonic()
for p in map(int, sys.argv[1:]):
    held[p] = []
    for _ in range(70):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.connect(("127.0.0.1", p))
        held[p].append(s)
for p in held:
    t = time.monotonic()
    s = socket.create_connection(("127.0.0.1", p), timeout=1, source_address=("127.0.0.2", 0))
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    try:
        while chunk := s.recv(4096):
            data += chunk
    except OSError as e:
        sys.exit("port %d: /healthz from 127.0.0.2: %s after %r" % (p, e, data[:80]))
    ms = (time.monotonic() - t) * 1000
    if not data.startswith(b"HTTP/1.1 200") or ms >= 1000:
        sys.exit("port %d: /healthz from 127.0.0.2: %.0f ms, %r" % (p, ms, data[:80]))
    print("info instance: port %d: /healthz from 127.0.0.2 in %.1f ms beside 70 idle sockets from 127.0.0.1" % (p, ms))
def closed(s):
    try:
        return s.recv(1, socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
def wait_open(socks, until, most):
    left = [s for s in socks if not closed(s)]
    while len(left) > most and time.monotonic() < until:
        select.select(left, [], [], 0.1)
        left = [s for s in left if not closed(s)]
    return left
left = {p: wait_open(socks, time.monotonic() + 1, 8) for p, socks in held.items()}
for p, socks in left.items():
    if len(socks) > 8:
        sys.exit("port %d: %d of 70 idle sockets from one address still open" % (p, len(socks)))
for p, socks in left.items():
    rest = wait_open(socks, t0 + 10, 0)
    took = time.monotonic() - t0
    if rest:
        sys.exit("port %d: %d idle sockets still open after %.1f s" % (p, len(rest), took))
    print("info instance: port %d: %d of 70 idle sockets closed at once, the other %d by %.1f s" % (p, 70 - len(socks), len(socks), took))
PY
}

# The server's INFO stalls (SIGSTOP): a ?fresh=1 waits for a poll (FRESH_WAIT_MS, 1 s)
# while /v1/status and /healthz on other connections keep answering at once.
fresh_nonblocking() { # NAME
  local n=$1 spid rc
  spid=$(server_pid "$n")
  kill -STOP "$spid" || return 1
  python3 - "$(port "$n" 2)" <<'PY' >&3
import socket, sys, time
port = int(sys.argv[1])
def send(path):
    s = socket.create_connection(("127.0.0.1", port), timeout=3)
    s.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    return s
def read(s):
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    return data
t0 = time.monotonic()
fresh = send(b"/v1/status?fresh=1")
worst, n = 0.0, 0
while time.monotonic() - t0 < 0.6:
    t = time.monotonic()
    if not read(send(b"/v1/status" if n % 2 else b"/healthz")).startswith(b"HTTP/1.1 200"):
        sys.exit("a plain request failed")
    worst, n = max(worst, time.monotonic() - t), n + 1
    time.sleep(0.02)
body = read(fresh)
took = time.monotonic() - t0
if not body.startswith(b"HTTP/1.1 200") or took < 0.7 or worst > 0.3:
    sys.exit("fresh=1 took %.0f ms; %d plain requests meanwhile, slowest %.0f ms" % (took * 1000, n, worst * 1000))
print("info instance: fresh=1 waiting %.0f ms; %d /v1/status and /healthz meanwhile, slowest %.1f ms" % (took * 1000, n, worst * 1000))
PY
  rc=$?
  kill -CONT "$spid"
  return $rc
}

# After CONFIG REWRITE (a /v1/config POST) and SAVE, the files the server wrote are
# private: redis.conf, dump.rdb and the AOF files 0600, appendonlydir 0700.
files_private() { # ENGINE CLUSTER
  local e=$1 c=$2 n=$2-1 d f m out
  one_pod "$c" "$e"
  start_mgr "$n" "$c"
  poll 20 ready "$n" || { st "$n"; return 1; }
  out=$(post "$n" config '{"redis":{"maxclients":"1234"}}')
  echo "$out" | grep -q '^200 ' || { echo "$out"; return 1; }
  d=$W/$n/data
  grep -q '^maxclients 1234' "$d/redis.conf" || { echo "not rewritten"; return 1; }
  rcli "$n" SAVE | grep -q OK || return 1
  ls "$d"/appendonlydir/* >/dev/null 2>&1 || { echo "no AOF files"; return 1; }
  for f in "$d/redis.conf" "$d/dump.rdb" "$d"/appendonlydir/*; do
    m=$(stat -c %a "$f"); [ "$m" = 600 ] || { echo "${f#"$d"/}: $m"; return 1; }
  done
  m=$(stat -c %a "$d/appendonlydir"); [ "$m" = 700 ] || { echo "appendonlydir: $m"; return 1; }
  [ "$(stop_mgr "$n")" = 0 ]
}

http_suite() { # CLUSTER
  local c=$1
  check "HTTP API, TLS required and ca.crt missing: read-only plain HTTP, mutations 503 with the reason; HTTPS once it arrives, same process" \
    http_tls_incomplete "${c}t"
  check "HTTP API, TLS auto and tls.crt alone: mutations refused, not plain HTTP; a mismatched key keeps them refused, the right one turns HTTPS on" \
    http_tls_auto_partial "${c}a"
  one_pod "$c"; start_mgr "$c-1" "$c"; poll 20 ready "$c-1"
  check "HTTP API and metrics: idle sockets from one address neither starve /healthz from another nor stay" \
    http_limits "$c-1" 3>&1
  check "HTTP API: a ?fresh=1 waiting for a poll delays neither /v1/status nor /healthz" \
    fresh_nonblocking "$c-1" 3>&1
  stop_mgr "$c-1" >/dev/null
}

http_only() { # INSTANCE_ONLY=http
  local eng
  for eng in ${INSTANCE_ENGINES:-redis valkey}; do
    command -v "$eng-server" >/dev/null || continue
    check "$eng: redis.conf, RDB and AOF stay 0600 after CONFIG REWRITE and SAVE" files_private "$eng" "p$RANDOM"
  done
  http_suite "h$RANDOM"
}
