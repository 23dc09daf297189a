#!/usr/bin/env bash
# Banned-function check for `make lint`: $1 is an ERE alternation of names, the rest are
# C files. A call is `name(` at a word boundary outside comments. Exit 1 on any hit.
set -u
banned=$1; shift
hits=$(for f in "$@"; do
  sed -E 's://.*$::' "$f" | grep -nE "(^|[^A-Za-z0-9_])($banned)[[:space:]]*\(" | sed "s|^|$f:|"
done)
if [ -n "$hits" ]; then
  echo "lint: banned functions (use snprintf, strtol with checks, buf_printf):"
  echo "$hits"
  exit 1
fi
echo "lint: no banned functions in $# files"
