/*
 * libFuzzer harness for the lib/k8s/watch stream splitter: arbitrary bytes, fed whole and
 * in chunks whose sizes come from the input, must never crash or leak, must keep the
 * parser's invariants (line buffer within line_max, resourceVersion bounded), and must
 * give the same transcript (events with their resourceVersions, then errors) however
 * the stream is chunked — the property the informer relies on.
 *
 *   make BUILD=build/x fuzz FUZZERS=k8s_watch   (test/fuzz/fuzz.mk; test/fuzz/run.sh)
 *   build/x/fuzz/fuzz_k8s_watch -max_total_time=20 corpus/ test/data/k8s_watch
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/k8s/watch.h"

#define LINE_MAX_FUZZ 512 /* small, so the over-long-line path is reached */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int record(void *ctx, enum k8s_event_type type, json_t *obj, const char *rv)
{
	struct buf *b = ctx;

	assert(json_is_object(obj));
	assert(strlen(rv) <= K8S_RV_MAX);
	buf_printf(b, "E%d:%s\n", (int)type, rv);
	return 0;
}

/* Feeds data in pieces of the given sizes (cycled), continuing after errors. */
static void feed(const uint8_t *data, size_t size, const uint8_t *sizes, size_t nsizes,
                 struct buf *out)
{
	struct k8s_watch_parser p;
	size_t off = 0, k = 0;

	k8s_watch_parser_init(&p, LINE_MAX_FUZZ, NULL);
	while (off < size) {
		size_t n = nsizes ? (size_t)sizes[k++ % nsizes] % 64 + 1 : size - off;
		size_t used = 0;

		n = n < size - off ? n : size - off;
		while (used < n) {
			struct err e;
			int rc;

			err_clear(&e);
			rc = k8s_watch_feed(&p, (const char *)data + off + used, n - used, record,
			                    out, &e);
			assert(p.line.len <= LINE_MAX_FUZZ);
			assert(p.consumed <= n - used);
			if (rc == 0)
				break;
			assert(rc < 0 && e.code == rc && e.msg[0]);
			buf_printf(out, "X%d\n", rc);
			assert(p.consumed > 0); /* an error always consumes its line */
			used += p.consumed;
		}
		off += n;
	}
	if (k8s_watch_finish(&p, record, out, NULL) != 0)
		buf_printf(out, "F\n");
	assert(strlen(k8s_watch_parser_rv(&p)) <= K8S_RV_MAX);
	k8s_watch_parser_release(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf whole = BUF_INIT(BUF_NO_LIMIT), chunked = BUF_INIT(BUF_NO_LIMIT);
	size_t nsizes = size ? data[0] % 8 : 0;

	if (size <= nsizes)
		return 0;
	feed(data + 1 + nsizes, size - 1 - nsizes, NULL, 0, &whole);
	feed(data + 1 + nsizes, size - 1 - nsizes, data + 1, nsizes, &chunked);
	/* an error's position can differ by chunking only in that it ends the feed call, so
	 * the transcripts (events and error codes, in order) must be identical */
	assert(whole.len == chunked.len &&
	       memcmp(buf_cstr(&whole), buf_cstr(&chunked), whole.len) == 0);
	buf_release(&whole);
	buf_release(&chunked);
	return 0;
}
