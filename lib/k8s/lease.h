/*
 * k8s/lease: leader election on a coordination.k8s.io/v1 Lease.
 *
 * Step-wise, from the caller's own loop (the instance manager):
 *
 *   struct k8s_lease *l = k8s_lease_new(client, &opts, &e);
 *   every retry_period_ms:
 *           rc = k8s_lease_try_acquire_or_renew(l, clock_now_mono(clk), &e);
 *           (0: we lead until k8s_lease_valid_until(l); -EBUSY: someone else does)
 *   any time:  if (!k8s_lease_is_leader(l, now)) fence();
 *   clean stop: k8s_lease_release(l, &e);
 *
 * Or with its own thread (the controller): k8s_lease_start(l) runs that loop and calls
 * opts.on_change(ctx, true/false) on every transition; k8s_lease_stop(l, release).
 *
 * The record: spec.holderIdentity, acquireTime and renewTime (MicroTime),
 * leaseDurationSeconds, leaseTransitions. Acquire creates the Lease when absent, or
 * takes it over when its holder is empty (released: the fast path, no waiting) or the
 * record expired. Expiry is judged as client-go does, without trusting other clocks:
 * the record (holder, renewTime, resourceVersion) must stay unchanged for
 * leaseDurationSeconds of OUR monotonic clock since we first saw it that way
 * (k8s_lease_seen_update, k8s_lease_judge: the one rule, which the controller uses too).
 * That clock starts when the reply carrying the record was RECEIVED (read from
 * opts.clock after the request), never at the step's `now`, and never at renewTime
 * (another machine's wall clock): a GET sent at t0 and answered 3 s later may carry a
 * renewal written at t0 + 2.9 s, and a clock started at t0 would let this candidate
 * take over 2.9 s early, eating the holder's fence margin.
 * A candidate may call k8s_lease_observe every retry period to start that clock early.
 * Renew writes the cached Lease back with its resourceVersion (optimistic
 * concurrency, one PUT per renew, no GET); a 409 re-reads it: if someone else holds it
 * now, we lost.
 *
 * Leading means: the last successful acquire/renew *started* less than
 * renew_deadline_ms ago (by the step's `now`). Since renew_deadline < lease_duration,
 * a partitioned holder stops leading (and must stop writing) before anyone else may
 * take over. k8s_lease_is_leader(l, now) answers that from atomics, at once, whatever
 * a request in flight is doing; the thread helper also wakes at the deadline and calls
 * on_change(false) at once, even while a renew request is still blocked. Give the
 * lease a client whose timeout_ms is below renew_deadline_ms, so a hung request cannot
 * eat a whole renew window.
 *
 * Clock: opts.clock (NULL: real clocks) gives wall time for the MicroTimes and the
 * receive times above; the monotonic `now` of the step API is the caller's, taken
 * before the request (so our own validity is counted from before the renewal was sent).
 *
 * The fence margin. The holder stops leading at  sent + renewDeadline  (sent = when the
 * successful renewal was sent, <= when the server wrote it); a candidate takes over no
 * sooner than  received + leaseDuration  (received >= when the server wrote it). So
 * the holder has  leaseDuration - renewDeadline  to stop writing (less the monotonic
 * clocks' rate difference, negligible over seconds) before anyone else may lead; the
 * CRD refuses a margin under 2 s.
 *
 * Threads: one thread drives the steps (the caller's, or the helper's); is_leader,
 * valid_until, holder and transitions may be read from any thread. on_change is called
 * from the driving thread or the helper's deadline watchdog, serialised, with no lease
 * lock held except the transition lock: it may call k8s_lease_is_leader only.
 */
#ifndef REDIS_OPERATOR_K8S_LEASE_H
#define REDIS_OPERATOR_K8S_LEASE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/clock.h"
#include "lib/err.h"
#include "lib/k8s/client.h"

#define K8S_LEASE_IDENTITY_MAX              128
#define K8S_LEASE_DURATION_MS_DEFAULT       15000
#define K8S_LEASE_RENEW_DEADLINE_MS_DEFAULT 10000
#define K8S_LEASE_RETRY_PERIOD_MS_DEFAULT   2000

struct k8s_lease;

struct k8s_lease_opts {
	const char *name;          /* Lease name ("<cluster>-primary"); copied */
	const char *ns;            /* its namespace; copied */
	const char *identity;      /* who we are (pod name); copied, <= K8S_LEASE_IDENTITY_MAX */
	int64_t lease_duration_ms; /* written as leaseDurationSeconds (rounded up); 0: default */
	int64_t renew_deadline_ms; /* < lease_duration_ms; 0: default */
	int64_t retry_period_ms;   /* < renew_deadline_ms; 0: default */
	const struct clock *clock; /* NULL: real clocks; must outlive the lease */
	void (*on_change)(void *ctx, bool leading);
	void *ctx;
};

/*
 * Checks the options (names, identity, duration > renew deadline > retry period > 0).
 * The client is borrowed and must outlive the lease. NULL with e set (-EINVAL).
 */
struct k8s_lease *k8s_lease_new(struct k8s_client *c, const struct k8s_lease_opts *o,
                                struct err *e);
/* Stops the helper thread (without releasing) and frees. NULL-safe. */
void k8s_lease_free(struct k8s_lease *l);

/*
 * One step at monotonic time now: acquire or renew. 0: we lead (valid until now +
 * renew_deadline); -EBUSY: another holder's record has not expired (or won a race);
 * another errno for a failed request (leadership then lasts only until the deadline
 * of the last success). Transitions fire on_change.
 */
int k8s_lease_try_acquire_or_renew(struct k8s_lease *l, int64_t now, struct err *e);
/*
 * Gives the Lease up if we hold it: clears holderIdentity (and sets renewTime), so the
 * next candidate takes it at its next step instead of waiting out the duration.
 * Leadership ends before the request is sent. 0 also when we did not hold it.
 */
int k8s_lease_release(struct k8s_lease *l, struct err *e);

/*
 * Reads the Lease without writing it (a candidate that keeps watching): when the record
 * changed since the last read, its expiry clock restarts when the reply arrived. A candidate that
 * observes every retry period and is then asked to acquire judges expiry from the
 * last renewal it saw, not from the acquire attempt, so it need not wait a whole
 * duration more. 0 (also when the Lease does not exist), or -errno of the GET.
 * Driving thread only (not while the helper thread runs).
 */
int k8s_lease_observe(struct k8s_lease *l, struct err *e);

/* Leading at monotonic time now (see the header comment). Lock-free. */
bool k8s_lease_is_leader(const struct k8s_lease *l, int64_t now);
/* Monotonic ms until which we lead (<= 0 when not leading). */
int64_t k8s_lease_valid_until(const struct k8s_lease *l);
/* Fires on_change(false) if the deadline passed since the last step; returns
 * k8s_lease_is_leader(l, now). No I/O: for loops that only want the fence check. */
bool k8s_lease_check(struct k8s_lease *l, int64_t now);
/* The holder we last saw ("" if none), into out (len bytes). */
void k8s_lease_holder(struct k8s_lease *l, char *out, size_t len);
/* leaseTransitions of the record we last saw; -1 before any. */
int64_t k8s_lease_transitions(struct k8s_lease *l);

/*
 * The thread helper: steps every retry_period (or sooner when the observed record is
 * due to expire), plus a watchdog that ends leadership at its deadline. 0, -EALREADY,
 * or -errno of pthread_create.
 */
int k8s_lease_start(struct k8s_lease *l, struct err *e);
/* Stops the helper; with release, gives the Lease up (see k8s_lease_release). The
 * release request runs on the caller's thread. Idempotent. */
void k8s_lease_stop(struct k8s_lease *l, bool release);

/* ---- the expiry rule (pure; the controller judges the primary Lease with it too) ------- */

#define K8S_LEASE_SEEN_SIG_MAX (K8S_LEASE_IDENTITY_MAX + 64 + 128 + 8) /* holder|renew|rv */

/* Since when a Lease record has looked the way it does: its expiry clock. Zeroed: none
 * seen yet. Owned by the caller; one per Lease it watches. */
struct k8s_lease_seen {
	char sig[K8S_LEASE_SEEN_SIG_MAX];
	int64_t since_ms; /* local monotonic ms: when the record was received in this form */
};

/*
 * The record rec (borrowed) was received at received_ms (local monotonic, read after
 * the reply arrived): when it differs from the last one seen (holderIdentity, renewTime
 * or resourceVersion), the expiry clock restarts at received_ms. True when it changed.
 */
bool k8s_lease_seen_update(struct k8s_lease_seen *seen, json_t *rec, int64_t received_ms);

/* What a record says about its holder at monotonic now. */
enum k8s_lease_record {
	K8S_LEASE_RECORD_FREE,    /* no holderIdentity: released (or never taken) */
	K8S_LEASE_RECORD_VALID,   /* a holder, unchanged for less than leaseDurationSeconds */
	K8S_LEASE_RECORD_EXPIRED, /* a holder, unchanged for a whole leaseDurationSeconds */
};

/*
 * Judges rec (borrowed) at now, the record having looked this way since observed_ms
 * (k8s_lease_seen.since_ms): expired once now >= observed_ms + leaseDurationSeconds
 * (clamped to 0..1 year; missing or not an integer: 0, expired at once). *expires_ms
 * (may be NULL) receives that instant, whatever the answer.
 */
enum k8s_lease_record k8s_lease_judge(json_t *rec, int64_t observed_ms, int64_t now,
                                      int64_t *expires_ms);

/* ---- pure parts, exposed for tests -------------------------------------------------- */

/* What a step decides to do with the record it read. */
enum k8s_lease_action {
	K8S_LEASE_RENEW,    /* we hold it: renew */
	K8S_LEASE_TAKEOVER, /* free (empty holder) or expired: take it, transitions + 1 */
	K8S_LEASE_WAIT,     /* someone else holds it and it has not expired */
};

/*
 * Decides from a Lease object (borrowed) for identity at monotonic now, given when the
 * record was first observed in its current form (observed_ms): k8s_lease_judge, then
 * ours or not. *expires_ms (may be NULL) receives when the record would expire (for
 * WAIT).
 */
enum k8s_lease_action k8s_lease_decide(json_t *lease, const char *identity, int64_t observed_ms,
                                       int64_t now, int64_t *expires_ms);

#endif
