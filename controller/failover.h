/*
 * failover: the state machine of failover, switchover and in-place primary restarts
 * (DESIGN.md §4; the whole sequence, both processes: docs/failover.md), and the role
 * moves it shares with the planner (labels, the <name>-leader EndpointSlice, replicas
 * following the primary, the user's fencing list).
 *
 * The planner (plan.h) asks this module for the failover step and for the start of a
 * switchover or an in-place restart; this module never calls the planner. Its state
 * is status.failover (struct ctl_failover, read into the view), so a restarted
 * controller resumes from the phase the status names; one reconcile runs the phase's
 * function once, which looks at the view and adds actions to the plan:
 *
 *   (none) --primary confirmed down--> Fencing --old primary fenced or its Lease free,
 *          a replica elected--> Promoting(to) --`to` promoted and holding the Lease-->
 *          (none): currentPrimary = to, lastFailover, role labels moved
 *   (none) --switchover asked--> Switchover(from, to) --POST /v1/switchover on `from`-->
 *          (none): currentPrimary = to; half-way failure (`from` fenced, `to` not
 *          primary) becomes Fencing
 *   (none) --rolling update, method restart--> PrimaryRestart --pod back as primary-->
 *          (none); too slow becomes Fencing
 *
 * The table of phases (failover_phases) names each phase as status.failover.phase
 * spells it, when it is entered, what it does, the phases it may write next and its
 * timeout; the unit tests check the table against the code's transitions.
 *
 * Pure, like the planner; any thread.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_FAILOVER_H
#define REDIS_OPERATOR_CONTROLLER_FAILOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/actions.h"
#include "controller/failover_state.h"

/*
 * What the failover step shares with the planner while one plan is built: the primary
 * (in: status.currentPrimary and its pod; out: the new primary when this plan moved
 * it), and what the status should say (out; static text, NULL: the planner's own).
 */
struct failover_io {
	const char *primary;               /* never NULL ("" when none yet) */
	const struct ctl_pod *primary_pod; /* NULL when that pod does not exist */
	const char *phase;
	const char *phase_reason;
	bool progressing;
};

/* One phase of the table. */
#define FAILOVER_NEXT_MAX 3
struct failover_phase {
	const char *name;         /* as persisted in status.failover.phase (CTL_FO_*) */
	const char *entered_when; /* the entry condition, for humans */
	const char *action;       /* what one reconcile in this phase does, for humans */
	/* The phase's reconcile: false when the plan stops here. */
	bool (*run)(const struct ctl_view *v, struct failover_io *io, struct ctl_plan *p,
	            const struct ctl_failover *fo);
	/* The phases it may write next ("" = status.failover cleared), NULL-terminated. */
	const char *next[FAILOVER_NEXT_MAX + 1];
	/* Its bound from startedAt in ms (0: none), and what happens then. */
	int64_t (*timeout_ms)(const struct ctl_view *v);
	const char *on_timeout;
};

/* The table (borrowed, static) and its length. */
const struct failover_phase *failover_phases(size_t *n);

/*
 * The failover step of the plan: with no status.failover, detection (is the primary
 * confirmed down? then Fencing); else the persisted phase's function from the table
 * (an unknown phase is cleared, with a Warning). false: the plan stops here.
 */
bool failover_step(const struct ctl_view *v, struct failover_io *io, struct ctl_plan *p);

/* Starts a switchover of io->primary to target: status.failover Switchover, POST
 * /v1/switchover to the primary, then (if it succeeds) currentPrimary and labels. */
void failover_start_switchover(const struct ctl_view *v, struct failover_io *io, struct ctl_plan *p,
                               const struct ctl_pod *target, const char *reason);
/* Starts an in-place restart of io->primary (rolling update, primaryUpdateMethod
 * restart): status.failover PrimaryRestart, then the pod's deletion. */
void failover_start_restart(const struct ctl_view *v, struct failover_io *io, struct ctl_plan *p);

/*
 * The replica to promote instead of `exclude`: reachable, serving, not loading or in a
 * full sync, not fenced by the user; from the same replication history as the old
 * primary's last known replication id (else from the largest group of replicas sharing
 * one); the highest offset, then ready, then the lowest serial. NULL when none.
 */
const struct ctl_pod *failover_elect(const struct ctl_view *v, const char *exclude,
                                     const char *primary_replid);

/* --- role moves (failover_roles.c), used by the state machine and the planner -------- */

/* The pod is listed in the redis.io/fencedInstances annotation (or it says "*"). */
bool failover_user_fenced(const struct ctl_view *v, const char *pod);
/* Points every other instance (but skip, when set) that answers and does not follow pp
 * yet at pp (optional "replicate" actions); pp must be the writable primary. */
void failover_follow(const struct ctl_view *v, struct ctl_plan *p, const struct ctl_pod *pp,
                     const char *skip);
/* Points the <name>-leader EndpointSlice at pod (NULL or deleting: no endpoint), ready
 * unless its manager last said it is fenced (desired_leader_endpoints). */
void failover_leader_endpoints(const struct ctl_view *v, struct ctl_plan *p,
                               const struct ctl_pod *pod);
/* Patches the redis.io/role label of pod to role when it differs. When the primary
 * moves, the new primary's label goes first, so that some pod always carries
 * role=primary (the primary PDB, users' own selectors). The <name>-leader Service does
 * not follow the labels: see desired_leader_endpoints. */
void failover_label(struct ctl_plan *p, const struct ctl_pod *pod, const char *role);

#endif
