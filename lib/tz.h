/*
 * tz: IANA time zones read from TZif files (RFC 8536, versions 1 to 3), for converting
 * between UTC and a zone's wall clock without the C library's process-wide TZ (setenv
 * and tzset are not thread-safe, and localtime_r would read the TZ of the whole process).
 *
 *   struct tz *z;
 *   if (tz_load("Europe/Berlin", &z, &e) < 0) ...         e.msg: "time zone ...: why"
 *   int32_t off = tz_offset(z, utc_s);                     seconds east of UTC
 *   tz_first_instant(z, local_s, &utc_s);                  wall clock -> an instant
 *   tz_free(z);
 *
 * Times are seconds since the Unix epoch. A "local" time is the wall clock written as if
 * it were UTC: 2026-03-29 03:30 in Berlin is the local time
 * tz_from_civil(&(struct tz_civil){2026, 3, 29, 3, 30, 0}).
 *
 * Names: [A-Za-z0-9_+-] components separated by '/', at most 3 components, 64 bytes; no
 * component is empty or starts with '.', so "..", "./x" and absolute paths are refused
 * before the file system is touched. "UTC" is built in (no file needed).
 *
 * The data: the 64-bit block of a v2+ file (the 32-bit block of a v1 file) gives the
 * transitions; after the last one, the POSIX TZ string of the footer (v2+) gives the rule
 * ("CET-1CEST,M3.5.0,M10.5.0/3"), including v3's hours outside 0..24. Leap-second records
 * are skipped (zoneinfo's default "right/" zones are not supported as such: their times
 * are off by the leap seconds).
 *
 * Wall clock to instant (tz_first_instant): a local time that exists once maps to that
 * instant; one that exists twice (a DST overlap, clocks set back) maps to the first of
 * the two; one that does not exist (a gap, clocks set forward) maps to the instant that
 * ends the gap, the first instant after it. This assumes no two transitions are within a
 * day of each other, which holds for every zone since 1900 that matters to a scheduler.
 *
 * A struct tz is immutable once loaded: any thread may read it; load and free are the
 * caller's to serialize.
 */
#ifndef REDIS_OPERATOR_TZ_H
#define REDIS_OPERATOR_TZ_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

#define TZ_ZONEINFO_DIR "/usr/share/zoneinfo"
#define TZ_NAME_MAX     64
#define TZ_FILE_MAX     (256 * 1024) /* the largest zone today is about 4 KiB */

struct tz;

/* A broken-down wall clock: mon 1..12, mday 1..31, wday 0 (Sunday)..6. */
struct tz_civil {
	int year, mon, mday, hour, min, sec;
	int wday; /* output only */
};

/* 0 when name is a valid zone name (see above), -EINVAL otherwise. */
int tz_name_check(const char *name, struct err *e);

/*
 * Loads zone name from TZ_ZONEINFO_DIR into *out (the caller's, tz_free). 0, or -EINVAL
 * (a bad name, not a TZif file, a malformed footer), -ENOENT (no such zone), or another
 * negative errno from reading the file; e names the zone and the reason.
 */
int tz_load(const char *name, struct tz **out, struct err *e);

/* The same from the bytes of a TZif file (pure: for tests and fuzzing). */
int tz_parse(const char *name, const unsigned char *data, size_t len, struct tz **out,
             struct err *e);

/* Frees z (NULL-safe). */
void tz_free(struct tz *z);

/* The name z was loaded as (borrowed from z). */
const char *tz_name(const struct tz *z);

/* The offset from UTC, in seconds east, at instant utc_s. */
int32_t tz_offset(const struct tz *z, int64_t utc_s);

/* utc_s as z's wall clock (local time, see above). */
int64_t tz_to_local(const struct tz *z, int64_t utc_s);

/*
 * The instant at which z's wall clock first shows local_s, or, when it never does (a
 * gap), the instant that ends the gap. Returns 0 when local_s exists, 1 when it is in a
 * gap (*utc_s is then the end of the gap).
 */
int tz_first_instant(const struct tz *z, int64_t local_s, int64_t *utc_s);

/* Calendar arithmetic (proleptic Gregorian, UTC-like seconds; any year in +-1e6). */
void tz_to_civil(int64_t s, struct tz_civil *out);
int64_t tz_from_civil(const struct tz_civil *c);
int64_t tz_days_from_civil(int year, int mon, int mday);
int tz_days_in_month(int year, int mon);

#endif
