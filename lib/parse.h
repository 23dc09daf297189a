/*
 * parse: strict parsers for the values people type into flags, environment
 * variables and resource specs.
 *
 *   int64_t n;
 *   if (parse_int64(text, 1, 64, &n, &e) < 0) ... e.msg: "0 is below the minimum 1"
 *
 * Every parser takes a NUL-terminated string and returns 0, -EINVAL (not the syntax)
 * or -ERANGE (the syntax, but a value out of range: overflow, below a minimum, a
 * negative duration or size). The optional `struct err *` gets a message that quotes
 * the input (escaped, truncated) and says why, without naming the field: the caller
 * prefixes "--flag: " or "spec.x: ". Outputs are written only on success.
 * Nothing accepts surrounding whitespace, a '+' sign on integers, or trailing junk.
 *
 * Durations are Go's syntax ("250ms", "1m30s", "1h2m3.5s"; units ns us µs ms s m h),
 * plus "d" (24h) for retention periods. A bare "0" is the only number without a unit.
 * Negative durations are rejected. The value is computed exactly in nanoseconds (the
 * total may not pass Go's limit, INT64_MAX ns, about 292 years) and then rounded to
 * the nearest millisecond, halves up: "499us" → 0, "500us" → 1, "1.5ms" → 2.
 *
 * Quantities are Kubernetes resource quantities: a decimal number with an optional
 * sign and fraction, then one suffix: binary Ki Mi Gi Ti Pi Ei, decimal n u m "" k M G
 * T P E, or an exponent e<int>/E<int> ("2e3", "1E-3"; "1E" alone is exa). They are
 * held exactly, with no floating point: "1.5G" is 15 * 10^8. Conversions round up to
 * the unit asked for, as Kubernetes does ("0.5" bytes → 1, "0.1m" CPU → 1m).
 *
 * Pure functions with no state: any thread.
 */
#ifndef REDIS_OPERATOR_PARSE_H
#define REDIS_OPERATOR_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct err;

/* Longest quantity text accepted. */
#define PARSE_QUANTITY_MAX_LEN 64
/* Largest |exponent| accepted in "1e<exp>" quantities. */
#define PARSE_QUANTITY_MAX_EXP 1000
/* Bytes parse_quote() writes at most, NUL included. */
#define PARSE_QUOTE_MAX 80

/*
 * A quantity's exact value: (negative ? -1 : 1) * digits * 10^exp10 * 2^exp2.
 * digits holds the significant decimal digits as ASCII, without leading or trailing
 * zeros ("" for zero, which is never negative). exp2 is 0, 10, 20, ..., 60.
 */
struct quantity {
	bool negative;
	char digits[PARSE_QUANTITY_MAX_LEN + 1];
	int32_t exp10;
	uint8_t exp2;
};

/* Decimal integer in [min, max]: "-42", "007"; not "+1", " 1", "1k", "0x10". */
int parse_int64(const char *s, int64_t min, int64_t max, int64_t *out, struct err *e);
/* Decimal integer in [min, max], no sign at all. */
int parse_uint64(const char *s, uint64_t min, uint64_t max, uint64_t *out, struct err *e);
/* true false yes no on off 1 0, and "True"/"False" as Kubernetes writes them. */
int parse_bool(const char *s, bool *out, struct err *e);
/* Go-style duration, rounded to milliseconds (see above). */
int parse_duration_ms(const char *s, int64_t *out_ms, struct err *e);
/* Any Kubernetes quantity, negative ones included, at most PARSE_QUANTITY_MAX_LEN chars. */
int parse_quantity(const char *s, struct quantity *out, struct err *e);
/* A quantity as whole bytes, rounded up: "1.5Gi", "512Mi", "1e9". Negative → -ERANGE. */
int parse_quantity_bytes(const char *s, uint64_t *out, struct err *e);
/* A quantity in thousandths, rounded up (CPU): "100m" → 100, "2" → 2000. Negative → -ERANGE. */
int parse_quantity_milli(const char *s, int64_t *out_milli, struct err *e);

/*
 * Writes s into out as a double-quoted string for messages: '"', '\\', control and
 * non-ASCII bytes escaped (\n, \xNN), cut with "..." to fit outlen (PARSE_QUOTE_MAX
 * is a good size). Returns out. s == NULL prints (null).
 */
const char *parse_quote(const char *s, char *out, size_t outlen);

#endif
