/*
 * buf: bounded growable buffer (see buf.h). Invariant: data == NULL or
 * data[len] == '\0' with len < cap <= limit + 1.
 */
#include "buf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "alloc.h"

void buf_init(struct buf *b, size_t limit)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->limit = limit;
}

void buf_release(struct buf *b)
{
	if (!b)
		return;
	free(b->data);
	buf_init(b, b->limit);
}

void buf_release_secret(struct buf *b)
{
	if (!b)
		return;
	secure_zero(b->data, b->cap);
	buf_release(b);
}

void buf_clear(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

/* Makes room for n more bytes plus the NUL, or fails without touching b. */
static int buf_reserve(struct buf *b, size_t n)
{
	size_t want, cap;

	if (n > b->limit || b->len > b->limit - n)
		return -EMSGSIZE;
	want = b->len + n + 1;
	if (want <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < want)
		cap = cap > ((size_t)-1) / 2 ? want : cap * 2;
	if (b->limit != BUF_NO_LIMIT && cap > b->limit + 1)
		cap = b->limit + 1;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
	return 0;
}

int buf_append(struct buf *b, const void *p, size_t n)
{
	int rc = buf_reserve(b, n);

	if (rc)
		return rc;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf_append_str(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_append_char(struct buf *b, char c)
{
	return buf_append(b, &c, 1);
}

int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list copy;
	int n, rc;

	va_copy(copy, ap);
	n = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	if (n < 0)
		return -EINVAL;
	rc = buf_reserve(b, (size_t)n);
	if (rc)
		return rc;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

void buf_consume(struct buf *b, size_t n)
{
	if (n >= b->len) {
		buf_clear(b);
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

const char *buf_cstr(const struct buf *b)
{
	return b->data ? b->data : "";
}

char *buf_detach(struct buf *b, size_t *len)
{
	char *p = b->data ? b->data : xstrdup("");

	if (len)
		*len = b->len;
	buf_init(b, b->limit);
	return p;
}
