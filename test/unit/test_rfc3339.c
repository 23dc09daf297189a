/*
 * Unit tests for lib/rfc3339: the three precisions (truncating, never rounding), the
 * parser's one accepted form and what it refuses, and the round trip.
 */
#include <errno.h>
#include <string.h>

#include "lib/rfc3339.h"
#include "unit.h"

#define T 1795974083000LL /* 2026-11-29T17:41:23Z */

static const struct {
	int64_t ms;
	enum rfc3339_precision precision;
	const char *text;
} formats[] = {
	{ 0, RFC3339_SECONDS, "1970-01-01T00:00:00Z" },
	{ 0, RFC3339_MILLIS, "1970-01-01T00:00:00.000Z" },
	{ 0, RFC3339_MICROS, "1970-01-01T00:00:00.000000Z" },
	{ T + 123, RFC3339_SECONDS, "2026-11-29T17:41:23Z" },
	{ T + 123, RFC3339_MILLIS, "2026-11-29T17:41:23.123Z" },
	{ T + 123, RFC3339_MICROS, "2026-11-29T17:41:23.123000Z" },
	{ T + 999, RFC3339_SECONDS, "2026-11-29T17:41:23Z" }, /* truncated */
	{ T + 7, RFC3339_MILLIS, "2026-11-29T17:41:23.007Z" },
	{ 951868799000LL, RFC3339_SECONDS, "2000-02-29T23:59:59Z" },
	{ 1795977777999LL, RFC3339_SECONDS, "2026-11-29T18:42:57Z" },
};

START_TEST(format)
{
	char out[RFC3339_MAX];

	memset(out, '@', sizeof(out));
	rfc3339_format(formats[_i].ms, formats[_i].precision, out);
	ck_assert_str_eq(out, formats[_i].text);
}
END_TEST

static const struct {
	const char *text;
	int rc;
	int64_t ms;
} parses[] = {
	{ "2026-11-29T17:41:23Z", 0, T },
	{ "2026-11-29T17:41:23.5Z", 0, T + 500 },
	{ "2026-11-29T17:41:23.123456Z", 0, T + 123 }, /* MicroTime: milliseconds kept */
	{ "2026-11-29T17:41:23.123999Z", 0, T + 123 }, /* truncated, not rounded */
	{ "2026-11-29T17:41:23.Z", 0, T },             /* an empty fraction is taken as 0 */
	{ "1970-01-01T00:00:00Z", 0, 0 },
	{ "2000-02-29T23:59:59Z", 0, 951868799000LL },
	{ "2016-12-31T23:59:60Z", 0, 1483228800000LL }, /* a leap second: the next one */
	{ "2026-11-29 17:41:23Z", -EINVAL, 0 },
	{ "2026-11-29T17:41:23", -EINVAL, 0 },
	{ "2026-11-29T17:41:23z", -EINVAL, 0 },
	{ "2026-11-29T17:41:23Zjunk", -EINVAL, 0 },
	{ "2026-11-29T17:41:23+01:00", -EINVAL, 0 },
	{ "2026-13-29T17:41:23Z", -EINVAL, 0 },
	{ "2026-00-29T17:41:23Z", -EINVAL, 0 },
	{ "2026-11-32T17:41:23Z", -EINVAL, 0 },
	{ "2026-11-29T24:00:00Z", -EINVAL, 0 },
	{ "2026-11-29T17:60:00Z", -EINVAL, 0 },
	{ "2026-11-29T17:41:61Z", -EINVAL, 0 },
	{ "26-11-29T17:41:23Z", -EINVAL, 0 },
	{ "2026-1-29T17:41:23Z", -EINVAL, 0 },
	{ "2026", -EINVAL, 0 },
	{ "", -EINVAL, 0 },
};

START_TEST(parse)
{
	int64_t ms = -1;
	char back[RFC3339_MAX];

	ck_assert_msg(rfc3339_parse(parses[_i].text, &ms) == parses[_i].rc, "%s", parses[_i].text);
	if (parses[_i].rc) {
		ck_assert_int_eq(ms, -1); /* untouched */
		return;
	}
	ck_assert_int_eq(ms, parses[_i].ms);
	rfc3339_format(ms, RFC3339_SECONDS, back);
	if (!strstr(parses[_i].text, ":60Z"))
		ck_assert_int_eq(strncmp(back, parses[_i].text, 19), 0);
}
END_TEST

START_TEST(parse_null)
{
	int64_t ms = -1;

	ck_assert_int_eq(rfc3339_parse(NULL, &ms), -EINVAL);
	ck_assert_int_eq(ms, -1);
}
END_TEST

static Suite *rfc3339_suite(void)
{
	Suite *s = suite_create("rfc3339");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, format, 0, ARRAY_LEN(formats));
	tcase_add_loop_test(tc, parse, 0, ARRAY_LEN(parses));
	tcase_add_test(tc, parse_null);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(rfc3339_suite)
