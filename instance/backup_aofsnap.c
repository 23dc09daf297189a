/*
 * backup_aofsnap: method aof's snapshot (backup.h): a consistent set of the server's
 * multi-part AOF files (Redis 7 / Valkey 8), held open, and the tar.gz stream of them.
 *
 * Consistency. BGREWRITEAOF first (after any rewrite already running), so the set is
 * one base plus the increments written since, and wait until INFO says it is done
 * (aof_rewrites or aof_rewrites_consecutive_failures moved, nothing in progress or
 * scheduled; aof_last_bgrewrite_status:err fails the backup, retryable). Then the AOF
 * manifest is read, every file it lists opened, and the manifest read again: when it
 * changed (another rewrite finished in between) everything is closed and tried again.
 * Open descriptors keep their files even once the server deletes them after a later
 * rewrite. The base and every increment but the last never change; the last one's
 * length is taken by fstat right after the second manifest read, and exactly that many
 * bytes are archived. Every write acknowledged before that instant is inside that
 * length: the server write()s the AOF before it replies. A command being written at
 * that instant may be cut; the server drops such a tail of the last file when it loads
 * (aof-load-truncated, yes by default on both engines).
 *
 * The archive: appendonlydir/, the manifest of exactly the archived files (history
 * files left out), then the base and the increments, as the server named them.
 *
 * Threads: the backup thread only. The snapshot owns its descriptors and the writer.
 */
#include "instance/backup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/file.h"
#include "lib/targz.h"
#include "lib/valkey/conn.h"
#include "lib/valkey/info.h"

#define REWRITE_TIMEOUT_MS (6LL * 3600 * 1000)
#define POLL_MS            100
#define OPEN_TRIES         20
#define TARGZ_LEVEL        1 /* zlib's fastest: the upload, not the CPU, should be the limit */

struct src {
	struct inst_aof_snap *s;
	int fd; /* -1: the manifest, from memory */
};

struct inst_aof_snap {
	const atomic_bool *cancel;
	char dir[PATH_MAX]; /* <dir>/<appenddirname> */
	char manifest_name[INST_AOF_NAME_MAX + 16];
	struct inst_aof_set set;
	int fds[INST_AOF_FILES_MAX];
	uint64_t sizes[INST_AOF_FILES_MAX];
	char *manifest; /* the archived manifest's text */
	size_t manifest_len;
	struct src srcs[INST_AOF_FILES_MAX + 1];
	struct targz_writer *w;
};

static int check_cancel(const struct inst_aof_snap *s, struct err *e)
{
	return atomic_load(s->cancel) ? err_set(e, -ECANCELED, "cancelled: the manager is stopping")
	                              : 0;
}

/* A field of INFO persistence, as an integer. */
static int persistence(struct vk_conn *c, const char *const fields[], long long out[], size_t n,
                       struct err *e)
{
	struct vk_reply *r = NULL;
	const char *text;
	size_t len;
	char v[64];
	int rc = vk_command(c, &r, e, "INFO", "persistence");

	if (rc)
		return rc < 0 ? rc : -EPROTO;
	text = vk_reply_str(r, &len);
	for (size_t i = 0; i < n && !rc; i++) {
		if (!text || vk_info_get(text, len, fields[i], v, sizeof(v)) < 0)
			rc = err_set(e, -EPROTO,
			             "INFO persistence: no %s (Redis 7 or later needed)",
			             fields[i]);
		else
			out[i] = strcmp(v, "ok") == 0    ? 0
			         : strcmp(v, "err") == 0 ? 1
			                                 : strtoll(v, NULL, 10);
	}
	vk_reply_free(r);
	return rc;
}

enum { F_REWRITES, F_FAILURES, F_RUNNING, F_SCHEDULED, F_LAST_ERR, F_N };
static const char *const rewrite_fields[F_N] = {
	"aof_rewrites",          "aof_rewrites_consecutive_failures", "aof_rewrite_in_progress",
	"aof_rewrite_scheduled", "aof_last_bgrewrite_status",
};

/* Polls INFO until no rewrite runs or waits; with before, until one finished since. */
static int rewrite_wait(struct inst_aof_snap *s, struct vk_conn *c, const long long *before,
                        long long now[F_N], struct err *e)
{
	int64_t deadline = clock_mono_ms() + REWRITE_TIMEOUT_MS;
	int rc;

	for (;;) {
		if ((rc = persistence(c, rewrite_fields, now, F_N, e)) < 0)
			return rc;
		if (!now[F_RUNNING] && !now[F_SCHEDULED] &&
		    (!before || now[F_REWRITES] > before[F_REWRITES] ||
		     now[F_FAILURES] > before[F_FAILURES]))
			return 0;
		if ((rc = check_cancel(s, e)) < 0)
			return rc;
		if (clock_mono_ms() > deadline)
			return err_set(e, -ETIMEDOUT, "BGREWRITEAOF still running after %lld s",
			               REWRITE_TIMEOUT_MS / 1000);
		usleep(POLL_MS * 1000);
	}
}

static int rewrite(struct inst_aof_snap *s, struct vk_conn *c, struct err *e)
{
	long long before[F_N] = { 0 }, now[F_N] = { 0 };
	int rc;

	for (int tries = 0; tries < 100; tries++) {
		struct vk_reply *r = NULL;
		struct err ce = { 0 };

		if ((rc = rewrite_wait(s, c, NULL, before, e)) < 0)
			return rc;
		rc = vk_command(c, &r, &ce, "BGREWRITEAOF");
		vk_reply_free(r);
		if (rc == 0)
			break;
		if (!strstr(ce.msg, "in progress"))
			return err_set(e, rc, "BGREWRITEAOF: %s", ce.msg);
	}
	if (rc)
		return err_set(e, rc, "BGREWRITEAOF: still refused after 100 tries");
	if ((rc = rewrite_wait(s, c, before, now, e)) < 0)
		return rc;
	if (now[F_LAST_ERR] || now[F_FAILURES] > before[F_FAILURES])
		return err_set(e, -EIO,
		               "BGREWRITEAOF failed: aof_last_bgrewrite_status:err (see "
		               "the server's log; disk full?)");
	return 0;
}

static int config(struct vk_conn *c, const char *name, char *out, size_t cap, struct err *e)
{
	struct buf b = BUF_INIT(PATH_MAX);
	int rc = vk_config_get(c, name, &b, e);

	if (!rc && b.len >= cap)
		rc = err_set(e, -ENAMETOOLONG, "CONFIG GET %s: longer than %zu bytes", name,
		             cap - 1);
	if (!rc)
		memcpy(out, buf_cstr(&b), b.len + 1);
	buf_release(&b);
	return rc;
}

/* appendonly yes, and where the AOF directory and its manifest are. */
static int locate(struct inst_aof_snap *s, struct vk_conn *c, struct err *e)
{
	char on[16], dir[PATH_MAX], sub[INST_AOF_NAME_MAX], base[INST_AOF_NAME_MAX];
	int rc;

	if ((rc = config(c, "appendonly", on, sizeof(on), e)) < 0)
		return rc;
	if (strcmp(on, "yes") != 0)
		return err_set(e, -ENOTSUP,
		               "spec.method: aof needs appendonly yes, and this server runs with "
		               "appendonly %s (storage emptyDir, or spec.redis sets it); use "
		               "method rdb",
		               on);
	if ((rc = config(c, "dir", dir, sizeof(dir), e)) < 0 ||
	    (rc = config(c, "appenddirname", sub, sizeof(sub), e)) < 0 ||
	    (rc = config(c, "appendfilename", base, sizeof(base), e)) < 0)
		return rc;
	if (snprintf(s->dir, sizeof(s->dir), "%s/%s", dir, sub) >= (int)sizeof(s->dir))
		return err_set(e, -ENAMETOOLONG, "%s/%s: too long", dir, sub);
	snprintf(s->manifest_name, sizeof(s->manifest_name), "%s.manifest", base);
	return 0;
}

static void close_all(struct inst_aof_snap *s)
{
	for (size_t i = 0; i < INST_AOF_FILES_MAX; i++) {
		if (s->fds[i] >= 0)
			close(s->fds[i]);
		s->fds[i] = -1;
	}
}

static int read_manifest(struct inst_aof_snap *s, char **text, size_t *len, struct err *e)
{
	char p[PATH_MAX + INST_AOF_NAME_MAX + 16];

	snprintf(p, sizeof(p), "%s/%s", s->dir, s->manifest_name);
	return file_read_all(p, INST_BACKUP_MANIFEST_MAX, text, len, e);
}

/* Opens every file of the manifest: 0, -EAGAIN when one vanished (a rewrite ended). */
static int open_set(struct inst_aof_snap *s, struct err *e)
{
	char p[PATH_MAX + INST_AOF_NAME_MAX + 2];

	for (size_t i = 0; i < s->set.nfiles; i++) {
		snprintf(p, sizeof(p), "%s/%s", s->dir, s->set.files[i].name);
		s->fds[i] = open(p, O_RDONLY | O_CLOEXEC);
		if (s->fds[i] < 0 && errno == ENOENT)
			return -EAGAIN;
		if (s->fds[i] < 0)
			return err_set(e, -errno, "%s: %s", p, strerror(errno));
	}
	return 0;
}

/* One try: manifest, files opened, manifest again (unchanged), sizes. */
static int capture_once(struct inst_aof_snap *s, struct err *e)
{
	char *t1 = NULL, *t2 = NULL;
	size_t l1 = 0, l2 = 0;
	struct stat st;
	int rc = read_manifest(s, &t1, &l1, e);

	if (!rc)
		rc = inst_aof_manifest_parse(t1, l1, &s->set, e);
	if (!rc)
		rc = open_set(s, e);
	if (!rc && (rc = read_manifest(s, &t2, &l2, e)) == 0 &&
	    (l1 != l2 || memcmp(t1, t2, l1) != 0))
		rc = -EAGAIN;
	for (size_t i = 0; !rc && i < s->set.nfiles; i++) {
		if (fstat(s->fds[i], &st) < 0)
			rc = err_set(e, -errno, "%s: %s", s->set.files[i].name, strerror(errno));
		else
			s->sizes[i] = (uint64_t)st.st_size;
	}
	free(t1);
	free(t2);
	if (rc)
		close_all(s);
	return rc;
}

static ssize_t src_read(void *ctx, uint64_t off, void *buf, size_t len, struct err *e)
{
	struct src *r = ctx;
	ssize_t n;
	int rc;

	if ((rc = check_cancel(r->s, e)) < 0)
		return rc;
	if (r->fd < 0) {
		if (off >= r->s->manifest_len)
			return 0;
		n = (ssize_t)(r->s->manifest_len - off < len ? r->s->manifest_len - off : len);
		memcpy(buf, r->s->manifest + off, (size_t)n);
		return n;
	}
	do
		n = pread(r->fd, buf, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return err_set(e, -errno, "reading the AOF: %s", strerror(errno));
	return n;
}

static int add(struct inst_aof_snap *s, const char *file, uint64_t size, struct src *src,
               struct err *e)
{
	char name[TARGZ_NAME_MAX + 1];
	struct targz_entry ent = { .name = name,
		                   .mode = 0600,
		                   .mtime = clock_wall_ms() / 1000,
		                   .size = size,
		                   .read = src_read,
		                   .ctx = src };

	snprintf(name, sizeof(name), "%s/%s", INST_BACKUP_AOF_DIR, file);
	return targz_writer_add(s->w, &ent, e);
}

static int build_archive(struct inst_aof_snap *s, struct err *e)
{
	struct targz_entry dir = { .name = INST_BACKUP_AOF_DIR,
		                   .type = TARGZ_DIR,
		                   .mode = 0700,
		                   .mtime = clock_wall_ms() / 1000 };
	int rc;

	s->manifest = inst_aof_manifest_text(&s->set, &s->manifest_len);
	s->w = targz_writer_new(TARGZ_LEVEL);
	s->srcs[0] = (struct src){ .s = s, .fd = -1 };
	if ((rc = targz_writer_add(s->w, &dir, e)) < 0 ||
	    (rc = add(s, s->manifest_name, s->manifest_len, &s->srcs[0], e)) < 0)
		return rc;
	for (size_t i = 0; i < s->set.nfiles; i++) {
		s->srcs[i + 1] = (struct src){ .s = s, .fd = s->fds[i] };
		if ((rc = add(s, s->set.files[i].name, s->sizes[i], &s->srcs[i + 1], e)) < 0)
			return rc;
	}
	return 0;
}

int inst_aof_snapshot(struct vk_conn *c, const atomic_bool *cancel, struct inst_aof_snap **out,
                      struct err *e)
{
	struct inst_aof_snap *s = xcalloc(1, sizeof(*s));
	int rc;

	s->cancel = cancel;
	for (size_t i = 0; i < INST_AOF_FILES_MAX; i++)
		s->fds[i] = -1;
	rc = locate(s, c, e);
	if (!rc)
		rc = rewrite(s, c, e);
	for (int t = 0; !rc || rc == -EAGAIN; t++) {
		if (t == OPEN_TRIES) {
			rc = err_set(e, -EAGAIN, "the AOF manifest kept changing (%d tries)", t);
			break;
		}
		if ((rc = capture_once(s, e)) == 0)
			break;
	}
	if (!rc)
		rc = build_archive(s, e);
	if (rc) {
		inst_aof_snap_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

struct targz_writer *inst_aof_snap_writer(struct inst_aof_snap *s)
{
	return s->w;
}

void inst_aof_snap_free(struct inst_aof_snap *s)
{
	if (!s)
		return;
	close_all(s);
	targz_writer_free(s->w);
	free(s->manifest);
	free(s);
}
