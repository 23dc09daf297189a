# Sourced by test/integration/instance.sh after backup_checks.sh (whose helpers it uses):
# storage faults of backups and restore (docs/backup.md, "Faults"), against the
# S3-compatible server and Azurite of test/env. INSTANCE_ONLY=backup-faults runs only these.
#   - the storage dies mid-upload: tcpproxy.py between the manager and the store, slowed
#     by its delay file, killed once 12 MiB went through; then the same name again, which
#     once completed aborts the S3 upload the cut left incomplete (its abort failed);
#   - a missing bucket / container;
#   - a blackholed endpoint (an iptables DROP of 10.255.255.1 on the two ports, removed
#     at the end of the check): the connect timeout bounds every attempt;
#   - a full disk while restoring (the data dir on an 8 MiB tmpfs), then room made.
# Needs root (iptables, mount). About 2 minutes, most of it the blackhole's 4 timeouts.
FAULT_PROXY=$(pwd)/test/integration/instance/tcpproxy.py
FAULT_BLACKHOLE=10.255.255.1
FAULT_PATH=it-$$-faults

fault_endpoint() { # P: the store's endpoint of build/env
  if [ "$1" = s3 ]; then echo "$S3_ENDPOINT"; else echo "$AZURE_BLOB_ENDPOINT"; fi
}
# a relay NAME on its own port to the store of P (the endpoint through it on stdout); its
# PID in $W/NAME/pid, so kill_all stops it whatever happens; $W/NAME/delay slows it
proxy_start() { # NAME P
  local hp lp ep
  ep=$(fault_endpoint "$2"); hp=${ep#http://}; hp=${hp%%/*}
  [ -n "$(port "$1" 1)" ] || alloc_ports "$1"
  lp=$(port "$1" 1); mkdir -p "$W/$1"; touch "$W/$1/delay"
  python3 "$FAULT_PROXY" "$lp" "${hp%:*}" "${hp##*:}" "$W/$1/delay" >>"$W/$1/log" 2>&1 &
  echo $! >"$W/$1/pid"
  poll 5 bash -c ": </dev/tcp/127.0.0.1/$lp" 2>/dev/null || return 1
  echo "http://127.0.0.1:$lp${ep#http://"$hp"}"
}
proxy_stop() { kill -KILL "$(cat "$W/$1/pid")" 2>/dev/null; wait "$(cat "$W/$1/pid")" 2>/dev/null; true; }
# bytes the relay NAME received from the manager (on its accepted connections) ≥ N
proxy_passed() { # NAME N
  local got
  got=$(ss -tniH state established "( sport = :$(port "$1" 1) )" |
    grep -o 'bytes_received:[0-9]*' | cut -d: -f2 | awk '{ s += $1 } END { print s + 0 }')
  [ "$got" -ge "$2" ]
}
# S3's incomplete multipart uploads of KEY, one UploadId a line (the test's credentials)
s3_uploads() { # KEY
  curl -s --aws-sigv4 "aws:amz:$S3_REGION:s3" -u "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
    "$S3_ENDPOINT/$S3_BUCKET?prefix=${1//\//%2F}&uploads=" |
    grep -o "<Key>$1</Key><UploadId>[^<]*" | sed 's/.*<UploadId>//'
}
s3_req() { # METHOD KEY QUERY [CURL ARGS…]: a signed request with an empty body
  local m=$1 k=$2 q=$3; shift 3
  curl -s -X "$m" --aws-sigv4 "aws:amz:$S3_REGION:s3" -u "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
    "$@" "$S3_ENDPOINT/$S3_BUCKET/$k?$q"
}
s3_abort_upload() { s3_req DELETE "$1" "uploadId=$2" -o /dev/null -w '%{http_code}'; } # KEY ID
# the in-flight upload of KEY has N parts or more (ListParts)
s3_parts_done() { # KEY N
  local id; id=$(s3_uploads "$1" | head -1)
  [ -n "$id" ] && [ "$(s3_req GET "$1" "uploadId=$id" | grep -o '<PartNumber>' | wc -l)" -ge "$2" ]
}

# a primary with 200 small keys and 40 x 1 MiB random values (a 5-part upload)
fault_seed() {
  local c="bf$RANDOM" pod i
  pod=$c-0
  mkcluster "$c" redis 1 pvc; mkpod "$pod" "$c"; set_primary "$c" "$pod"; start_mgr "$pod" "$c"
  poll 30 ready "$pod" || return 1
  seq 1 200 | sed 's/.*/SET key:& value-&/' | rcli "$pod" >/dev/null
  for i in $(seq 1 40); do head -c 786432 /dev/urandom | base64 -w0 | rcli "$pod" -x SET "big:$i" >/dev/null; done
  [ "$(rcli "$pod" DBSIZE)" = 240 ] || return 1
  # a second, empty primary: the blackhole runs both providers at once
  mkcluster "$c"b redis 1 pvc; mkpod "$c"b-0 "$c"b; set_primary "$c"b "$c"b-0; start_mgr "$c"b-0 "$c"b
  poll 30 ready "$c"b-0 || return 1
  echo "$c $pod $c""b-0" >"$W/faults"
}

objects_under() { objtool "$1" list "$2" | wc -l; } # P PREFIX

backup_storage_dies() { # P
  local p=$1 c pod name="$NS/cut-$1" px="proxy-$1" ep key man ids out
  store_env "$p"; read -r c pod _ <"$W/faults" || return 1
  ep=$(proxy_start "$px" "$p") || { echo "the relay did not start"; return 1; }
  echo 0.02 >"$W/$px/delay" # about 3 MB/s: the 40 MiB upload takes over 10 s
  post "$pod" backup "$(backup_body "$p" "$name" "$FAULT_PATH" "$ep")" | grep -q '^202 ' || return 1
  key=$(jst "$pod" .backup.key); man=$(jst "$pod" .backup.manifestKey)
  # in flight: S3 has a part of the upload and the next one flows (a connection per
  # part there); Azurite's kept connection has carried 12 MiB (a block and a half)
  if [ "$p" = s3 ]; then
    poll 60 s3_parts_done "$key" 1 && poll 10 proxy_passed "$px" 1048576
  else poll 60 proxy_passed "$px" 12582912; fi || { echo "not in flight: $(jst "$pod" .backup)"; return 1; }
  proxy_stop "$px" # the store is gone: open connections reset, new ones refused
  poll 60 eq failed bphase "$pod" || { echo "not failed: $(jst "$pod" .backup)"; return 1; }
  jst "$pod" .backup
  is "$pod" .backup.retryable true && is "$pod" .backup.attempts 4 || return 1
  jst "$pod" .backup.error | grep -Eq 'refused|reset|Couldn.t connect' || return 1
  [ "$(objects_under "$p" "$FAULT_PATH/$c/$name/")" = 0 ] || { echo "objects left"; return 1; }
  if [ "$p" = s3 ]; then
    # the abort could not reach the store (refused, or reset on the connection the relay
    # cut): it was attempted and logged; the upload stays
    # invisible (no object) until the bucket's lifecycle rule removes it
    grep 'AbortMultipartUpload' "$W/$pod/log" | grep -q 'refused\|connect\|reset by peer' ||
      { echo "abort not logged"; grep -i abort "$W/$pod/log" | tail -3; return 1; }
    ids=$(s3_uploads "$key"); [ "$(echo "$ids" | grep -c .)" = 1 ] || { echo "uploads: $ids"; return 1; }
  fi
  # the store is back: the same name again is a new attempt, and completes
  : >"$W/$px/delay"
  ep=$(proxy_start "$px" "$p") || return 1
  out=$(post "$pod" backup "$(backup_body "$p" "$name" "$FAULT_PATH" "$ep")")
  case $out in 202\ *) ;; *) echo "retry POST: $out"; return 1 ;; esac
  poll 120 eq completed bphase "$pod" || { echo "retry: $(jst "$pod" .backup)"; return 1; }
  proxy_stop "$px"
  is "$pod" .backup.attempts 1 && [ "$(objects_under "$p" "$FAULT_PATH/$c/$name/")" = 2 ] || return 1
  [ "$(objtool "$p" get "$man" | jq -r .sha256)" = "$(jst "$pod" .backup.sha256)" ] || { echo "manifest sha"; return 1; }
  [ "$(objtool "$p" get "$key" | sha256sum | cut -c1-64)" = "$(jst "$pod" .backup.sha256)" ] || { echo "dump sha"; return 1; }
  if [ "$p" = s3 ]; then # the completed retry aborted the cut one (backup_leftover.c)
    [ -z "$(s3_uploads "$key")" ] || { echo "left-over uploads: $(s3_uploads "$key") (was $ids)"; return 1; }
    grep 'aborted an incomplete upload of an earlier backup' "$W/$pod/log" | grep -qF "$key" ||
      { echo "abort of the left-over not logged"; grep -i 'incomplete' "$W/$pod/log" | tail -3; return 1; }
    [ "$(s3_abort_upload "$key" "$ids")" = 404 ] || { echo "upload $ids still there"; return 1; }
  fi
  echo "$c $pod $FAULT_PATH $name" >"$W/faults-backup-$p"
}

backup_missing_bucket() { # P: a clear Code, not retryable, one attempt, nothing written
  local p=$1 pod c want
  store_env "$p"; read -r c pod _ <"$W/faults" || return 1
  if [ "$p" = s3 ]; then S3_BUCKET=no-bucket-$$; want='404 NoSuchBucket'
  else AZURE_CONTAINER=no-container-$$; want='404 ContainerNotFound'; fi
  post "$pod" backup "$(backup_body "$p" "$NS/nobucket-$p" "$FAULT_PATH")" | grep -q '^202 ' || return 1
  poll 60 eq failed bphase "$pod" || return 1
  jst "$pod" .backup.error
  jst "$pod" .backup.error | grep -q "$want" && is "$pod" .backup.retryable false &&
    is "$pod" .backup.attempts 1
}

blackhole_rule() { # -I | -D
  iptables -w "$1" OUTPUT -d "$FAULT_BLACKHOLE" -p tcp -m multiport --dports 7070,10000 \
    -m comment --comment "instance-it backup faults $$" -j DROP
}
backup_blackhole() { # both providers at once, one pod each
  local c pod podb t0 t1 q
  read -r c pod podb <"$W/faults" || return 1
  blackhole_rule -I || return 1
  store_env s3
  post "$pod" backup "$(backup_body s3 "$NS/hole-s3" "$FAULT_PATH" "http://$FAULT_BLACKHOLE:7070")" | grep -q '^202 ' || { blackhole_rule -D; return 1; }
  store_env azure
  post "$podb" backup "$(backup_body azure "$NS/hole-az" "$FAULT_PATH" "http://$FAULT_BLACKHOLE:10000/devstoreaccount1")" | grep -q '^202 ' || { blackhole_rule -D; return 1; }
  t0=$(date +%s)
  poll 90 eq failed bphase "$pod" && poll 30 eq failed bphase "$podb"; q=$?
  t1=$(date +%s); blackhole_rule -D
  [ $q = 0 ] || { echo "not failed: $(jst "$pod" .backup) $(jst "$podb" .backup)"; return 1; }
  jst "$pod" .backup.error; jst "$podb" .backup.error
  echo "info instance: blackholed endpoint -> backup failed after $((t1 - t0)) s (4 attempts, 10 s connect timeout each)" >&3
  # 4 attempts of a 10 s connect timeout and 3.5 s of back-off: not a quick refusal, bounded
  [ $((t1 - t0)) -ge 35 ] && [ $((t1 - t0)) -le 60 ] || { echo "took $((t1 - t0)) s"; return 1; }
  for q in "$pod" "$podb"; do
    is "$q" .backup.retryable true && is "$q" .backup.attempts 4 &&
      jst "$q" .backup.error | grep -q 'timed out\|Timeout' || return 1
  done
}

restore_disk_full() { # P: ENOSPC, nothing left, the server not started; room made: restored
  local p=$1 c pod path name man src c2="rn$RANDOM" pod2 d rc
  store_env "$p"; read -r c pod path name <"$W/faults-backup-$p" || return 1
  man="$path/$c/$name/manifest.json"; pod2=$c2-0; d=$W/$pod2/data
  mkcluster "$c2" redis 1 pvc; mkpod "$pod2" "$c2"; set_primary "$c2" "$pod2"
  mkdir -p "$d" && mount -t tmpfs -o size=8m,mode=0700 tmpfs "$d" || return 1
  creds_dir "$p" "$W/$pod2/restore-creds"
  src=$(jq -nc --arg n "$name" --arg m "$man" --argjson d "$(dest "$p" "$path")" '{name: $n, manifestKey: $m, destination: $d}')
  start_mgr "$pod2" "$c2" env REDIS_OPERATOR_RESTORE_SOURCE="$src" REDIS_OPERATOR_RESTORE_CREDENTIALS_DIR="$W/$pod2/restore-creds"
  restore_disk_full_steps "$pod" "$pod2" "$d"; rc=$?
  stop_mgr "$pod2" >/dev/null
  umount "$d"
  return $rc
}
restore_disk_full_steps() { # POD POD2 DATADIR
  poll 60 eq failed jst "$2" .restore.phase || { echo "restore: $(jst "$2" .restore)"; return 1; }
  jst "$2" .restore
  jst "$2" .restore.error | grep -q 'No space left on device' && is "$2" .restore.retryable true || return 1
  is "$2" .ready false && is "$2" .server.pid null && is "$2" .state booting || return 1
  ! ls -A "$3" | grep -q 'dump.rdb\|appendonlydir\|restore.tmp' || { ls -lA "$3"; return 1; }
  mount -o remount,size=256m "$3" || return 1
  poll 60 ready "$2" || { echo "after room was made: $(jst "$2" .restore)"; return 1; }
  is "$2" .restore.phase completed && [ "$(jst "$2" .restore.attempts)" -ge 2 ] || return 1
  [ "$(rcli "$2" DBSIZE)" = 240 ] && [ "$(digest "$2")" = "$(digest "$1")" ] || { echo "restored $(rcli "$2" DBSIZE) keys"; return 1; }
}

backup_fault_suite() {
  local p
  make -s BUILD="$BUILD" "$BUILD/test/objtool" >/dev/null || { check_fail "cannot build objtool"; return; }
  for p in s3 azure; do
    [ -f "${ENV_DIR:-build/env}/$p.env" ] || { check_fail "backup faults: ${ENV_DIR:-build/env}/$p.env missing"; return; }
  done
  check_here "backup faults: a primary with 40 MiB of values" fault_seed || return
  for p in s3 azure; do
    check "backup $p: storage dying mid-upload fails retryable, nothing named complete; the same name again completes" backup_storage_dies "$p"
    check "backup $p: a missing bucket/container fails at once, not retryable, the Code named" backup_missing_bucket "$p"
  done
  check "backup s3+azure: a blackholed endpoint fails retryable within the connect timeouts" backup_blackhole 3>&1
  for p in s3 azure; do
    [ -f "$W/faults-backup-$p" ] || continue
    check "restore $p: a full disk fails (ENOSPC), nothing left, no server; room made: every key back" restore_disk_full "$p"
  done
  store_env s3; objtool s3 rm "$FAULT_PATH/" >/dev/null 2>&1
  store_env azure; objtool azure rm "$FAULT_PATH/" >/dev/null 2>&1
}
