/* Unit tests for lib/k8s/rate: the bucket, the cut on 429, the growth back. */
#include <stdint.h>

#include "lib/k8s/rate.h"
#include "unit.h"

/* Takes n slots at now; returns the wait of the last. */
static int64_t take_n(struct k8s_rate *r, int n, int64_t now)
{
	int64_t w = 0;

	for (int i = 0; i < n; i++)
		w = k8s_rate_take(r, now);
	return w;
}

START_TEST(burst_then_rate)
{
	struct k8s_rate r;

	k8s_rate_init(&r, 10, 5, 0);
	ck_assert_int_eq(take_n(&r, 5, 0), 0);       /* the burst at once */
	ck_assert_int_eq(k8s_rate_take(&r, 0), 100); /* then one per 100 ms */
	ck_assert_int_eq(k8s_rate_take(&r, 0), 200);
	/* a second later the bucket is full again (capped at the burst) */
	ck_assert_int_eq(take_n(&r, 3, 1000), 0);
}
END_TEST

START_TEST(give_back_returns_the_slot)
{
	struct k8s_rate r;

	k8s_rate_init(&r, 10, 1, 0);
	ck_assert_int_eq(k8s_rate_take(&r, 0), 0);
	ck_assert_int_eq(k8s_rate_take(&r, 0), 100);
	k8s_rate_give_back(&r);
	ck_assert_int_eq(k8s_rate_take(&r, 0), 100);
}
END_TEST

START_TEST(throttled_halves_and_empties)
{
	struct k8s_rate r;

	k8s_rate_init(&r, 40, 40, 0);
	k8s_rate_throttled(&r, 0);
	ck_assert(r.qps == 20);
	ck_assert_uint_eq(r.cuts, 1);
	/* no burst left: one slot per 50 ms at the halved rate */
	ck_assert_int_eq(k8s_rate_take(&r, 0), 50);
	ck_assert_int_eq(k8s_rate_take(&r, 0), 100);
	ck_assert_int_eq(k8s_rate_take(&r, 150), 0);
}
END_TEST

START_TEST(one_cut_per_congestion_event)
{
	struct k8s_rate r;

	k8s_rate_init(&r, 40, 40, 0);
	k8s_rate_throttled(&r, 0);
	k8s_rate_throttled(&r, 10); /* the same burst's other 429s */
	k8s_rate_throttled(&r, 999);
	ck_assert(r.qps == 20);
	ck_assert_uint_eq(r.cuts, 1);
	k8s_rate_throttled(&r, 1000); /* a new event */
	ck_assert(r.qps == 10);
	ck_assert_uint_eq(r.cuts, 2);
}
END_TEST

START_TEST(floor_bounds_the_cuts)
{
	static const struct {
		double ceiling, floor;
	} cases[] = { { 64, 2 }, { 50, 1.5625 }, { 10, 1 }, { 0.5, 0.5 } };

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct k8s_rate r;

		k8s_rate_init(&r, cases[i].ceiling, 1, 0);
		for (int k = 0; k < 20; k++)
			k8s_rate_throttled(&r, (int64_t)k * K8S_RATE_CUT_GAP_MS);
		ck_assert_msg(r.qps == cases[i].floor, "ceiling %g: %g, want %g", cases[i].ceiling,
		              r.qps, cases[i].floor);
	}
}
END_TEST

START_TEST(grows_back_linearly_to_the_ceiling)
{
	struct k8s_rate r;

	k8s_rate_init(&r, 40, 100, 0);
	k8s_rate_throttled(&r, 0); /* 20 qps */
	k8s_rate_take(&r, 1000);   /* the gap: no growth yet */
	ck_assert(r.qps == 20);
	k8s_rate_take(&r, 2000); /* one second of growth: +4 qps */
	ck_assert(r.qps == 24);
	k8s_rate_take(&r, 3500);
	ck_assert(r.qps == 30);
	k8s_rate_take(&r, 60000);
	ck_assert(r.qps == 40); /* capped */
}
END_TEST

START_TEST(unlimited_counts_only)
{
	struct k8s_rate r;

	k8s_rate_init(&r, 0, 1, 0);
	ck_assert_int_eq(take_n(&r, 1000, 0), 0);
	k8s_rate_throttled(&r, 0);
	ck_assert(r.qps == 0);
	ck_assert_uint_eq(r.cuts, 1);
	ck_assert_int_eq(k8s_rate_take(&r, 100), 0);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("k8s_rate");
	TCase *tc = tcase_create("rate");

	tcase_add_test(tc, burst_then_rate);
	tcase_add_test(tc, give_back_returns_the_slot);
	tcase_add_test(tc, throttled_halves_and_empties);
	tcase_add_test(tc, one_cut_per_congestion_event);
	tcase_add_test(tc, floor_bounds_the_cuts);
	tcase_add_test(tc, grows_back_linearly_to_the_ceiling);
	tcase_add_test(tc, unlimited_counts_only);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_suite)
