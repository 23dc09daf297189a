/*
 * Unit tests for the lib/k8s/watch stream splitter, on golden streams.
 *
 * Each stream under test/data/k8s_watch/NAME.stream is fed whole, split in two at every
 * byte offset, and one byte at a time; after an error the harness feeds the rest of the
 * chunk (p->consumed tells where), as a caller that keeps going would. Every way must
 * give the transcript in NAME.expected (events, errors with their messages, final
 * resourceVersion). UPDATE_GOLDEN=1 rewrites the .expected files from the whole feed.
 * Tests run from the repository root; TEST_DATA_DIR overrides test/data.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/k8s/watch.h"
#include "testutil.h"
#include "unit.h"

#define STREAM_MAX (1u << 20)

static char *read_file(const char *name, const char *ext, size_t *len)
{
	const char *dir = getenv("TEST_DATA_DIR") ? getenv("TEST_DATA_DIR") : "test/data";
	char path[512];
	char *text;

	snprintf(path, sizeof(path), "%s/k8s_watch/%s.%s", dir, name, ext);
	text = tu_must_read(path, len);
	ck_assert_uint_le(*len, STREAM_MAX);
	return text;
}

/* Records every event as one line: type, namespace/name, rv, and the spec if any. */
static int record_event(void *ctx, enum k8s_event_type type, json_t *obj, const char *rv)
{
	struct buf *out = ctx;
	json_t *meta = json_object_get(obj, "metadata");
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *name = json_string_value(json_object_get(meta, "name"));
	json_t *spec = json_object_get(obj, "spec");
	char *s = spec ? json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	buf_printf(out, "%s %s/%s rv=%s", k8s_event_type_name(type), ns ? ns : "-",
	           name ? name : "-", rv);
	if (s)
		buf_printf(out, " spec=%s", s);
	buf_printf(out, " bytes=%zu\n", s ? strlen(s) : 0);
	free(s);
	return 0;
}

static void record_rc(struct buf *out, int rc, const struct err *e)
{
	if (rc)
		buf_printf(out, "error %s: %s\n", err_name(rc), e->msg);
}

/* Feeds one chunk, resuming after errors the way a persistent caller would. */
static void feed_chunk(struct k8s_watch_parser *p, const char *d, size_t n, struct buf *out)
{
	struct err e;
	int rc;

	while (n) {
		err_clear(&e);
		rc = k8s_watch_feed(p, d, n, record_event, out, &e);
		record_rc(out, rc, &e);
		ck_assert(rc || p->consumed == n);
		ck_assert(p->consumed > 0 && p->consumed <= n);
		d += p->consumed;
		n -= p->consumed;
	}
}

/* The transcript of data fed in chunks of `step` bytes after a first chunk of `first`. */
static char *transcript(const char *data, size_t len, size_t line_max, size_t first, size_t step)
{
	struct k8s_watch_parser p;
	struct buf out = BUF_INIT(STREAM_MAX);
	struct err e;
	size_t off = first < len ? first : len;

	k8s_watch_parser_init(&p, line_max, NULL);
	feed_chunk(&p, data, off, &out);
	while (off < len) {
		size_t n = len - off < step ? len - off : step;

		feed_chunk(&p, data + off, n, &out);
		off += n;
	}
	err_clear(&e);
	record_rc(&out, k8s_watch_finish(&p, record_event, &out, &e), &e);
	buf_printf(&out, "rv=%s\n", k8s_watch_parser_rv(&p));
	k8s_watch_parser_release(&p);
	return buf_detach(&out, NULL);
}

static const struct {
	const char *name;
	size_t line_max; /* 0: K8S_WATCH_LINE_MAX */
} golden[] = {
	{ "basic", 0 },     { "keepalive_crlf", 0 }, { "error_410", 0 },  { "error_gone", 0 },
	{ "error_500", 0 }, { "malformed", 0 },      { "oversize", 256 },
};

static void write_golden(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "test/data/k8s_watch/%s.expected", name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(golden_every_split)
{
	size_t len, want_len;
	char *data = read_file(golden[_i].name, "stream", &len);
	char *whole = transcript(data, len, golden[_i].line_max, len, len);
	char *want, *got;

	if (getenv("UPDATE_GOLDEN"))
		write_golden(golden[_i].name, whole);
	want = read_file(golden[_i].name, "expected", &want_len);
	ck_assert_str_eq(whole, want);
	for (size_t k = 0; k <= len; k++) {
		got = transcript(data, len, golden[_i].line_max, k, len);
		ck_assert_msg(strcmp(got, want) == 0, "%s split at %zu:\n%s\nwant:\n%s",
		              golden[_i].name, k, got, want);
		free(got);
	}
	got = transcript(data, len, golden[_i].line_max, 1, 1);
	ck_assert_msg(strcmp(got, want) == 0, "%s byte by byte:\n%s", golden[_i].name, got);
	free(got);
	free(whole);
	free(want);
	free(data);
}
END_TEST

static int stop_at_second(void *ctx, enum k8s_event_type type, json_t *obj, const char *rv)
{
	int *count = ctx;

	(void)type, (void)obj, (void)rv;
	return ++*count == 2 ? 42 : 0;
}

/* A callback's non-zero return stops the feed right after its line. */
START_TEST(callback_stops_feed)
{
	static const char s[] =
	        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"resourceVersion\":\"1\"}}}\n"
	        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"resourceVersion\":\"2\"}}}\n"
	        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"resourceVersion\":\"3\"}}}\n";
	struct k8s_watch_parser p;
	int count = 0;
	size_t line = (sizeof(s) - 1) / 3;

	k8s_watch_parser_init(&p, 0, "0");
	ck_assert_str_eq(k8s_watch_parser_rv(&p), "0");
	ck_assert_int_eq(k8s_watch_feed(&p, s, sizeof(s) - 1, stop_at_second, &count, NULL), 42);
	ck_assert_uint_eq(p.consumed, 2 * line);
	ck_assert_str_eq(k8s_watch_parser_rv(&p), "2");
	ck_assert_int_eq(k8s_watch_feed(&p, s + p.consumed, line, stop_at_second, &count, NULL), 0);
	ck_assert_int_eq(count, 3);
	ck_assert_str_eq(k8s_watch_parser_rv(&p), "3");
	ck_assert_int_eq(k8s_watch_finish(&p, stop_at_second, &count, NULL), 0);
	k8s_watch_parser_release(&p);
	k8s_watch_parser_release(NULL);
}
END_TEST

/* An over-long line frees its memory at once, and an error keeps the RV of the last event. */
START_TEST(oversize_frees_and_resyncs)
{
	static const char ok[] =
	        "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"9\"}}}\n";
	struct k8s_watch_parser p;
	char big[300];
	struct buf out = BUF_INIT(4096);
	struct err e;

	memset(big, 'x', sizeof(big));
	k8s_watch_parser_init(&p, 100, NULL);
	ck_assert_int_eq(k8s_watch_feed(&p, big, 90, record_event, &out, NULL), 0);
	ck_assert_uint_eq(p.line.len, 90);
	err_clear(&e);
	ck_assert_int_eq(k8s_watch_feed(&p, big, sizeof(big), record_event, &out, &e), -EMSGSIZE);
	ck_assert_ptr_null(p.line.data);
	ck_assert(p.skipping);
	ck_assert_ptr_nonnull(strstr(e.msg, "over 100 bytes"));
	/* Still skipping: no second error for the same line. */
	ck_assert_int_eq(k8s_watch_feed(&p, big, sizeof(big), record_event, &out, NULL), 0);
	ck_assert_int_eq(k8s_watch_feed(&p, "\n", 1, record_event, &out, NULL), 0);
	ck_assert(!p.skipping);
	ck_assert_int_eq(k8s_watch_feed(&p, ok, sizeof(ok) - 1, record_event, &out, NULL), 0);
	ck_assert_str_eq(buf_cstr(&out), "BOOKMARK -/- rv=9 bytes=0\n");
	ck_assert_int_eq(k8s_watch_feed(&p, "nope\n", 5, record_event, &out, NULL), -EPROTO);
	ck_assert_str_eq(k8s_watch_parser_rv(&p), "9");
	k8s_watch_parser_release(&p);
	buf_release(&out);
}
END_TEST

START_TEST(event_names)
{
	ck_assert_str_eq(k8s_event_type_name(K8S_EVENT_ADDED), "ADDED");
	ck_assert_str_eq(k8s_event_type_name(K8S_EVENT_BOOKMARK), "BOOKMARK");
	ck_assert_str_eq(k8s_event_type_name(K8S_EVENT_ERROR), "ERROR");
	ck_assert_str_eq(k8s_event_type_name((enum k8s_event_type)99), "?");
}
END_TEST

static Suite *k8s_watch_suite(void)
{
	Suite *s = suite_create("k8s_watch");
	TCase *tc = tcase_create("parser");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, golden_every_split, 0, ARRAY_LEN(golden));
	tcase_add_test(tc, callback_stops_feed);
	tcase_add_test(tc, oversize_frees_and_resyncs);
	tcase_add_test(tc, event_names);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(k8s_watch_suite)
