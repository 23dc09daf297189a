/*
 * imagemap: what a container image means on a machine with no image registry.
 *
 * A rule's container has the host's root; the image name only picks extra bind
 * mounts (a host binary placed at a path in the container), the default entrypoint and
 * cmd, environment and working directory. The map is a text file, one rule per line,
 * the first rule whose glob matches wins:
 *
 *   # pattern   settings (key=value, separated by blanks)
 *   redis:*     entrypoint=redis-server
 *   op:*        bind=${OPERATOR_BIN}:/usr/local/bin/op entrypoint=/usr/local/bin/op
 *
 * Keys: entrypoint=a,b,c and cmd=a,b (argv words separated by commas), env=NAME=VALUE,
 * bind=HOST:CONTAINER[:rw] (read-only unless :rw), workdir=/path; env and bind repeat.
 * ${NAME} in a value is replaced by a loader variable (unknown → error). A relative bind
 * host path is made absolute against base_dir (NULL: the current directory).
 *
 * Matching uses fnmatch(3) on the image reference normalized as a container runtime
 * would: "docker.io/library/" and "docker.io/" prefixes dropped, ":latest" added when
 * there is neither tag nor digest ("redis" → "redis:latest").
 *
 * Real images: imagemap_add puts in an entry for one exact reference, made by ociimage.h
 * from an OCI image layout: its rootfs is the container's root instead of the host's,
 * with the image's entrypoint, cmd, env, workdir and user. An exact entry wins over every
 * pattern (an image the agent was given is that image, whatever the globs say).
 *
 * Pure data after loading (the file, then any imagemap_add, all before the first pod):
 * any thread may read a map; nobody changes it.
 */
#ifndef REDIS_OPERATOR_NODEAGENT_IMAGEMAP_H
#define REDIS_OPERATOR_NODEAGENT_IMAGEMAP_H

#include <stdbool.h>
#include <stddef.h>

struct err;

#define IMAGEMAP_MAX_BYTES   (64 * 1024) /* largest map file */
#define IMAGEMAP_MAX_LINE    4096        /* longest line */
#define IMAGEMAP_MAX_ENTRIES 256
#define IMAGEMAP_MAX_WORDS   64 /* argv words, env entries or binds per rule */

struct imagemap_bind {
	char *host_path; /* absolute */
	char *path;      /* absolute, inside the container */
	bool read_only;
};

struct imagemap_entry {
	char *pattern;
	char **entrypoint, **cmd; /* NULL-terminated; NULL when unset */
	char **env;               /* "NAME=VALUE", NULL-terminated; NULL when none */
	struct imagemap_bind *binds;
	size_t n_binds;
	char *workdir; /* NULL when unset */
	int line;      /* in the source, for messages (0: added by imagemap_add) */
	bool exact;    /* pattern is one normalized reference, matched before any glob */
	char *rootfs;  /* the image's unpacked root (absolute); NULL: the host's root */
	long uid, gid; /* the image's user; -1 when unset (root) */
};

struct imagemap {
	struct imagemap_entry *entries;
	size_t n;
	char *source; /* file name, for messages */
};

struct imagemap_var {
	const char *name, *value;
};

/* Parses text[0..len); source names it in messages ("images.conf:3: ..."). -EINVAL. */
int imagemap_parse(const char *text, size_t len, const char *source, const char *base_dir,
                   const struct imagemap_var *vars, size_t n_vars, struct imagemap **out,
                   struct err *e);
/* Reads and parses path: -ENOENT, -EFBIG (over IMAGEMAP_MAX_BYTES), -EINVAL. */
int imagemap_load(const char *path, const char *base_dir, const struct imagemap_var *vars,
                  size_t n_vars, struct imagemap **out, struct err *e);
void imagemap_free(struct imagemap *m);
/*
 * Adds en (its strings heap-allocated, pattern a normalized reference) as an exact entry
 * and takes everything it holds; *en is cleared. A second entry for the same reference
 * replaces the first. Not while pods use the map: entries may move.
 */
void imagemap_add(struct imagemap *m, struct imagemap_entry *en);
/* Frees what en holds and clears it (for an entry never added). NULL-safe. */
void imagemap_entry_release(struct imagemap_entry *en);

/* The first entry matching image, or NULL. Borrowed. */
const struct imagemap_entry *imagemap_find(const struct imagemap *m, const char *image);
/* "redis:*, valkey/valkey:*, ...": the patterns, for "not in the map" messages. Free it. */
char *imagemap_patterns(const struct imagemap *m);
/* Writes the normalized reference (see above) into out; false when it does not fit. */
bool imagemap_normalize(const char *image, char *out, size_t outlen);

#endif
