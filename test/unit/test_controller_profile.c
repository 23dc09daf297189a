/* Unit tests for controller/profile: which row a workload picks, and settings winning. */
#include <string.h>

#include "controller/profile.h"
#include "unit.h"

START_TEST(pick_by_either_count)
{
	static const struct {
		size_t clusters, pods;
		const char *want;
	} cases[] = {
		{ 0, 0, "small" },     { 50, 200, "small" },        { 51, 3, "medium" },
		{ 10, 201, "medium" }, { 300, 1200, "medium" },     { 301, 0, "large" },
		{ 5, 1201, "large" },  { 100000, 300000, "large" },
	};

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		const struct ctl_profile *p = ctl_profile_pick(cases[i].clusters, cases[i].pods);

		ck_assert_msg(strcmp(p->name, cases[i].want) == 0, "%zu clusters, %zu pods: %s",
		              cases[i].clusters, cases[i].pods, p->name);
	}
}
END_TEST

START_TEST(small_keeps_the_old_defaults)
{
	const struct ctl_profile *p = ctl_profile_pick(1, 3);

	ck_assert_int_eq(p->workers, 4);
	ck_assert_int_eq(p->qps, 50);
	ck_assert_int_eq(p->burst, 100);
}
END_TEST

START_TEST(rows_grow)
{
	const struct ctl_profile *s = ctl_profile_pick(0, 0), *m = ctl_profile_pick(60, 0),
	                         *l = ctl_profile_pick(400, 0);

	ck_assert(s->workers < m->workers && m->workers < l->workers);
	ck_assert(s->qps < m->qps && m->qps < l->qps);
	ck_assert(s->burst < m->burst && m->burst < l->burst);
}
END_TEST

START_TEST(settings_win)
{
	const struct ctl_profile *l = ctl_profile_pick(1000, 3000);
	struct ctl_tunables t;

	ctl_profile_tunables(l, 0, 0, 0, &t);
	ck_assert_int_eq(t.workers, 16);
	ck_assert(t.qps == 200);
	ck_assert_int_eq(t.burst, 400);
	ck_assert_uint_eq(t.given, 0);
	ck_assert_ptr_eq(t.profile, l);

	ctl_profile_tunables(l, 2, 0, 7, &t);
	ck_assert_int_eq(t.workers, 2);
	ck_assert(t.qps == 200);
	ck_assert_int_eq(t.burst, 7);
	ck_assert_uint_eq(t.given, CTL_TUNABLE_WORKERS | CTL_TUNABLE_BURST);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("controller_profile");
	TCase *tc = tcase_create("profile");

	tcase_add_test(tc, pick_by_either_count);
	tcase_add_test(tc, small_keeps_the_old_defaults);
	tcase_add_test(tc, rows_grow);
	tcase_add_test(tc, settings_win);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_suite)
