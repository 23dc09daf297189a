#!/usr/bin/env bash
# Smoke checks of the local object storage (storage.sh): the two env files hold exactly
# their keys; an object PUT, read back byte for byte, DELETEd and then 404 on the S3 server
# (versitygw) and on Azure Blob (Azurite), first from the host to the bridge address, then
# from inside a pod (its own network namespace, on ro-node-1 of env-up's node agent) with
# the env files as a Secret and storage-client.sh as a ConfigMap. A signature made with a
# wrong key is refused by both. Run by smoke.sh; records "passed failed" in
# $RESULTS/env-storage.counts.
set -uo pipefail
. "$(dirname "$0")/common.sh"
. "$repo/test/lib.sh"
SUITE=env-storage CHECK_TAIL=12
RESULTS=${RESULTS:-$repo/build/test-results}
NODEAGENT_BIN=${NODEAGENT_BIN:-$repo/build/nodeagent}
node=${STORAGE_SMOKE_NODE:-ro-node-1}
ns="storage-smoke-$$-$RANDOM"
s3env="$ENV_DIR/s3.env" azenv="$ENV_DIR/azure.env"

keys_are() { # file keys...: exactly these KEY=value lines, each with a value
  [ -f "$1" ] || { echo "$1 is missing"; return 1; }
  local f=$1; shift
  local want got
  want=$(printf '%s\n' "$@" | sort)
  got=$(sed -n 's/^\([A-Z0-9_]*\)=..*$/\1/p' "$f" | sort)
  [ "$want" = "$got" ] && [ "$(wc -l <"$f")" -eq $# ] || { echo "$f has: $(tr '\n' ' ' <<<"$got")"; return 1; }
}
client() { (set -a; . "$s3env"; . "$azenv"; set +a; bash "$here/storage-client.sh" "$@"); }
from_host() { client selftest "the host"; }
wrong_key() {
  local out
  out=$(set -a; . "$s3env"; . "$azenv"; set +a
    AWS_SECRET_ACCESS_KEY=0$AWS_SECRET_ACCESS_KEY bash "$here/storage-client.sh" s3 GET "/$S3_BUCKET" 2>&1)
  grep -q 'http 403' <<<"$out" || { echo "S3 with a wrong secret: $out"; return 1; }
  out=$(set -a; . "$s3env"; . "$azenv"; set +a
    AZURE_STORAGE_KEY=$(head -c 64 /dev/urandom | base64 -w0) bash "$here/storage-client.sh" azure GET "/$AZURE_CONTAINER?restype=container&comp=list" 2>&1)
  grep -q 'http 403' <<<"$out" || { echo "Azure with a wrong key: $out"; return 1; }
}
from_pod() {
  kctl create namespace "$ns" >/dev/null || return 1
  poll 20 kctl -n "$ns" get serviceaccount default -o name >/dev/null 2>&1 || return 1
  kctl -n "$ns" create secret generic storage --from-env-file "$s3env" --from-env-file "$azenv" >/dev/null || return 1
  kctl -n "$ns" create configmap client --from-file "$here/storage-client.sh" >/dev/null || return 1
  kctl -n "$ns" create -f - >/dev/null <<Y || return 1
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  nodeSelector: {kubernetes.io/hostname: $node}
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: debian:12
    command: [bash, /client/storage-client.sh, selftest, "pod \$(POD_IP)"]
    env: [{name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]
    envFrom: [{secretRef: {name: storage}}]
    volumeMounts: [{name: client, mountPath: /client}]
  volumes: [{name: client, configMap: {name: client}}]
Y
  local phase=""
  poll_phase() { phase=$(kctl -n "$ns" get pod client -o jsonpath='{.status.phase}' 2>/dev/null); [ "$phase" = Succeeded ] || [ "$phase" = Failed ]; }
  poll 90 poll_phase
  local out
  out=$("$NODEAGENT_BIN" logs --state-dir "$ENV_DIR/nodeagent" "$ns/client" 2>&1)
  echo "$out"
  [ "$phase" = Succeeded ] && [ "$(grep -c ': ok$' <<<"$out")" = 2 ] && grep -q 'from pod 10\.240\.' <<<"$out"
}

# name command...: check, with the command's lines shown also when it passes.
check_shown() {
  local name=$1 out rc; shift
  out=$("$@" 2>&1); rc=$?
  if [ $rc -eq 0 ]; then check_pass "$name"; else check_fail "$name"; fi
  sed 's/^/     /' <<<"$out" | tail -n 20
  return $rc
}

check "s3.env holds S3_ENDPOINT S3_REGION AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY S3_BUCKET" \
  keys_are "$s3env" S3_ENDPOINT S3_REGION AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY S3_BUCKET
check "azure.env holds AZURE_BLOB_ENDPOINT AZURE_STORAGE_ACCOUNT AZURE_STORAGE_KEY AZURE_CONTAINER" \
  keys_are "$azenv" AZURE_BLOB_ENDPOINT AZURE_STORAGE_ACCOUNT AZURE_STORAGE_KEY AZURE_CONTAINER
check_shown "S3 and Azure Blob: PUT, GET (same bytes), DELETE, GET 404 from the host" from_host
check "a wrong key is refused (403) by both" wrong_key
if [ -x "$NODEAGENT_BIN" ] && pid_alive nodeagent; then
  check_shown "S3 and Azure Blob: the same from inside a pod (env files as a Secret)" from_pod
else
  check_fail "S3 and Azure Blob from inside a pod: no node agent (make build/nodeagent; env-up)"
fi
kctl delete namespace "$ns" --wait=false >/dev/null 2>&1
counts_write env-storage
