/* Unit tests for lib/backoff: exact sequences, clamping, jitter bounds, the cap, reset. */
#include <limits.h>
#include <math.h>
#include <stdint.h>

#include "lib/backoff.h"
#include "unit.h"

#define SEQ_LEN 10

/* Without jitter the delays are exact; settings out of range are clamped. */
static const struct {
	const char *name;
	int64_t base, cap;
	double factor, jitter;
	int64_t want[SEQ_LEN];
} seq_cases[] = {
	{ "doubling to the cap", 5, 1000, 2, 0, { 5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000 } },
	{ "fractions dropped",
	  100,
	  1000,
	  1.5,
	  0,
	  { 100, 150, 225, 337, 506, 759, 1000, 1000, 1000, 1000 } },
	{ "factor 1 is constant", 7, 1000, 1, 0, { 7, 7, 7, 7, 7, 7, 7, 7, 7, 7 } },
	{ "cap equals base", 30, 30, 3, 0, { 30, 30, 30, 30, 30, 30, 30, 30, 30, 30 } },
	{ "base 0 stays 0", 0, 1000, 2, 0, { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 } },
	{ "negative base → 0", -5, 1000, 2, 0, { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 } },
	{ "cap below base → base", 50, 10, 2, 0, { 50, 50, 50, 50, 50, 50, 50, 50, 50, 50 } },
	{ "negative cap → base", 50, -1, 2, 0, { 50, 50, 50, 50, 50, 50, 50, 50, 50, 50 } },
	{ "factor below 1 → 1", 30, 1000, 0.5, 0, { 30, 30, 30, 30, 30, 30, 30, 30, 30, 30 } },
	{ "NaN factor → 1", 30, 1000, NAN, 0, { 30, 30, 30, 30, 30, 30, 30, 30, 30, 30 } },
	{ "infinite factor → 1",
	  30,
	  1000,
	  INFINITY,
	  0,
	  { 30, 30, 30, 30, 30, 30, 30, 30, 30, 30 } },
	{ "negative jitter → 0",
	  1,
	  100,
	  10,
	  -0.5,
	  { 1, 10, 100, 100, 100, 100, 100, 100, 100, 100 } },
	{ "NaN jitter → 0", 1, 100, 10, NAN, { 1, 10, 100, 100, 100, 100, 100, 100, 100, 100 } },
	{ "huge cap",
	  1,
	  INT64_MAX,
	  1000,
	  0,
	  { 1, 1000, 1000000, 1000000000, 1000000000000, 1000000000000000, 1000000000000000000,
	    INT64_MAX, INT64_MAX, INT64_MAX } },
};

START_TEST(exact_sequences)
{
	struct backoff b;

	backoff_init(&b, seq_cases[_i].base, seq_cases[_i].cap, seq_cases[_i].factor,
	             seq_cases[_i].jitter, 42);
	for (unsigned n = 0; n < SEQ_LEN; n++) {
		int64_t got = backoff_next(&b);

		ck_assert_msg(got == seq_cases[_i].want[n], "%s: attempt %u: got %lld want %lld",
		              seq_cases[_i].name, n, (long long)got,
		              (long long)seq_cases[_i].want[n]);
		ck_assert_uint_eq(b.attempts, n + 1);
	}
}
END_TEST

/* Jitter j keeps each delay within ±j of the nominal one, clamped to [0, cap], and
 * really moves it both ways. */
static const struct {
	double jitter;
	int64_t base, cap;
} jitter_cases[] = {
	{ 0.1, 100, 1000000 }, { 0.5, 100, 1000000 },
	{ 1.0, 100, 1000000 }, { 0.5, 1000, 1000 }, /* at the cap from the start: only downwards */
	{ 3.0, 100, 1000000 },                      /* clamped to 1 */
};

START_TEST(jitter_bounds)
{
	double j = jitter_cases[_i].jitter > 1 ? 1 : jitter_cases[_i].jitter;
	int64_t cap = jitter_cases[_i].cap;
	unsigned below = 0, above = 0;

	for (uint64_t seed = 0; seed < 200; seed++) {
		struct backoff b;
		double nominal = (double)jitter_cases[_i].base;

		backoff_init(&b, jitter_cases[_i].base, cap, 2, jitter_cases[_i].jitter, seed);
		for (int n = 0; n < 16; n++, nominal *= 2) {
			double nom = nominal < (double)cap ? nominal : (double)cap;
			int64_t d = backoff_next(&b);

			ck_assert_int_ge(d, 0);
			ck_assert_int_le(d, cap);
			ck_assert_msg((double)d >= floor(nom * (1 - j)) &&
			                      (double)d <= nom * (1 + j),
			              "seed %llu attempt %d: %lld outside %g ± %g",
			              (unsigned long long)seed, n, (long long)d, nom, j);
			below += (double)d < nom - 1;
			above += (double)d > nom;
		}
	}
	ck_assert_uint_gt(below, 100);
	if (jitter_cases[_i].base < cap)
		ck_assert_uint_gt(above, 100);
	else
		ck_assert_uint_eq(above, 0);
}
END_TEST

START_TEST(same_seed_same_delays)
{
	struct backoff a, b, c;
	unsigned differ = 0;

	backoff_init(&a, 10, 100000, 2, 0.5, 7);
	backoff_init(&b, 10, 100000, 2, 0.5, 7);
	backoff_init(&c, 10, 100000, 2, 0.5, 8);
	for (int n = 0; n < 12; n++) {
		int64_t da = backoff_next(&a);

		ck_assert_int_eq(da, backoff_next(&b));
		differ += da != backoff_next(&c);
	}
	ck_assert_uint_gt(differ, 6);
}
END_TEST

START_TEST(cap_reached_and_stays)
{
	struct backoff b;

	backoff_init(&b, 1, 1000, 2, 0, 0);
	for (int n = 0; n < 10; n++)
		ck_assert_int_lt(backoff_next(&b), 1000);
	for (int n = 0; n < 10000; n++)
		ck_assert_int_eq(backoff_next(&b), 1000);
	ck_assert_uint_eq(b.attempts, 10010);

	/* The attempt counter saturates instead of wrapping back to base. */
	b.attempts = UINT_MAX - 1;
	ck_assert_int_eq(backoff_next(&b), 1000);
	ck_assert_uint_eq(b.attempts, UINT_MAX);
	ck_assert_int_eq(backoff_next(&b), 1000);
	ck_assert_uint_eq(b.attempts, UINT_MAX);

	/* Full jitter at the cap stays within [0, cap]. */
	backoff_init(&b, 1000, 1000, 2, 1, 3);
	for (int n = 0; n < 1000; n++) {
		int64_t d = backoff_next(&b);

		ck_assert_int_ge(d, 0);
		ck_assert_int_le(d, 1000);
	}
}
END_TEST

START_TEST(reset_starts_over)
{
	struct backoff b;
	uint64_t rng;

	backoff_init(&b, 5, 1000, 2, 0, 0);
	ck_assert_int_eq(backoff_next(&b), 5);
	ck_assert_int_eq(backoff_next(&b), 10);
	ck_assert_int_eq(backoff_next(&b), 20);
	backoff_reset(&b);
	ck_assert_uint_eq(b.attempts, 0);
	ck_assert_int_eq(backoff_next(&b), 5);
	ck_assert_int_eq(backoff_next(&b), 10);

	/* Reset keeps the random stream going rather than replaying it. */
	backoff_init(&b, 1000, 1000, 1, 1, 9);
	backoff_next(&b);
	rng = b.rng;
	ck_assert_uint_ne(rng, 9);
	backoff_reset(&b);
	ck_assert_uint_eq(b.rng, rng);
}
END_TEST

START_TEST(splitmix_reference)
{
	/* splitmix64's published first outputs for seed 0 and seed 1234567. */
	uint64_t s = 0;

	ck_assert_uint_eq(backoff_rand64(&s), 0xe220a8397b1dcdafULL);
	ck_assert_uint_eq(backoff_rand64(&s), 0x6e789e6aa1b965f4ULL);
	s = 1234567;
	ck_assert_uint_eq(backoff_rand64(&s), 6457827717110365317ULL);
	ck_assert_uint_eq(backoff_rand64(&s), 3203168211198807973ULL);
}
END_TEST

static Suite *backoff_suite(void)
{
	Suite *s = suite_create("backoff");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, exact_sequences, 0, ARRAY_LEN(seq_cases));
	tcase_add_loop_test(tc, jitter_bounds, 0, ARRAY_LEN(jitter_cases));
	tcase_add_test(tc, same_seed_same_delays);
	tcase_add_test(tc, cap_reached_and_stays);
	tcase_add_test(tc, reset_starts_over);
	tcase_add_test(tc, splitmix_reference);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(backoff_suite)
