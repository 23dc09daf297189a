/*
 * tz: TZif files and POSIX TZ rules (see tz.h). A zone is its transitions (ascending
 * instants, each with an index into the local time types) and, after the last one, the
 * footer's rule. Everything is copied out of the file's bytes: the struct owns its arrays.
 */
#include "tz.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/file.h"

#define TZ_HEADER       44
#define TZ_MAX_TRANS    20000
#define TZ_RULE_HOURS   167 /* v3: a rule's time may be -167..167 hours */
#define TZ_OFFSET_HOURS 24

struct tz_type {
	int32_t utoff;
	bool isdst;
};

/* One end of the DST period of a POSIX rule: Jn, n or Mm.w.d, at time (local seconds). */
struct tz_rdate {
	char kind; /* 'J', 'N' (zero-based day of the year), 'M' */
	int n, m, w, d;
	int32_t time;
};

struct tz_rule {
	bool set;
	bool has_dst;
	int32_t std_off, dst_off; /* seconds east of UTC */
	struct tz_rdate start, end;
};

struct tz {
	char name[TZ_NAME_MAX + 1];
	int64_t *trans;
	unsigned char *idx;
	size_t n_trans;
	struct tz_type *types;
	size_t n_types;
	struct tz_rule rule;
};

/* --- calendar ------------------------------------------------------------------------------ */

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* x mod 7 in 0..6: weekdays, with 1970-01-01 (day 0) a Thursday (4). */
static int mod7(int64_t x)
{
	return (int)(x - 7 * floor_div(x, 7));
}

static bool is_leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int tz_days_in_month(int year, int mon)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	return mon == 2 && is_leap(year) ? 29 : days[mon - 1];
}

/* Days since 1970-01-01 (H. Hinnant's days_from_civil). */
int64_t tz_days_from_civil(int year, int mon, int mday)
{
	int64_t y = (int64_t)year - (mon <= 2);
	int64_t era = floor_div(y, 400);
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (mon + (mon > 2 ? -3 : 9)) + 2) / 5 + mday - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + doe - 719468;
}

void tz_to_civil(int64_t s, struct tz_civil *out)
{
	int64_t days = floor_div(s, 86400), secs = s - days * 86400;
	int64_t z = days + 719468, era = floor_div(z, 146097), doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	int mon = (int)(mp < 10 ? mp + 3 : mp - 9);

	out->year = (int)(yoe + era * 400 + (mon <= 2));
	out->mon = mon;
	out->mday = (int)(doy - (153 * mp + 2) / 5 + 1);
	out->hour = (int)(secs / 3600);
	out->min = (int)(secs / 60 % 60);
	out->sec = (int)(secs % 60);
	out->wday = mod7(days + 4);
}

int64_t tz_from_civil(const struct tz_civil *c)
{
	return tz_days_from_civil(c->year, c->mon, c->mday) * 86400 + c->hour * 3600 + c->min * 60 +
	       c->sec;
}

/* --- names ------------------------------------------------------------------------------- */

static bool name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '+' || c == '-';
}

int tz_name_check(const char *name, struct err *e)
{
	size_t len = name ? strlen(name) : 0;
	int parts = 1;

	if (len == 0 || len > TZ_NAME_MAX)
		return err_set(e, -EINVAL, "time zone name: must be 1 to %d characters",
		               TZ_NAME_MAX);
	for (size_t i = 0; i < len; i++) {
		bool start = i == 0 || name[i - 1] == '/';

		if (name[i] == '/' && !start && i + 1 < len && ++parts <= 3)
			continue;
		if (name_char(name[i]) && !(start && name[i] == '-'))
			continue;
		return err_set(e, -EINVAL,
		               "time zone \"%.64s\": not an IANA zone name (such as Europe/Paris: "
		               "letters, digits, _+- in up to 3 parts separated by /)",
		               name);
	}
	return 0;
}

/* --- the POSIX TZ string of the footer -------------------------------------------------- */

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

/* An abbreviation: 3+ letters, or <...> of letters, digits, + and -. */
static bool parse_abbr(const char **sp)
{
	const char *s = *sp;
	size_t n = 0;

	if (*s == '<') {
		for (s++; *s && *s != '>'; s++, n++)
			if (!name_char(*s))
				return false;
		if (*s != '>' || n < 3)
			return false;
		*sp = s + 1;
		return true;
	}
	while ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'))
		s++, n++;
	*sp = s;
	return n >= 3;
}

/* [+-]hh[:mm[:ss]] with hh <= max_hours, in seconds. */
static bool parse_hms(const char **sp, int max_hours, int32_t *out)
{
	const char *s = *sp;
	int sign = 1, part[3] = { 0, 0, 0 }, np = 0;

	if (*s == '+' || *s == '-')
		sign = *s++ == '-' ? -1 : 1;
	while (np < 3) {
		int v = 0, nd = 0;

		for (; digit(*s) && nd < 3; s++, nd++)
			v = v * 10 + (*s - '0');
		if (nd == 0 || (np > 0 && (nd != 2 || v > 59)) || (np == 0 && v > max_hours))
			return false;
		part[np++] = v;
		if (*s != ':')
			break;
		s++;
	}
	*out = sign * (part[0] * 3600 + part[1] * 60 + part[2]);
	*sp = s;
	return true;
}

static bool parse_num(const char **sp, int lo, int hi, int *out)
{
	const char *s = *sp;
	int v = 0, nd = 0;

	for (; digit(*s) && nd < 4; s++, nd++)
		v = v * 10 + (*s - '0');
	if (nd == 0 || v < lo || v > hi)
		return false;
	*out = v;
	*sp = s;
	return true;
}

static bool parse_rdate(const char **sp, struct tz_rdate *r)
{
	const char *s = *sp;

	r->time = 7200;
	if (*s == 'M') {
		s++;
		r->kind = 'M';
		if (!parse_num(&s, 1, 12, &r->m) || *s++ != '.' || !parse_num(&s, 1, 5, &r->w) ||
		    *s++ != '.' || !parse_num(&s, 0, 6, &r->d))
			return false;
	} else if (*s == 'J') {
		s++;
		r->kind = 'J';
		if (!parse_num(&s, 1, 365, &r->n))
			return false;
	} else {
		r->kind = 'N';
		if (!parse_num(&s, 0, 365, &r->n))
			return false;
	}
	if (*s == '/' && (s++, !parse_hms(&s, TZ_RULE_HOURS, &r->time)))
		return false;
	*sp = s;
	return true;
}

/* "STDoff[DST[off][,start[/time],end[/time]]]"; an empty string sets no rule. */
static bool parse_rule(const char *s, struct tz_rule *r)
{
	int32_t off;

	memset(r, 0, sizeof(*r));
	if (*s == '\0')
		return true;
	if (!parse_abbr(&s) || !parse_hms(&s, TZ_OFFSET_HOURS, &off))
		return false;
	r->set = true;
	r->std_off = r->dst_off = -off;
	if (*s == '\0')
		return true;
	if (!parse_abbr(&s))
		return false;
	r->has_dst = true;
	r->dst_off = r->std_off + 3600;
	if (*s != ',' && *s != '\0') {
		if (!parse_hms(&s, TZ_OFFSET_HOURS, &off))
			return false;
		r->dst_off = -off;
	}
	if (*s == '\0') /* POSIX leaves it to us: the US rule, as glibc does */
		s = ",M3.2.0,M11.1.0";
	if (*s++ != ',' || !parse_rdate(&s, &r->start) || *s++ != ',' || !parse_rdate(&s, &r->end))
		return false;
	return *s == '\0';
}

/* Days since the epoch of rule date r in year. */
static int64_t rdate_day(const struct tz_rdate *r, int year)
{
	int64_t jan1 = tz_days_from_civil(year, 1, 1), first;
	int day;

	if (r->kind == 'J')
		return jan1 + r->n - 1 + (is_leap(year) && r->n >= 60);
	if (r->kind == 'N')
		return jan1 + r->n;
	first = tz_days_from_civil(year, r->m, 1);
	day = 1 + mod7(r->d - mod7(first + 4));
	day += (r->w - 1) * 7;
	while (day > tz_days_in_month(year, r->m))
		day -= 7;
	return first + day - 1;
}

static int32_t rule_offset(const struct tz_rule *r, int64_t t)
{
	struct tz_civil c;
	int64_t start, end;
	bool dst;

	if (!r->has_dst)
		return r->std_off;
	tz_to_civil(t + r->std_off, &c);
	/* Each end is written in the local time in effect just before it. */
	start = rdate_day(&r->start, c.year) * 86400 + r->start.time - r->std_off;
	end = rdate_day(&r->end, c.year) * 86400 + r->end.time - r->dst_off;
	dst = start < end ? (t >= start && t < end) : !(t >= end && t < start);
	return dst ? r->dst_off : r->std_off;
}

/* --- TZif ------------------------------------------------------------------------------ */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
	return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

struct tzif_counts {
	uint32_t isut, isstd, leap, time, type, chars;
};

/* The header at p; its data block's size for time size ts (4 or 8) in *block. */
static bool read_header(const unsigned char *p, size_t len, size_t ts, struct tzif_counts *c,
                        size_t *block)
{
	if (len < TZ_HEADER || memcmp(p, "TZif", 4) != 0)
		return false;
	c->isut = be32(p + 20);
	c->isstd = be32(p + 24);
	c->leap = be32(p + 28);
	c->time = be32(p + 32);
	c->type = be32(p + 36);
	c->chars = be32(p + 40);
	if (c->time > TZ_MAX_TRANS || c->type == 0 || c->type > 256 || c->leap > TZ_MAX_TRANS ||
	    c->chars > 65536 || c->isut > c->type || c->isstd > c->type)
		return false;
	*block = c->time * ts + c->time + c->type * 6 + c->chars + c->leap * (ts + 4) + c->isstd +
	         c->isut;
	return TZ_HEADER + *block <= len;
}

/* Copies the transitions and types of the data block at p into z. */
static bool read_block(struct tz *z, const unsigned char *p, size_t ts, const struct tzif_counts *c)
{
	const unsigned char *idx = p + c->time * ts, *types = idx + c->time;

	z->n_trans = c->time;
	z->n_types = c->type;
	z->trans = xcalloc(c->time ? c->time : 1, sizeof(*z->trans));
	z->idx = xcalloc(c->time ? c->time : 1, 1);
	z->types = xcalloc(c->type, sizeof(*z->types));
	for (size_t i = 0; i < c->time; i++) {
		z->trans[i] = ts == 8 ? be64(p + i * 8) : (int32_t)be32(p + i * 4);
		z->idx[i] = idx[i];
		if (idx[i] >= c->type || (i > 0 && z->trans[i] <= z->trans[i - 1]))
			return false;
	}
	for (size_t i = 0; i < c->type; i++) {
		int32_t off = (int32_t)be32(types + i * 6);

		if (off < -25 * 3600 || off > 26 * 3600)
			return false;
		z->types[i].utoff = off;
		z->types[i].isdst = types[i * 6 + 4] != 0;
	}
	return true;
}

/* The footer after the v2+ block: "\n<POSIX TZ>\n". */
static bool read_footer(struct tz *z, const unsigned char *p, size_t len)
{
	char text[128];
	const unsigned char *nl;

	if (len < 2 || p[0] != '\n')
		return false;
	nl = memchr(p + 1, '\n', len - 1);
	if (!nl || (size_t)(nl - p - 1) >= sizeof(text))
		return false;
	memcpy(text, p + 1, (size_t)(nl - p - 1));
	text[nl - p - 1] = '\0';
	return parse_rule(text, &z->rule);
}

static int parse_into(struct tz *z, const unsigned char *data, size_t len, struct err *e)
{
	struct tzif_counts c;
	size_t block;

	if (!read_header(data, len, 4, &c, &block))
		return err_set(e, -EINVAL, "time zone %s: not a TZif file, or a damaged one",
		               z->name);
	if (data[4] == '\0')
		return read_block(z, data + TZ_HEADER, 4, &c)
		               ? 0
		               : err_set(e, -EINVAL, "time zone %s: bad transition data", z->name);
	data += TZ_HEADER + block;
	len -= TZ_HEADER + block;
	if (!read_header(data, len, 8, &c, &block))
		return err_set(e, -EINVAL, "time zone %s: damaged 64-bit header", z->name);
	if (!read_block(z, data + TZ_HEADER, 8, &c))
		return err_set(e, -EINVAL, "time zone %s: bad transition data", z->name);
	if (!read_footer(z, data + TZ_HEADER + block, len - TZ_HEADER - block))
		return err_set(e, -EINVAL, "time zone %s: bad POSIX TZ footer", z->name);
	return 0;
}

int tz_parse(const char *name, const unsigned char *data, size_t len, struct tz **out,
             struct err *e)
{
	struct tz *z;
	int rc;

	if (tz_name_check(name, e) < 0)
		return -EINVAL;
	z = xcalloc(1, sizeof(*z));
	memcpy(z->name, name, strlen(name) + 1);
	rc = parse_into(z, data, len, e);
	if (rc < 0) {
		tz_free(z);
		return rc;
	}
	*out = z;
	return 0;
}

int tz_load(const char *name, struct tz **out, struct err *e)
{
	char path[sizeof(TZ_ZONEINFO_DIR) + TZ_NAME_MAX + 2], *data = NULL;
	struct err fe = { 0 };
	size_t len = 0;
	int rc;

	if (tz_name_check(name, e) < 0)
		return -EINVAL;
	if (strcmp(name, "UTC") == 0) {
		struct tz *z = xcalloc(1, sizeof(*z));

		memcpy(z->name, "UTC", 4);
		z->types = xcalloc(1, sizeof(*z->types));
		z->n_types = 1;
		*out = z;
		return 0;
	}
	memcpy(path, TZ_ZONEINFO_DIR "/", sizeof(TZ_ZONEINFO_DIR));
	memcpy(path + sizeof(TZ_ZONEINFO_DIR), name, strlen(name) + 1);
	rc = file_read_all(path, TZ_FILE_MAX, &data, &len, &fe);
	if (rc == -ENOENT || rc == -EISDIR || rc == -ENOTDIR)
		return err_set(e, -ENOENT, "time zone %s: unknown (no %s)", name, path);
	if (rc < 0)
		return err_set(e, rc, "time zone %s: %s", name, fe.msg);
	rc = tz_parse(name, (const unsigned char *)data, len, out, e);
	free(data);
	return rc;
}

void tz_free(struct tz *z)
{
	if (!z)
		return;
	free(z->trans);
	free(z->idx);
	free(z->types);
	free(z);
}

const char *tz_name(const struct tz *z)
{
	return z->name;
}

/* --- conversions ------------------------------------------------------------------------- */

int32_t tz_offset(const struct tz *z, int64_t utc_s)
{
	size_t lo = 0, hi = z->n_trans;

	if (z->n_trans == 0)
		return z->rule.set ? rule_offset(&z->rule, utc_s) : z->types[0].utoff;
	if (utc_s < z->trans[0])
		return z->types[0].utoff;
	if (utc_s >= z->trans[z->n_trans - 1] && z->rule.set)
		return rule_offset(&z->rule, utc_s);
	while (hi - lo > 1) { /* the last transition <= utc_s */
		size_t mid = lo + (hi - lo) / 2;

		if (z->trans[mid] <= utc_s)
			lo = mid;
		else
			hi = mid;
	}
	return z->types[z->idx[lo]].utoff;
}

int64_t tz_to_local(const struct tz *z, int64_t utc_s)
{
	return utc_s + tz_offset(z, utc_s);
}

int tz_first_instant(const struct tz *z, int64_t local_s, int64_t *utc_s)
{
	int64_t a = local_s - tz_offset(z, local_s - 86400);
	int64_t b = local_s - tz_offset(z, local_s + 86400);
	int64_t lo = a < b ? a : b, hi = a < b ? b : a;
	bool lo_ok = tz_to_local(z, lo) == local_s, hi_ok = tz_to_local(z, hi) == local_s;
	int32_t before;

	if (lo_ok || hi_ok) {
		*utc_s = lo_ok ? lo : hi;
		return 0;
	}
	/* A gap: the transition in (lo, hi] ends it; find it by bisection. */
	before = tz_offset(z, lo);
	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;

		if (tz_offset(z, mid) == before)
			lo = mid;
		else
			hi = mid;
	}
	*utc_s = hi;
	return 1;
}
