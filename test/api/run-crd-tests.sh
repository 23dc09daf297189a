#!/usr/bin/env bash
# The CRDs against a real API server: installs config/crd, then checks that
#   - every sample in config/samples is accepted (server-side dry run),
#   - every case in test/api/invalid-manifests and test/data/api/cases gets the verdict of
#     its "# expect:" line: rejected with that text, or accepted ("accept"); a transition
#     case (old --- new) as an update,
#   - the server's error lines for every case and sample equal its recording in
#     test/data/api/server/<case>.txt (as sets: the server's order follows Go map order),
#   - every rule of test/data/api/acl-rules.json, sent as spec.users[0].rules, is refused
#     exactly when the instance manager refuses it (test_instance_render reads the same file),
#   - defaults, printer columns, short names and the scale subresource behave, and a
#     manifest written for the seed system applies unchanged and keeps every value.
# One line per case, then "N passed, N failed". Exit 1 if anything failed, 2 on bad usage.
#
# usage: test/api/run-crd-tests.sh KUBECONFIG
# env:   KUBECTL (default: kubectl), RESULTS (if set, writes $RESULTS/crd.counts: "passed failed")
#        CASES (a grep -E pattern: run only the cases whose file name matches; "acl-rules"
#        selects the ACL rules)
#        RECORD=1 (rewrite the recordings from this server's answers instead of comparing)
#
# Case files: "# expect: <text>" on the first lines; <text> must appear in kubectl's stderr
# (fixed string), or is "accept" for a case that must be accepted. A file named
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
case_dirs=("$root/test/api/invalid-manifests" "$root/test/data/api/cases")
samples_dir="$root/config/samples"
rec_dir="$root/test/data/api/server"
acl_rules="$root/test/data/api/acl-rules.json"
filter=${CASES:-}
record=${RECORD:-}

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

# kubectl's stderr -> the server's errors, one per line (what the recordings hold).
normalize() {
	awk '
	/strict decoding error: / {
		s = substr($0, index($0, "strict decoding error: ") + 23)
		n = split(s, parts, /, unknown field /)
		for (i = 1; i <= n; i++) print (i > 1 ? "unknown field " : "") parts[i]
		next
	}
	/ is invalid: / { s = substr($0, index($0, " is invalid: ") + 13); if (s != "") print s; next }
	/^\* / { print substr($0, 3); next }
	{ print "? " $0 }'
}

# The answer to the last request ($1: its exit status) against the recording of case $2,
# as sorted sets of lines; with RECORD set, writes the recording instead. False with the
# reason in $why.
answer_is_recorded() {
	local rc=$1 rec="$rec_dir/$2.txt"
	if [ "$rc" -eq 0 ]; then echo accepted; else normalize <"$work/err"; fi |
		LC_ALL=C sort >"$work/answer"
	if [ -n "$record" ]; then
		cp "$work/answer" "$rec"
		return 0
	fi
	if [ ! -r "$rec" ]; then
		why="no recording $rec (RECORD=1 $0 KUBECONFIG writes it)"
		return 1
	fi
	LC_ALL=C sort "$rec" | cmp -s - "$work/answer" && return 0
	why="the server's answer differs from $(basename "$rec"): $(LC_ALL=C sort "$rec" |
		diff - "$work/answer" | grep '^[<>]' | head -n 4 | tr '\n' ' ' | cut -c1-400)"
	return 1
}

# The verdict of the last request ($1: its exit status) against want ("accept" or a text
# of the error). False with the reason in $why.
verdict_is() {
	local rc=$1 want=$2
	if [ "$rc" -eq 0 ] && [ "$want" = accept ]; then return 0; fi
	if [ "$rc" -eq 0 ]; then why="accepted, expected rejection with: $want"; return 1; fi
	if [ "$want" = accept ]; then why="rejected: $(oneline "$work/err")"; return 1; fi
	grep -qF -- "$want" "$work/err" && return 0
	why="rejected, but without \"$want\": $(oneline "$work/err")"
	return 1
}

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
	k -n "$ns" create --dry-run=server -f "$f" >/dev/null 2>"$work/err"
	rc=$?
	if verdict_is $rc accept && answer_is_recorded $rc "$(basename "$f" .yaml)"; then
		check_pass "sample $(basename "$f" .yaml)"
	else
		check_fail "sample $(basename "$f" .yaml)" "$why"
	fi
done

# --- cases: each must get its verdict and its recorded answer ---
run_create() {
	local f=$1 name want rc
	name=$(basename "$f" .yaml)
	want=$(expect_of "$f")
	if [ -z "$want" ]; then
		check_fail "$name" "no '# expect:' line"
		return
	fi
	k -n "$ns" create --dry-run=server -f "$f" >/dev/null 2>"$work/err"
	rc=$?
	if verdict_is $rc "$want" && answer_is_recorded $rc "$name"; then
		check_pass "$name"
	else
		check_fail "$name" "$why"
	fi
}

# --- transitions: create the first document, then apply the second as an update ---
run_transition() {
	local f=$1 name want rc
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
	else
		k -n "$ns" apply --server-side --field-manager=crd-test -f "$work/new.yaml" \
			>/dev/null 2>"$work/err"
		rc=$?
		if verdict_is $rc "$want" && answer_is_recorded $rc "$name"; then
			check_pass "$name"
		else
			check_fail "$name" "$why"
		fi
	fi
	k -n "$ns" delete -f "$work/old.yaml" --wait=false >/dev/null 2>&1
	rm -f "$work/old.yaml" "$work/new.yaml"
}

ncases=0
for f in "${case_dirs[0]}"/*.yaml "${case_dirs[1]}"/*.yaml; do
	[ -e "$f" ] || continue
	if [ -n "$filter" ] && ! basename "$f" | grep -qE -- "$filter"; then continue; fi
	ncases=$((ncases + 1))
	case "$f" in
	*.transition.yaml) run_transition "$f" ;;
	*) run_create "$f" ;;
	esac
done
[ -n "$filter" ] || [ "$ncases" -gt 0 ] || check_fail "cases" "no case files in ${case_dirs[*]}"

# --- ACL rules: the CRD refuses a rule exactly when the instance manager does ---
# acl-rules.json: [[rule, why-or-null], ...]; null: the manager lets a customer write it.
acl_rule_manifest() { # index
	jq -c --argjson i "$1" '.[$i][0] as $r | {apiVersion: "redis.io/v1", kind: "RedisCluster",
		metadata: {name: "acl-rule-\($i)"}, spec: {instances: 1,
		users: [{name: "app", rules: [$r], passwordSecrets: [{name: "p"}]}]}}' "$acl_rules"
}
run_acl_rule() { # index
	local i=$1 rule refused rc name
	rule=$(jq -c ".[$i][0]" "$acl_rules")
	refused=$(jq -r ".[$i][1] != null" "$acl_rules")
	name="acl rule $rule"
	acl_rule_manifest "$i" >"$work/acl.json"
	k -n "$ns" create --dry-run=server -f "$work/acl.json" >/dev/null 2>"$work/err"
	rc=$?
	if [ "$refused" = false ] && [ $rc -eq 0 ]; then
		check_pass "$name: allowed by the manager and the CRD"
	elif [ "$refused" = false ]; then
		check_fail "$name" "the manager allows it, the CRD refuses it: $(oneline "$work/err")"
	elif [ $rc -eq 0 ]; then
		check_fail "$name" "the manager refuses it, the CRD accepts it"
	elif grep -qF 'spec.users[0].rules[0]' "$work/err"; then
		check_pass "$name: refused by the manager and the CRD"
	else
		check_fail "$name" "refused, but not at spec.users[0].rules[0]: $(oneline "$work/err")"
	fi
}
if [ -z "$filter" ] || echo acl-rules | grep -qE -- "$filter"; then
	n=$(jq length "$acl_rules" 2>"$work/err") && [ "$n" -gt 0 ] ||
		{ check_fail "ACL rules" "cannot read $acl_rules: $(oneline "$work/err")"; n=0; }
	for ((i = 0; i < n; i++)); do run_acl_rule "$i"; done
fi

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
# A manifest written for the seed system (test/data/api/decode/rediscluster-seed.yaml) is
# applied as it is, with a plain client-side kubectl apply, and every value it sets reads
# back unchanged: nothing refused, nothing pruned, nothing rewritten.
seed_manifest="$root/test/data/api/decode/rediscluster-seed.yaml"
seed_kept() {
	k -n "$ns" create --dry-run=client -f "$seed_manifest" -o json >"$work/seed-want.json" &&
		k -n "$ns" get redisc seed-redis -o json >"$work/seed-got.json" || return 1
	jq -e -n --slurpfile w "$work/seed-want.json" --slurpfile g "$work/seed-got.json" \
		'[$w[0].spec | paths(scalars)] | length > 20 and
		 all(.[]; . as $p | ($w[0].spec | getpath($p)) == ($g[0].spec | getpath($p)))' \
		>/dev/null || { echo "the stored spec differs: $(jq -c .spec "$work/seed-got.json")" >&2; return 1; }
}
api_check "create a minimal RedisCluster" k -n "$ns" apply --server-side --field-manager=crd-test -f "$work/api.yaml"
api_check "schema defaults are applied" defaults_ok
api_check "kubectl get redisc shows Instances/Ready/Phase/Primary/Age" columns_ok
api_check "short names redisc, redisb, redissb" short_names_ok
api_check "kubectl get redisb works" backup_columns_ok
api_check "kubectl scale redisc --replicas=5 sets spec.instances" scaled_ok
api_check "create a cluster-mode RedisCluster" k -n "$ns" apply --server-side --field-manager=crd-test -f "$work/api-cluster.yaml"
api_check "kubectl scale is refused in cluster mode" scale_cluster_refused
api_check "a seed manifest applies unchanged (kubectl apply)" k -n "$ns" apply -f "$seed_manifest"
api_check "the seed manifest's values are stored as written" seed_kept

echo "$passed passed, $failed failed"
[ -z "${RESULTS:-}" ] || counts_write crd >/dev/null
[ "$failed" -eq 0 ]
