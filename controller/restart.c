/*
 * restart: the restart of one instance on request (restart.h has the decision table).
 */
#include "restart.h"

#include <string.h>

#include "controller/failover.h"
#include "controller/sentinel.h"

#define RESTART_REASON  "restart requested"
#define RESTART_WAIT_MS 5000

struct restart_in {
	const struct ctl_view *v;
	const struct plan_state *s;
	const struct ctl_pod *pod; /* NULL: not one of the cluster's data pods */
};

static bool not_ours(const struct restart_in *in)
{
	return !in->pod;
}

static bool terminating(const struct restart_in *in)
{
	return in->pod->deleting;
}

static bool is_primary(const struct restart_in *in)
{
	return in->s->primary && strcmp(in->pod->name, in->s->primary) == 0;
}

static bool alone(const struct restart_in *in)
{
	return is_primary(in) && in->v->rc->spec.instances <= 1;
}

static bool unsettled(const struct restart_in *in)
{
	return !plan_all_settled(in->v);
}

static bool always(const struct restart_in *in)
{
	(void)in;
	return true;
}

static const struct {
	bool (*when)(const struct restart_in *in);
	enum ctl_restart_do what;
	const char *why;
} rules[] = {
	{ not_ours, CTL_RESTART_REFUSE, "not a data pod of this cluster" },
	{ terminating, CTL_RESTART_WAIT, "waiting for the pod to finish terminating" },
	{ alone, CTL_RESTART_REFUSE,
	  "the only instance is the primary: there is no replica to hand it to" },
	{ unsettled, CTL_RESTART_WAIT, "waiting for every instance to be ready and caught up" },
	{ is_primary, CTL_RESTART_MOVE, "the primary moves to the best replica first" },
	{ always, CTL_RESTART_DELETE, "restarting the replica on its own volume" },
};

enum ctl_restart_do ctl_restart_decide(const struct ctl_view *v, const struct plan_state *s,
                                       const char **why)
{
	const char *want =
	        json_string_value(json_object_get(v->rc->meta.annotations, CTL_ANN_RESTART));
	struct restart_in in = { v, s, want ? ctl_view_pod(v, want) : NULL };

	*why = NULL;
	if (!want)
		return CTL_RESTART_NONE;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (rules[i].when(&in)) {
			*why = rules[i].why;
			return rules[i].what;
		}
	return CTL_RESTART_NONE; /* not reached: the last rule always matches */
}

static void drop_annotation(struct ctl_plan *p)
{
	ctl_plan_add(p, CTL_ACT_CLUSTER)->obj =
	        json_pack("{s:{s:{s:n}}}", "metadata", "annotations", CTL_ANN_RESTART);
}

/* The primary first goes to the best replica (the annotation stays). */
static bool move_primary(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p,
                         const char *pod)
{
	const struct ctl_pod *t;
	const char *why;

	if (v->rc->spec.mode == API_MODE_SENTINEL) {
		if (sentinel_start_switchover(v, s, p, RESTART_REASON, false, NULL, &why)) {
			ctl_plan_event(p, false, "InstanceRestartSwitchover",
			               "restart of %s: Sentinel moves the primary first", pod);
			return false;
		}
	} else if ((t = failover_elect(v, pod,
	                               s->primary_pod ? s->primary_pod->inst.repl_id : NULL))) {
		ctl_plan_event(p, false, "InstanceRestartSwitchover",
		               "restart of %s: the primary moves to %s first", pod, t->name);
		plan_start_switchover(v, s, p, t, RESTART_REASON);
		return false;
	} else {
		why = "no replica can take the primary's place now";
	}
	s->phase_reason = why;
	ctl_plan_requeue(p, RESTART_WAIT_MS);
	return true;
}

bool ctl_restart_step(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	const char *pod =
	        json_string_value(json_object_get(v->rc->meta.annotations, CTL_ANN_RESTART));
	const char *why;

	switch (ctl_restart_decide(v, s, &why)) {
	case CTL_RESTART_NONE: return true;
	case CTL_RESTART_REFUSE:
		drop_annotation(p);
		ctl_plan_event(p, true, "RestartRefused", "restart of %s refused: %s", pod, why);
		return true;
	case CTL_RESTART_WAIT:
		s->phase_reason = why;
		ctl_plan_requeue(p, RESTART_WAIT_MS);
		return true;
	case CTL_RESTART_MOVE: return move_primary(v, s, p, pod);
	case CTL_RESTART_DELETE: break;
	}
	s->progressing = true;
	ctl_plan_delete(p, &k8s_res_pods, pod);
	drop_annotation(p);
	ctl_plan_event(p, false, "InstanceRestart", "restarting %s on its own volume (requested)",
	               pod);
	return false;
}
