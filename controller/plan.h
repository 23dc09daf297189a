/*
 * plan: the planner. A pure function from what the controller observed about one
 * RedisCluster (struct ctl_view) to what it should do now (struct ctl_plan): an ordered
 * list of actions, when to look again, and the status to show.
 *
 *   struct ctl_plan p;
 *   ctl_plan_init(&p);
 *   ctl_plan_build(&view, &p);
 *   apply(&p);                        (in order; the first failed non-optional action
 *                                      stops the rest: later actions assume earlier ones)
 *   ctl_plan_release(&p);
 *
 * Steps run in a fixed order (a table in plan.c), each looking at the view and adding
 * actions; a step that must wait for its actions to take effect ends the plan (the next
 * reconcile comes from the change it caused, or from requeue_ms). The order is the
 * creation order of DESIGN.md §3: RBAC, NetworkPolicy, Secrets, Lease, Services, then
 * failover/switchover (the failover module, failover.h: the planner asks it for its
 * step and for the start of a switchover or an in-place restart of the primary, handing
 * it the primary in a struct failover_io; it never calls the planner), pods (primary
 * first, then replicas; scale down), role labels, split-brain fencing, replicas following the primary, live configuration,
 * password rotation, reload requests (reload.h), switchover requests, the restart of one
 * instance (restart.h), rolling updates, PDBs, the connection Secret. The status is
 * computed last from the view (status.c).
 *
 * Multi-step operations keep their state in status.failover (struct ctl_failover), so a
 * restarted controller resumes them from what the status says and what the instances
 * report now; a plan never relies on memory of an earlier plan.
 *
 * Pure; any thread.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_PLAN_H
#define REDIS_OPERATOR_CONTROLLER_PLAN_H

#include <stdbool.h>

#include "controller/bootstrap.h"
#include "controller/desired.h"
#include "controller/actions.h"

/* What the steps share while building one plan. */
struct plan_state {
	char spec_hash[DESIRED_HASH_LEN + 1];
	char live_hash[DESIRED_HASH_LEN + 1];
	const char *primary; /* status.currentPrimary, or the one chosen now */
	char primary_buf[CTL_NAME_MAX + 1];
	const struct ctl_pod *primary_pod; /* NULL when that pod does not exist */
	const char *phase;                 /* static text; NULL: judged from readiness */
	const char *phase_reason;          /* static text */
	bool progressing;                  /* creating, updating, failing over... */
	json_t *dangling;                  /* status.danglingPVCs (plan_dangling_pvcs) */
	struct ctl_bootstrap boot;         /* spec.bootstrap (controller/bootstrap.h) */
};

void ctl_plan_build(const struct ctl_view *v, struct ctl_plan *p);

/* For steps kept in files of their own (restart.h): every pod exists, is Ready, answers
 * and is caught up; and a switchover to target through the failover module. */
bool plan_all_settled(const struct ctl_view *v);
void plan_start_switchover(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p,
                           const struct ctl_pod *target, const char *reason);

/* The most names status.danglingPVCs holds (the CRD's maxItems). */
#define PLAN_DANGLING_MAX 256
/*
 * The PVCs labelled for the cluster that no pod uses and that the controller neither
 * keeps for a pod (now or after hibernation) nor deletes in plan p: a name that is not
 * "<cluster>-<serial>", any PVC of an emptyDir cluster, a serial outside the kept ones
 * while a failover holds the scale-down back. A new array of names, in the view's order.
 */
json_t *plan_dangling_pvcs(const struct ctl_view *v, const struct plan_state *s,
                           const struct ctl_plan *p);

/* --- status.c ----------------------------------------------------------------------- */

/* The status the cluster should show (a merge patch for the status subresource). */
json_t *ctl_status_build(const struct ctl_view *v, const struct plan_state *s);
/*
 * True when patching current (status as cached; may be NULL) with want would change
 * anything a reader cares about: volatile fields (offsets, lags, lastSeen) count only
 * when refresh is set.
 */
bool ctl_status_changed(json_t *current, json_t *want, bool refresh);
/*
 * A RedisCluster update from the cache is worth a reconcile: anything but the volatile
 * status fields changed (spec, generation, labels, annotations, deletion, finalizers,
 * any other status field). The controller's own status refreshes (offsets, lastSeen)
 * come back as updates; reconciling each would double the reconciles of a steady fleet.
 */
bool ctl_cluster_update_matters(json_t *old, json_t *obj);

#endif
