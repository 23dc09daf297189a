/*
 * sentinel: the planner's steps for spec.mode sentinel (docs/sentinel.md, DESIGN.md §4
 * "Other modes have their own promoter, and only one"). Sentinel elects and promotes;
 * the controller never fences or promotes a data instance and never re-points a
 * replica in this mode. It:
 *
 *   - follows Sentinel's view: when the sentinels' master (the view with the highest
 *     config epoch, named by a strict majority of the sentinels and confirmed by the data
 *     pod at that address reporting a writable server) is not status.currentPrimary, currentPrimary moves there in one plan, and
 *     with it the role labels and the <name>-leader EndpointSlice (step_labels); an
 *     Event says who moved it (SentinelFailover, or SwitchoverCompleted after our own
 *     request);
 *   - asks for planned moves safely: the switchover annotation and the primary's step
 *     of a rolling update send /v1/switchover to the primary's data manager, which
 *     pauses writes, waits until every replica has its offset and sends SENTINEL
 *     FAILOVER itself (docs/sentinel.md "Planned switchover"; CTL_SENTINEL_OP_SWITCHOVER,
 *     once a sentinel is ready with its quorum); status.failover phase Switchover records the request
 *     until the master moves, or is cleared after CTL_SENTINEL_SWITCHOVER_SLACK_MS past
 *     spec.sentinel.failoverTimeout);
 *   - keeps desired_sentinel_count sentinel pods: creates the missing ones (the first
 *     ones once the primary is ready: a sentinel manager boots from currentPrimary's
 *     address), recreates ended ones, removes those above the count, rolls an outdated
 *     one at a time, and sends SENTINEL RESET (CTL_SENTINEL_OP_RESET) to a sentinel that
 *     still counts more sentinels than exist, one sentinel per CTL_SENTINEL_RESET_GAP_MS
 *     (annotation CTL_ANN_SENTINEL_RESET on the pod reset last), never while a failover
 *     runs or a sentinel pod is missing or going.
 *
 * Sentinel commands are CTL_ACT_INSTANCE actions to a sentinel pod's manager, POST
 * /v1/sentinel/failover and /v1/sentinel/reset (api/instance_v1.h): the controller
 * never speaks to a server or a sentinel itself. Pure functions; any thread.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_SENTINEL_H
#define REDIS_OPERATOR_CONTROLLER_SENTINEL_H

#include <stdbool.h>
#include <stddef.h>

#include "controller/plan.h"

#define CTL_SENTINEL_OP_FAILOVER         API_INST_SENTINEL_OP_FAILOVER
#define CTL_SENTINEL_OP_SWITCHOVER       "switchover" /* to the primary's data manager */
#define CTL_SENTINEL_OP_RESET            API_INST_SENTINEL_OP_RESET
#define CTL_SENTINEL_RESET_GAP_MS        30000 /* between two resets (Sentinel's docs) */
#define CTL_SENTINEL_SWITCHOVER_SLACK_MS 30000
#define CTL_ANN_SENTINEL_RESET           "redis.io/sentinel-reset-at"

/* What the sentinel pods say, together. */
struct sentinel_facts {
	int64_t want;            /* desired_sentinel_count */
	size_t pods;             /* sentinel pods not being deleted */
	size_t ready;            /* of those: pod Ready and the manager ready (CKQUORUM ok) */
	size_t quorum_ok;        /* answering with CKQUORUM ok */
	bool failover_running;   /* a sentinel reports a failover in progress */
	bool going;              /* a sentinel pod is being deleted */
	const char *master_host; /* the highest config epoch's master; NULL: no view */
	int master_port;
	long long epoch;
	size_t agree; /* answering sentinels naming that master */
	/* agree is a strict majority of max(pods, want): the data managers' own rule
	 * (instance/sentinel_vote.h), so a deleted sentinel pod does not lower the bar */
	bool majority;
	const struct ctl_pod *master_pod; /* the data pod at master_host; NULL: none */
	long long known_max;              /* most sentinels one of them knows */
	long long replicas_min;           /* fewest replicas one of them knows; -1: unknown */
};

void sentinel_judge(const struct ctl_view *v, struct sentinel_facts *f);

/* In place of the failover step: currentPrimary follows Sentinel; a request to Sentinel
 * that did not move the master in time is given up. */
bool sentinel_step_primary(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p);
/* The sentinel pods (after the data pods). */
bool sentinel_step_pods(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p);
/* A missing primary pod is not recreated while other data pods exist and a sentinel
 * watches them: Sentinel promotes one, and the missing serial comes back as a replica of
 * it. With no sentinel answering (all gone too) nothing could promote: it is recreated. */
bool sentinel_holds_primary(const struct ctl_view *v, const struct plan_state *s);
/*
 * A planned move through Sentinel (the switchover annotation, a rolling update): false
 * when Sentinel cannot be asked now (*why says what it waits for); else the request is
 * in the plan (the annotation cleared too when clear_annotation).
 */
bool sentinel_start_switchover(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p,
                               const char *reason, bool clear_annotation, const char *target,
                               const char **why);
/*
 * A named target (switchover-to=<pod>; target above, NULL or "auto": Sentinel picks):
 * why it cannot be steered to now, NULL when it can. The rules, first match refuses:
 * not a data pod of the cluster or the primary itself, being deleted, no IP, its manager
 * not answering, not a replica, its link to the primary down. The primary's manager
 * then lowers every other replica's replica-priority to 0 for the move
 * (instance/sentinel_steer.h); status.failover.to names the target.
 */
const char *sentinel_target_refusal(const struct plan_state *s, const struct ctl_pod *t);
/* Readiness of the sentinel side for the Ready condition: every sentinel Ready (each
 * one's CKQUORUM ok), their master the current primary, and each knowing every other
 * data pod as a replica (Sentinel learns them from the master's INFO, every 10 s; until
 * then it has no replica to promote: -failover-abort-no-good-slave). */
bool sentinel_ready(const struct ctl_view *v, const struct plan_state *s);
/*
 * A password rotation (plan.c step_password) reaches the sentinels too: their managers
 * add the new default password as soon as their Secret volume shows it, and drop the
 * old one on POST /v1/config {"dropOldPasswords": true}. sentinel_rotation_blocked: a
 * sentinel pod (not being deleted) cannot be asked now (no IP, its manager not
 * answering): the drop waits, as for a data pod. sentinel_drop_old_passwords: the
 * requests, one per sentinel pod (none outside sentinel mode).
 */
bool sentinel_rotation_blocked(const struct ctl_view *v);
void sentinel_drop_old_passwords(const struct ctl_view *v, struct ctl_plan *p);
/* status.sentinels: one entry per sentinel pod. */
json_t *sentinel_status(const struct ctl_view *v);

#endif
