/*
 * rfc3339: RFC 3339 times in UTC (see rfc3339.h). gmtime_r and strftime for the date,
 * the fraction by hand; timegm for the way back. No state.
 */
#include "rfc3339.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void rfc3339_format(int64_t wall_ms, enum rfc3339_precision precision, char out[RFC3339_MAX])
{
	time_t secs = (time_t)(wall_ms / 1000);
	int ms = (int)(wall_ms % 1000);
	struct tm tm;
	size_t n;

	gmtime_r(&secs, &tm);
	n = strftime(out, RFC3339_MAX, "%Y-%m-%dT%H:%M:%S", &tm);
	switch (precision) {
	case RFC3339_MILLIS: snprintf(out + n, RFC3339_MAX - n, ".%03dZ", ms); break;
	case RFC3339_MICROS: snprintf(out + n, RFC3339_MAX - n, ".%06dZ", ms * 1000); break;
	default: snprintf(out + n, RFC3339_MAX - n, "Z"); break;
	}
}

/* Exactly n decimal digits at *p into *out; advances *p. */
static int digits(const char **p, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++, (*p)++) {
		if (**p < '0' || **p > '9')
			return -EINVAL;
		v = v * 10 + (**p - '0');
	}
	*out = v;
	return 0;
}

static int expect(const char **p, char c)
{
	return *(*p)++ == c ? 0 : -EINVAL;
}

int rfc3339_parse(const char *s, int64_t *wall_ms)
{
	struct tm tm = { 0 };
	int y, mo, d, h, mi, se, frac_ms = 0;
	const char *p = s;

	if (!s || digits(&p, 4, &y) || expect(&p, '-') || digits(&p, 2, &mo) || expect(&p, '-') ||
	    digits(&p, 2, &d) || expect(&p, 'T') || digits(&p, 2, &h) || expect(&p, ':') ||
	    digits(&p, 2, &mi) || expect(&p, ':') || digits(&p, 2, &se))
		return -EINVAL;
	if (*p == '.') {
		int scale = 100;

		for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
			frac_ms += (*p - '0') * scale;
	}
	if (strcmp(p, "Z") != 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    se > 60)
		return -EINVAL;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	*wall_ms = (int64_t)timegm(&tm) * 1000 + frac_ms;
	return 0;
}
