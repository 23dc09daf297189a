/*
 * libFuzzer harness for lib/targz's reader, which takes an aof backup's archive from the
 * object store (instance/restore_aof.c): arbitrary bytes, fed in pieces, must never
 * crash, read out of bounds or leak, and what it hands the callbacks must keep the
 * header's promises (targz.h): a safe relative name, a file or a directory, a
 * directory without data, exactly .size bytes of a file between begin and end, no more
 * than TARGZ_ENTRIES_MAX entries; an error is negative with a message, and sticks.
 *
 * The first byte picks the mode and the piece size: bit 0 set, the rest is a raw tar
 * that the harness gzips first (so mutations reach the tar parser instead of dying in
 * the gzip header); bits 1..7, the size of the pieces fed (1..127 bytes, 0: all at once).
 *
 *   make BUILD=build/x fuzz FUZZERS=targz FUZZ_SECONDS=60   (test/fuzz/fuzz.mk)
 * Seeds: built by test/fuzz/targz-seeds.sh (archives of an appendonlydir, good and
 * refused ones), never kept in the tree.
 */
#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/targz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	bool in_entry;
	struct targz_header h;
	uint64_t got; /* data bytes of the current entry so far */
	unsigned entries;
};

static int on_begin(void *ctx, const struct targz_header *h, struct err *e)
{
	struct seen *s = ctx;
	struct err ne;

	(void)e;
	err_clear(&ne);
	assert(!s->in_entry);
	assert(strlen(h->name) <= TARGZ_NAME_MAX);
	assert(targz_name_check(h->name, &ne) == 0);
	assert(h->type == TARGZ_FILE || h->type == TARGZ_DIR);
	assert(h->type == TARGZ_FILE || h->size == 0);
	assert(h->size <= TARGZ_SIZE_MAX);
	s->in_entry = true;
	s->h = *h;
	s->got = 0;
	s->entries++;
	assert(s->entries <= TARGZ_ENTRIES_MAX);
	return 0;
}

static int on_data(void *ctx, const void *buf, size_t n, struct err *e)
{
	struct seen *s = ctx;

	(void)e;
	assert(s->in_entry && s->h.type == TARGZ_FILE);
	assert(buf && n > 0);
	s->got += n;
	assert(s->got <= s->h.size);
	return 0;
}

static int on_end(void *ctx, const struct targz_header *h, struct err *e)
{
	struct seen *s = ctx;

	(void)e;
	assert(s->in_entry && strcmp(h->name, s->h.name) == 0);
	assert(s->got == h->size);
	s->in_entry = false;
	return 0;
}

static const struct targz_reader_ops ops = { on_begin, on_data, on_end };

/* in as one gzip member into *out (malloc'ed); its length, 0 on failure. */
static size_t gzip_of(const uint8_t *in, size_t n, uint8_t **out)
{
	z_stream z;
	size_t cap = n + n / 100 + 64;

	memset(&z, 0, sizeof(z));
	*out = malloc(cap);
	if (!*out || deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(*out);
		*out = NULL;
		return 0;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = *out;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		z.total_out = 0;
	deflateEnd(&z);
	return z.total_out;
}

/* Feeds p in pieces of step bytes (0: at once); the first error sticks. */
static int feed(struct targz_reader *r, const uint8_t *p, size_t n, size_t step, struct err *e)
{
	int rc = 0, again;
	struct err e2;

	for (size_t off = 0; off < n && rc == 0; off += step ? step : n)
		rc = targz_reader_feed(r, p + off, step && n - off > step ? step : n - off, e);
	if (rc == 0)
		return targz_reader_finish(r, e);
	err_clear(&e2);
	again = targz_reader_feed(r, "x", 1, &e2);
	assert(again == rc);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen s = { 0 };
	struct targz_reader *r;
	uint8_t *gz = NULL;
	const uint8_t *p;
	size_t n, step;
	struct err e;
	int rc;

	if (size < 1)
		return 0;
	step = data[0] >> 1;
	p = data + 1;
	n = size - 1;
	if (data[0] & 1) {
		n = gzip_of(p, n, &gz);
		if (!gz)
			return 0;
		p = gz;
	}
	err_clear(&e);
	r = targz_reader_new(&ops, &s);
	rc = feed(r, p, n, step, &e);
	if (rc == 0) {
		assert(!s.in_entry);
		assert(targz_reader_entries(r) == s.entries);
	} else {
		assert(rc < 0 && e.msg[0] != '\0');
	}
	targz_reader_free(r);
	free(gz);
	return 0;
}
