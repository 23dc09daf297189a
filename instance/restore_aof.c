/*
 * restore_aof: the start-up restore of a method aof backup (backup.h, restore.c).
 *
 * The archive is streamed from storage straight through lib/targz into a temporary
 * directory of the data dir (nothing else is buffered: one download, one write of each
 * file), then checked whole: its size and SHA-256 against the backup's manifest, and
 * the AOF manifest it carries against the files it carries. Only then is the directory
 * fsync'ed and renamed to appendonlydir, and the data dir fsync'ed: the server never
 * sees a partial or unverified AOF.
 *
 * What an archive may hold: the directory "appendonlydir" and plain files directly in
 * it, each at most once. Anything else (links, devices, other directories, absolute
 * names, "..", names outside appendonlydir) is refused by name, before anything of it
 * is written; lib/targz already refuses every type but files and directories.
 *
 * Threads: the restore thread only.
 */
#include "instance/backup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/file.h"
#include "lib/objstore/objstore.h"
#include "lib/targz.h"

struct x {
	const char *tmp; /* the directory that becomes appendonlydir */
	const atomic_bool *cancel;
	struct targz_reader *r;
	struct err rerr; /* the reader's (or a file's) error */
	int fd;          /* the file being written */
	bool write_failed;
};

static const char dir_prefix[] = INST_BACKUP_AOF_DIR "/";

static int refuse(const char *name, const char *why, struct err *e)
{
	return err_set(e, -EPROTO, "archive entry %s: %s", name, why);
}

static int x_begin(void *ctx, const struct targz_header *h, struct err *e)
{
	struct x *x = ctx;
	const char *file = h->name + sizeof(dir_prefix) - 1;
	char p[PATH_MAX];

	if (h->type == TARGZ_DIR)
		return strcmp(h->name, INST_BACKUP_AOF_DIR) == 0
		               ? 0
		               : refuse(h->name, "a directory other than " INST_BACKUP_AOF_DIR, e);
	if (strncmp(h->name, dir_prefix, sizeof(dir_prefix) - 1) != 0)
		return refuse(h->name, "outside " INST_BACKUP_AOF_DIR, e);
	if (strchr(file, '/') || strlen(file) >= INST_AOF_NAME_MAX)
		return refuse(h->name, "not a plain file name in " INST_BACKUP_AOF_DIR, e);
	snprintf(p, sizeof(p), "%s/%s", x->tmp, file);
	x->fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (x->fd < 0 && errno == EEXIST)
		return refuse(h->name, "in the archive twice", e);
	if (x->fd < 0) {
		x->write_failed = true;
		return err_set(e, -errno, "%s: %s", p, strerror(errno));
	}
	return 0;
}

static int x_data(void *ctx, const void *buf, size_t n, struct err *e)
{
	struct x *x = ctx;
	const char *p = buf;

	while (n) {
		ssize_t w = write(x->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			x->write_failed = true;
			return err_set(e, -errno, "%s: %s%s", x->tmp, strerror(errno),
			               errno == ENOSPC ? " (the data volume is full)" : "");
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int x_end(void *ctx, const struct targz_header *h, struct err *e)
{
	struct x *x = ctx;
	int rc = 0;

	if (h->type != TARGZ_FILE)
		return 0;
	if (fsync(x->fd) < 0) {
		x->write_failed = true;
		rc = err_set(e, -errno, "%s/%s: fsync: %s", x->tmp, h->name, strerror(errno));
	}
	close(x->fd);
	x->fd = -1;
	return rc;
}

static const struct targz_reader_ops x_ops = { x_begin, x_data, x_end };

/* objstore's write callback: the downloaded bytes into the reader. */
static int x_feed(void *ctx, const void *data, size_t n)
{
	struct x *x = ctx;

	if (atomic_load(x->cancel))
		return err_set(&x->rerr, -ECANCELED, "cancelled: the manager is stopping");
	return targz_reader_feed(x->r, data, n, &x->rerr);
}

/* Removes tmp and the files in it (only ever ours: plain files). */
static void rm_tmp(const char *tmp)
{
	DIR *d = opendir(tmp);
	struct dirent *de;
	char p[PATH_MAX + 256];

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", tmp, de->d_name);
		(void)unlink(p);
	}
	closedir(d);
	(void)rmdir(tmp);
}

/* The AOF manifest of the archive lists only files the archive holds. */
static int check_set(const char *tmp, const char *key, struct err *e)
{
	char p[PATH_MAX + 256], *text = NULL;
	struct inst_aof_set *set = xcalloc(1, sizeof(*set));
	struct err pe = { 0 };
	struct stat st;
	size_t len = 0;
	int rc;

	snprintf(p, sizeof(p), "%s/%s.manifest", tmp, INST_BACKUP_AOF_NAME);
	rc = file_read_all(p, INST_BACKUP_MANIFEST_MAX, &text, &len, NULL);
	if (rc < 0)
		rc = err_set(e, -EPROTO, "%s: no %s/%s.manifest in the archive", key,
		             INST_BACKUP_AOF_DIR, INST_BACKUP_AOF_NAME);
	if (!rc && (rc = inst_aof_manifest_parse(text, len, set, &pe)) < 0)
		rc = err_set(e, -EPROTO, "%s: %s", key, pe.msg);
	for (size_t i = 0; !rc && i < set->nfiles; i++) {
		snprintf(p, sizeof(p), "%s/%s", tmp, set->files[i].name);
		if (stat(p, &st) < 0 || !S_ISREG(st.st_mode))
			rc = err_set(e, -EPROTO,
			             "%s: the AOF manifest lists %s, not in the archive", key,
			             set->files[i].name);
	}
	free(text);
	free(set);
	return rc;
}

static void sync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

/* Download and extraction, then the checks against the manifest. */
static int extract(struct x *x, struct objstore *os, const char *key, const struct inst_manifest *m,
                   struct objstore_get_result *got, struct objstore_err *oe)
{
	int rc = objstore_get_stream(os, key, x_feed, x, got, oe);

	if (rc < 0 && x->rerr.code == rc) { /* the archive's or the disk's, not storage's */
		objstore_err_clear(oe);
		oe->retryable = x->write_failed;
		return err_set(&oe->err, rc, "%s: %s", key, x->rerr.msg);
	}
	if (rc < 0)
		return rc;
	if ((int64_t)got->size != m->size || strcmp(got->sha256, m->sha256) != 0)
		return err_set(&oe->err, -EBADMSG,
		               "%s is corrupt: %llu bytes with sha256 %s, the manifest says %lld "
		               "bytes with sha256 %s",
		               key, (unsigned long long)got->size, got->sha256, (long long)m->size,
		               m->sha256);
	if ((rc = targz_reader_finish(x->r, &x->rerr)) < 0)
		return err_set(&oe->err, rc, "%s: %s", key, x->rerr.msg);
	return check_set(x->tmp, key, &oe->err);
}

int inst_restore_aof(const char *data_dir, struct objstore *os, const char *key,
                     const struct inst_manifest *m, const _Atomic bool *cancel,
                     struct objstore_get_result *got, struct objstore_err *oe)
{
	char tmp[PATH_MAX], dst[PATH_MAX];
	struct x x = { .tmp = tmp, .cancel = cancel, .fd = -1 };
	int rc;

	snprintf(tmp, sizeof(tmp), "%s/%s.aof", data_dir, INST_RESTORE_TMP);
	snprintf(dst, sizeof(dst), "%s/%s", data_dir, INST_BACKUP_AOF_DIR);
	rm_tmp(tmp);
	if (mkdir(tmp, 0700) < 0) {
		oe->retryable = true;
		return err_set(&oe->err, -errno, "%s: %s", tmp, strerror(errno));
	}
	x.r = targz_reader_new(&x_ops, &x);
	rc = extract(&x, os, key, m, got, oe);
	if (x.fd >= 0)
		close(x.fd);
	targz_reader_free(x.r);
	if (!rc) {
		sync_path(tmp);
		if (rename(tmp, dst) < 0)
			rc = err_set(&oe->err, -errno, "%s: %s", dst, strerror(errno));
	}
	if (rc) {
		rm_tmp(tmp);
		return rc;
	}
	sync_path(data_dir);
	return 0;
}
