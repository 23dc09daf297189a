#!/usr/bin/env bash
# The CRDs against a real API server: installs config/crd, then checks that
#   - every sample in config/samples is accepted (server-side dry run),
#   - every case in test/api/invalid-manifests is rejected with its expected message,
#   - every transition case (old --- new) is rejected (or accepted) as an update,
#   - defaults, printer columns, short names and the scale subresource behave.
# One line per case, then "N passed, N failed". Exit 1 if anything failed, 2 on bad usage.
#
# usage: test/api/run-crd-tests.sh KUBECONFIG
# env:   KUBECTL (default: kubectl), RESULTS (if set, writes $RESULTS/crd.counts: "passed failed")
#        CASES (a grep -E pattern: run only the invalid/transition cases whose file name matches)
#
# Case files: "# expect: <text>" on the first lines; <text> must appear in kubectl's stderr
# (fixed string), or is "accept" for a transition that must succeed. A file named
# *.transition.yaml holds two YAML documents: the object as created, then the update.
# Everything is created in a scratch namespace that is deleted at the end. The CRDs stay
# installed (they are cluster-scoped and other tests use them).
set -u
[ $# -eq 1 ] || { echo "usage: $0 KUBECONFIG" >&2; exit 2; }
[ -r "$1" ] || { echo "$0: cannot read kubeconfig $1" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
kc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
KUBECTL=${KUBECTL:-kubectl}
k() { "$KUBECTL" --kubeconfig "$kc" "$@"; }
cases_dir="$root/test/api/invalid-manifests"
samples_dir="$root/config/samples"
filter=${CASES:-}

. "$root/test/lib.sh"
CHECK_OK=PASS CHECK_FAIL=FAIL
work=$(mktemp -d)
ns="crd-test-$$-$RANDOM"
cleanup() {
	k delete namespace "$ns" --wait=false >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

# The expected text of a case file: the value of its "# expect:" header line.
expect_of() { sed -n 's/^# expect: //p' "$1" | head -n 1; }
# One line of stderr for a failure report.
oneline() { tr '\n' ' ' <"$1" | cut -c1-400; }

# --- install the CRDs ---
if ! k get --raw /readyz >/dev/null 2>"$work/err"; then
	echo "$0: API server not ready: $(oneline "$work/err")" >&2
	exit 2
fi
if k apply --server-side --force-conflicts -k "$root/config/crd" >"$work/out" 2>"$work/err" &&
	k wait --for=condition=Established --timeout=60s \
		crd/redisclusters.redis.io crd/redisbackups.redis.io crd/redisscheduledbackups.redis.io \
		>/dev/null 2>>"$work/err"; then
	check_pass "install CRDs"
else
	check_fail "install CRDs" "$(oneline "$work/err")"
	echo "$passed passed, $failed failed"
	exit 1
fi
if ! k create namespace "$ns" >/dev/null 2>"$work/err"; then
	echo "$0: cannot create namespace $ns: $(oneline "$work/err")" >&2
	exit 2
fi

# --- samples: each must be accepted ---
for f in "$samples_dir"/redis_*.yaml; do
	name="sample $(basename "$f" .yaml)"
	if k -n "$ns" create --dry-run=server -f "$f" >/dev/null 2>"$work/err"; then
		check_pass "$name"
	else
		check_fail "$name" "rejected: $(oneline "$work/err")"
	fi
done

# --- invalid manifests: each must be rejected with its message ---
run_invalid() {
	local f=$1 name want
	name=$(basename "$f" .yaml)
	want=$(expect_of "$f")
	if [ -z "$want" ]; then
		check_fail "$name" "no '# expect:' line"
		return
	fi
	if k -n "$ns" create --dry-run=server -f "$f" >/dev/null 2>"$work/err"; then
		check_fail "$name" "accepted, expected rejection with: $want"
	elif grep -qF -- "$want" "$work/err"; then
		check_pass "$name"
	else
		check_fail "$name" "rejected, but without \"$want\": $(oneline "$work/err")"
	fi
}

# --- transitions: create the first document, then apply the second as an update ---
run_transition() {
	local f=$1 name want
	name=$(basename "$f" .yaml)
	want=$(expect_of "$f")
	awk -v a="$work/old.yaml" -v b="$work/new.yaml" \
		'BEGIN { out = a } /^---[[:space:]]*$/ { out = b; next } { print > out }' "$f"
	if [ -z "$want" ] || [ ! -s "$work/new.yaml" ]; then
		check_fail "$name" "needs a '# expect:' line and two documents separated by ---"
		rm -f "$work/old.yaml" "$work/new.yaml"
		return
	fi
	if ! k -n "$ns" apply --server-side --field-manager=crd-test -f "$work/old.yaml" \
		>/dev/null 2>"$work/err"; then
		check_fail "$name" "the old object was rejected: $(oneline "$work/err")"
	elif k -n "$ns" apply --server-side --field-manager=crd-test -f "$work/new.yaml" \
		>/dev/null 2>"$work/err"; then
		if [ "$want" = accept ]; then check_pass "$name"; else check_fail "$name" "update accepted, expected: $want"; fi
	elif [ "$want" = accept ]; then
		check_fail "$name" "update rejected: $(oneline "$work/err")"
	elif grep -qF -- "$want" "$work/err"; then
		check_pass "$name"
	else
		check_fail "$name" "rejected, but without \"$want\": $(oneline "$work/err")"
	fi
	k -n "$ns" delete -f "$work/old.yaml" --wait=false >/dev/null 2>&1
	rm -f "$work/old.yaml" "$work/new.yaml"
}

ncases=0
for f in "$cases_dir"/*.yaml; do
	[ -e "$f" ] || continue
	if [ -n "$filter" ] && ! basename "$f" | grep -qE -- "$filter"; then continue; fi
	ncases=$((ncases + 1))
	case "$f" in
	*.transition.yaml) run_transition "$f" ;;
	*) run_invalid "$f" ;;
	esac
done
[ "$ncases" -gt 0 ] || check_fail "invalid manifests" "no case files in $cases_dir"

# --- behaviour of the API itself ---
api_check() { # name, command...; passes when the command succeeds
	local name=$1
	shift
	if "$@" >"$work/out" 2>"$work/err"; then check_pass "$name"; else check_fail "$name" "$(oneline "$work/err") $(oneline "$work/out")"; fi
}
cat >"$work/api.yaml" <<'EOF'
apiVersion: redis.io/v1
kind: RedisCluster
metadata:
  name: api-check
spec:
  instances: 1
EOF
cat >"$work/api-cluster.yaml" <<'EOF'
apiVersion: redis.io/v1
kind: RedisCluster
metadata:
  name: api-check-cluster
spec:
  mode: cluster
  shards: 3
EOF
defaults_ok() {
	local got
	got=$(k -n "$ns" get redisc api-check -o \
		jsonpath='{.spec.mode} {.spec.storage.type} {.spec.storage.size} {.spec.failedAfter} {.spec.primaryUpdateStrategy} {.spec.primaryUpdateMethod} {.spec.failover.leaseDuration} {.spec.enablePodDisruptionBudget}')
	[ "$got" = "standalone pvc 1Gi 10m unsupervised switchover 10s true" ] ||
		{ echo "defaults are \"$got\"" >&2; return 1; }
}
columns_ok() {
	local header
	header=$(k -n "$ns" get redisc | head -n 1)
	for c in NAME INSTANCES READY PHASE PRIMARY AGE; do
		case " $header " in *" $c "*) ;; *) echo "no column $c in: $header" >&2; return 1 ;; esac
	done
}
backup_columns_ok() {
	local header
	header=$(k -n "$ns" get redisb 2>&1 | head -n 1)
	case "$header" in "No resources found"*) return 0 ;; esac
	echo "unexpected: $header" >&2
	return 1
}
scaled_ok() {
	k -n "$ns" scale redisc/api-check --replicas=5 >/dev/null || return 1
	[ "$(k -n "$ns" get redisc api-check -o jsonpath='{.spec.instances}')" = 5 ] ||
		{ echo "spec.instances is not 5" >&2; return 1; }
}
scale_cluster_refused() {
	if k -n "$ns" scale redisc/api-check-cluster --replicas=5 >/dev/null 2>"$work/scale.err"; then
		echo "scaling a cluster-mode RedisCluster was accepted" >&2
		return 1
	fi
	grep -qF 'spec.instances must not be set in cluster mode' "$work/scale.err" ||
		{ cat "$work/scale.err" >&2; return 1; }
}
short_names_ok() {
	k -n "$ns" get redisc,redisb,redissb >/dev/null
}
api_check "create a minimal RedisCluster" k -n "$ns" apply --server-side --field-manager=crd-test -f "$work/api.yaml"
api_check "schema defaults are applied" defaults_ok
api_check "kubectl get redisc shows Instances/Ready/Phase/Primary/Age" columns_ok
api_check "short names redisc, redisb, redissb" short_names_ok
api_check "kubectl get redisb works" backup_columns_ok
api_check "kubectl scale redisc --replicas=5 sets spec.instances" scaled_ok
api_check "create a cluster-mode RedisCluster" k -n "$ns" apply --server-side --field-manager=crd-test -f "$work/api-cluster.yaml"
api_check "kubectl scale is refused in cluster mode" scale_cluster_refused

echo "$passed passed, $failed failed"
[ -z "${RESULTS:-}" ] || counts_write crd >/dev/null
[ "$failed" -eq 0 ]
