# Sourced by test/integration/controller.sh: the operations of checks.sh run again on
# clusters that serve TLS only (spec.tlsSecret and spec.caSecret: `tls-port`, `port 0`,
# `tls-replication yes`), so that every path that dials a server goes through TLS: the
# clients (the WAIT-1 writer, redis-cli), the replicas' links, and the instance managers'
# own connections to their peers (the switchover's catch-up, the hand-over's ROLE, the
# replica's lag poll: lib/valkey over hiredict_ssl).
#
# tls_on makes a CA for the check; from then on mkcluster (lib.sh) gives each cluster a
# certificate signed by it (for the cluster's Service names, serverAuth and clientAuth:
# the servers and the managers offer it as their client certificate too), rcli, opcli
# and auth_ok pass CLI_TLS to redis-cli, and the writer dials TLS (WRITER_TLS_*). Each
# check runs in its own subshell, so none of this leaks into the next one.

# tls_on: a CA in $W/tls-<n> for this check; TLS for the clusters and clients after it
tls_on() {
  TLS_DIR=$(mktemp -d "$W/tls.XXXXXX")
  mkca "$TLS_DIR" ca || fail "openssl: CA"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=e2e client" \
    -keyout "$TLS_DIR/client.key" -out "$TLS_DIR/client.csr" 2>/dev/null &&
    openssl x509 -req -in "$TLS_DIR/client.csr" -CA "$TLS_DIR/ca.crt" -CAkey "$TLS_DIR/ca.key" \
      -CAcreateserial -days 2 -extfile <(printf 'extendedKeyUsage=clientAuth\n') \
      -out "$TLS_DIR/client.crt" 2>/dev/null || fail "openssl: client certificate"
  CLI_TLS="--tls --cacert $TLS_DIR/ca.crt --cert $TLS_DIR/client.crt --key $TLS_DIR/client.key"
  export WRITER_TLS_CA=$TLS_DIR/ca.crt WRITER_TLS_CERT=$TLS_DIR/client.crt WRITER_TLS_KEY=$TLS_DIR/client.key
}

# tls_secrets NS NAME: the Secrets NAME-server (kubernetes.io/tls) and NAME-ca (ca.crt)
tls_secrets() {
  local ns=$1 c=$2 d=$TLS_DIR
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$c" \
    -keyout "$d/$c.key" -out "$d/$c.csr" 2>/dev/null &&
    openssl x509 -req -in "$d/$c.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 2 \
      -extfile <(printf 'subjectAltName=DNS:%s-leader.%s.svc,DNS:%s-replica.%s.svc,DNS:%s-any.%s.svc\nextendedKeyUsage=serverAuth,clientAuth\n' $c $ns $c $ns $c $ns) \
      -out "$d/$c.crt" 2>/dev/null || { echo "openssl: certificate for $c"; return 1; }
  $K -n $ns create secret tls $c-server --cert "$d/$c.crt" --key "$d/$c.key" >/dev/null &&
    $K -n $ns create secret generic $c-ca --from-file=ca.crt="$d/ca.crt" >/dev/null
}

# links_up NS NAME N: N replicas report their link up in status
links_up() { [ "$(rc $1 $2 '{.status.instancesStatus[*].link}' | tr ' ' '\n' | grep -c up)" = "$3" ]; }

# 3 instances: Ready, replicas streaming over TLS, no plain port on any pod; a client
# without a certificate is let in (tls-auth-clients optional), one of another CA is not.
t_tls_create() {
  local ns=$RUN-tlsmk c=tmk ip p out
  tls_on
  newns $ns
  mkcluster $ns $c 3 || fail "mkcluster"
  poll 120 ready $ns $c || fail "not Ready: $(rc $ns $c '{.status.phase} {.status.phaseReason}')"
  poll 20 links_up $ns $c 2 || fail "replicas not streaming: $(rc $ns $c '{.status.instancesStatus}')"
  poll 10 write_via_leader $ns $c || fail "no write through $c-leader over TLS"
  for p in $($K -n $ns get pods -l redis.io/cluster=$c -o jsonpath='{.items[*].metadata.name}'); do
    [ "$(opcli $ns $c $p CONFIG GET tls-replication | tail -1)" = yes ] || fail "$p: tls-replication is not yes"
    [ "$(opcli $ns $c $p CONFIG GET port | tail -1)" = 0 ] || fail "$p: a plain port is open"
    ip=$(pod_ip $ns $p)
    out=$(timeout 3 redis-cli -h "$ip" -a "$(secret $ns $c-auth)" --no-auth-warning PING 2>&1)
    [ "$out" != PONG ] || fail "$p answers plain TCP"
  done
  p=$($K -n $ns get pods -l redis.io/cluster=$c,redis.io/role=replica -o jsonpath='{.items[0].metadata.name}')
  opcli $ns $c $p INFO replication | grep -q '^master_link_status:up' || fail "$p: master link not up over TLS"
  ip=$(pod_ip $ns $p)
  out=$(timeout 3 redis-cli --tls --cacert "$TLS_DIR/ca.crt" -h "$ip" -a "$(secret $ns $c-auth)" --no-auth-warning PING 2>&1)
  [ "$out" = PONG ] || fail "a client without a certificate (tls-auth-clients optional): $out"
  mkca "$TLS_DIR" other || fail "openssl: other CA"
  out=$(timeout 3 redis-cli --tls --cacert "$TLS_DIR/other.crt" -h "$ip" -a "$(secret $ns $c-auth)" --no-auth-warning PING 2>&1)
  [ "$out" != PONG ] || fail "a server chain of another CA was accepted"
  note "TLS, 3 instances: Ready, 2 replicas streaming over TLS, tls-replication yes and port 0 on every pod"
}

# spec.tlsClientAuth: required: tls-auth-clients yes on every pod; a client without a
# certificate is refused, one with a certificate of the CA answers; the replicas and the
# managers (a switchover) still connect, with the pods' own certificate; back to optional, the pods roll
# and a client without a certificate is let in again
t_tls_client_auth() {
  local ns=$RUN-tlsca c=tca ip out pw p
  tls_on
  newns $ns
  mkcluster $ns $c 2 "  tlsClientAuth: required" || fail "mkcluster"
  poll 120 ready $ns $c || fail "not Ready: $(rc $ns $c '{.status.phase} {.status.phaseReason}')"
  poll 20 links_up $ns $c 1 || fail "the replica does not stream: $(rc $ns $c '{.status.instancesStatus}')"
  for p in $c-1 $c-2; do
    [ "$(opcli $ns $c $p CONFIG GET tls-auth-clients | tail -1)" = yes ] || fail "$p: tls-auth-clients is not yes"
  done
  ip=$(pod_ip $ns "$(primary $ns $c)"); pw=$(secret $ns $c-auth)
  out=$(timeout 3 redis-cli --tls --cacert "$TLS_DIR/ca.crt" -h "$ip" -a "$pw" --no-auth-warning PING 2>&1)
  [ "$out" != PONG ] || fail "a client without a certificate was let in"
  [ "$(rcli "$ip" "$pw" PING)" = PONG ] || fail "a client with a certificate of the CA: $(rcli "$ip" "$pw" PING 2>&1)"
  poll 10 write_via_leader $ns $c || fail "no write with a client certificate"
  # the managers' peer calls offer the pods' certificate: a switchover works
  p=$($K -n $ns get pods -l redis.io/cluster=$c,redis.io/role=replica -o jsonpath='{.items[0].metadata.name}')
  $K -n $ns annotate rediscluster $c "redis.io/switchover-to=$p" >/dev/null
  poll 60 eval '[ "$(primary '$ns' '$c')" = '$p' ] && ready '$ns' '$c' && write_via_leader '$ns' '$c'' ||
    fail "switchover to $p with client certificates required: $(rc $ns $c '{.status.phase} {.status.phaseReason}')"
  $K -n $ns patch rediscluster $c --type=merge -p '{"spec":{"tlsClientAuth":"optional"}}' >/dev/null
  poll 180 eval 'ready '$ns' '$c' && config_is '$ns' '$c' tls-auth-clients optional' || fail "not back to optional"
  ip=$(pod_ip $ns "$(primary $ns $c)")
  out=$(timeout 3 redis-cli --tls --cacert "$TLS_DIR/ca.crt" -h "$ip" -a "$pw" --no-auth-warning PING 2>&1)
  [ "$out" = PONG ] || fail "optional: a client without a certificate: $out"
  out=$($K -n $ns patch rediscluster $c --type=merge -p '{"spec":{"tlsSecret":null,"caSecret":null,"tlsClientAuth":"required"}}' 2>&1) &&
    fail "tlsClientAuth required without TLS accepted"
  [[ $out == *"spec.tlsClientAuth: required needs server TLS"* ]] || fail "refusal: $out"
  note "tlsClientAuth required: tls-auth-clients yes on both pods, no certificate refused, the CA's accepted, replica streaming, a switchover; back to optional by a rolling update"
}

t_tls_switchover() { tls_on; switchover $RUN-tlssw tsw; }
t_tls_failover_kill() { tls_on; failover $RUN-tlsfk tfk tfk kill; }
t_tls_rolling() { tls_on; rolling $RUN-tlsroll troll yes; }
t_tls_password() { tls_on; password $RUN-tlspw tpw; }
# sentinel mode with TLS: the sentinels TLS-only too (their port, their links to the data
# pods and to each other: tls-replication), the managers' sentinel queries over TLS
t_tls_sentinel_failover() { tls_on; sentinel_failover $RUN-tlssen tsen kill; }

# scale 3 -> 5 -> 2 with TLS: the new replicas sync over TLS, the highest serials go
t_tls_scale() {
  local ns=$RUN-tlssc c=tsc p0
  tls_on
  newns $ns
  mkcluster $ns $c 3 || fail "mkcluster"
  poll 120 ready $ns $c || fail "not Ready"
  p0=$(primary $ns $c)
  $K -n $ns scale rediscluster $c --replicas=5 >/dev/null
  poll 120 eval 'ready '$ns' '$c' && [ "$(count '$ns' pods '$c')" = 5 ] && links_up '$ns' '$c' 4' ||
    fail "not 5 ready and streaming: $(rc $ns $c '{.status.readyInstances} {.status.instancesStatus[*].link}')"
  $K -n $ns scale rediscluster $c --replicas=2 >/dev/null
  poll 120 eval 'ready '$ns' '$c' && [ "$(count '$ns' pods '$c')" = 2 ] && links_up '$ns' '$c' 1' ||
    fail "not 2: pods $(count $ns pods $c)"
  [ "$(primary $ns $c)" = "$p0" ] || fail "primary changed"
  poll 10 write_via_leader $ns $c || fail "no write"
  note "TLS scale 3 -> 5 -> 2: replicas synced over TLS, primary $p0 kept"
}
