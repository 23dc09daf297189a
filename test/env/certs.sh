#!/usr/bin/env bash
# Makes the control plane's PKI with the openssl CLI into $ENV_DIR/pki (once), and the
# kubeconfigs for admin, kube-controller-manager and kube-scheduler.
set -euo pipefail
. "$(dirname "$0")/common.sh"
pki="$ENV_DIR/pki"
mkdir -p "$pki"
cd "$pki"
[ -f ca.crt ] || {
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
    -subj "/CN=redis-operator-test-ca" 2>/dev/null
}
[ -f sa.key ] || openssl genrsa -out sa.key 2048 2>/dev/null
[ -f sa.pub ] || openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null

# name subject [extensions]
issue() {
  local name=$1 subj=$2 ext=${3:-}
  [ -f "$name.crt" ] && return 0
  openssl req -new -newkey rsa:2048 -nodes -keyout "$name.key" -out "$name.csr" -subj "$subj" 2>/dev/null
  if [ -n "$ext" ]; then
    printf '%s\n' "$ext" >"$name.ext"
    openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -out "$name.crt" -extfile "$name.ext" 2>/dev/null
  else
    openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -out "$name.crt" 2>/dev/null
  fi
  rm -f "$name.csr"
}
first_svc_ip=$(echo "$ENV_SERVICE_CIDR" | awk -F'[./]' '{print $1"."$2"."$3"."$4+1}')
issue apiserver "/CN=kube-apiserver" \
  "subjectAltName=IP:$ENV_HOST_IP,IP:127.0.0.1,IP:$first_svc_ip,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
extendedKeyUsage=serverAuth"
issue admin "/O=system:masters/CN=admin" "extendedKeyUsage=clientAuth"
issue controller-manager "/CN=system:kube-controller-manager" "extendedKeyUsage=clientAuth"
issue scheduler "/CN=system:kube-scheduler" "extendedKeyUsage=clientAuth"
# The API server's identity towards kubelets (--kubelet-client-certificate): the node
# agent's kubelet API authenticates it against ca.crt and asks a SubjectAccessReview.
issue apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "extendedKeyUsage=clientAuth"
# The node agent acts for every test Node and issues pod tokens: it runs as an admin.
issue nodeagent "/O=system:masters/CN=redis-operator-nodeagent" "extendedKeyUsage=clientAuth"

kubeconfig() {
  local file=$1 user=$2
  cat >"$file" <<KC
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://$ENV_HOST_IP:$ENV_API_PORT
    certificate-authority: $pki/ca.crt
users:
- name: $user
  user:
    client-certificate: $pki/$user.crt
    client-key: $pki/$user.key
contexts:
- name: local
  context: {cluster: local, user: $user, namespace: default}
current-context: local
KC
}
kubeconfig "$ENV_DIR/kubeconfig" admin
kubeconfig "$ENV_DIR/controller-manager.kubeconfig" controller-manager
kubeconfig "$ENV_DIR/scheduler.kubeconfig" scheduler
kubeconfig "$ENV_DIR/nodeagent.kubeconfig" nodeagent
