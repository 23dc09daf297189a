# Sourced by test/integration/controller.sh: RedisBackup and RedisScheduledBackup end to
# end (controller/backup.c, backup_sched.c, instance/backup.c; docs/backup.md) against
# the S3-compatible server and Azurite of test/env (build/env/s3.env, build/env/azure.env).
# ONLY=t_backup runs only these. The namespace $RUN-bk holds two clusters: bk (3
# instances, spec.backupCredentialsSecret bk-s3, a few MiB of data) for the one-off
# backups and their faults, and sc (1 instance, no credentials Secret of its own) for the
# schedule, which t_backup_s3 starts so that its one-minute cron fires while the other
# checks run, and t_backup_schedule judges at the end. Objects go under cit-<run>/ in the
# bucket and the container; t_backup_schedule removes that prefix.
BKNS=$RUN-bk
BKPATH=cit-$RUN
BK_OBJTOOL=$(pwd)/$BUILD/test/objtool

# in a subshell: the test's own storage settings (the operator gets them from Secrets)
bk_env() { set -a; . "${ENV_DIR:-build/env}/$1.env"; set +a; }
bk_obj() { ( bk_env "$1"; "$BK_OBJTOOL" "$@" ); }
bk() { $K -n $BKNS get redisbackup "$1" -o jsonpath="$2" 2>/dev/null; }
bk_phase() { bk "$1" '{.status.phase}'; }
bk_is() { [ "$(bk_phase "$1")" = "$2" ]; }
bk_done() { case $(bk_phase "$1") in Completed|Failed) return 0 ;; esac; return 1; }
bk_sb() { $K -n $BKNS get redisscheduledbackup "$1" -o jsonpath="$2" 2>/dev/null; }

# bk_dest P [ENDPOINT] [BUCKET] [SECRET]: a destination in flow YAML
bk_dest() {
  ( bk_env "$1"
    local own=${4:+, credentialsSecret: {name: $4\}}
    if [ "$1" = s3 ]; then
      echo "{s3: {bucket: ${3:-$S3_BUCKET}, path: $BKPATH, endpoint: '${2:-$S3_ENDPOINT}', region: $S3_REGION, forcePathStyle: true$own}}"
    else
      echo "{azure: {container: ${3:-$AZURE_CONTAINER}, path: $BKPATH, endpoint: '${2:-$AZURE_BLOB_ENDPOINT}', accountName: $AZURE_STORAGE_ACCOUNT$own}}"
    fi )
}
# bk_mk NAME CLUSTER DESTINATION [SPEC-YAML-LINES]
bk_mk() {
  $K -n $BKNS apply -f - >/dev/null <<Y
apiVersion: redis.io/v1
kind: RedisBackup
metadata: {name: $1}
spec:
  clusterName: $2
  destination: $3
${4:-}
Y
}
# bk_watch NAME: every phase the RedisBackup goes through, in $W/phases-NAME (WATCH pid)
bk_watch() {
  timeout 300 $K -n $BKNS get redisbackups --field-selector "metadata.name=$1" -w \
    -o jsonpath='{.status.phase}{"\n"}' >"$W/phases-$1" 2>/dev/null &
  WATCH=$!
}
# the phases seen, repeats and the empty status squeezed: "Pending Running Completed"
bk_seen() { kill "$WATCH" 2>/dev/null; wait "$WATCH" 2>/dev/null; sed 's/^$/Pending/' "$W/phases-$1" | uniq | paste -sd' '; }
bk_prefix() { echo "$BKPATH/$1/$BKNS/$2"; } # CLUSTER INSTANCE-SIDE-NAME (docs/backup.md)

bk_secrets() {
  ( bk_env s3
    $K -n $BKNS create secret generic bk-s3 --from-literal=AWS_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" \
      --from-literal=AWS_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" >/dev/null &&
    $K -n $BKNS create secret generic bk-bad --from-literal=AWS_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" \
      --from-literal=AWS_SECRET_ACCESS_KEY=not-the-key >/dev/null ) &&
  ( bk_env azure
    $K -n $BKNS create secret generic bk-az --from-literal=AZURE_STORAGE_ACCOUNT="$AZURE_STORAGE_ACCOUNT" \
      --from-literal=AZURE_STORAGE_KEY="$AZURE_STORAGE_KEY" >/dev/null )
}

# bk_setup: once per run (the first backup check that runs does it)
bk_setup() {
  [ -e "$W/bk-setup" ] && return 0
  make -s BUILD="$BUILD" "$BUILD/test/objtool" >/dev/null || fail "cannot build objtool"
  [ -f "${ENV_DIR:-build/env}/s3.env" ] && [ -f "${ENV_DIR:-build/env}/azure.env" ] || fail "build/env/s3.env or azure.env missing"
  newns $BKNS || fail "namespace"
  bk_secrets || fail "Secrets"
  mkcluster $BKNS bk 3 "  backupCredentialsSecret: {name: bk-s3}" || fail "cluster bk"
  mkcluster $BKNS sc 1 || fail "cluster sc"
  bk_sched_start || fail "RedisScheduledBackup"
  poll 120 ready $BKNS bk || fail "bk not Ready: $(rc $BKNS bk '{.status.phase} {.status.phaseReason}')"
  # 2000 small keys and 4 x 1 MiB values: a dump of a few MiB (a multipart upload)
  local ip pw i; ip=$(leader_ip $BKNS bk); pw=$(secret $BKNS bk-auth)
  seq 1 2000 | sed 's/.*/SET key:& value-&/' | rcli "$ip" "$pw" >/dev/null
  for i in 1 2 3 4; do head -c 786432 /dev/urandom | base64 -w0 | rcli "$ip" "$pw" -x SET "big:$i" >/dev/null; done
  [ "$(rcli "$ip" "$pw" DBSIZE)" = 2004 ] || fail "seeding: $(rcli "$ip" "$pw" DBSIZE) keys"
  # the replicas caught up (prefer-replica needs one)
  poll 30 eval '[ "$(rc '$BKNS' bk "{.status.instancesStatus[*].lagBytes}")" = "0 0" ]' ||
    note "lag after seeding: $(rc $BKNS bk '{.status.instancesStatus[*].lagBytes}')"
  touch "$W/bk-setup"
}

# bk_stored P NAME: the status names a manifest and a dump that exist, with its size
bk_stored() {
  local p=$1 b=$2 loc man key size list
  loc=$(bk "$b" '{.status.location}'); man=$(bk "$b" '{.status.manifestKey}'); size=$(bk "$b" '{.status.size}')
  [ -n "$man" ] && [ "${size:-0}" -gt 1000000 ] || fail "$b: manifestKey '$man', size '$size'"
  key=${man%manifest.json}dump.rdb
  case $loc in s3://*/"$key"|http*/"$key") ;; *) fail "$b: location $loc is not $key" ;; esac
  list=$(bk_obj "$p" list "${man%manifest.json}") || fail "$b: cannot list"
  echo "$list" | grep -q "^$man " || fail "$b: no manifest in the store: $list"
  [ "$(echo "$list" | awk -v k="$key" '$1 == k {print $2}')" = "$size" ] || fail "$b: dump size differs from $size: $list"
  [ "sha256:$(bk_obj "$p" get "$man" | jq -r .sha256)" = "$(bk "$b" '{.status.checksum}')" ] ||
    fail "$b: manifest sha256 differs from status.checksum"
}

# bk_one P NAME TARGET [DESTINATION-SECRET]: a backup of bk through the controller
bk_one() {
  local p=$1 b=$2 target=$3 t0 inst seen
  bk_setup
  bk_watch "$b"; t0=$(ms)
  bk_mk "$b" bk "$(bk_dest "$p" "" "" "${4:-}")" "  target: $target" || fail "apply"
  poll 90 bk_done "$b" || fail "$b: $(bk_phase "$b") $(bk "$b" '{.status.message}')"
  seen=$(bk_seen "$b")
  note "$p backup of $(bk "$b" '{.status.size}') bytes through the controller: $(( $(ms) - t0 )) ms, phases: $seen"
  bk_is "$b" Completed || fail "$b: $(bk_phase "$b"): $(bk "$b" '{.status.reason}: {.status.message}')"
  [ "$seen" = "Pending Running Completed" ] || [ "$seen" = "Running Completed" ] || fail "$b: phases $seen"
  [ -n "$(bk "$b" '{.status.startedAt}')" ] && [ -n "$(bk "$b" '{.status.stoppedAt}')" ] || fail "$b: times"
  [ "$(bk "$b" '{.status.conditions[?(@.type=="Succeeded")].status}')" = True ] || fail "$b: condition Succeeded"
  inst=$(bk "$b" '{.status.instance}')
  if [ "$target" = primary ]; then [ "$inst" = "$(primary $BKNS bk)" ] || fail "$b: instance $inst, not the primary"
  else [ -n "$inst" ] && [ "$inst" != "$(primary $BKNS bk)" ] || fail "$b: instance '$inst' is not a replica"; fi
  bk_stored "$p" "$b"
}

t_backup_s3() { bk_one s3 b-s3 prefer-replica; }
t_backup_azure() { bk_one azure b-az primary bk-az; }

# bk_failed NAME WANT-REGEX: Failed, the reason/message matching, no manifest stored
bk_failed() {
  local b=$1 msg
  poll "${3:-60}" bk_done "$b" || fail "$b still $(bk_phase "$b"): $(bk "$b" '{.status.message}')"
  bk_is "$b" Failed || fail "$b: $(bk_phase "$b")"
  msg="$(bk "$b" '{.status.reason}: {.status.message}')"
  echo "$msg" | grep -Eq "$2" || fail "$b: '$msg' does not match $2"
  [ "$(bk "$b" '{.status.conditions[?(@.type=="Succeeded")].status}')" = False ] || fail "$b: condition"
  [ -z "$(bk "$b" '{.status.manifestKey}')" ] || fail "$b: a manifestKey"
  note "$b: $msg"
}
bk_no_manifest() { ! bk_obj "$1" list "$(bk_prefix "$2" "$3")/" | grep -q manifest.json; }

t_backup_wrong_credentials() {
  bk_setup
  bk_mk b-badcred bk "$(bk_dest s3 "" "" bk-bad)" || fail "apply"
  bk_failed b-badcred '403 (SignatureDoesNotMatch|InvalidAccessKeyId|AccessDenied)'
  bk_no_manifest s3 bk b-badcred || fail "a manifest was stored"
  ! $K -n $BKNS get events -o jsonpath='{.items[*].message}' | grep -q not-the-key || fail "the secret in an Event"
}

t_backup_missing_bucket() {
  bk_setup
  bk_mk b-nobucket bk "$(bk_dest s3 "" "no-such-bucket-$RUN")" || fail "apply"
  bk_failed b-nobucket '404|NoSuchBucket'
}

# sc has no backupCredentialsSecret: a backup naming none has no credentials at all; one
# naming a Secret that does not exist waits for it (BK_SECRET_GRACE_MS), saying so
t_backup_no_credentials() {
  bk_setup
  bk_mk b-nosecret sc "$(bk_dest s3 "" "" bk-none)" || fail "apply"
  poll 30 eval '[ "$(bk b-nosecret "{.status.reason}")" = CredentialsNotFound ]' ||
    fail "b-nosecret: $(bk b-nosecret '{.status.phase} {.status.reason}')"
  bk_is b-nosecret Pending && bk b-nosecret '{.status.message}' | grep -q 'secret bk-none not found' ||
    fail "b-nosecret: $(bk b-nosecret '{.status.phase}: {.status.message}')"
  note "b-nosecret: $(bk b-nosecret '{.status.phase}: {.status.message}')"
  $K -n $BKNS delete redisbackup b-nosecret --wait=false >/dev/null
  poll 60 ready $BKNS sc || fail "sc not Ready"
  bk_mk b-nocred sc "$(bk_dest s3)" || fail "apply"
  bk_failed b-nocred 'credential|AWS_ACCESS_KEY_ID' 90
}

# bk_relay PORT HOST:PORT BYTES-PER-SECOND: a slow TCP relay on the host bridge (RELAY pid)
bk_relay() {
  timeout 300 python3 - "$@" <<'PY' >"$W/relay.log" 2>&1 &
import asyncio, sys
port, (host, hport), rate = int(sys.argv[1]), sys.argv[2].rsplit(":", 1), int(sys.argv[3])
async def pipe(r, w, slow):
    try:
        while data := await r.read(16384):
            w.write(data); await w.drain()
            if slow: await asyncio.sleep(len(data) / rate)
    except (ConnectionError, asyncio.CancelledError): pass
    finally: w.close()
async def handle(cr, cw):
    try: ur, uw = await asyncio.open_connection(host, int(hport))
    except OSError: cw.close(); return
    await asyncio.gather(pipe(cr, uw, True), pipe(ur, cw, False))
async def main():
    srv = await asyncio.start_server(handle, "0.0.0.0", port)
    async with srv: await srv.serve_forever()
asyncio.run(main())
PY
  RELAY=$!
}
bk_inst_running() { inst $BKNS "$1" | jq -e '.backup.phase == "running"' >/dev/null; }

# the source pod deleted mid-upload (slowed to ~1 MiB/s by a relay): the attempt is lost,
# retried on another instance, never stuck Running, no manifest for a partial dump (the
# deleted pod's manager may still finish within its grace period: then dump and manifest
# are whole)
t_backup_pod_deleted() {
  local b=b-podgone port=$(( HPORT + 7 )) ep src inst2 attempt
  bk_setup
  ep=$(bk_env s3; echo "$S3_ENDPOINT")
  bk_relay $port "${ep#http://}" 1048576
  poll 5 eval "ss -ltn | grep -q ':$port '" || fail "bk_relay: $(cat "$W/relay.log")"
  bk_mk $b bk "$(bk_dest s3 "http://$ENV_HOST_IP:$port")" || fail "apply"
  poll 30 eval '[ -n "$(bk '$b' "{.status.instance}")" ]' || fail "$b: no instance: $(bk $b '{.status.message}')"
  src=$(bk $b '{.status.instance}')
  poll 20 bk_inst_running "$src" || fail "$src: never running: $(inst $BKNS "$src" | jq -c .backup)"
  $K -n $BKNS delete pod "$src" --wait=false >/dev/null
  poll 120 bk_done $b; kill "$RELAY" 2>/dev/null; wait "$RELAY" 2>/dev/null
  bk_done $b || fail "$b still $(bk_phase $b): $(bk $b '{.status.message}')"
  attempt=$($K -n $BKNS get redisbackup $b -o jsonpath='{.metadata.annotations.redis\.io/backup-attempt}')
  inst2=$(bk $b '{.status.instance}')
  note "$b: source $src deleted mid-upload; $(bk_phase $b) on ${inst2:-none} after ${attempt:-0} retries: $(bk $b '{.status.reason} {.status.message}')"
  if bk_is $b Completed; then
    [ "${attempt:-0}" -ge 1 ] && [ "$inst2" != "$src" ] || fail "$b: completed on $inst2 (attempt ${attempt:-0})"
    bk_stored s3 $b
  else
    [ -n "$(bk $b '{.status.reason}')" ] || fail "$b: Failed without a reason"
  fi
  bk_whole_or_none s3 "$(bk_prefix bk $b)" || fail "a manifest for a partial dump ($(bk_prefix bk $b))"
}
# bk_whole_or_none P PREFIX: no manifest under PREFIX/, or one whose dump has its size and sha256
bk_whole_or_none() {
  local man="$2/manifest.json" m
  bk_obj "$1" list "$2/" | grep -q "^$man " || { note "interrupted attempt: no manifest"; return 0; }
  m=$(bk_obj "$1" get "$man") || return 1
  [ "$(bk_obj "$1" get "$2/dump.rdb" | sha256sum | cut -c1-64)" = "$(echo "$m" | jq -r .sha256)" ] &&
    [ "$(bk_obj "$1" list "$2/dump.rdb" | awk '{print $2}')" = "$(echo "$m" | jq -r .size)" ] || return 1
  note "interrupted attempt: its upload had finished (manifest and a whole dump, $(echo "$m" | jq -r .size) bytes)"
}

# deletionPolicy Delete: deleting the RedisBackup deletes its objects, then the finalizer goes
t_backup_delete_policy() {
  local b=b-del man
  bk_setup
  bk_mk $b bk "$(bk_dest s3)" "  deletionPolicy: Delete" || fail "apply"
  poll 90 bk_done $b && bk_is $b Completed || fail "$b: $(bk_phase $b) $(bk $b '{.status.message}')"
  $K -n $BKNS get redisbackup $b -o jsonpath='{.metadata.finalizers}' | grep -q redis.io/backup-objects || fail "no finalizer"
  man=$(bk $b '{.status.manifestKey}')
  bk_obj s3 list "${man%manifest.json}" | grep -q . || fail "no objects"
  $K -n $BKNS delete redisbackup $b --wait=false >/dev/null
  poll 30 eval "! $K -n $BKNS get redisbackup $b" || fail "$b not deleted: finalizers $($K -n $BKNS get redisbackup $b -o jsonpath='{.metadata.finalizers}')"
  [ -z "$(bk_obj s3 list "${man%manifest.json}")" ] || fail "objects left: $(bk_obj s3 list "${man%manifest.json}")"
}

# --- the schedule ------------------------------------------------------------------------

# bk_sched_start: cluster sc's RedisScheduledBackup on a one-minute cron, and a watch of its
# RedisBackups (every event: "TYPE NAME PHASE") for the verdicts
bk_sched_start() {
  timeout 900 $K -n $BKNS get redisbackups -l redis.io/scheduled-backup=sched -w --output-watch-events \
    -o jsonpath='{.type} {.object.metadata.name} {.object.status.phase}{"\n"}' >"$W/sched-events" 2>/dev/null &
  echo $! >"$W/sched-watch.pid"
  $K -n $BKNS apply -f - >/dev/null <<Y
apiVersion: redis.io/v1
kind: RedisScheduledBackup
metadata: {name: sched}
spec:
  schedule: "* * * * *"
  clusterName: sc
  retention: 1h
  successfulBackupsHistoryLimit: 1
  destination: $(bk_dest s3 "" "" bk-s3)
Y
}
# the most RedisBackups of the schedule ever Pending or Running at once (from the watch)
bk_max_concurrent() {
  awk '{ if ($1 == "DELETED" || $3 == "Completed" || $3 == "Failed") delete live[$2]; else live[$2] = 1
         n = 0; for (k in live) n++; if (n > max) max = n } END { print max + 0 }' "$W/sched-events"
}
bk_sched_completed() { $K -n $BKNS get redisbackups -l redis.io/scheduled-backup=sched -o jsonpath='{range .items[?(@.status.phase=="Completed")]}{.metadata.name}{"\n"}{end}' 2>/dev/null; }
bk_sched_created() { awk '$1 == "ADDED" {print $2}' "$W/sched-events" | sort -u; }
# Objects of sched's runs that no RedisBackup names any more, from 2020 (past the 1h
# retention): a complete run (as a Retain RedisBackup deleted by the history limit leaves
# it) and a failed attempt's partial dump; and objects under the prefix that are not
# sched's runs (schedule "sched-eu", a user's file), which retention must leave.
BK_ORPHANS="sched-20200101000000/manifest.json sched-20200101000000/dump.rdb sched-20200101000100.r1/dump.rdb"
BK_FOREIGN="sched-eu-20200101000000/manifest.json sched-20200101000000-notes.txt"
bk_plant() {
  local k
  for k in $BK_ORPHANS $BK_FOREIGN; do
    echo planted | bk_obj s3 put "$BKPATH/sc/$BKNS/$k" || return 1
  done
}
bk_sched_keys() { bk_obj s3 list "$BKPATH/sc/$BKNS/sched-" | awk '{print $1}'; }
bk_orphans_gone() {
  local k list; list=$(bk_sched_keys) || return 1
  for k in $BK_ORPHANS; do echo "$list" | grep -qx "$BKPATH/sc/$BKNS/$k" && return 1; done
  return 0
}

t_backup_schedule() {
  local first second man1 man2 n rv0 rv1 t_next k
  bk_setup
  bk_plant || fail "cannot plant the orphans"
  poll 150 eval '[ -n "$(bk_sched_completed)" ]' || fail "no completed scheduled backup: $(cat "$W/sched-events")"
  first=$(bk_sched_completed | head -1); man1=$(bk "$first" '{.status.manifestKey}')
  bk_stored_small s3 "$first"
  # retention 1h, from the store: the old runs go (manifest first) once a newer one is
  # complete, though no RedisBackup names them; the foreign objects stay
  poll 90 bk_orphans_gone || fail "objects past the retention left: $(bk_sched_keys | paste -sd' ')"
  for k in $BK_FOREIGN; do
    bk_sched_keys | grep -qx "$BKPATH/sc/$BKNS/$k" || fail "retention deleted $k, not one of sched's runs"
  done
  poll 100 eval '[ "$(bk_sched_created | wc -l)" -ge 2 ] && [ -n "$(bk_sched_completed | grep -vx '"$first"')" ]' ||
    fail "no second completed backup: $(cat "$W/sched-events")"
  second=$(bk_sched_completed | grep -vx "$first" | tail -1); man2=$(bk "$second" '{.status.manifestKey}')
  # successfulBackupsHistoryLimit 1: the first RedisBackup goes; its objects (Retain, within
  # the retention) stay, for retention to delete once they are 1h old
  poll 30 eval "! $K -n $BKNS get redisbackup $first" || fail "$first (past the history limit) not deleted"
  bk_obj s3 list "${man1%manifest.json}" | grep -q "^$man1 " || fail "$first's objects deleted within the retention"
  bk_stored_small s3 "$second"
  [ "$(bk_max_concurrent)" -le 1 ] || fail "two scheduled backups at once: $(cat "$W/sched-events")"
  [ "$(bk_sb sched '{.status.lastSuccessfulBackup}')" = "$second" ] || fail "lastSuccessfulBackup $(bk_sb sched '{.status.lastSuccessfulBackup}')"
  note "schedule: $(bk_sched_created | wc -l) backups created ($(bk_sched_created | paste -sd' ')), at most $(bk_max_concurrent) at once; the 2020 orphans deleted past the retention, $first's RedisBackup past the history limit (objects kept), $second kept"
  # suspend: nothing new past the next fire time, and no status write while nothing changes
  # (reconciles included)
  $K -n $BKNS patch redisscheduledbackup sched --type=merge -p '{"spec":{"suspend":true}}' >/dev/null
  poll 10 eval '[ -z "$(bk_sb sched "{.status.nextScheduleTime}")" ]' || fail "nextScheduleTime $(bk_sb sched '{.status.nextScheduleTime}') while suspended"
  n=$(bk_sched_created | wc -l); rv0=$(bk_sb sched '{.metadata.resourceVersion}')
  t_next=$(( ( $(date +%s) / 60 + 1 ) * 60 + 10 ))
  # a change of one of its RedisBackups reconciles the schedule: nothing to write
  $K -n $BKNS annotate redisbackup "$second" redis-operator.test/poke=1 >/dev/null
  poll 80 eval '[ $(date +%s) -ge '$t_next' ]'
  [ "$(bk_sched_created | wc -l)" = "$n" ] || fail "a backup created while suspended: $(bk_sched_created | paste -sd' ')"
  rv1=$(bk_sb sched '{.metadata.resourceVersion}')
  [ "$rv0" = "$rv1" ] || fail "the schedule was written while suspended (resourceVersion $rv0 -> $rv1)"
  kill "$(cat "$W/sched-watch.pid")" 2>/dev/null
  bk_obj s3 rm "$BKPATH/" >/dev/null; bk_obj azure rm "$BKPATH/" >/dev/null
}
# Object Lock before retention deletes (docs/backup.md "Object Lock and immutability"):
# a suspended schedule "lk" (retention 1h, never fires) on a bucket made with Object Lock;
# three runs of 2020 planted, the oldest's dump under a legal hold. Retention deletes the
# middle one, keeps the newest (always) and the held one (RetentionBlocked True,
# ObjectLocked, the run named, an Event); the hold released, the next pass deletes it and
# the condition turns False.
BK_LOCK_RUNS="lk-20200101000000 lk-20200102000000 lk-20200103000000"
bk_s3_curl() { # METHOD BUCKET/KEY?QUERY [CURL ARGS…]: a signed request (body: -d)
  local m=$1 u=$2; shift 2
  ( bk_env s3; curl -s -o /dev/null -w '%{http_code}' -X "$m" --aws-sigv4 "aws:amz:$S3_REGION:s3" \
      -u "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" "$@" "$S3_ENDPOINT/$u" )
}
bk_legal_hold() { # BUCKET KEY ON|OFF
  local body="<LegalHold><Status>$3</Status></LegalHold>"
  bk_s3_curl PUT "$1/$2?legal-hold=" -H "Content-MD5: $(printf '%s' "$body" | openssl md5 -binary | base64)" \
    -H "x-amz-content-sha256: $(printf '%s' "$body" | sha256sum | cut -c1-64)" --data-binary "$body"
}
bk_lock_keys() { ( bk_env s3; S3_BUCKET=$S3_BUCKET-lock "$BK_OBJTOOL" s3 list "$BKPATH/sc/$BKNS/lk-" ) | awk '{print $1}'; }
bk_lock_cond() { bk_sb lk "{.status.conditions[?(@.type==\"RetentionBlocked\")].$1}"; }
t_backup_retention_lock() {
  local bucket run code pre="$BKPATH/sc/$BKNS"
  if [ ! -e "$W/bk-setup" ]; then # alone (ONLY=): the namespace, Secrets and cluster sc only
    make -s BUILD="$BUILD" "$BUILD/test/objtool" >/dev/null || fail "cannot build objtool"
    newns $BKNS && bk_secrets && mkcluster $BKNS sc 1 || fail "setup"
  fi
  bucket=$( bk_env s3; echo "$S3_BUCKET-lock" )
  code=$(bk_s3_curl PUT "$bucket" -H "x-amz-bucket-object-lock-enabled: true" \
    -H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
  case $code in 200|409) ;; *) fail "lock-enabled bucket: HTTP $code" ;; esac
  for run in $BK_LOCK_RUNS; do
    echo '{"planted": true}' | ( bk_env s3; S3_BUCKET=$bucket "$BK_OBJTOOL" s3 put "$pre/$run/manifest.json" ) &&
      echo planted | ( bk_env s3; S3_BUCKET=$bucket "$BK_OBJTOOL" s3 put "$pre/$run/dump.rdb" ) || fail "plant $run"
  done
  [ "$(bk_legal_hold "$bucket" "$pre/lk-20200101000000/dump.rdb" ON)" = 200 ] || fail "legal hold not set"
  $K -n $BKNS apply -f - >/dev/null <<Y
apiVersion: redis.io/v1
kind: RedisScheduledBackup
metadata: {name: lk}
spec:
  schedule: "0 0 1 1 *"
  suspend: true
  clusterName: sc
  retention: 1h
  destination: $(bk_dest s3 "" "$bucket" bk-s3)
Y
  poll 60 eval '[ "$(bk_lock_cond reason)" = ObjectLocked ]' ||
    fail "RetentionBlocked: $(bk_sb lk '{.status.conditions}')"
  bk_lock_keys | grep -q lk-20200102000000/ && fail "the unlocked old run was not deleted: $(bk_lock_keys | paste -sd' ')"
  [ "$(bk_lock_keys | grep -c lk-20200101000000/)" = 2 ] || fail "the held run was not kept whole: $(bk_lock_keys | paste -sd' ')"
  [ "$(bk_lock_keys | grep -c lk-20200103000000/)" = 2 ] || fail "the newest run was deleted"
  [ "$(bk_lock_cond status)" = True ] && bk_lock_cond message | grep -q "lk-20200101000000/ (dump.rdb: legal hold)" ||
    fail "condition: $(bk_lock_cond status) $(bk_lock_cond message)"
  poll 30 eval '$K -n $BKNS get events --field-selector involvedObject.name=lk,reason=RetentionBlocked -o name | grep -q .' ||
    fail "no RetentionBlocked Event"
  note "retention with Object Lock: $(bk_lock_cond message)"
  # released: the next reconcile (a change of the schedule) deletes it
  [ "$(bk_legal_hold "$bucket" "$pre/lk-20200101000000/dump.rdb" OFF)" = 200 ] || fail "legal hold not released"
  $K -n $BKNS annotate redisscheduledbackup lk redis-operator.test/poke=1 >/dev/null
  poll 60 eval '[ "$(bk_lock_cond reason)" = NothingBlocked ]' || fail "after release: $(bk_lock_cond reason) $(bk_lock_cond message)"
  bk_lock_keys | grep -q lk-20200101000000/ && fail "the released run was not deleted"
  [ "$(bk_lock_keys | grep -c lk-20200103000000/)" = 2 ] || fail "the newest run was deleted"
  $K -n $BKNS delete redisscheduledbackup lk >/dev/null
  ( bk_env s3; S3_BUCKET=$bucket "$BK_OBJTOOL" s3 rm "$BKPATH/" ) >/dev/null
}
# as bk_stored, for sc's small dumps
bk_stored_small() {
  local p=$1 b=$2 man size
  man=$(bk "$b" '{.status.manifestKey}'); size=$(bk "$b" '{.status.size}')
  [ -n "$man" ] && [ "${size:-0}" -gt 0 ] || fail "$b: manifestKey '$man', size '$size'"
  bk_obj "$p" list "${man%manifest.json}" | grep -q "^$man " || fail "$b: no manifest stored"
  [ "$(bk_obj "$p" list "${man%manifest.json}" | awk -v k="${man%manifest.json}dump.rdb" '$1 == k {print $2}')" = "$size" ] ||
    fail "$b: dump size"
}
