#!/usr/bin/env bash
# test/fresh-machine.sh: the newcomer's path, taken as a newcomer takes it. A fresh
# `git clone` of this repository into a temporary directory, then the README's commands
# run there, each timed; a summary of the timings comes last.
#
#   bash test/fresh-machine.sh
#       clone, `make demo`, `make env-down`. Cheap: the -dev packages stay installed and
#       the control-plane cache (REDIS_OPERATOR_CACHE, default ~/.cache/redis-operator,
#       outside the clone) is reused, so CI can run it on every change.
#   FRESH_REMOVE=1 bash test/fresh-machine.sh
#       as root, on a throw-away machine only (CI): first `apt-get remove` the -dev
#       packages test/deps.sh installs, so that the clone starts as on a fresh Debian 12,
#       then clone, `make demo` (which must install them again and build in the same run),
#       `make test`, `make env-down`.
#   FRESH_REMOVE=1 FRESH_TEST=0 bash test/fresh-machine.sh
#       the same without `make test` in the clone: what .ci/run does first, so every CI
#       run proves the newcomer's `make demo` from a machine without the -dev packages
#       (its own `make test` follows).
#   FRESH_BUILD_ONLY=1 bash test/fresh-machine.sh
#       `make deps all` in the clone instead of the demo: no local environment needed.
#
# Env: FRESH_REF (what to clone, default HEAD: uncommitted changes are not in the clone),
# FRESH_KEEP=1 (keep the temporary directory; it is always kept when a step fails).
#
# The demo uses machine-wide resources (the bridge ro-br0, the API server's port 6443,
# etcd's 23790): with another tree's environment up, the clone's would collide with it,
# so the script refuses and says so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
ref=${FRESH_REF:-HEAD}
remove=${FRESH_REMOVE:-0}
build_only=${FRESH_BUILD_ONLY:-0}
run_test=${FRESH_TEST:-$remove}

log() { echo "fresh-machine: $*" >&2; }
die() { log "$*"; exit 1; }

# The -dev packages (and Check) in test/deps.sh's list: what a fresh machine lacks.
dev_packages() {
  sed -n '/^packages=(/,/^)/p' "$repo/test/deps.sh" | tr -s ' \t()' '\n' | grep -E -- '-dev$|^check$'
}

if [ "$remove" = 1 ]; then
  [ "$(id -u)" -eq 0 ] || die "FRESH_REMOVE=1 removes packages: run it as root, on a throw-away machine"
fi
if [ "$build_only" != 1 ]; then
  for port in 6443 23790; do
    if ss -ltnH "( sport = :$port )" 2>/dev/null | grep -q .; then
      die "something listens on port $port: another local environment is up on this machine; stop it (make env-down in its tree) or run on a machine of its own"
    fi
  done
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/fresh-machine.XXXXXX")
clone="$work/redis-operator"
steps=() secs=()
env_started=0 env_stopped=0 failed=0

# step NAME COMMAND...: runs it, its output both shown and kept in $work/NAME.log, timed.
step() {
  local name=$1 t0 t1 rc=0
  shift
  log "== $name"
  t0=$(date +%s.%N)
  "$@" 2>&1 | tee "$work/${name// /-}.log" || rc=${PIPESTATUS[0]}
  t1=$(date +%s.%N)
  steps+=("$name")
  secs+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')")
  if [ "$rc" -ne 0 ]; then
    failed=1
    log "$name failed (exit $rc); its log: $work/${name// /-}.log"
    return "$rc"
  fi
}

summary() {
  local i
  echo
  echo "fresh-machine: $(git -C "$clone" log --oneline -1 2>/dev/null || echo "$ref") in $clone"
  for i in "${!steps[@]}"; do
    printf '  %-22s %8s s\n' "${steps[$i]}" "${secs[$i]}"
  done
}

finish() {
  local rc=$?
  if [ "$env_started" = 1 ] && [ "$env_stopped" = 0 ]; then
    (cd "$clone" && make env-down) >"$work/env-down.log" 2>&1 || log "env-down failed: $work/env-down.log"
  fi
  summary
  if [ "$failed" = 1 ] || [ "$rc" -ne 0 ] || [ "${FRESH_KEEP:-0}" = 1 ]; then
    log "kept $work"
  else
    rm -rf "$work"
  fi
  exit "$rc"
}
trap finish EXIT

if [ "$remove" = 1 ]; then
  # shellcheck disable=SC2046 # one word per package
  step "remove -dev packages" env DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq $(dev_packages)
  # The state the clone starts from: pkg-check must now name what is missing.
  if bash "$repo/test/pkg-check.sh" jansson:libjansson-dev libcurl:libcurl4-openssl-dev 2>&1; then
    die "the -dev packages are still visible to pkg-config after the removal"
  fi
fi

step "git clone" git clone --quiet --no-hardlinks "$repo" "$clone"
git -C "$clone" checkout --quiet --detach "$ref"
cd "$clone"

if [ "$build_only" = 1 ]; then
  step "make deps all" make deps all
  exit 0
fi

env_started=1
step "make demo" make demo
if [ "$run_test" = 1 ]; then
  step "make test" make test
fi
step "make env-down" make env-down
env_stopped=1
