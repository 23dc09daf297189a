/*
 * Unit tests for lib/tz: real zones from /usr/share/zoneinfo (tzdata) at their DST
 * transitions (Europe/Berlin 2026-03-29 and 2026-10-25, America/New_York, the southern
 * hemisphere, half- and quarter-hour offsets, v3 rules with negative hours), the far
 * future through the footer rule, gaps and overlaps, names that must be refused before
 * the file system is touched, damaged files, and a cross-check against glibc (in this
 * forked test process only, where setenv("TZ") harms nobody).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/file.h"
#include "lib/tz.h"
#include "unit.h"

static int64_t utc(int y, int mo, int d, int h, int mi, int s)
{
	return tz_from_civil(&(struct tz_civil){ y, mo, d, h, mi, s, 0 });
}

static struct tz *load(const char *name)
{
	struct tz *z = NULL;
	struct err e = { 0 };

	ck_assert_msg(tz_load(name, &z, &e) == 0, "%s: %s", name, e.msg);
	return z;
}

START_TEST(civil_round_trip)
{
	static const int64_t days[] = { -719468, -1, 0, 1, 11016, 20541, 47482, 2932896 };
	struct tz_civil c;

	for (size_t i = 0; i < ARRAY_LEN(days); i++) {
		int64_t s = days[i] * 86400 + 3723;

		tz_to_civil(s, &c);
		ck_assert_int_eq(tz_from_civil(&c), s);
		ck_assert_int_eq(c.hour * 10000 + c.min * 100 + c.sec, 10203);
	}
	tz_to_civil(utc(2026, 3, 29, 1, 0, 0), &c);
	ck_assert_int_eq(c.wday, 0); /* a Sunday */
	tz_to_civil(-86400, &c);
	ck_assert_int_eq(c.year * 10000 + c.mon * 100 + c.mday, 19691231);
	ck_assert_int_eq(c.wday, 3);
	ck_assert_int_eq(tz_days_in_month(2024, 2), 29);
	ck_assert_int_eq(tz_days_in_month(2100, 2), 28);
	ck_assert_int_eq(tz_days_in_month(2000, 2), 29);
	ck_assert_int_eq(utc(2100, 7, 7, 12, 0, 0), 4118644800);
}
END_TEST

static const struct {
	const char *zone;
	int64_t at;
	int32_t offset;
} offsets[] = {
	{ "Europe/Berlin", 1774745999, 3600 },      /* 2026-03-29T00:59:59Z, CET */
	{ "Europe/Berlin", 1774746000, 7200 },      /* 01:00:00Z, CEST */
	{ "Europe/Berlin", 1792889999, 7200 },      /* 2026-10-25T00:59:59Z */
	{ "Europe/Berlin", 1792890000, 3600 },      /* 01:00:00Z */
	{ "Europe/Berlin", 4118644800, 7200 },      /* 2100-07-07T12:00:00Z: the footer rule */
	{ "America/New_York", 1772953199, -18000 }, /* 2026-03-08T06:59:59Z, EST */
	{ "America/New_York", 1772953200, -14400 }, /* 07:00:00Z, EDT */
	{ "America/New_York", 1793512799, -14400 }, /* 2026-11-01T05:59:59Z */
	{ "America/New_York", 1793512800, -18000 },
	{ "Asia/Kolkata", 1774746000, 19800 },
	{ "UTC", 1774746000, 0 },
	{ "Etc/UTC", 1774746000, 0 },
	{ "Australia/Sydney", 1782907200, 36000 }, /* 2026-07-01T12:00:00Z, AEST */
	{ "Australia/Sydney", 1767268800, 39600 }, /* 2026-01-01T12:00:00Z, AEDT */
	{ "Pacific/Chatham", 1767268800, 49500 },  /* +13:45 */
	{ "America/Nuuk", 4118644800, -3600 },     /* v3 rule "M3.5.0/-1": summer 2100 */
};

START_TEST(offset)
{
	struct tz *z = load(offsets[_i].zone);

	ck_assert_int_eq(tz_offset(z, offsets[_i].at), offsets[_i].offset);
	ck_assert_int_eq(tz_to_local(z, offsets[_i].at), offsets[_i].at + offsets[_i].offset);
	tz_free(z);
}
END_TEST

static const struct {
	const char *zone;
	int64_t local; /* as utc(...) */
	int rc;
	int64_t instant;
} instants[] = {
	/* Berlin 2026-03-29: 02:00-02:59 does not exist; the gap ends at 01:00Z (03:00 CEST) */
	{ "Europe/Berlin", 1774751400 /* 02:30 */, 1, 1774746000 },
	{ "Europe/Berlin", 1774749600 /* 02:00 */, 1, 1774746000 },
	{ "Europe/Berlin", 1774753200 /* 03:00 */, 0, 1774746000 },
	{ "Europe/Berlin", 1774749599 /* 01:59:59 */, 0, 1774745999 },
	/* Berlin 2026-10-25: 02:00-02:59 twice; the first is CEST (00:30Z for 02:30) */
	{ "Europe/Berlin", 1792895400 /* 02:30 */, 0, 1792888200 },
	{ "Europe/Berlin", 1792899000 /* 03:30 */, 0, 1792895400 },
	{ "Europe/Berlin", 1792893600 /* 02:00 */, 0, 1792886400 },
	/* New York 2026-03-08 02:30 does not exist: 07:00Z; 2026-11-01 01:30 twice: EDT */
	{ "America/New_York", 1772937000, 1, 1772953200 },
	{ "America/New_York", 1793496600, 0, 1793511000 },
	{ "Asia/Kolkata", 1774751400, 0, 1774751400 - 19800 },
	{ "UTC", 1774751400, 0, 1774751400 },
};

START_TEST(first_instant)
{
	struct tz *z = load(instants[_i].zone);
	int64_t u = -1;

	ck_assert_int_eq(tz_first_instant(z, instants[_i].local, &u), instants[_i].rc);
	ck_assert_int_eq(u, instants[_i].instant);
	tz_free(z);
}
END_TEST

static const struct {
	const char *name;
	int rc;
} names[] = {
	{ "Europe/Berlin", 0 },
	{ "America/Argentina/Buenos_Aires", 0 },
	{ "Etc/GMT+5", 0 },
	{ "UTC", 0 },
	{ "", -EINVAL },
	{ NULL, -EINVAL },
	{ "../../etc/passwd", -EINVAL },
	{ "Europe/../../../etc/passwd", -EINVAL },
	{ "/etc/passwd", -EINVAL },
	{ "/usr/share/zoneinfo/UTC", -EINVAL },
	{ "Europe//Berlin", -EINVAL },
	{ "Europe/", -EINVAL },
	{ "Europe/Berlin ", -EINVAL },
	{ ".hidden", -EINVAL },
	{ "zone.tab", -EINVAL },
	{ "-Europe", -EINVAL },
	{ "a/b/c/d", -EINVAL },
	{ "Nowhere/Atlantis", -ENOENT },
	{ "Europe", -ENOENT }, /* a directory */
	{ "utc", -ENOENT },
	{ "right", -ENOENT },
};

START_TEST(name)
{
	struct tz *z = (struct tz *)1;
	struct err e = { 0 };
	int rc = tz_load(names[_i].name, &z, &e);

	ck_assert_msg(rc == names[_i].rc, "%s: %d (%s)", names[_i].name ? names[_i].name : "NULL",
	              rc, e.msg);
	if (rc == 0) {
		ck_assert_str_eq(tz_name(z), names[_i].name);
		tz_free(z);
	} else {
		ck_assert_ptr_eq(z, (struct tz *)1); /* untouched */
		ck_assert_ptr_nonnull(strstr(e.msg, "time zone"));
	}
}
END_TEST

/* A v1 file with one type (+01:00, no transitions), then damaged copies. */
START_TEST(parse_v1_and_damage)
{
	unsigned char f[44 + 6 + 4] = { 'T', 'Z', 'i', 'f', 0 };
	struct tz *z = NULL;
	struct err e = { 0 };

	f[39] = 1;                          /* typecnt */
	f[43] = 4;                          /* charcnt */
	f[44 + 2] = 0x0e, f[44 + 3] = 0x10; /* utoff 3600 */
	memcpy(f + 50, "ONE", 4);
	ck_assert_int_eq(tz_parse("Test/One", f, sizeof(f), &z, &e), 0);
	ck_assert_int_eq(tz_offset(z, 0), 3600);
	tz_free(z);

	ck_assert_int_eq(tz_parse("Test/One", f, sizeof(f) - 1, &z, &e), -EINVAL);
	f[0] = 'X';
	ck_assert_int_eq(tz_parse("Test/One", f, sizeof(f), &z, &e), -EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "not a TZif file"));
	f[0] = 'T';
	f[39] = 0; /* no type */
	ck_assert_int_eq(tz_parse("Test/One", f, sizeof(f), &z, &e), -EINVAL);
	ck_assert_int_eq(tz_parse("../x", f, sizeof(f), &z, &e), -EINVAL);
}
END_TEST

/* A real v2 file with its footer replaced. */
START_TEST(footers)
{
	static const struct {
		const char *footer;
		int rc;
	} cases[] = {
		{ "CET-1CEST,M3.5.0,M10.5.0/3", 0 },
		{ "<+0330>-3:30", 0 },
		{ "<-02>2<-01>,M3.5.0/-1,M10.5.0/0", 0 },
		{ "EST5EDT", 0 },
		{ "", 0 },
		{ "AB-1", -EINVAL },
		{ "CET-25", -EINVAL },
		{ "CET-1CEST,M13.5.0,M10.5.0", -EINVAL },
		{ "CET-1CEST,M3.5.0", -EINVAL },
		{ "CET-1CEST,M3.5.0/168,M10.5.0", -EINVAL },
		{ "CET-1CEST,J0,J365", -EINVAL },
		{ "CET-1:5", -EINVAL },
		{ "<+01-1", -EINVAL },
	};
	char *data = NULL;
	size_t len = 0;
	struct err e = { 0 };

	ck_assert_int_eq(
	        file_read_all(TZ_ZONEINFO_DIR "/Europe/Berlin", TZ_FILE_MAX, &data, &len, &e), 0);
	/* The footer is the last line: cut it and append each case. */
	ck_assert_int_eq(data[len - 1], '\n');
	len--;
	while (data[len - 1] != '\n')
		len--;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		size_t n = strlen(cases[i].footer);
		unsigned char *f = xmalloc(len + n + 1);
		struct tz *z = NULL;

		memcpy(f, data, len);
		memcpy(f + len, cases[i].footer, n);
		f[len + n] = '\n';
		ck_assert_msg(tz_parse("Test/Footer", f, len + n + 1, &z, &e) == cases[i].rc, "%s",
		              cases[i].footer);
		if (z && strcmp(cases[i].footer, "<+0330>-3:30") == 0)
			ck_assert_int_eq(tz_offset(z, 4118644800), 12600);
		tz_free(z);
		free(f);
	}
	free(data);
}
END_TEST

/* Every 7 hours from 1901 to 2120 in each zone: the same offset as glibc's localtime_r. */
START_TEST(same_as_glibc)
{
	static const char *const zones[] = {
		"Europe/Berlin", "America/New_York",  "Australia/Sydney",    "Asia/Kolkata",
		"America/Nuuk",  "Pacific/Chatham",   "Australia/Lord_Howe", "America/Sao_Paulo",
		"Europe/Dublin", "Africa/Casablanca", "Asia/Tehran",         "America/St_Johns",
	};
	struct tz *z = load(zones[_i]);

	setenv("TZ", zones[_i], 1);
	tzset();
	for (int64_t t = -2145916800; t < 4733510400; t += 7 * 3600 + 13) {
		time_t tt = (time_t)t;
		struct tm tm;

		ck_assert_ptr_nonnull(localtime_r(&tt, &tm));
		ck_assert_msg(tz_offset(z, t) == tm.tm_gmtoff, "%s at %lld: %d, glibc %ld",
		              zones[_i], (long long)t, tz_offset(z, t), tm.tm_gmtoff);
	}
	tz_free(z);
}
END_TEST

static Suite *tz_suite(void)
{
	Suite *s = suite_create("tz");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, civil_round_trip);
	tcase_add_loop_test(tc, offset, 0, ARRAY_LEN(offsets));
	tcase_add_loop_test(tc, first_instant, 0, ARRAY_LEN(instants));
	tcase_add_loop_test(tc, name, 0, ARRAY_LEN(names));
	tcase_add_test(tc, parse_v1_and_damage);
	tcase_add_test(tc, footers);
	tcase_add_loop_test(tc, same_as_glibc, 0, 12);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(tz_suite)
