/*
 * buf: a growable byte buffer with a hard size limit.
 *
 * Every buffer that holds peer-controlled data (HTTP bodies, watch lines, request
 * bodies) has a limit; an append that would pass it fails with -EMSGSIZE and leaves
 * the buffer unchanged, so a hostile peer costs at most `limit` bytes.
 * The data is always NUL-terminated (the NUL is not counted in len), so text can be
 * read with buf_cstr() without copying. Not thread-safe: one owner at a time.
 */
#ifndef REDIS_OPERATOR_BUF_H
#define REDIS_OPERATOR_BUF_H

#include <stdarg.h>
#include <stddef.h>

#define BUF_NO_LIMIT ((size_t)-1)

struct buf {
	char *data;   /* NULL until the first append */
	size_t len;   /* bytes in use, excluding the trailing NUL */
	size_t cap;   /* bytes allocated */
	size_t limit; /* the most len may ever be */
};

#define BUF_INIT(lim)                                                                              \
	{                                                                                          \
		NULL, 0, 0, (lim)                                                                  \
	}

void buf_init(struct buf *b, size_t limit);
/* Frees the memory; the buffer may be reused after buf_init. NULL-safe. */
void buf_release(struct buf *b);
/* Like buf_release, but zeroes the bytes first (for secrets). NULL-safe. */
void buf_release_secret(struct buf *b);
/* Empties the buffer and keeps its memory. */
void buf_clear(struct buf *b);

/* 0, or -EMSGSIZE (nothing appended) when len + n would pass the limit. */
int buf_append(struct buf *b, const void *p, size_t n);
int buf_append_str(struct buf *b, const char *s);
int buf_append_char(struct buf *b, char c);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int buf_vprintf(struct buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* Drops the first n bytes (n > len drops all). */
void buf_consume(struct buf *b, size_t n);
/* Always a valid string ("" when empty); borrowed, valid until the next change. */
const char *buf_cstr(const struct buf *b);
/* Hands the data to the caller (free() it) and empties the buffer. Never NULL. */
char *buf_detach(struct buf *b, size_t *len);

#endif
