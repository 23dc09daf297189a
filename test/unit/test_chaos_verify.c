/*
 * Unit tests for test/chaos/chaos_verify: the verdicts chaos-writer verify prints, on the
 * golden logs of test/data/chaos.
 *
 * failover.jsonl: writes to A (127.0.0.1:7001) acknowledged, a write lost in flight
 * (unknown), one rejected by B before its promotion, then B acknowledges; the fault (A's
 * kill) is at wall ...1.000900. Tallies compare it with what a final primary might hold:
 * everything, one key missing, a FLUSHALL (nothing), a changed value, a short counter.
 * split.jsonl: A, then B, then A again with A's same history: B's writes happened while
 * A was still writable. split-w1/w2.jsonl: two writers, one stuck on the old primary.
 * switchback.jsonl: A → B → A with a new history each time (legitimate switchovers).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "test/chaos/chaos_io.h"
#include "test/chaos/chaos_log.h"
#include "test/chaos/chaos_verify.h"
#include "unit.h"

#define W0 1700000000000000LL /* the goldens' wall clock = W0 + monotonic */

static const char *data_dir(void)
{
	const char *d = getenv("CHAOS_TEST_DATA");

	return d ? d : "test/data/chaos";
}

static void load(struct chaos_log *log, const char *names)
{
	char path[512];
	size_t n;
	char **list = chaos_split_list(names, &n);

	for (size_t i = 0; i < n; i++) {
		struct err e;

		err_clear(&e);
		snprintf(path, sizeof(path), "%s/%s", data_dir(), list[i]);
		ck_assert_msg(chaos_log_load(log, path, &e) == 0, "%s: %s", path, e.msg);
	}
	chaos_list_free(list);
}

/* --- tallies ---------------------------------------------------------------------- */

struct kv {
	const char *key;
	long long value;
};

#define ALL_PRESENT                                                                                \
	{ "w:g:1", 1 }, { "w:g:3", 3 }, { "w:g:6", 6 }, { "w:g:8", 8 },                            \
	{                                                                                          \
		"w:g:ctr", 2                                                                       \
	}

static const struct {
	const char *name;
	struct kv held[8]; /* what the server holds; keys not listed are absent */
	size_t lost, lost_set, lost_incr, unacked_present;
	const char *example; /* first lost key, or NULL */
} tally_cases[] = {
	{ "everything", { ALL_PRESENT }, 0, 0, 0, 1, NULL },
	{ "one acked key missing",
	  { { "w:g:1", 1 }, { "w:g:6", 6 }, { "w:g:8", 8 }, { "w:g:ctr", 2 } },
	  1,
	  1,
	  0,
	  1,
	  "w:g:3" },
	{ "FLUSHALL before verify", { { NULL, 0 } }, 5, 3, 2, 0, "w:g:1" },
	{ "changed value",
	  { { "w:g:1", 999 }, { "w:g:3", 3 }, { "w:g:6", 6 }, { "w:g:ctr", 2 } },
	  1,
	  1,
	  0,
	  0,
	  "w:g:1" },
	{ "counter short by one",
	  { { "w:g:1", 1 }, { "w:g:3", 3 }, { "w:g:6", 6 }, { "w:g:ctr", 1 } },
	  1,
	  0,
	  1,
	  0,
	  "w:g:ctr" },
	{ "counter garbage",
	  { { "w:g:1", 1 }, { "w:g:3", 3 }, { "w:g:6", 6 }, { "w:g:ctr", CHAOS_GARBAGE } },
	  2,
	  0,
	  2,
	  0,
	  "w:g:ctr" },
	{ "counter above acked (unacked INCR kept)",
	  { { "w:g:1", 1 }, { "w:g:3", 3 }, { "w:g:6", 6 }, { "w:g:ctr", 3 } },
	  0,
	  0,
	  0,
	  0,
	  NULL },
	{ "unknown and rejected writes present",
	  { ALL_PRESENT, { "w:g:4", 4 }, { "w:g:5", 5 } },
	  0,
	  0,
	  0,
	  3,
	  NULL },
};

static long long *observe(const struct chaos_log *log, const struct kv *held, size_t n)
{
	long long *obs = xcalloc(log->nkeys, sizeof(*obs));

	for (size_t k = 0; k < log->nkeys; k++) {
		obs[k] = CHAOS_ABSENT;
		for (size_t i = 0; i < n && held[i].key; i++)
			if (strcmp(held[i].key, log->keys[k]) == 0)
				obs[k] = held[i].value;
	}
	return obs;
}

START_TEST(tally_table)
{
	struct chaos_log log;
	struct chaos_report r;
	long long *obs;

	chaos_log_init(&log);
	chaos_report_init(&r);
	load(&log, "failover.jsonl");
	obs = observe(&log, tally_cases[_i].held, ARRAY_LEN(tally_cases[_i].held));
	chaos_tally(&log, obs, &r);
	ck_assert_msg(r.lost == tally_cases[_i].lost, "%s: lost %zu", tally_cases[_i].name, r.lost);
	ck_assert_uint_eq(r.lost_set, tally_cases[_i].lost_set);
	ck_assert_uint_eq(r.lost_incr, tally_cases[_i].lost_incr);
	ck_assert_uint_eq(r.unacked_present, tally_cases[_i].unacked_present);
	if (tally_cases[_i].example) {
		ck_assert_uint_ge(r.nlost_examples, 1);
		ck_assert_str_eq(log.keys[r.lost_examples[0]], tally_cases[_i].example);
	} else {
		ck_assert_uint_eq(r.nlost_examples, 0);
	}
	/* a second tally overwrites the first */
	chaos_tally(&log, obs, &r);
	ck_assert_uint_eq(r.lost, tally_cases[_i].lost);
	free(obs);
	chaos_report_release(&r);
	chaos_log_release(&log);
}
END_TEST

/* --- counts, faults, line ------------------------------------------------------------ */

START_TEST(counts_and_gap)
{
	struct chaos_log log;
	struct chaos_report r;

	chaos_log_init(&log);
	chaos_report_init(&r);
	load(&log, "failover.jsonl");
	chaos_count(&log, &r);
	ck_assert_uint_eq(r.ops, 8);
	ck_assert_uint_eq(r.by_result[CHAOS_ACKED], 5);
	ck_assert_uint_eq(r.by_result[CHAOS_UNACKED], 1);
	ck_assert_uint_eq(r.by_result[CHAOS_REJECTED], 1);
	ck_assert_uint_eq(r.by_result[CHAOS_UNKNOWN], 1);
	ck_assert_uint_eq(r.acked_set, 3);
	ck_assert_uint_eq(r.acked_incr, 2);
	ck_assert_int_eq(r.max_gap_us, 2000400 - 1000800);
	chaos_report_release(&r);
	chaos_log_release(&log);
}
END_TEST

/* want: { wall, rto, gap, first_ack, accept } */
static const struct {
	const char *name;
	int64_t faults[3];
	size_t n;
	struct chaos_fault_result want[3];
	int64_t worst;
} fault_cases[] = {
	{ "kill of A",
	  { W0 + 1000900 },
	  1,
	  { { W0 + 1000900, 2000400 - 1000900, 2000400 - 1000800, 999500, 999500 } },
	  999500 },
	{ "fault stamped early: A still acknowledged two writes",
	  { W0 + 1000400 },
	  1,
	  { { W0 + 1000400, 2000400 - 1000400, 999600, 1000800 - 1000400, 400 } },
	  1000000 },
	{ "two faults: the window stops at the next fault",
	  { W0 + 1000900, W0 + 2000450 },
	  2,
	  { { W0 + 1000900, 999500, 999600, 999500, 999500 },
	    { W0 + 2000450, 250, 300, 250, 250 } },
	  999500 },
	{ "faults given out of order",
	  { W0 + 2000450, W0 + 1000900 },
	  2,
	  { { W0 + 2000450, 250, 300, 250, 250 },
	    { W0 + 1000900, 999500, 999600, 999500, 999500 } },
	  999500 },
	{ "fault before any write: the wait from the fault counts",
	  { W0 },
	  1,
	  { { W0, 1000200, 1000200, 1000200, 1000200 } },
	  1000200 },
	{ "fault after the last write: never recovered",
	  { W0 + 3000000 },
	  1,
	  { { W0 + 3000000, -1, -1, -1, -1 } },
	  -1 },
	{ "no fault", { 0 }, 0, { { 0 } }, -1 },
};

START_TEST(fault_table)
{
	struct chaos_log log;
	struct chaos_report r;

	chaos_log_init(&log);
	chaos_report_init(&r);
	load(&log, "failover.jsonl");
	ck_assert_int_eq(chaos_faults(&log, fault_cases[_i].faults, fault_cases[_i].n, &r), 0);
	ck_assert_uint_eq(r.nfaults, fault_cases[_i].n);
	for (size_t i = 0; i < r.nfaults; i++) {
		const struct chaos_fault_result *g = &r.faults[i], *w = &fault_cases[_i].want[i];

		ck_assert_msg(g->wall_us == w->wall_us && g->rto_us == w->rto_us &&
		                      g->gap_us == w->gap_us &&
		                      g->first_ack_us == w->first_ack_us &&
		                      g->accept_us == w->accept_us,
		              "%s [%zu]: rto %lld gap %lld first_ack %lld accept %lld",
		              fault_cases[_i].name, i, (long long)g->rto_us, (long long)g->gap_us,
		              (long long)g->first_ack_us, (long long)g->accept_us);
	}
	ck_assert_int_eq(chaos_worst_rto(&r), fault_cases[_i].worst);
	chaos_report_release(&r);
	chaos_log_release(&log);
}
END_TEST

START_TEST(too_many_faults)
{
	struct chaos_log log;
	struct chaos_report r;
	int64_t f = 0;

	chaos_log_init(&log);
	chaos_report_init(&r);
	ck_assert_int_eq(chaos_faults(&log, &f, CHAOS_MAX_FAULTS + 1, &r), -E2BIG);
	ck_assert_uint_eq(r.nfaults, 0);
	chaos_report_release(&r);
	chaos_log_release(&log);
}
END_TEST

START_TEST(summary_line_and_json)
{
	struct chaos_log log;
	struct chaos_report r;
	struct buf line = BUF_INIT(BUF_NO_LIMIT);
	static const struct kv one_missing[] = { { "w:g:1", 1 }, { "w:g:ctr", 2 }, { "w:g:6", 6 } };
	int64_t fault = W0 + 1000900;
	long long *obs;
	json_t *j;

	chaos_log_init(&log);
	chaos_report_init(&r);
	load(&log, "failover.jsonl");
	obs = observe(&log, one_missing, ARRAY_LEN(one_missing));
	chaos_count(&log, &r);
	chaos_faults(&log, &fault, 1, &r);
	chaos_split_brain(&log, 0, &r);
	chaos_tally(&log, obs, &r);
	chaos_report_line(&r, &line);
	ck_assert_str_eq(buf_cstr(&line), "acked=5 lost=1 unacked_present=0 split_brain_instants=0 "
	                                  "rto_ms=1000 max_gap_ms=1000");
	j = chaos_report_json(&log, &r);
	ck_assert_int_eq(json_integer_value(json_object_get(j, "lost")), 1);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(j, "lost_examples"), 0)),
	                 "w:g:3");
	ck_assert(json_real_value(json_object_get(j, "rto_ms")) == 999.5);
	ck_assert(json_real_value(json_object_get(json_array_get(json_object_get(j, "faults"), 0),
	                                          "gap_ms")) == 999.6);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "servers")), 3);
	json_decref(j);
	free(obs);
	buf_release(&line);
	chaos_report_release(&r);
	chaos_log_release(&log);
}
END_TEST

/* --- split brain -------------------------------------------------------------------- */

static const struct {
	const char *logs;
	int64_t tolerance_us;
	size_t instants, pairs;
} split_cases[] = {
	{ "split.jsonl", 0, 2, 1 },
	{ "split.jsonl", 150, 1, 1 }, /* A's span shrinks to (350, 450): B's [460, 500] is out */
	{ "split.jsonl", 300, 0, 0 },
	{ "split-w1.jsonl,split-w2.jsonl", 0, 4, 2 },
	{ "split-w1.jsonl", 0, 0, 0 }, /* one writer alone saw only A */
	{ "switchback.jsonl", 0, 0, 0 },
	{ "failover.jsonl", 0, 0, 0 },
	{ "torn.jsonl", 0, 0, 0 },
};

START_TEST(split_table)
{
	struct chaos_log log;
	struct chaos_report r;

	chaos_log_init(&log);
	chaos_report_init(&r);
	load(&log, split_cases[_i].logs);
	chaos_split_brain(&log, split_cases[_i].tolerance_us, &r);
	ck_assert_msg(r.split_brain_instants == split_cases[_i].instants &&
	                      r.split_brain_pairs == split_cases[_i].pairs,
	              "%s tol %lld: instants %zu pairs %zu", split_cases[_i].logs,
	              (long long)split_cases[_i].tolerance_us, r.split_brain_instants,
	              r.split_brain_pairs);
	chaos_report_release(&r);
	chaos_log_release(&log);
}
END_TEST

/* --- fences ------------------------------------------------------------------------- */

static const struct {
	const char *who;
	int64_t at; /* µs after W0 */
	int64_t tolerance_us;
	size_t after;
} fence_cases[] = {
	{ "127.0.0.1:7001", 550, 0, 1 }, /* A's write at 600 */
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 550, 0, 1 },
	{ "127.0.0.1:7001", 550, 100, 0 },
	{ "127.0.0.1:7001", 700, 0, 0 },
	{ "127.0.0.1:7001", 0, 0, 3 },
	{ "127.0.0.1:7002", 450, 0, 1 }, /* B's write at 460 */
	{ "127.0.0.1:9999", 0, 0, 0 },
};

START_TEST(fence_table)
{
	struct chaos_log log;
	struct chaos_report r;
	struct chaos_fence f;

	chaos_log_init(&log);
	chaos_report_init(&r);
	load(&log, "split.jsonl");
	snprintf(f.who, sizeof(f.who), "%s", fence_cases[_i].who);
	f.wall_us = W0 + fence_cases[_i].at;
	chaos_fenced(&log, &f, 1, fence_cases[_i].tolerance_us, &r);
	ck_assert_uint_eq(r.after_fence, fence_cases[_i].after);
	chaos_fenced(&log, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.after_fence, 0);
	chaos_report_release(&r);
	chaos_log_release(&log);
}
END_TEST

/* --- percentiles -------------------------------------------------------------------- */

START_TEST(percentiles)
{
	double five[] = { 5, 1, 3, 2, 4 };
	double hundred[100];

	ck_assert(chaos_percentile(five, 5, 0) == 1);
	ck_assert(chaos_percentile(five, 5, 50) == 3);
	ck_assert(chaos_percentile(five, 5, 95) == 5);
	ck_assert(chaos_percentile(five, 5, 99) == 5);
	ck_assert(chaos_percentile(five, 5, 100) == 5);
	ck_assert(chaos_percentile(five, 0, 50) == -1);
	for (int i = 0; i < 100; i++)
		hundred[i] = 100 - i;
	ck_assert(chaos_percentile(hundred, 100, 50) == 50);
	ck_assert(chaos_percentile(hundred, 100, 95) == 95);
	ck_assert(chaos_percentile(hundred, 100, 99) == 99);
	ck_assert(chaos_percentile(hundred, 100, 99.5) == 100);
}
END_TEST

static Suite *chaos_verify_suite(void)
{
	Suite *s = suite_create("chaos_verify");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, tally_table, 0, ARRAY_LEN(tally_cases));
	tcase_add_test(tc, counts_and_gap);
	tcase_add_loop_test(tc, fault_table, 0, ARRAY_LEN(fault_cases));
	tcase_add_test(tc, too_many_faults);
	tcase_add_test(tc, summary_line_and_json);
	tcase_add_loop_test(tc, split_table, 0, ARRAY_LEN(split_cases));
	tcase_add_loop_test(tc, fence_table, 0, ARRAY_LEN(fence_cases));
	tcase_add_test(tc, percentiles);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(chaos_verify_suite)
