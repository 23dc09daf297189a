/*
 * Unit tests for instance/sentinel_steer (the pure half of a switchover steered to a
 * named replica): the SENTINEL REPLICAS parser (the shape recorded from redis-sentinel
 * 7.0.15), when Sentinel would pick the target (inst_steer_seen), and when a replica's
 * replica-priority 0 is left over from a move (inst_steer_stale).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "instance/sentinel_steer.h"
#include "lib/buf.h"
#include "unit.h"

/* One replica's entry of SENTINEL REPLICAS, as redis-sentinel 7.0.15 answers it. */
static void entry(struct buf *b, const char *ip, int port, const char *flags, const char *prio)
{
	char portx[16], name[64];
	const char *kv[] = { "name",
		             name,
		             "ip",
		             ip,
		             "port",
		             portx,
		             "runid",
		             "e97bcc62",
		             "flags",
		             flags,
		             "link-pending-commands",
		             "0",
		             "role-reported",
		             "slave",
		             "master-link-status",
		             "ok",
		             "slave-priority",
		             prio,
		             "slave-repl-offset",
		             "1",
		             "replica-announced",
		             "1" };
	size_t n = sizeof(kv) / sizeof(kv[0]);

	snprintf(portx, sizeof(portx), "%d", port);
	snprintf(name, sizeof(name), "%s:%d", ip, port);
	buf_printf(b, "*%zu\r\n", n);
	for (size_t i = 0; i < n; i++)
		buf_printf(b, "$%zu\r\n%s\r\n", strlen(kv[i]), kv[i]);
}

struct rep {
	const char *ip, *flags, *prio;
};

static struct vk_reply *replicas(const struct rep *r, size_t n)
{
	struct buf b = BUF_INIT(1 << 16);
	struct vk_reply *out = NULL;

	buf_printf(&b, "*%zu\r\n", n);
	for (size_t i = 0; i < n; i++)
		entry(&b, r[i].ip, 6379, r[i].flags, r[i].prio);
	ck_assert_int_eq(vk_reply_decode(b.data, b.len, &out, NULL), 0);
	buf_release(&b);
	return out;
}

/* target 10.0.0.3; the others must be at 0 unless Sentinel cannot pick them anyway */
static const struct {
	const char *name;
	struct rep r[4];
	size_t n;
	bool seen;
	const char *why; /* a piece of why when not seen */
} seen_cases[] = {
	{ "others at 0, target 100",
	  { { "10.0.0.2", "slave", "0" }, { "10.0.0.3", "slave", "100" } },
	  2,
	  true,
	  NULL },
	{ "another still at 100 (Sentinel's INFO not refreshed yet)",
	  { { "10.0.0.2", "slave", "100" }, { "10.0.0.3", "slave", "100" } },
	  2,
	  false,
	  "10.0.0.2:6379 with replica-priority 100" },
	{ "a stale replica down at 100: Sentinel cannot pick it",
	  { { "10.0.0.9", "slave,s_down,disconnected", "100" }, { "10.0.0.3", "slave", "100" } },
	  2,
	  true,
	  NULL },
	{ "the target at 0",
	  { { "10.0.0.2", "slave", "0" }, { "10.0.0.3", "slave", "0" } },
	  2,
	  false,
	  "the target 10.0.0.3:6379 with replica-priority 0" },
	{ "the target down",
	  { { "10.0.0.3", "slave,s_down", "100" } },
	  1,
	  false,
	  "down or disconnected" },
	{ "the target not listed",
	  { { "10.0.0.2", "slave", "0" } },
	  1,
	  false,
	  "does not list the target" },
	{ "no replica", { { 0 } }, 0, false, "does not list the target" },
};

START_TEST(seen)
{
	struct inst_steer_replica r[INST_STEER_MAX];
	struct vk_reply *rep = replicas(seen_cases[_i].r, seen_cases[_i].n);
	struct err e = { 0 };
	char why[256] = "";
	size_t n = 99;
	bool got;

	ck_assert_int_eq(inst_steer_parse_replicas(rep, r, INST_STEER_MAX, &n, &e), 0);
	ck_assert_uint_eq(n, seen_cases[_i].n);
	got = inst_steer_seen(r, n, "10.0.0.3", 6379, why, sizeof(why));
	ck_assert_msg(got == seen_cases[_i].seen, "%s: %s", seen_cases[_i].name, why);
	if (!got)
		ck_assert_msg(strstr(why, seen_cases[_i].why), "%s: why '%s'", seen_cases[_i].name,
		              why);
	vk_reply_free(rep);
}
END_TEST

START_TEST(parse_fields)
{
	static const struct rep one[] = { { "10.1.2.3", "slave,disconnected", "7" } };
	struct inst_steer_replica r[INST_STEER_MAX];
	struct vk_reply *rep = replicas(one, 1);
	size_t n = 0;

	ck_assert_int_eq(inst_steer_parse_replicas(rep, r, INST_STEER_MAX, &n, NULL), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(r[0].host, "10.1.2.3");
	ck_assert_int_eq(r[0].port, 6379);
	ck_assert_int_eq(r[0].priority, 7);
	ck_assert(!r[0].usable);
	vk_reply_free(rep);
}
END_TEST

static const char *const malformed[] = {
	"+OK\r\n",                                           /* not an array */
	"*1\r\n$2\r\nip\r\n",                                /* an entry is not an array */
	"*1\r\n*3\r\n$2\r\nip\r\n$1\r\n1\r\n$4\r\nport\r\n", /* odd pairs */
	"*1\r\n*2\r\n$2\r\nip\r\n$8\r\n10.0.0.1\r\n",        /* no port */
	"*1\r\n*2\r\n$4\r\nport\r\n$4\r\n6379\r\n",          /* no ip */
	"*1\r\n*2\r\n$2\r\nip\r\n:1\r\n",                    /* a value not a string */
};

START_TEST(parse_malformed)
{
	struct inst_steer_replica r[INST_STEER_MAX];
	struct vk_reply *rep = NULL;
	struct err e = { 0 };
	size_t n = 0;

	ck_assert_int_eq(vk_reply_decode(malformed[_i], strlen(malformed[_i]), &rep, NULL), 0);
	ck_assert_int_eq(inst_steer_parse_replicas(rep, r, INST_STEER_MAX, &n, &e), -EPROTO);
	ck_assert_ptr_nonnull(strstr(e.msg, "SENTINEL REPLICAS"));
	vk_reply_free(rep);
}
END_TEST

/* More replicas than the array holds: the first max, no overflow. */
START_TEST(parse_capped)
{
	struct rep many[3] = { { "10.0.0.1", "slave", "1" },
		               { "10.0.0.2", "slave", "1" },
		               { "10.0.0.3", "slave", "1" } };
	struct inst_steer_replica r[2];
	struct vk_reply *rep = replicas(many, 3);
	size_t n = 0;

	ck_assert_int_eq(inst_steer_parse_replicas(rep, r, 2, &n, NULL), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(r[1].host, "10.0.0.2");
	vk_reply_free(rep);
}
END_TEST

static const struct {
	const char *have, *want;
	int64_t zero_since, now;
	bool stale;
} stale_cases[] = {
	{ "0", NULL, 1000, 1000 + 60000, true },     /* default 100 wanted, 0 past the hold */
	{ "0", NULL, 1000, 1000 + 59999, false },    /* not yet */
	{ "0", "0", 1000, 1000 + 600000, false },    /* the spec asks for 0 */
	{ "0", "50", 1000, 1000 + 60000, true },     /* the spec's own value */
	{ "100", NULL, 1000, 1000 + 600000, false }, /* not 0 */
	{ "0", NULL, 0, 600000, false },             /* not seen at 0 before */
};

START_TEST(stale)
{
	ck_assert_int_eq(inst_steer_stale(stale_cases[_i].have, stale_cases[_i].want,
	                                  stale_cases[_i].zero_since, stale_cases[_i].now, 60000),
	                 stale_cases[_i].stale);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("instance_sentinel_steer");
	TCase *t = tcase_create("steer");

	tcase_add_loop_test(t, seen, 0, ARRAY_LEN(seen_cases));
	tcase_add_test(t, parse_fields);
	tcase_add_loop_test(t, parse_malformed, 0, ARRAY_LEN(malformed));
	tcase_add_test(t, parse_capped);
	tcase_add_loop_test(t, stale, 0, ARRAY_LEN(stale_cases));
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)
