/*
 * Unit tests for test/chaos/chaos_log and chaos_io: the writer's log parser on golden
 * logs (test/data/chaos/NAME.jsonl) and on malformed lines, the host:port and wall-time
 * parsers, fault files and comma lists.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"
#include "test/chaos/chaos_io.h"
#include "test/chaos/chaos_log.h"
#include "unit.h"

static const char *data_dir(void)
{
	const char *d = getenv("CHAOS_TEST_DATA");

	return d ? d : "test/data/chaos";
}

static int load(struct chaos_log *log, const char *name, struct err *e)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", data_dir(), name);
	return chaos_log_load(log, path, e);
}

#define A_RUN "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define OP(extra)                                                                                  \
	"{\"type\":\"op\",\"seq\":1,\"op\":\"set\",\"key\":\"w:1\",\"value\":1,\"t0\":10,"         \
	"\"t1\":20,\"w0\":110,\"w1\":120,\"server\":\"h:1\",\"run_id\":\"" A_RUN "\","             \
	"\"replid\":\"r\",\"result\":\"acked\"" extra "}"

START_TEST(golden_failover)
{
	struct chaos_log log;
	struct err e;
	const struct chaos_rec *r;

	chaos_log_init(&log);
	err_clear(&e);
	ck_assert_int_eq(load(&log, "failover.jsonl", &e), 0);
	ck_assert_uint_eq(log.nrecs, 8);
	ck_assert_uint_eq(log.headers, 1);
	ck_assert_uint_eq(log.torn, 0);
	/* keys: w:g:1 w:g:ctr w:g:3 w:g:4 w:g:5 w:g:6 w:g:8 */
	ck_assert_uint_eq(log.nkeys, 7);
	ck_assert_str_eq(log.keys[1], "w:g:ctr");
	/* tenures: A/1, B/0 (the rejected write), B/2 */
	ck_assert_uint_eq(log.nservers, 3);
	ck_assert_str_eq(log.servers[log.recs[5].server].replid,
	                 "2222222222222222222222222222222222222222");
	r = &log.recs[1];
	ck_assert_int_eq(r->op, CHAOS_OP_INCR);
	ck_assert_int_eq(r->result, CHAOS_ACKED);
	ck_assert_int_eq(r->value, 1);
	ck_assert_int_eq(r->t0, 1000300);
	ck_assert_int_eq(r->w1, 1700000001000500);
	ck_assert_int_eq(log.recs[3].result, CHAOS_UNKNOWN);
	ck_assert_int_eq(log.recs[3].acks, -1);
	ck_assert_int_eq(log.recs[4].result, CHAOS_REJECTED);
	ck_assert_int_eq(log.recs[7].result, CHAOS_UNACKED);
	chaos_log_release(&log);
	chaos_log_release(NULL);
}
END_TEST

START_TEST(golden_torn_last_line)
{
	struct chaos_log log;

	chaos_log_init(&log);
	ck_assert_int_eq(load(&log, "torn.jsonl", NULL), 0);
	ck_assert_uint_eq(log.nrecs, 2);
	ck_assert_uint_eq(log.torn, 1);
	chaos_log_release(&log);
}
END_TEST

START_TEST(two_logs_merge_sorted)
{
	struct chaos_log log;

	chaos_log_init(&log);
	ck_assert_int_eq(load(&log, "split-w1.jsonl", NULL), 0);
	ck_assert_int_eq(load(&log, "split-w2.jsonl", NULL), 0);
	ck_assert_uint_eq(log.nrecs, 8);
	ck_assert_uint_eq(log.headers, 2);
	for (size_t i = 1; i < log.nrecs; i++)
		ck_assert_int_le(log.recs[i - 1].t0, log.recs[i].t0);
	ck_assert_uint_eq(log.nservers, 2);
	chaos_log_release(&log);
}
END_TEST

START_TEST(missing_file)
{
	struct chaos_log log;
	struct err e;

	chaos_log_init(&log);
	err_clear(&e);
	ck_assert_int_eq(load(&log, "no-such.jsonl", &e), -ENOENT);
	ck_assert_ptr_nonnull(strstr(e.msg, "no-such.jsonl"));
	chaos_log_release(&log);
}
END_TEST

static const struct {
	const char *name;
	const char *text;
	int want;
	size_t nrecs;
	size_t torn;
	const char *msg; /* substring of the error */
} parse_cases[] = {
	{ "one op", OP(",\"acks\":1") "\n", 0, 1, 0, NULL },
	{ "blank lines and CR-less end", "\n\n" OP(""), 0, 1, 0, NULL },
	{ "other types skipped",
	  "{\"type\":\"conn\",\"x\":1}\n{\"type\":\"end\"}\n{\"type\":\"start\"}\n", 0, 0, 0,
	  NULL },
	{ "acks optional", OP("") "\n", 0, 1, 0, NULL },
	{ "bad json mid-file", OP("") "\n{nope\n" OP("") "\n", -EPROTO, 1, 0, "line 2" },
	{ "torn last line", OP("") "\n{\"type\":\"op\",\"se", 0, 1, 1, NULL },
	{ "not an object", "[1,2]\n", -EPROTO, 0, 0, "not a JSON object" },
	{ "no type", "{\"seq\":1}\n", -EPROTO, 0, 0, "type: required" },
	{ "missing t1",
	  "{\"type\":\"op\",\"seq\":1,\"op\":\"set\",\"key\":\"k\",\"value\":1,\"t0\":1,\"w0\":1,"
	  "\"w1\":1,\"server\":\"\",\"run_id\":\"\",\"replid\":\"\",\"result\":\"unknown\"}\n",
	  -EPROTO, 0, 0, "t1: required" },
	{ "unknown result",
	  "{\"type\":\"op\",\"seq\":1,\"op\":\"set\",\"key\":\"k\",\"value\":1,\"t0\":1,\"t1\":2,"
	  "\"w0\":1,\"w1\":2,\"server\":\"\",\"run_id\":\"\",\"replid\":\"\",\"result\":\"maybe\"}"
	  "\n",
	  -EPROTO, 0, 0, "unknown result" },
	{ "unknown op",
	  "{\"type\":\"op\",\"seq\":1,\"op\":\"del\",\"key\":\"k\",\"value\":1,\"t0\":1,\"t1\":2,"
	  "\"w0\":1,\"w1\":2,\"server\":\"\",\"run_id\":\"\",\"replid\":\"\",\"result\":\"acked\"}"
	  "\n",
	  -EPROTO, 0, 0, "unknown operation" },
	{ "t1 before t0",
	  "{\"type\":\"op\",\"seq\":1,\"op\":\"set\",\"key\":\"k\",\"value\":1,\"t0\":5,\"t1\":2,"
	  "\"w0\":1,\"w1\":2,\"server\":\"\",\"run_id\":\"x\",\"replid\":\"\",\"result\":\"acked\"}"
	  "\n",
	  -EPROTO, 0, 0, "earlier" },
	{ "accepted without run_id",
	  "{\"type\":\"op\",\"seq\":1,\"op\":\"set\",\"key\":\"k\",\"value\":1,\"t0\":1,\"t1\":2,"
	  "\"w0\":1,\"w1\":2,\"server\":\"h:1\",\"run_id\":\"\",\"replid\":\"\",\"result\":"
	  "\"acked\"}\n",
	  -EPROTO, 0, 0, "run_id: empty" },
	{ "empty key",
	  "{\"type\":\"op\",\"seq\":1,\"op\":\"set\",\"key\":\"\",\"value\":1,\"t0\":1,\"t1\":2,"
	  "\"w0\":1,\"w1\":2,\"server\":\"\",\"run_id\":\"\",\"replid\":\"\",\"result\":"
	  "\"unknown\"}\n",
	  -EPROTO, 0, 0, "key: empty" },
	{ "run_id too long",
	  "{\"type\":\"op\",\"seq\":1,\"op\":\"set\",\"key\":\"k\",\"value\":1,\"t0\":1,\"t1\":2,"
	  "\"w0\":1,\"w1\":2,\"server\":\"\",\"run_id\":\"" A_RUN "a\",\"replid\":\"\","
	  "\"result\":\"acked\"}\n",
	  -EPROTO, 0, 0, "run_id: longer" },
	{ "negative time",
	  "{\"type\":\"op\",\"seq\":1,\"op\":\"set\",\"key\":\"k\",\"value\":1,\"t0\":-1,\"t1\":2,"
	  "\"w0\":1,\"w1\":2,\"server\":\"\",\"run_id\":\"\",\"replid\":\"\",\"result\":"
	  "\"unknown\"}\n",
	  -EPROTO, 0, 0, "t0" },
	{ "acks is text", OP(",\"acks\":\"1\"") "\n", -EPROTO, 0, 0, "acks: expected integer" },
	{ "duplicate key", OP(",\"acks\":1,\"acks\":2") "\n", -EPROTO, 0, 0, "duplicate" },
	{ "seq is text",
	  "{\"type\":\"op\",\"seq\":\"1\",\"op\":\"set\",\"key\":\"k\",\"value\":1,\"t0\":1,"
	  "\"t1\":2,\"w0\":1,\"w1\":2,\"server\":\"\",\"run_id\":\"\",\"replid\":\"\","
	  "\"result\":\"unknown\"}\n",
	  -EPROTO, 0, 0, "seq: expected integer" },
};

START_TEST(parse_table)
{
	struct chaos_log log;
	struct err e;
	const char *t = parse_cases[_i].text;

	chaos_log_init(&log);
	err_clear(&e);
	ck_assert_msg(chaos_log_parse(&log, t, strlen(t), &e) == parse_cases[_i].want,
	              "%s: got %s (%s)", parse_cases[_i].name, err_name(e.code), e.msg);
	ck_assert_uint_eq(log.nrecs, parse_cases[_i].nrecs);
	ck_assert_uint_eq(log.torn, parse_cases[_i].torn);
	if (parse_cases[_i].msg)
		ck_assert_msg(strstr(e.msg, parse_cases[_i].msg) != NULL, "%s: message \"%s\"",
		              parse_cases[_i].name, e.msg);
	chaos_log_release(&log);
}
END_TEST

START_TEST(long_line)
{
	struct chaos_log log;
	struct buf b = BUF_INIT(BUF_NO_LIMIT);
	struct err e;

	buf_append_str(&b, "{\"type\":\"conn\",\"pad\":\"");
	for (int i = 0; i < CHAOS_LINE_MAX; i++)
		buf_append_char(&b, 'x');
	buf_append_str(&b, "\"}\n");
	chaos_log_init(&log);
	err_clear(&e);
	ck_assert_int_eq(chaos_log_parse(&log, b.data, b.len, &e), -EMSGSIZE);
	ck_assert_ptr_nonnull(strstr(e.msg, "line 1"));
	chaos_log_release(&log);
	buf_release(&b);
}
END_TEST

START_TEST(intern)
{
	struct chaos_log log;

	chaos_log_init(&log);
	ck_assert_uint_eq(chaos_log_key(&log, "a"), 0);
	ck_assert_uint_eq(chaos_log_key(&log, "b"), 1);
	ck_assert_uint_eq(chaos_log_key(&log, "a"), 0);
	ck_assert_uint_eq(chaos_log_server(&log, "h:1", "r", "x"), 0);
	ck_assert_uint_eq(chaos_log_server(&log, "h:1", "r", "y"), 1);
	ck_assert_uint_eq(chaos_log_server(&log, "h:1", "r", "x"), 0);
	ck_assert_uint_eq(log.nservers, 2);
	chaos_log_release(&log);
}
END_TEST

START_TEST(result_names)
{
	enum chaos_result r;

	for (unsigned i = 0; i < CHAOS_NRESULTS; i++) {
		ck_assert_int_eq(chaos_result_parse(chaos_result_name((enum chaos_result)i), &r),
		                 0);
		ck_assert_uint_eq(r, i);
	}
	ck_assert_int_eq(chaos_result_parse("ACKED", &r), -EINVAL);
	ck_assert_str_eq(chaos_result_name(CHAOS_NRESULTS), "?");
	ck_assert(chaos_result_is_accepted(CHAOS_ACKED));
	ck_assert(chaos_result_is_accepted(CHAOS_UNACKED));
	ck_assert(!chaos_result_is_accepted(CHAOS_REJECTED));
	ck_assert(!chaos_result_is_accepted(CHAOS_UNKNOWN));
}
END_TEST

static const struct {
	const char *in;
	int want;
	const char *host;
	int port;
} addr_cases[] = {
	{ "127.0.0.1:6379", 0, "127.0.0.1", 6379 },
	{ "  10.241.0.5:26379\n", 0, "10.241.0.5", 26379 },
	{ "[::1]:7000", 0, "::1", 7000 },
	{ "::1:7000", 0, "::1", 7000 },
	{ "redis-0.redis:1", 0, "redis-0.redis", 1 },
	{ "h:65535", 0, "h", 65535 },
	{ "h:65536", -EINVAL, NULL, 0 },
	{ "h:0", -EINVAL, NULL, 0 },
	{ "h:", -EINVAL, NULL, 0 },
	{ ":6379", -EINVAL, NULL, 0 },
	{ "[]:6379", -EINVAL, NULL, 0 },
	{ "host", -EINVAL, NULL, 0 },
	{ "h:12a", -EINVAL, NULL, 0 },
	{ "h:-1", -EINVAL, NULL, 0 },
	{ "a b:1", -EINVAL, NULL, 0 },
	{ "", -EINVAL, NULL, 0 },
	{ "0123456789012345678901234567890123456789:1", -EINVAL, NULL, 0 }, /* > hostlen */
};

START_TEST(addr_table)
{
	char host[32] = "unchanged";
	int port = -7;
	int rc = chaos_parse_addr(addr_cases[_i].in, host, sizeof(host), &port);

	ck_assert_msg(rc == addr_cases[_i].want, "\"%s\": got %d", addr_cases[_i].in, rc);
	if (rc == 0) {
		ck_assert_str_eq(host, addr_cases[_i].host);
		ck_assert_int_eq(port, addr_cases[_i].port);
	} else {
		ck_assert_str_eq(host, "unchanged");
		ck_assert_int_eq(port, -7);
	}
}
END_TEST

static const struct {
	const char *in;
	int want;
	int64_t us;
} wall_cases[] = {
	{ "1700000000.5", 0, 1700000000500000 },
	{ "1700000000.123456", 0, 1700000000123456 },
	{ "1700000000.123456789", 0, 1700000000123456 },
	{ "1700000000123", 0, 1700000000123000 },
	{ " 12.25 \n", 0, 12250000 },
	{ "0", 0, 0 },
	{ "", -EINVAL, 0 },
	{ "1.", -EINVAL, 0 },
	{ ".5", -EINVAL, 0 },
	{ "1.2.3", -EINVAL, 0 },
	{ "1.1234567890", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 },
	{ "1e3", -EINVAL, 0 },
	{ "99999999999999999999", -ERANGE, 0 },
	{ "99999999999999999.5", -ERANGE, 0 },
};

START_TEST(wall_table)
{
	int64_t us = -42;
	int rc = chaos_parse_wall(wall_cases[_i].in, &us);

	ck_assert_msg(rc == wall_cases[_i].want, "\"%s\": got %d", wall_cases[_i].in, rc);
	ck_assert_int_eq(us, rc == 0 ? wall_cases[_i].us : -42);
}
END_TEST

START_TEST(faults_text)
{
	int64_t *f = NULL;
	size_t n = 9;
	struct err e;
	const char *ok = "1700000000.5\n\n  \n1700000001000\n";

	ck_assert_int_eq(chaos_parse_faults(ok, strlen(ok), &f, &n, NULL), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(f[0], 1700000000500000);
	ck_assert_int_eq(f[1], 1700000001000000);
	free(f);
	ck_assert_int_eq(chaos_parse_faults("", 0, &f, &n, NULL), 0);
	ck_assert_uint_eq(n, 0);
	err_clear(&e);
	ck_assert_int_eq(chaos_parse_faults("1\nnope\n", 8, &f, &n, &e), -EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "line 2"));
}
END_TEST

START_TEST(faults_file_mtime_and_content)
{
	char path[] = "/tmp/test_chaos_fault_XXXXXX";
	int fd = mkstemp(path);
	int64_t *f = NULL, before = chaos_wall_us();
	size_t n = 0;

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(chaos_read_faults(path, &f, &n, NULL), 0); /* empty: mtime */
	ck_assert_uint_eq(n, 1);
	ck_assert_int_le(f[0], before + 1000);
	ck_assert_int_ge(f[0], before - 10 * 1000000);
	free(f);
	fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_eq(write(fd, "5.5\n6\n", 6), 6);
	close(fd);
	ck_assert_int_eq(chaos_read_faults(path, &f, &n, NULL), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(f[0], 5500000);
	ck_assert_int_eq(f[1], 6000);
	free(f);
	unlink(path);
	ck_assert_int_eq(chaos_read_faults(path, &f, &n, NULL), -ENOENT);
}
END_TEST

START_TEST(secret_file)
{
	char path[] = "/tmp/test_chaos_pw_XXXXXX";
	int fd = mkstemp(path);
	char *pw = NULL;

	ck_assert_int_eq(write(fd, "s3cret\n", 7), 7);
	close(fd);
	ck_assert_int_eq(chaos_read_secret(path, &pw, NULL), 0);
	ck_assert_str_eq(pw, "s3cret");
	free_secret(pw);
	fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_eq(write(fd, "\n", 1), 1);
	close(fd);
	ck_assert_int_eq(chaos_read_secret(path, &pw, NULL), -EINVAL);
	unlink(path);
	ck_assert_int_eq(chaos_read_secret(path, &pw, NULL), -ENOENT);
}
END_TEST

START_TEST(lists)
{
	size_t n = 99;
	char **l = chaos_split_list("a:1,,b:2,", &n);

	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(l[0], "a:1");
	ck_assert_str_eq(l[1], "b:2");
	ck_assert_ptr_null(l[2]);
	chaos_list_free(l);
	l = chaos_split_list(NULL, &n);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(l[0]);
	chaos_list_free(l);
	chaos_list_free(NULL);
}
END_TEST

static Suite *chaos_log_suite(void)
{
	Suite *s = suite_create("chaos_log");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, golden_failover);
	tcase_add_test(tc, golden_torn_last_line);
	tcase_add_test(tc, two_logs_merge_sorted);
	tcase_add_test(tc, missing_file);
	tcase_add_loop_test(tc, parse_table, 0, ARRAY_LEN(parse_cases));
	tcase_add_test(tc, long_line);
	tcase_add_test(tc, intern);
	tcase_add_test(tc, result_names);
	tcase_add_loop_test(tc, addr_table, 0, ARRAY_LEN(addr_cases));
	tcase_add_loop_test(tc, wall_table, 0, ARRAY_LEN(wall_cases));
	tcase_add_test(tc, faults_text);
	tcase_add_test(tc, faults_file_mtime_and_content);
	tcase_add_test(tc, secret_file);
	tcase_add_test(tc, lists);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(chaos_log_suite)
