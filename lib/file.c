/*
 * file: capped whole-file reads (see file.h).
 *
 * One reader serves both variants: the buffer starts at the file's size (fstat; 4096
 * for pipes and devices, never more than max + 1) and doubles up to max + 1 bytes, so a
 * file of exactly max bytes is read in full and one byte more proves it too long.
 * In secret mode a grown buffer is copied and the old one wiped instead of realloc'd
 * (realloc may leave the old bytes in freed memory), and a failure wipes what it read.
 */
#include "file.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/alloc.h"

#define FILE_HINT_UNKNOWN 4096 /* first buffer when the size is not known */

struct file_buf {
	char *p;
	size_t cap, n;
	bool secret;
};

static void file_buf_grow(struct file_buf *b, size_t cap)
{
	char *q;

	if (!b->secret) {
		b->p = xrealloc(b->p, cap);
		b->cap = cap;
		return;
	}
	q = xmalloc(cap);
	memcpy(q, b->p, b->n);
	secure_zero(b->p, b->cap);
	free(b->p);
	b->p = q;
	b->cap = cap;
}

static void file_buf_release(struct file_buf *b)
{
	if (b->secret)
		secure_zero(b->p, b->cap);
	free(b->p);
	b->p = NULL;
}

/* Reads fd to EOF into b, at most max + 1 bytes: 0 (then n < cap: room for the NUL),
 * -errno, or -EMSGSIZE past max. */
static int file_read_fd(int fd, size_t max, struct file_buf *b)
{
	ssize_t got;

	for (;;) {
		if (b->n == b->cap && b->cap > max)
			return -EMSGSIZE;
		if (b->n == b->cap)
			file_buf_grow(b, b->cap > max / 2 ? max + 1 : b->cap * 2);
		got = read(fd, b->p + b->n, b->cap - b->n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return errno > 0 ? -errno : -EIO;
		if (got == 0)
			return 0;
		b->n += (size_t)got;
	}
}

/* The first buffer's size: the file's size plus one (room to see EOF), at most max + 1. */
static size_t file_first_cap(int fd, size_t max)
{
	struct stat st;
	size_t hint = FILE_HINT_UNKNOWN;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		hint = (size_t)st.st_size;
	return (hint < max ? hint : max) + 1;
}

static int file_read(const char *path, size_t max, bool secret, char **out, size_t *len,
                     struct err *e)
{
	struct file_buf b = { NULL, 0, 0, secret };
	char tmp[128];
	int fd, r;

	assert(max < SIZE_MAX);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = errno > 0 ? -errno : -EIO;
		return err_set(e, r, "%s: %s", path, strerror_r(-r, tmp, sizeof(tmp)));
	}
	b.cap = file_first_cap(fd, max);
	b.p = xmalloc(b.cap);
	r = file_read_fd(fd, max, &b);
	close(fd);
	if (r < 0) {
		file_buf_release(&b);
		if (r == -EMSGSIZE)
			return err_set(e, r, "%s: larger than %zu bytes", path, max);
		return err_set(e, r, "%s: %s", path, strerror_r(-r, tmp, sizeof(tmp)));
	}
	b.p[b.n] = '\0';
	*out = b.p;
	if (len)
		*len = b.n;
	return 0;
}

int file_read_all(const char *path, size_t max_len, char **out, size_t *len, struct err *e)
{
	return file_read(path, max_len, false, out, len, e);
}

int file_read_all_secret(const char *path, size_t max_len, char **out, size_t *len, struct err *e)
{
	return file_read(path, max_len, true, out, len, e);
}
