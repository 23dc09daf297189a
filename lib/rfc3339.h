/*
 * rfc3339: wall-clock milliseconds to and from RFC 3339 text in UTC, the form of every
 * time in the Kubernetes API (metav1.Time: seconds, "2026-11-29T17:41:23Z"; MicroTime:
 * microseconds, "2026-11-29T17:41:23.123000Z") and of the `ts` of log lines
 * (milliseconds). One formatter and one parser for the whole tree.
 *
 * Formatting truncates to the precision asked for. The parser takes the one form the
 * API server writes: "YYYY-MM-DDTHH:MM:SS", an optional fraction (a dot and any number
 * of digits, the first three of which count: milliseconds), then "Z". Offsets such as
 * "+01:00", a space for the 'T', a missing 'Z' and out-of-range fields are refused.
 * Pure functions; any thread.
 */
#ifndef REDIS_OPERATOR_RFC3339_H
#define REDIS_OPERATOR_RFC3339_H

#include <stdint.h>

/* Room for any of the forms below and the NUL (27 for microseconds). */
#define RFC3339_MAX 32

enum rfc3339_precision {
	RFC3339_SECONDS, /* "2026-11-29T17:41:23Z" (metav1.Time) */
	RFC3339_MILLIS,  /* "2026-11-29T17:41:23.123Z" (log lines) */
	RFC3339_MICROS,  /* "2026-11-29T17:41:23.123000Z" (metav1.MicroTime) */
};

/* Formats wall_ms (ms since the Unix epoch, >= 0) into out. */
void rfc3339_format(int64_t wall_ms, enum rfc3339_precision precision, char out[RFC3339_MAX]);

/*
 * Parses s (see above) into *wall_ms. 0, or -EINVAL (*wall_ms untouched) for NULL or
 * anything else:
 *   "2026-11-29T17:41:23Z" -> 1795974083000    "2026-11-29T17:41:23.5Z" -> ...083500
 *   "2026-11-29T17:41:23", "2026-11-29 17:41:23Z", "2026-11-29T17:41:23+01:00": -EINVAL
 */
int rfc3339_parse(const char *s, int64_t *wall_ms);

#endif
