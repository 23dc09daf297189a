/*
 * cron: standard five-field cron expressions, and when they fire in a time zone.
 *
 *   minute hour day-of-month month day-of-week      "0 3 * * *", "0-59/15 9-17 * * MON-FRI"
 *
 * Each field is a comma-separated list of items: `*`, a number, a range `a-b`, any of
 * those with a step `/n` (n 1..99; `a/n` means a-max/n), and in the month and
 * day-of-week fields the names JAN..DEC and SUN..SAT (any case). Numbers have at most two
 * digits. Day of week 0 and 7 are Sunday. Ranges run upwards ("FRI-MON" is refused).
 * Fields are separated by spaces or tabs.
 *
 * Day-of-month and day-of-week combine as in Vixie cron: when both are restricted (neither
 * field starts with `*`), a day matches if EITHER matches ("0 0 13 * FRI": every 13th and
 * every Friday); otherwise both must (so the unrestricted one matches every day). As in
 * Vixie cron, a stepped star (`*` then `/2`) starts with `*` and counts as unrestricted.
 *
 * Macros: @yearly (= @annually, "0 0 1 1 *"), @monthly ("0 0 1 * *"), @weekly ("0 0 * * 0"),
 * @daily (= @midnight, "0 0 * * *"), @hourly ("0 * * * *"); and "@every <duration>" (Go
 * syntax, at least 1m, whole seconds counted), which fires a fixed interval after the
 * previous run rather than on the clock.
 *
 * Firing in a zone: the expression is matched against the zone's wall clock (lib/tz). A
 * wall-clock time that does not exist (a DST gap) fires at the first instant after the gap;
 * one that exists twice (an overlap, clocks set back) fires once, at its first occurrence.
 * So "30 2 * * *" in Europe/Berlin fires at 03:00 CEST on 2026-03-29 and once, at 02:30
 * CEST, on 2026-10-25.
 *
 * Errors name the field and the reason:
 *   "hour: 24 is out of range 0-23", "day-of-week: unknown name \"FUN\"",
 *   "expected 5 fields (minute hour day-of-month month day-of-week), got 6"
 *
 * Pure functions over their arguments; a struct cron is plain data: any thread.
 */
#ifndef REDIS_OPERATOR_CRON_H
#define REDIS_OPERATOR_CRON_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/tz.h"

#define CRON_MAX_LEN     128
#define CRON_EVERY_MIN_S 60
/* How far ahead (and back) a fire time is looked for: covers Feb 29 across 2100. */
#define CRON_SEARCH_DAYS (366 * 12)

struct cron {
	uint64_t minute; /* bit i: minute i (0..59) */
	uint32_t hour;   /* bit i: hour i (0..23) */
	uint32_t dom;    /* bit i: day i (1..31) */
	uint16_t month;  /* bit i: month i (1..12) */
	uint8_t dow;     /* bit i: weekday i (0 Sunday..6) */
	bool dom_star, dow_star;
	int64_t every_s; /* "@every": the interval; 0 for a clock schedule */
};

/* Parses expr into *out (written only on success). 0, or -EINVAL with the reason in e. */
int cron_parse(const char *expr, struct cron *out, struct err *e);

/* true when c is "@every ...": it fires relative to a previous run, not on the clock. */
bool cron_is_interval(const struct cron *c);

/*
 * The first fire time strictly after after_s in zone z (seconds since the epoch) into
 * *out: 0, or -ENOENT when the expression never fires within CRON_SEARCH_DAYS ("0 0 30 2
 * *"). For "@every d": after_s + d.
 */
int cron_next(const struct cron *c, const struct tz *z, int64_t after_s, int64_t *out);

/*
 * The latest fire time in (after_s, at_s] into *out: 0, or -ENOENT when there is none.
 * For "@every d", the runs are after_s + k*d. What a scheduler back from downtime needs:
 * the one missed run to catch up on, however many were missed.
 */
int cron_latest(const struct cron *c, const struct tz *z, int64_t after_s, int64_t at_s,
                int64_t *out);

#endif
