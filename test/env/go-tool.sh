#!/usr/bin/env bash
# Builds one pinned Go tool once per version into the cache outside the repository:
#   ${REDIS_OPERATOR_CACHE:-~/.cache/redis-operator}/NAME/VERSION/bin/NAME
# A second run with the binary present only prints its path. The path is always the last
# line printed. Used by image/tool.sh (umoci), test/helm/build.sh (helm) and
# test/env/build.sh (versitygw).
#
#   go-tool.sh NAME VERSION PKG [LDFLAGS]   build (or find) it
#   go-tool.sh --path NAME VERSION          print where it is (or would be), build nothing
#
# PKG is the main package (github.com/versity/versitygw/cmd/versitygw). LDFLAGS are added
# after "-s -w". Static (CGO_ENABLED=0), -trimpath, no VCS stamp, GOTOOLCHAIN=local.
#
# Env:
#   GO_TOOL_MODDIR  a module directory whose go.mod and go.sum pin PKG's module at VERSION
#                   (image/tools, test/helm/tools): built there with `go build`. Without
#                   it: `go install PKG@VERSION`, pinned by the tool's own go.mod and
#                   go.sum and the checksum database (refused if its go.mod has replaces).
#   GO_TOOL_MOD     -mod= for GO_TOOL_MODDIR builds (default readonly).
#   GO_TOOL_CHECK   arguments the fresh binary must accept before it is cached (--version).
#   GO_TOOL_LOG     prefix of the messages (default NAME-build).
#   ENV_BUILD_JOBS  go -p (default nproc).
set -euo pipefail
cache=${REDIS_OPERATOR_CACHE:-$HOME/.cache/redis-operator}
if [ "${1:-}" = --path ]; then
  [ $# -eq 3 ] || { echo "usage: go-tool.sh --path NAME VERSION" >&2; exit 2; }
  echo "$cache/$2/$3/bin/$2"
  exit 0
fi
[ $# -ge 3 ] && [ $# -le 4 ] || { echo "usage: go-tool.sh NAME VERSION PKG [LDFLAGS]" >&2; exit 2; }
name=$1 version=$2 pkg=$3 ldflags=${4:-}
bin="$cache/$name/$version/bin"
tag=${GO_TOOL_LOG:-$name-build}
if [ -x "$bin/$name" ]; then echo "$bin/$name"; exit 0; fi

command -v go >/dev/null || export PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "$tag: go is not installed (needed only to build $name)" >&2; exit 1; }
export GOTOOLCHAIN=local CGO_ENABLED=0
moddir=${GO_TOOL_MODDIR:-}
if [ -n "$moddir" ]; then
  # The module directory must pin the version asked for: the module is PKG or a prefix of it.
  m=$pkg found=0
  while [ -n "$m" ]; do
    if grep -Eq "^[[:space:]]*(require[[:space:]]+)?$m[[:space:]]+$version([[:space:]]|$)" "$moddir/go.mod"; then found=1; break; fi
    [ "${m%/*}" != "$m" ] || break
    m=${m%/*}
  done
  [ $found -eq 1 ] || { echo "$tag: $moddir/go.mod does not require $pkg's module at $version (versions.env)" >&2; exit 1; }
fi

tmp="$bin.tmp.$$"
rm -rf "$tmp"; mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
echo "$tag: building $name $version into $bin" >&2
jobs=${ENV_BUILD_JOBS:-$(nproc)}
if [ -n "$moddir" ]; then
  (cd "$moddir" && GOFLAGS="-mod=${GO_TOOL_MOD:-readonly} -buildvcs=false" \
    go build -p "$jobs" -trimpath -ldflags "-s -w $ldflags" -o "$tmp/$name" "$pkg")
else
  # go install names the binary after the package's last element; -o is not accepted.
  (cd "$tmp" && GOFLAGS="-buildvcs=false" GOBIN="$tmp/gobin" \
    go install -p "$jobs" -trimpath -ldflags "-s -w $ldflags" "$pkg@$version")
  mv "$tmp/gobin/${pkg##*/}" "$tmp/$name"
  rm -rf "$tmp/gobin"
fi
if [ -n "${GO_TOOL_CHECK:-}" ]; then
  # shellcheck disable=SC2086 # GO_TOOL_CHECK is a word list
  "$tmp/$name" $GO_TOOL_CHECK >/dev/null || { echo "$tag: the new $name fails '$name $GO_TOOL_CHECK'" >&2; exit 1; }
fi
mkdir -p "$(dirname "$bin")"
rm -rf "$bin"; mv "$tmp" "$bin"
echo "$tag: done in $(( $(date +%s) - start ))s" >&2
echo "$bin/$name"
