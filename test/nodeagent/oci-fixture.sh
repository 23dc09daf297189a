#!/usr/bin/env bash
# A small OCI image layout for the node agent's tests (test_runtime.c oci_image_root),
# made with umoci (image/tool.sh builds or finds it): DIR/image.tar holds the image
# tagged t1, DIR/umoci is the umoci that made it.
#   layer 1: the host's dash as /bin/sh with its libc, /data/{keep,gone}, /opq/old,
#            /etc/passwd and /etc/group with tester (4321) and testers (4322)
#   layer 2: a whiteout of /data/gone
#   layer 3: /opq replaced (opaque) by a directory holding only "new"
#   config:  Entrypoint /bin/sh, Cmd -c "echo default cmd $FIXTURE", Env FIXTURE=oci,
#            WorkingDir /data, User tester (a name: the agent looks it up in the image)
set -euo pipefail
dir=$1
repo=$(cd "$(dirname "$0")/../.." && pwd)
umoci=$(bash "$repo/image/tool.sh" | tail -1)
rm -rf "$dir"; mkdir -p "$dir/root/bin" "$dir/root/data" "$dir/root/opq" "$dir/root/etc" "$dir/opq"
ln -s "$umoci" "$dir/umoci"
sh=$(readlink -f /bin/sh)
cp "$sh" "$dir/root/bin/sh"
for lib in $(ldd "$sh" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
  mkdir -p "$dir/root$(dirname "$lib")"; cp -L "$lib" "$dir/root$lib"
done
echo keep >"$dir/root/data/keep"; echo gone >"$dir/root/data/gone"; echo old >"$dir/root/opq/old"
echo new >"$dir/opq/new"
printf 'root:x:0:0::/:/bin/sh\ntester:x:4321:4322::/data:/bin/sh\n' >"$dir/root/etc/passwd"
printf 'root:x:0:\ntesters:x:4322:\n' >"$dir/root/etc/group"
export SOURCE_DATE_EPOCH=1700000000
L="$dir/layout"
"$umoci" init --layout "$L"
"$umoci" new --image "$L:t1"
"$umoci" insert --image "$L:t1" "$dir/root" /
"$umoci" insert --image "$L:t1" --whiteout /data/gone
"$umoci" insert --image "$L:t1" --opaque "$dir/opq" /opq
"$umoci" config --image "$L:t1" --config.entrypoint /bin/sh --config.cmd -c \
  --config.cmd 'echo default cmd $FIXTURE' --config.env FIXTURE=oci --config.env PATH=/bin \
  --config.workingdir /data --config.user tester
"$umoci" gc --layout "$L"
tar -C "$L" -cf "$dir/image.tar" oci-layout index.json blobs
rm -rf "$dir/root" "$dir/opq" "$L"
