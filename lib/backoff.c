/*
 * backoff: exponential backoff with jitter and a cap (see backoff.h).
 * Invariants after backoff_init: 0 <= base_ms <= cap_ms, factor >= 1, 0 <= jitter <= 1.
 * The exponential is computed in double and compared with the cap before any
 * conversion back to int64_t, so huge attempt counts saturate at the cap instead of
 * overflowing.
 */
#include "backoff.h"

#include <limits.h>
#include <math.h>

uint64_t backoff_rand64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1): the top 53 bits, as many as a double holds exactly. */
static double rand_unit(uint64_t *state)
{
	return (double)(backoff_rand64(state) >> 11) * 0x1.0p-53;
}

static double clamp_unit(double x)
{
	if (!(x > 0)) /* also NaN */
		return 0;
	return x > 1 ? 1 : x;
}

void backoff_init(struct backoff *b, int64_t base_ms, int64_t cap_ms, double factor, double jitter,
                  uint64_t seed)
{
	b->base_ms = base_ms > 0 ? base_ms : 0;
	b->cap_ms = cap_ms > b->base_ms ? cap_ms : b->base_ms;
	b->factor = factor >= 1 ? factor : 1; /* NaN fails the comparison too */
	if (isinf(b->factor))
		b->factor = 1;
	b->jitter = clamp_unit(jitter);
	b->attempts = 0;
	b->rng = seed;
}

/* base * factor^attempts, or the cap when that is larger (or not finite). */
static double backoff_exponential(const struct backoff *b)
{
	double d;

	if (b->base_ms == 0) /* 0 * inf would be NaN */
		return 0;
	d = (double)b->base_ms * pow(b->factor, (double)b->attempts);
	if (!(d < (double)b->cap_ms))
		return (double)b->cap_ms;
	return d;
}

int64_t backoff_next(struct backoff *b)
{
	double d = backoff_exponential(b);

	if (b->jitter > 0)
		d += d * b->jitter * (2 * rand_unit(&b->rng) - 1);
	if (b->attempts < UINT_MAX)
		b->attempts++;
	if (d <= 0)
		return 0;
	if (d >= (double)b->cap_ms)
		return b->cap_ms;
	return (int64_t)d;
}

void backoff_reset(struct backoff *b)
{
	b->attempts = 0;
}
