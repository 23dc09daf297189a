/*
 * ociimage: real container images for the test node agent, from OCI image layouts in tar
 * files (what `make image` writes, `skopeo copy ... oci-archive:` or `docker save` of a
 * recent Docker), so that a pod runs the files of its image rather than the host's.
 *
 * Loading REF from PATH (once, at the agent's start-up, before any pod):
 *   1. PATH is extracted (tar) into a scratch directory under cache_dir;
 *   2. index.json names the manifest: the one whose org.opencontainers.image.ref.name is
 *      REF's tag (or, for REF@sha256:..., whose digest it is), else the only one there;
 *   3. the manifest and the image config are read (their sha256 digests checked);
 *   4. the layers are unpacked in order, whiteouts honoured, by `umoci raw unpack` into
 *      <cache_dir>/<manifest digest hex>/rootfs — unless that directory exists already
 *      (it is made under a temporary name and renamed: present means complete), so an
 *      image is unpacked once per content, whatever the tar file is called;
 *   5. an exact imagemap entry for REF is added: rootfs, Entrypoint, Cmd, Env, WorkingDir
 *      and User (uid[:gid] or names, looked up in the image's /etc/passwd and /etc/group).
 * The scratch directory is removed on every path. Image indexes nested in the index and
 * platforms other than the one running are not chosen between: a layout holds one
 * manifest per reference.
 *
 * One thread (the agent's start-up). Limits: each JSON document at most
 * OCIIMG_MAX_JSON bytes; argv and env as imagemap.h (IMAGEMAP_MAX_WORDS).
 */
#ifndef REDIS_OPERATOR_NODEAGENT_OCIIMAGE_H
#define REDIS_OPERATOR_NODEAGENT_OCIIMAGE_H

#include <stdint.h>

struct err;
struct imagemap;

#define OCIIMG_MAX_JSON   (1024 * 1024)
#define OCIIMG_TIMEOUT_MS 120000 /* extraction and unpacking, each */

struct ociimg_opts {
	const char *umoci;     /* "umoci": looked up in PATH */
	const char *tar;       /* "tar" */
	const char *cache_dir; /* absolute; made if missing */
	int64_t timeout_ms;    /* per command; 0: OCIIMG_TIMEOUT_MS */
};

/*
 * Loads the layout in the tar file path as image ref and adds it to m (imagemap_add).
 * 0; -ENOENT (no such file, no manifest for the reference), -EPROTO (a malformed or
 * mismatching document), -EIO (tar or umoci failed, with their output), -EINVAL.
 */
int ociimg_load(struct imagemap *m, const char *ref, const char *path, const struct ociimg_opts *o,
                struct err *e);

/* "REF=PATH[,REF=PATH...]" (the agent's --oci-images): each loaded in turn. */
int ociimg_load_list(struct imagemap *m, const char *list, const struct ociimg_opts *o,
                     struct err *e);

#endif
