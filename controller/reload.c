/*
 * reload: the reload request (reload.h).
 */
#include "reload.h"

#include <string.h>

#include "api/instance_v1.h"

#define RELOAD_WAIT_MS 5000

/* Every instance settled and on the spec's live configuration. */
static bool ready_for_reload(const struct ctl_view *v, const struct plan_state *s)
{
	if (!v->npods || !plan_all_settled(v))
		return false;
	for (size_t i = 0; i < v->npods; i++)
		if (!v->pods[i].ip || !v->pods[i].live_hash ||
		    strcmp(v->pods[i].live_hash, s->live_hash) != 0)
			return false;
	return true;
}

bool ctl_reload_step(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	const char *want =
	        json_string_value(json_object_get(v->rc->meta.annotations, CTL_ANN_RELOAD));
	const char *done = v->rc->status.last_reload;

	if (!want || (done && strcmp(done, want) == 0))
		return true;
	if (!ready_for_reload(v, s)) {
		s->phase_reason = "reload requested: waiting for every instance to be ready";
		ctl_plan_requeue(p, RELOAD_WAIT_MS);
		return true;
	}
	for (size_t i = 0; i < v->npods; i++) {
		json_t *body = desired_live_config(v->rc);

		json_object_set_new(body, API_INST_RELOAD, json_true());
		ctl_plan_instance(p, &v->pods[i], "config", body);
	}
	ctl_plan_status(p, json_pack("{s:s}", "lastReload", want));
	ctl_plan_event(p, false, "Reloaded",
	               "%zu instance(s) re-read their Secret and TLS files and re-applied the live "
	               "configuration, without restart (redis.io/reload=%s)",
	               v->npods, want);
	return true;
}
