/*
 * clock: time in milliseconds, monotonic for deadlines and wall for timestamps.
 *
 * Code that schedules (backoff, work queue delays, leases) takes a `struct clock *` so
 * tests can drive time by hand; NULL means the real clocks. Thread-safe for the real
 * clocks; a manual clock belongs to one test thread.
 */
#ifndef REDIS_OPERATOR_CLOCK_H
#define REDIS_OPERATOR_CLOCK_H

#include <pthread.h>
#include <stdint.h>

struct clock {
	int64_t (*mono_ms)(const struct clock *c); /* monotonic: deadlines, intervals */
	int64_t (*wall_ms)(
	        const struct clock *c); /* Unix epoch: timestamps for humans and the API */
	int64_t manual_ms;              /* used by clock_manual_init's functions */
};

/* Real clocks. */
int64_t clock_mono_ms(void);
int64_t clock_wall_ms(void);

/* Reads c, or the real clocks when c is NULL. */
int64_t clock_now_mono(const struct clock *c);
int64_t clock_now_wall(const struct clock *c);

/* A clock that only moves when the test calls clock_manual_advance. Starts at start_ms. */
void clock_manual_init(struct clock *c, int64_t start_ms);
void clock_manual_advance(struct clock *c, int64_t ms);

/*
 * Condition variables whose timed waits follow the monotonic clock: a step of the wall
 * clock (NTP, an operator's `date -s`) can neither stretch nor cut them. Every timed
 * wait in this project goes through these two, so a deadline such as the primary's
 * self-fence cannot be moved by the wall clock.
 */
void clock_cond_init(pthread_cond_t *c);
/* Waits on c (mu held) until signalled or until monotonic ms `until_mono_ms`: 0, or
 * ETIMEDOUT once the deadline has passed. Spurious wake-ups return 0, as usual. */
int clock_cond_wait_until(pthread_cond_t *c, pthread_mutex_t *mu, int64_t until_mono_ms);

#endif
