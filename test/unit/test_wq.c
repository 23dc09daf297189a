/*
 * Unit tests for lib/wq. Everything runs on a manual clock with non-blocking gets,
 * except the "realtime" case, which checks real blocking with short bounded waits, and
 * the threaded stress cases.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/clock.h"
#include "lib/wq.h"
#include "unit.h"

/* A queue on a manual clock at t=1000, no jitter, the token bucket off unless asked. */
static struct wq *manual_q(struct clock *c, int64_t base, int64_t cap, double qps, unsigned burst)
{
	struct wq_options o;

	clock_manual_init(c, 1000);
	wq_options_default(&o);
	o.clock = c;
	o.backoff_base_ms = base;
	o.backoff_cap_ms = cap;
	o.backoff_jitter = 0;
	o.qps = qps;
	o.burst = burst;
	return wq_new(&o);
}

/* Non-blocking get: the key handed out (caller frees), or NULL when none is ready. */
static char *take(struct wq *q)
{
	char *k = NULL;
	int rc = wq_get(q, 0, &k);

	ck_assert_msg(rc == 0 || rc == -ETIMEDOUT, "wq_get: %d", rc);
	return rc ? NULL : k;
}

/* Takes the next key, checks it is want (NULL: none ready), and leaves it processing. */
static void expect_take(struct wq *q, const char *want)
{
	char *k = take(q);

	if (!want)
		ck_assert_msg(k == NULL, "expected nothing ready, got %s", k);
	else
		ck_assert_msg(k && strcmp(k, want) == 0, "expected %s, got %s", want,
		              k ? k : "(nothing)");
	free(k);
}

/* Takes want and marks it done. */
static void expect_process(struct wq *q, const char *want)
{
	expect_take(q, want);
	ck_assert_int_eq(wq_done(q, want), 0);
}

START_TEST(dedup)
{
	struct clock c;
	struct wq *q = manual_q(&c, 5, 1000, 0, 1);
	struct wq_metrics m;

	ck_assert_int_eq(wq_add(q, "ns/a"), 0);
	ck_assert_int_eq(wq_add(q, "ns/b"), 0);
	ck_assert_int_eq(wq_add(q, "ns/a"), 0);
	ck_assert_int_eq(wq_add(q, "ns/a"), 0);
	ck_assert_uint_eq(wq_len(q), 2);
	wq_metrics(q, &m);
	ck_assert_uint_eq(m.adds, 2);
	ck_assert_uint_eq(m.deduped, 2);
	ck_assert_uint_eq(m.depth, 2);
	expect_process(q, "ns/a");
	expect_process(q, "ns/b");
	expect_take(q, NULL);
	ck_assert_int_eq(wq_next_ready_ms(q), -1);
	wq_free(q);
}
END_TEST

START_TEST(requeue_while_processing_once)
{
	struct clock c;
	struct wq *q = manual_q(&c, 5, 1000, 0, 1);

	wq_add(q, "ns/a");
	expect_take(q, "ns/a");
	/* Adds while processing: not handed out again until done, and only once. */
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(wq_add(q, "ns/a"), 0);
	ck_assert_uint_eq(wq_len(q), 0);
	expect_take(q, NULL);
	wq_add(q, "ns/b");
	expect_take(q, "ns/b");
	ck_assert_int_eq(wq_done(q, "ns/a"), 0);
	ck_assert_uint_eq(wq_len(q), 1);
	expect_process(q, "ns/a");
	expect_take(q, NULL);
	ck_assert_int_eq(wq_done(q, "ns/b"), 0);
	expect_take(q, NULL);
	/* Done twice, or for a key never handed out. */
	ck_assert_int_eq(wq_done(q, "ns/a"), -ENOENT);
	ck_assert_int_eq(wq_done(q, "ns/never"), -ENOENT);
	wq_add(q, "ns/c");
	ck_assert_int_eq(wq_done(q, "ns/c"), -ENOENT); /* queued, not processing */
	ck_assert_uint_eq(wq_len(q), 1);
	wq_free(q);
}
END_TEST

/* Per-key backoff with jitter 0: exact delays, and the key is invisible until then. */
static const struct {
	int64_t base, cap;
	int64_t want[7];
} backoff_cases[] = {
	{ 5, 40, { 5, 10, 20, 40, 40, 40, 40 } },
	{ 100, 1000, { 100, 200, 400, 800, 1000, 1000, 1000 } },
	{ 1, 1, { 1, 1, 1, 1, 1, 1, 1 } },
};

START_TEST(backoff_per_key)
{
	struct clock c;
	struct wq *q = manual_q(&c, backoff_cases[_i].base, backoff_cases[_i].cap, 0, 1);

	for (unsigned n = 0; n < ARRAY_LEN(backoff_cases[_i].want); n++) {
		int64_t want = backoff_cases[_i].want[n], delay = -1;

		ck_assert_int_eq(wq_add_rate_limited(q, "ns/a", &delay), 0);
		ck_assert_int_eq(delay, want);
		ck_assert_uint_eq(wq_num_requeues(q, "ns/a"), n + 1);
		ck_assert_int_eq(wq_next_ready_ms(q), want);
		clock_manual_advance(&c, want - 1);
		expect_take(q, NULL);
		ck_assert_int_eq(wq_next_ready_ms(q), 1);
		clock_manual_advance(&c, 1);
		ck_assert_int_eq(wq_next_ready_ms(q), 0);
		expect_process(q, "ns/a");
	}
	/* Another key has its own count. */
	ck_assert_uint_eq(wq_num_requeues(q, "ns/b"), 0);
	{
		int64_t delay = -1;

		wq_add_rate_limited(q, "ns/b", &delay);
		ck_assert_int_eq(delay, backoff_cases[_i].want[0]);
	}
	wq_free(q);
}
END_TEST

START_TEST(forget_resets)
{
	struct clock c;
	struct wq *q = manual_q(&c, 10, 10000, 0, 1);
	int64_t d;

	wq_add_rate_limited(q, "ns/a", &d);
	wq_add_rate_limited(q, "ns/a", &d);
	wq_add_rate_limited(q, "ns/a", &d);
	ck_assert_int_eq(d, 40);
	ck_assert_uint_eq(wq_num_requeues(q, "ns/a"), 3);
	wq_forget(q, "ns/a");
	ck_assert_uint_eq(wq_num_requeues(q, "ns/a"), 0);
	/* Forget does not unschedule: the key is still due (at its earliest time, 10). */
	ck_assert_int_eq(wq_next_ready_ms(q), 10);
	clock_manual_advance(&c, 10);
	expect_process(q, "ns/a");
	wq_add_rate_limited(q, "ns/a", &d);
	ck_assert_int_eq(d, 10);
	/* Unknown and invalid keys are ignored. */
	wq_forget(q, "ns/unknown");
	wq_forget(q, NULL);
	wq_forget(q, "");
	ck_assert_uint_eq(wq_num_requeues(q, NULL), 0);
	wq_free(q);
}
END_TEST

START_TEST(token_bucket)
{
	struct clock c;
	struct wq *q = manual_q(&c, 1, 100000, 10, 2); /* 10 qps, burst 2 */
	static const int64_t want0[] = { 1, 1, 100, 200, 300 };
	static const char *keys[] = { "k0", "k1", "k2", "k3", "k4" };
	struct wq_metrics m;
	int64_t d;

	for (unsigned i = 0; i < ARRAY_LEN(keys); i++) {
		ck_assert_int_eq(wq_add_rate_limited(q, keys[i], &d), 0);
		ck_assert_msg(d == want0[i], "%s: delay %lld want %lld", keys[i], (long long)d,
		              (long long)want0[i]);
	}
	wq_metrics(q, &m);
	ck_assert_uint_eq(m.retries, 5);
	ck_assert_uint_eq(m.waiting, 5);
	/* After a second the bucket is full again (burst 2, not 7). */
	clock_manual_advance(&c, 1000);
	ck_assert_uint_eq(wq_len(q), 5);
	for (unsigned i = 0; i < ARRAY_LEN(keys); i++)
		expect_process(q, keys[i]);
	wq_add_rate_limited(q, "x0", &d);
	ck_assert_int_eq(d, 1);
	wq_add_rate_limited(q, "x1", &d);
	ck_assert_int_eq(d, 1);
	wq_add_rate_limited(q, "x2", &d);
	ck_assert_int_eq(d, 100);
	/* Half a token refilled after 50 ms: the next one waits another 150 ms. */
	clock_manual_advance(&c, 50);
	wq_add_rate_limited(q, "x3", &d);
	ck_assert_int_eq(d, 150);
	/* The larger of the two delays wins: k0's own backoff is 2 ms, the bucket's more. */
	wq_add_rate_limited(q, "k0", &d);
	ck_assert_int_eq(d, 250);
	wq_free(q);
}
END_TEST

START_TEST(item_backoff_beats_bucket)
{
	struct clock c;
	struct wq *q = manual_q(&c, 100, 100000, 1000, 100);
	int64_t d;

	for (int i = 0; i < 5; i++)
		wq_add_rate_limited(q, "ns/a", &d);
	/* The schedule keeps the earliest time (100), but the delay reported grew. */
	ck_assert_int_eq(d, 1600);
	ck_assert_int_eq(wq_next_ready_ms(q), 100);
	wq_free(q);
}
END_TEST

START_TEST(delayed_order)
{
	struct clock c;
	struct wq *q = manual_q(&c, 5, 1000, 0, 1);

	wq_add_after(q, "c", 30);
	wq_add_after(q, "a", 10);
	wq_add_after(q, "b", 10);
	wq_add_after(q, "d", 20);
	wq_add_after(q, "e", 10);
	ck_assert_uint_eq(wq_len(q), 0);
	ck_assert_int_eq(wq_next_ready_ms(q), 10);
	expect_take(q, NULL);
	clock_manual_advance(&c, 10);
	ck_assert_uint_eq(wq_len(q), 3);
	expect_process(q, "a");
	expect_process(q, "b");
	expect_process(q, "e");
	expect_take(q, NULL);
	ck_assert_int_eq(wq_next_ready_ms(q), 10);
	/* Both due by now: due time decides, not the order of scheduling. */
	clock_manual_advance(&c, 25);
	expect_process(q, "d");
	expect_process(q, "c");
	expect_take(q, NULL);
	ck_assert_int_eq(wq_next_ready_ms(q), -1);
	wq_free(q);
}
END_TEST

START_TEST(delayed_due_before_later_add)
{
	struct clock c;
	struct wq *q = manual_q(&c, 5, 1000, 0, 1);

	wq_add(q, "first");
	wq_add_after(q, "due", 5);
	clock_manual_advance(&c, 10);
	wq_add(q, "later"); /* "due" fell due before this add: it goes ahead of it */
	expect_process(q, "first");
	expect_process(q, "due");
	expect_process(q, "later");
	wq_free(q);
}
END_TEST

START_TEST(earliest_wins)
{
	struct clock c;
	struct wq *q = manual_q(&c, 5, 1000, 0, 1);
	struct wq_metrics m;

	wq_add_after(q, "a", 100);
	wq_add_after(q, "a", 50); /* earlier: moves */
	ck_assert_int_eq(wq_next_ready_ms(q), 50);
	wq_add_after(q, "a", 80); /* later: no-op */
	ck_assert_int_eq(wq_next_ready_ms(q), 50);
	wq_metrics(q, &m);
	ck_assert_uint_eq(m.adds, 2);
	ck_assert_uint_eq(m.deduped, 1);
	ck_assert_uint_eq(m.waiting, 1);
	wq_add(q, "a"); /* now: earlier still, and the timer is gone */
	ck_assert_uint_eq(wq_len(q), 1);
	ck_assert_int_eq(wq_next_ready_ms(q), 0);
	expect_process(q, "a");
	clock_manual_advance(&c, 200);
	expect_take(q, NULL);
	ck_assert_int_eq(wq_next_ready_ms(q), -1);

	/* A ready key ignores later schedules. */
	wq_add(q, "b");
	wq_add_after(q, "b", 10);
	wq_metrics(q, &m);
	ck_assert_uint_eq(m.waiting, 0);
	ck_assert_uint_eq(m.depth, 1);
	expect_process(q, "b");
	clock_manual_advance(&c, 10);
	expect_take(q, NULL);

	/* Zero and negative delays mean now. */
	wq_add_after(q, "z", 0);
	wq_add_after(q, "n", -5);
	expect_process(q, "z");
	expect_process(q, "n");
	wq_free(q);
}
END_TEST

START_TEST(earlier_schedule_keeps_heap_order)
{
	struct clock c;
	struct wq *q = manual_q(&c, 5, 1000, 0, 1);
	char k[16];

	/* Keys due at 10..160; then move the latest ones earlier, out of order. */
	for (int i = 0; i < 16; i++) {
		snprintf(k, sizeof(k), "k%02d", i);
		wq_add_after(q, k, 10 * (i + 1));
	}
	wq_add_after(q, "k15", 5);
	wq_add_after(q, "k12", 15);
	wq_add_after(q, "k03", 1); /* its own time was 40 */
	clock_manual_advance(&c, 1000);
	expect_process(q, "k03");
	expect_process(q, "k15");
	expect_process(q, "k00");
	expect_process(q, "k12");
	for (int i = 1; i < 15; i++) {
		if (i == 3 || i == 12)
			continue;
		snprintf(k, sizeof(k), "k%02d", i);
		expect_process(q, k);
	}
	expect_take(q, NULL);
	wq_free(q);
}
END_TEST

/*
 * Random schedules, then random keys pulled out of the heap (wq_add: ready now) or
 * moved earlier, checked against a sorted model: the heap must stay ordered by
 * (time, scheduling order) through removals from its middle.
 */
#define MODEL_KEYS 300

struct model_key {
	int64_t at;
	unsigned seq, id;
	bool gone;
};

static int model_cmp(const void *a, const void *b)
{
	const struct model_key *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

START_TEST(heap_against_model)
{
	struct clock c;
	struct wq *q = manual_q(&c, 5, 1000, 0, 1);
	struct model_key mk[MODEL_KEYS];
	uint64_t x = 12345 + (uint64_t)_i;
	unsigned seq = 0;
	char k[16];

	for (unsigned i = 0; i < MODEL_KEYS; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		mk[i] = (struct model_key){ .at = 1 + (int64_t)((x >> 33) % 50),
			                    .seq = seq++,
			                    .id = i };
		snprintf(k, sizeof(k), "m%u", i);
		wq_add_after(q, k, mk[i].at);
	}
	for (unsigned n = 0; n < MODEL_KEYS / 3; n++) {
		unsigned i;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		i = (unsigned)((x >> 33) % MODEL_KEYS);
		snprintf(k, sizeof(k), "m%u", i);
		if (mk[i].gone)
			continue;
		if (n % 2) {
			wq_add(q, k);
			expect_process(q, k);
			mk[i].gone = true;
		} else if (mk[i].at > 1) {
			mk[i].at -= 1 + (int64_t)((x >> 40) % (uint64_t)mk[i].at) / 2;
			mk[i].seq = seq++;
			wq_add_after(q, k, mk[i].at);
		}
	}
	qsort(mk, MODEL_KEYS, sizeof(mk[0]), model_cmp);
	for (int64_t t = 1; t <= 50; t++) {
		clock_manual_advance(&c, 1);
		for (unsigned i = 0; i < MODEL_KEYS; i++) {
			if (mk[i].at != t || mk[i].gone)
				continue;
			snprintf(k, sizeof(k), "m%u", mk[i].id);
			expect_process(q, k);
		}
		expect_take(q, NULL);
	}
	ck_assert_int_eq(wq_next_ready_ms(q), -1);
	wq_free(q);
}
END_TEST

START_TEST(delayed_while_processing)
{
	struct clock c;
	struct wq *q = manual_q(&c, 5, 1000, 0, 1);

	wq_add(q, "a");
	expect_take(q, "a");
	wq_add_after(q, "a", 10);
	clock_manual_advance(&c, 10);
	ck_assert_uint_eq(wq_len(q), 0); /* due, but still processing */
	expect_take(q, NULL);
	ck_assert_int_eq(wq_done(q, "a"), 0);
	expect_process(q, "a");
	expect_take(q, NULL);

	/* Rate-limited retry requested while processing, the usual worker pattern. */
	wq_add(q, "b");
	expect_take(q, "b");
	wq_add_rate_limited(q, "b", NULL);
	ck_assert_int_eq(wq_done(q, "b"), 0);
	expect_take(q, NULL);
	clock_manual_advance(&c, 5);
	expect_process(q, "b");
	wq_free(q);
}
END_TEST

START_TEST(huge_delays_saturate)
{
	struct clock c;
	struct wq *q = manual_q(&c, 5, 1000, 0, 1);

	ck_assert_int_eq(wq_add_after(q, "a", INT64_MAX), 0);
	ck_assert_int_eq(wq_next_ready_ms(q), INT64_MAX - 1000);
	clock_manual_advance(&c, 1000000);
	expect_take(q, NULL);
	wq_free(q);
	/* A bucket so slow that its delay would overflow. */
	q = manual_q(&c, 5, 1000, 1e-300, 1);
	wq_add_rate_limited(q, "a", NULL);
	{
		int64_t d;

		ck_assert_int_eq(wq_add_rate_limited(q, "b", &d), 0);
		ck_assert_int_gt(d, 1000000);
	}
	wq_free(q);
}
END_TEST

START_TEST(shutdown_drops)
{
	struct clock c;
	struct wq *q = manual_q(&c, 5, 1000, 0, 1);
	struct wq_metrics m;
	char *k = (char *)"untouched";

	wq_add(q, "a");
	wq_add(q, "b");
	wq_add_after(q, "c", 10);
	wq_add_rate_limited(q, "d", NULL);
	expect_take(q, "a");
	wq_add(q, "a"); /* dirty */
	ck_assert(!wq_is_shutdown(q));
	wq_shutdown(q);
	ck_assert(wq_is_shutdown(q));
	ck_assert_int_eq(wq_get(q, 0, &k), -ECANCELED);
	ck_assert_int_eq(wq_get(q, 1000, &k), -ECANCELED); /* at once, not after 1 s */
	ck_assert_str_eq(k, "untouched");
	ck_assert_int_eq(wq_add(q, "e"), -ECANCELED);
	ck_assert_int_eq(wq_add_after(q, "e", 5), -ECANCELED);
	ck_assert_int_eq(wq_add_rate_limited(q, "e", NULL), -ECANCELED);
	ck_assert_uint_eq(wq_len(q), 0);
	ck_assert_int_eq(wq_next_ready_ms(q), -1);
	wq_metrics(q, &m);
	ck_assert_uint_eq(m.processing, 1);
	ck_assert_uint_eq(m.waiting, 0);
	/* The in-flight worker finishes cleanly; its dirty key is not queued again. */
	ck_assert_int_eq(wq_done(q, "a"), 0);
	wq_forget(q, "d");
	ck_assert_uint_eq(wq_len(q), 0);
	wq_shutdown(q); /* idempotent */
	wq_free(q);
	wq_free(NULL);
}
END_TEST

/* Key validation, for each entry point that takes a key. */
static char key_512[WQ_KEY_MAX + 1], key_513[WQ_KEY_MAX + 2];

static const struct {
	const char *name;
	const char *key;
	int want;
} key_cases[] = {
	{ "NULL", NULL, -EINVAL },        { "empty", "", -EINVAL },
	{ "at the limit", key_512, 0 },   { "one over", key_513, -EINVAL },
	{ "ordinary", "default/web", 0 },
};

START_TEST(key_limits)
{
	struct clock c;
	struct wq *q = manual_q(&c, 5, 1000, 0, 1);
	const char *key = key_cases[_i].key;
	int want = key_cases[_i].want;

	memset(key_512, 'k', WQ_KEY_MAX);
	memset(key_513, 'k', WQ_KEY_MAX + 1);
	ck_assert_msg(wq_add(q, key) == want, "%s: wq_add", key_cases[_i].name);
	ck_assert_msg(wq_add_after(q, key, 5) == want, "%s: wq_add_after", key_cases[_i].name);
	ck_assert_msg(wq_add_rate_limited(q, key, NULL) == want, "%s: rate_limited",
	              key_cases[_i].name);
	ck_assert_uint_eq(wq_len(q), want ? 0 : 1);
	ck_assert_uint_eq(wq_num_requeues(q, key), want ? 0 : 1);
	if (!want) {
		char *k = take(q);

		ck_assert_str_eq(k, key);
		free(k);
		ck_assert_int_eq(wq_done(q, key), 0);
	} else {
		ck_assert_int_eq(wq_done(q, key), -ENOENT);
	}
	wq_free(q);
}
END_TEST

START_TEST(bad_timeout)
{
	struct wq *q = wq_new(NULL);
	char *k = NULL;

	ck_assert_int_eq(wq_get(q, -1, &k), -EINVAL);
	ck_assert_ptr_null(k);
	wq_free(q);
}
END_TEST

START_TEST(metrics_running)
{
	struct clock c;
	struct wq *q = manual_q(&c, 5, 1000, 0, 1);
	struct wq_metrics m;

	wq_metrics(q, &m);
	ck_assert_int_eq(m.longest_running_ms, 0);
	wq_add(q, "a");
	wq_add(q, "b");
	wq_add(q, "c");
	expect_take(q, "a");
	clock_manual_advance(&c, 100);
	expect_take(q, "b");
	clock_manual_advance(&c, 50);
	wq_metrics(q, &m);
	ck_assert_uint_eq(m.processing, 2);
	ck_assert_uint_eq(m.depth, 1);
	ck_assert_int_eq(m.longest_running_ms, 150);
	wq_done(q, "a");
	wq_metrics(q, &m);
	ck_assert_int_eq(m.longest_running_ms, 50);
	wq_done(q, "b");
	wq_metrics(q, &m);
	ck_assert_int_eq(m.longest_running_ms, 0);
	ck_assert_uint_eq(m.processing, 0);
	ck_assert_uint_eq(m.adds, 3);
	wq_free(q);
}
END_TEST

START_TEST(defaults_jitter_is_seeded)
{
	struct wq_options o;
	struct clock c;
	int64_t d1[8], d2[8];
	bool jittered = false;

	wq_options_default(&o);
	ck_assert_int_eq(o.backoff_base_ms, 5);
	ck_assert_int_eq(o.backoff_cap_ms, 1000000);
	ck_assert_uint_eq(o.burst, 100);
	clock_manual_init(&c, 0);
	o.clock = &c;
	o.backoff_base_ms = 1000;
	for (int run = 0; run < 2; run++) {
		struct wq *q = wq_new(&o);

		for (int i = 0; i < 8; i++)
			wq_add_rate_limited(q, "a", run ? &d2[i] : &d1[i]);
		wq_free(q);
	}
	for (int i = 0; i < 8; i++) {
		int64_t nominal = 1000LL << i;

		ck_assert_int_eq(d1[i], d2[i]);
		ck_assert_int_ge(d1[i], nominal * 9 / 10);
		ck_assert_int_le(d1[i], nominal * 11 / 10);
		jittered |= d1[i] != nominal;
	}
	ck_assert(jittered);
}
END_TEST

/* ---- real time: short, bounded waits ------------------------------------------------ */

struct getter {
	struct wq *q;
	int64_t timeout_ms;
	int rc;
	int64_t elapsed_ms;
	char *key;
};

static void *getter_main(void *arg)
{
	struct getter *g = arg;
	int64_t t0 = clock_mono_ms();

	g->rc = wq_get(g->q, g->timeout_ms, &g->key);
	g->elapsed_ms = clock_mono_ms() - t0;
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

START_TEST(realtime_blocking)
{
	struct wq *q = wq_new(NULL);
	int64_t t0 = clock_mono_ms();
	char *k = NULL;
	pthread_t th;
	struct getter g = { .q = q, .timeout_ms = 5000 };

	/* Nothing comes: times out after the timeout, not before. */
	ck_assert_int_eq(wq_get(q, 50, &k), -ETIMEDOUT);
	ck_assert_int_ge(clock_mono_ms() - t0, 50);
	ck_assert_ptr_null(k);
	/* A delayed key wakes the getter at its time. */
	t0 = clock_mono_ms();
	wq_add_after(q, "later", 40);
	ck_assert_int_eq(wq_get(q, 5000, &k), 0);
	ck_assert_int_ge(clock_mono_ms() - t0, 40);
	ck_assert_int_lt(clock_mono_ms() - t0, 4000);
	ck_assert_str_eq(k, "later");
	free(k);
	wq_done(q, "later");
	/* An add from another thread wakes a blocked getter. */
	pthread_create(&th, NULL, getter_main, &g);
	sleep_ms(30);
	wq_add(q, "pushed");
	pthread_join(th, NULL);
	ck_assert_int_eq(g.rc, 0);
	ck_assert_str_eq(g.key, "pushed");
	ck_assert_int_lt(g.elapsed_ms, 4000);
	free(g.key);
	wq_done(q, "pushed");
	/* A blocked getter wakes for a timer scheduled after it went to sleep. */
	g = (struct getter){ .q = q, .timeout_ms = 5000 };
	pthread_create(&th, NULL, getter_main, &g);
	sleep_ms(30);
	wq_add_after(q, "timer", 30);
	pthread_join(th, NULL);
	ck_assert_int_eq(g.rc, 0);
	ck_assert_str_eq(g.key, "timer");
	ck_assert_int_lt(g.elapsed_ms, 4000);
	free(g.key);
	wq_free(q);
}
END_TEST

static int64_t thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* On a manual clock a scheduled key does not make wq_get wait (or spin) on real time
 * for it: the getter sleeps through its real timeout, then reports -ETIMEDOUT. */
START_TEST(manual_clock_get_sleeps)
{
	struct clock c;
	struct wq *q = manual_q(&c, 5, 1000, 0, 1);
	int64_t t0, cpu0;
	char *k = NULL;

	wq_add_after(q, "a", 10);
	t0 = clock_mono_ms();
	cpu0 = thread_cpu_ms();
	ck_assert_int_eq(wq_get(q, 60, &k), -ETIMEDOUT);
	ck_assert_int_ge(clock_mono_ms() - t0, 60);
	ck_assert_int_lt(thread_cpu_ms() - cpu0, 30); /* slept, did not spin */
	ck_assert_ptr_null(k);
	clock_manual_advance(&c, 10);
	ck_assert_int_eq(wq_get(q, 60, &k), 0);
	ck_assert_str_eq(k, "a");
	free(k);
	wq_free(q);
}
END_TEST

START_TEST(shutdown_wakes_getters)
{
	struct wq *q = wq_new(NULL);
	struct getter g[3];
	pthread_t th[3];

	wq_add_after(q, "never", 60000); /* a timer must not keep them asleep either */
	for (int i = 0; i < 3; i++) {
		g[i] = (struct getter){ .q = q, .timeout_ms = 10000 };
		pthread_create(&th[i], NULL, getter_main, &g[i]);
	}
	sleep_ms(50); /* let them block; if one is late it still sees -ECANCELED */
	wq_shutdown(q);
	for (int i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(g[i].rc, -ECANCELED);
		ck_assert_int_lt(g[i].elapsed_ms, 5000);
		ck_assert_ptr_null(g[i].key);
	}
	wq_free(q);
}
END_TEST

/* ---- stress ------------------------------------------------------------------------- */

#define STRESS_KEYS    10000
#define STRESS_WORKERS 4

struct stress {
	struct wq *q;
	atomic_int processed[STRESS_KEYS];
	atomic_int inflight[STRESS_KEYS];
	atomic_ullong last_start[STRESS_KEYS]; /* ticket taken after the key's latest get */
	atomic_ullong ticket;
	atomic_int overlaps;
	atomic_bool producers_done;
	int64_t wait_ms; /* worker's get timeout */
};

static unsigned key_index(const char *k)
{
	char *end;
	unsigned long i = strtoul(k + 4, &end, 10);

	ck_assert(*end == '\0' && i < STRESS_KEYS);
	return (unsigned)i;
}

static void *stress_worker(void *arg)
{
	struct stress *s = arg;
	char *k;
	int rc;

	for (;;) {
		rc = wq_get(s->q, s->wait_ms, &k);
		if (rc == -ETIMEDOUT && atomic_load(&s->producers_done))
			break;
		if (rc)
			continue;
		unsigned i = key_index(k);

		atomic_store(&s->last_start[i], atomic_fetch_add(&s->ticket, 1));
		if (atomic_fetch_add(&s->inflight[i], 1) != 0)
			atomic_fetch_add(&s->overlaps, 1);
		atomic_fetch_add(&s->processed[i], 1);
		atomic_fetch_sub(&s->inflight[i], 1);
		ck_assert_int_eq(wq_done(s->q, k), 0);
		free(k);
	}
	return NULL;
}

static void run_workers(struct stress *s)
{
	pthread_t th[STRESS_WORKERS];

	for (int i = 0; i < STRESS_WORKERS; i++)
		pthread_create(&th[i], NULL, stress_worker, s);
	for (int i = 0; i < STRESS_WORKERS; i++)
		pthread_join(th[i], NULL);
}

/* Every key added three ways, several times, before the workers start: each is
 * processed exactly once. */
START_TEST(stress_exactly_once)
{
	struct stress *s = xcalloc(1, sizeof(*s));
	struct clock c;
	struct wq_metrics m;
	char k[32];

	s->q = manual_q(&c, 5, 1000, 0, 1);
	for (int round = 0; round < 3; round++) {
		for (unsigned i = 0; i < STRESS_KEYS; i++) {
			snprintf(k, sizeof(k), "key-%u", i);
			if (i % 3 == 0)
				ck_assert_int_eq(wq_add(s->q, k), 0);
			else
				ck_assert_int_eq(wq_add_after(s->q, k, (i * 7919 + round) % 500),
				                 0);
		}
	}
	clock_manual_advance(&c, 500);
	ck_assert_uint_eq(wq_len(s->q), STRESS_KEYS);
	atomic_store(&s->producers_done, true);
	s->wait_ms = 0;
	run_workers(s);
	for (unsigned i = 0; i < STRESS_KEYS; i++)
		ck_assert_msg(s->processed[i] == 1, "key-%u processed %d times", i,
		              s->processed[i]);
	ck_assert_int_eq(s->overlaps, 0);
	wq_metrics(s->q, &m);
	ck_assert_uint_eq(m.depth + m.waiting + m.processing, 0);
	wq_free(s->q);
	free(s);
}
END_TEST

struct producer {
	struct stress *s;
	uint64_t seed;
	unsigned long long last_add[STRESS_KEYS]; /* ticket taken before the key's last add */
};

static void produce(struct producer *p, unsigned i)
{
	char k[32];

	snprintf(k, sizeof(k), "key-%u", i);
	p->last_add[i] = atomic_fetch_add(&p->s->ticket, 1);
	ck_assert_int_eq(wq_add(p->s->q, k), 0);
}

static void *stress_producer(void *arg)
{
	struct producer *p = arg;
	uint64_t x = p->seed;

	for (unsigned n = 0; n < STRESS_KEYS; n++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		produce(p, (unsigned)((x >> 33) % STRESS_KEYS));
	}
	for (unsigned i = 0; i < STRESS_KEYS; i++)
		produce(p, i);
	return NULL;
}

/*
 * Producers and workers at once, on the real clock: no key is ever processed by two
 * workers at the same time, and every add is followed by a processing that started
 * after it (tickets: an add takes one before adding, a worker after getting), so no
 * dirty mark is lost.
 */
START_TEST(stress_concurrent)
{
	struct stress *s = xcalloc(1, sizeof(*s));
	struct producer *p = xcalloc(2, sizeof(*p));
	pthread_t prod[2], th[STRESS_WORKERS];
	struct wq_metrics m;

	s->q = wq_new(NULL);
	s->wait_ms = 20;
	for (int i = 0; i < 2; i++) {
		p[i].s = s;
		p[i].seed = (uint64_t)i + 1;
		pthread_create(&prod[i], NULL, stress_producer, &p[i]);
	}
	for (int i = 0; i < STRESS_WORKERS; i++)
		pthread_create(&th[i], NULL, stress_worker, s);
	pthread_join(prod[0], NULL);
	pthread_join(prod[1], NULL);
	atomic_store(&s->producers_done, true);
	for (int i = 0; i < STRESS_WORKERS; i++)
		pthread_join(th[i], NULL);
	ck_assert_int_eq(s->overlaps, 0);
	for (unsigned i = 0; i < STRESS_KEYS; i++) {
		unsigned long long start = atomic_load(&s->last_start[i]);

		ck_assert_msg(s->processed[i] >= 1, "key-%u never processed", i);
		ck_assert_msg(start > p[0].last_add[i] && start > p[1].last_add[i],
		              "key-%u: last start %llu before an add (%llu, %llu)", i, start,
		              p[0].last_add[i], p[1].last_add[i]);
	}
	wq_metrics(s->q, &m);
	ck_assert_uint_eq(m.depth + m.waiting + m.processing, 0);
	wq_free(s->q);
	free(s);
	free(p);
}
END_TEST

static Suite *wq_suite(void)
{
	Suite *s = suite_create("wq");
	TCase *tc = tcase_create("core");
	TCase *rt = tcase_create("realtime");
	TCase *st = tcase_create("stress");

	tcase_add_test(tc, dedup);
	tcase_add_test(tc, requeue_while_processing_once);
	tcase_add_loop_test(tc, backoff_per_key, 0, ARRAY_LEN(backoff_cases));
	tcase_add_test(tc, forget_resets);
	tcase_add_test(tc, token_bucket);
	tcase_add_test(tc, item_backoff_beats_bucket);
	tcase_add_test(tc, delayed_order);
	tcase_add_test(tc, delayed_due_before_later_add);
	tcase_add_test(tc, earliest_wins);
	tcase_add_test(tc, earlier_schedule_keeps_heap_order);
	tcase_add_loop_test(tc, heap_against_model, 0, 8);
	tcase_add_test(tc, delayed_while_processing);
	tcase_add_test(tc, huge_delays_saturate);
	tcase_add_test(tc, shutdown_drops);
	tcase_add_loop_test(tc, key_limits, 0, ARRAY_LEN(key_cases));
	tcase_add_test(tc, bad_timeout);
	tcase_add_test(tc, metrics_running);
	tcase_add_test(tc, defaults_jitter_is_seeded);
	suite_add_tcase(s, tc);
	tcase_add_test(rt, realtime_blocking);
	tcase_add_test(rt, manual_clock_get_sleeps);
	tcase_add_test(rt, shutdown_wakes_getters);
	suite_add_tcase(s, rt);
	tcase_set_timeout(st, 60);
	tcase_add_test(st, stress_exactly_once);
	tcase_add_test(st, stress_concurrent);
	suite_add_tcase(s, st);
	return s;
}

UNIT_MAIN(wq_suite)
