/*
 * Unit tests for lib/cron: what the parser accepts (bit masks, names, steps, macros,
 * @every) and refuses (each error names its field and reason), fire times in UTC and in
 * real zones across DST (Europe/Berlin 2026-03-29 and 2026-10-25, America/New_York,
 * Asia/Kolkata), the Vixie day-of-month/day-of-week rule, schedules that never fire, and
 * cron_latest against cron_next over a year of fire times.
 */
#include <errno.h>
#include <string.h>

#include "lib/cron.h"
#include "lib/tz.h"
#include "unit.h"

#define ALL_MINUTES ((UINT64_C(1) << 60) - 1)
#define ALL_DOM     (UINT32_C(0xfffffffe))
#define ALL_MONTHS  ((uint16_t)0x1ffe)
#define ALL_DOW     ((uint8_t)0x7f)

static int64_t utc(int y, int mo, int d, int h, int mi)
{
	return tz_from_civil(&(struct tz_civil){ y, mo, d, h, mi, 0, 0 });
}

static struct tz *zone(const char *name)
{
	struct tz *z = NULL;
	struct err e = { 0 };

	ck_assert_msg(tz_load(name, &z, &e) == 0, "%s", e.msg);
	return z;
}

static const struct {
	const char *expr;
	struct cron want;
} parses[] = {
	{ "0 3 * * *", { 1, 1 << 3, ALL_DOM, ALL_MONTHS, ALL_DOW, true, true, 0 } },
	{ "*/15 9-17 * * MON-FRI",
	  { 1 | 1 << 15 | UINT64_C(1) << 30 | UINT64_C(1) << 45, 0x3fe00, ALL_DOM, ALL_MONTHS, 0x3e,
	    true, false, 0 } },
	{ "5/20 * * * *",
	  { UINT64_C(1) << 5 | UINT64_C(1) << 25 | UINT64_C(1) << 45, 0xffffff, ALL_DOM, ALL_MONTHS,
	    ALL_DOW, true, true, 0 } },
	{ "0 0 1,15 JAN,jul *",
	  { 1, 1, 1 << 1 | 1 << 15, 1 << 1 | 1 << 7, ALL_DOW, false, true, 0 } },
	{ "0 0 * * 7", { 1, 1, ALL_DOM, ALL_MONTHS, 1, true, false, 0 } },
	{ "0 0 * * 5-7", { 1, 1, ALL_DOM, ALL_MONTHS, 0x61, true, false, 0 } },
	{ "0\t0  * *\tsun ", { 1, 1, ALL_DOM, ALL_MONTHS, 1, true, false, 0 } },
	{ "00 07 01-02 * *", { 1, 1 << 7, 6, ALL_MONTHS, ALL_DOW, false, true, 0 } },
	{ "59 23 31 12 6",
	  { UINT64_C(1) << 59, 1 << 23, UINT32_C(1) << 31, 1 << 12, 1 << 6, false, false, 0 } },
	{ "* * * * *", { ALL_MINUTES, 0xffffff, ALL_DOM, ALL_MONTHS, ALL_DOW, true, true, 0 } },
	{ "@weekly", { 1, 1, ALL_DOM, ALL_MONTHS, 1, true, false, 0 } },
	{ "@monthly", { 1, 1, 1 << 1, ALL_MONTHS, ALL_DOW, false, true, 0 } },
	{ "@yearly", { 1, 1, 1 << 1, 1 << 1, ALL_DOW, false, true, 0 } },
	{ "@annually", { 1, 1, 1 << 1, 1 << 1, ALL_DOW, false, true, 0 } },
	{ "@daily", { 1, 1, ALL_DOM, ALL_MONTHS, ALL_DOW, true, true, 0 } },
	{ "@midnight", { 1, 1, ALL_DOM, ALL_MONTHS, ALL_DOW, true, true, 0 } },
	{ "@hourly", { 1, 0xffffff, ALL_DOM, ALL_MONTHS, ALL_DOW, true, true, 0 } },
	{ "@every 1h30m", { .every_s = 5400 } },
	{ "@every 1m", { .every_s = 60 } },
};

START_TEST(parse_ok)
{
	struct cron c;
	struct err e = { 0 };

	ck_assert_msg(cron_parse(parses[_i].expr, &c, &e) == 0, "%s: %s", parses[_i].expr, e.msg);
	ck_assert_msg(c.minute == parses[_i].want.minute, "%s: minute", parses[_i].expr);
	ck_assert_msg(c.hour == parses[_i].want.hour, "%s: hour %x", parses[_i].expr, c.hour);
	ck_assert_msg(c.dom == parses[_i].want.dom, "%s: dom %x", parses[_i].expr, c.dom);
	ck_assert_msg(c.month == parses[_i].want.month, "%s: month", parses[_i].expr);
	ck_assert_msg(c.dow == parses[_i].want.dow, "%s: dow %x", parses[_i].expr, c.dow);
	ck_assert_int_eq(c.dom_star, parses[_i].want.dom_star);
	ck_assert_int_eq(c.dow_star, parses[_i].want.dow_star);
	ck_assert_int_eq(c.every_s, parses[_i].want.every_s);
	ck_assert_int_eq(cron_is_interval(&c), parses[_i].want.every_s > 0);
}
END_TEST

static const struct {
	const char *expr, *msg;
} refusals[] = {
	{ "61 * * * *", "minute: 61 is out of range 0-59" },
	{ "0 24 * * *", "hour: 24 is out of range 0-23" },
	{ "0 0 0 * *", "day-of-month: 0 is out of range 1-31" },
	{ "0 0 32 * *", "day-of-month: 32 is out of range 1-31" },
	{ "0 0 * 13 *", "month: 13 is out of range 1-12" },
	{ "0 0 * * 8", "day-of-week: 8 is out of range 0-7" },
	{ "001 * * * *", "minute: 001 is out of range 0-59" },
	{ "0 0 * * FUN", "day-of-week: unknown name \"FUN\"" },
	{ "0 0 * FOO *", "month: unknown name \"FOO\"" },
	{ "0 0 * * MONDAY", "day-of-week: unexpected \"DAY\"" },
	{ "0 0 * * FRI-MON", "day-of-week: range 5-1 runs backwards" },
	{ "30-10 * * * *", "minute: range 30-10 runs backwards" },
	{ "*/0 * * * *", "minute: a step must be 1-99" },
	{ "*/100 * * * *", "minute: a step must be 1-99" },
	{ "*/ * * * *", "minute: a step must be 1-99" },
	{ "MON * * * *", "minute: expected a number at \"MON\"" },
	{ "1- * * * *", "minute: expected a number at \"\"" },
	{ "1-2-3 * * * *", "minute: unexpected \"-3\"" },
	{ "1,,2 * * * *", "minute: empty list item" },
	{ "1, * * * *", "minute: empty list item" },
	{ "0 3 * * * *", "expected 5 fields (minute hour day-of-month month day-of-week), got more "
	                 "than 5" },
	{ "0 3 *", "got 3" },
	{ "   ", "got 0" },
	{ "", "schedule: must be 1 to 128 characters" },
	{ NULL, "schedule: must be 1 to 128 characters" },
	{ "@reboot", "unknown macro \"@reboot\"" },
	{ "@Daily", "unknown macro \"@Daily\"" },
	{ "@every 30s", "@every: 30s is shorter than 60s" },
	{ "@every", "unknown macro" },
	{ "@every soon", "@every: " },
	{ "?/5 * * * *", "minute: expected a number at \"?/5\"" },
};

START_TEST(parse_refused)
{
	struct cron c = { .every_s = 42 };
	struct err e = { 0 };

	ck_assert_int_eq(cron_parse(refusals[_i].expr, &c, &e), -EINVAL);
	ck_assert_msg(strstr(e.msg, refusals[_i].msg), "%s: got \"%s\"", refusals[_i].expr, e.msg);
	ck_assert_int_eq(c.every_s, 42); /* untouched */
}
END_TEST

START_TEST(parse_too_long)
{
	char s[CRON_MAX_LEN + 2];
	struct cron c;

	memset(s, ' ', sizeof(s) - 1);
	s[sizeof(s) - 1] = '\0';
	memcpy(s, "0 3 * * *", 9);
	ck_assert_int_eq(cron_parse(s, &c, NULL), -EINVAL);
	s[CRON_MAX_LEN] = '\0';
	ck_assert_int_eq(cron_parse(s, &c, NULL), 0);
}
END_TEST

static const struct {
	const char *zone, *expr;
	int64_t after;
	int rc;
	int64_t next;
} nexts[] = {
	{ "UTC", "0 3 * * *", 1767225600 /* 2026-01-01 */, 0, 1767225600 + 3 * 3600 },
	{ "UTC", "0 3 * * *", 1767225600 + 3 * 3600, 0, 1767225600 + 27 * 3600 },
	{ "UTC", "0 3 * * *", 1767225600 + 3 * 3600 - 1, 0, 1767225600 + 3 * 3600 },
	{ "UTC", "*/15 * * * *", 1767225600 + 450, 0, 1767225600 + 900 },
	{ "UTC", "* * * * *", 1767225600 + 30, 0, 1767225600 + 60 },
	/* Vixie: both restricted, so the 15th OR a Friday (2026-03-13 is a Friday) */
	{ "UTC", "0 0 15 * FRI", 1772841600 /* 03-07 */, 0, 1773360000 /* 03-13 */ },
	{ "UTC", "0 0 15 * FRI", 1773360000, 0, 1773532800 /* 03-15, a Sunday */ },
	/* a stepped star is unrestricted: odd days AND Fridays */
	{ "UTC", "0 0 */2 * FRI", 1772323200 /* 03-01 */, 0, 1773360000 /* 03-13 */ },
	{ "UTC", "0 0 */2 * FRI", 1773360000, 0, 1774569600 /* 03-27 */ },
	{ "UTC", "0 0 29 2 *", 1772323200, 0, 1835395200 /* 2028-02-29 */ },
	{ "UTC", "0 0 29 2 *", 4107542400 /* 2100-03-01 */, 0, 4233686400 /* 2104-02-29 */ },
	{ "UTC", "0 0 30 2 *", 1772323200, -ENOENT, 0 },
	{ "UTC", "0 0 31 4,6,9,11 *", 1772323200, -ENOENT, 0 },
	{ "UTC", "@yearly", 1780272000 /* 2026-06-01 */, 0, 1798761600 /* 2027-01-01 */ },
	{ "UTC", "@every 2h", 1767225600 + 17, 0, 1767225600 + 17 + 7200 },
	/* Berlin 2026-03-29: 02:30 does not exist; it fires at 03:00 CEST (01:00Z) */
	{ "Europe/Berlin", "30 2 * * *", 1774663200 /* 03-28 02:00Z */, 0, 1774746000 },
	{ "Europe/Berlin", "30 2 * * *", 1774746000, 0, 1774830600 /* 03-30 00:30Z */ },
	{ "Europe/Berlin", "*/15 2 * * *", 1774738800 /* 03-28 23:00Z */, 0, 1774746000 },
	{ "Europe/Berlin", "*/15 2 * * *", 1774746000, 0, 1774828800 /* 03-30 00:00Z */ },
	/* Berlin 2026-10-25: 02:00-02:59 twice; each wall-clock time fires once, the first */
	{ "Europe/Berlin", "30 2 * * *", 1792843200 /* 10-24 12:00Z */, 0, 1792888200 },
	{ "Europe/Berlin", "30 2 * * *", 1792888200, 0, 1792978200 /* 10-26 01:30Z */ },
	{ "Europe/Berlin", "*/30 2 * * *", 1792888200, 0, 1792976400 /* 10-26 01:00Z */ },
	{ "Europe/Berlin", "0 * * * *", 1792886400 /* 02:00 CEST */, 0, 1792893600 /* 03:00 */ },
	{ "Europe/Berlin", "0 3 * * *", 1792886400, 0, 1792893600 /* 03:00 CET, 02:00Z */ },
	/* New York 2026-03-08 02:00 does not exist: 03:00 EDT (07:00Z) */
	{ "America/New_York", "0 2 * * *", 1772928000 /* 03-08 00:00Z */, 0, 1772953200 },
	{ "America/New_York", "0 2 * * *", 1772953200, 0, 1773036000 /* 03-09 06:00Z */ },
	{ "Asia/Kolkata", "0 9 * * *", 1767225600, 0, 1767225600 + 3 * 3600 + 1800 },
	{ "Asia/Kolkata", "0 9 * * *", 1767238200, 0, 1767238200 + 86400 },
};

START_TEST(next)
{
	struct tz *z = zone(nexts[_i].zone);
	struct cron c;
	int64_t t = -1;

	ck_assert_int_eq(cron_parse(nexts[_i].expr, &c, NULL), 0);
	ck_assert_int_eq(cron_next(&c, z, nexts[_i].after, &t), nexts[_i].rc);
	if (nexts[_i].rc == 0)
		ck_assert_msg(t == nexts[_i].next, "%s in %s after %lld: %lld, want %lld",
		              nexts[_i].expr, nexts[_i].zone, (long long)nexts[_i].after,
		              (long long)t, (long long)nexts[_i].next);
	tz_free(z);
}
END_TEST

static const struct {
	const char *zone, *expr;
	int64_t after, at;
	int rc;
	int64_t latest;
} latests[] = {
	/* down from 01-01 03:00 to 01-05 12:00: one run to catch up, 01-05 03:00 */
	{ "UTC", "0 3 * * *", 1767236400, 1767614400, 0, 1767582000 },
	{ "UTC", "0 3 * * *", 1767582000, 1767614400, -ENOENT, 0 },
	{ "UTC", "0 3 * * *", 1767582000, 1767668400, 0, 1767668400 }, /* at is included */
	{ "UTC", "0 3 * * *", 1767582000, 1767668399, -ENOENT, 0 },
	{ "UTC", "0 0 30 2 *", 0, 1767668400, -ENOENT, 0 },
	/* at 02:10 CET, the second pass: 02:30 fired at 00:30Z, in the first */
	{ "Europe/Berlin", "30 2 * * *", 1792843200, 1792890600, 0, 1792888200 },
	{ "Europe/Berlin", "30 2 * * *", 1792888200, 1792895400, -ENOENT, 0 },
	/* the gap's run is at its end */
	{ "Europe/Berlin", "30 2 * * *", 1774661400, 1774746000, 0, 1774746000 },
	{ "Europe/Berlin", "30 2 * * *", 1774661400, 1774745999, -ENOENT, 0 },
	{ "UTC", "@every 1h", 1000, 1000 + 3 * 3600 + 5, 0, 1000 + 3 * 3600 },
	{ "UTC", "@every 1h", 1000, 1000 + 3599, -ENOENT, 0 },
};

START_TEST(latest)
{
	struct tz *z = zone(latests[_i].zone);
	struct cron c;
	int64_t t = -1;

	ck_assert_int_eq(cron_parse(latests[_i].expr, &c, NULL), 0);
	ck_assert_int_eq(cron_latest(&c, z, latests[_i].after, latests[_i].at, &t), latests[_i].rc);
	if (latests[_i].rc == 0)
		ck_assert_msg(t == latests[_i].latest, "%s: %lld, want %lld", latests[_i].expr,
		              (long long)t, (long long)latests[_i].latest);
	tz_free(z);
}
END_TEST

/* A year of fire times in each zone: increasing, and cron_latest agrees with cron_next. */
START_TEST(next_and_latest_agree)
{
	static const char *const exprs[] = { "30 2 * * *", "*/20 1-3 * * *", "0 0 13 * FRI",
		                             "15 */6 * * SUN", "0 * * * *" };
	static const char *const zones[] = { "Europe/Berlin", "America/New_York",
		                             "Australia/Lord_Howe", "UTC" };
	struct tz *z = zone(zones[_i]);

	for (size_t x = 0; x < ARRAY_LEN(exprs); x++) {
		struct cron c;
		int64_t prev = utc(2026, 1, 1, 0, 0), t, l;

		ck_assert_int_eq(cron_parse(exprs[x], &c, NULL), 0);
		while (prev < utc(2027, 1, 1, 0, 0)) {
			ck_assert_int_eq(cron_next(&c, z, prev, &t), 0);
			ck_assert_int_gt(t, prev);
			ck_assert_int_eq(cron_latest(&c, z, prev, t, &l), 0);
			ck_assert_msg(l == t, "%s in %s: latest %lld, next %lld", exprs[x],
			              zones[_i], (long long)l, (long long)t);
			ck_assert_int_eq(cron_latest(&c, z, prev, t - 1, &l), -ENOENT);
			prev = t;
		}
	}
	tz_free(z);
}
END_TEST

static Suite *cron_suite(void)
{
	Suite *s = suite_create("cron");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, parse_ok, 0, ARRAY_LEN(parses));
	tcase_add_loop_test(tc, parse_refused, 0, ARRAY_LEN(refusals));
	tcase_add_test(tc, parse_too_long);
	tcase_add_loop_test(tc, next, 0, ARRAY_LEN(nexts));
	tcase_add_loop_test(tc, latest, 0, ARRAY_LEN(latests));
	tcase_add_loop_test(tc, next_and_latest_agree, 0, 4);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(cron_suite)
