/*
 * cron: the parser (a table of the five fields, each item set into a bit mask) and the
 * search for fire times (see cron.h). The search runs on the wall clock, a day at a time,
 * then maps each matching wall-clock minute to an instant with tz_first_instant: gaps and
 * overlaps are that function's, so there is no DST case here.
 */
#include "cron.h"

#include <errno.h>
#include <string.h>

#include "lib/parse.h"

#define MAX_STEP    99
#define MAX_TRIES   4000 /* wall-clock minutes skipped at most (overlaps) */
#define DAY_MINUTES 1440

static const char *const month_names[] = { "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL",
	                                   "AUG", "SEP", "OCT", "NOV", "DEC", NULL };
static const char *const day_names[] = { "SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", NULL };

static const struct field {
	const char *name;
	int min, max;
	const char *const *names; /* names[i] is min + i */
} fields[] = {
	{ "minute", 0, 59, NULL },          { "hour", 0, 23, NULL },
	{ "day-of-month", 1, 31, NULL },    { "month", 1, 12, month_names },
	{ "day-of-week", 0, 7, day_names },
};

static const struct {
	const char *name, *expr;
} macros[] = {
	{ "@yearly", "0 0 1 1 *" }, { "@annually", "0 0 1 1 *" }, { "@monthly", "0 0 1 * *" },
	{ "@weekly", "0 0 * * 0" }, { "@daily", "0 0 * * *" },    { "@midnight", "0 0 * * *" },
	{ "@hourly", "0 * * * *" },
};

/* --- parsing ----------------------------------------------------------------------------- */

static char upper(char c)
{
	return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* A number (1-2 digits) or, where the field has them, a name; *sp moves past it. */
static int parse_value(const struct field *f, const char **sp, int *out, struct err *e)
{
	const char *s = *sp;
	int v = 0, n = 0;

	if (f->names && upper(*s) >= 'A' && upper(*s) <= 'Z') {
		for (size_t i = 0; f->names[i]; i++) {
			if (upper(s[0]) == f->names[i][0] && upper(s[1]) == f->names[i][1] &&
			    upper(s[2]) == f->names[i][2]) {
				*out = f->min + (int)i;
				*sp = s + 3;
				return 0;
			}
		}
		return err_set(e, -EINVAL, "%s: unknown name \"%.3s\"", f->name, s);
	}
	for (; *s >= '0' && *s <= '9'; s++, n++)
		v = v * 10 + (*s - '0');
	if (n == 0)
		return err_set(e, -EINVAL, "%s: expected a number%s at \"%.16s\"", f->name,
		               f->names ? " or a name" : "", *sp);
	if (n > 2 || v < f->min || v > f->max)
		return err_set(e, -EINVAL, "%s: %.8s is out of range %d-%d", f->name, *sp, f->min,
		               f->max);
	*out = v;
	*sp = s;
	return 0;
}

/* One list item [*|a[-b]][/step] of field f into bits; *sp moves to the ',' or the end. */
static int parse_item(const struct field *f, const char **sp, uint64_t *bits, struct err *e)
{
	const char *s = *sp;
	int lo = f->min, hi = f->max, step = 1;
	bool single = *s != '*';

	if (!single) {
		s++;
	} else {
		if (parse_value(f, &s, &lo, e) < 0)
			return -EINVAL;
		hi = lo;
		if (*s == '-' && (single = false, s++, parse_value(f, &s, &hi, e) < 0))
			return -EINVAL;
	}
	if (*s == '/') {
		const char *t = ++s;

		for (step = 0; *s >= '0' && *s <= '9' && s - t < 3; s++)
			step = step * 10 + (*s - '0');
		if (s == t || step < 1 || step > MAX_STEP)
			return err_set(e, -EINVAL, "%s: a step must be 1-%d", f->name, MAX_STEP);
		if (single)
			hi = f->max; /* "a/n": a-max/n */
	}
	if (*s != ',' && *s != '\0')
		return err_set(e, -EINVAL, "%s: unexpected \"%.16s\"", f->name, s);
	if (lo > hi)
		return err_set(e, -EINVAL, "%s: range %d-%d runs backwards", f->name, lo, hi);
	for (int v = lo; v <= hi; v += step)
		*bits |= (uint64_t)1 << (v == 7 && f->names == day_names ? 0 : v);
	*sp = s;
	return 0;
}

static int parse_field(const struct field *f, const char *text, uint64_t *bits, struct err *e)
{
	const char *s = text;

	for (;;) {
		if (*s == ',' || *s == '\0')
			return err_set(e, -EINVAL, "%s: empty list item", f->name);
		if (parse_item(f, &s, bits, e) < 0)
			return -EINVAL;
		if (*s == '\0')
			return 0;
		s++;
	}
}

static int parse_every(const char *d, struct cron *c, struct err *e)
{
	struct err pe = { 0 };
	int64_t ms;

	if (parse_duration_ms(d, &ms, &pe) < 0)
		return err_set(e, -EINVAL, "@every: %s", pe.msg);
	if (ms < CRON_EVERY_MIN_S * 1000)
		return err_set(e, -EINVAL, "@every: %s is shorter than %ds", d, CRON_EVERY_MIN_S);
	memset(c, 0, sizeof(*c));
	c->every_s = ms / 1000;
	return 0;
}

static int parse_fields(char *buf, struct cron *c, struct err *e)
{
	uint64_t bits[5] = { 0 };
	char *f[6];
	int n = 0;

	for (char *s = buf; *s && n < 6;) {
		while (*s == ' ' || *s == '\t')
			*s++ = '\0';
		if (*s)
			f[n++] = s;
		while (*s && *s != ' ' && *s != '\t')
			s++;
	}
	if (n != 5)
		return err_set(e, -EINVAL,
		               "expected 5 fields (minute hour day-of-month month day-of-week), "
		               "got %s%d",
		               n > 5 ? "more than " : "", n > 5 ? 5 : n);
	for (int i = 0; i < 5; i++)
		if (parse_field(&fields[i], f[i], &bits[i], e) < 0)
			return -EINVAL;
	*c = (struct cron){ .minute = bits[0],
		            .hour = (uint32_t)bits[1],
		            .dom = (uint32_t)bits[2],
		            .month = (uint16_t)bits[3],
		            .dow = (uint8_t)bits[4],
		            .dom_star = f[2][0] == '*',
		            .dow_star = f[4][0] == '*' };
	return 0;
}

int cron_parse(const char *expr, struct cron *out, struct err *e)
{
	char buf[CRON_MAX_LEN + 1];
	size_t len = expr ? strlen(expr) : 0;
	struct cron c;

	if (len == 0 || len > CRON_MAX_LEN)
		return err_set(e, -EINVAL, "schedule: must be 1 to %d characters", CRON_MAX_LEN);
	if (strncmp(expr, "@every ", 7) == 0) {
		if (parse_every(expr + 7, &c, e) < 0)
			return -EINVAL;
		*out = c;
		return 0;
	}
	if (expr[0] == '@') {
		for (size_t i = 0; i < sizeof(macros) / sizeof(macros[0]); i++)
			if (strcmp(expr, macros[i].name) == 0)
				expr = macros[i].expr;
		if (expr[0] == '@')
			return err_set(
			        e, -EINVAL,
			        "unknown macro \"%.16s\" (use @yearly, @annually, @monthly, "
			        "@weekly, @daily, @midnight, @hourly or \"@every <duration>\")",
			        expr);
		len = strlen(expr);
	}
	memcpy(buf, expr, len + 1);
	if (parse_fields(buf, &c, e) < 0)
		return -EINVAL;
	*out = c;
	return 0;
}

bool cron_is_interval(const struct cron *c)
{
	return c->every_s > 0;
}

/* --- matching on the wall clock ------------------------------------------------------------- */

static bool day_matches(const struct cron *c, int64_t day)
{
	struct tz_civil t;
	bool dom, dow;

	tz_to_civil(day * 86400, &t);
	if (!(c->month >> t.mon & 1))
		return false;
	dom = c->dom >> t.mday & 1;
	dow = c->dow >> t.wday & 1;
	return c->dom_star || c->dow_star ? dom && dow : dom || dow;
}

static bool minute_matches(const struct cron *c, int m)
{
	return (c->hour >> (m / 60) & 1) && (c->minute >> (m % 60) & 1);
}

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* The first matching wall-clock minute >= local (rounded up to a minute). */
static bool next_local(const struct cron *c, int64_t local, int64_t *out)
{
	int64_t day = floor_div(local, 86400);
	int from = (int)((local - day * 86400 + 59) / 60);

	for (int64_t d = day; d <= day + CRON_SEARCH_DAYS; d++, from = 0) {
		if (!day_matches(c, d))
			continue;
		for (int m = from; m < DAY_MINUTES; m++) {
			if (minute_matches(c, m)) {
				*out = d * 86400 + m * 60;
				return true;
			}
		}
	}
	return false;
}

/* The last matching wall-clock minute <= local. */
static bool prev_local(const struct cron *c, int64_t local, int64_t *out)
{
	int64_t day = floor_div(local, 86400);
	int to = (int)((local - day * 86400) / 60);

	for (int64_t d = day; d >= day - CRON_SEARCH_DAYS; d--, to = DAY_MINUTES - 1) {
		if (!day_matches(c, d))
			continue;
		for (int m = to; m >= 0; m--) {
			if (minute_matches(c, m)) {
				*out = d * 86400 + m * 60;
				return true;
			}
		}
	}
	return false;
}

/* --- instants ----------------------------------------------------------------------------- */

int cron_next(const struct cron *c, const struct tz *z, int64_t after_s, int64_t *out)
{
	int64_t local = floor_div(tz_to_local(z, after_s), 60) * 60, l, u;

	if (cron_is_interval(c)) {
		*out = after_s + c->every_s;
		return 0;
	}
	/* A minute whose (first) instant is not after after_s has fired already. */
	for (int i = 0; i < MAX_TRIES && next_local(c, local, &l); i++, local = l + 60) {
		tz_first_instant(z, l, &u);
		if (u > after_s) {
			*out = u;
			return 0;
		}
	}
	return -ENOENT;
}

/* An instant shows wall-clock times up to this far below ones shown before it (overlaps). */
#define OVERLAP_MAX_S (3 * 3600)

int cron_latest(const struct cron *c, const struct tz *z, int64_t after_s, int64_t at_s,
                int64_t *out)
{
	int64_t local = tz_to_local(z, at_s) + OVERLAP_MAX_S, l, u;

	if (cron_is_interval(c)) {
		if (at_s - after_s < c->every_s)
			return -ENOENT;
		*out = after_s + (at_s - after_s) / c->every_s * c->every_s;
		return 0;
	}
	/* tz_first_instant is monotonic in the wall clock: the first minute found going down
	 * whose instant is not after at_s is the latest fire time. */
	for (int i = 0; i < MAX_TRIES && prev_local(c, local, &l); i++, local = l - 60) {
		tz_first_instant(z, l, &u);
		if (u > at_s)
			continue;
		if (u <= after_s)
			return -ENOENT;
		*out = u;
		return 0;
	}
	return -ENOENT;
}
