/*
 * failover_roles: the role moves (see failover.h). Who is primary shows in three places
 * besides status.currentPrimary: the redis.io/role labels, the <name>-leader
 * EndpointSlice and which primary each replica follows. The state machine moves them in
 * the plan that promotes; the planner's steps keep them in line at rest. Both go
 * through these functions, which only look at the view and add actions.
 *
 * Pure; any thread.
 */
#include <string.h>

#include "controller/desired.h"
#include "controller/failover.h"
#include "lib/jsonx.h"

bool failover_user_fenced(const struct ctl_view *v, const char *pod)
{
	const char *text =
	        json_string_value(json_object_get(v->rc->meta.annotations, CTL_ANN_FENCED));
	json_t *list, *it;
	bool found = false;
	size_t i;

	if (!text || jsonx_loadb(text, strlen(text), 64 * 1024, &list, NULL) < 0)
		return false;
	json_array_foreach (list, i, it) {
		const char *s = json_string_value(it);

		if (s && (strcmp(s, "*") == 0 || strcmp(s, pod) == 0))
			found = true;
	}
	json_decref(list);
	return found;
}

void failover_label(struct ctl_plan *p, const struct ctl_pod *pod, const char *role)
{
	if (!pod || pod->deleting || (pod->role_label && strcmp(pod->role_label, role) == 0))
		return;
	ctl_plan_patch(p, &k8s_res_pods, pod->name,
	               json_pack("{s:{s:{s:s}}}", "metadata", "labels", CTL_LABEL_ROLE, role));
}

/* Creates the EndpointSlice when absent, else patches the fields the controller owns that
 * differ (plan.c's ensure, for this one object: no patch at rest). want is stolen. */
static void ensure_slice(struct ctl_plan *p, json_t *have, json_t *want)
{
	static const char *const own[] = { "metadata.labels", "endpoints", "ports", NULL };
	json_t *patch;

	if (!have) {
		ctl_plan_create(p, &k8s_res_endpointslices, want);
		return;
	}
	patch = json_object();
	for (size_t i = 0; own[i]; i++) {
		json_t *w = jsonx_get(want, own[i]);

		if (w && !jsonx_contains(jsonx_get(have, own[i]), w))
			jsonx_set_path(patch, own[i], json_incref(w));
	}
	if (json_object_size(patch))
		ctl_plan_patch(p, &k8s_res_endpointslices, jsonx_get_string(want, "metadata.name"),
		               patch);
	else
		json_decref(patch);
	json_decref(want);
}

void failover_leader_endpoints(const struct ctl_view *v, struct ctl_plan *p,
                               const struct ctl_pod *pod)
{
	json_t *have = v->child[CTL_CHILD_LEADER_ENDPOINTS], *want;
	/* Not whether the controller reaches it: a controller cut from the pods must not take
	 * every primary out of its Service. A fenced primary takes no writes anyway. */
	bool ready = pod && !pod->deleting && !pod->inst.fenced;

	if (pod && pod->deleting)
		pod = NULL;
	want = desired_leader_endpoints(v->rc, pod ? pod->name : NULL, pod ? pod->uid : NULL,
	                                pod ? pod->ip : NULL, ready);
	/* the API server gives an empty list back as null */
	if (have && !json_array_size(json_object_get(want, "endpoints")) &&
	    !json_is_array(json_object_get(have, "endpoints")))
		json_object_set_new(want, "endpoints", json_null());
	ensure_slice(p, have, want);
}

/* The manager says it replicates from the primary AND its server agrees (role). */
static bool follows(const struct ctl_pod *pod, const struct ctl_pod *primary)
{
	const struct ctl_inst *i = &pod->inst;

	if (strcmp(i->state, "replica") != 0)
		return strcmp(i->state, "parked") != 0 && strcmp(i->state, "primary") != 0;
	return strcmp(i->role, "replica") == 0 && strcmp(i->master_host, primary->ip) == 0 &&
	       i->master_port == CTL_PORT_REDIS;
}

void failover_follow(const struct ctl_view *v, struct ctl_plan *p, const struct ctl_pod *pp,
                     const char *skip)
{
	for (size_t i = 0; i < v->npods; i++) {
		const struct ctl_pod *pod = &v->pods[i];

		if (pod == pp || (skip && strcmp(pod->name, skip) == 0) || pod->deleting ||
		    !pod->ip || !ctl_inst_current(v, &pod->inst) || !pod->inst.server_up ||
		    failover_user_fenced(v, pod->name))
			continue;
		if (follows(pod, pp)) {
			/* a replica is read-only: a fence left from its primary days only pauses it */
			if (pod->inst.fenced && strcmp(pod->inst.state, "replica") == 0 &&
			    strcmp(pod->inst.fence_reason, CTL_USER_FENCE_REASON) != 0)
				ctl_plan_instance(p, pod, "unfence", NULL)->optional = true;
			continue;
		}
		ctl_plan_instance(p, pod, "replicate", ctl_body_replicate(pp->ip, CTL_PORT_REDIS))
		        ->optional = true;
		ctl_plan_event(p, false, "ReplicaRepointed", "%s now replicates from %s", pod->name,
		               pp->name);
	}
}
