/*
 * sentinel_move: when a data manager that booted in spec.mode standalone starts
 * following the sentinels, after the user moved the cluster to spec.mode sentinel in
 * place (docs/sentinel.md "Standalone to sentinel, in place"). A pure decision,
 * table-tested; sentinel_follow.c does the I/O:
 *
 *   facts = { .spec_sentinel = …, .sentinels = pods found, .verdict = tally, … };
 *   inst_sentinel_move_decide(&facts, &d);
 *
 * The rules (first match wins):
 *   spec.mode is not sentinel (yet)                → WAIT (the old mode's rules)
 *   no sentinel pod found                          → WAIT (nobody but the old rules
 *                                                    could act: no sentinel to follow)
 *   no strict majority names a master              → WAIT (rule S4's reason: a view
 *                                                    half formed is not followed)
 *   a majority names this server, and its server
 *   crashed as primary and runs parked             → HOLD_FOLLOW: stop the parked server
 *                                                    and hold it (docs rule 5), so that
 *                                                    Sentinel sees its master down
 *   a majority names a master                      → FOLLOW (rules S1-S4 and the follow
 *                                                    table from now on, without restart)
 * Pure functions; any thread.
 */
#ifndef REDIS_OPERATOR_INSTANCE_SENTINEL_MOVE_H
#define REDIS_OPERATOR_INSTANCE_SENTINEL_MOVE_H

#include <stdbool.h>
#include <stddef.h>

#include "instance/sentinel_vote.h"

enum inst_move_action {
	INST_MOVE_WAIT,
	INST_MOVE_FOLLOW,
	INST_MOVE_HOLD_FOLLOW,
};

struct inst_move_facts {
	bool spec_sentinel;                 /* the RedisCluster now says spec.mode sentinel */
	size_t sentinels;                   /* sentinel pods found */
	enum inst_sentinel_verdict verdict; /* their majority (sentinel_vote.h) */
	bool crashed_parked;                /* the server crashed as primary, runs parked */
};

struct inst_move_decision {
	enum inst_move_action action;
	const char *reason; /* static text for logs */
};

void inst_sentinel_move_decide(const struct inst_move_facts *f, struct inst_move_decision *out);
/* "wait", "follow", "hold-follow". */
const char *inst_move_action_name(enum inst_move_action a);

#endif
