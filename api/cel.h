/*
 * cel: the functions the CRDs' validation rules and schema patterns call, as the API
 * server computes them, so api/ reaches the same verdicts on the same text.
 *
 *   int64_t ns;
 *   struct api_cel_quantity a, b;
 *   api_cel_duration_ns("1m30s", &ns)             Go time.ParseDuration, exact
 *   api_cel_quantity_parse("1Gi", &a)             resource.ParseQuantity, quirks included
 *   api_cel_quantity_cmp(&a, &b)                  Quantity.Cmp: -1, 0, 1
 *   api_cel_is_cidr("10.0.0.0/8")                 CEL isCIDR (net/netip.ParsePrefix)
 *   api_cel_matches("^[a-z]+$", s)                Go regexp search (the RE2 subset below)
 *
 * Why not lib/parse: lib/parse is the strict parser for what people type; the API server
 * is not strict in the same places. It reads "." and "-" as the quantity 0, "1e2000" as a
 * (huge) quantity, rounds every quantity up to a multiple of 10^-9 and caps binary-suffixed
 * ones (Ki..Ei) at 2^63-1; its durations are exact nanoseconds computed with Go's own
 * float64 arithmetic for fractions. Verdicts near those edges differ, so the rules use
 * these copies of the server's algorithms; decoded values (bytes, ms) still come from
 * lib/parse.
 *
 * Regular expressions: the patterns are RE2 (Go) syntax; they are translated to POSIX
 * EREs for regcomp(3) in the C locale. The subset: literals, ^ $ . ( ) | ? * + {m,n},
 * bracket classes with ranges and [:class:] names, the escapes \s \S \d \. \* \+ \? \(
 * \) \[ \] \{ \} \| \\ \/ \- \^ \$ and \xHH, and the group (?i:...) (ASCII letters only).
 * Anything else is -ENOTSUP, never a silent mistranslation; the unit tests translate
 * every pattern of the three CRDs. \s is RE2's [\t\n\f\r ] (no \v). Whether a pattern
 * matches at all does not depend on RE2's leftmost-first or POSIX's leftmost-longest
 * rule, so verdicts agree. Strings are C strings: a NUL can never match.
 *
 * Messages: api_cel_quote is Go's strconv.Quote (%q) and api_cel_format_float Go's %v of
 * a float64, so error lines read exactly as the API server writes them.
 *
 * Pure functions without state: any thread. Each api_cel_matches call compiles its
 * pattern (tens of microseconds; the cron pattern about a millisecond).
 */
#ifndef REDIS_OPERATOR_API_CEL_H
#define REDIS_OPERATOR_API_CEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

/* Longest quantity text api_cel_quantity_parse reads; longer text is -E2BIG. The schemas
 * cap every quantity at 64 characters, and a longer one blocks the rules anyway. */
#define API_CEL_QUANTITY_MAX_LEN 128
/* Digits a normalized quantity may hold: the text's digits, times 2^60, rounded. */
#define API_CEL_QUANTITY_DIGITS (API_CEL_QUANTITY_MAX_LEN + 24)

/*
 * A quantity as the API server compares it: (negative ? -1 : 1) * digits * 10^exp10,
 * already rounded up to a multiple of 10^-9 and capped. digits has no leading or trailing
 * zeros; zero is "" (never negative).
 */
struct api_cel_quantity {
	bool negative;
	char digits[API_CEL_QUANTITY_DIGITS + 1];
	int64_t exp10;
};

/* Go's time.ParseDuration: 0, -EINVAL (syntax) or -ERANGE (beyond int64 nanoseconds). */
int api_cel_duration_ns(const char *s, int64_t *ns);

/* resource.ParseQuantity (isQuantity is "returns 0"): 0, -EINVAL or -E2BIG. */
int api_cel_quantity_parse(const char *s, struct api_cel_quantity *out);
/* Quantity.Cmp: -1, 0 or 1 as a <, == or > b. */
int api_cel_quantity_cmp(const struct api_cel_quantity *a, const struct api_cel_quantity *b);

/* CEL isCIDR(s): netip.ParsePrefix accepts it and it is not an IPv4-mapped IPv6 prefix. */
bool api_cel_is_cidr(const char *s);

/*
 * Go's regexp.MatchString(pattern, s) (a search, not a full match; anchor with ^ $):
 * 1 matches, 0 does not, -ENOTSUP for a pattern outside the subset above.
 */
int api_cel_matches(const char *pattern, const char *s);
/* Appends the POSIX ERE that api_cel_matches compiles for pattern: 0 or -ENOTSUP. */
int api_cel_regex_to_posix(const char *pattern, struct buf *out);

/* Unicode code points in s (CEL size() of a string; OpenAPI minLength/maxLength). */
size_t api_cel_runes(const char *s);

/* Appends Go's strconv.Quote(s): "...", with \n \t \x01 \u00ad escapes. */
void api_cel_quote(const char *s, struct buf *out);
/* Appends Go's %v of a float64: 2.5, 100000, 1e+06, 1e-05. */
void api_cel_format_float(double v, struct buf *out);

#endif
