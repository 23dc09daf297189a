/*
 * unit.h: the little that every Check test file shares.
 *   UNIT_MAIN(make_suite) defines main(): runs the suite in fork mode (CK_FORK=no to
 *   debug) and exits non-zero on any failure, printing Check's summary line.
 *   ARRAY_LEN(a) for the tables of cases.
 */
#ifndef REDIS_OPERATOR_TEST_UNIT_H
#define REDIS_OPERATOR_TEST_UNIT_H

#include <check.h>
#include <stdlib.h>

#include "lib/alloc.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Upper time bounds in tests are multiplied by $TEST_TIME_SCALE (default 1): under
 * valgrind everything runs ~10x slower, and a bound is about order, not speed. */
static inline long long unit_time_scale(void)
{
	const char *s = getenv("TEST_TIME_SCALE");
	long long v = s ? strtoll(s, NULL, 10) : 1;

	return v > 0 ? v : 1;
}

#define UNIT_MAIN(make_suite)                                                                      \
	int main(void)                                                                             \
	{                                                                                          \
		SRunner *sr;                                                                       \
		int failed;                                                                        \
		alloc_install_jansson();                                                           \
		sr = srunner_create(make_suite());                                                 \
		srunner_run_all(sr, CK_NORMAL);                                                    \
		failed = srunner_ntests_failed(sr);                                                \
		srunner_free(sr);                                                                  \
		return failed ? EXIT_FAILURE : EXIT_SUCCESS;                                       \
	}

#endif
