/*
 * targz: a streaming writer and reader of gzip-compressed ustar archives, holding only
 * regular files and directories. Bounded memory both ways: one 64 KiB staging buffer
 * and zlib's state (about 300 KiB for deflate, 45 KiB for inflate), whatever the sizes.
 *
 * Writing is pulled, to fit objstore_put_stream's read callback:
 *
 *   struct targz_writer *w = targz_writer_new(1);
 *   struct targz_entry dir = { .name = "appendonlydir", .type = TARGZ_DIR, .mode = 0700 };
 *   struct targz_entry f = { .name = "appendonlydir/a.aof", .mode = 0600, .size = n,
 *                            .read = pread_fn, .ctx = fd };
 *   targz_writer_add(w, &dir, &e); targz_writer_add(w, &f, &e);
 *   while ((n = targz_writer_read(w, buf, sizeof(buf), &e)) > 0) send(buf, n);
 *   targz_writer_rewind(w);   (to produce the same stream again, e.g. a retried upload)
 *   targz_writer_free(w);
 *
 * An entry's read callback is asked for its bytes by offset (pread-like), so a rewind
 * reads the files again from their start; it must give exactly .size bytes (a file that
 * ends sooner fails the read with -EIO naming the entry). The archive is POSIX ustar
 * (magic "ustar\0", version "00", uid/gid 0, names split into prefix/name), ended by two
 * zero blocks, in one gzip member.
 *
 * Reading is pushed, to fit objstore_get_stream's write callback: targz_reader_feed()
 * takes the compressed bytes as they arrive and calls ops->begin, ops->data (the entry's
 * bytes, in order, in pieces) and ops->end for each entry; targz_reader_finish() says
 * whether the archive was complete. Refused, with -EPROTO and a message naming the entry
 * and the reason: a header whose checksum, magic (POSIX "ustar\0" "00" or GNU
 * "ustar  \0"), or octal fields are wrong; any type but a regular file or a directory
 * (symlinks, hard links, devices, FIFOs, GNU long names, pax headers); a name that is
 * empty, absolute, has a "." or ".." component, an empty component or a control
 * character; a directory with data; more than TARGZ_ENTRIES_MAX entries; a stream that
 * ends before the two zero blocks, or with a gzip error; bytes after the end of the gzip
 * stream; non-zero bytes after the end-of-archive blocks, or more than
 * TARGZ_TRAILER_MAX of them. A callback's error stops the reader and is returned as is.
 *
 * Limits: a name of at most TARGZ_NAME_MAX bytes (155 of prefix, '/', 100 of name);
 * an entry of at most TARGZ_SIZE_MAX bytes (11 octal digits: 8 GiB - 1; larger is
 * -EFBIG when writing, never seen when reading ustar).
 *
 * Threads: a writer or a reader is used by one thread at a time.
 */
#ifndef REDIS_OPERATOR_TARGZ_H
#define REDIS_OPERATOR_TARGZ_H

#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

#define TARGZ_BLOCK       512
#define TARGZ_NAME_MAX    256 /* prefix (155) + '/' + name (100) */
#define TARGZ_SIZE_MAX    077777777777ULL
#define TARGZ_ENTRIES_MAX 100000
#define TARGZ_TRAILER_MAX (1u << 20) /* zero bytes after the end-of-archive blocks */

enum targz_type {
	TARGZ_FILE,
	TARGZ_DIR,
};

/* Reads up to len bytes of an entry at offset off: the count (> 0), 0 at its end, or a
 * negative errno (e may say why). */
typedef ssize_t (*targz_read_fn)(void *ctx, uint64_t off, void *buf, size_t len, struct err *e);

struct targz_entry {
	const char *name; /* relative; a directory without a trailing slash */
	enum targz_type type;
	unsigned mode;      /* permission bits, 07777 at most */
	int64_t mtime;      /* seconds since the epoch, >= 0 */
	uint64_t size;      /* files; 0 for directories */
	targz_read_fn read; /* files */
	void *ctx;
};

struct targz_writer;

/* level: zlib's 1 (fastest) to 9. Never NULL (allocation aborts). */
struct targz_writer *targz_writer_new(int level);
void targz_writer_free(struct targz_writer *w);
/* Appends an entry (its name is copied). -EINVAL (the name or mode, named), -EFBIG
 * (size), -ENAMETOOLONG; -EBUSY once reading has begun (rewind first). */
int targz_writer_add(struct targz_writer *w, const struct targz_entry *ent, struct err *e);
/* The next compressed bytes: the count (> 0), 0 at the end, or a negative errno (a
 * read callback's, or -EIO for a file that ended too soon). An objstore_read_fn. */
ssize_t targz_writer_read(void *w, void *buf, size_t len, struct err *e);
/* Starts the same archive again from its first byte. */
void targz_writer_rewind(struct targz_writer *w);
/* Bytes of tar (before compression) the archive holds: headers, data, padding, end. */
uint64_t targz_writer_tar_size(const struct targz_writer *w);

struct targz_header {
	char name[TARGZ_NAME_MAX + 1]; /* a directory's without its trailing slash */
	enum targz_type type;
	unsigned mode;
	int64_t mtime;
	uint64_t size;
};

/* Each returns 0 to go on, or a negative errno that stops the reader. */
struct targz_reader_ops {
	int (*begin)(void *ctx, const struct targz_header *h, struct err *e);
	int (*data)(void *ctx, const void *buf, size_t n, struct err *e);
	int (*end)(void *ctx, const struct targz_header *h, struct err *e);
};

struct targz_reader;

struct targz_reader *targz_reader_new(const struct targz_reader_ops *ops, void *ctx);
void targz_reader_free(struct targz_reader *r);
/* The next compressed bytes. After an error every call returns that error. */
int targz_reader_feed(struct targz_reader *r, const void *data, size_t n, struct err *e);
/* 0 when the gzip stream and the archive ended properly; else -EPROTO ("truncated"). */
int targz_reader_finish(struct targz_reader *r, struct err *e);
/* Entries seen so far. */
unsigned targz_reader_entries(const struct targz_reader *r);

/* 0 when name is a safe relative path (the rules above); -EINVAL with the reason. */
int targz_name_check(const char *name, struct err *e);

#endif
