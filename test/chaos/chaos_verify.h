/*
 * chaos_verify: the pure verdicts over a chaos_log and what the servers hold at the end.
 *
 *   struct chaos_report r;
 *   chaos_report_init(&r);
 *   chaos_count(log, &r);                              ops by result, max gap between acks
 *   chaos_faults(log, faults, nfaults, &r);            RTO and write pause per fault
 *   chaos_split_brain(log, tolerance_us, &r);          overlapping tenures
 *   chaos_fenced(log, fences, nfences, tolerance_us, &r);
 *   chaos_tally(log, observed, &r);                    lost acked writes on one server
 *   chaos_report_line(&r, &line);                      "acked=N lost=N …"
 *   json = chaos_report_json(log, &r);
 *   chaos_report_release(&r);
 *
 * Definitions (the contract the benchmarks and the short chaos test rely on):
 * - Acknowledged: result acked (the write answered OK and WAIT 1 said >= 1).
 * - Lost: an acknowledged SET whose key is absent, or holds another value, on the server
 *   checked; for each INCR counter, the deficit max(0, acked INCRs - final,
 *   highest acked INCR answer - final).
 * - unacked_present: SET keys whose write was not acknowledged (unacked or unknown) but
 *   which the server holds: harmless, reported for insight.
 * - Split brain: a tenure (run_id + replid: one process as primary of one history)
 *   accepted writes (acked or unacked) from its first acceptance to its last; since each
 *   write took effect somewhere inside [t0, t1], the tenure certainly held the primary role
 *   over (first t1, last t0). Every accepted write of ANOTHER tenure whose whole [t0, t1]
 *   lies inside that span, shrunk by the tolerance at both ends, is a split-brain instant.
 *   Monotonic clock, so tolerance 0 on one machine.
 * - Fenced: an accepted write sent (w0) more than tolerance after a fence time of the
 *   server it reached (matched by address or run_id) counts in after_fence.
 * - Per fault (a wall time), over the fault's window -- from the fault to the next fault
 *   (the end of the log for the last) -- and the acknowledgements (w1) in it:
 *   gap = the longest wait for an acknowledgement: between two consecutive ones whose
 *   later one is in the window, or from the fault to the first one when none came before
 *   it. This is the client-visible write pause, and stays right when the fault time was
 *   taken a little before the fault really happened (a kill or a FAILOVER command a few
 *   milliseconds after the timestamp lets some writes through first).
 *   rto = the end of that gap minus the fault: the time to the recovery of acknowledged
 *   writes. first_ack / accept = the first acknowledged / accepted write sent (w0) at or
 *   after the fault, its w1 minus the fault: the literal reading, for insight.
 *   -1 when there is no such write. max_gap: the longest time between two consecutive
 *   acknowledgements (t1 order) over the whole log.
 *
 * Pure functions over their arguments; one owner per report.
 */
#ifndef REDIS_OPERATOR_CHAOS_VERIFY_H
#define REDIS_OPERATOR_CHAOS_VERIFY_H

#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "test/chaos/chaos_log.h"

#define CHAOS_MAX_FAULTS    100000
#define CHAOS_LOST_EXAMPLES 16 /* lost keys named in the JSON report */

/* observed[] values for chaos_tally: what GET answered, or these. */
#define CHAOS_ABSENT  LLONG_MIN       /* nil */
#define CHAOS_GARBAGE (LLONG_MIN + 1) /* present but not an integer */

struct chaos_fault_result {
	int64_t wall_us;
	int64_t rto_us;       /* -1: no acknowledgement in the window */
	int64_t gap_us;       /* -1: idem */
	int64_t first_ack_us; /* -1: no acknowledged write sent after the fault */
	int64_t accept_us;    /* -1: no accepted write sent after the fault */
};

struct chaos_fence {
	char who[CHAOS_ADDR_SIZE]; /* "host:port" or a run_id */
	int64_t wall_us;
};

struct chaos_report {
	size_t ops;
	size_t by_result[CHAOS_NRESULTS];
	size_t acked_set, acked_incr;
	int64_t max_gap_us; /* -1 with fewer than two acknowledgements */

	/* chaos_tally, on the server checked last */
	size_t lost;      /* lost_set + counter deficit */
	size_t lost_set;  /* acknowledged SET keys missing or changed */
	size_t lost_incr; /* the counters' deficit */
	size_t unacked_present;
	size_t nlost_examples;
	size_t lost_examples[CHAOS_LOST_EXAMPLES]; /* key indices */

	size_t split_brain_instants;
	size_t split_brain_pairs; /* (tenure, other tenure) pairs with an instant */
	size_t after_fence;

	size_t nfaults;
	struct chaos_fault_result *faults;
};

void chaos_report_init(struct chaos_report *r);
void chaos_report_release(struct chaos_report *r);

/* Counts by result, acknowledged SETs/INCRs, and max_gap_us. */
void chaos_count(const struct chaos_log *log, struct chaos_report *r);

/* One result per fault time (wall µs), in the order given. n <= CHAOS_MAX_FAULTS,
 * else -E2BIG and nothing changes. */
int chaos_faults(const struct chaos_log *log, const int64_t *fault_wall_us, size_t n,
                 struct chaos_report *r);
/* The worst (largest) rto over the faults; -1 when none, or when any fault never
 * recovered (rto -1), since "never" is the worst. */
int64_t chaos_worst_rto(const struct chaos_report *r);

/* Sets split_brain_instants and split_brain_pairs (tolerance_us >= 0). */
void chaos_split_brain(const struct chaos_log *log, int64_t tolerance_us, struct chaos_report *r);

/* Sets after_fence. */
void chaos_fenced(const struct chaos_log *log, const struct chaos_fence *f, size_t n,
                  int64_t tolerance_us, struct chaos_report *r);

/*
 * Compares the log with what one server holds: observed[i] is the value of key i
 * (log->keys[i]) there, CHAOS_ABSENT or CHAOS_GARBAGE. Sets lost, lost_set, lost_incr,
 * unacked_present and the examples (overwriting an earlier tally).
 */
void chaos_tally(const struct chaos_log *log, const long long *observed, struct chaos_report *r);

/* Appends "acked=N lost=N unacked_present=N split_brain_instants=N rto_ms=N max_gap_ms=N". */
void chaos_report_line(const struct chaos_report *r, struct buf *out);

/* The whole report as a new JSON object (see the README in test/bench for its keys). */
json_t *chaos_report_json(const struct chaos_log *log, const struct chaos_report *r);

/*
 * Nearest-rank percentile (q in 0..100) of n values, which it sorts in place: the
 * ceil(q/100 * n)-th smallest (the smallest for q = 0). -1 when n == 0.
 */
double chaos_percentile(double *v, size_t n, double q);

#endif
