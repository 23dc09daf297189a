#!/usr/bin/env bash
# A minimal object-storage client made of curl and openssl, for the local environment's
# S3 server (versitygw) and Azure Blob emulator (Azurite): storage.sh creates the bucket
# and the container with it, and storage-smoke.sh runs its selftest on the host and inside
# a pod. Needs only bash, curl (7.75+, for --aws-sigv4), openssl, base64 and od.
#
#   storage-client.sh s3 METHOD PATH [FILE]      PATH: /bucket[/key][?query]
#   storage-client.sh azure METHOD PATH [FILE]   PATH: /container[/blob][?query]
#   storage-client.sh selftest                   PUT, GET, DELETE, GET (404) on both
#
# The response body goes to stdout; the HTTP status is the last line on stderr
# ("http NNN"); the exit status is 0 for 2xx. FILE is the request body (PUT).
# Settings come from the environment, as written to build/env/s3.env and azure.env:
#   S3_ENDPOINT S3_REGION AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY [S3_BUCKET]
#   AZURE_BLOB_ENDPOINT AZURE_STORAGE_ACCOUNT AZURE_STORAGE_KEY [AZURE_CONTAINER]
set -uo pipefail
AZURE_API_VERSION=${AZURE_API_VERSION:-2025-11-05}

# curl with the status on stderr and a 2xx exit status.
_curl() {
  local out rc code
  out=$(mktemp)
  code=$(curl -sS --max-time "${STORAGE_TIMEOUT:-20}" -o "$out" -w '%{http_code}' "$@")
  rc=$?
  cat "$out"; rm -f "$out"
  echo "http $code" >&2
  [ $rc -eq 0 ] && [ "${code:0:1}" = 2 ]
}

# S3 through curl's own Signature Version 4 (the payload's SHA-256 is sent and signed).
s3() {
  local method=$1 path=$2 file=${3:-} sha
  local args=(--aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -X "$method")
  if [ -n "$file" ]; then
    sha=$(openssl dgst -sha256 -r "$file" | cut -d' ' -f1)
    args+=(--data-binary "@$file" -H "Content-Type: application/octet-stream")
  else
    sha=$(printf '' | openssl dgst -sha256 -r | cut -d' ' -f1)
  fi
  _curl "${args[@]}" -H "x-amz-content-sha256: $sha" "${S3_ENDPOINT%/}$path"
}

# Azure Blob with a Shared Key signature: HMAC-SHA256 with the base64-decoded account key
# over the verb, the standard headers, the x-ms-* headers and the resource (service
# version 2015-02-21 and later: an empty Content-Length line for a length of 0).
azure() {
  local method=$1 path=$2 file=${3:-}
  local upath=${path%%\?*} query="" len="" ctype="" date hexkey sts sig resource
  [ "$upath" = "$path" ] || query=${path#*\?}
  date=$(LC_ALL=C date -u '+%a, %d %b %Y %H:%M:%S GMT')
  local args=(-X "$method" -H "x-ms-date: $date" -H "x-ms-version: $AZURE_API_VERSION")
  local xms="x-ms-date:$date"$'\n'"x-ms-version:$AZURE_API_VERSION"
  if [ -n "$file" ]; then
    len=$(stat -c %s "$file")
    [ "$len" != 0 ] || len=""
    ctype=application/octet-stream
    args+=(--data-binary "@$file" -H "Content-Type: $ctype" -H "x-ms-blob-type: BlockBlob")
    xms="x-ms-blob-type:BlockBlob"$'\n'"$xms"
  elif [ "$method" = PUT ]; then
    args+=(-H "Content-Length: 0")
  fi
  # The endpoint's path (Azurite: /ACCOUNT) is part of the resource, after /ACCOUNT.
  local epath=${AZURE_BLOB_ENDPOINT#*://}
  epath=/${epath#*/}; [ "$epath" != "/${AZURE_BLOB_ENDPOINT#*://}" ] || epath=""
  resource="/$AZURE_STORAGE_ACCOUNT${epath%/}$upath"
  if [ -n "$query" ]; then
    local kv
    while IFS= read -r kv; do
      resource+=$'\n'"$(printf '%s' "${kv%%=*}" | tr 'A-Z' 'a-z'):${kv#*=}"
    done < <(tr '&' '\n' <<<"$query" | sort)
  fi
  sts="$method"$'\n\n\n'"$len"$'\n\n'"$ctype"$'\n\n\n\n\n\n\n'"$xms"$'\n'"$resource"
  hexkey=$(printf '%s' "$AZURE_STORAGE_KEY" | base64 -d | od -An -v -tx1 | tr -d ' \n')
  sig=$(printf '%s' "$sts" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$hexkey" -binary | base64 -w0)
  _curl "${args[@]}" -H "Authorization: SharedKey $AZURE_STORAGE_ACCOUNT:$sig" "${AZURE_BLOB_ENDPOINT%/}$path"
}

# One round on one service: PUT an object, GET it back (same bytes), DELETE it, GET -> 404.
roundtrip() {
  local svc=$1 base=$2 where=${3:-here} tmp body key code
  tmp=$(mktemp -d)
  key="smoke-$(date +%s%N)-$RANDOM"
  # Bytes that a careless client would mangle: binary, a NUL, a newline at the end.
  { printf 'redis-operator %s smoke\n' "$svc"; printf '\000\001\377'; head -c 4096 /dev/urandom; printf '\n'; } >"$tmp/in"
  if ! "$svc" PUT "$base/$key" "$tmp/in" >"$tmp/put" 2>"$tmp/err"; then
    echo "$svc: PUT $base/$key failed from $where: $(tail -1 "$tmp/err")"; cat "$tmp/put"; rm -rf "$tmp"; return 1
  fi
  if ! "$svc" GET "$base/$key" >"$tmp/out" 2>"$tmp/err" || ! cmp -s "$tmp/in" "$tmp/out"; then
    echo "$svc: GET $base/$key from $where: $(tail -1 "$tmp/err"), $(stat -c %s "$tmp/out") bytes, $(cmp "$tmp/in" "$tmp/out" 2>&1 || true)"
    rm -rf "$tmp"; return 1
  fi
  if ! "$svc" DELETE "$base/$key" >/dev/null 2>"$tmp/err"; then
    echo "$svc: DELETE $base/$key failed from $where: $(tail -1 "$tmp/err")"; rm -rf "$tmp"; return 1
  fi
  "$svc" GET "$base/$key" >/dev/null 2>"$tmp/err"
  code=$(tail -1 "$tmp/err")
  [ "$code" = "http 404" ] || { echo "$svc: GET after DELETE from $where: $code, not http 404"; rm -rf "$tmp"; return 1; }
  body=$(stat -c %s "$tmp/in"); rm -rf "$tmp"
  echo "$svc: PUT/GET/DELETE of $body bytes at ${base#/}/$key from $where: ok"
}

case ${1:-} in
s3 | azure) "$@" ;;
selftest)
  rc=0
  roundtrip s3 "/$S3_BUCKET" "${2:-here}" || rc=1
  roundtrip azure "/$AZURE_CONTAINER" "${2:-here}" || rc=1
  exit $rc
  ;;
*) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
