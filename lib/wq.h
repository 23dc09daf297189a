/*
 * wq: the controller's work queue, with client-go workqueue semantics. Keys are
 * strings, by convention "namespace/name".
 *
 *   worker:  while (wq_get(q, 1000, &key) != -ECANCELED) {   (-ETIMEDOUT: loop again)
 *                    rc = reconcile(key);
 *                    if (rc) wq_add_rate_limited(q, key, NULL);   (retry with backoff)
 *                    else    wq_forget(q, key);                   (success resets backoff)
 *                    wq_done(q, key);
 *                    free(key);
 *            }
 *   watcher: wq_add(q, "default/web");
 *   timers:  wq_add_after(q, "default/web", 2000);              ("check again in 2 s")
 *
 * Rules, per key:
 * - Deduplication: a key waiting to be handed out is there once; adding it again is a
 *   no-op.
 * - Never twice at once: wq_get marks the key processing. Adding it while it is
 *   processing marks it dirty, and wq_done then queues it again, once, however many
 *   adds came in between.
 * - One pending time, the earliest wins: a key is either ready, or scheduled for one
 *   time, or neither. wq_add makes it ready now even if it was scheduled later;
 *   wq_add_after only ever moves a scheduled time earlier, and is a no-op for a key
 *   already ready (or dirty). A scheduled key is invisible until its time, then joins
 *   the ready FIFO (once processing ends, if it is processing).
 * - Backoff: wq_add_rate_limited schedules the key after the larger of two delays:
 *   its own exponential backoff (lib/backoff, per key; jitter and cap from the options)
 *   and the overall token bucket (qps, burst) that every rate-limited add draws from,
 *   like client-go's default controller rate limiter. wq_forget resets the key's
 *   backoff after a success; wq_num_requeues reads it.
 * - Order: ready keys are handed out first in, first out. Scheduled keys join the FIFO
 *   by due time, keys due at the same time in the order they were scheduled. Time is
 *   looked at on every call, so a key that fell due before a later wq_add comes out
 *   before it.
 *
 * Shutdown drops, it does not drain: after wq_shutdown, wq_get returns -ECANCELED at
 * once, even with keys ready, and every blocked wq_get wakes up with -ECANCELED;
 * adds return -ECANCELED; scheduled and dirty keys are never handed out. wq_done and
 * wq_forget keep working so that in-flight workers finish cleanly. (The controller
 * shuts the queue down when it loses its lease, and must stop writing at once; a new
 * leader relists everything anyway.)
 *
 * Time: the options' clock (NULL: the real monotonic clock) decides when scheduled
 * keys are due. The timeout of wq_get is always real time: it bounds how long the
 * calling thread blocks. With the real clock a blocked wq_get wakes when a scheduled
 * key falls due. With a manual clock it never sleeps waiting for one: tests advance
 * the clock and call wq_get(q, 0, …) (a non-blocking get), and wq_next_ready_ms tells
 * them how far to advance. Any call on the queue notices that the manual clock moved.
 *
 * Limits: a key is 1..WQ_KEY_MAX bytes, else -EINVAL. The queue holds at most one
 * entry per distinct key, so its size is bounded by the objects being watched.
 *
 * Ownership: keys are copied in; wq_get hands out a copy the caller frees with free().
 * Thread-safety: every function may be called from any thread, except wq_new and
 * wq_free (no other call may be running or follow). A manual clock is only for tests
 * that advance it while no other thread is inside the queue.
 */
#ifndef REDIS_OPERATOR_WQ_H
#define REDIS_OPERATOR_WQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"

/* Longest key accepted, in bytes: a namespace (63) + '/' + a name (253) fits easily. */
#define WQ_KEY_MAX 512

struct wq_options {
	const struct clock *clock; /* NULL: real time; must outlive the queue */
	int64_t backoff_base_ms;   /* per-key backoff: first delay */
	int64_t backoff_cap_ms;    /* per-key backoff: longest delay */
	double backoff_factor;     /* per-key backoff: growth per failure */
	double backoff_jitter;     /* per-key backoff: 0..1, see lib/backoff.h */
	double qps;                /* token bucket refill per second; <= 0 disables it */
	unsigned burst;            /* token bucket size (at least 1 when enabled) */
	uint64_t seed;             /* seeds the jitter, so a test sees fixed delays */
};

/* client-go's defaults (5 ms .. 1000 s, factor 2; 10 qps, burst 100) plus 10 % jitter. */
void wq_options_default(struct wq_options *o);

/* A snapshot for /metrics (names follow client-go's workqueue metrics). */
struct wq_metrics {
	uint64_t adds;              /* adds that made a key ready or moved its time earlier */
	uint64_t deduped;           /* adds that changed nothing */
	uint64_t retries;           /* wq_add_rate_limited calls */
	size_t depth;               /* ready keys, as wq_len */
	size_t waiting;             /* scheduled keys not yet due */
	size_t processing;          /* keys handed out and not yet done */
	int64_t longest_running_ms; /* age of the oldest key in processing; 0 when none */
};

struct wq;

/* o == NULL means the defaults. Settings out of range are clamped as lib/backoff does. */
struct wq *wq_new(const struct wq_options *o);
/* Frees the queue and every key in it. NULL-safe. */
void wq_free(struct wq *q);

/* Makes key ready now. 0 (also when it was a no-op), -EINVAL, or -ECANCELED. */
int wq_add(struct wq *q, const char *key);
/* Makes key due in delay_ms (<= 0: now, as wq_add); an earlier pending time wins.
 * 0, -EINVAL, or -ECANCELED. */
int wq_add_after(struct wq *q, const char *key, int64_t delay_ms);
/* Schedules key after the larger of its backoff and the token bucket's delay, counting
 * a failure for it. That delay goes to *delay_ms (when not NULL) on success, for logs; the
 * key may be due sooner if it already was. 0, -EINVAL, or -ECANCELED. */
int wq_add_rate_limited(struct wq *q, const char *key, int64_t *delay_ms);
/* Resets key's backoff (call after a successful reconcile). Unknown keys are ignored. */
void wq_forget(struct wq *q, const char *key);
/* Failures counted for key since its last wq_forget. */
unsigned wq_num_requeues(struct wq *q, const char *key);

/*
 * Hands out the next ready key, marked processing: 0 with an owned copy in *key_out.
 * Waits up to timeout_ms of real time for one (0: do not wait); -ETIMEDOUT when none
 * came, -ECANCELED once the queue is shut down, -EINVAL for a negative timeout.
 */
int wq_get(struct wq *q, int64_t timeout_ms, char **key_out);
/* Ends processing of key; queues it again if it was added meanwhile.
 * 0, or -ENOENT when key is not processing. */
int wq_done(struct wq *q, const char *key);

/* Drops every queued key and wakes every waiter; see "Shutdown" above. Idempotent. */
void wq_shutdown(struct wq *q);
bool wq_is_shutdown(struct wq *q);

/* Ready keys (not scheduled ones, not processing ones). */
size_t wq_len(struct wq *q);
/* 0 when a key is ready, else the ms on the queue's clock until the next scheduled key
 * falls due, or -1 when nothing is ready or scheduled. */
int64_t wq_next_ready_ms(struct wq *q);
void wq_metrics(struct wq *q, struct wq_metrics *out);

#endif
