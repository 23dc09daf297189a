#!/usr/bin/env bash
# test/monitoring/runbook-check.sh (make runbook-check, in make test): the runbooks under
# runbooks/ against the alerts and the tools they cite. Checks, each one result line:
#   structure      every page: a "# " title, then "Alerts: A, B" or "Procedure-only:"
#                  before the first section, then ## Symptoms, ## Diagnosis, ## Fix in that
#                  order, and a ```sh block with a kubectl command under Diagnosis
#   alert links    every alert of config/monitoring/prometheusrule.yaml has a runbook_url
#                  ending in runbooks/<page>.md that exists, and names it on its Alerts:
#                  line; every alert named on an Alerts: line links back there; a
#                  Procedure-only page is linked by no alert; relative .md links exist
#   kubectl redis  every `kubectl redis ...` command (sh blocks and inline code) parses
#                  with the plugin's own parser ($BUILD/test/plugin-parse, plugin/args.c):
#                  a verb removed or renamed fails here
#   kubectl        every other kubectl command: its subcommand exists, every flag is one
#                  `kubectl <subcommand> --help` or `kubectl options` lists, and the
#                  resource type it names (get, describe, delete, ...) is a built-in one we
#                  use or one of the CRDs' names (config/crd/bases); offline, no API server;
#                  the kubectl of the local environment (test/env: ENV_BIN) when built
#   metrics        every metric name in the text is exported by the code or listed in
#                  external-metrics.txt (lib.sh)
# Quoted words ("$NS", '{...}') count as one placeholder word; inline code that names no
# object (`kubectl redis status`) is a mention, checked with --help added. Other tools (helm,
# redis-cli, openssl) are not parsed.
set -u
cd "$(dirname "$0")/../.."
SUITE=runbooks
. test/lib.sh
. test/monitoring/lib.sh
BUILD=${BUILD:-build}
RESULTS=${RESULTS:-$BUILD/test-results}
RULES=config/monitoring/prometheusrule.yaml
PARSE=$BUILD/test/plugin-parse
# the local environment's kubectl (make env-build) when built, else the one on PATH
. test/env/common.sh
KUBECTL=${KUBECTL:-$ENV_BIN/kubectl}
[ -x "$KUBECTL" ] || KUBECTL=$(command -v kubectl || echo "$ENV_BIN/kubectl")
kubectl() { "$KUBECTL" "$@"; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pages() { ls runbooks/*.md | grep -v '/README.md$'; }

# --- structure ----------------------------------------------------------------------------
page_ok() {
  local f=$1
  head -1 "$f" | grep -q '^# ' || { echo "$f: no '# ' title on line 1"; return 1; }
  awk '/^## /{exit} /^(Alerts: [A-Za-z]+(, [A-Za-z]+)*|Procedure-only: .+)$/{ok=1} END{exit !ok}' "$f" ||
    { echo "$f: no 'Alerts: ...' or 'Procedure-only: ...' line before the first section"; return 1; }
  [ "$(grep -E '^## ' "$f" | tr '\n' '|')" = "## Symptoms|## Diagnosis|## Fix|" ] ||
    { echo "$f: sections are not exactly ## Symptoms, ## Diagnosis, ## Fix"; return 1; }
  awk '/^## Diagnosis/{d=1} /^## Fix/{d=0} d && /^```sh/{b=1} b && /^kubectl /{ok=1} /^```$/{b=0} END{exit !ok}' "$f" ||
    { echo "$f: no kubectl command in a sh block under ## Diagnosis"; return 1; }
}
structure() {
  local f bad=0
  for f in $(pages); do page_ok "$f" || bad=1; done
  return $bad
}

# --- alert links --------------------------------------------------------------------------
# "alert page" for each alert of the rules
alert_pages() {
  rules_groups "$RULES" | awk '/- alert:/ {a=$3} /runbook_url:/ {print a, $2}' |
    sed -E 's|^([A-Za-z]+) .*/runbooks/([a-z0-9-]+\.md)$|\1 \2|'
}
# "alert page" for each alert a page names on its Alerts: line
page_alerts() {
  local f
  for f in $(pages); do
    sed -n 's/^Alerts: //p' "$f" | tr ',' '\n' | awk -v p="${f#runbooks/}" 'NF {print $1, p}'
  done
}
links() {
  local bad=0 a p f l
  while read -r a p; do
    case "$p" in *.md) ;; *) echo "$a: runbook_url does not end in runbooks/<page>.md"; bad=1; continue ;; esac
    [ -f "runbooks/$p" ] || { echo "$a: runbooks/$p does not exist"; bad=1; }
  done < <(alert_pages)
  comm -3 <(alert_pages | sort) <(page_alerts | sort) | sed 's/^\t/page says: /; s/^[A-Z]/rule says: &/' |
    grep . && bad=1
  for f in $(pages); do
    if grep -q '^Procedure-only:' "$f" && alert_pages | grep -q " ${f#runbooks/}$"; then
      echo "$f: Procedure-only, yet an alert links to it"; bad=1
    fi
    for l in $(grep -oE '\]\([a-z0-9-]+\.md\)' "$f" | tr -d '()]'); do
      [ -f "runbooks/$l" ] || { echo "$f: links to runbooks/$l, which does not exist"; bad=1; }
    done
  done
  return $bad
}

# --- commands -----------------------------------------------------------------------------
# Every kubectl command of the pages: "page<TAB>command", quoted words replaced by Q.
commands() {
  local f
  for f in $(pages); do
    # inline code naming no object (no "$VAR", no quoted word) mentions a verb and its
    # flags: parsed with --help added (the verb and flags checked, not the arguments)
    { awk '/^```sh/{b=1; next} /^```$/{b=0} b' "$f"
      grep -oE '`kubectl [^`]+`' "$f" | tr -d '`' | sed -E '/[$"'"'"']/! s/$/ --help/'; } |
      sed -E "s/\"([^\"\\\\]|\\\\.)*\"/Q/g; s/'[^']*'/Q/g; s/\\\$\\([^)]*\\)/Q/g" |
      sed -E 's/(\||&&|;)/\n/g' | sed -E 's/^ +//; s/ +$//' | grep '^kubectl ' |
      sed "s|^|${f#runbooks/}\t|"
  done
}
plugin_commands() {
  local bad
  [ -x "$PARSE" ] || { echo "$PARSE missing: make BUILD=$BUILD runbook-check builds it"; return 1; }
  bad=$(commands | awk -F'\t' '$2 ~ /^kubectl redis( |$)/ {sub(/^kubectl redis ?/, "", $2); print $2}' | "$PARSE")
  [ -z "$bad" ] || { echo "$bad"; return 1; }
  echo "$(commands | grep -c $'\tkubectl redis') commands"
}

# kubectl's help of a subcommand path, cached; false when it is not one.
khelp() {
  local key
  key=$TMP/help-$(printf '%s_' "$@" | tr -c 'a-z0-9_-' '_')
  [[ "$*" != *[/Q.]* ]] || return 1
  [ -f "$key" ] || kubectl "$@" --help >"$key" 2>/dev/null || { rm -f "$key"; return 1; }
  grep -A1 '^Usage:' "$key" | grep -q "^  kubectl $* " || { rm -f "$key"; return 1; }
  cat "$key"
}
resource_names() {
  # the built-in kinds the runbooks use, every name and short name kubectl accepts for them
  printf '%s\n' pod pods po pvc persistentvolumeclaim persistentvolumeclaims secret secrets \
    service services svc node nodes no deployment deployments deploy lease leases \
    endpointslice endpointslices pdb poddisruptionbudget poddisruptionbudgets event events ev \
    configmap configmaps cm crd crds customresourcedefinition customresourcedefinitions \
    namespace namespaces ns
  grep -hE '^ +(plural|singular|kind): |^ +shortNames: ' config/crd/bases/*.yaml |
    sed -E 's/^ +[a-zA-Z]+: //; s/[][,]/ /g' | tr ' ' '\n' | awk 'NF' | tr 'A-Z' 'a-z'
}
# flags that take a value (from a help text: "--name='':" or "--name=[]:"; not "=true/false")
valued() { grep -oE '^ +(-[a-zA-Z], )?--[a-z-]+=[^:]*:' | grep -vE '=(true|false):$' | grep -oE -- '--[a-z-]+|-[a-zA-Z],' | tr -d ','; }
kubectl_one() {
  local -a w
  local path=() help all i t v names=$TMP/resources typed=0
  read -r -a w <<<"$1"
  [ -f "$TMP/options" ] || kubectl options >"$TMP/options"
  [ -f "$names" ] || resource_names | sort -u >"$names"
  i=1
  while [ $i -lt ${#w[@]} ] && [ "${w[$i]:0:1}" = - ]; do i=$((i + 2)); done # global flags first
  while [ $i -lt ${#w[@]} ] && [ "${w[$i]:0:1}" != - ] && khelp "${path[@]}" "${w[$i]}" >/dev/null; do
    path+=("${w[$i]}"); i=$((i + 1))
  done
  [ ${#path[@]} -gt 0 ] || { echo "$1: no kubectl subcommand \"${w[1]:-}\""; return 1; }
  help=$(khelp "${path[@]}"); all=$(printf '%s\n%s\n' "$help" "$(cat "$TMP/options")")
  case "${path[0]}" in get | describe | delete | annotate | label | patch | edit | wait | scale) typed=1 ;; esac
  for ((i = 1; i < ${#w[@]}; i++)); do
    t=${w[$i]}
    [ "$t" = -- ] && break
    [ "$t" = --help ] && continue
    case "$t" in
    --*)
      grep -qE -- "^ +(-[a-zA-Z], )?${t%%=*}=" <<<"$all" || { echo "$1: kubectl ${path[*]} has no flag ${t%%=*}"; return 1; }
      [[ $t == *=* ]] || ! valued <<<"$all" | grep -qx -- "$t" || i=$((i + 1)) ;;
    -?*)
      for ((v = 1; v < ${#t}; v++)); do
        grep -qE -- "^ +-${t:$v:1}, --" <<<"$all" || { echo "$1: kubectl ${path[*]} has no flag -${t:$v:1}"; return 1; }
      done
      valued <<<"$all" | grep -qx -- "-${t: -1}" && i=$((i + 1)) ;;
    *)
      if [ $typed = 1 ] && [[ " ${path[*]} " != *" $t "* ]]; then
        typed=0
        [ "$t" = Q ] || grep -qx "${t%%/*}" "$names" ||
          { echo "$1: resource type \"${t%%/*}\" unknown (runbook-check.sh resource_names)"; return 1; }
      fi ;;
    esac
  done
}
kubectl_commands() {
  local bad=0 p c n=0
  while IFS=$'\t' read -r p c; do
    n=$((n + 1))
    kubectl_one "$c" >"$TMP/one" || { echo "$p: $(cat "$TMP/one")"; bad=1; }
  done < <(commands | grep -v $'\tkubectl redis')
  echo "$n commands"
  return $bad
}

# --- metrics ------------------------------------------------------------------------------
metrics() {
  local bad
  bad=$(cat $(pages) | grep -oE '\b(redis|kubelet|kube)_[a-z0-9_]+\b' | sort -u | unknown_names)
  [ -z "$bad" ] || { echo "not exported by the code nor in external-metrics.txt: $bad"; return 1; }
}

check "structure: $(pages | wc -l) pages, title, Alerts:/Procedure-only:, Symptoms, Diagnosis, Fix" structure
check "every alert links to its runbook and back ($(alert_pages | wc -l) alerts)" links
check "every kubectl redis command parses (plugin/args.c)" plugin_commands
[ -x "$KUBECTL" ] || check_fail "kubectl found" "none on PATH nor in $ENV_BIN (make env-build)"
check "every kubectl command ($("$KUBECTL" version --client 2>/dev/null | head -1)): subcommand, flags and resource types exist" kubectl_commands
check "every metric named exists" metrics
counts_write "$SUITE"
