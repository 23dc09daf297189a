/*
 * targz: gzip-compressed ustar archives, streamed both ways (targz.h).
 *
 * The writer is a pull state machine: targz_writer_read() fills the caller's buffer
 * with deflate output, refilling a 64 KiB staging buffer with the next tar bytes (a
 * header block, then the file's bytes from its read callback, then its padding; after
 * the last entry two zero blocks) whenever deflate has consumed it. The reader is the
 * reverse: inflate into a 64 KiB buffer, then a parser over those bytes that collects a
 * 512-byte header, checks it, and hands the entry's bytes to the callbacks.
 *
 * Ownership: the writer copies the entries' names; the callbacks' contexts stay the
 * caller's. Both free their zlib state in _free (NULL-safe).
 */
#include "lib/targz.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/alloc.h"

#define STAGE_SIZE (64u * 1024)

/* ustar header fields: offset, length */
#define H_NAME     0, 100
#define H_MODE     100, 8
#define H_SIZE     124, 12
#define H_MTIME    136, 12
#define H_CHKSUM   148, 8
#define H_TYPE     156
#define H_MAGIC    257
#define H_PREFIX   345, 155
#define NAME_LEN   100
#define PREFIX_LEN 155

/* --- shared --- */

int targz_name_check(const char *name, struct err *e)
{
	const char *p = name;

	if (!*name)
		return err_set(e, -EINVAL, "an empty name");
	if (*name == '/')
		return err_set(e, -EINVAL, "%s: an absolute path", name);
	for (const char *c = name; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return err_set(e, -EINVAL, "%s: a control character in the name", name);
	for (;;) {
		size_t n = strcspn(p, "/");

		if (n == 0)
			return err_set(e, -EINVAL, "%s: an empty path component", name);
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return err_set(e, -EINVAL, "%s: a \"%.*s\" path component", name, (int)n,
			               p);
		p += n;
		if (!*p)
			return 0;
		p++;
	}
}

static unsigned header_sum(const unsigned char *h)
{
	unsigned sum = 0;

	for (int i = 0; i < TARGZ_BLOCK; i++)
		sum += (i >= 148 && i < 156) ? ' ' : h[i];
	return sum;
}

/* --- the writer --- */

enum wstate {
	W_HEADER, /* the header of entry i */
	W_DATA,   /* its bytes, at off */
	W_PAD,    /* its padding */
	W_END,    /* the two zero blocks */
	W_FLUSH,  /* deflate's last bytes */
	W_DONE,
};

struct went {
	char *name;
	enum targz_type type;
	unsigned mode;
	int64_t mtime;
	uint64_t size;
	targz_read_fn read;
	void *ctx;
};

struct targz_writer {
	z_stream z;
	int level;
	struct went *ents;
	size_t n, cap;
	enum wstate st;
	size_t i;     /* the entry being written */
	uint64_t off; /* W_DATA: bytes of it written */
	unsigned char stage[STAGE_SIZE];
	size_t slen; /* staged bytes not yet given to deflate start at z.next_in */
	int err;
	struct err e;
};

static void z_init_deflate(struct targz_writer *w)
{
	memset(&w->z, 0, sizeof(w->z));
	/* 15 + 16: a gzip header and trailer; memLevel 8 is zlib's default */
	if (deflateInit2(&w->z, w->level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		abort(); /* only for bad parameters or no memory */
}

struct targz_writer *targz_writer_new(int level)
{
	struct targz_writer *w = xcalloc(1, sizeof(*w));

	w->level = level < 1 ? 1 : level > 9 ? 9 : level;
	z_init_deflate(w);
	return w;
}

void targz_writer_free(struct targz_writer *w)
{
	if (!w)
		return;
	deflateEnd(&w->z);
	for (size_t i = 0; i < w->n; i++)
		free(w->ents[i].name);
	free(w->ents);
	free(w);
}

static int octal(char *dst, size_t len, uint64_t v)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "%0*llo", (int)len - 1, (unsigned long long)v);

	if (n < 0 || (size_t)n >= len)
		return -EFBIG;
	memcpy(dst, tmp, (size_t)n + 1);
	return 0;
}

/* A header field need not end in a NUL (a 100-byte name fills its field). */
static void field_put(char *dst, const char *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = src[i];
}

/* Splits name into the header's prefix and name fields. */
static int split_name(const char *name, char *h, struct err *e)
{
	size_t len = strlen(name);
	const char *cut;

	if (len <= NAME_LEN) {
		field_put(h, name, len);
		return 0;
	}
	/* the rightmost '/' that leaves a non-empty name of <= 100 and a prefix of <= 155 */
	for (cut = name + len - 2; cut > name; cut--)
		if (*cut == '/' && (size_t)(name + len - cut - 1) <= NAME_LEN &&
		    (size_t)(cut - name) <= PREFIX_LEN)
			break;
	if (cut <= name)
		return err_set(e, -ENAMETOOLONG, "%s: does not fit ustar's prefix and name fields",
		               name);
	field_put(h + 345, name, (size_t)(cut - name));
	field_put(h, cut + 1, (size_t)(name + len - cut - 1));
	return 0;
}

/* A directory's name is stored with a trailing slash, as tar writes them. */
static int header_build(const struct went *t, unsigned char out[TARGZ_BLOCK], struct err *e)
{
	char *h = (char *)out, name[TARGZ_NAME_MAX + 2];
	int rc;

	memset(out, 0, TARGZ_BLOCK);
	snprintf(name, sizeof(name), "%s%s", t->name, t->type == TARGZ_DIR ? "/" : "");
	if ((rc = split_name(name, h, e)) < 0)
		return rc;
	(void)octal(h + 100, 8, t->mode);
	(void)octal(h + 108, 8, 0);
	(void)octal(h + 116, 8, 0);
	if (octal(h + 124, 12, t->type == TARGZ_FILE ? t->size : 0) < 0 ||
	    octal(h + 136, 12, (uint64_t)t->mtime) < 0)
		return err_set(e, -EFBIG, "%s: size or mtime does not fit ustar", t->name);
	h[156] = t->type == TARGZ_DIR ? '5' : '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	snprintf(h + 148, 8, "%06o", header_sum(out));
	h[155] = ' ';
	return 0;
}

int targz_writer_add(struct targz_writer *w, const struct targz_entry *ent, struct err *e)
{
	struct went t = { 0 };
	unsigned char probe[TARGZ_BLOCK];
	int rc;

	if (w->st != W_HEADER || w->i != 0 || w->z.total_in != 0)
		return err_set(e, -EBUSY, "targz: entries are added before reading");
	if ((rc = targz_name_check(ent->name, e)) < 0)
		return rc;
	if (ent->mode > 07777 || ent->mtime < 0)
		return err_set(e, -EINVAL, "%s: mode %o or mtime out of range", ent->name,
		               ent->mode);
	if (ent->type == TARGZ_FILE && (ent->size > TARGZ_SIZE_MAX || !ent->read))
		return err_set(e, ent->read ? -EFBIG : -EINVAL, "%s: %s", ent->name,
		               ent->read ? "larger than ustar's 8 GiB - 1"
		                         : "a file without a read callback");
	if (w->n >= TARGZ_ENTRIES_MAX)
		return err_set(e, -E2BIG, "targz: more than %d entries", TARGZ_ENTRIES_MAX);
	t = (struct went){ .name = (char *)ent->name,
		           .type = ent->type,
		           .mode = ent->mode,
		           .mtime = ent->mtime,
		           .size = ent->type == TARGZ_FILE ? ent->size : 0,
		           .read = ent->read,
		           .ctx = ent->ctx };
	if ((rc = header_build(&t, probe, e)) < 0)
		return rc;
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 8;
		w->ents = xrealloc(w->ents, w->cap * sizeof(*w->ents));
	}
	t.name = xstrdup(ent->name);
	w->ents[w->n++] = t;
	return 0;
}

uint64_t targz_writer_tar_size(const struct targz_writer *w)
{
	uint64_t s = 2 * TARGZ_BLOCK;

	for (size_t i = 0; i < w->n; i++)
		s += TARGZ_BLOCK + (w->ents[i].size + TARGZ_BLOCK - 1) / TARGZ_BLOCK * TARGZ_BLOCK;
	return s;
}

void targz_writer_rewind(struct targz_writer *w)
{
	deflateEnd(&w->z);
	z_init_deflate(w);
	w->st = W_HEADER;
	w->i = 0;
	w->off = 0;
	w->slen = 0;
	w->err = 0;
	err_clear(&w->e);
}

/* Reads the entry's next bytes into the stage after its len bytes; the count. */
static int stage_data(struct targz_writer *w, size_t at, size_t *added, struct err *e)
{
	struct went *t = &w->ents[w->i];
	uint64_t left = t->size - w->off;
	size_t want = STAGE_SIZE - at < left ? STAGE_SIZE - at : (size_t)left;
	ssize_t n = t->read(t->ctx, w->off, w->stage + at, want, e);

	if (n < 0)
		return (int)n;
	if (n == 0)
		return err_set(e, -EIO, "%s: ended at %llu of %llu bytes (changed while archived?)",
		               t->name, (unsigned long long)w->off, (unsigned long long)t->size);
	w->off += (uint64_t)n;
	*added = (size_t)n;
	return 0;
}

/* One step of the tar byte stream into the stage at `at`: the bytes added. */
static int stage_step(struct targz_writer *w, size_t at, size_t *added, struct err *e)
{
	size_t room = STAGE_SIZE - at;
	size_t pad;

	*added = 0;
	switch (w->st) {
	case W_HEADER:
		if (w->i == w->n) {
			w->st = W_END;
			return 0;
		}
		if (room < TARGZ_BLOCK)
			return 0;
		w->off = 0;
		w->st = W_DATA;
		*added = TARGZ_BLOCK;
		return header_build(&w->ents[w->i], w->stage + at, e);
	case W_DATA:
		if (w->off == w->ents[w->i].size) {
			w->st = W_PAD;
			return 0;
		}
		return stage_data(w, at, added, e);
	case W_PAD:
		pad = (TARGZ_BLOCK - w->ents[w->i].size % TARGZ_BLOCK) % TARGZ_BLOCK;
		if (room < pad)
			return 0;
		memset(w->stage + at, 0, pad);
		*added = pad;
		w->i++;
		w->st = W_HEADER;
		return 0;
	case W_END:
		if (room < 2 * TARGZ_BLOCK)
			return 0;
		memset(w->stage + at, 0, 2 * TARGZ_BLOCK);
		*added = 2 * TARGZ_BLOCK;
		w->st = W_FLUSH;
		return 0;
	default: return 0;
	}
}

/* Refills the stage (moving what deflate left to its start). */
static int stage_fill(struct targz_writer *w, struct err *e)
{
	size_t len = w->z.avail_in;

	if (len && w->z.next_in != w->stage)
		memmove(w->stage, w->z.next_in, len);
	while (len < STAGE_SIZE && w->st < W_FLUSH) {
		size_t added;
		enum wstate before = w->st;
		int rc = stage_step(w, len, &added, e);

		if (rc < 0)
			return rc;
		len += added;
		if (!added && w->st == before)
			break; /* no room for the next block: deflate first */
	}
	w->z.next_in = w->stage;
	w->z.avail_in = (uInt)len;
	return 0;
}

ssize_t targz_writer_read(void *arg, void *buf, size_t len, struct err *e)
{
	struct targz_writer *w = arg;
	int zrc;

	if (w->err)
		return err_set(e, w->err, "%s", w->e.msg);
	w->z.next_out = buf;
	w->z.avail_out = (uInt)(len > UINT32_MAX ? UINT32_MAX : len);
	while (w->z.avail_out && w->st != W_DONE) {
		if (w->z.avail_in < TARGZ_BLOCK * 2 && w->st < W_FLUSH) {
			int rc = stage_fill(w, &w->e);

			if (rc < 0) {
				w->err = rc;
				return err_set(e, rc, "%s", w->e.msg);
			}
		}
		zrc = deflate(&w->z, w->st == W_FLUSH ? Z_FINISH : Z_NO_FLUSH);
		if (zrc == Z_STREAM_END)
			w->st = W_DONE;
		else if (zrc != Z_OK && zrc != Z_BUF_ERROR)
			return err_set(e, -EIO, "targz: deflate: %s",
			               w->z.msg ? w->z.msg : "error");
	}
	return (ssize_t)(len - w->z.avail_out);
}

/* --- the reader --- */

enum rstate {
	R_HEADER,
	R_DATA,
	R_PAD,
	R_TRAILER, /* after the first zero block */
};

struct targz_reader {
	z_stream z;
	const struct targz_reader_ops *ops;
	void *ctx;
	enum rstate st;
	bool zend;      /* inflate reached the end of the gzip stream */
	unsigned zeros; /* zero blocks seen in a row at R_HEADER/R_TRAILER */
	uint64_t tail;  /* bytes after the end-of-archive blocks */
	unsigned char hdr[TARGZ_BLOCK];
	size_t hlen;
	struct targz_header cur;
	uint64_t left; /* R_DATA: bytes of the entry to come; R_PAD: padding to skip */
	unsigned entries;
	int err;
	struct err e;
	unsigned char out[STAGE_SIZE];
};

struct targz_reader *targz_reader_new(const struct targz_reader_ops *ops, void *ctx)
{
	struct targz_reader *r = xcalloc(1, sizeof(*r));

	r->ops = ops;
	r->ctx = ctx;
	if (inflateInit2(&r->z, 15 + 16) != Z_OK) /* gzip only */
		abort();
	return r;
}

void targz_reader_free(struct targz_reader *r)
{
	if (!r)
		return;
	inflateEnd(&r->z);
	free(r);
}

unsigned targz_reader_entries(const struct targz_reader *r)
{
	return r->entries;
}

/* An octal field: optional leading spaces, digits, then NULs or spaces to its end. */
static int field_octal(const unsigned char *h, size_t off, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	bool digits = false;

	while (i < len && h[off + i] == ' ')
		i++;
	for (; i < len && h[off + i] >= '0' && h[off + i] <= '7'; i++) {
		v = v * 8 + (uint64_t)(h[off + i] - '0');
		digits = true;
	}
	for (; i < len; i++)
		if (h[off + i] != '\0' && h[off + i] != ' ')
			return -EPROTO;
	if (!digits)
		return -EPROTO;
	*out = v;
	return 0;
}

static int field_str(const unsigned char *h, size_t off, size_t len, char *out)
{
	size_t n = strnlen((const char *)h + off, len);

	memcpy(out, h + off, n);
	out[n] = '\0';
	return (int)n;
}

/* The entry's name (GNU headers use the prefix field for other things). */
static void header_name(const unsigned char *h, bool posix, char out[TARGZ_NAME_MAX + 1])
{
	char name[NAME_LEN + 1], prefix[PREFIX_LEN + 1] = "";

	field_str(h, H_NAME, name);
	if (posix)
		field_str(h, H_PREFIX, prefix);
	snprintf(out, TARGZ_NAME_MAX + 1, "%s%s%s", prefix, *prefix ? "/" : "", name);
}

static const struct {
	char flag;
	const char *what;
} refused_types[] = {
	{ '1', "a hard link" },
	{ '2', "a symbolic link" },
	{ '3', "a character device" },
	{ '4', "a block device" },
	{ '6', "a FIFO" },
	{ '7', "a contiguous file" },
	{ 'L', "a GNU long name" },
	{ 'K', "a GNU long link name" },
	{ 'x', "a pax header" },
	{ 'g', "a pax global header" },
};

static int header_type(const char *name, char flag, enum targz_type *out, struct err *e)
{
	if (flag == '0' || flag == '\0') {
		*out = TARGZ_FILE;
		return 0;
	}
	if (flag == '5') {
		*out = TARGZ_DIR;
		return 0;
	}
	for (size_t i = 0; i < sizeof(refused_types) / sizeof(refused_types[0]); i++)
		if (refused_types[i].flag == flag)
			return err_set(e, -EPROTO, "%s: %s (only regular files and directories)",
			               name, refused_types[i].what);
	return err_set(e, -EPROTO, "%s: entry type '%c' (only regular files and directories)", name,
	               flag);
}

static int header_parse(const unsigned char *h, struct targz_header *out, struct err *e)
{
	bool posix = memcmp(h + H_MAGIC,
	                    "ustar\0"
	                    "00",
	                    8) == 0;
	bool gnu = memcmp(h + H_MAGIC, "ustar  \0", 8) == 0;
	uint64_t sum, mode, size, mtime;
	size_t n;

	header_name(h, posix, out->name);
	if (!posix && !gnu)
		return err_set(e, -EPROTO, "%s: not a ustar header (magic)", out->name);
	if (field_octal(h, H_CHKSUM, &sum) < 0 || sum != header_sum(h))
		return err_set(e, -EPROTO, "%s: header checksum mismatch", out->name);
	if (field_octal(h, H_MODE, &mode) < 0 || field_octal(h, H_SIZE, &size) < 0 ||
	    field_octal(h, H_MTIME, &mtime) < 0)
		return err_set(e, -EPROTO, "%s: malformed mode, size or mtime", out->name);
	if (header_type(out->name, (char)h[H_TYPE], &out->type, e) < 0)
		return -EPROTO;
	n = strlen(out->name);
	if (out->type == TARGZ_DIR && n > 1 && out->name[n - 1] == '/')
		out->name[n - 1] = '\0';
	if (targz_name_check(out->name, e) < 0)
		return -EPROTO;
	if (out->type == TARGZ_DIR && size)
		return err_set(e, -EPROTO, "%s: a directory with %llu bytes of data", out->name,
		               (unsigned long long)size);
	out->mode = (unsigned)(mode & 07777);
	out->size = size;
	out->mtime = (int64_t)mtime;
	return 0;
}

static bool is_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* A complete header block is in r->hdr. */
static int on_header(struct targz_reader *r, struct err *e)
{
	int rc;

	r->hlen = 0;
	if (is_zero(r->hdr, TARGZ_BLOCK)) {
		r->st = R_TRAILER;
		r->zeros++;
		return 0;
	}
	if (r->st == R_TRAILER)
		return err_set(e, -EPROTO, "a header after a zero block (a damaged archive)");
	if (r->entries >= TARGZ_ENTRIES_MAX)
		return err_set(e, -EPROTO, "more than %d entries", TARGZ_ENTRIES_MAX);
	if ((rc = header_parse(r->hdr, &r->cur, e)) < 0)
		return rc;
	r->entries++;
	if (r->ops->begin && (rc = r->ops->begin(r->ctx, &r->cur, e)) < 0)
		return rc;
	r->left = r->cur.size;
	r->st = R_DATA;
	if (!r->left)
		return r->ops->end ? r->ops->end(r->ctx, &r->cur, e) : 0;
	return 0;
}

/* Consumes up to n tar bytes at p; *used says how many. */
static int tar_step(struct targz_reader *r, const unsigned char *p, size_t n, size_t *used,
                    struct err *e)
{
	size_t k;
	int rc = 0;

	if (r->st == R_DATA && r->left == 0) {
		r->left = (TARGZ_BLOCK - r->cur.size % TARGZ_BLOCK) % TARGZ_BLOCK;
		r->st = R_PAD;
	}
	if (r->st == R_PAD && r->left == 0)
		r->st = R_HEADER;
	if (r->st == R_TRAILER && r->zeros >= 2) {
		*used = n;
		r->tail += n;
		if (!is_zero(p, n))
			return err_set(e, -EPROTO, "data after the end-of-archive blocks");
		if (r->tail > TARGZ_TRAILER_MAX)
			return err_set(e, -EPROTO,
			               "more than %u bytes after the end of the archive",
			               TARGZ_TRAILER_MAX);
		return 0;
	}
	if (r->st == R_HEADER || r->st == R_TRAILER) {
		k = TARGZ_BLOCK - r->hlen < n ? TARGZ_BLOCK - r->hlen : n;
		memcpy(r->hdr + r->hlen, p, k);
		r->hlen += k;
		*used = k;
		return r->hlen == TARGZ_BLOCK ? on_header(r, e) : 0;
	}
	k = r->left < n ? (size_t)r->left : n;
	*used = k;
	r->left -= k;
	if (r->st == R_DATA) {
		if (r->ops->data && (rc = r->ops->data(r->ctx, p, k, e)) < 0)
			return rc;
		if (!r->left && r->ops->end)
			rc = r->ops->end(r->ctx, &r->cur, e);
	}
	return rc;
}

static int tar_bytes(struct targz_reader *r, const unsigned char *p, size_t n, struct err *e)
{
	while (n) {
		size_t used = 0;
		int rc = tar_step(r, p, n, &used, e);

		if (rc < 0)
			return rc;
		p += used;
		n -= used;
	}
	return 0;
}

static int feed(struct targz_reader *r, const void *data, size_t n, struct err *e)
{
	r->z.next_in = (Bytef *)(uintptr_t)data;
	r->z.avail_in = (uInt)n;
	while (r->z.avail_in) {
		int zrc, rc;

		if (r->zend)
			return err_set(e, -EPROTO, "%u bytes after the end of the gzip stream",
			               r->z.avail_in);
		r->z.next_out = r->out;
		r->z.avail_out = sizeof(r->out);
		zrc = inflate(&r->z, Z_NO_FLUSH);
		if (zrc == Z_STREAM_END)
			r->zend = true;
		else if (zrc == Z_BUF_ERROR && r->z.avail_out == sizeof(r->out))
			return err_set(e, -EPROTO, "gzip: no progress (corrupt data)");
		else if (zrc != Z_OK && zrc != Z_BUF_ERROR)
			return err_set(e, -EPROTO, "gzip: %s",
			               r->z.msg ? r->z.msg : "corrupt data");
		if ((rc = tar_bytes(r, r->out, sizeof(r->out) - r->z.avail_out, e)) < 0)
			return rc;
	}
	return 0;
}

int targz_reader_feed(struct targz_reader *r, const void *data, size_t n, struct err *e)
{
	int rc;

	if (r->err)
		return err_set(e, r->err, "%s", r->e.msg);
	if (n > UINT32_MAX)
		return err_set(e, -EINVAL, "targz: feed at most 4 GiB at a time");
	rc = feed(r, data, n, &r->e);
	if (rc < 0) {
		r->err = rc;
		return err_set(e, rc, "%s", r->e.msg);
	}
	return 0;
}

int targz_reader_finish(struct targz_reader *r, struct err *e)
{
	if (r->err)
		return err_set(e, r->err, "%s", r->e.msg);
	if (!r->zend)
		return err_set(e, -EPROTO, "truncated: the gzip stream did not end");
	if (r->st != R_TRAILER || r->zeros < 2)
		return err_set(e, -EPROTO, "truncated: no end-of-archive blocks%s%s%s",
		               r->st == R_DATA ? " (inside " : "",
		               r->st == R_DATA ? r->cur.name : "", r->st == R_DATA ? ")" : "");
	return 0;
}
