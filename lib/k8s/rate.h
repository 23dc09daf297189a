/*
 * k8s/rate: the client's request rate, a token bucket whose rate adapts to the API
 * server's answers (pure: the caller passes the clock and does the waiting).
 *
 *   struct k8s_rate r;
 *   k8s_rate_init(&r, 50, 100, now);             50 requests/s, 100 at once
 *   int64_t wait = k8s_rate_take(&r, now);       sleep wait ms, then send
 *   k8s_rate_throttled(&r, now);                 on a 429 answer
 *
 * The configured qps is a ceiling, not a promise. The API server's priority and fairness
 * answers 429 Too Many Requests (with Retry-After) when the client's priority level is
 * full; a client that keeps its fixed rate then spends its budget on rejected requests
 * and takes seats from every other client of that level. So, additive increase and
 * multiplicative decrease, as TCP does:
 *
 * - a 429 halves the rate (never under the floor: the ceiling / K8S_RATE_FLOOR_DIV, or
 *   1 qps when that is more, or the ceiling when it is under 1 qps), empties the bucket
 *   (no burst right after a rejection), and holds
 *   every request until Retry-After has passed (K8S_RATE_HOLD_DEFAULT_MS without one);
 *   the 429s of one burst arrive together, so a cut within K8S_RATE_CUT_GAP_MS of the
 *   previous one only extends the hold;
 * - from K8S_RATE_CUT_GAP_MS after the last cut the rate grows back linearly, by a tenth
 *   of the ceiling per second, to the ceiling.
 *
 * The rejected request itself waits for its Retry-After before its retry (client.c);
 * nothing holds the other requests: a hold shared by all makes them wake together, and
 * their burst is rejected again (measured: test/integration/k8s/it_apf.c). With qps 0
 * (no client-side limit) nothing adapts; the cuts are still counted. Times are
 * monotonic ms.
 * Not thread-safe: the client calls it under its lock.
 */
#ifndef REDIS_OPERATOR_K8S_RATE_H
#define REDIS_OPERATOR_K8S_RATE_H

#include <stdint.h>

#define K8S_RATE_FLOOR_DIV      32   /* the rate never drops under ceiling / this */
#define K8S_RATE_CUT_GAP_MS     1000 /* 429s closer than this are one congestion event */
#define K8S_RATE_GROW_PER_S_DIV 10   /* growth per second: ceiling / this */

struct k8s_rate {
	double ceiling;          /* the configured qps; 0: no rate limit */
	double qps;              /* the rate in force */
	double burst;            /* bucket size (>= 1) */
	double tokens;           /* may go negative: requests already promised a slot */
	int64_t refill_ms;       /* when tokens were last topped up */
	int64_t grown_ms;        /* when qps last grew (or the cut that growth starts after) */
	int64_t last_cut_ms;     /* the last 429 that cut the rate; INT64_MIN: none */
	unsigned long long cuts; /* rate cuts so far (one per congestion event) */
};

void k8s_rate_init(struct k8s_rate *r, double qps, int burst, int64_t now_ms);

/* Takes a slot for one request at now_ms and returns how long to wait before sending it
 * (0: at once). k8s_rate_give_back returns the slot of a request that was not sent. */
int64_t k8s_rate_take(struct k8s_rate *r, int64_t now_ms);
void k8s_rate_give_back(struct k8s_rate *r);

/* The server answered 429 Too Many Requests at now_ms. */
void k8s_rate_throttled(struct k8s_rate *r, int64_t now_ms);

#endif
