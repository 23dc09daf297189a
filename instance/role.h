/*
 * role: the boot-time decision of what the server starts as. A pure function over the
 * facts the manager gathered, table-tested; the caller does the I/O between calls.
 *
 *   facts = { .self = pod, .api = INST_API_OK, .current_primary = …, … };
 *   inst_role_decide(&facts, &d);
 *   d.action == INST_BOOT_NEED_LEASE → try to acquire `<cluster>-primary`, set
 *   facts.lease and decide again.
 *
 * The rules, in order (DESIGN.md §4–5; the first that applies wins):
 *  1. API server unreachable, or the RedisCluster not found → WAIT: never guess.
 *  2. status.currentPrimary unset → WAIT. The controller sets it to the first pod
 *     before creating that pod, so an unset value means "not created by the controller
 *     yet" or an operator bug, and no pod may decide on its own to be primary.
 *  3. This pod is currentPrimary:
 *     a. a fence marker in the data dir → PARK (a fenced primary stays fenced across
 *        restarts until told otherwise);
 *     b. its data dir is empty while other pods of the cluster exist and there is more
 *        than one instance → PARK: an empty primary would make its replicas flush their
 *        data. (A brand-new cluster has no other pod yet; the controller creates the
 *        primary first.) The controller fails over, or promotes explicitly;
 *     c. a failover away from it is running (status.failover in phase Fencing or
 *        Promoting, from = this pod, to unset or another pod) → PARK: the controller
 *        decided this primary is gone (its manager was killed and its lease lapsed);
 *        taking the lease back now would race the promotion. Parked, its offset stays
 *        readable and it rejoins as a replica. (PrimaryRestart and Switchover phases
 *        do not count: there the controller expects it back, or re-asks.)
 *     d. the lease was not tried yet → NEED_LEASE; acquired → PRIMARY; held by another
 *        holder → WAIT (a failover is moving currentPrimary); API error → WAIT.
 *  4. Another pod is currentPrimary: its address is known → REPLICA of it; unknown
 *     (pod gone, no IP yet) → PARK, and the supervisor keeps resolving it: a parked
 *     replica still loads its data so the controller can read its offset.
 * In spec.mode sentinel, once sentinel pods exist (sentinels > 0), Sentinel's majority
 * (instance/sentinel_vote.h) replaces rules 3-4, right after rule 2:
 *  S1. a majority names another server → REPLICA of it (a fence marker too: a replica
 *      is read-only);
 *  S2. a fence marker (a crashed or fenced primary) → HOLD: the server is not started
 *      until the sentinels name another master (a parked server answers PING, so
 *      Sentinel would not see its master down);
 *  S3. a majority names this server → NEED_LEASE, then PRIMARY, or WAIT when the
 *      lease is held by another or unreadable;
 *  S4. no majority (no answer, a split view) → WAIT: a parked server that the
 *      sentinels later name would report itself a replica to them, and Sentinel does
 *      not turn it back into a master.
 * With no sentinel pod yet (a new cluster's data pods come first) rules 3-4 apply.
 * PARK means: started as a replica of a placeholder address (read-only, never
 * writable, no sync), waiting for /v1/replicate or /v1/promote.
 */
#ifndef REDIS_OPERATOR_INSTANCE_ROLE_H
#define REDIS_OPERATOR_INSTANCE_ROLE_H

#include <stdbool.h>
#include <stdint.h>

#include "instance/sentinel_vote.h"

enum inst_boot_action {
	INST_BOOT_WAIT,
	INST_BOOT_NEED_LEASE,
	INST_BOOT_PRIMARY,
	INST_BOOT_REPLICA,
	INST_BOOT_PARK,
	INST_BOOT_HOLD, /* sentinel mode: the server is not started (rule S2) */
};

enum inst_api_state { INST_API_OK, INST_API_UNREACHABLE, INST_API_NOT_FOUND };

enum inst_lease_state {
	INST_LEASE_NOT_TRIED,
	INST_LEASE_ACQUIRED,
	INST_LEASE_OTHER, /* held by someone else and not expired */
	INST_LEASE_ERROR,
};

struct inst_boot_facts {
	const char *self;            /* this pod's name */
	enum inst_api_state api;     /* reading the RedisCluster */
	const char *current_primary; /* NULL or "" when unset */
	bool fenced;                 /* fence marker in the data dir */
	bool has_data;               /* an RDB or AOF in the data dir */
	bool other_pods;             /* other pods of this cluster exist */
	int64_t instances;           /* spec.instances */
	bool primary_addr_known;     /* the current primary's address resolved */
	const char *failover_phase;  /* status.failover.phase, from and to; NULL when unset */
	const char *failover_from, *failover_to;
	enum inst_lease_state lease;
	size_t sentinels; /* sentinel pods found (sentinel mode; 0: none, or another mode) */
	enum inst_sentinel_verdict sentinel_verdict;
};

struct inst_boot_decision {
	enum inst_boot_action action;
	const char *reason; /* static text for logs and /v1/status */
};

void inst_role_decide(const struct inst_boot_facts *f, struct inst_boot_decision *out);
/* "wait", "need-lease", "primary", "replica", "park", "hold". */
const char *inst_boot_action_name(enum inst_boot_action a);

#endif
