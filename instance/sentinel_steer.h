/*
 * sentinel_steer: SENTINEL FAILOVER steered to a named replica (the switchover-to=<pod>
 * annotation in spec.mode sentinel; docs/sentinel.md "Planned switchover to a named
 * pod"). Sentinel picks its own replica: among those it can reach, the lowest
 * replica-priority above 0, then the highest offset; priority 0 is never promoted. The
 * primary's manager (sentinel_follow.c) therefore, for the duration of the move:
 *
 *   LOWER    CONFIG SET replica-priority 0 on every other linked replica, each one's
 *            value kept; the target must have a priority above 0 (else 409)
 *   SEEN     SENTINEL REPLICAS on the sentinel it will ask, every round, until
 *            inst_steer_seen (Sentinel reads the priorities from an INFO it refreshes
 *            every 10 s), at most INST_STEER_SEEN_MS; writes are not paused meanwhile
 *   MOVE     the pause, the catch-up and SENTINEL FAILOVER, as without a target
 *   RESTORE  the kept values back, on every path that ends the move: the master moved
 *            (this server demoted), the pause bound passed, a refusal, the SEEN deadline
 *
 * A replica's own manager is the net under that: a replica-priority of 0 that the spec
 * does not ask for and that outlived the longest move (inst_steer_stale) is put back to
 * the spec's value, so a primary's manager that died mid-move leaves nothing behind.
 * Pure functions; any thread.
 */
#ifndef REDIS_OPERATOR_INSTANCE_SENTINEL_STEER_H
#define REDIS_OPERATOR_INSTANCE_SENTINEL_STEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/instance_v1.h"
#include "lib/err.h"
#include "lib/valkey/conn.h"

#define INST_STEER_SEEN_MS  15000 /* Sentinel's INFO period (10 s) and slack */
#define INST_STEER_MAX      16    /* replicas steered or listed */
#define INST_STEER_PRIO_DEF "100" /* replica-priority when the spec sets none */
#define INST_STEER_CHECK_MS 2000  /* a replica's manager checks its priority this often */

/* One replica as SENTINEL REPLICAS lists it. */
struct inst_steer_replica {
	char host[API_INST_HOST_MAX + 1];
	int port;
	int64_t priority; /* slave-priority; -1: absent */
	bool usable;      /* no s_down, o_down or disconnected flag: Sentinel may pick it */
};

/* SENTINEL REPLICAS <master> → out[0..*n) (at most max; more are ignored). -EPROTO when
 * it is not an array of field/value arrays with ip and port. */
int inst_steer_parse_replicas(const struct vk_reply *r, struct inst_steer_replica *out, size_t max,
                              size_t *n, struct err *e);

/* Sentinel would pick host:port now: it lists it usable with a priority above 0 and
 * every other usable replica with priority 0. Else false, and why says which one is not
 * seen yet. */
bool inst_steer_seen(const struct inst_steer_replica *r, size_t n, const char *host, int port,
                     char *why, size_t len);

/* A replica's replica-priority `have` is left over from a move: it is "0", the spec's
 * value `want` (NULL: INST_STEER_PRIO_DEF) is not, and it has been 0 since zero_since
 * (0: not seen 0 before) for at least hold_ms at now. */
bool inst_steer_stale(const char *have, const char *want, int64_t zero_since, int64_t now,
                      int64_t hold_ms);

/* --- the runtime (sentinel_steer_run.c; the supervisor thread) ------------------------ */

struct inst;
struct vk_info;

struct inst_steer_state {
	size_t n; /* replicas lowered, their values kept */
	struct {
		char host[API_INST_HOST_MAX + 1];
		int port;
		char prio[24];
	} lowered[INST_STEER_MAX];
	int64_t restore_at;           /* after SENTINEL FAILOVER: the pause bound */
	int64_t zero_since, check_at; /* a replica's guard (inst_steer_guard) */
};

/* LOWER: the target host:port must be an online replica in info (the primary's INFO
 * replication) with a replica-priority above 0; every other replica listed there gets 0.
 * 0, or the HTTP status (409 refused, 503 a replica not reachable: what was lowered is
 * restored) with why. */
unsigned inst_steer_lower(struct inst *in, struct inst_steer_state *st, const struct vk_info *info,
                          const char *host, int port, char *why, size_t len);
/* SEEN: SENTINEL REPLICAS through sentinel until inst_steer_seen, or false at deadline. */
bool inst_steer_wait_seen(struct vk_conn *sentinel, const char *host, int port, int64_t deadline,
                          char *why, size_t len);
/* RESTORE: the kept values back (a replica that cannot be reached is left to its own
 * manager's guard); st->n becomes 0. */
void inst_steer_restore(struct inst *in, struct inst_steer_state *st, const char *reason);
/* A replica's manager, every INST_STEER_CHECK_MS: its server's replica-priority 0 that
 * the spec does not ask for, kept for hold_ms, is set back to the spec's value. */
void inst_steer_guard(struct inst *in, struct inst_steer_state *st, int64_t hold_ms);

#endif
