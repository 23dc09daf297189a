#!/usr/bin/env bash
# `make image`: the operator's OCI image, built offline and reproducibly with umoci
# (image/tool.sh builds it once into the cache), as an OCI image layout in a tar file.
#
#   image/build.sh BIN OUT.tar
#   image/build.sh --rootfs BIN DIR   only the image's files, into DIR (image/Dockerfile;
#                                     needs SOURCE_DATE_EPOCH alone, no umoci)
#
# BIN is a redis-operator binary linked with the RPATH $ORIGIN/lib (the Makefile's). The
# image has no base and one layer:
#   /usr/local/bin/redis-operator, /usr/local/bin/lib/*   what `BIN copy-binary` copies
#                                    (the binary and its non-glibc library closure), the
#                                    same files the data pods' init container copies out
#   /lib/x86_64-linux-gnu/*, /lib64/ld-linux-x86-64.so.2   glibc's libraries the binary
#                                    loads (ldd), and libgcc_s (glibc loads it for thread
#                                    cancellation and unwinding): copy-binary leaves glibc
#                                    out for the redis images, this image has none of its own
#   /etc/passwd, /etc/group          root and nonroot (65532); no shell anywhere
#   /etc/ssl/certs/ca-certificates.crt   the host's CA bundle (backups over HTTPS)
#   /usr/share/zoneinfo/...          the host's tzdata (lib/tz: RedisScheduledBackup
#                                    timeZone), its relative links kept as links; not
#                                    right/ and posix/ (duplicates) or localtime
#   /usr/share/doc/...               our LICENSE, each shipped library's Debian copyright
#                                    file and packages.txt (package, version: what is inside)
#   /tmp                             1777, for runs without an emptyDir there
# Config: User 65532:65532, Entrypoint /usr/local/bin/redis-operator, Cmd controller,
# labels (and manifest annotations) org.opencontainers.image.{title,description,version,
# revision,source,licenses,created}.
#
# Reproducible: modes are normalized, every timestamp is SOURCE_DATE_EPOCH (umoci uses it
# for the config's and history's created times too), GNU tar writes the layer with sorted
# names, owners 0:0 and that mtime (umoci raw add-layer compresses and adds it), and the
# outer tar is made the same way. The same inputs give the same manifest digest and the same tar.
#
# Env (the Makefile sets them; all required): IMAGE_NAME, IMAGE_TAG (the ref name in the
# layout is IMAGE_TAG; users load it as IMAGE_NAME:IMAGE_TAG), IMAGE_VERSION,
# IMAGE_REVISION, IMAGE_SOURCE, SOURCE_DATE_EPOCH. Optional: UMOCI (a umoci binary).
# Prints the tar's size and the manifest digest; OUT.digest holds the digest.
set -euo pipefail
umask 022
here=$(cd "$(dirname "$0")" && pwd)
only_rootfs=0
[ "${1:-}" = --rootfs ] && { only_rootfs=1; shift; }
[ $# -eq 2 ] || { echo "usage: image/build.sh [--rootfs] BIN OUT.tar|DIR" >&2; exit 2; }
bin=$(realpath "$1") out=$2
needed="IMAGE_NAME IMAGE_TAG IMAGE_VERSION IMAGE_REVISION IMAGE_SOURCE SOURCE_DATE_EPOCH"
[ $only_rootfs -eq 0 ] || needed=SOURCE_DATE_EPOCH
for v in $needed; do
  [ -n "${!v:-}" ] || { echo "image: $v is not set" >&2; exit 2; }
done
export SOURCE_DATE_EPOCH
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)

if [ $only_rootfs -eq 1 ]; then
  root=$out
  [ ! -e "$root" ] || [ -z "$(ls -A "$root")" ] || { echo "image: $root is not empty" >&2; exit 2; }
  mkdir -p "$root"
else
  umoci=${UMOCI:-$(bash "$here/tool.sh" | tail -1)}
  mkdir -p "$(dirname "$out")"
  work=$(mktemp -d "$(dirname "$out")/.image.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  root=$work/rootfs layout=$work/oci
  mkdir -p "$root"
fi

# glibc's libraries, by the names copy-binary leaves out (instance/copybin.c).
glibc_re='^(libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|ld-linux|libresolv\.so|libutil\.so|libanl\.so|libnss_|libmvec\.so|ld64\.so)'

# Path of the Debian package that ships path (merged /usr: dpkg may know either name).
deb_of() {
  local p
  for p in "$1" "$(realpath "$1")" "/usr$1" "${1#/usr}"; do
    dpkg-query -S "$p" 2>/dev/null | sed -n '1s/: .*//p' | grep . && return 0
  done
  return 1
}

add_binary() {
  mkdir -p "$root/usr/local"
  "$bin" copy-binary "$root/usr/local/bin" >/dev/null
}

# glibc as the loader resolves it for BIN, plus libgcc_s, into the multiarch directory;
# the ELF interpreter's path links there.
add_glibc() {
  local interp libc multi
  interp=$(readelf -l "$bin" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
  libc=$(ldd "$bin" | awk '$1 == "libc.so.6" { print $3 }')
  [ -n "$interp" ] && [ -n "$libc" ] || { echo "image: cannot find the interpreter or libc of $bin" >&2; exit 1; }
  multi=$(dirname "$libc")
  mkdir -p "$root$multi" "$root$(dirname "$interp")"
  ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r lib; do
    if [[ "$(basename "$lib")" =~ $glibc_re ]]; then cp -L "$lib" "$root$multi/"; fi
  done
  cp -L "$interp" "$root$multi/$(basename "$interp")"
  [ "$(dirname "$interp")" = "$multi" ] || ln -s "$multi/$(basename "$interp")" "$root$interp"
  cp -L "$multi/libgcc_s.so.1" "$root$multi/"
}

add_etc() {
  mkdir -p "$root/etc/ssl/certs" "$root/tmp"
  printf '%s\n' 'root:x:0:0:root:/root:/usr/sbin/nologin' \
    'nonroot:x:65532:65532:nonroot:/nonexistent:/usr/sbin/nologin' >"$root/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nonroot:x:65532:' >"$root/etc/group"
  cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
}

# The IANA zones lib/tz reads, from the build machine's tzdata (Debian: priority required).
# Left out: right/ (leap-second times, which lib/tz does not support), posix/ (links to the
# same files) and localtime (-> /etc/localtime, the build machine's own zone). The links
# left are relative (GB -> Europe/London) and stay links; one that is absolute or dangling
# in the image fails the build.
add_zoneinfo() {
  local src=/usr/share/zoneinfo dst=$root/usr/share/zoneinfo f bad
  head -c 4 "$src/Europe/Berlin" 2>/dev/null | grep -q TZif ||
    { echo "image: no TZif file $src/Europe/Berlin (install tzdata)" >&2; exit 1; }
  mkdir -p "$dst"
  for f in "$src"/*; do
    case ${f##*/} in right | posix | localtime) continue ;; esac
    cp -R -P "$f" "$dst/"
  done
  bad=$(find "$dst" -type l \( -lname '/*' -o -xtype l \) -printf '/%P ')
  [ -z "$bad" ] || { echo "image: zoneinfo links absolute or dangling: $bad" >&2; exit 1; }
}

# Our license; for each shipped file from a Debian package, that package's copyright file
# and a line "package version" in packages.txt.
add_docs() {
  local doc=$root/usr/share/doc f pkg
  mkdir -p "$doc/redis-operator"
  cp "$here/../LICENSE" "$doc/redis-operator/LICENSE"
  # one zone file stands for tzdata
  find "$root" -type f \( -name '*.so*' -o -name 'ca-certificates.crt' \
    -o -path "$root/usr/share/zoneinfo/Etc/UTC" \) -printf '/%P\n' | sort |
    while read -r f; do
      case $f in
        /usr/local/bin/lib/*) f=$(ldd "$bin" | awk -v n="${f##*/}" '$1 == n { print $3 }') ;;
        */ca-certificates.crt) echo ca-certificates; continue ;; # made by update-ca-certificates
      esac
      deb_of "${f:-/nonexistent}" || echo "image: no Debian package ships $f" >&2
    done | sort -u | while read -r pkg; do
      mkdir -p "$doc/${pkg%%:*}"
      cp -L "/usr/share/doc/${pkg%%:*}/copyright" "$doc/${pkg%%:*}/copyright"
      dpkg-query -W -f '${Package} ${Version}\n' "$pkg"
    done >"$doc/redis-operator/packages.txt"
}

# No group/other write, /tmp sticky, one timestamp (owners are set by tar_layer).
normalize() {
  chmod -R u+rwX,go+rX,go-w "$root"
  chmod 1777 "$root/tmp"
  find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
}

# The layer, by GNU tar: names sorted, owners 0:0, one mtime, no "./" or "/" entry.
tar_layer() {
  local top
  top=$(cd "$root" && find . -mindepth 1 -maxdepth 1 -printf '%P\n' | LC_ALL=C sort)
  # shellcheck disable=SC2086 # top-level names: no blanks
  tar --sort=name --format=gnu --numeric-owner --owner=0 --group=0 --mtime="@$SOURCE_DATE_EPOCH" \
    -C "$root" -cf "$work/layer.tar" $top
}

build_layout() {
  local tag=$IMAGE_TAG kv labels=()
  for kv in "title=$IMAGE_NAME" "description=Kubernetes operator for Redis and Valkey" \
    "version=$IMAGE_VERSION" "revision=$IMAGE_REVISION" "source=$IMAGE_SOURCE" \
    "licenses=Apache-2.0" "created=$created"; do
    labels+=(--config.label "org.opencontainers.image.$kv" --manifest.annotation "org.opencontainers.image.$kv")
  done
  "$umoci" init --layout "$layout"
  "$umoci" new --image "$layout:$tag"
  "$umoci" raw add-layer --image "$layout:$tag" --compress gzip \
    --history.created_by "image/build.sh: redis-operator, its libraries, /etc" "$work/layer.tar"
  "$umoci" config --image "$layout:$tag" --config.user 65532:65532 \
    --config.entrypoint /usr/local/bin/redis-operator --config.cmd controller \
    --config.workingdir / --config.env PATH=/usr/local/bin:/usr/bin:/bin \
    --author redis-operator --history.created_by "image/build.sh: config" "${labels[@]}"
  "$umoci" gc --layout "$layout"
}

write_tar() {
  local digest
  chmod -R u+rwX,go+rX,go-w "$layout"
  tar --sort=name --format=gnu --numeric-owner --owner=0 --group=0 --mtime="@$SOURCE_DATE_EPOCH" \
    -C "$layout" -cf "$out.tmp" oci-layout index.json blobs
  mv "$out.tmp" "$out"
  digest=$(jq -r '.manifests[0].digest' "$layout/index.json")
  echo "$digest" >"$out.digest"
  echo "image: $out $(stat -c %s "$out") bytes ($(du -h --apparent-size "$out" | cut -f1)), $IMAGE_NAME:$IMAGE_TAG manifest $digest"
}

add_binary
add_glibc
add_etc
add_zoneinfo
add_docs
normalize
[ $only_rootfs -eq 0 ] || exit 0
tar_layer
build_layout
write_tar
