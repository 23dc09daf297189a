#!/usr/bin/env bash
# test/pkg-check.sh MODULE:PACKAGE...: the Makefile's check that pkg-config knows every
# module the build compiles and links against, run before anything is compiled (the
# $(BUILD)/.deps-ok rule, and the flag variables when pkg-config fails). PACKAGE is the
# Debian package that provides MODULE (test/deps.sh installs them all).
#
# Prints one line per missing module, naming it and its package, and exits 1; prints
# nothing and exits 0 when every module is there. Honours PKG_CONFIG_PATH/_LIBDIR.
set -u
if ! command -v pkg-config >/dev/null 2>&1; then
  echo "missing program 'pkg-config': run 'make deps' (apt-get install pkg-config)" >&2
  exit 1
fi
status=0
for pair in "$@"; do
  mod=${pair%%:*} deb=${pair#*:}
  if ! pkg-config --exists "$mod" 2>/dev/null; then
    echo "missing package for pkg-config module '$mod': run 'make deps' (apt-get install $deb)" >&2
    status=1
  fi
done
exit $status
