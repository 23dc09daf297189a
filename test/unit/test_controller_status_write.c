/*
 * test_controller_status_write: the rule for the volatile status fields
 * (controller/internal.h, ctl_volatile_due and ctl_lag_print): a changed lag is written
 * after the refresh period, offsets and lastSeen alone only after ten of them, and the
 * lag fingerprint moves with any pod's lag and with the pods' order.
 */
#include "controller/internal.h"
#include "unit.h"

START_TEST(a_changed_lag_waits_for_the_refresh_period)
{
	ck_assert(!ctl_volatile_due(9999, 10000, true));
	ck_assert(ctl_volatile_due(10000, 10000, true));
	ck_assert(ctl_volatile_due(30000, 10000, true));
}
END_TEST

START_TEST(offsets_and_last_seen_alone_wait_ten_periods)
{
	ck_assert(!ctl_volatile_due(30000, 10000, false)); /* a resync at rest: no write */
	ck_assert(!ctl_volatile_due(99999, 10000, false));
	ck_assert(ctl_volatile_due(100000, 10000, false));
	ck_assert(!ctl_volatile_due(19999, 2000, false)); /* scales with --status-refresh */
	ck_assert(ctl_volatile_due(20000, 2000, false));
}
END_TEST

START_TEST(lag_print_follows_every_lag)
{
	struct ctl_pod a[3] = { { .name = "a-0" }, { .name = "a-1" }, { .name = "a-2" } };
	uint64_t base, swapped;

	a[0].inst.lag_bytes = -1; /* the primary: no lag */
	a[1].inst.lag_bytes = 0;
	a[2].inst.lag_bytes = 0;
	base = ctl_lag_print(a, 3);
	ck_assert(base == ctl_lag_print(a, 3));
	a[0].inst.offset = 123456; /* offsets are not in it */
	ck_assert(base == ctl_lag_print(a, 3));
	a[2].inst.lag_bytes = 14;
	ck_assert(base != ctl_lag_print(a, 3));
	a[2].inst.lag_bytes = 0;
	a[1].inst.lag_bytes = -1;
	a[0].inst.lag_bytes = 0;
	swapped = ctl_lag_print(a, 3);
	ck_assert(swapped != base); /* another pod is the one without a lag */
	ck_assert(ctl_lag_print(a, 2) != swapped);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("controller_status_write");
	TCase *t = tcase_create("all");

	tcase_add_test(t, a_changed_lag_waits_for_the_refresh_period);
	tcase_add_test(t, offsets_and_last_seen_alone_wait_ten_periods);
	tcase_add_test(t, lag_print_follows_every_lag);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)
