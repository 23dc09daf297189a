#!/usr/bin/env bash
# The script checks of `make lint`: $1 is an ERE alternation of banned function names, the
# rest are C files.
#   1. Banned functions: a call is `name(` at a word boundary outside comments.
#   2. The include map (test/lint-includes.sh, where the rules are): which folder may
#      include which; it prints the map.
# Exit 1 if either check fails.
set -u
banned=$1; shift
status=0
hits=$(for f in "$@"; do
  sed -E 's://.*$::' "$f" | grep -nE "(^|[^A-Za-z0-9_])($banned)[[:space:]]*\(" | sed "s|^|$f:|"
done)
if [ -n "$hits" ]; then
  echo "lint: banned functions (use snprintf, strtol with checks, buf_printf):"
  echo "$hits"
  status=1
else
  echo "lint: no banned functions in $# files"
fi
bash "$(dirname "$0")/lint-includes.sh" || status=1
exit $status
