# Sourced by test/integration/instance.sh: backups and restore (instance/backup.c,
# instance/restore.c, docs/backup.md) against the S3-compatible server and Azurite of
# test/env (build/env/s3.env, build/env/azure.env). INSTANCE_ONLY=backup runs only these;
# BACKUP_ONLY=aof then only the method aof checks.
OBJTOOL=$(pwd)/$BUILD/test/objtool

# the storage settings of provider P, in this shell (the test's own credentials)
store_env() { set -a; . "${ENV_DIR:-build/env}/$1.env"; set +a; }
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
backup_body() { # P NAME PATH [ENDPOINT] [WRONG-SECRET] [METHOD]
  jq -nc --arg n "$2" --argjson d "$(dest "$1" "$3" "${4:-}")" --argjson c "$(creds "$1" "${5:-}")" \
    --arg m "${6:-rdb}" '{name: $n, method: $m, destination: $d, credentials: $c}'
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
digest() { # POD [PATTERN]: keys and a digest of every value (bash-side, order-independent)
  local f=$W/digest.$1
  rcli "$1" --scan --pattern "${2:-*}" | sort >"$f"
  sed 's/^/GET /' "$f" | rcli "$1" | paste -d' ' "$f" - | sha256sum | cut -c1-64
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

dbsize_gt() { [ "$(rcli "$1" DBSIZE)" -gt "$2" ]; }
restore_start() { # P POD CLUSTER NAME MANIFEST-KEY PATH [STORAGE]: a new cluster restoring it
  local p=$1 pod=$2 c=$3 src
  mkcluster "$c" redis 1 "${7:-pvc}"; mkpod "$pod" "$c"; set_primary "$c" "$pod"
  creds_dir "$p" "$W/$pod/restore-creds"
  src=$(jq -nc --arg n "$4" --arg m "$5" --argjson d "$(dest "$p" "$6")" '{name: $n, manifestKey: $m, destination: $d}')
  start_mgr "$pod" "$c" env REDIS_OPERATOR_RESTORE_SOURCE="$src" REDIS_OPERATOR_RESTORE_CREDENTIALS_DIR="$W/$pod/restore-creds"
}

# method aof: keys written before the backup, a writer (w:1, w:2, ... each acknowledged
# before the next) running through it; the restore must hold every seeded key with its
# value, every w:n acknowledged before the POST, and w:1..k with no gap (one instant).
aof_roundtrip() { # P
  local p=$1 c="ak$RANDOM" pod name path=it-$$ out man key k0 k n pod2 c2 wpid
  store_env "$p"; pod=$c-0; name="$NS/aof"
  seed_primary "$pod" "$c" || { echo "seeding failed"; return 1; }
  is "$pod" .backup null || return 1
  [ "$(rcli "$pod" CONFIG GET appendonly | tail -1)" = yes ] || { echo "appendonly is not yes"; return 1; }
  "$WRITER" 6 redis-operator "$OPPW" "127.0.0.1:$(port "$pod" 1)" >"$W/$c.writer" 2>&1 & wpid=$!
  poll 30 dbsize_gt "$pod" 2100 || { echo "the writer does not write"; return 1; }
  k0=$(( $(rcli "$pod" DBSIZE) - 2012 ))
  out=$(post "$pod" backup "$(backup_body "$p" "$name" "$path" "" "" aof)")
  case $out in 202\ *) ;; *) echo "POST: $out"; return 1 ;; esac
  poll 120 eq completed bphase "$pod" || { echo "not completed: $(jst "$pod" .backup)"; return 1; }
  wait "$wpid" || { echo "writer: $(cat "$W/$c.writer")"; return 1; }
  echo "info instance: $p aof backup of $(jst "$pod" .backup.size) bytes (tar.gz), $k0 writer keys acknowledged before the POST; writer: $(cat "$W/$c.writer")" >&3
  key=$(jst "$pod" .backup.key); man=$(jst "$pod" .backup.manifestKey)
  [ "$key" = "$path/$c/$name/appendonlydir.tar.gz" ] || { echo "key $key"; return 1; }
  objtool "$p" get "$man" >"$W/$c.manifest" || return 1
  [ "$(jq -r '.method + " " + .file' "$W/$c.manifest")" = "aof appendonlydir.tar.gz" ] || { cat "$W/$c.manifest"; return 1; }
  objtool "$p" get "$key" >"$W/$c.tgz" || return 1
  [ "$(sha256sum <"$W/$c.tgz" | cut -c1-64)" = "$(jq -r .sha256 "$W/$c.manifest")" ] || { echo "archive sha"; return 1; }
  [ "$(stat -c %s "$W/$c.tgz")" = "$(jq -r .size "$W/$c.manifest")" ] || { echo "archive size"; return 1; }
  tar -tzf "$W/$c.tgz" >"$W/$c.tlist" || { echo "GNU tar cannot list it"; return 1; }
  grep -qx 'appendonlydir/appendonly.aof.manifest' "$W/$c.tlist" && grep -q '\.base\.rdb$' "$W/$c.tlist" || { cat "$W/$c.tlist"; return 1; }
  c2="ar$RANDOM"; pod2=$c2-0
  restore_start "$p" "$pod2" "$c2" "$name" "$man" "$path"
  poll 60 ready "$pod2" || { echo "restored pod not ready: $(jst "$pod2" .restore)"; return 1; }
  is "$pod2" .restore.phase completed && is "$pod2" .restore.sha256 "$(jq -r .sha256 "$W/$c.manifest")" || return 1
  [ ! -e "$W/$pod2/data/dump.rdb" ] && [ -d "$W/$pod2/data/appendonlydir" ] || { ls -la "$W/$pod2/data"; return 1; }
  [ "$(digest "$pod2" 'key:*')" = "$(digest "$pod" 'key:*')" ] && [ "$(digest "$pod2" 'big:*')" = "$(digest "$pod" 'big:*')" ] || { echo "seeded values differ"; return 1; }
  k=$(rcli "$pod2" --scan --pattern 'w:*' | sed 's/^w://' | sort -n | tail -1); n=$(rcli "$pod2" --scan --pattern 'w:*' | wc -l)
  [ "${k:-0}" -ge "$k0" ] || { echo "restored w:1..$k, but w:1..$k0 were acknowledged before the backup"; return 1; }
  [ "$n" = "$k" ] || { echo "restored $n writer keys up to w:$k: a gap (not one instant)"; return 1; }
  [ "$(rcli "$pod2" GET "w:$k")" = "$k" ] && [ "$(rcli "$pod2" DBSIZE)" = $((2012 + k)) ] || return 1
  echo "info instance: $p aof restore: w:1..$k restored ($k0 acknowledged before the POST)" >&3
  stop_mgr "$pod2" >/dev/null # a restart reads the same AOF
  start_mgr "$pod2" "$c2"
  poll 30 ready "$pod2" && [ "$(rcli "$pod2" DBSIZE)" = $((2012 + k)) ] || { echo "after restart: $(rcli "$pod2" DBSIZE)"; return 1; }
  echo "$c $pod $path $name" >"$W/aof-$p"
}

aof_refused_appendonly_off() { # P: emptyDir runs appendonly no
  local p=$1 c="ao$RANDOM" pod; store_env "$p"; pod=$c-0
  mkcluster "$c" redis 1 emptyDir; mkpod "$pod" "$c"; set_primary "$c" "$pod"; start_mgr "$pod" "$c"
  poll 30 ready "$pod" || return 1
  post "$pod" backup "$(backup_body "$p" "$NS/aofoff" "it-$$" "" "" aof)" | grep -q '^202 ' || return 1
  poll 30 eq failed bphase "$pod" || return 1
  is "$pod" .backup.retryable false && jst "$pod" .backup.error | grep -q '^spec.method: aof needs appendonly yes' || { jst "$pod" .backup.error; return 1; }
  stop_mgr "$pod" >/dev/null
}

# an archive with a correct manifest (size, sha256) but an entry the restore must refuse
aof_malicious() { # P KIND: symlink | dotdot | outside
  local p=$1 kind=$2 c2="am$RANDOM" pod2 path=it-$$ pre man sha size
  store_env "$p"; pod2=$c2-0; pre="$path/mal-$c2"; man="$pre/manifest.json"
  python3 - "$kind" "$W/$c2.tgz" <<'PY' || return 1
import io, sys, tarfile
kind, out = sys.argv[1], sys.argv[2]
with tarfile.open(out, "w:gz", format=tarfile.USTAR_FORMAT) as t:
    def add(name, data):
        i = tarfile.TarInfo(name); i.size = len(data); i.mode = 0o600
        t.addfile(i, io.BytesIO(data))
    d = tarfile.TarInfo("appendonlydir"); d.type = tarfile.DIRTYPE; d.mode = 0o700; t.addfile(d)
    add("appendonlydir/appendonly.aof.manifest", b"file appendonly.aof.1.base.rdb seq 1 type b\n")
    if kind == "symlink":
        l = tarfile.TarInfo("appendonlydir/appendonly.aof.1.base.rdb"); l.type = tarfile.SYMTYPE
        l.linkname = "/etc/passwd"; t.addfile(l)
    elif kind == "dotdot":
        add("appendonlydir/../../escaped", b"x")
    else:
        add("escaped", b"x")
PY
  objtool "$p" put "$pre/appendonlydir.tar.gz" <"$W/$c2.tgz" || return 1
  sha=$(sha256sum <"$W/$c2.tgz" | cut -c1-64); size=$(stat -c %s "$W/$c2.tgz")
  jq -nc --arg s "$sha" --argjson z "$size" '{format: 1, cluster: "x", name: "x/y", method: "aof", file: "appendonlydir.tar.gz", size: $z, sha256: $s}' | objtool "$p" put "$man" || return 1
  restore_start "$p" "$pod2" "$c2" "$NS/mal" "$man" "$path"
  poll 30 eq failed jst "$pod2" .restore.phase || { jst "$pod2" .restore; return 1; }
  jst "$pod2" .restore.error >"$W/$c2.err"
  case $kind in
    symlink) grep -q 'appendonlydir/appendonly.aof.1.base.rdb: a symbolic link' "$W/$c2.err" ;;
    dotdot) grep -q 'appendonlydir/../../escaped: a "\.\." path component' "$W/$c2.err" ;;
    outside) grep -q 'archive entry escaped: outside appendonlydir' "$W/$c2.err" ;;
  esac || { cat "$W/$c2.err"; return 1; }
  is "$pod2" .ready false && is "$pod2" .server.pid null || return 1
  [ -z "$(ls -A "$W/$pod2/data/" | grep -v '^redis\.conf$\|^redis-operator\.')" ] || { ls -la "$W/$pod2/data/"; return 1; }
  [ ! -e "$W/escaped" ] && [ ! -e "$W/$pod2/escaped" ] || return 1
  stop_mgr "$pod2" >/dev/null
}

aof_restore_refused_appendonly_off() { # P: an aof backup into a cluster that runs appendonly no
  local p=$1 c pod path name c2="an$RANDOM" pod2; store_env "$p"; read -r c pod path name <"$W/aof-$p" || return 1
  pod2=$c2-0
  restore_start "$p" "$pod2" "$c2" "$name" "$path/$c/$name/manifest.json" "$path" emptyDir
  poll 30 eq failed jst "$pod2" .restore.phase || return 1
  jst "$pod2" .restore.error | grep -q 'is method aof and this cluster runs with appendonly no' || { jst "$pod2" .restore.error; return 1; }
  is "$pod2" .server.pid null || return 1
  stop_mgr "$pod2" >/dev/null
}

backup_suite() {
  local p
  make -s BUILD="$BUILD" "$BUILD/test/objtool" >/dev/null || { check_fail "cannot build objtool"; return; }
  check "backup: a manager restarted during a backup reports it failed, retryable" backup_restart_recovers
  [ "${BACKUP_ONLY:-}" = aof ] || for p in s3 azure; do
    [ -f "${ENV_DIR:-build/env}/$p.env" ] || { check_fail "backup $p: ${ENV_DIR:-build/env}/$p.env missing"; continue; }
    check "backup $p: BGSAVE streamed, manifest last, idempotent POST; restore into a new cluster has every key" backup_roundtrip "$p" 3>&1 || continue
    check "backup $p: a wrong credential fails, not retryable, the Code named, never logged" backup_wrong_credentials "$p"
    check "backup $p: unreachable storage fails retryable after retries" backup_unreachable "$p"
    check "backup $p: a second backup while one runs is 409 naming it" backup_conflict "$p"
    check "restore $p: a corrupt dump is refused, the server never started, retried" restore_refuses "$p" corrupt
    check "restore $p: a missing manifest is refused, the server never started" restore_refuses "$p" missing
  done
  for p in s3 azure; do
    [ -f "${ENV_DIR:-build/env}/$p.env" ] || continue
    check "backup $p aof: BGREWRITEAOF, appendonlydir as tar.gz; restore has every key acknowledged before, no gap" aof_roundtrip "$p" 3>&1 || continue
    check "restore $p aof: into a cluster with appendonly no is refused, the server never started" aof_restore_refused_appendonly_off "$p"
    for k in symlink dotdot outside; do
      check "restore $p aof: an archive with a $k entry is refused naming it, nothing written" aof_malicious "$p" "$k"
    done
  done
  check "backup aof: appendonly no (emptyDir) is refused naming spec.method, not retryable" aof_refused_appendonly_off s3
  store_env s3; objtool s3 rm "it-$$/" >/dev/null 2>&1
  store_env azure; objtool azure rm "it-$$/" >/dev/null 2>&1
}
