/*
 * wq: deduplicating, rate-limited, delaying work queue (see wq.h).
 *
 * One `struct wq_item` per key lives in `items` (a strmap owning the key string) while
 * the key is pending, processing, or has failures counted. Its state:
 *   pending NONE     not due;
 *   pending READY    due now: in the FIFO `ready` iff not processing (else "dirty",
 *                    and wq_done moves it to the FIFO);
 *   pending WAITING  due at ready_ms: in the min-heap `timers`, ordered by
 *                    (ready_ms, seq), at index heap_idx.
 * processing items also sit in the `running` list, oldest first (for metrics).
 * An item that is NONE, not processing and has no failures is freed at once.
 * Everything is guarded by `mu`; `cv` is signalled when a key joins the FIFO or the
 * earliest timer changes, and broadcast on shutdown. cv waits on CLOCK_MONOTONIC.
 */
#include "wq.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "backoff.h"
#include "clock.h"
#include "strmap.h"

enum wq_pending { WQ_PENDING_NONE, WQ_PENDING_READY, WQ_PENDING_WAITING };

struct wq_item {
	const char *key; /* the copy owned by q->items */
	enum wq_pending pending;
	bool processing;
	int64_t ready_ms; /* WAITING: when due */
	uint64_t seq;     /* WAITING: ties on ready_ms go to the lower seq */
	size_t heap_idx;  /* WAITING: index in q->timers */
	int64_t started_ms;
	struct wq_item *run_prev, *run_next;
	struct backoff bo; /* attempts > 0: failures since the last wq_forget */
};

struct wq {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct wq_options opts;
	struct strmap items; /* key → struct wq_item * */
	struct wq_item **ready;
	size_t ready_head, ready_len, ready_cap; /* a ring */
	struct wq_item **timers;
	size_t timers_len, timers_cap; /* a binary min-heap */
	struct wq_item *run_head, *run_tail;
	size_t running;
	uint64_t seq, rng;
	double tokens;     /* may go negative: reservations in the future */
	int64_t bucket_ms; /* when tokens was last refilled */
	uint64_t adds, deduped, retries;
	bool shutdown;
};

void wq_options_default(struct wq_options *o)
{
	o->clock = NULL;
	o->backoff_base_ms = 5;
	o->backoff_cap_ms = 1000 * 1000;
	o->backoff_factor = 2;
	o->backoff_jitter = 0.1;
	o->qps = 10;
	o->burst = 100;
	o->seed = 0x5eed;
}

static int64_t wq_now(const struct wq *q)
{
	return clock_now_mono(q->opts.clock);
}

static int64_t add_sat(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	return a + b;
}

/* ---- items ------------------------------------------------------------------ */

static bool key_is_valid(const char *key)
{
	return key && key[0] && strnlen(key, WQ_KEY_MAX + 1) <= WQ_KEY_MAX;
}

static struct wq_item *item_find(const struct wq *q, const char *key)
{
	return strmap_get(&q->items, key);
}

static struct wq_item *item_get(struct wq *q, const char *key)
{
	bool created;
	struct strmap_entry *e = strmap_upsert(&q->items, key, &created);
	struct wq_item *it;

	if (!created)
		return e->value;
	it = xcalloc(1, sizeof(*it));
	it->key = e->key;
	backoff_init(&it->bo, q->opts.backoff_base_ms, q->opts.backoff_cap_ms,
	             q->opts.backoff_factor, q->opts.backoff_jitter, backoff_rand64(&q->rng));
	e->value = it;
	return it;
}

static void item_maybe_free(struct wq *q, struct wq_item *it)
{
	if (it->pending != WQ_PENDING_NONE || it->processing || it->bo.attempts)
		return;
	strmap_remove(&q->items, it->key, NULL);
	free(it);
}

/* ---- the ready FIFO (a ring that doubles when full) ------------------------------ */

static void fifo_push(struct wq *q, struct wq_item *it)
{
	if (q->ready_len == q->ready_cap) {
		size_t cap = q->ready_cap ? q->ready_cap * 2 : 64;
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		struct wq_item **v = xreallocarray(NULL, cap, sizeof(*v));

		for (size_t i = 0; i < q->ready_len; i++)
			v[i] = q->ready[(q->ready_head + i) % q->ready_cap];
		free(q->ready);
		q->ready = v;
		q->ready_cap = cap;
		q->ready_head = 0;
	}
	q->ready[(q->ready_head + q->ready_len++) % q->ready_cap] = it;
	pthread_cond_signal(&q->cv);
}

static struct wq_item *fifo_pop(struct wq *q)
{
	struct wq_item *it;

	if (!q->ready_len)
		return NULL;
	it = q->ready[q->ready_head];
	q->ready_head = (q->ready_head + 1) % q->ready_cap;
	q->ready_len--;
	return it;
}

/* ---- the timer heap ------------------------------------------------------------- */

static bool heap_before(const struct wq_item *a, const struct wq_item *b)
{
	return a->ready_ms < b->ready_ms || (a->ready_ms == b->ready_ms && a->seq < b->seq);
}

static void heap_set(struct wq *q, size_t i, struct wq_item *it)
{
	q->timers[i] = it;
	it->heap_idx = i;
}

static void heap_up(struct wq *q, size_t i)
{
	struct wq_item *it = q->timers[i];

	while (i > 0 && heap_before(it, q->timers[(i - 1) / 2])) {
		heap_set(q, i, q->timers[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(q, i, it);
}

static void heap_down(struct wq *q, size_t i)
{
	struct wq_item *it = q->timers[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= q->timers_len)
			break;
		if (c + 1 < q->timers_len && heap_before(q->timers[c + 1], q->timers[c]))
			c++;
		if (!heap_before(q->timers[c], it))
			break;
		heap_set(q, i, q->timers[c]);
		i = c;
	}
	heap_set(q, i, it);
}

static void heap_push(struct wq *q, struct wq_item *it)
{
	if (q->timers_len == q->timers_cap) {
		q->timers_cap = q->timers_cap ? q->timers_cap * 2 : 64;
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		q->timers = xreallocarray(q->timers, q->timers_cap, sizeof(*q->timers));
	}
	heap_set(q, q->timers_len++, it);
	heap_up(q, it->heap_idx);
}

static void heap_remove(struct wq *q, struct wq_item *it)
{
	size_t i = it->heap_idx;
	struct wq_item *last = q->timers[--q->timers_len];

	if (last == it)
		return;
	heap_set(q, i, last);
	heap_up(q, i);
	heap_down(q, last->heap_idx);
}

/* ---- state transitions (mu held) -------------------------------------------------- */

/* Due now. Returns false when it already was (a deduplicated add). */
static bool make_ready(struct wq *q, struct wq_item *it)
{
	if (it->pending == WQ_PENDING_READY)
		return false;
	if (it->pending == WQ_PENDING_WAITING)
		heap_remove(q, it);
	it->pending = WQ_PENDING_READY;
	if (!it->processing)
		fifo_push(q, it);
	return true;
}

/* Due at `at` unless due earlier already. Returns false when nothing changed. */
static bool schedule(struct wq *q, struct wq_item *it, int64_t at)
{
	bool was_waiting = it->pending == WQ_PENDING_WAITING;

	if (it->pending == WQ_PENDING_READY || (was_waiting && it->ready_ms <= at))
		return false;
	it->ready_ms = at;
	it->seq = q->seq++;
	it->pending = WQ_PENDING_WAITING;
	if (was_waiting)
		heap_up(q, it->heap_idx); /* only ever earlier */
	else
		heap_push(q, it);
	if (q->timers[0] == it)
		pthread_cond_broadcast(&q->cv); /* waiters may sleep past the new first timer */
	return true;
}

/* Moves every timer due by now to the FIFO, earliest first. */
static void promote(struct wq *q)
{
	int64_t now;

	if (!q->timers_len || q->shutdown)
		return;
	now = wq_now(q);
	while (q->timers_len && q->timers[0]->ready_ms <= now)
		make_ready(q, q->timers[0]);
}

/* The token bucket's delay for one more rate-limited add at now (it takes the token). */
static int64_t bucket_delay(struct wq *q, int64_t now)
{
	double wait;

	if (!(q->opts.qps > 0))
		return 0;
	if (now > q->bucket_ms) {
		q->tokens += (double)(now - q->bucket_ms) * q->opts.qps / 1000;
		if (q->tokens > q->opts.burst)
			q->tokens = q->opts.burst;
		q->bucket_ms = now;
	}
	q->tokens -= 1;
	if (q->tokens >= 0)
		return 0;
	wait = ceil(-q->tokens * 1000 / q->opts.qps);
	return wait < (double)(INT64_MAX / 2) ? (int64_t)wait : INT64_MAX / 2;
}

/* ---- lifecycle ------------------------------------------------------------------ */

static void wq_clamp_options(struct wq_options *o)
{
	if (!(o->qps > 0))
		o->qps = 0;
	if (o->burst < 1)
		o->burst = 1;
}

struct wq *wq_new(const struct wq_options *o)
{
	struct wq *q = xcalloc(1, sizeof(*q));

	if (o)
		q->opts = *o;
	else
		wq_options_default(&q->opts);
	wq_clamp_options(&q->opts);
	pthread_mutex_init(&q->mu, NULL);
	clock_cond_init(&q->cv);
	strmap_init(&q->items);
	q->rng = q->opts.seed;
	q->tokens = q->opts.burst;
	q->bucket_ms = wq_now(q);
	return q;
}

void wq_free(struct wq *q)
{
	if (!q)
		return;
	strmap_release(&q->items, free);
	free(q->ready);
	free(q->timers);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	free(q);
}

/* ---- adding ----------------------------------------------------------------------- */

/* Validates key and takes the lock; on failure the lock is not held. */
static int wq_enter(struct wq *q, const char *key)
{
	if (!key_is_valid(key))
		return -EINVAL;
	pthread_mutex_lock(&q->mu);
	if (q->shutdown) {
		pthread_mutex_unlock(&q->mu);
		return -ECANCELED;
	}
	promote(q);
	return 0;
}

static void count_add(struct wq *q, bool changed)
{
	if (changed)
		q->adds++;
	else
		q->deduped++;
}

int wq_add(struct wq *q, const char *key)
{
	int rc = wq_enter(q, key);

	if (rc)
		return rc;
	count_add(q, make_ready(q, item_get(q, key)));
	pthread_mutex_unlock(&q->mu);
	return 0;
}

/* mu held: schedules it after delay_ms from now, or readies it when delay_ms <= 0. */
static void add_after_locked(struct wq *q, struct wq_item *it, int64_t delay_ms)
{
	bool changed;

	if (delay_ms <= 0)
		changed = make_ready(q, it);
	else
		changed = schedule(q, it, add_sat(wq_now(q), delay_ms));
	count_add(q, changed);
}

int wq_add_after(struct wq *q, const char *key, int64_t delay_ms)
{
	int rc = wq_enter(q, key);

	if (rc)
		return rc;
	add_after_locked(q, item_get(q, key), delay_ms);
	pthread_mutex_unlock(&q->mu);
	return 0;
}

int wq_add_rate_limited(struct wq *q, const char *key, int64_t *delay_ms)
{
	struct wq_item *it;
	int64_t item_delay, bucket;
	int rc = wq_enter(q, key);

	if (rc)
		return rc;
	it = item_get(q, key);
	item_delay = backoff_next(&it->bo);
	bucket = bucket_delay(q, wq_now(q));
	if (bucket > item_delay)
		item_delay = bucket;
	q->retries++;
	add_after_locked(q, it, item_delay);
	pthread_mutex_unlock(&q->mu);
	if (delay_ms)
		*delay_ms = item_delay;
	return 0;
}

void wq_forget(struct wq *q, const char *key)
{
	struct wq_item *it;

	if (!key_is_valid(key))
		return;
	pthread_mutex_lock(&q->mu);
	it = item_find(q, key);
	if (it) {
		backoff_reset(&it->bo);
		item_maybe_free(q, it);
	}
	pthread_mutex_unlock(&q->mu);
}

unsigned wq_num_requeues(struct wq *q, const char *key)
{
	struct wq_item *it;
	unsigned n = 0;

	if (!key_is_valid(key))
		return 0;
	pthread_mutex_lock(&q->mu);
	it = item_find(q, key);
	if (it)
		n = it->bo.attempts;
	pthread_mutex_unlock(&q->mu);
	return n;
}

/* ---- getting ---------------------------------------------------------------------- */

static void running_link(struct wq *q, struct wq_item *it)
{
	it->run_prev = q->run_tail;
	it->run_next = NULL;
	if (q->run_tail)
		q->run_tail->run_next = it;
	else
		q->run_head = it;
	q->run_tail = it;
	q->running++;
}

static void running_unlink(struct wq *q, struct wq_item *it)
{
	if (it->run_prev)
		it->run_prev->run_next = it->run_next;
	else
		q->run_head = it->run_next;
	if (it->run_next)
		it->run_next->run_prev = it->run_prev;
	else
		q->run_tail = it->run_prev;
	it->run_prev = it->run_next = NULL;
	q->running--;
}

/* mu held: 0 with a key, -ECANCELED, or -EAGAIN when none is ready. */
static int try_take(struct wq *q, char **key_out)
{
	struct wq_item *it;

	if (q->shutdown)
		return -ECANCELED;
	promote(q);
	it = fifo_pop(q);
	if (!it)
		return -EAGAIN;
	it->pending = WQ_PENDING_NONE;
	it->processing = true;
	it->started_ms = wq_now(q);
	running_link(q, it);
	*key_out = xstrdup(it->key);
	return 0;
}

/* When a waiter must look again: its deadline, or (real clock) the first timer. */
static int64_t wait_until(const struct wq *q, int64_t deadline)
{
	if (q->opts.clock || !q->timers_len || q->timers[0]->ready_ms > deadline)
		return deadline;
	return q->timers[0]->ready_ms;
}

static void wait_cv(struct wq *q, int64_t until_ms)
{
	clock_cond_wait_until(&q->cv, &q->mu, until_ms);
}

int wq_get(struct wq *q, int64_t timeout_ms, char **key_out)
{
	int64_t deadline;
	int rc;

	if (timeout_ms < 0)
		return -EINVAL;
	deadline = add_sat(clock_mono_ms(), timeout_ms);
	pthread_mutex_lock(&q->mu);
	for (;;) {
		rc = try_take(q, key_out);
		if (rc != -EAGAIN)
			break;
		if (clock_mono_ms() >= deadline) {
			rc = -ETIMEDOUT;
			break;
		}
		wait_cv(q, wait_until(q, deadline));
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

int wq_done(struct wq *q, const char *key)
{
	struct wq_item *it;
	int rc = -ENOENT;

	if (!key_is_valid(key))
		return -ENOENT;
	pthread_mutex_lock(&q->mu);
	it = item_find(q, key);
	if (it && it->processing) {
		it->processing = false;
		running_unlink(q, it);
		if (it->pending == WQ_PENDING_READY && !q->shutdown)
			fifo_push(q, it);
		item_maybe_free(q, it);
		rc = 0;
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

/* ---- shutdown and introspection ---------------------------------------------------- */

/* mu held: forgets every pending time; processing keys stay until wq_done. */
static void drop_pending(struct wq *q)
{
	struct wq_item *it;

	while ((it = fifo_pop(q))) {
		it->pending = WQ_PENDING_NONE;
		item_maybe_free(q, it);
	}
	while (q->timers_len) {
		it = q->timers[0];
		heap_remove(q, it);
		it->pending = WQ_PENDING_NONE;
		item_maybe_free(q, it);
	}
	for (it = q->run_head; it; it = it->run_next)
		it->pending = WQ_PENDING_NONE;
}

void wq_shutdown(struct wq *q)
{
	pthread_mutex_lock(&q->mu);
	q->shutdown = true;
	drop_pending(q);
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

bool wq_is_shutdown(struct wq *q)
{
	bool down;

	pthread_mutex_lock(&q->mu);
	down = q->shutdown;
	pthread_mutex_unlock(&q->mu);
	return down;
}

size_t wq_len(struct wq *q)
{
	size_t n;

	pthread_mutex_lock(&q->mu);
	promote(q);
	n = q->ready_len;
	pthread_mutex_unlock(&q->mu);
	return n;
}

int64_t wq_next_ready_ms(struct wq *q)
{
	int64_t ms = -1;

	pthread_mutex_lock(&q->mu);
	promote(q);
	if (q->ready_len)
		ms = 0;
	else if (q->timers_len)
		ms = q->timers[0]->ready_ms - wq_now(q);
	pthread_mutex_unlock(&q->mu);
	return ms;
}

void wq_metrics(struct wq *q, struct wq_metrics *out)
{
	pthread_mutex_lock(&q->mu);
	promote(q);
	out->adds = q->adds;
	out->deduped = q->deduped;
	out->retries = q->retries;
	out->depth = q->ready_len;
	out->waiting = q->timers_len;
	out->processing = q->running;
	out->longest_running_ms = q->run_head ? wq_now(q) - q->run_head->started_ms : 0;
	pthread_mutex_unlock(&q->mu);
}
