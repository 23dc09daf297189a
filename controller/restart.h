/*
 * restart: the restart of one instance on request (`kubectl redis restart NAME POD`).
 *
 * The request is the annotation CTL_ANN_RESTART ("redis.io/restart-instance", view.h)
 * on the RedisCluster, naming one of its data pods. The planner's step (after the
 * switchover request, before the rolling update) decides with one table, first row that
 * matches wins:
 *
 *   the pod is not one of the cluster's  REFUSE  Warning RestartRefused, annotation removed
 *   the pod is terminating               WAIT
 *   the only instance and the primary    REFUSE  (no replica to hand the primary to)
 *   not every instance Ready, caught up  WAIT    (so never two restarts at once)
 *   the primary                          MOVE    the switchover path (failover.h; Sentinel's
 *                                                in sentinel mode) to the best replica,
 *                                                annotation kept: the pod restarts once it
 *                                                is a replica
 *   a replica                            DELETE  the pod deleted, its PVC kept: step_pods
 *                                                makes it again on the same data; Event
 *                                                InstanceRestart, annotation removed
 *
 * A request made while a failover or switchover is in flight waits for its end (the
 * failover step stops the plan before this one); `kubectl redis restart` refuses to make
 * it then. Pure; any thread.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_RESTART_H
#define REDIS_OPERATOR_CONTROLLER_RESTART_H

#include <stdbool.h>

#include "controller/plan.h"

enum ctl_restart_do {
	CTL_RESTART_NONE, /* no request */
	CTL_RESTART_REFUSE,
	CTL_RESTART_WAIT,
	CTL_RESTART_MOVE,
	CTL_RESTART_DELETE,
};

/* The decision for the request in v (the table above); *why is its message (static). */
enum ctl_restart_do ctl_restart_decide(const struct ctl_view *v, const struct plan_state *s,
                                       const char **why);

/* The planner's step: false when it acted (the plan ends there). */
bool ctl_restart_step(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p);

#endif
