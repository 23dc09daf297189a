/*
 * Unit tests for api/cel: the API server's duration, quantity, CIDR and regexp semantics
 * and Go's message formatting, table by table. Expected values come from the Go sources
 * the functions follow (time.ParseDuration, resource.ParseQuantity and Quantity.Cmp,
 * netip.ParsePrefix, regexp, strconv.Quote, fmt %v); the edge cases that decide verdicts
 * were also run through a v1.37 API server (test/data/api/cases).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/cel.h"
#include "lib/buf.h"
#include "unit.h"

#define S 1000000000LL

static const struct {
	const char *text;
	int rc;
	int64_t ns;
} durations[] = {
	{ "0", 0, 0 },
	{ "-0", 0, 0 },
	{ "1s", 0, S },
	{ "+1s", 0, S },
	{ "-1s", 0, -S },
	{ "500ms", 0, S / 2 },
	{ "1m30.5s", 0, 90 * S + S / 2 },
	{ "1h2m3s", 0, 3723 * S },
	{ "2ns", 0, 2 },
	{ "3us", 0, 3000 },
	{ "1.5\xc2\xb5s", 0, 1500 }, /* micro sign */
	{ "1.5\xce\xbcs", 0, 1500 }, /* Greek mu */
	{ ".5s", 0, S / 2 },
	{ "1.s", 0, S },
	{ "0.9999999999s", 0, S - 1 },         /* the tenth digit is dropped */
	{ "0.99999999999999999s", 0, S },      /* float64 rounds the fraction up */
	{ "0.99999999999999999m", 0, 60 * S }, /* so does the 1m check, as on the server */
	{ "2562047h47m16.854775807s", 0, INT64_MAX },
	{ "-2562047h47m16.854775808s", 0, INT64_MIN },
	{ "2562047h47m16.854775808s", -ERANGE, 0 },
	{ "99999999999h", -ERANGE, 0 },
	{ "9223372036854775808ns", -ERANGE, 0 },
	{ "99999999999999999999s", -ERANGE, 0 },
	{ "", -EINVAL, 0 },
	{ "1", -EINVAL, 0 },
	{ "s", -EINVAL, 0 },
	{ ".s", -EINVAL, 0 },
	{ "1x", -EINVAL, 0 },
	{ "1d", -EINVAL, 0 },
	{ "1s ", -EINVAL, 0 },
	{ " 1s", -EINVAL, 0 },
	{ "1..5s", -EINVAL, 0 },
	{ "--1s", -EINVAL, 0 },
};

START_TEST(duration)
{
	int64_t ns = 12345;
	int rc = api_cel_duration_ns(durations[_i].text, &ns);

	ck_assert_msg(rc == durations[_i].rc, "\"%s\": rc %d", durations[_i].text, rc);
	if (rc == 0)
		ck_assert_msg(ns == durations[_i].ns, "\"%s\": %lld ns", durations[_i].text,
		              (long long)ns);
}
END_TEST

static const struct {
	const char *text;
	int rc;
	const char *value; /* "[-]digits e exp10" */
} quantities[] = {
	{ "0", 0, "e0" },
	{ "1Gi", 0, "1073741824e0" },
	{ "1024Mi", 0, "1073741824e0" },
	{ "1.5Gi", 0, "1610612736e0" },
	{ "1.5", 0, "15e-1" },
	{ "1500m", 0, "15e-1" },
	{ "100m", 0, "1e-1" },
	{ "1e3", 0, "1e3" },
	{ "1E3", 0, "1e3" },
	{ "1e+3", 0, "1e3" },
	{ "1e-3", 0, "1e-3" },
	{ "1E", 0, "1e18" },
	{ "-5k", 0, "-5e3" },
	{ "+5k", 0, "5e3" },
	{ "007", 0, "7e0" },
	{ "-", 0, "e0" }, /* a lone sign is 0 */
	{ ".", 0, "e0" }, /* so is a lone dot */
	{ "1.", 0, "1e0" },
	{ "1.G", 0, "1e9" },
	{ ".5Ki", 0, "512e0" },
	{ "0.0000000001", 0, "1e-9" }, /* rounded up to a nanounit */
	{ "-0.0000000001", 0, "-1e-9" },
	{ "1.0000000001", 0, "1000000001e-9" },
	{ "1e-20", 0, "1e-9" },
	{ "0e-20", 0, "e0" },
	{ "8Ei", 0, "9223372036854775807e0" },  /* 2^63: capped */
	{ "16Ei", 0, "9223372036854775807e0" }, /* capped too */
	{ "7Ei", 0, "8070450532247928832e0" },
	{ "-16Ei", 0, "-9223372036854775807e0" },
	{ "1e2000", 0, "1e2000" },     /* decimal quantities are not capped */
	{ "1e4294967297", 0, "1e1" },  /* the exponent is truncated to int32 */
	{ "1e2147483648", 0, "1e-9" }, /* int32 wraps to -2^31: 1n */
	{ "", -EINVAL, NULL },
	{ "1e", -EINVAL, NULL },
	{ "1K", -EINVAL, NULL },
	{ "1ki", -EINVAL, NULL },
	{ "1Gb", -EINVAL, NULL },
	{ "256mb", -EINVAL, NULL },
	{ "lots", -EINVAL, NULL },
	{ "1 Gi", -EINVAL, NULL },
	{ "1.2.3", -EINVAL, NULL },
	{ ".e-20", -EINVAL, NULL }, /* inf.Dec wants a digit past 10^-9 */
	{ "-e-10", -EINVAL, NULL },
	{ ".e-9", 0, "e0" },
	{ "1e99999999999999999999", -EINVAL, NULL },
	{ "1e+", -EINVAL, NULL },
	{ "1e3e3", -EINVAL, NULL },
	{ "1Ki3", -EINVAL, NULL },
	{ "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
	  "0"
	  "000000000000000000000000000000000000000000000000001",
	  -E2BIG, NULL },
};

START_TEST(quantity)
{
	struct api_cel_quantity q;
	char got[256];
	int rc = api_cel_quantity_parse(quantities[_i].text, &q);

	ck_assert_msg(rc == quantities[_i].rc, "\"%s\": rc %d", quantities[_i].text, rc);
	if (rc)
		return;
	snprintf(got, sizeof(got), "%s%se%lld", q.negative ? "-" : "", q.digits,
	         (long long)q.exp10);
	ck_assert_msg(strcmp(got, quantities[_i].value) == 0, "\"%s\": %s", quantities[_i].text,
	              got);
}
END_TEST

static const struct {
	const char *a, *b;
	int cmp;
} comparisons[] = {
	{ "1Gi", "1024Mi", 0 },
	{ "1Gi", "1000Mi", 1 },
	{ "1G", "1Gi", -1 },
	{ "512Ki", "1Mi", -1 },
	{ "1048576", "1Mi", 0 },
	{ "-1", "0", -1 },
	{ "-2", "-1", -1 },
	{ "0", "-0", 0 },
	{ "1e2000", "1e1999", 1 },
	{ "8Ei", "16Ei", 0 },
	{ "1e30", "1e31", -1 },
	{ "100m", "0.1", 0 },
	{ "1048575.9999999999", "1Mi", 0 },
	{ "1048575.999999999", "1Mi", -1 },
	{ "0.0000000001", "0", 1 },
	{ "1.5Gi", "1536Mi", 0 },
	{ "9223372036854775807", "8Ei", 0 },
};

START_TEST(quantity_cmp)
{
	struct api_cel_quantity a, b;

	ck_assert_int_eq(api_cel_quantity_parse(comparisons[_i].a, &a), 0);
	ck_assert_int_eq(api_cel_quantity_parse(comparisons[_i].b, &b), 0);
	ck_assert_msg(api_cel_quantity_cmp(&a, &b) == comparisons[_i].cmp, "%s vs %s",
	              comparisons[_i].a, comparisons[_i].b);
	ck_assert_int_eq(api_cel_quantity_cmp(&b, &a), -comparisons[_i].cmp);
}
END_TEST

static const struct {
	const char *text;
	bool cidr;
} cidrs[] = {
	{ "10.0.0.0/8", true },
	{ "10.1.2.3/8", true }, /* host bits allowed */
	{ "0.0.0.0/0", true },
	{ "255.255.255.255/32", true },
	{ "::/0", true },
	{ "2001:db8::/32", true },
	{ "2001:DB8::1/128", true },
	{ "1:2:3:4:5:6:7:8/128", true },
	{ "1::/64", true },
	{ "::1.2.3.4/128", true },
	{ "1:2:3:4:5:6:1.2.3.4/96", true },
	{ "10.0.0.1", false },
	{ "010.0.0.0/8", false },
	{ "10.0.0.256/8", false },
	{ "10.0.0/8", false },
	{ "10.0.0.0.0/8", false },
	{ "10..0.0/8", false },
	{ "10.0.0.0/08", false },
	{ "10.0.0.0/+8", false },
	{ "10.0.0.0/-1", false },
	{ "10.0.0.0/33", false },
	{ "10.0.0.0/", false },
	{ "10.0.0.0/8/8", false },
	{ "::/129", false },
	{ "::ffff:1.2.3.4/128", false }, /* IPv4-mapped: refused by isCIDR */
	{ "fe80::1%eth0/64", false },
	{ "1::2::3/64", false },
	{ "1:2:3:4:5:6:7:8:9/128", false },
	{ "1:2:3:4:5:6:7::8/128", false }, /* "::" standing for no group */
	{ "12345::/16", false },
	{ "1:2:3:4:5:1.2.3.4/96", false }, /* IPv4 in the wrong place */
	{ ":/0", false },
	{ "1:/0", false },
	{ "/8", false },
	{ "", false },
	{ "%/8", false },
};

START_TEST(cidr)
{
	ck_assert_msg(api_cel_is_cidr(cidrs[_i].text) == cidrs[_i].cidr, "%s", cidrs[_i].text);
}
END_TEST

static const struct {
	const char *pattern, *text;
	int match;
} matches[] = {
	{ "^[^\\s]+$", "redis:7", 1 },
	{ "^[^\\s]+$", "redis 7", 0 },
	{ "^[^\\s]+$", "redis\t7", 0 },
	{ "^[^\\s]+$", "redis\v7", 1 }, /* RE2's \s has no \v */
	{ "^[^\\s]+$",
	  "r\xc3\xa9"
	  "dis",
	  1 },
	{ "^[^\\x00-\\x1f\\x7f]*$",
	  "a\x7f"
	  "b",
	  0 },
	{ "^[^\\x00-\\x1f\\x7f]*$", "a\x01", 0 },
	{ "^[^\\x00-\\x1f\\x7f]*$", "plain/path", 1 },
	{ "[[:cntrl:]]", "100\n", 1 },
	{ "[[:cntrl:]]", "a\tb", 1 },
	{ "[[:cntrl:]]", "\xe2\x80\xa8", 0 }, /* U+2028 is not ASCII cntrl */
	{ "^(?i:jan|feb)$", "FeB", 1 },
	{ "^(?i:jan)-x$", "JAN-x", 1 },
	{ "^(?i:jan)-x$", "JAN-X", 0 }, /* case folding ends with the group */
	{ "^a\\.b$", "a.b", 1 },
	{ "^a\\.b$", "axb", 0 },
	{ "^(\\*|[0-9])$", "*", 1 },
	{ "^[0-9]{0,3}$", "1234", 0 },
	{ "^[0-9]{2}$", "12", 1 },
	{ "^a+?$", "aaa", 1 },
	{ "^[]a]$", "]", -ENOTSUP },
	{ "^\\d\\w\\S$", "1a-", 1 },
	{ "^[\\d\\-]+$", "1-2", 1 },
	{ "^[\\^]$", "^", 1 },
	{ "^\\^$", "^", 1 },
	{ "^[-^]$", "^", 1 },
	{ "^[a^-]+$", "^-a", 1 },
	{ "^[\\[:]+$", "[:", 1 },
	{ "(?m:x)", "x", -ENOTSUP },
	{ "\\p{L}", "x", -ENOTSUP },
	{ "a{", "a{", -ENOTSUP },
	{ "(?i:[a-z])", "A", -ENOTSUP },
	{ "\\x0", "x", -ENOTSUP },
	{ "\\q", "q", -ENOTSUP },
	{ "(a", "a", -ENOTSUP },
	{ "[a", "a", -ENOTSUP },
	{ "[\xc3\xa9]", "x", -ENOTSUP },
	{ "\\x00", "", -ENOTSUP },
	{ "[z-a]", "a", -ENOTSUP },
};

START_TEST(regex)
{
	ck_assert_msg(api_cel_matches(matches[_i].pattern, matches[_i].text) == matches[_i].match,
	              "/%s/ on \"%s\"", matches[_i].pattern, matches[_i].text);
}
END_TEST

START_TEST(regex_translation)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	ck_assert_int_eq(api_cel_regex_to_posix("^[a-z][a-z0-9-]*$", &b), 0);
	ck_assert_str_eq(buf_cstr(&b),
	                 "^[abcdefghijklmnopqrstuvwxyz][0123456789abcdefghijklmnopqrstuvwxyz-]*$");
	buf_clear(&b);
	ck_assert_int_eq(api_cel_regex_to_posix("^(?i:ab)\\.$", &b), 0);
	ck_assert_str_eq(buf_cstr(&b), "^([Aa][Bb])[.]$");
	buf_clear(&b);
	buf_append_str(&b, "kept");
	ck_assert_int_eq(api_cel_regex_to_posix("(?x:", &b), -ENOTSUP);
	ck_assert_str_eq(buf_cstr(&b), "kept"); /* nothing appended on failure */
	buf_release(&b);
}
END_TEST

static const struct {
	const char *text, *quoted;
} quotes[] = {
	{ "plain", "\"plain\"" },
	{ "", "\"\"" },
	{ "100\x01", "\"100\\x01\"" },
	{ "a\nb\tc\rd\ae\bf\fg\vh", "\"a\\nb\\tc\\rd\\ae\\bf\\fg\\vh\"" },
	{ "q\"b\\", "\"q\\\"b\\\\\"" },
	{ "\x7f", "\"\\x7f\"" },
	{ "\xc3\xa9\xe2\x86\x92", "\"\xc3\xa9\xe2\x86\x92\"" }, /* printable: kept */
	{ "\xc2\xad", "\"\\u00ad\"" },                          /* soft hyphen */
	{ "\xc2\xa0", "\"\\u00a0\"" },                          /* no-break space */
	{ "\xe2\x80\xa8", "\"\\u2028\"" },
	{ "\xf3\xa0\x80\x81", "\"\\U000e0001\"" },
	{ "\xff", "\"\\xff\"" },                   /* invalid UTF-8 */
	{ "\xc0\x80", "\"\\xc0\\x80\"" },          /* overlong */
	{ "\xed\xa0\x80", "\"\\xed\\xa0\\x80\"" }, /* surrogate */
};

START_TEST(quote)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	api_cel_quote(quotes[_i].text, &b);
	ck_assert_str_eq(buf_cstr(&b), quotes[_i].quoted);
	buf_release(&b);
}
END_TEST

static const struct {
	double v;
	const char *text;
} floats[] = {
	{ 2.5, "2.5" },
	{ 3, "3" },
	{ -0.5, "-0.5" },
	{ 1e6, "1e+06" },
	{ 2000000.5, "2.0000005e+06" },
	{ 100000, "100000" },
	{ 123456, "123456" },
	{ 1e-5, "1e-05" },
	{ 0.0001, "0.0001" },
	{ 0.1, "0.1" },
	{ 1e21, "1e+21" },
	{ 0, "0" },
	{ -0.0, "-0" },
	{ 1.0 / 3, "0.3333333333333333" },
	{ 123.456, "123.456" },
	{ 1e100, "1e+100" },
};

START_TEST(format_float)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	api_cel_format_float(floats[_i].v, &b);
	ck_assert_str_eq(buf_cstr(&b), floats[_i].text);
	buf_release(&b);
}
END_TEST

START_TEST(runes)
{
	ck_assert_uint_eq(api_cel_runes(""), 0);
	ck_assert_uint_eq(api_cel_runes("abc"), 3);
	ck_assert_uint_eq(api_cel_runes("\xc3\xa9\xe2\x86\x92x"), 3);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("api_cel");
	TCase *tc = tcase_create("cel");

	tcase_add_loop_test(tc, duration, 0, ARRAY_LEN(durations));
	tcase_add_loop_test(tc, quantity, 0, ARRAY_LEN(quantities));
	tcase_add_loop_test(tc, quantity_cmp, 0, ARRAY_LEN(comparisons));
	tcase_add_loop_test(tc, cidr, 0, ARRAY_LEN(cidrs));
	tcase_add_loop_test(tc, regex, 0, ARRAY_LEN(matches));
	tcase_add_test(tc, regex_translation);
	tcase_add_loop_test(tc, quote, 0, ARRAY_LEN(quotes));
	tcase_add_loop_test(tc, format_float, 0, ARRAY_LEN(floats));
	tcase_add_test(tc, runes);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_suite)
