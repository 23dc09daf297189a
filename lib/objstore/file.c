/*
 * objstore/file: objstore_put_file (objstore.h), a file uploaded part by part from the
 * file itself, so that the upload's memory is one OBJSTORE_FILE_CHUNK buffer whatever the
 * part or file size.
 *
 * Each part is a range of the file. A first pass reads the range through the chunk
 * buffer for the digests the request must carry before its body (S3: the SHA-256 that
 * x-amz-content-sha256 signs; Azure: Content-MD5) and for the SHA-256 of the whole file;
 * then the request is sent with libcurl reading the same range again (http.c's read
 * callback; the pages are usually still in the page cache). The server checks the part
 * against its digest, so a byte changed between the two passes fails the part instead
 * of storing something other than what was hashed. The part order, the abort of a
 * failed multipart upload and the result are objstore_put_stream's.
 *
 * objstore_put_growing is the same over a file still being written (a spool another
 * thread fills): before each part the avail callback blocks until the file holds the
 * whole part (the first: one byte more, to choose one request or a multipart upload) or
 * says it is final, so the upload follows the writer part by part. objstore_put_file
 * is objstore_put_growing with a callback that answers the size fstat gave, final.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/base64.h"

struct file_up {
	struct objstore *os;
	struct objstore_upload u;
	int fd;
	const atomic_bool *cancel;
	uint64_t size; /* hashed so far */
	objstore_avail_fn avail;
	void *ctx;
	struct objstore_put_result *res;
	unsigned char *chunk;
	EVP_MD_CTX *whole, *part;
};

static int file_fail(struct file_up *f, int code, const char *what, struct objstore_err *oe)
{
	return err_set(oe ? &oe->err : NULL, code, "%s upload %s: %s", f->os->ops->name, f->u.key,
	               what);
}

/* The digest the request of range r carries, from md (S3: SHA-256; Azure: MD5). */
static void range_digest(const struct objstore *os, EVP_MD_CTX *md, struct objstore_file_range *r)
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned n = 0;

	EVP_DigestFinal_ex(md, d, &n);
	if (os->provider == OBJSTORE_S3) {
		objstore_hex(d, n, r->sha256);
	} else {
		char *b64 = base64_encode(d, n);

		snprintf(r->md5, sizeof(r->md5), "%s", b64);
		free(b64);
	}
}

/* The first pass over r: the part's digest and the whole file's SHA-256. */
static int hash_range(struct file_up *f, struct objstore_file_range *r, struct objstore_err *oe)
{
	const EVP_MD *md = f->os->provider == OBJSTORE_S3 ? EVP_sha256() : EVP_md5();
	char why[128];

	if (!EVP_DigestInit_ex(f->part, md, NULL))
		abort();
	for (uint64_t done = 0; done < r->len;) {
		size_t want = r->len - done < OBJSTORE_FILE_CHUNK ? (size_t)(r->len - done)
		                                                  : OBJSTORE_FILE_CHUNK;
		ssize_t n;

		if (f->cancel && atomic_load(f->cancel))
			return file_fail(f, -ECANCELED, "cancelled", oe);
		do
			n = pread(f->fd, f->chunk, want, (off_t)(r->off + done));
		while (n < 0 && errno == EINTR);
		if (n <= 0) {
			snprintf(why, sizeof(why), "reading the file at %" PRIu64 ": %s",
			         r->off + done, n < 0 ? strerror(errno) : "it got shorter");
			return file_fail(f, n < 0 ? -errno : -EIO, why, oe);
		}
		EVP_DigestUpdate(f->part, f->chunk, (size_t)n);
		EVP_DigestUpdate(f->whole, f->chunk, (size_t)n);
		done += (uint64_t)n;
	}
	range_digest(f->os, f->part, r);
	return 0;
}

/* Part n (0-based) as a range of the file, hashed: len bytes from n * part_size. */
static int range_of(struct file_up *f, uint64_t n, uint64_t len, struct objstore_file_range *r,
                    struct objstore_err *oe)
{
	*r = (struct objstore_file_range){
		.fd = f->fd, .off = n * f->os->part_size, .len = len, .cancel = f->cancel
	};
	f->size += len;
	return hash_range(f, r, oe);
}

/* Waits for the bytes of part n: its length, 0 when the file ended before it. */
static int part_len(struct file_up *f, uint64_t n, uint64_t *len, struct objstore_err *oe)
{
	uint64_t off = n * f->os->part_size, want = off + f->os->part_size, have = 0;
	bool final = false;
	struct err why;
	int rc;

	err_clear(&why);
	if ((rc = f->avail(f->ctx, off, want, &have, &final, &why)) < 0)
		return file_fail(f, rc, why.msg[0] ? why.msg : "waiting for the file failed", oe);
	if (have < want && !final)
		return file_fail(f, -EIO, "the file's writer returned short of a part", oe);
	*len = have >= want ? f->os->part_size : have > off ? have - off : 0;
	return 0;
}

static int send_parts(struct file_up *f, uint64_t first_len, struct objstore_err *oe)
{
	struct objstore *os = f->os;
	struct objstore_file_range r;
	struct objstore_body b = { NULL, 0, &r };
	uint64_t len = first_len;
	int rc = os->ops->begin(os, &f->u, oe);
	bool begun = rc == 0;

	for (uint64_t n = 0; rc == 0 && len > 0; n++) {
		if (n == OBJSTORE_PARTS_MAX) {
			char why[96];

			snprintf(why, sizeof(why), "longer than %u parts of %zu bytes",
			         OBJSTORE_PARTS_MAX, os->part_size);
			rc = file_fail(f, -EFBIG, why, oe);
			break;
		}
		rc = range_of(f, n, len, &r, oe);
		if (!rc)
			rc = os->ops->part(os, &f->u, &b, oe);
		if (rc || len < os->part_size)
			break; /* a short part is the last */
		rc = part_len(f, n + 1, &len, oe);
	}
	if (!rc)
		rc = os->ops->complete(os, &f->u, oe);
	if (rc && begun)
		objstore_abort_upload(os, &f->u, oe);
	return rc;
}

/* A single request when the whole file fits one part (known once it holds one byte
 * more than a part, or is final), else the parts. */
static int put_file(struct file_up *f, struct objstore_err *oe)
{
	struct objstore *os = f->os;
	uint64_t have = 0;
	bool final = false;
	struct objstore_file_range r;
	struct objstore_body b = { NULL, 0, &r };
	struct err why;
	int rc;

	err_clear(&why);
	if ((rc = f->avail(f->ctx, 0, os->part_size + 1, &have, &final, &why)) < 0)
		return file_fail(f, rc, why.msg[0] ? why.msg : "waiting for the file failed", oe);
	if (have > os->part_size)
		return send_parts(f, os->part_size, oe);
	if (!final)
		return file_fail(f, -EIO, "the file's writer returned short of a part", oe);
	rc = range_of(f, 0, have, &r, oe);
	if (!rc)
		rc = os->ops->put_single(os, f->u.key, &b, oe);
	f->u.parts = rc ? 0 : 1;
	return rc;
}

static int upload(struct file_up *f, const char *key, struct objstore_err *oe)
{
	int rc;

	f->u.key = key;
	buf_init(&f->u.manifest, OBJSTORE_PAGE_MAX);
	f->chunk = xmalloc(OBJSTORE_FILE_CHUNK);
	f->whole = EVP_MD_CTX_new();
	f->part = EVP_MD_CTX_new();
	if (!f->whole || !f->part || !EVP_DigestInit_ex(f->whole, EVP_sha256(), NULL))
		abort();
	rc = put_file(f, oe);
	objstore_put_done(f->whole, !rc, f->size, f->u.parts, f->res);
	EVP_MD_CTX_free(f->part);
	free(f->chunk);
	buf_release(&f->u.manifest);
	return rc;
}

/* --- objstore_put_stream's spool (internal.h) --- */

int objstore_spool_open(const struct objstore *os, struct err *e)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/.objstore.spool.XXXXXX", os->spool_dir);
	if ((fd = mkostemp(path, O_CLOEXEC)) < 0)
		return err_set(e, -errno, "the upload's spool in %s: %s", os->spool_dir,
		               strerror(errno));
	(void)unlink(path); /* nothing is left behind, whatever happens */
	return fd;
}

static int pwrite_all(int fd, const unsigned char *p, size_t n, uint64_t off, struct err *e)
{
	while (n > 0) {
		ssize_t w = pwrite(fd, p, n, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return err_set(e, -errno, "the upload's spool: %s%s", strerror(errno),
			               errno == ENOSPC ? " (its volume is full)" : "");
		p += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

int objstore_spool_fill(const struct objstore *os, int fd, objstore_read_fn read, void *ctx,
                        unsigned char *chunk, EVP_MD_CTX *whole, struct objstore_file_range *r,
                        size_t *got, struct err *e)
{
	EVP_MD_CTX *part = EVP_MD_CTX_new();
	size_t n = 0;
	int rc = 0;

	if (!part ||
	    !EVP_DigestInit_ex(part, os->provider == OBJSTORE_S3 ? EVP_sha256() : EVP_md5(), NULL))
		abort();
	while (n < os->part_size) {
		size_t want = os->part_size - n < OBJSTORE_FILE_CHUNK ? os->part_size - n
		                                                      : OBJSTORE_FILE_CHUNK;
		ssize_t k = read(ctx, chunk, want, e);

		if (k <= 0) {
			rc = (int)k;
			break;
		}
		if ((size_t)k > want) {
			rc = err_set(e, -EINVAL, "the read callback returned more than asked");
			break;
		}
		if ((rc = pwrite_all(fd, chunk, (size_t)k, n, e)) < 0)
			break;
		EVP_DigestUpdate(whole, chunk, (size_t)k);
		EVP_DigestUpdate(part, chunk, (size_t)k);
		n += (size_t)k;
	}
	*got = n;
	*r = (struct objstore_file_range){ .fd = fd, .off = 0, .len = n };
	range_digest(os, part, r);
	EVP_MD_CTX_free(part);
	return rc;
}

/* A file whose size is known at the start: always final. */
static int fixed_size(void *ctx, uint64_t sent, uint64_t want, uint64_t *have, bool *final,
                      struct err *e)
{
	(void)sent;
	(void)want;
	(void)e;
	*have = *(const uint64_t *)ctx;
	*final = true;
	return 0;
}

int objstore_put_file(struct objstore *os, const char *key, int fd, const atomic_bool *cancel,
                      struct objstore_put_result *res, struct objstore_err *oe)
{
	struct stat st;
	uint64_t size;
	int rc;

	objstore_err_clear(oe);
	if ((rc = objstore_check_key(os, "upload", key, oe)) != 0)
		return rc;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		struct file_up f = { .os = os, .u.key = key };

		return file_fail(&f, fd < 0 || errno == EBADF ? -EBADF : -EINVAL,
		                 "fd is not an open regular file", oe);
	}
	size = (uint64_t)st.st_size;
	if (objstore_parts_for(size, os->part_size) > OBJSTORE_PARTS_MAX) {
		struct file_up f = { .os = os, .u.key = key };
		char why[128];

		snprintf(why, sizeof(why), "%" PRIu64 " bytes: more than %u parts of %zu bytes",
		         size, OBJSTORE_PARTS_MAX, os->part_size);
		return file_fail(&f, -EFBIG, why, oe);
	}
	return objstore_put_growing(os, key, fd, fixed_size, &size, cancel, res, oe);
}

int objstore_put_growing(struct objstore *os, const char *key, int fd, objstore_avail_fn avail,
                         void *ctx, const atomic_bool *cancel, struct objstore_put_result *res,
                         struct objstore_err *oe)
{
	struct file_up f = {
		.os = os, .fd = fd, .cancel = cancel, .avail = avail, .ctx = ctx, .res = res
	};
	int rc;

	objstore_err_clear(oe);
	if ((rc = objstore_check_key(os, "upload", key, oe)) != 0)
		return rc;
	return upload(&f, key, oe);
}
