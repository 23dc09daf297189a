/*
 * podstatus: the runtime's view of a pod (struct rt_pod_status) as the Pod's status, for a
 * strategic merge patch on pods/status. Conditions merge by type (PodScheduled, the
 * scheduler's, is kept); podIPs and hostIPs are replaced as a whole ("$patch": "replace");
 * container statuses are an atomic list. Transition times and instance ids live in the
 * caller's struct na_cond / na_ctr_ids between calls. Pure; any thread.
 *
 * containerID is "nodeagent://<pid>" of the instance (the running one, or the one that
 * terminated), imageID "nodeagent://<normalized image>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "imagemap.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/jsonx.h"
#include "lib/rfc3339.h"

/* --- status ------------------------------------------------------------------------------------------ */

static json_t *time_json(int64_t ms)
{
	char ts[RFC3339_MAX];

	if (ms <= 0)
		return json_null();
	rfc3339_format(ms, RFC3339_SECONDS, ts);
	return json_string(ts);
}

static json_t *cid_json(pid_t pid)
{
	return pid > 0 ? json_sprintf("nodeagent://%d", (int)pid) : NULL;
}

static json_t *state_json(const struct rt_ctr_state *s, pid_t pid)
{
	json_t *o = json_object(), *in = json_object();

	if (s->reason)
		json_object_set_new(in, "reason", json_string(s->reason));
	if (s->message)
		json_object_set_new(in, "message", json_string(s->message));
	switch (s->kind) {
	case RT_STATE_WAITING: json_object_set_new(o, "waiting", in); return o;
	case RT_STATE_RUNNING:
		json_object_clear(in);
		json_object_set_new(in, "startedAt", time_json(s->started_at_ms));
		json_object_set_new(o, "running", in);
		return o;
	case RT_STATE_TERMINATED:
		json_object_set_new(in, "exitCode", json_integer(s->exit_code));
		if (s->signal)
			json_object_set_new(in, "signal", json_integer(s->signal));
		json_object_set_new(in, "startedAt", time_json(s->started_at_ms));
		json_object_set_new(in, "finishedAt", time_json(s->finished_at_ms));
		if (pid > 0)
			json_object_set_new(in, "containerID", cid_json(pid));
		json_object_set_new(o, "terminated", in);
		return o;
	case RT_STATE_NONE: break;
	}
	json_decref(in);
	return o;
}

static json_t *image_id(const char *image)
{
	char norm[512];

	if (!imagemap_normalize(image, norm, sizeof(norm)))
		snprintf(norm, sizeof(norm), "%.500s", image);
	return json_sprintf("nodeagent://%s", norm);
}

/*
 * ready/started only for a running instance: the runtime sets both at creation for a
 * container without probes, before anything runs (a waiting or failed container would
 * look ready). Init containers keep the runtime's "done" meaning of ready.
 */
static bool ctr_ready(const struct rt_ctr_status *c)
{
	return c->ready && c->state.kind == RT_STATE_RUNNING;
}

static bool ctr_started(const struct rt_ctr_status *c)
{
	return c->started && c->state.kind == RT_STATE_RUNNING;
}

static json_t *ctr_status_json(const struct rt_ctr_status *c, bool init, struct na_ctr_ids *id)
{
	bool cur_dead = c->state.kind == RT_STATE_WAITING;
	json_t *o = json_object();

	if (c->pid > 0 && c->pid != id->cur) {
		id->prev = id->cur;
		id->cur = c->pid;
	}
	json_object_set_new(o, "name", json_string(c->name));
	json_object_set_new(o, "image", json_string(c->image));
	json_object_set_new(o, "imageID", image_id(c->image));
	if (c->state.kind == RT_STATE_RUNNING || c->state.kind == RT_STATE_TERMINATED)
		json_object_set_new(o, "containerID", cid_json(id->cur));
	json_object_set_new(o, "ready", json_boolean(init ? c->ready : ctr_ready(c)));
	json_object_set_new(o, "started", json_boolean(ctr_started(c)));
	json_object_set_new(o, "restartCount", json_integer(c->restart_count));
	json_object_set_new(o, "state", state_json(&c->state, id->cur));
	json_object_set_new(o, "lastState",
	                    state_json(&c->last_state, cur_dead ? id->cur : id->prev));
	return o;
}

static json_t *waiting_status_json(json_t *ctr, const char *reason, const char *msg)
{
	const char *image = json_string_value(json_object_get(ctr, "image"));
	json_t *o = json_object(), *w = json_object();

	json_object_set_new(o, "name", json_copy(json_object_get(ctr, "name")));
	json_object_set_new(o, "image", json_string(image ? image : ""));
	json_object_set_new(o, "imageID", json_string(""));
	json_object_set_new(o, "ready", json_false());
	json_object_set_new(o, "started", json_false());
	json_object_set_new(o, "restartCount", json_integer(0));
	json_object_set_new(w, "reason", json_string(reason));
	if (msg)
		json_object_set_new(w, "message", json_string(msg));
	json_object_set_new(o, "state", json_pack("{s:o}", "waiting", w));
	json_object_set_new(o, "lastState", json_object());
	return o;
}

static const char *default_wait(const struct na_status_in *in, bool init)
{
	if (in->wait_reason)
		return in->wait_reason;
	return init ? "PodInitializing" : "ContainerCreating";
}

/* containerStatuses (init false) or initContainerStatuses (init true); NULL when none. */
static json_t *statuses_json(const struct na_status_in *in, bool init, struct na_ctr_ids *ids,
                             size_t n_ids)
{
	json_t *spec = jsonx_get(in->pod, init ? "spec.initContainers" : "spec.containers"), *c;
	struct na_ctr_ids spare = { 0, 0 };
	json_t *arr;
	size_t i;

	if (!json_array_size(spec))
		return NULL;
	arr = json_array();
	if (in->rt) {
		const struct rt_ctr_status *v = init ? in->rt->init : in->rt->containers;
		size_t m = init ? in->rt->n_init : in->rt->n_containers;
		size_t base = init ? 0 : in->rt->n_init;

		for (i = 0; i < m; i++)
			json_array_append_new(
			        arr, ctr_status_json(&v[i], init,
			                             base + i < n_ids ? &ids[base + i] : &spare));
		return arr;
	}
	json_array_foreach (spec, i, c)
		json_array_append_new(arr,
		                      waiting_status_json(c, default_wait(in, init), in->wait_msg));
	return arr;
}

/* --- conditions ---------------------------------------------------------------------------------------- */

static const char *const cond_names[NA_CONDS] = {
	[NA_COND_SANDBOX] = "PodReadyToStartContainers",
	[NA_COND_INIT] = "Initialized",
	[NA_COND_CREADY] = "ContainersReady",
	[NA_COND_READY] = "Ready",
};

struct cond_val {
	bool value;
	const char *reason;
	char *message;
};

/* "containers with unready status: [a b]" over the containers for which bad() holds. */
static char *names_message(const char *what, const struct rt_ctr_status *v, size_t n, json_t *spec,
                           bool (*bad)(const struct rt_ctr_status *))
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);
	json_t *c;
	size_t i, k = 0;

	buf_printf(&b, "containers with %s status: [", what);
	if (v) {
		for (i = 0; i < n; i++)
			if (bad(&v[i]))
				buf_printf(&b, "%s%s", k++ ? " " : "", v[i].name);
	} else {
		json_array_foreach (spec, i, c)
			buf_printf(&b, "%s%s", i ? " " : "",
			           json_string_value(json_object_get(c, "name")));
	}
	buf_append_char(&b, ']');
	return buf_detach(&b, NULL);
}

static bool not_ready(const struct rt_ctr_status *c)
{
	return !ctr_ready(c);
}

static bool all_ready(const struct rt_pod_status *rt)
{
	for (size_t i = 0; i < rt->n_containers; i++)
		if (!ctr_ready(&rt->containers[i]))
			return false;
	return rt->n_containers > 0;
}

static bool not_done(const struct rt_ctr_status *c)
{
	return !(c->state.kind == RT_STATE_TERMINATED && c->state.exit_code == 0);
}

static void conds_compute(const struct na_status_in *in, struct cond_val *cv)
{
	const struct rt_pod_status *rt = in->rt;
	json_t *inits = jsonx_get(in->pod, "spec.initContainers");
	bool terminal = rt && (rt->phase == RT_PHASE_SUCCEEDED || rt->phase == RT_PHASE_FAILED);
	bool ready = rt && all_ready(rt) && !terminal;

	memset(cv, 0, sizeof(*cv) * NA_CONDS);
	cv[NA_COND_SANDBOX].value = rt != NULL;
	cv[NA_COND_INIT].value = rt ? rt->initialized : json_array_size(inits) == 0;
	if (!cv[NA_COND_INIT].value) {
		cv[NA_COND_INIT].reason = "ContainersNotInitialized";
		cv[NA_COND_INIT].message = names_message("incomplete", rt ? rt->init : NULL,
		                                         rt ? rt->n_init : 0, inits, not_done);
	}
	for (int t = NA_COND_CREADY; t <= NA_COND_READY; t++) {
		cv[t].value = ready;
		if (ready)
			continue;
		cv[t].reason = terminal ? "PodCompleted" : "ContainersNotReady";
		if (!terminal)
			cv[t].message = names_message(
			        "unready", rt ? rt->containers : NULL, rt ? rt->n_containers : 0,
			        jsonx_get(in->pod, "spec.containers"), not_ready);
	}
}

static json_t *conds_json(const struct na_status_in *in, struct na_cond *conds)
{
	struct cond_val cv[NA_CONDS];
	json_t *arr = json_array();

	conds_compute(in, cv);
	for (int t = 0; t < NA_CONDS; t++) {
		json_t *c = json_object();

		if (!conds[t].set || conds[t].value != cv[t].value) {
			conds[t].set = true;
			conds[t].value = cv[t].value;
			conds[t].since_ms = in->now_ms;
		}
		json_object_set_new(c, "type", json_string(cond_names[t]));
		json_object_set_new(c, "status", json_string(cv[t].value ? "True" : "False"));
		json_object_set_new(c, "lastProbeTime", json_null());
		json_object_set_new(c, "lastTransitionTime", time_json(conds[t].since_ms));
		json_object_set_new(c, "reason",
		                    cv[t].reason ? json_string(cv[t].reason) : json_null());
		json_object_set_new(c, "message",
		                    cv[t].message ? json_string(cv[t].message) : json_null());
		free(cv[t].message);
		json_array_append_new(arr, c);
	}
	return arr;
}

/* [{ip}] replacing the whole list: podIPs and hostIPs merge by ip in a strategic merge
 * patch, and a sandbox made again (agent restart) has a new address. */
static json_t *ip_list(const char *ip)
{
	return json_pack("[{s:s}, {s:s}]", "ip", ip, "$patch", "replace");
}

json_t *na_status_build(const struct na_status_in *in, struct na_cond *conds,
                        struct na_ctr_ids *ids, size_t n_ids)
{
	json_t *st = json_object(), *v;
	const char *ip = in->rt && in->rt->pod_ip[0] ? in->rt->pod_ip : NULL;

	json_object_set_new(st, "phase",
	                    json_string(in->rt ? rt_phase_name(in->rt->phase) : "Pending"));
	json_object_set_new(st, "hostIP", json_string(in->host_ip));
	json_object_set_new(st, "hostIPs", ip_list(in->host_ip));
	if (ip) {
		json_object_set_new(st, "podIP", json_string(ip));
		json_object_set_new(st, "podIPs", ip_list(ip));
	}
	json_object_set_new(st, "startTime", time_json(in->start_ms));
	json_object_set_new(st, "conditions", conds_json(in, conds));
	if ((v = statuses_json(in, true, ids, n_ids)))
		json_object_set_new(st, "initContainerStatuses", v);
	if ((v = statuses_json(in, false, ids, n_ids)))
		json_object_set_new(st, "containerStatuses", v);
	return json_pack("{s:o}", "status", st);
}
