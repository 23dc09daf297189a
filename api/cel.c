/*
 * cel: the API server's duration, quantity, CIDR and regexp semantics, and Go's message
 * formatting (see cel.h). Each algorithm follows its Go original step by step (the
 * function names say which); the sources are k8s.io/apimachinery resource/quantity.go
 * (v0.37), Go's time/format.go, net/netip/netip.go and strconv/quote.go.
 */
#include "cel.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define POW63         ((uint64_t)1 << 63)

/* --- durations: Go's time.ParseDuration ---------------------------------------------- */

static const struct {
	const char *name;
	uint64_t ns;
} duration_units[] = {
	{ "ns", 1 },           { "us", 1000 },      { "\xc2\xb5s", 1000 }, /* U+00B5 micro sign */
	{ "\xce\xbcs", 1000 },                                             /* U+03BC Greek mu */
	{ "ms", 1000000 },     { "s", 1000000000 }, { "m", 60000000000 },  { "h", 3600000000000 },
};

/* leadingInt: false on overflow past 2^63. */
static bool leading_int(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t x = 0;

	for (; *s >= '0' && *s <= '9'; s++) {
		if (x > POW63 / 10)
			return false;
		x = x * 10 + (uint64_t)(*s - '0');
		if (x > POW63)
			return false;
	}
	*out = x;
	*p = s;
	return true;
}

/* leadingFraction: digits past what fits are dropped, as Go does. */
static void leading_fraction(const char **p, uint64_t *out, double *scale)
{
	const char *s = *p;
	uint64_t x = 0, y;
	double sc = 1;
	bool overflow = false;

	for (; *s >= '0' && *s <= '9'; s++) {
		if (overflow)
			continue;
		if (x > (POW63 - 1) / 10) {
			overflow = true;
			continue;
		}
		y = x * 10 + (uint64_t)(*s - '0');
		if (y > POW63) {
			overflow = true;
			continue;
		}
		x = y;
		sc *= 10;
	}
	*out = x;
	*scale = sc;
	*p = s;
}

static uint64_t duration_unit(const char *u, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(duration_units); i++)
		if (strlen(duration_units[i].name) == n &&
		    memcmp(u, duration_units[i].name, n) == 0)
			return duration_units[i].ns;
	return 0;
}

/* One "<int>[.<frac>]<unit>" component into *v (nanoseconds). */
static int duration_component(const char **p, uint64_t *v)
{
	const char *s = *p, *start = s, *u;
	uint64_t f = 0, unit;
	double scale = 1;
	bool pre, post = false;

	if (!(*s == '.' || (*s >= '0' && *s <= '9')))
		return -EINVAL;
	if (!leading_int(&s, v))
		return -ERANGE;
	pre = s != start;
	if (*s == '.') {
		start = ++s;
		leading_fraction(&s, &f, &scale);
		post = s != start;
	}
	if (!pre && !post)
		return -EINVAL;
	for (u = s; *s && *s != '.' && !(*s >= '0' && *s <= '9'); s++)
		;
	unit = duration_unit(u, (size_t)(s - u));
	if (unit == 0)
		return -EINVAL;
	if (*v > POW63 / unit)
		return -ERANGE;
	*v *= unit;
	if (f > 0) {
		/* Go: v += uint64(float64(f) * (float64(unit) / scale)) */
		*v += (uint64_t)((double)f * ((double)unit / scale));
		if (*v > POW63)
			return -ERANGE;
	}
	*p = s;
	return 0;
}

int api_cel_duration_ns(const char *s, int64_t *ns)
{
	uint64_t d = 0, v = 0;
	bool neg = false;
	int rc;

	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	if (strcmp(s, "0") == 0) {
		*ns = 0;
		return 0;
	}
	if (*s == '\0')
		return -EINVAL;
	while (*s) {
		rc = duration_component(&s, &v);
		if (rc)
			return rc;
		d += v;
		if (d > POW63)
			return -ERANGE;
	}
	if (!neg && d > POW63 - 1)
		return -ERANGE;
	*ns = neg ? (int64_t)(0 - d) : (int64_t)d;
	return 0;
}

/* --- quantities: resource.ParseQuantity and Quantity.Cmp ------------------------------ */

static const struct {
	const char *suffix;
	int exp10;
	int exp2;
} quantity_suffixes[] = {
	{ "n", -9, 0 },  { "u", -6, 0 },  { "m", -3, 0 },  { "", 0, 0 },
	{ "k", 3, 0 },   { "M", 6, 0 },   { "G", 9, 0 },   { "T", 12, 0 },
	{ "P", 15, 0 },  { "E", 18, 0 },  { "Ki", 0, 10 }, { "Mi", 0, 20 },
	{ "Gi", 0, 30 }, { "Ti", 0, 40 }, { "Pi", 0, 50 }, { "Ei", 0, 60 },
};

/* The pieces parseQuantityString finds, and what the suffix means. */
struct quantity_text {
	bool negative;
	const char *num, *denom; /* digit runs (num without leading zeros) */
	size_t num_len, denom_len;
	bool any_digit; /* the number part has a digit (zeros included) */
	int64_t exp10;
	int exp2;
};

static size_t digit_run(const char *s)
{
	size_t n = 0;

	while (s[n] >= '0' && s[n] <= '9')
		n++;
	return n;
}

/* strconv.ParseInt(s, 10, 64), then Go's int32(x) truncation. */
static int quantity_exponent(const char *s, int64_t *out)
{
	bool neg = false;
	uint64_t x = 0, limit;
	uint32_t low;

	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	if (*s == '\0')
		return -EINVAL;
	limit = neg ? POW63 : POW63 - 1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (x > (limit - (uint64_t)(*s - '0')) / 10)
			return -EINVAL;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	low = (uint32_t)(neg ? 0 - x : x);
	*out = low <= INT32_MAX ? (int64_t)low : (int64_t)low - ((int64_t)1 << 32);
	return 0;
}

/* quantitySuffixer.interpret */
static int quantity_suffix(const char *suf, struct quantity_text *q)
{
	for (size_t i = 0; i < ARRAY_SIZE(quantity_suffixes); i++) {
		if (strcmp(suf, quantity_suffixes[i].suffix) == 0) {
			q->exp10 = quantity_suffixes[i].exp10;
			q->exp2 = quantity_suffixes[i].exp2;
			return 0;
		}
	}
	if (strlen(suf) > 1 && (suf[0] == 'e' || suf[0] == 'E'))
		return quantity_exponent(suf + 1, &q->exp10);
	return -EINVAL;
}

/* parseQuantityString: the syntax, quirks included ("-", "." and "1." are numbers). */
static int quantity_scan(const char *s, struct quantity_text *q)
{
	const char *p = s, *suf;

	memset(q, 0, sizeof(*q));
	if (*p == '-' || *p == '+')
		q->negative = *p++ == '-';
	q->any_digit = *p == '0';
	while (*p == '0')
		p++;
	q->num = p;
	q->num_len = digit_run(p);
	p += q->num_len;
	if (*p == '.') {
		q->denom = ++p;
		q->denom_len = digit_run(p);
		p += q->denom_len;
	}
	for (suf = p; *p && strchr("eEinumkKMGTP", *p); p++)
		;
	if (*p == '-' || *p == '+')
		p++;
	p += digit_run(p);
	if (*p)
		return -EINVAL;
	q->any_digit |= q->num_len || q->denom_len;
	return quantity_suffix(suf, q);
}

/* d[0..n) holds decimal digits, least significant first; d *= m. */
static size_t digits_mul(unsigned char *d, size_t n, unsigned m)
{
	unsigned carry = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned x = d[i] * m + carry;

		d[i] = (unsigned char)(x % 10);
		carry = x / 10;
	}
	for (; carry; carry /= 10)
		d[n++] = (unsigned char)(carry % 10);
	return n;
}

/* Rounds |value| up to a multiple of 10^-9, as ParseQuantity's inf.RoundUp at Nano. */
static size_t round_up_nano(unsigned char *d, size_t n, int64_t *exp10)
{
	int64_t k = -9 - *exp10;
	bool frac = false;
	size_t i;

	if (k <= 0)
		return n;
	*exp10 = -9;
	for (i = 0; i < n && (int64_t)i < k; i++)
		frac |= d[i] != 0;
	if ((int64_t)n <= k) {
		d[0] = 1;
		return frac ? 1 : 0;
	}
	memmove(d, d + k, n - (size_t)k);
	n -= (size_t)k;
	for (i = 0; frac && i < n; i++) {
		d[i] = (unsigned char)((d[i] + 1) % 10);
		frac = d[i] == 0;
	}
	if (frac)
		d[n++] = 1;
	return n;
}

static void quantity_store(const unsigned char *d, size_t n, int64_t exp10, bool negative,
                           struct api_cel_quantity *out)
{
	size_t lo = 0, o = 0;

	while (lo < n && d[lo] == 0)
		lo++;
	while (n > lo && d[n - 1] == 0)
		n--;
	for (size_t i = n; i-- > lo;)
		out->digits[o++] = (char)('0' + d[i]);
	out->digits[o] = '\0';
	out->exp10 = o ? exp10 + (int64_t)lo : 0;
	out->negative = o && negative;
}

static int cmp_magnitude(const struct api_cel_quantity *a, const struct api_cel_quantity *b)
{
	size_t na = strlen(a->digits), nb = strlen(b->digits);
	int64_t ta = (int64_t)na + a->exp10, tb = (int64_t)nb + b->exp10;

	if (!na || !nb)
		return (na > 0) - (nb > 0);
	if (ta != tb)
		return ta < tb ? -1 : 1;
	for (size_t i = 0; i < na || i < nb; i++) {
		char ca = i < na ? a->digits[i] : '0', cb = i < nb ? b->digits[i] : '0';

		if (ca != cb)
			return ca < cb ? -1 : 1;
	}
	return 0;
}

int api_cel_quantity_parse(const char *s, struct api_cel_quantity *out)
{
	static const struct api_cel_quantity int64_max = { false, "9223372036854775807", 0 };
	unsigned char d[API_CEL_QUANTITY_DIGITS] = { 0 };
	struct quantity_text q;
	size_t len = strnlen(s, API_CEL_QUANTITY_MAX_LEN + 1), n = 0;
	int rc;

	if (len > API_CEL_QUANTITY_MAX_LEN)
		return -E2BIG;
	if (len == 0)
		return -EINVAL;
	rc = quantity_scan(s, &q);
	if (rc)
		return rc;
	/* Past 10^-9 ParseQuantity re-reads the number with inf.Dec, which wants a digit. */
	if (!q.any_digit && !q.exp2 && q.exp10 < -9)
		return -EINVAL;
	for (size_t i = q.denom_len; i-- > 0;)
		d[n++] = (unsigned char)(q.denom[i] - '0');
	for (size_t i = q.num_len; i-- > 0;)
		d[n++] = (unsigned char)(q.num[i] - '0');
	for (int i = 0; i < q.exp2 / 10; i++)
		n = digits_mul(d, n, 1024);
	q.exp10 -= (int64_t)q.denom_len;
	n = round_up_nano(d, n, &q.exp10);
	quantity_store(d, n, q.exp10, q.negative, out);
	/* Only BinarySI amounts are capped at MaxInt64 (quantity.go: "format == BinarySI"). */
	if (q.exp2 && cmp_magnitude(out, &int64_max) > 0) {
		bool neg = out->negative;

		*out = int64_max;
		out->negative = neg;
	}
	return 0;
}

int api_cel_quantity_cmp(const struct api_cel_quantity *a, const struct api_cel_quantity *b)
{
	int sa = a->digits[0] ? (a->negative ? -1 : 1) : 0;
	int sb = b->digits[0] ? (b->negative ? -1 : 1) : 0;

	if (sa != sb)
		return sa < sb ? -1 : 1;
	return sa < 0 ? -cmp_magnitude(a, b) : cmp_magnitude(a, b);
}

/* --- CIDRs: net/netip.ParsePrefix ------------------------------------------------------ */

/* parseIPv4Fields over s[0..n): four decimal octets, no leading zeros. */
static bool parse_ipv4(const char *s, size_t n, uint8_t out[4])
{
	unsigned val = 0, pos = 0, dig = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			if (dig == 1 && val == 0)
				return false;
			val = val * 10 + (unsigned)(s[i] - '0');
			dig++;
			if (val > 255)
				return false;
		} else if (s[i] == '.') {
			if (i == 0 || i == n - 1 || s[i - 1] == '.' || pos == 3)
				return false;
			out[pos++] = (uint8_t)val;
			val = dig = 0;
		} else {
			return false;
		}
	}
	if (pos < 3)
		return false;
	out[3] = (uint8_t)val;
	return true;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* One hex group at *p (1 to 4 digits): its value, or -1. */
static long ipv6_group(const char **p, const char *end)
{
	long acc = 0;
	int n = 0;

	for (; *p < end && hex_value(**p) >= 0; (*p)++) {
		if (++n > 4)
			return -1;
		acc = acc * 16 + hex_value(**p);
	}
	return n ? acc : -1;
}

/* Expands "::" at ellipsis; false when the address is too short or "::" stands for nothing. */
static bool ipv6_expand(uint8_t ip[16], int i, int ellipsis)
{
	int n = 16 - i;

	if (i == 16)
		return ellipsis < 0;
	if (ellipsis < 0)
		return false;
	memmove(ip + ellipsis + n, ip + ellipsis, (size_t)(i - ellipsis));
	memset(ip + ellipsis, 0, (size_t)n);
	return true;
}

/* parseIPv6 over s[0..n) (no zone: a '%' is not part of the grammar here). */
static bool parse_ipv6(const char *s, size_t n, uint8_t ip[16])
{
	const char *p = s, *end = s + n;
	int i = 0, ellipsis = -1;
	long g;

	if (n >= 2 && p[0] == ':' && p[1] == ':') {
		ellipsis = 0;
		p += 2;
		if (p == end)
			return ipv6_expand(ip, 0, 0);
	}
	while (i < 16) {
		const char *start = p;

		g = ipv6_group(&p, end);
		if (g < 0)
			return false;
		if (p < end && *p == '.') {
			if ((ellipsis < 0 && i != 12) || i + 4 > 16 ||
			    !parse_ipv4(start, (size_t)(end - start), ip + i))
				return false;
			i += 4;
			p = end;
			break;
		}
		ip[i++] = (uint8_t)(g >> 8);
		ip[i++] = (uint8_t)g;
		if (p == end)
			break;
		if (*p != ':' || p + 1 == end)
			return false;
		if (*++p == ':') {
			if (ellipsis >= 0)
				return false;
			ellipsis = i;
			if (++p == end)
				break;
		}
	}
	return p == end && ipv6_expand(ip, i, ellipsis);
}

/* netip.ParseAddr on s[0..n): the first '.', ':' or '%' decides. *v6 tells which. */
static bool parse_addr(const char *s, size_t n, uint8_t ip[16], bool *v6)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '.') {
			*v6 = false;
			return parse_ipv4(s, n, ip);
		}
		if (s[i] == ':') {
			*v6 = true;
			/* a zone ("%eth0") is refused in prefixes, and '%' is no hex digit */
			return !memchr(s, '%', n) && parse_ipv6(s, n, ip);
		}
		if (s[i] == '%')
			return false;
	}
	return false;
}

bool api_cel_is_cidr(const char *s)
{
	static const uint8_t v4_in_v6[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	const char *slash = strrchr(s, '/'), *bits;
	uint8_t ip[16] = { 0 };
	bool v6 = false;
	long n = 0;

	if (!slash || !parse_addr(s, (size_t)(slash - s), ip, &v6))
		return false;
	bits = slash + 1;
	/* Atoi accepts signs and leading zeros; ParsePrefix does not */
	if (!*bits || (bits[1] && (bits[0] < '1' || bits[0] > '9')))
		return false;
	for (const char *p = bits; *p; p++) {
		if (*p < '0' || *p > '9' || n > 1000)
			return false;
		n = n * 10 + (*p - '0');
	}
	if (n > (v6 ? 128 : 32))
		return false;
	return !(v6 && memcmp(ip, v4_in_v6, sizeof(v4_in_v6)) == 0);
}

/* --- Go's formatting ---------------------------------------------------------------------- */

size_t api_cel_runes(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* The code point at s (1 to 4 bytes, *len set), or -1 for an invalid sequence. */
static long utf8_decode(const unsigned char *s, size_t *len)
{
	static const struct {
		unsigned char mask, lead;
		long min;
	} forms[] = { { 0xe0, 0xc0, 0x80 }, { 0xf0, 0xe0, 0x800 }, { 0xf8, 0xf0, 0x10000 } };
	long r;

	for (size_t k = 0; k < ARRAY_SIZE(forms); k++) {
		if ((s[0] & forms[k].mask) != forms[k].lead)
			continue;
		r = s[0] & (0x3f >> (k + 1));
		for (size_t i = 1; i <= k + 1; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return -1;
			r = r << 6 | (s[i] & 0x3f);
		}
		*len = k + 2;
		if (r < forms[k].min || r > 0x10ffff || (r >= 0xd800 && r <= 0xdfff))
			return -1;
		return r;
	}
	return -1;
}

/* unicode.IsPrint for code points >= 0x80, for the common non-printable ranges. */
static bool go_is_print(long r)
{
	static const long hidden[][2] = {
		{ 0x80, 0xa0 },       { 0xad, 0xad },        { 0x600, 0x605 },   { 0x61c, 0x61c },
		{ 0x6dd, 0x6dd },     { 0x70f, 0x70f },      { 0x1680, 0x1680 }, { 0x180e, 0x180e },
		{ 0x2000, 0x200f },   { 0x2028, 0x202f },    { 0x205f, 0x206f }, { 0x3000, 0x3000 },
		{ 0xe000, 0xf8ff },   { 0xfeff, 0xfeff },    { 0xfff9, 0xfffb }, { 0xfffe, 0xffff },
		{ 0xe0000, 0xe007f }, { 0xf0000, 0x10ffff },
	};

	for (size_t i = 0; i < ARRAY_SIZE(hidden); i++)
		if (r >= hidden[i][0] && r <= hidden[i][1])
			return false;
	return true;
}

static void quote_ascii(unsigned char c, struct buf *out)
{
	static const char esc[] = { ['\a'] = 'a', ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n',
		                    ['\r'] = 'r', ['\t'] = 't', ['\v'] = 'v' };

	if (c == '"' || c == '\\')
		buf_printf(out, "\\%c", c);
	else if (c >= 0x20 && c < 0x7f)
		buf_append_char(out, (char)c);
	else if (c < sizeof(esc) && esc[c])
		buf_printf(out, "\\%c", esc[c]);
	else
		buf_printf(out, "\\x%02x", c);
}

void api_cel_quote(const char *s, struct buf *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len;
	long r;

	buf_append_char(out, '"');
	while (*p) {
		if (*p < 0x80) {
			quote_ascii(*p++, out);
			continue;
		}
		r = utf8_decode(p, &len);
		if (r < 0)
			buf_printf(out, "\\x%02x", *p), len = 1;
		else if (go_is_print(r))
			buf_append(out, p, len);
		else
			buf_printf(out, r < 0x10000 ? "\\u%04lx" : "\\U%08lx", r);
		p += len;
	}
	buf_append_char(out, '"');
}

void api_cel_format_float(double v, struct buf *out)
{
	char tmp[48], digits[24];
	int prec, exp, nd = 0;
	const char *e;

	if (v == 0) {
		buf_append_str(out, signbit(v) ? "-0" : "0");
		return;
	}
	for (prec = 1; prec < 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, v);
	e = strchr(tmp, 'e');
	exp = (int)strtol(e + 1, NULL, 10);
	for (const char *p = tmp; p < e; p++)
		if (isdigit((unsigned char)*p))
			digits[nd++] = *p;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	if (v < 0)
		buf_append_char(out, '-');
	if (exp < -4 || exp >= 6) { /* %e: d.ddde+XX */
		buf_printf(out, "%c%s%.*s", digits[0], nd > 1 ? "." : "", nd - 1, digits + 1);
		buf_printf(out, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
	} else if (exp >= 0) { /* %f: digits, then zeros or a decimal point */
		buf_printf(out, "%.*s", exp + 1 < nd ? exp + 1 : nd, digits);
		for (int i = nd; i < exp + 1; i++)
			buf_append_char(out, '0');
		if (nd > exp + 1)
			buf_printf(out, ".%s", digits + exp + 1);
	} else {
		buf_append_str(out, "0.");
		for (int i = -1; i > exp; i--)
			buf_append_char(out, '0');
		buf_append_str(out, digits);
	}
}
