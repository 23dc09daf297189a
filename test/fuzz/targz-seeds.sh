#!/usr/bin/env bash
# test/fuzz/targz-seeds.sh DIR: writes the seeds of test/fuzz/fuzz_targz.c into DIR with
# GNU tar and gzip (run.sh calls it before that fuzzer; the seeds are built, never kept in
# the tree). They are archives as an aof backup holds them (appendonlydir/ with its AOF
# manifest, a base and an increment). The first byte is the harness's mode: bit 0 set, the
# rest is a raw tar that the harness gzips before feeding it; bits 1..7, the size of the
# pieces fed (0: all at once). gz-* are gzip streams as stored; tar-* raw tars: the good
# one, and ones the reader refuses (a symbolic link, a `..` component, a GNU long name).
set -euo pipefail
mkdir -p "$1"
out=$(cd "$1" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
mkdir appendonlydir
printf 'file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n' \
  >appendonlydir/appendonly.aof.manifest
printf 'REDIS0011\xfa\x09redis-ver\x057.0.15\xff\x00\x00\x00\x00\x00\x00\x00\x00' >appendonlydir/appendonly.aof.1.base.rdb
printf '*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n' >appendonlydir/appendonly.aof.1.incr.aof
T="tar --format=ustar -b 1 --owner=0 --group=0 --mtime=@1767225600 --sort=name"
$T -cf aof.tar appendonlydir
# mode byte (fuzz_targz.c): bit 0 = raw tar (the harness gzips it), bits 1..7 = piece size
{ printf '\x00'; gzip -n -1 <aof.tar; } >"$out/gz-aof-whole"
{ printf '\x0e'; gzip -n -1 <aof.tar; } >"$out/gz-aof-7byte-pieces"
{ printf '\x01'; cat aof.tar; } >"$out/tar-aof"
ln -s /etc/passwd appendonlydir/link
$T -cf link.tar appendonlydir/link
{ printf '\x01'; cat link.tar; } >"$out/tar-symlink"
$T -P -cf dots.tar appendonlydir/../appendonlydir/appendonly.aof.manifest
{ printf '\x01'; cat dots.tar; } >"$out/tar-dotdot"
long=appendonlydir/$(printf 'x%.0s' $(seq 1 120))
cp appendonlydir/appendonly.aof.manifest "$long"
tar --format=gnu -b 1 -cf long.tar "$long"
{ printf '\x01'; cat long.tar; } >"$out/tar-gnu-longname"
