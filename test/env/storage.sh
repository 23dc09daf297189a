#!/usr/bin/env bash
# Object storage of the local environment, for backup tests: a real S3 server (versitygw,
# posix backend: buckets are directories) and the Azure Blob emulator (Azurite), both on
# the bridge address so that pods reach them like they reach the API server.
#
#   storage.sh build    build versitygw (go-tool.sh) and install Azurite (npm) into the
#                       cache, once per version (test/env/build.sh calls it: env-build)
#   storage.sh up       start both (already up and ready: reused), create the bucket and
#                       the container, write build/env/s3.env and build/env/azure.env
#   storage.sh down     stop both (by pid), remove their data and the two env files
#   storage.sh status   exit 0 when both answer
#
# up.sh and down.sh call up and down; they work alone too, without touching the control
# plane. The S3 credentials are made once and kept (like the PKI) in build/env/storage/.
# Env: ENV_S3_PORT (7070), ENV_AZURE_PORT (10000), ENV_S3_REGION (ro-local-1),
#      ENV_S3_BUCKET, ENV_AZURE_CONTAINER (redis-operator-backups), STORAGE_WAIT (60 s).
set -euo pipefail
. "$(dirname "$0")/common.sh"
S3_REGION=${ENV_S3_REGION:-ro-local-1}
S3_BUCKET=${ENV_S3_BUCKET:-redis-operator-backups}
AZURE_CONTAINER=${ENV_AZURE_CONTAINER:-redis-operator-backups}
# Azurite's well-known development account (public, documented by Microsoft).
AZURE_ACCOUNT=devstoreaccount1
AZURE_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
STORAGE_WAIT=${STORAGE_WAIT:-60}
state="$ENV_DIR/storage"
S3_DATA="$ENV_DIR/s3"
AZURITE_DATA="$ENV_DIR/azurite"
S3_ENV="$ENV_DIR/s3.env"
AZURE_ENV="$ENV_DIR/azure.env"
VGW_PKG=github.com/versity/versitygw/cmd/versitygw
VGW_BIN=$(bash "$here/go-tool.sh" --path versitygw "$VERSITYGW_VERSION")
AZURITE_DIR="$CACHE/azurite/$AZURITE_VERSION-$(sha256sum "$here/azurite/package-lock.json" | cut -c1-12)"
AZURITE_BIN="$AZURITE_DIR/node_modules/.bin/azurite-blob"
s3_url="http://$ENV_HOST_IP:$ENV_S3_PORT"
azure_url="http://$ENV_HOST_IP:$ENV_AZURE_PORT/$AZURE_ACCOUNT"

build_versitygw() {
  GO_TOOL_LOG=env-build GO_TOOL_CHECK=--version bash "$here/go-tool.sh" versitygw "$VERSITYGW_VERSION" "$VGW_PKG" \
    "-X main.Version=$VERSITYGW_VERSION -X main.Build=$VERSITYGW_VERSION -X main.BuildTime=1970-01-01_00:00:00AM" >/dev/null
}
# npm ci from test/env/azurite/package-lock.json: every one of Azurite's ~370 packages at
# the version and checksum recorded there. The cache key carries the lock file's hash.
build_azurite() {
  [ -x "$AZURITE_BIN" ] && return 0
  command -v npm >/dev/null || die "npm is not installed (needed for Azurite): make deps"
  grep -q "\"azurite\": \"$AZURITE_VERSION\"" "$here/azurite/package.json" ||
    die "test/env/azurite/package.json does not pin azurite $AZURITE_VERSION (versions.env)"
  local tmp="$AZURITE_DIR.tmp.$$" start
  start=$(date +%s)
  log "installing Azurite $AZURITE_VERSION into $AZURITE_DIR (npm ci)"
  rm -rf "$tmp"; mkdir -p "$tmp"
  cp "$here/azurite/package.json" "$here/azurite/package-lock.json" "$tmp/"
  # No install scripts: Azurite needs none.
  if ! (cd "$tmp" && npm ci --no-audit --no-fund --omit=dev --ignore-scripts --loglevel=error >&2); then
    rm -rf "$tmp"; die "npm ci of azurite $AZURITE_VERSION failed"
  fi
  [ "$("$tmp/node_modules/.bin/azurite-blob" --version 2>/dev/null)" = "$AZURITE_VERSION" ] ||
    { rm -rf "$tmp"; die "the installed azurite-blob is not $AZURITE_VERSION"; }
  mkdir -p "$(dirname "$AZURITE_DIR")"
  rm -rf "$AZURITE_DIR"; mv "$tmp" "$AZURITE_DIR"
  log "Azurite installed in $(( $(date +%s) - start ))s"
}

# name: the pid file's process is alive (pid_alive) and answers.
s3_ready() { curl -sf --max-time 2 -o /dev/null "$s3_url/health"; }
azure_ready() { # any HTTP answer: Azurite has no health endpoint; 000 is no answer
  local c; c=$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "$azure_url?comp=list" 2>/dev/null) || true
  [ -n "$c" ] && [ "$c" != 000 ]
}
stop_one() {
  local f="$ENV_DIR/$1.pid" pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}
credentials() {
  mkdir -p "$state"
  if [ ! -s "$state/s3.credentials" ]; then
    (umask 077; printf '%s %s\n' "ro$(openssl rand -hex 9)" "$(openssl rand -hex 20)" >"$state/s3.credentials")
  fi
  read -r S3_KEY S3_SECRET <"$state/s3.credentials"
}
client() { # svc args...: storage-client.sh with this environment's settings
  S3_ENDPOINT=$s3_url S3_REGION=$S3_REGION AWS_ACCESS_KEY_ID=$S3_KEY AWS_SECRET_ACCESS_KEY=$S3_SECRET \
    AZURE_BLOB_ENDPOINT=$azure_url AZURE_STORAGE_ACCOUNT=$AZURE_ACCOUNT AZURE_STORAGE_KEY=$AZURE_KEY \
    bash "$here/storage-client.sh" "$@"
}
# what url: create the bucket or the container; one that exists already is fine.
create() {
  local out
  out=$(client "$1" PUT "$2" 2>&1) && return 0
  grep -Eq 'BucketAlreadyOwnedByYou|ContainerAlreadyExists' <<<"$out" && return 0
  echo "$out" >&2
  return 1
}
write_env() { # file lines...: atomically, mode 0600 (the files hold credentials)
  local f=$1; shift
  (umask 077; printf '%s\n' "$@" >"$f.tmp.$$") && mv "$f.tmp.$$" "$f"
}

start_versitygw() {
  mkdir -p "$S3_DATA" "$ENV_DIR/logs"
  # Credentials through the environment, not argv (ps shows argv).
  ROOT_ACCESS_KEY_ID=$S3_KEY ROOT_SECRET_ACCESS_KEY=$S3_SECRET \
    setsid "$VGW_BIN" --port "$ENV_HOST_IP:$ENV_S3_PORT" --region "$S3_REGION" --health /health \
    posix "$S3_DATA" >"$ENV_DIR/logs/versitygw.log" 2>&1 </dev/null 8>&- 9>&- &
  echo $! >"$ENV_DIR/versitygw.pid"
  wait_for versitygw "$STORAGE_WAIT" s3_ready
}
start_azurite() {
  mkdir -p "$AZURITE_DATA" "$ENV_DIR/logs"
  # API versions newer than this Azurite's newest (2025-11-05 for 3.35) are accepted, as
  # the real service accepts them; strict mode otherwise (no --loose).
  setsid "$AZURITE_BIN" --blobHost "$ENV_HOST_IP" --blobPort "$ENV_AZURE_PORT" --location "$AZURITE_DATA" \
    --disableTelemetry --skipApiVersionCheck >"$ENV_DIR/logs/azurite.log" 2>&1 </dev/null 8>&- 9>&- &
  echo $! >"$ENV_DIR/azurite.pid"
  wait_for azurite "$STORAGE_WAIT" azure_ready
}

up() {
  ip -4 addr show 2>/dev/null | grep -q "inet $ENV_HOST_IP/" || die "storage: $ENV_HOST_IP is on no interface (bridge $ENV_BRIDGE): make env-up"
  build_versitygw
  build_azurite
  credentials
  local start started=""
  start=$(date +%s%N)
  if pid_alive versitygw && s3_ready; then :; else
    stop_one versitygw; start_versitygw; started+=" versitygw"
  fi
  if pid_alive azurite && azure_ready; then :; else
    stop_one azurite; start_azurite; started+=" azurite"
  fi
  create s3 "/$S3_BUCKET" || die "storage: could not create the bucket $S3_BUCKET"
  create azure "/$AZURE_CONTAINER?restype=container" || die "storage: could not create the container $AZURE_CONTAINER"
  write_env "$S3_ENV" "S3_ENDPOINT=$s3_url" "S3_REGION=$S3_REGION" "AWS_ACCESS_KEY_ID=$S3_KEY" \
    "AWS_SECRET_ACCESS_KEY=$S3_SECRET" "S3_BUCKET=$S3_BUCKET"
  write_env "$AZURE_ENV" "AZURE_BLOB_ENDPOINT=$azure_url" "AZURE_STORAGE_ACCOUNT=$AZURE_ACCOUNT" \
    "AZURE_STORAGE_KEY=$AZURE_KEY" "AZURE_CONTAINER=$AZURE_CONTAINER"
  local ms=$(( ($(date +%s%N) - start) / 1000000 ))
  if [ -n "$started" ]; then
    log "storage up in $((ms / 1000)).$(printf '%03d' $((ms % 1000)))s (started:$started): S3 $s3_url bucket $S3_BUCKET ($S3_ENV), Azure Blob $azure_url container $AZURE_CONTAINER ($AZURE_ENV)"
  else
    log "storage already up: S3 $s3_url, Azure Blob $azure_url"
  fi
}
down() {
  stop_one versitygw
  stop_one azurite
  rm -rf "$S3_DATA" "$AZURITE_DATA"
  rm -f "$S3_ENV" "$AZURE_ENV"
}

cmd=${1:-}
case $cmd in
build) build_versitygw; build_azurite ;;
up | down)
  mkdir -p "$ENV_DIR"
  exec 8>"$ENV_DIR/.storage.lock"
  flock -w 120 8 || die "another storage.sh holds $ENV_DIR/.storage.lock"
  "$cmd"
  ;;
status) pid_alive versitygw && s3_ready && pid_alive azurite && azure_ready ;;
*) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
