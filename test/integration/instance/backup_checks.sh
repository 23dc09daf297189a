# Sourced by test/integration/instance.sh: backups and restore (instance/backup.c,
# instance/restore.c, docs/backup.md) against the S3-compatible server and Azurite of
# test/env (build/env/s3.env, build/env/azure.env). INSTANCE_ONLY=backup runs only these.
OBJTOOL=$(pwd)/$BUILD/test/objtool

# the storage settings of provider P, in this shell (the test's own credentials)
store_env() { set -a; . "build/env/$1.env"; set +a; }
objtool() { "$OBJTOOL" "$@"; }
dest() { # P PATH [ENDPOINT]
  if [ "$1" = s3 ]; then
    jq -nc --arg b "$S3_BUCKET" --arg p "$2" --arg e "${3:-$S3_ENDPOINT}" --arg r "$S3_REGION" \
      '{s3: {bucket: $b, path: $p, endpoint: $e, region: $r, forcePathStyle: true}}'
  else
    jq -nc --arg c "$AZURE_CONTAINER" --arg p "$2" --arg e "${3:-$AZURE_BLOB_ENDPOINT}" \
      --arg a "$AZURE_STORAGE_ACCOUNT" '{azure: {container: $c, path: $p, endpoint: $e, accountName: $a}}'
  fi
}
creds() { # P [WRONG]
  if [ "$1" = s3 ]; then
    jq -nc --arg i "$AWS_ACCESS_KEY_ID" --arg s "${2:-$AWS_SECRET_ACCESS_KEY}" \
      '{AWS_ACCESS_KEY_ID: $i, AWS_SECRET_ACCESS_KEY: $s}'
  else
    jq -nc --arg a "$AZURE_STORAGE_ACCOUNT" --arg k "${2:-$AZURE_STORAGE_KEY}" \
      '{AZURE_STORAGE_ACCOUNT: $a, AZURE_STORAGE_KEY: $k}'
  fi
}
creds_dir() { # P DIR: the Secret volume a restore reads
  mkdir -p "$2"
  if [ "$1" = s3 ]; then
    printf '%s' "$AWS_ACCESS_KEY_ID" >"$2/AWS_ACCESS_KEY_ID"
    printf '%s' "$AWS_SECRET_ACCESS_KEY" >"$2/AWS_SECRET_ACCESS_KEY"
  else
    printf '%s' "$AZURE_STORAGE_ACCOUNT" >"$2/AZURE_STORAGE_ACCOUNT"
    printf '%s' "$AZURE_STORAGE_KEY" >"$2/AZURE_STORAGE_KEY"
  fi
}
backup_body() { # P NAME PATH [ENDPOINT] [WRONG-SECRET]
  jq -nc --arg n "$2" --argjson d "$(dest "$1" "$3" "${4:-}")" --argjson c "$(creds "$1" "${5:-}")" \
    '{name: $n, method: "rdb", destination: $d, credentials: $c}'
}
bphase() { jst "$1" '.backup.phase'; }

# a primary with N small keys and 12 x 1 MiB values (a multipart upload)
seed_primary() { # POD CLUSTER
  mkcluster "$2" redis 1 pvc; mkpod "$1" "$2"; set_primary "$2" "$1"; start_mgr "$1" "$2"
  poll 30 ready "$1" || return 1
  seq 1 2000 | sed 's/.*/SET key:& value-&/' | rcli "$1" >/dev/null
  local i
  for i in $(seq 1 12); do head -c 786432 /dev/urandom | base64 -w0 | rcli "$1" -x SET "big:$i" >/dev/null; done
  [ "$(rcli "$1" DBSIZE)" = 2012 ]
}
digest() { # POD: keys and a digest of every value (bash-side, order-independent)
  local k
  for k in $(rcli "$1" --scan | sort); do printf '%s ' "$k"; rcli "$1" GET "$k" | sha256sum | cut -c1-16; done | sha256sum | cut -c1-64
}

backup_roundtrip() { # P
  local p=$1 c="bk$RANDOM" pod name path=it-$$ out t0 t1 key man rss src pod2 c2
  store_env "$p"; pod=$c-0; name="$NS/full"
  seed_primary "$pod" "$c" || { echo "seeding failed"; return 1; }
  t0=$(date +%s%N)
  out=$(post "$pod" backup "$(backup_body "$p" "$name" "$path")")
  case $out in 202\ *) ;; *) echo "first POST: $out"; return 1 ;; esac
  out=$(post "$pod" backup "$(backup_body "$p" "$name" "$path")")
  case $out in 200\ *) ;; *) echo "repeat POST (idempotent): $out"; return 1 ;; esac
  poll 60 eq completed bphase "$pod" || { echo "not completed: $(jst "$pod" .backup)"; return 1; }
  t1=$(date +%s%N)
  rss=$(awk '/VmHWM/ {print $2}' "/proc/$(mgr_pid "$pod")/status")
  echo "info instance: $p backup of $(jst "$pod" .backup.size) bytes: $(( (t1 - t0) / 1000000 )) ms; manager peak RSS ${rss} KiB" >&3
  out=$(post "$pod" backup "$(backup_body "$p" "$name" "$path")")
  case $out in 200\ *completed*) ;; *) echo "POST after completion: $out"; return 1 ;; esac
  key=$(jst "$pod" .backup.key); man=$(jst "$pod" .backup.manifestKey)
  [ "$key" = "$path/$c/$name/dump.rdb" ] && [ "$man" = "$path/$c/$name/manifest.json" ] || { echo "keys $key $man"; return 1; }
  objtool "$p" list "$path/$c/$name/" >"$W/$c.list" || return 1
  [ "$(wc -l <"$W/$c.list")" = 2 ] || { cat "$W/$c.list"; return 1; }
  objtool "$p" get "$man" >"$W/$c.manifest" || return 1
  [ "$(jq -r .sha256 "$W/$c.manifest")" = "$(jst "$pod" .backup.sha256)" ] || { echo "manifest sha"; return 1; }
  [ "$(objtool "$p" get "$key" | sha256sum | cut -c1-64)" = "$(jst "$pod" .backup.sha256)" ] || { echo "dump sha"; return 1; }
  [ "$(jq -r .replId "$W/$c.manifest")" = "$(jst "$pod" .backup.replId)" ] || return 1
  # restore into a brand-new cluster
  c2="rs$RANDOM"; pod2=$c2-0
  mkcluster "$c2" redis 1 pvc; mkpod "$pod2" "$c2"; set_primary "$c2" "$pod2"
  creds_dir "$p" "$W/$pod2/restore-creds"
  src=$(jq -nc --arg n "$name" --arg m "$man" --argjson d "$(dest "$p" "$path")" '{name: $n, manifestKey: $m, destination: $d}')
  start_mgr "$pod2" "$c2" env REDIS_OPERATOR_RESTORE_SOURCE="$src" REDIS_OPERATOR_RESTORE_CREDENTIALS_DIR="$W/$pod2/restore-creds"
  poll 60 ready "$pod2" || { echo "restored pod not ready: $(jst "$pod2" .restore)"; return 1; }
  is "$pod2" .restore.phase completed || return 1
  [ "$(rcli "$pod2" DBSIZE)" = 2012 ] || { echo "restored $(rcli "$pod2" DBSIZE) keys"; return 1; }
  [ "$(digest "$pod2")" = "$(digest "$pod")" ] || { echo "values differ"; return 1; }
  # and a restart keeps the data (appendonly yes read the restored AOF base)
  stop_mgr "$pod2" >/dev/null
  start_mgr "$pod2" "$c2" env REDIS_OPERATOR_RESTORE_SOURCE="$src" REDIS_OPERATOR_RESTORE_CREDENTIALS_DIR="$W/$pod2/restore-creds"
  poll 30 ready "$pod2" && [ "$(rcli "$pod2" DBSIZE)" = 2012 ] || { echo "after restart: $(rcli "$pod2" DBSIZE)"; return 1; }
  echo "$c $pod $path $name" >"$W/backup-$p"
}

backup_wrong_credentials() { # P
  local p=$1 pod code; store_env "$p"; read -r _ pod _ _ <"$W/backup-$p" || return 1
  post "$pod" backup "$(backup_body "$p" "$NS/wrongcred" "it-$$" "" "bm90LXRoZS1rZXk=")" | grep -q '^202 ' || return 1
  poll 30 eq failed bphase "$pod" || return 1
  is "$pod" .backup.retryable false || return 1
  code=$(jst "$pod" .backup.error); echo "$code" >"$W/wrongcred.err"
  echo "$code" | grep -Eq '403 (SignatureDoesNotMatch|InvalidAccessKeyId|AuthenticationFailed|AuthorizationFailure|AccessDenied)' || { echo "$code"; return 1; }
  ! grep -q "bm90LXRoZS1rZXk" "$W/$pod/log"
}

backup_unreachable() { # P
  local p=$1 pod; store_env "$p"; read -r _ pod _ _ <"$W/backup-$p" || return 1
  post "$pod" backup "$(backup_body "$p" "$NS/unreach" "it-$$" "http://127.0.0.1:1")" | grep -q '^202 ' || return 1
  poll 60 eq failed bphase "$pod" || return 1
  is "$pod" .backup.retryable true && [ "$(jst "$pod" .backup.attempts)" -ge 2 ]
}

backup_conflict() { # P: a second name while one runs is 409 naming it
  local p=$1 pod out; store_env "$p"; read -r _ pod _ _ <"$W/backup-$p" || return 1
  post "$pod" backup "$(backup_body "$p" "$NS/slow" "it-$$" "http://127.0.0.1:1")" | grep -q '^202 ' || return 1
  out=$(post "$pod" backup "$(backup_body "$p" "$NS/other" "it-$$")")
  poll 60 eq failed bphase "$pod"
  case $out in 409\ *"$NS/slow"*) ;; *) echo "$out"; return 1 ;; esac
}

restore_refuses() { # P KIND: corrupt | missing
  local p=$1 kind=$2 c pod path name man src c2="rf$RANDOM" pod2
  store_env "$p"; read -r c pod path name <"$W/backup-$p" || return 1
  man="$path/$c/$name/manifest.json"
  if [ "$kind" = corrupt ]; then
    man="$path/corrupt-$c2/manifest.json"
    objtool "$p" get "$path/$c/$name/dump.rdb" >"$W/$c2.rdb" || return 1
    head -c 100000 "$W/$c2.rdb" | objtool "$p" put "$path/corrupt-$c2/dump.rdb" || return 1
    objtool "$p" get "$path/$c/$name/manifest.json" | objtool "$p" put "$man" || return 1
  else
    man="$path/none-$c2/manifest.json"
  fi
  pod2=$c2-0; mkcluster "$c2" redis 1 pvc; mkpod "$pod2" "$c2"; set_primary "$c2" "$pod2"
  creds_dir "$p" "$W/$pod2/restore-creds"
  src=$(jq -nc --arg n "$name" --arg m "$man" --argjson d "$(dest "$p" "$path")" '{name: $n, manifestKey: $m, destination: $d}')
  start_mgr "$pod2" "$c2" env REDIS_OPERATOR_RESTORE_SOURCE="$src" REDIS_OPERATOR_RESTORE_CREDENTIALS_DIR="$W/$pod2/restore-creds"
  poll 30 eq failed jst "$pod2" .restore.phase || return 1
  poll 10 eq 2 jst "$pod2" .restore.attempts || return 1 # retried with back-off
  is "$pod2" .ready false && is "$pod2" .server.pid null && is "$pod2" .state booting || return 1
  ! ls "$W/$pod2/data/" | grep -q 'dump.rdb\|appendonlydir' || return 1
  if [ "$kind" = corrupt ]; then jst "$pod2" .restore.error | grep -q 'is corrupt: ' || return 1
  else jst "$pod2" .restore.error | grep -Eq '404|NoSuchKey|BlobNotFound' || return 1; fi
  stop_mgr "$pod2" >/dev/null
}

backup_restart_recovers() { # a state file left "running" (a killed manager) reads failed, retryable
  local c="kr$RANDOM" pod; pod=$c-0
  mkcluster "$c" redis 1 pvc; mkpod "$pod" "$c"; set_primary "$c" "$pod"; secrets "$pod"
  printf '%s' '{"name":"x/y","phase":"running","startedAt":"2024-01-01T00:00:00Z","attempts":1}' \
    >"$W/$pod/data/redis-operator.backup.json"
  start_mgr "$pod" "$c"
  poll 30 ready "$pod" || return 1
  is "$pod" .backup.phase failed && is "$pod" .backup.retryable true &&
    jst "$pod" .backup.error | grep -q restarted &&
    grep -q '"phase":"failed"' "$W/$pod/data/redis-operator.backup.json"
}

backup_suite() {
  local p
  make -s BUILD="$BUILD" "$BUILD/test/objtool" >/dev/null || { check_fail "cannot build objtool"; return; }
  check "backup: a manager restarted during a backup reports it failed, retryable" backup_restart_recovers
  for p in s3 azure; do
    [ -f "build/env/$p.env" ] || { check_fail "backup $p: build/env/$p.env missing"; continue; }
    check "backup $p: BGSAVE streamed, manifest last, idempotent POST; restore into a new cluster has every key" backup_roundtrip "$p" || continue
    check "backup $p: a wrong credential fails, not retryable, the Code named, never logged" backup_wrong_credentials "$p"
    check "backup $p: unreachable storage fails retryable after retries" backup_unreachable "$p"
    check "backup $p: a second backup while one runs is 409 naming it" backup_conflict "$p"
    check "restore $p: a corrupt dump is refused, the server never started, retried" restore_refuses "$p" corrupt
    check "restore $p: a missing manifest is refused, the server never started" restore_refuses "$p" missing
  done
  store_env s3; objtool s3 rm "it-$$/" >/dev/null 2>&1
  store_env azure; objtool azure rm "it-$$/" >/dev/null 2>&1
}
