/*
 * handover: a primary's graceful stop (SIGTERM: its pod deleted, its node drained) hands
 * the primary role over instead of leaving a failover behind it (docs/failover.md,
 * "Pod deleted: the hand-over").
 *
 * inst_handover_drain pauses writes for good (the fence's pause: the server is about to
 * stop and must never take a write again), reads the server's offset, and polls every
 * online replica's own offset (ROLE over TCP, a round trip each; not INFO's replica
 * offsets, which follow the ~1 s REPLCONF ACK) until each has reached it, within a
 * budget. When all did, the caller releases the primary Lease at once, before the
 * server's stop (its SHUTDOWN SAVE): whichever replica the controller elects then has
 * every write the primary took. When one did not, the caller stops the server first and
 * releases after, as a failover would need (the safe order: the controller's catch-up
 * and election see the final offsets).
 */
#ifndef REDIS_OPERATOR_INSTANCE_HANDOVER_H
#define REDIS_OPERATOR_INSTANCE_HANDOVER_H

#include <stdbool.h>
#include <stdint.h>

struct inst;

/* What the drain did, for the log line and the benchmark's phases (wall ms; 0 = not reached). */
struct inst_handover {
	int64_t sigterm_ms; /* the caller sets it: the stop was asked */
	int64_t paused_ms;  /* CLIENT PAUSE WRITE confirmed */
	int64_t caught_ms;  /* every online replica at the offset */
	int64_t released_ms;
	long long offset; /* master_repl_offset after the pause began */
	int replicas;     /* online replicas */
	int caught;       /* of which reached the offset */
	const char *why;  /* static: why no hand-over (NULL: handed over) */
};

/* true: every online replica (at least one) reached the paused primary's offset. */
bool inst_handover_drain(struct inst *in, int64_t budget_ms, struct inst_handover *h);

/* One log line with the phases (relative to sigterm_ms) and the outcome. */
void inst_handover_log(const struct inst *in, const struct inst_handover *h);

#endif
