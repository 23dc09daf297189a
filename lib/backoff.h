/*
 * backoff: exponential backoff with jitter and a cap, as a small value type.
 *
 *   struct backoff b;
 *   backoff_init(&b, 5, 1000 * 1000, 2.0, 0.1, seed);
 *   delay = backoff_next(&b);   (5, 10, 20, … ms, each ±10 %, never above 1000 s)
 *   backoff_reset(&b);          (after a success: the next delay is base again)
 *
 * The delay for attempt n (counting from 0) is base * factor^n, capped at cap; jitter j
 * then moves it uniformly within ±j of itself, and the result is clamped to [0, cap].
 * Fractions of a millisecond are dropped. The random numbers come from a splitmix64
 * generator seeded explicitly, so a given seed always yields the same delays (tests
 * compare exact sequences); jitter 0 draws nothing.
 *
 * No allocation, no clock, no locking: embed one per retried thing and guard it like
 * the rest of its owner.
 */
#ifndef REDIS_OPERATOR_BACKOFF_H
#define REDIS_OPERATOR_BACKOFF_H

#include <stdint.h>

struct backoff {
	int64_t base_ms, cap_ms; /* first delay; the most any delay may be */
	double factor;           /* growth per attempt, >= 1 */
	double jitter;           /* 0..1: the fraction a delay may move up or down */
	unsigned attempts;       /* delays handed out since init/reset; saturates */
	uint64_t rng;            /* splitmix64 state */
};

/*
 * Out-of-range settings are clamped rather than refused: negative base or cap → 0,
 * cap below base → base, factor below 1 or NaN → 1, jitter outside 0..1 or NaN → 0 or 1.
 */
void backoff_init(struct backoff *b, int64_t base_ms, int64_t cap_ms, double factor, double jitter,
                  uint64_t seed);
/* The delay before the next attempt, in [0, cap_ms]; counts the attempt. */
int64_t backoff_next(struct backoff *b);
/* Forgets the attempts (the next delay is base again); the random sequence goes on. */
void backoff_reset(struct backoff *b);

/* One step of splitmix64 over *state: exposed for other modules that need a seeded,
 * reproducible stream (never for anything secret). */
uint64_t backoff_rand64(uint64_t *state);

#endif
