/*
 * Unit tests for lib/parse: tables of good and bad inputs per parser. Every failing
 * case also checks that the output was left untouched and, where given, the message.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "lib/err.h"
#include "lib/parse.h"
#include "unit.h"

#define SENTINEL 0x5a5a5a5a

static const char *rc_name(int rc)
{
	return rc ? err_name(rc) : "0";
}

/* Checks rc, and the message when want_msg is not NULL. */
static void check_err(const char *input, int rc, int want_rc, const struct err *e,
                      const char *want_msg)
{
	ck_assert_msg(rc == want_rc, "input \"%s\": got %s want %s (%s)", input, rc_name(rc),
	              rc_name(want_rc), e->msg);
	if (want_rc)
		ck_assert_int_eq(e->code, want_rc);
	if (want_msg)
		ck_assert_str_eq(e->msg, want_msg);
}

/* --- integers -------------------------------------------------------------------- */

static const struct {
	const char *s;
	int64_t min, max;
	int rc;
	int64_t want;
	const char *msg;
} int64_cases[] = {
	{ "0", INT64_MIN, INT64_MAX, 0, 0, NULL },
	{ "-0", INT64_MIN, INT64_MAX, 0, 0, NULL },
	{ "42", INT64_MIN, INT64_MAX, 0, 42, NULL },
	{ "-42", INT64_MIN, INT64_MAX, 0, -42, NULL },
	{ "007", INT64_MIN, INT64_MAX, 0, 7, NULL },
	{ "9223372036854775807", INT64_MIN, INT64_MAX, 0, INT64_MAX, NULL },
	{ "-9223372036854775808", INT64_MIN, INT64_MAX, 0, INT64_MIN, NULL },
	{ "1", 1, 64, 0, 1, NULL },
	{ "64", 1, 64, 0, 64, NULL },
	{ "0", 1, 64, -ERANGE, 0, "0 is below the minimum 1" },
	{ "65", 1, 64, -ERANGE, 0, "65 is above the maximum 64" },
	{ "-5", 0, 10, -ERANGE, 0, "-5 is below the minimum 0" },
	{ "9223372036854775808", INT64_MIN, INT64_MAX, -ERANGE, 0,
	  "\"9223372036854775808\" is above the maximum 9223372036854775807" },
	{ "-9223372036854775809", INT64_MIN, INT64_MAX, -ERANGE, 0,
	  "\"-9223372036854775809\" is below the minimum -9223372036854775808" },
	{ "99999999999999999999999", 1, 64, -ERANGE, 0,
	  "\"99999999999999999999999\" is above the maximum 64" },
	{ "", INT64_MIN, INT64_MAX, -EINVAL, 0, "\"\" is not an integer" },
	{ "-", INT64_MIN, INT64_MAX, -EINVAL, 0, "\"-\" is not an integer" },
	{ "+1", INT64_MIN, INT64_MAX, -EINVAL, 0, "\"+1\" is not an integer" },
	{ " 1", INT64_MIN, INT64_MAX, -EINVAL, 0, NULL },
	{ "1 ", INT64_MIN, INT64_MAX, -EINVAL, 0, NULL },
	{ "1\n", INT64_MIN, INT64_MAX, -EINVAL, 0, "\"1\\n\" is not an integer" },
	{ "1k", INT64_MIN, INT64_MAX, -EINVAL, 0, NULL },
	{ "0x10", INT64_MIN, INT64_MAX, -EINVAL, 0, NULL },
	{ "1.0", INT64_MIN, INT64_MAX, -EINVAL, 0, NULL },
	{ "1e3", INT64_MIN, INT64_MAX, -EINVAL, 0, NULL },
	{ "--1", INT64_MIN, INT64_MAX, -EINVAL, 0, NULL },
	{ "99999999999999999999x", INT64_MIN, INT64_MAX, -EINVAL, 0, NULL },
	{ "\xef\xbc\x91", INT64_MIN, INT64_MAX, -EINVAL, 0,
	  "\"\\xef\\xbc\\x91\" is not an integer" },
};

START_TEST(int64_table)
{
	struct err e;
	int64_t v = SENTINEL;
	int rc;

	err_clear(&e);
	rc = parse_int64(int64_cases[_i].s, int64_cases[_i].min, int64_cases[_i].max, &v, &e);
	check_err(int64_cases[_i].s, rc, int64_cases[_i].rc, &e, int64_cases[_i].msg);
	ck_assert_int_eq(v, (rc ? SENTINEL : int64_cases[_i].want));
}
END_TEST

static const struct {
	const char *s;
	uint64_t min, max;
	int rc;
	uint64_t want;
	const char *msg;
} uint64_cases[] = {
	{ "0", 0, UINT64_MAX, 0, 0, NULL },
	{ "18446744073709551615", 0, UINT64_MAX, 0, UINT64_MAX, NULL },
	{ "000123", 0, UINT64_MAX, 0, 123, NULL },
	{ "18446744073709551616", 0, UINT64_MAX, -ERANGE, 0,
	  "\"18446744073709551616\" is above the maximum 18446744073709551615" },
	{ "5", 10, 20, -ERANGE, 0, "5 is below the minimum 10" },
	{ "21", 10, 20, -ERANGE, 0, "21 is above the maximum 20" },
	{ "-1", 0, UINT64_MAX, -EINVAL, 0, "\"-1\" is not a non-negative integer" },
	{ "-0", 0, UINT64_MAX, -EINVAL, 0, NULL },
	{ "+1", 0, UINT64_MAX, -EINVAL, 0, NULL },
	{ "", 0, UINT64_MAX, -EINVAL, 0, NULL },
	{ "1_000", 0, UINT64_MAX, -EINVAL, 0, NULL },
	{ "\t1", 0, UINT64_MAX, -EINVAL, 0, "\"\\t1\" is not a non-negative integer" },
};

START_TEST(uint64_table)
{
	struct err e;
	uint64_t v = SENTINEL;
	int rc;

	err_clear(&e);
	rc = parse_uint64(uint64_cases[_i].s, uint64_cases[_i].min, uint64_cases[_i].max, &v, &e);
	check_err(uint64_cases[_i].s, rc, uint64_cases[_i].rc, &e, uint64_cases[_i].msg);
	ck_assert_uint_eq(v, (rc ? SENTINEL : uint64_cases[_i].want));
}
END_TEST

START_TEST(null_inputs)
{
	struct err e;
	int64_t i = SENTINEL;
	uint64_t u = SENTINEL;
	bool b = true;
	struct quantity q;

	err_clear(&e);
	ck_assert_int_eq(parse_int64(NULL, 0, 1, &i, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "(null) is not an integer");
	ck_assert_int_eq(parse_uint64(NULL, 0, 1, &u, NULL), -EINVAL);
	ck_assert_int_eq(parse_bool(NULL, &b, NULL), -EINVAL);
	ck_assert_int_eq(parse_duration_ms(NULL, &i, NULL), -EINVAL);
	ck_assert_int_eq(parse_quantity(NULL, &q, NULL), -EINVAL);
	ck_assert_int_eq(i, SENTINEL);
	ck_assert_uint_eq(u, SENTINEL);
	ck_assert(b);
}
END_TEST

/* --- booleans -------------------------------------------------------------------- */

static const struct {
	const char *s;
	int rc;
	bool want;
} bool_cases[] = {
	{ "true", 0, true },   { "false", 0, false },   { "yes", 0, true },
	{ "no", 0, false },    { "on", 0, true },       { "off", 0, false },
	{ "1", 0, true },      { "0", 0, false },       { "True", 0, true },
	{ "False", 0, false }, { "TRUE", -EINVAL, 0 },  { "t", -EINVAL, 0 },
	{ "", -EINVAL, 0 },    { " true", -EINVAL, 0 }, { "yes ", -EINVAL, 0 },
	{ "y", -EINVAL, 0 },   { "2", -EINVAL, 0 },     { "truee", -EINVAL, 0 },
	{ "Off", -EINVAL, 0 }, { "01", -EINVAL, 0 },    { "tru\xc3\xa9", -EINVAL, 0 },
};

START_TEST(bool_table)
{
	struct err e;
	/* Start from the opposite of the wanted value so a wrong write shows. */
	bool v = !bool_cases[_i].want;
	int rc;

	err_clear(&e);
	rc = parse_bool(bool_cases[_i].s, &v, &e);
	check_err(bool_cases[_i].s, rc, bool_cases[_i].rc, &e, NULL);
	ck_assert(v == (rc ? !bool_cases[_i].want : bool_cases[_i].want));
}
END_TEST

START_TEST(bool_message)
{
	struct err e;
	bool v;

	err_clear(&e);
	parse_bool("maybe", &v, &e);
	ck_assert_str_eq(e.msg, "\"maybe\" is not a boolean (use true or false)");
}
END_TEST

/* --- durations ------------------------------------------------------------------- */

#define DUR_SYNTAX   "is not a duration (use 250ms, 5s, 1m30s)"
#define DUR_NO_UNIT  "is not a duration: a number needs a unit (use 250ms, 5s, 1m30s)"
#define DUR_BAD_UNIT "is not a duration: unknown unit (use ns, us, ms, s, m, h or d)"

static const struct {
	const char *s;
	int rc;
	int64_t want_ms;
	const char *msg;
} duration_cases[] = {
	{ "0", 0, 0, NULL },
	{ "0s", 0, 0, NULL },
	{ "250ms", 0, 250, NULL },
	{ "5s", 0, 5000, NULL },
	{ "1m30s", 0, 90000, NULL },
	{ "2h", 0, 7200000, NULL },
	{ "1h2m3.5s", 0, 3723500, NULL },
	{ "1.5s", 0, 1500, NULL },
	{ ".5s", 0, 500, NULL },
	{ "1.s", 0, 1000, NULL },
	{ "30d", 0, 2592000000, NULL },
	{ "1s1s", 0, 2000, NULL },
	{ "500us", 0, 1, NULL }, /* halves round up */
	{ "499us", 0, 0, NULL },
	{ "1500us", 0, 2, NULL },
	{ "1.5ms", 0, 2, NULL },
	{ "1.4999ms", 0, 1, NULL },
	{ "500000ns", 0, 1, NULL },
	{ "499999ns", 0, 0, NULL },
	{ "1ns", 0, 0, NULL },
	{ "0.0005s", 0, 1, NULL },
	{ "1\xc2\xb5s", 0, 0, NULL },    /* micro sign */
	{ "1500\xce\xbcs", 0, 2, NULL }, /* Greek mu */
	{ "1.0000001s", 0, 1000, NULL },
	{ "0.1234567891234567891234s", 0, 123, NULL },
	{ "1.23456789h", 0, 4444444, NULL }, /* 4444444.404 ms */
	{ "0.5d", 0, 43200000, NULL },
	{ "106751d", 0, 9223286400000, NULL },
	{ "2562047h", 0, 9223369200000, NULL },
	{ "2562047h47m16.854775807s", 0, 9223372036855, NULL }, /* INT64_MAX ns */
	{ "2562047h47m16.854775808s", -ERANGE, 0,
	  "\"2562047h47m16.854775808s\" is too long (at most 2562047h)" },
	{ "2562048h", -ERANGE, 0, NULL },
	{ "106752d", -ERANGE, 0, NULL },
	{ "99999999999999999999999h", -ERANGE, 0, NULL },
	{ "-5s", -ERANGE, 0, "\"-5s\" is negative: durations must not be" },
	{ "-0", -ERANGE, 0, NULL },
	{ "-x", -EINVAL, 0, NULL },
	{ "", -EINVAL, 0, "\"\" " DUR_SYNTAX },
	{ "5", -EINVAL, 0, "\"5\" " DUR_NO_UNIT },
	{ "10", -EINVAL, 0, NULL },
	{ "00", -EINVAL, 0, NULL },
	{ "1h30", -EINVAL, 0, "\"1h30\" " DUR_NO_UNIT },
	{ "5x", -EINVAL, 0, "\"5x\" " DUR_BAD_UNIT },
	{ "5sec", -EINVAL, 0, NULL },
	{ "5S", -EINVAL, 0, NULL },
	{ "1e3s", -EINVAL, 0, NULL },
	{ "5s ", -EINVAL, 0, NULL },
	{ "5 s", -EINVAL, 0, NULL },
	{ " 5s", -EINVAL, 0, "\" 5s\" " DUR_SYNTAX },
	{ "+5s", -EINVAL, 0, NULL },
	{ "s", -EINVAL, 0, NULL },
	{ ".s", -EINVAL, 0, NULL },
	{ ".", -EINVAL, 0, NULL },
	{ "1..5s", -EINVAL, 0, NULL },
	{ "1.5.5s", -EINVAL, 0, NULL },
	{ "1h\xff", -EINVAL, 0, "\"1h\\xff\" " DUR_BAD_UNIT },
	{ "\xef\xbc\x95s", -EINVAL, 0, NULL }, /* fullwidth 5 */
	{ "1\xc2\xb5", -EINVAL, 0, NULL },
	{ "P1D", -EINVAL, 0, NULL },
};

START_TEST(duration_table)
{
	struct err e;
	int64_t v = SENTINEL;
	int rc;

	err_clear(&e);
	rc = parse_duration_ms(duration_cases[_i].s, &v, &e);
	check_err(duration_cases[_i].s, rc, duration_cases[_i].rc, &e, duration_cases[_i].msg);
	ck_assert_int_eq(v, (rc ? SENTINEL : duration_cases[_i].want_ms));
}
END_TEST

/* --- quantities ------------------------------------------------------------------ */

#define Q_SYNTAX "is not a quantity (use 512Mi, 1Gi, 1.5G, 100m)"
#define ONE_64   "1000000000000000000000000000000000000000000000000000000000000000"

static const struct {
	const char *s;
	int rc;
	uint64_t want;
	const char *msg;
} bytes_cases[] = {
	{ "1Gi", 0, 1073741824, NULL },
	{ "512Mi", 0, 536870912, NULL },
	{ "1.5G", 0, 1500000000, NULL },
	{ "1.5Gi", 0, 1610612736, NULL },
	{ "2e3", 0, 2000, NULL },
	{ "1E3", 0, 1000, NULL },
	{ "1e+3", 0, 1000, NULL },
	{ "1e0", 0, 1, NULL },
	{ "1k", 0, 1000, NULL },
	{ "1M", 0, 1000000, NULL },
	{ "1T", 0, 1000000000000, NULL },
	{ "1P", 0, 1000000000000000, NULL },
	{ "1E", 0, 1000000000000000000, NULL },
	{ "1Ki", 0, 1024, NULL },
	{ "1Ti", 0, 1099511627776, NULL },
	{ "1Pi", 0, 1125899906842624, NULL },
	{ "15Ei", 0, 17293822569102704640u, NULL },
	{ "0", 0, 0, NULL },
	{ "-0", 0, 0, NULL },
	{ "0.0Gi", 0, 0, NULL },
	{ "0.5", 0, 1, NULL }, /* fractional bytes round up */
	{ "100m", 0, 1, NULL },
	{ "1000m", 0, 1, NULL },
	{ "1001m", 0, 2, NULL },
	{ "1n", 0, 1, NULL },
	{ "1u", 0, 1, NULL },
	{ "1e-3", 0, 1, NULL },
	{ "1e-1000", 0, 1, NULL },
	{ "0.1Ki", 0, 103, NULL }, /* 102.4 */
	{ ".5Ki", 0, 512, NULL },
	{ "5.Ki", 0, 5120, NULL },
	{ "+1Ki", 0, 1024, NULL },
	{ "000001Ki", 0, 1024, NULL },
	{ "0.000000000000000000001", 0, 1, NULL },
	{ "1.0000000000000000000000000000000000000001", 0, 2, NULL },
	{ "12345678901234567891.5", 0, 12345678901234567892u, NULL },
	{ "18446744073709551615", 0, UINT64_MAX, NULL },
	{ "18446744073709551614.1", 0, UINT64_MAX, NULL },
	{ "0.00000000000000000000000000000000000000000000000000000000001Ei", 0, 1, NULL },
	{ "18446744073709551616", -ERANGE, 0,
	  "\"18446744073709551616\" is too large (max 18446744073709551615 bytes)" },
	{ "18446744073709551615.1", -ERANGE, 0, NULL },
	{ "16Ei", -ERANGE, 0, NULL },
	{ "1e20", -ERANGE, 0, NULL },
	{ "1e1000", -ERANGE, 0, NULL },
	{ "1e1001", -ERANGE, 0, "\"1e1001\" has an exponent beyond 1000" },
	{ ONE_64, -ERANGE, 0, NULL }, /* 64 characters: parsed, too large */
	{ "-1Gi", -ERANGE, 0, "\"-1Gi\" is negative" },
	{ "-0.001", -ERANGE, 0, NULL },
	{ ONE_64 "0", -EINVAL, 0, NULL }, /* 65 characters */
	{ "", -EINVAL, 0, "\"\" " Q_SYNTAX },
	{ "Gi", -EINVAL, 0, NULL },
	{ "1 Gi", -EINVAL, 0, "\"1 Gi\" " Q_SYNTAX },
	{ " 1Gi", -EINVAL, 0, NULL },
	{ "1Gi ", -EINVAL, 0, NULL },
	{ "1gi", -EINVAL, 0, NULL },
	{ "1K", -EINVAL, 0, NULL },
	{ "1KiB", -EINVAL, 0, NULL },
	{ "1GB", -EINVAL, 0, NULL },
	{ "1e", -EINVAL, 0, NULL },
	{ "1e-", -EINVAL, 0, NULL },
	{ "1E+", -EINVAL, 0, NULL },
	{ "1ee3", -EINVAL, 0, NULL },
	{ "1e3.5", -EINVAL, 0, NULL },
	{ "1e3Ki", -EINVAL, 0, NULL },
	{ "1Ei3", -EINVAL, 0, NULL },
	{ "1.5.5G", -EINVAL, 0, NULL },
	{ ".", -EINVAL, 0, NULL },
	{ "-", -EINVAL, 0, NULL },
	{ "--1", -EINVAL, 0, NULL },
	{ "+-1", -EINVAL, 0, NULL },
	{ "1Ki1", -EINVAL, 0, NULL },
	{ "0x10", -EINVAL, 0, NULL },
	{ "1,5G", -EINVAL, 0, NULL },
	{ "\xef\xbc\x91Gi", -EINVAL, 0, NULL }, /* fullwidth 1 */
	{ "1\xce\xbc", -EINVAL, 0, NULL },
	{ "1Gi\n", -EINVAL, 0, "\"1Gi\\n\" " Q_SYNTAX },
};

START_TEST(bytes_table)
{
	struct err e;
	uint64_t v = SENTINEL;
	int rc;

	err_clear(&e);
	rc = parse_quantity_bytes(bytes_cases[_i].s, &v, &e);
	check_err(bytes_cases[_i].s, rc, bytes_cases[_i].rc, &e, bytes_cases[_i].msg);
	ck_assert_uint_eq(v, (rc ? SENTINEL : bytes_cases[_i].want));
}
END_TEST

static const struct {
	const char *s;
	int rc;
	int64_t want;
	const char *msg;
} milli_cases[] = {
	{ "100m", 0, 100, NULL },
	{ "2", 0, 2000, NULL },
	{ "0.5", 0, 500, NULL },
	{ "1.5", 0, 1500, NULL },
	{ "250m", 0, 250, NULL },
	{ "0.1m", 0, 1, NULL }, /* rounds up */
	{ "0.0001", 0, 1, NULL },
	{ "1n", 0, 1, NULL },
	{ "2e-3", 0, 2, NULL },
	{ "1k", 0, 1000000, NULL },
	{ "1Ki", 0, 1024000, NULL },
	{ "0", 0, 0, NULL },
	{ "9223372036854775807m", 0, INT64_MAX, NULL },
	{ "9223372036854775808m", -ERANGE, 0,
	  "\"9223372036854775808m\" is too large (max 9223372036854775807m)" },
	{ "9223372036854775.808", -ERANGE, 0, NULL },
	{ "10E", -ERANGE, 0, NULL },
	{ "-100m", -ERANGE, 0, "\"-100m\" is negative" },
	{ "100 m", -EINVAL, 0, NULL },
	{ "1 cpu", -EINVAL, 0, NULL },
};

START_TEST(milli_table)
{
	struct err e;
	int64_t v = SENTINEL;
	int rc;

	err_clear(&e);
	rc = parse_quantity_milli(milli_cases[_i].s, &v, &e);
	check_err(milli_cases[_i].s, rc, milli_cases[_i].rc, &e, milli_cases[_i].msg);
	ck_assert_int_eq(v, (rc ? SENTINEL : milli_cases[_i].want));
}
END_TEST

/* The exact internal form. */
static const struct {
	const char *s;
	bool negative;
	const char *digits;
	int32_t exp10;
	uint8_t exp2;
} quantity_cases[] = {
	{ "1.5G", false, "15", 8, 0 },     { "1Gi", false, "1", 0, 30 },
	{ "-2.50e-3", true, "25", -4, 0 }, { "1200", false, "12", 2, 0 },
	{ "0.0", false, "", 0, 0 },        { "-0Gi", false, "", 0, 0 },
	{ "100m", false, "1", -1, 0 },     { "0.0025Ki", false, "25", -4, 10 },
	{ "1E", false, "1", 18, 0 },       { "1E3", false, "1", 3, 0 },
	{ "+7Ei", false, "7", 0, 60 },     { "00120.0300", false, "12003", -2, 0 },
};

START_TEST(quantity_repr)
{
	struct quantity q;
	struct err e;

	err_clear(&e);
	ck_assert_int_eq(parse_quantity(quantity_cases[_i].s, &q, &e), 0);
	ck_assert_msg(q.negative == quantity_cases[_i].negative, "%s: sign", quantity_cases[_i].s);
	ck_assert_str_eq(q.digits, quantity_cases[_i].digits);
	ck_assert_int_eq(q.exp10, quantity_cases[_i].exp10);
	ck_assert_uint_eq(q.exp2, quantity_cases[_i].exp2);
}
END_TEST

START_TEST(quantity_keeps_first_error_and_output)
{
	struct quantity q = { .negative = true, .digits = "9", .exp10 = 5, .exp2 = 10 };
	struct err e;

	err_clear(&e);
	ck_assert_int_eq(parse_quantity("1Gb", &q, &e), -EINVAL);
	ck_assert_str_eq(q.digits, "9");
	ck_assert_int_eq(q.exp10, 5);
	/* err_set keeps the first error: a caller's earlier error is not overwritten. */
	ck_assert_int_eq(parse_quantity("2Xb", &q, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "\"1Gb\" " Q_SYNTAX);
}
END_TEST

/* --- quoting --------------------------------------------------------------------- */

static const struct {
	const char *s;
	size_t outlen;
	const char *want;
} quote_cases[] = {
	{ "abc", PARSE_QUOTE_MAX, "\"abc\"" },
	{ "", PARSE_QUOTE_MAX, "\"\"" },
	{ "a\"b\\c", PARSE_QUOTE_MAX, "\"a\\\"b\\\\c\"" },
	{ "a\nb\tc\rd", PARSE_QUOTE_MAX, "\"a\\nb\\tc\\x0dd\"" },
	{ "\x7f\xc2\xb5", PARSE_QUOTE_MAX, "\"\\x7f\\xc2\\xb5\"" },
	{ "abcdefg", 10, "\"abcdefg\"" }, /* exactly fits */
	{ "abcdefgh", 10, "\"abcd...\"" },
	{ "ab\x01zzzzzz", 11, "\"ab...\"" }, /* an escape is never split */
	{ NULL, PARSE_QUOTE_MAX, "(null)" },
};

START_TEST(quote_table)
{
	char out[PARSE_QUOTE_MAX];

	memset(out, 'X', sizeof(out));
	ck_assert_str_eq(parse_quote(quote_cases[_i].s, out, quote_cases[_i].outlen),
	                 quote_cases[_i].want);
	ck_assert_uint_lt(strlen(out), quote_cases[_i].outlen);
}
END_TEST

START_TEST(quote_long_input)
{
	char big[1000], out[PARSE_QUOTE_MAX];
	struct err e;
	int64_t v;

	memset(big, '9', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	parse_quote(big, out, sizeof(out));
	ck_assert_uint_eq(strlen(out), sizeof(out) - 1);
	ck_assert_str_eq(out + strlen(out) - 4, "...\"");
	err_clear(&e);
	ck_assert_int_eq(parse_int64(big, 0, 10, &v, &e), -ERANGE);
	ck_assert_uint_lt(strlen(e.msg), 120);
}
END_TEST

static Suite *parse_suite(void)
{
	Suite *s = suite_create("parse");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, int64_table, 0, ARRAY_LEN(int64_cases));
	tcase_add_loop_test(tc, uint64_table, 0, ARRAY_LEN(uint64_cases));
	tcase_add_test(tc, null_inputs);
	tcase_add_loop_test(tc, bool_table, 0, ARRAY_LEN(bool_cases));
	tcase_add_test(tc, bool_message);
	tcase_add_loop_test(tc, duration_table, 0, ARRAY_LEN(duration_cases));
	tcase_add_loop_test(tc, bytes_table, 0, ARRAY_LEN(bytes_cases));
	tcase_add_loop_test(tc, milli_table, 0, ARRAY_LEN(milli_cases));
	tcase_add_loop_test(tc, quantity_repr, 0, ARRAY_LEN(quantity_cases));
	tcase_add_test(tc, quantity_keeps_first_error_and_output);
	tcase_add_loop_test(tc, quote_table, 0, ARRAY_LEN(quote_cases));
	tcase_add_test(tc, quote_long_input);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(parse_suite)
