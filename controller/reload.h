/*
 * reload: every instance re-reads its Secret and TLS files and re-applies its live
 * configuration now, on request (`kubectl redis reload NAME`).
 *
 * The request is the annotation CTL_ANN_RELOAD ("redis.io/reload", view.h) with any
 * value (the plugin writes the time, RFC 3339); it is done when status.lastReload holds
 * the same value. Until then, once every instance is ready, caught up and runs the live
 * configuration of the spec (so that nothing else is being rolled out), the step sends
 * every instance POST /v1/config with the spec's live configuration and "reload": true
 * (api/instance_v1.h): the manager re-reads its password, ACL and TLS files whatever
 * their stamps say, reloads the TLS files into the server and re-applies everything,
 * with no server restart. Then status.lastReload takes the value and an Event Reloaded
 * says how many instances did it. A POST that fails stops the plan before the status:
 * the next reconcile sends them all again. Pure; any thread.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_RELOAD_H
#define REDIS_OPERATOR_CONTROLLER_RELOAD_H

#include <stdbool.h>

#include "controller/plan.h"

/* The planner's step (after the password rotation): true, the plan goes on. */
bool ctl_reload_step(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p);

#endif
