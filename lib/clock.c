/*
 * clock: real and manual millisecond clocks (see clock.h).
 */
#include "clock.h"

#include <time.h>

static int64_t read_clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t clock_mono_ms(void)
{
	return read_clock(CLOCK_MONOTONIC);
}

int64_t clock_wall_ms(void)
{
	return read_clock(CLOCK_REALTIME);
}

int64_t clock_now_mono(const struct clock *c)
{
	return c ? c->mono_ms(c) : clock_mono_ms();
}

int64_t clock_now_wall(const struct clock *c)
{
	return c ? c->wall_ms(c) : clock_wall_ms();
}

static int64_t manual_read(const struct clock *c)
{
	return c->manual_ms;
}

void clock_manual_init(struct clock *c, int64_t start_ms)
{
	c->mono_ms = manual_read;
	c->wall_ms = manual_read;
	c->manual_ms = start_ms;
}

void clock_manual_advance(struct clock *c, int64_t ms)
{
	c->manual_ms += ms;
}

void clock_cond_init(pthread_cond_t *c)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
}

int clock_cond_wait_until(pthread_cond_t *c, pthread_mutex_t *mu, int64_t until_mono_ms)
{
	struct timespec ts;

	if (until_mono_ms < 0)
		until_mono_ms = 0;
	ts.tv_sec = (time_t)(until_mono_ms / 1000);
	ts.tv_nsec = (long)(until_mono_ms % 1000) * 1000000;
	return pthread_cond_timedwait(c, mu, &ts);
}
