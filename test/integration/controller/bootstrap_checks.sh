# Sourced by test/integration/controller.sh: spec.bootstrap.backupName end to end
# (controller/bootstrap.h, docs/backup.md "Bootstrap from a backup") against the
# S3-compatible server and Azurite of test/env (build/env/s3.env, build/env/azure.env).
# A cluster is filled, backed up by a RedisBackup, and a NEW cluster restores it: the
# digest of every key and value is compared on every pod. Also: a bootstrap naming a
# missing backup creates no pod until the backup exists; a corrupt dump object is
# reported from the manager's status.restore and never answered with an empty primary.
# The storage credentials come from a Secret named in spec.backupCredentialsSecret.
#   ONLY=t_bootstrap BUILD=build bash test/integration/controller.sh

OBJTOOL=$(pwd)/$BUILD/test/objtool
BOOT_KEYS=2000 BOOT_BIG=4 # small keys; 1 MiB values

# the storage settings of provider P, in this shell (the test's own credentials)
boot_env() { set -a; . "build/env/$1.env"; set +a; }
# boot_secret NS P: the Secret spec.backupCredentialsSecret names (bk-creds)
boot_secret() {
  if [ "$2" = s3 ]; then
    $K -n "$1" create secret generic bk-creds --from-literal=AWS_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" \
      --from-literal=AWS_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" >/dev/null
  else
    $K -n "$1" create secret generic bk-creds --from-literal=AZURE_STORAGE_ACCOUNT="$AZURE_STORAGE_ACCOUNT" \
      --from-literal=AZURE_STORAGE_KEY="$AZURE_STORAGE_KEY" >/dev/null
  fi
}
# boot_backup NS NAME CLUSTER P: a RedisBackup of CLUSTER to provider P under ctl-<run>/
boot_backup() {
  local d
  if [ "$4" = s3 ]; then
    d="s3: {bucket: $S3_BUCKET, path: ctl-$RUN, endpoint: '$S3_ENDPOINT', region: $S3_REGION, forcePathStyle: true}"
  else
    d="azure: {container: $AZURE_CONTAINER, path: ctl-$RUN, accountName: $AZURE_STORAGE_ACCOUNT, endpoint: '$AZURE_BLOB_ENDPOINT'}"
  fi
  $K -n "$1" apply -f - >/dev/null <<Y
apiVersion: redis.io/v1
kind: RedisBackup
metadata: {name: $2}
spec: {clusterName: $3, target: primary, method: rdb, destination: {$d}}
Y
}
bphase() { $K -n "$1" get redisbackup "$2" -o jsonpath='{.status.phase}' 2>/dev/null; }
bcompleted() { [ "$(bphase "$1" "$2")" = Completed ]; }
creason() { rc "$1" "$2" "{.status.conditions[?(@.type==\"$3\")].reason}"; }
has_reason() { [ "$(creason "$1" "$2" BootstrapReady)" = "$3" ]; } # NS NAME REASON
# bcli IP PASSWORD ARGS...: rcli with room for 2,000 commands and big values on stdin
bcli() { local ip=$1 pw=$2; shift 2; timeout 30 redis-cli -h "$ip" -a "$pw" --no-auth-warning "$@"; }
# boot_digest NS CLUSTER IP: every key and the SHA-256 of every value, sorted, hashed
boot_digest() {
  local pw f=$W/digest.$2.$3
  pw=$(secret "$1" "$2-auth")
  bcli "$3" "$pw" --scan | sort >"$f" || return 1
  [ -s "$f" ] || return 1
  sed 's/^/GET /' "$f" | bcli "$3" "$pw" | sha256sum | cut -c1-64 | paste -d' ' - <(wc -l <"$f")
}
# boot_source NS P: the Secret and a filled 1-instance cluster "src"; its digest in $W/src.digest
boot_source() {
  local ns=$1 ip pw i
  boot_env "$2"
  newns "$ns"
  boot_secret "$ns" "$2"
  mkcluster "$ns" src 1 "  backupCredentialsSecret: {name: bk-creds}"
  poll 90 ready "$ns" src || fail "src not Ready: $(rc "$ns" src '{.status.phase}')"
  ip=$(pod_ip "$ns" src-1); pw=$(secret "$ns" src-auth)
  seq 1 $BOOT_KEYS | sed 's/.*/SET key:& value-&/' | bcli "$ip" "$pw" >/dev/null || fail "cannot fill src"
  for i in $(seq 1 $BOOT_BIG); do
    head -c 786432 /dev/urandom | base64 -w0 | bcli "$ip" "$pw" -x SET "big:$i" >/dev/null || fail "big value"
  done
  [ "$(bcli "$ip" "$pw" DBSIZE)" = $((BOOT_KEYS + BOOT_BIG)) ] || fail "src DBSIZE $(bcli "$ip" "$pw" DBSIZE)"
  boot_digest "$ns" src "$ip" >"$W/src.digest" || fail "no digest of src"
}
# boot_same NS CLUSTER: every pod of CLUSTER holds src's keys and values
boot_same() {
  local ip
  for ip in $(pod_ips "$1" "$2"); do
    [ "$(boot_digest "$1" "$2" "$ip")" = "$(cat "$W/src.digest")" ] || return 1
  done
}
has_restore_env() {
  $K -n "$1" get pod "$2" -o jsonpath='{.spec.containers[0].env[*].name}' | grep -qw REDIS_OPERATOR_RESTORE_SOURCE
}
# recreated NS POD OLD-UID: the pod exists again, as another incarnation
recreated() {
  local uid; uid=$($K -n "$1" get pod "$2" -o jsonpath='{.metadata.uid}' 2>/dev/null)
  [ -n "$uid" ] && [ "$uid" != "$3" ]
}
spec_hash() { $K -n "$1" get pod "$2" -o jsonpath='{.metadata.annotations.redis\.io/spec-hash}'; }

# backup to P, a new 2-instance cluster bootstrapped from it, the same data on both pods
boot_roundtrip() {
  local p=$1 ns=$RUN-boot-$1 t0 t1
  boot_source "$ns" "$p"
  t0=$(ms); boot_backup "$ns" full src "$p"
  poll 120 bcompleted "$ns" full || fail "RedisBackup full: $(bphase "$ns" full) $($K -n "$ns" get redisbackup full -o jsonpath='{.status.message}')"
  t1=$(ms); note "$p: RedisBackup of $((BOOT_KEYS + BOOT_BIG)) keys Completed in $((t1 - t0)) ms"
  mkcluster "$ns" dst 2 "  backupCredentialsSecret: {name: bk-creds}
  bootstrap: {backupName: full}"
  poll 180 ready "$ns" dst || fail "dst not Ready: $(rc "$ns" dst '{.status.phase}: {.status.phaseReason}')"
  note "$p: bootstrapped 2-instance cluster Ready $(($(ms) - t1)) ms after the backup"
  [ "$(cond "$ns" dst BootstrapReady)/$(creason "$ns" dst BootstrapReady)" = True/Restored ] ||
    fail "BootstrapReady $(cond "$ns" dst BootstrapReady) $(creason "$ns" dst BootstrapReady)"
  poll 30 boot_same "$ns" dst || fail "dst differs from src: $(cat "$W/src.digest") vs $(for ip in $(pod_ips "$ns" dst); do boot_digest "$ns" dst "$ip"; done)"
  has_restore_env "$ns" dst-1 || fail "dst-1 has no restore source"
  ! has_restore_env "$ns" dst-2 || fail "the replica dst-2 has a restore source"
  [ "$(spec_hash "$ns" dst-1)" = "$(spec_hash "$ns" dst-2)" ] || fail "spec hashes differ"
}

t_bootstrap_s3() {
  local ns=$RUN-boot-s3 old
  boot_roundtrip s3
  # bootstrapped for good: the primary's replacement restores nothing, the data stays
  old=$($K -n $ns get pod dst-1 -o jsonpath='{.metadata.uid}')
  $K -n $ns delete pod dst-1 --wait=false >/dev/null
  poll 60 recreated $ns dst-1 "$old" || fail "dst-1 not recreated"
  ! has_restore_env $ns dst-1 || fail "the recreated dst-1 carries a restore source"
  poll 120 ready $ns dst || fail "dst not Ready after the failover"
  poll 30 boot_same $ns dst || fail "data changed after the primary was replaced"
}

t_bootstrap_azure() { boot_roundtrip azure; }

t_bootstrap_missing() {
  local ns=$RUN-boot-miss i
  boot_source $ns s3
  mkcluster $ns late 1 "  backupCredentialsSecret: {name: bk-creds}
  bootstrap: {backupName: later}"
  poll 30 has_reason $ns late BackupNotFound ||
    fail "BootstrapReady reason: $(creason $ns late BootstrapReady)"
  rc $ns late '{.status.conditions[?(@.type=="BootstrapReady")].message}' | grep -q later ||
    fail "the message does not name the backup"
  for i in $(seq 1 20); do
    [ "$(count $ns pod late)" = 0 ] && [ "$(count $ns pvc late)" = 0 ] || fail "a pod or PVC after $i s"
    [ "$(creason $ns late BootstrapReady)" = BackupNotFound ] || fail "reason changed"
    sleep 1
  done
  [ -z "$(primary $ns late)" ] || fail "a primary chosen: $(primary $ns late)"
  boot_backup $ns later src s3
  poll 120 bcompleted $ns later || fail "RedisBackup later: $(bphase $ns later)"
  poll 120 ready $ns late || fail "late not Ready: $(rc $ns late '{.status.phase}: {.status.phaseReason}')"
  poll 30 boot_same $ns late || fail "late differs from src"
}

t_bootstrap_corrupt() {
  local ns=$RUN-boot-bad man key ip i
  make -s BUILD="$BUILD" "$BUILD/test/objtool" >/dev/null || fail "cannot build objtool"
  boot_source $ns s3
  boot_backup $ns bad src s3
  poll 120 bcompleted $ns bad || fail "RedisBackup bad: $(bphase $ns bad)"
  man=$($K -n $ns get redisbackup bad -o jsonpath='{.status.manifestKey}')
  key=${man%manifest.json}dump.rdb
  "$OBJTOOL" s3 list "${man%manifest.json}" | grep -q "^$key " || fail "no $key"
  head -c 65536 /dev/urandom | "$OBJTOOL" s3 put "$key" || fail "cannot overwrite $key"
  mkcluster $ns broken 2 "  backupCredentialsSecret: {name: bk-creds}
  bootstrap: {backupName: bad}"
  poll 90 has_reason $ns broken RestoreFailed ||
    fail "BootstrapReady reason: $(creason $ns broken BootstrapReady) $(rc $ns broken '{.status.conditions[?(@.type=="BootstrapReady")].message}')"
  note "corrupt dump: $(rc $ns broken '{.status.conditions[?(@.type=="BootstrapReady")].message}')"
  ip=$(pod_ip $ns broken-1)
  for i in $(seq 1 10); do # no empty primary in its place, no replica
    [ "$(rc $ns broken '{.status.readyInstances}')" = 0 ] || fail "a ready instance"
    [ "$(count $ns pod broken)" = 1 ] || fail "$(count $ns pod broken) pods"
    ! timeout 2 redis-cli -h "$ip" PING >/dev/null 2>&1 || fail "a server answers on broken-1"
    sleep 1
  done
  [ "$(creason $ns broken BootstrapReady)" = RestoreFailed ] || fail "reason changed"
}
