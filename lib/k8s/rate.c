/*
 * k8s/rate: an adaptive token bucket (see rate.h). Every function takes the clock from
 * the caller, so the unit tests walk through time without sleeping.
 */
#include "rate.h"

#include <math.h>

static double rate_floor(const struct k8s_rate *r)
{
	double f = r->ceiling / K8S_RATE_FLOOR_DIV;
	double one = r->ceiling < 1.0 ? r->ceiling : 1.0;

	return f > one ? f : one;
}

void k8s_rate_init(struct k8s_rate *r, double qps, int burst, int64_t now_ms)
{
	*r = (struct k8s_rate){ .ceiling = qps > 0 ? qps : 0,
		                .qps = qps > 0 ? qps : 0,
		                .burst = burst > 1 ? burst : 1,
		                .refill_ms = now_ms,
		                .grown_ms = now_ms,
		                .last_cut_ms = INT64_MIN };
	r->tokens = r->burst;
}

/* Tokens earned since the last refill, at the rate in force over that time. */
static void refill(struct k8s_rate *r, int64_t now_ms)
{
	if (now_ms > r->refill_ms)
		r->tokens += (double)(now_ms - r->refill_ms) * r->qps / 1000.0;
	if (r->tokens > r->burst)
		r->tokens = r->burst;
	r->refill_ms = now_ms;
}

/* Linear growth back to the ceiling, starting K8S_RATE_CUT_GAP_MS after the last cut. */
static void grow(struct k8s_rate *r, int64_t now_ms)
{
	int64_t start;

	if (r->qps >= r->ceiling || r->last_cut_ms == INT64_MIN)
		return;
	start = r->last_cut_ms + K8S_RATE_CUT_GAP_MS;
	if (r->grown_ms > start)
		start = r->grown_ms;
	if (now_ms <= start)
		return;
	r->qps += (double)(now_ms - start) * r->ceiling / K8S_RATE_GROW_PER_S_DIV / 1000.0;
	if (r->qps > r->ceiling)
		r->qps = r->ceiling;
	r->grown_ms = now_ms;
}

int64_t k8s_rate_take(struct k8s_rate *r, int64_t now_ms)
{
	if (r->ceiling <= 0)
		return 0;
	refill(r, now_ms);
	grow(r, now_ms);
	r->tokens -= 1;
	return r->tokens < 0 ? (int64_t)ceil(-r->tokens * 1000.0 / r->qps) : 0;
}

void k8s_rate_give_back(struct k8s_rate *r)
{
	if (r->ceiling <= 0)
		return;
	r->tokens += 1;
	if (r->tokens > r->burst)
		r->tokens = r->burst;
}

void k8s_rate_throttled(struct k8s_rate *r, int64_t now_ms)
{
	double floor_qps = rate_floor(r);

	if (r->last_cut_ms != INT64_MIN && now_ms - r->last_cut_ms < K8S_RATE_CUT_GAP_MS)
		return; /* the same congestion event */
	r->last_cut_ms = now_ms;
	r->cuts++;
	if (r->ceiling <= 0)
		return;
	refill(r, now_ms);
	r->qps = r->qps / 2 > floor_qps ? r->qps / 2 : floor_qps;
	r->grown_ms = now_ms;
	if (r->tokens > 0)
		r->tokens = 0;
}
