#!/usr/bin/env bash
# Records what a real API server answers for every API test case, for test_api_manifests,
# which compares the C validator's error lines with these, case by case:
#   test/api/invalid-manifests/*.yaml   (the live CRD test's table)
#   test/data/api/cases/*.yaml          (edge cases of the C reimplementation)
#   config/samples/redis_*.yaml         (must be accepted)
# into test/data/api/server/<case>.txt: "accepted", or one error per line as the server
# wrote it after "is invalid:" (unknown fields one per line). A *.transition.yaml case is
# created from its first document, then its second is applied (server-side, dry run) as
# an update. Everything happens in a scratch namespace, deleted at the end; the installed
# CRD schemas must equal config/crd/bases (checked first).
#
# usage: test/data/api/record-server.sh KUBECONFIG      (make env-up gives one)
# env:   KUBECTL (default kubectl)
set -u
[ $# -eq 1 ] || { echo "usage: $0 KUBECONFIG" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../../.." && pwd)
kc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
KUBECTL=${KUBECTL:-kubectl}
k() { "$KUBECTL" --kubeconfig "$kc" "$@"; }
out="$root/test/data/api/server"
work=$(mktemp -d)
ns="api-record-$$-$RANDOM"
trap 'k delete namespace "$ns" --wait=false >/dev/null 2>&1; rm -rf "$work"' EXIT

# The installed schemas must be the repository's (kubectl prints both with sorted keys).
for f in "$root"/config/crd/bases/*.yaml; do
	crd=$(k create --dry-run=client -o jsonpath='{.metadata.name}' -f "$f") || exit 2
	want=$(k create --dry-run=client -o jsonpath='{.spec.versions[0].schema}' -f "$f")
	have=$(k get crd "$crd" -o jsonpath='{.spec.versions[0].schema}' 2>"$work/err") ||
		{ echo "$0: $crd: $(head -c 300 "$work/err")" >&2; exit 2; }
	[ "$want" = "$have" ] ||
		{ echo "$0: the installed $crd differs from $f; apply config/crd first" >&2; exit 2; }
done
k create namespace "$ns" >/dev/null || exit 2
mkdir -p "$out"

# kubectl's stderr → one error per line.
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

record() { # name, then the command that creates or updates
	local name=$1
	shift
	if "$@" >/dev/null 2>"$work/err"; then
		echo accepted >"$out/$name.txt"
	else
		normalize <"$work/err" >"$out/$name.txt"
	fi
}

transition() { # file
	local f=$1 name
	name=$(basename "$f" .yaml)
	awk -v a="$work/old.yaml" -v b="$work/new.yaml" \
		'BEGIN { out = a } /^---[[:space:]]*$/ { out = b; next } { print > out }' "$f"
	if ! k -n "$ns" apply --server-side --field-manager=api-record -f "$work/old.yaml" \
		>/dev/null 2>"$work/err"; then
		{ echo "? the old object was rejected:"; normalize <"$work/err"; } >"$out/$name.txt"
	else
		record "$name" k -n "$ns" apply --server-side --field-manager=api-record \
			--dry-run=server -f "$work/new.yaml"
	fi
	k -n "$ns" delete -f "$work/old.yaml" --wait=false >/dev/null 2>&1
	rm -f "$work/old.yaml" "$work/new.yaml"
}

n=0
for f in "$root"/test/api/invalid-manifests/*.yaml "$root"/test/data/api/cases/*.yaml \
	"$root"/config/samples/redis_*.yaml; do
	n=$((n + 1))
	case "$f" in
	*.transition.yaml) transition "$f" ;;
	*) record "$(basename "$f" .yaml)" k -n "$ns" create --dry-run=server -f "$f" ;;
	esac
done
echo "$n cases recorded in $out"
grep -l '^?' "$out"/*.txt 2>/dev/null | sed 's/^/unexpected output: /'
