#!/usr/bin/env bash
# The include map, enforced (`make lint`, through test/lint.sh): every #include of every .c
# and .h file under lib/ api/ controller/ instance/ cmd/ plugin/ is resolved as the compiler does
# it with -I. (the including file's folder first, then the repository root; <...> is a
# system header unless it names one of those folders) and checked against the rules
# below. Prints the map (which folder includes which, with counts), then one line per
# crossing that is not allowed (and each line of lib/ code that names a CRD: CRD_NAMES),
# and exits 1 if there is any. test/ is exempt (tests may
# include anything); it is not in the map.
#
# usage: test/lint-includes.sh      (from anywhere; it works on the repository it is in)
set -u
cd "$(dirname "$0")/.." || exit 2

# --- the rules ------------------------------------------------------------------------------
# The folder a file is in (longest prefix wins) and the folders it may include. A
# project header outside its list is an error; system headers are always allowed.
#   lib/ knows no role and no CRD: it is reusable on its own.
#   api/ is the CRD's types: it may use lib/, never a role.
#   The roles (controller/, instance/) never include each other.
#   cmd/ is the subcommand table: it calls into everything.
#   plugin/ (kubectl-redis) is a client of the API server: lib/ and api/, never a role.
RULES=(
	"lib/:lib/"
	"api/:lib/ api/"
	"controller/:lib/ api/ controller/"
	"instance/:lib/ api/ instance/"
	"cmd/:lib/ api/ controller/ instance/ cmd/"
	"plugin/:lib/ api/ plugin/"
)
# Headers a folder must not reach, directly or through any chain of project headers; an
# entry ending in / forbids every header under that folder:
#   the controller never includes the server-connection library (lib/valkey: hiredict,
#   INFO parsing); it speaks to the instance manager's HTTP API instead. What both roles
#   know about the servers (engines, versions, directives) is lib/engine;
#   lib/engine is that knowledge alone, so it never reaches the connection either.
FORBIDDEN=(
	"controller/:lib/valkey/"
	"lib/engine/:lib/valkey/"
)
# Today's exceptions to FORBIDDEN, as "file:entry" (the header or folder as FORBIDDEN
# names it), each with its reason. Empty: no
# controller file reaches lib/valkey/. A new entry needs a reason and an issue that
# removes it.
ALLOWED_EXCEPTIONS=()
# lib/ knows no CRD: besides never including api/ (RULES), no code under lib/ names the
# redis.io group or one of its kinds or plurals, so a descriptor or a literal cannot be
# defined there without an include (api/resources.c holds the descriptors). Comments may
# name them (examples). A case-sensitive ERE over the code with comments blanked.
CRD_NAMES='redis\.io|Redis(Cluster|Backup|ScheduledBackup)|redis(clusters|backups|scheduledbackups)'

# --- the include graph ----------------------------------------------------------------------
files=$(find lib api controller instance cmd plugin -name '*.[ch]' | LC_ALL=C sort)
declare -A edges   # file -> space-separated project headers it includes
declare -A count   # "from-folder to-folder" -> number of #include lines
errors=()
nincl=0

# The map's name of a path's folder: lib/engine, lib/k8s, lib/valkey, lib, api, controller...
folder_of() {
	case "$1" in
	lib/*/*) echo "${1%/*}" ;;
	*/*) echo "${1%%/*}" ;;
	*) echo . ;;
	esac
}

# The rule entry of a file: the longest RULES/FORBIDDEN prefix it starts with.
prefix_of() { # file, entries...
	local f=$1 best= e p
	shift
	for e in "$@"; do
		p=${e%%:*}
		case "$f" in "$p"*) [ ${#p} -gt ${#best} ] && best=$p ;; esac
	done
	echo "$best"
}

# Where #include "name" / <name> in file resolves: a repository path, "<system>", or "?".
resolve() { # file, delimiter, name
	local dir=${1%/*}
	case "$2$3" in
	\<lib/* | \<api/* | \<controller/* | \<instance/* | \<cmd/* | \<plugin/* | \<test/*) ;;
	\<*)
		echo "<system>"
		return
		;;
	esac
	if [ "$2" = '"' ] && [ -f "$dir/$3" ]; then
		norm "$dir/$3"
	elif [ -f "$3" ]; then
		norm "$3"
	else
		echo "?"
	fi
}
norm() { case "$1" in *..* | ./*) realpath -m --relative-to=. "$1" ;; *) echo "$1" ;; esac; }

re='^([^:]+):([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*(["<])([^">]+)[">]'
# shellcheck disable=SC2086 # $files: one path per word, none with spaces
while IFS= read -r hit; do
	[[ $hit =~ $re ]] || continue
	f=${BASH_REMATCH[1]} line=${BASH_REMATCH[2]} delim=${BASH_REMATCH[3]} name=${BASH_REMATCH[4]}
	shown=$delim$name$([ "$delim" = '<' ] && echo '>' || echo '"')
	to=$(resolve "$f" "$delim" "$name")
	[ "$to" = "<system>" ] && continue
	nincl=$((nincl + 1))
	if [ "$to" = "?" ]; then
		# cmd/main.c's version.h is generated into $(BUILD).
		[ "$f:$name" = "cmd/main.c:version.h" ] ||
			errors+=("$f:$line: #include $shown: no such file in the repository")
		continue
	fi
	edges[$f]+="$to "
	key="$(folder_of "$f") $(folder_of "$to")"
	count[$key]=$((${count[$key]:-0} + 1))
	p=$(prefix_of "$f" "${RULES[@]}")
	[ -n "$p" ] || continue
	allowed=
	for e in "${RULES[@]}"; do [ "${e%%:*}" = "$p" ] && allowed=${e#*:}; done
	ok=0
	for a in $allowed; do case "$to" in "$a"*) ok=1 ;; esac; done
	[ $ok = 1 ] ||
		errors+=("$f:$line: #include $shown: $p may include only ${allowed// /, } and system headers")
done < <(grep -nHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<][^">]+[">]' $files)

# Whether file reaches header (or, for a folder ending in /, any header under it) through
# project includes; prints the chain when it does.
declare -A seen
reaches() { # file, header, chain so far
	local f=$1 h=$2 chain=$3 to
	for to in ${edges[$f]:-}; do
		[ -n "${seen[$to]:-}" ] && continue
		seen[$to]=1
		if [ "$to" = "$h" ] || { [ "${h%/}" != "$h" ] && [ "${to#"$h"}" != "$to" ]; }; then
			echo "$chain -> $to"
			return 0
		fi
		reaches "$to" "$h" "$chain -> $to" && return 0
	done
	return 1
}

for f in $files; do
	p=$(prefix_of "$f" "${FORBIDDEN[@]}")
	[ -n "$p" ] || continue
	for e in "${FORBIDDEN[@]}"; do
		[ "${e%%:*}" = "$p" ] || continue
		h=${e#*:}
		seen=()
		chain=$(reaches "$f" "$h" "$f") || continue
		exc=0
		for x in "${ALLOWED_EXCEPTIONS[@]}"; do [ "$x" = "$f:$h" ] && exc=1; done
		[ $exc = 1 ] || errors+=("$chain: $p must not include $h")
	done
done

# Code under lib/ that names a CRD: file:line: text, comments blanked (newlines kept).
crd_hits() {
	local f
	# shellcheck disable=SC2046 # one path per word, none with spaces
	for f in $(grep -lE "$CRD_NAMES" $(grep '^lib/' <<<"$files")); do
		perl -0777 -pe 's{/\*.*?\*/}{$& =~ s/[^\n]//gr}gse; s{//[^\n]*}{}g' "$f" |
			grep -nE "$CRD_NAMES" | sed "s|^|$f:|"
	done
}
while IFS= read -r hit; do
	[ -n "$hit" ] && errors+=("$hit: lib/ must not name a CRD (group, kind, plural): api/ does")
done < <(crd_hits)

# --- the map --------------------------------------------------------------------------------
echo "include map (folder: the folders it includes, with the number of #include lines):"
for from in $(for k in "${!count[@]}"; do echo "${k% *}"; done | LC_ALL=C sort -u); do
	line=
	for k in $(printf '%s\n' "${!count[@]}" | tr ' ' '=' | LC_ALL=C sort); do
		[ "${k%=*}" = "$from" ] || continue
		line+="${line:+, }${k#*=} ${count[${k/=/ }]}"
	done
	printf '  %-12s %s\n' "$from" "$line"
done

if [ ${#errors[@]} -gt 0 ]; then
	echo "lint: includes that cross a boundary (rules: test/lint-includes.sh):"
	printf '  %s\n' "${errors[@]}"
	exit 1
fi
echo "lint: includes: $(wc -w <<<"$files") files, $nincl project #includes, none crosses a boundary"
