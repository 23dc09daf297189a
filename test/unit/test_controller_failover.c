/*
 * test_controller_failover: the table of phases of the failover state machine
 * (controller/failover.h) is whole and consistent: every phase persisted in
 * status.failover.phase has a row, an entry condition, a function, next phases that
 * exist, and its timeout; docs/failover.md has a row for each. (The transitions the code
 * writes are checked against the table on every planner case: test_controller_plan.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/failover.h"
#include "lib/alloc.h"
#include "lib/file.h"
#include "unit.h"

static const char *const persisted[] = { CTL_FO_FENCING, CTL_FO_PROMOTING, CTL_FO_SWITCHOVER,
	                                 CTL_FO_RESTART };

static const struct failover_phase *find(const char *name)
{
	size_t n;
	const struct failover_phase *t = failover_phases(&n);

	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

START_TEST(every_phase_has_a_row)
{
	size_t n;

	failover_phases(&n);
	ck_assert_uint_eq(n, ARRAY_LEN(persisted));
	for (size_t i = 0; i < ARRAY_LEN(persisted); i++) {
		const struct failover_phase *ph = find(persisted[i]);

		ck_assert_msg(ph, "no row for %s", persisted[i]);
		ck_assert(ph->run && ph->timeout_ms);
		ck_assert(ph->entered_when && *ph->entered_when && ph->action && *ph->action);
		ck_assert(ph->on_timeout && *ph->on_timeout);
	}
}
END_TEST

START_TEST(next_phases_exist)
{
	size_t n;
	const struct failover_phase *t = failover_phases(&n);

	for (size_t i = 0; i < n; i++) {
		ck_assert_ptr_nonnull(t[i].next[0]);
		for (size_t k = 0; t[i].next[k]; k++)
			ck_assert_msg(!*t[i].next[k] || find(t[i].next[k]), "%s -> %s", t[i].name,
			              t[i].next[k]);
	}
}
END_TEST

START_TEST(timeouts)
{
	struct api_redis_cluster rc = { 0 };
	struct ctl_config cfg = { .promote_timeout_ms = 30000, .restart_timeout_ms = 300000 };
	struct ctl_view v = { .rc = &rc, .cfg = &cfg };

	rc.spec.failover.switchover_timeout.ms = 10000;
	ck_assert_int_eq(find(CTL_FO_FENCING)->timeout_ms(&v), 5000); /* the catch-up bound */
	ck_assert_int_eq(find(CTL_FO_PROMOTING)->timeout_ms(&v), 30000);
	ck_assert_int_eq(find(CTL_FO_SWITCHOVER)->timeout_ms(&v), 3 * 10000 + 30000);
	ck_assert_int_eq(find(CTL_FO_RESTART)->timeout_ms(&v), 300000);
}
END_TEST

/* The page a newcomer reads names every phase in its table. */
START_TEST(documented)
{
	size_t n;
	const struct failover_phase *t = failover_phases(&n);
	char *doc = NULL, row[64];
	size_t len;

	ck_assert_int_eq(file_read_all("docs/failover.md", 1 << 20, &doc, &len, NULL), 0);
	for (size_t i = 0; i < n; i++) {
		snprintf(row, sizeof(row), "| `%s`", t[i].name);
		ck_assert_msg(strstr(doc, row), "docs/failover.md: no row %s", row);
	}
	free(doc);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("controller_failover");
	TCase *t = tcase_create("table");

	tcase_add_test(t, every_phase_has_a_row);
	tcase_add_test(t, next_phases_exist);
	tcase_add_test(t, timeouts);
	tcase_add_test(t, documented);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)
