/*
 * parse: strict value parsers (see parse.h for the accepted syntax).
 *
 * All arithmetic is integer and overflow-checked: durations are summed in unsigned
 * nanoseconds capped at INT64_MAX, quantities are kept as a decimal digit string with
 * a power of ten and a power of two, and converted by exact digit arithmetic. Digits
 * are tested with a range check, not isdigit(), so the locale and non-ASCII bytes
 * (fullwidth digits, "µ" outside a unit) cannot sneak in. No allocation.
 */
#include "parse.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* --- quoting inputs in messages ------------------------------------------------- */

/* Writes the escaped form of c into esc (5 bytes) and returns its length. */
static size_t quote_char(unsigned char c, char *esc)
{
	if (c == '"' || c == '\\') {
		esc[0] = '\\';
		esc[1] = (char)c;
		return 2;
	}
	if (c == '\n' || c == '\t') {
		esc[0] = '\\';
		esc[1] = c == '\n' ? 'n' : 't';
		return 2;
	}
	if (c < 0x20 || c >= 0x7f)
		return (size_t)snprintf(esc, 5, "\\x%02x", c);
	esc[0] = (char)c;
	return 1;
}

static size_t quote_len(const char *s)
{
	char esc[5];
	size_t n = 0;

	for (; *s; s++)
		n += quote_char((unsigned char)*s, esc);
	return n;
}

const char *parse_quote(const char *s, char *out, size_t outlen)
{
	/* Room kept for the closing quote and NUL, or for `..."` and NUL when cut. */
	size_t pos = 0, reserve;
	char esc[5];

	assert(outlen >= 8);
	if (!s) {
		snprintf(out, outlen, "(null)");
		return out;
	}
	reserve = quote_len(s) + 3 <= outlen ? 2 : 5;
	out[pos++] = '"';
	for (; *s; s++) {
		size_t n = quote_char((unsigned char)*s, esc);

		if (pos + n + reserve > outlen)
			break;
		memcpy(out + pos, esc, n);
		pos += n;
	}
	if (*s) {
		memcpy(out + pos, "...", 3);
		pos += 3;
	}
	out[pos++] = '"';
	out[pos] = '\0';
	return out;
}

/* --- integers -------------------------------------------------------------------- */

/* *v = *v * m + a; false on overflow (then *v is unchanged). */
static bool mul_add(uint64_t *v, unsigned m, unsigned a)
{
	if (*v > (UINT64_MAX - a) / m)
		return false;
	*v = *v * m + a;
	return true;
}

/*
 * Decimal digits only, at least one: 0, -EINVAL (empty, any other byte) or -ERANGE
 * (all digits, but more than UINT64_MAX). Syntax is checked first, so "99...9x" is
 * -EINVAL.
 */
static int scan_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	bool overflow = false;

	if (!s || !*s)
		return -EINVAL;
	for (; *s; s++) {
		if (!is_digit(*s))
			return -EINVAL;
		if (!overflow && !mul_add(&v, 10, (unsigned)(*s - '0')))
			overflow = true;
	}
	if (overflow)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_uint64(const char *s, uint64_t min, uint64_t max, uint64_t *out, struct err *e)
{
	char q[PARSE_QUOTE_MAX];
	uint64_t v = 0;
	int rc = scan_u64(s, &v);

	if (rc == -EINVAL)
		return err_set(e, rc, "%s is not a non-negative integer",
		               parse_quote(s, q, sizeof(q)));
	if (rc == -ERANGE)
		return err_set(e, rc, "%s is above the maximum %" PRIu64,
		               parse_quote(s, q, sizeof(q)), max);
	if (v > max)
		return err_set(e, -ERANGE, "%" PRIu64 " is above the maximum %" PRIu64, v, max);
	if (v < min)
		return err_set(e, -ERANGE, "%" PRIu64 " is below the minimum %" PRIu64, v, min);
	*out = v;
	return 0;
}

int parse_int64(const char *s, int64_t min, int64_t max, int64_t *out, struct err *e)
{
	const uint64_t neg_limit = (uint64_t)INT64_MAX + 1;
	char q[PARSE_QUOTE_MAX];
	bool neg = s && s[0] == '-';
	uint64_t u = 0;
	int64_t v;
	int rc = scan_u64(s ? s + neg : s, &u);

	if (rc == -EINVAL)
		return err_set(e, rc, "%s is not an integer", parse_quote(s, q, sizeof(q)));
	if (!neg && (rc == -ERANGE || u > (uint64_t)INT64_MAX))
		return err_set(e, -ERANGE, "%s is above the maximum %" PRId64,
		               parse_quote(s, q, sizeof(q)), max);
	if (neg && (rc == -ERANGE || u > neg_limit))
		return err_set(e, -ERANGE, "%s is below the minimum %" PRId64,
		               parse_quote(s, q, sizeof(q)), min);
	if (neg)
		v = u == neg_limit ? INT64_MIN : -(int64_t)u;
	else
		v = (int64_t)u;
	if (v > max)
		return err_set(e, -ERANGE, "%" PRId64 " is above the maximum %" PRId64, v, max);
	if (v < min)
		return err_set(e, -ERANGE, "%" PRId64 " is below the minimum %" PRId64, v, min);
	*out = v;
	return 0;
}

/* --- booleans -------------------------------------------------------------------- */

static const struct {
	const char *text;
	bool value;
} bool_words[] = {
	{ "true", true }, { "false", false }, { "yes", true }, { "no", false },  { "on", true },
	{ "off", false }, { "1", true },      { "0", false },  { "True", true }, { "False", false },
};

int parse_bool(const char *s, bool *out, struct err *e)
{
	char q[PARSE_QUOTE_MAX];

	for (size_t i = 0; s && i < ARRAY_SIZE(bool_words); i++) {
		if (strcmp(s, bool_words[i].text) == 0) {
			*out = bool_words[i].value;
			return 0;
		}
	}
	return err_set(e, -EINVAL, "%s is not a boolean (use true or false)",
	               parse_quote(s, q, sizeof(q)));
}

/* --- durations ------------------------------------------------------------------- */

#define NS_PER_MS 1000000ULL
#define NS_PER_S  1000000000ULL

static const struct {
	const char *name;
	uint64_t ns;
} duration_units[] = {
	{ "ns", 1 },
	{ "us", 1000 },
	{ "\xc2\xb5s", 1000 }, /* U+00B5 MICRO SIGN */
	{ "\xce\xbcs", 1000 }, /* U+03BC GREEK SMALL LETTER MU */
	{ "ms", NS_PER_MS },
	{ "s", NS_PER_S },
	{ "m", 60 * NS_PER_S },
	{ "h", 3600 * NS_PER_S },
	{ "d", 86400 * NS_PER_S },
};

enum duration_status {
	DURATION_OK,
	DURATION_SYNTAX,
	DURATION_NO_UNIT,
	DURATION_BAD_UNIT,
	DURATION_NEGATIVE,
	DURATION_OVERFLOW,
};

/* Indexed by enum duration_status. */
static const struct {
	int code;
	const char *reason;
} duration_errors[] = {
	[DURATION_SYNTAX] = { -EINVAL, "is not a duration (use 250ms, 5s, 1m30s)" },
	[DURATION_NO_UNIT] = { -EINVAL, "is not a duration: a number needs a unit (use 250ms, 5s, "
	                                "1m30s)" },
	[DURATION_BAD_UNIT] = { -EINVAL, "is not a duration: unknown unit (use ns, us, ms, s, m, h "
	                                 "or d)" },
	[DURATION_NEGATIVE] = { -ERANGE, "is negative: durations must not be" },
	[DURATION_OVERFLOW] = { -ERANGE, "is too long (at most 2562047h)" },
};

static uint64_t duration_unit(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(duration_units); i++)
		if (strlen(duration_units[i].name) == len &&
		    memcmp(duration_units[i].name, name, len) == 0)
			return duration_units[i].ns;
	return 0;
}

/*
 * floor(0.<frac digits> * unit), exactly. Horner's rule from the last digit: each step
 * floor((d * unit + t) / 10) loses nothing, since floor((n + floor(y)) / 10) equals
 * floor((n + y) / 10) for integer n. Intermediates stay below 10 * unit.
 */
static uint64_t duration_fraction(const char *frac, size_t len, uint64_t unit)
{
	uint64_t t = 0;

	while (len--)
		t = ((uint64_t)(frac[len] - '0') * unit + t) / 10;
	return t;
}

/* Scans one "<number><unit>" at *p and adds it to *total (which stays <= INT64_MAX). */
static enum duration_status duration_component(const char **p, uint64_t *total)
{
	const char *s = *p, *frac = "", *unit_name;
	size_t int_len, frac_len = 0;
	uint64_t v = 0, unit, part;
	bool overflow = false;

	for (int_len = 0; is_digit(*s); s++, int_len++)
		if (!overflow && !mul_add(&v, 10, (unsigned)(*s - '0')))
			overflow = true;
	if (*s == '.') {
		frac = ++s;
		for (; is_digit(*s); s++)
			frac_len++;
	}
	if (int_len + frac_len == 0)
		return DURATION_SYNTAX;
	for (unit_name = s; *s && !is_digit(*s) && *s != '.'; s++)
		;
	if (s == unit_name)
		return DURATION_NO_UNIT;
	unit = duration_unit(unit_name, (size_t)(s - unit_name));
	if (!unit)
		return DURATION_BAD_UNIT;
	if (overflow || v > (uint64_t)INT64_MAX / unit)
		return DURATION_OVERFLOW;
	part = v * unit + duration_fraction(frac, frac_len, unit);
	if (part > (uint64_t)INT64_MAX - *total)
		return DURATION_OVERFLOW;
	*total += part;
	*p = s;
	return DURATION_OK;
}

static enum duration_status duration_scan(const char *s, uint64_t *ns)
{
	enum duration_status st = DURATION_OK;

	*ns = 0;
	if (strcmp(s, "0") == 0)
		return DURATION_OK;
	if (!*s)
		return DURATION_SYNTAX;
	while (*s && st == DURATION_OK)
		st = duration_component(&s, ns);
	return st;
}

int parse_duration_ms(const char *s, int64_t *out_ms, struct err *e)
{
	char q[PARSE_QUOTE_MAX];
	const char *p = s ? s : "";
	bool neg = *p == '-';
	enum duration_status st;
	uint64_t ns;

	st = duration_scan(p + neg, &ns);
	if (st == DURATION_OK && neg)
		st = DURATION_NEGATIVE;
	if (st != DURATION_OK)
		return err_set(e, duration_errors[st].code, "%s %s", parse_quote(s, q, sizeof(q)),
		               duration_errors[st].reason);
	/* Nearest millisecond, halves up; cannot overflow as ns <= INT64_MAX. */
	*out_ms = (int64_t)((ns + NS_PER_MS / 2) / NS_PER_MS);
	return 0;
}

/* --- quantities ------------------------------------------------------------------ */

#define QUANTITY_HINT "(use 512Mi, 1Gi, 1.5G, 100m)"
/* Digits a conversion may hold: 64 input digits times 2^60 (19 digits), with room. */
#define QUANTITY_WORK_DIGITS 96

static const struct {
	const char *suffix;
	int8_t exp10;
	uint8_t exp2;
} quantity_suffixes[] = {
	{ "", 0, 0 },    { "n", -9, 0 },  { "u", -6, 0 },  { "m", -3, 0 },
	{ "k", 3, 0 },   { "M", 6, 0 },   { "G", 9, 0 },   { "T", 12, 0 },
	{ "P", 15, 0 },  { "E", 18, 0 },  { "Ki", 0, 10 }, { "Mi", 0, 20 },
	{ "Gi", 0, 30 }, { "Ti", 0, 40 }, { "Pi", 0, 50 }, { "Ei", 0, 60 },
};

/*
 * Copies the digits of "<digits>[.<digits>]" at *p into q (leading zeros dropped) and
 * sets q->exp10 to minus the number of fraction digits. -EINVAL without any digit.
 */
static int quantity_number(const char **p, struct quantity *q)
{
	const char *s = *p;
	size_t n = 0, total = 0;
	int32_t frac = 0;
	bool in_frac = false;

	for (;; s++) {
		if (*s == '.' && !in_frac) {
			in_frac = true;
			continue;
		}
		if (!is_digit(*s))
			break;
		total++;
		frac += in_frac;
		if (n || *s != '0')
			q->digits[n++] = *s;
	}
	if (!total)
		return -EINVAL;
	q->digits[n] = '\0';
	q->exp10 = -frac;
	*p = s;
	return 0;
}

/* Applies the suffix (the rest of the text): -EINVAL unknown, -ERANGE huge exponent. */
static int quantity_suffix(const char *s, struct quantity *q)
{
	bool neg;
	uint64_t exp;
	int rc;

	for (size_t i = 0; i < ARRAY_SIZE(quantity_suffixes); i++) {
		if (strcmp(s, quantity_suffixes[i].suffix) == 0) {
			q->exp10 += quantity_suffixes[i].exp10;
			q->exp2 = quantity_suffixes[i].exp2;
			return 0;
		}
	}
	if (*s != 'e' && *s != 'E')
		return -EINVAL;
	s++;
	neg = *s == '-';
	s += *s == '-' || *s == '+';
	rc = scan_u64(s, &exp);
	if (rc == 0 && exp > PARSE_QUANTITY_MAX_EXP)
		rc = -ERANGE;
	if (rc)
		return rc;
	q->exp10 += neg ? -(int32_t)exp : (int32_t)exp;
	return 0;
}

/* Moves trailing zeros into exp10; zero becomes "" with no sign or exponents. */
static void quantity_normalize(struct quantity *q)
{
	size_t n = strlen(q->digits);

	while (n && q->digits[n - 1] == '0') {
		q->digits[--n] = '\0';
		q->exp10++;
	}
	if (!n) {
		q->negative = false;
		q->exp10 = 0;
		q->exp2 = 0;
	}
}

int parse_quantity(const char *s, struct quantity *out, struct err *e)
{
	struct quantity q = { 0 };
	char qs[PARSE_QUOTE_MAX];
	const char *p = s ? s : "";
	int rc;

	if (strnlen(p, PARSE_QUANTITY_MAX_LEN + 1) > PARSE_QUANTITY_MAX_LEN)
		return err_set(e, -EINVAL, "%s is not a quantity: longer than %d characters",
		               parse_quote(s, qs, sizeof(qs)), PARSE_QUANTITY_MAX_LEN);
	if (*p == '-' || *p == '+')
		q.negative = *p++ == '-';
	rc = quantity_number(&p, &q);
	if (rc == 0)
		rc = quantity_suffix(p, &q);
	if (rc == -ERANGE)
		return err_set(e, rc, "%s has an exponent beyond %d",
		               parse_quote(s, qs, sizeof(qs)), PARSE_QUANTITY_MAX_EXP);
	if (rc)
		return err_set(e, rc, "%s is not a quantity " QUANTITY_HINT,
		               parse_quote(s, qs, sizeof(qs)));
	quantity_normalize(&q);
	*out = q;
	return 0;
}

/* d (n digits, least significant first) *= m; returns the new digit count. */
static size_t digits_mul(unsigned char *d, size_t n, unsigned m)
{
	unsigned carry = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned x = d[i] * m + carry;

		d[i] = (unsigned char)(x % 10);
		carry = x / 10;
	}
	for (; carry; carry /= 10) {
		assert(n < QUANTITY_WORK_DIGITS);
		d[n++] = (unsigned char)(carry % 10);
	}
	return n;
}

/*
 * ceil(|q| * 10^scale10) into *out, or -ERANGE above max. The value is expanded to
 * an exact decimal digit array (2^exp2 multiplied in), then split at the decimal point.
 */
static int quantity_ceil(const struct quantity *q, int scale10, uint64_t max, uint64_t *out)
{
	unsigned char d[QUANTITY_WORK_DIGITS] = { 0 };
	size_t n = strlen(q->digits), lo, i;
	int64_t shift = (int64_t)q->exp10 + scale10;
	uint64_t v = 0;
	bool frac = false;

	for (i = 0; i < n; i++)
		d[i] = (unsigned char)(q->digits[n - 1 - i] - '0');
	for (i = 0; n && i < q->exp2 / 10u; i++)
		n = digits_mul(d, n, 1024);
	lo = shift < 0 ? (size_t)-shift : 0; /* d[0..lo) are fraction digits */
	for (i = 0; i < n && i < lo; i++)
		frac |= d[i] != 0;
	/* The top digit is non-zero: more than 20 integer digits pass UINT64_MAX. */
	if (n > lo && (int64_t)(n - lo) + (shift > 0 ? shift : 0) > 20)
		return -ERANGE;
	for (i = n; i-- > lo;)
		if (!mul_add(&v, 10, d[i]))
			return -ERANGE;
	for (int64_t k = 0; n > lo && k < shift; k++)
		if (!mul_add(&v, 10, 0))
			return -ERANGE;
	if ((frac && !mul_add(&v, 1, 1)) || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static int quantity_convert(const char *s, int scale10, uint64_t max, const char *unit,
                            uint64_t *out, struct err *e)
{
	struct quantity q = { 0 };
	char qs[PARSE_QUOTE_MAX];
	int rc = parse_quantity(s, &q, e);

	if (rc)
		return rc;
	if (q.negative)
		return err_set(e, -ERANGE, "%s is negative", parse_quote(s, qs, sizeof(qs)));
	if (quantity_ceil(&q, scale10, max, out))
		return err_set(e, -ERANGE, "%s is too large (max %" PRIu64 "%s)",
		               parse_quote(s, qs, sizeof(qs)), max, unit);
	return 0;
}

int parse_quantity_bytes(const char *s, uint64_t *out, struct err *e)
{
	uint64_t v = 0;
	int rc = quantity_convert(s, 0, UINT64_MAX, " bytes", &v, e);

	if (rc == 0)
		*out = v;
	return rc;
}

int parse_quantity_milli(const char *s, int64_t *out_milli, struct err *e)
{
	uint64_t v = 0;
	int rc = quantity_convert(s, 3, (uint64_t)INT64_MAX, "m", &v, e);

	if (rc == 0)
		*out_milli = (int64_t)v;
	return rc;
}
