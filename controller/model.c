/*
 * model: the pure data model's helpers (see model.h): the /v1/status parser, plans and
 * their actions, the persisted failover state, and the JSON comparison the planner
 * uses to decide whether an owned object needs a patch.
 */
#include "model.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/instance_v1.h"
#include "lib/alloc.h"
#include "lib/jsonx.h"

/* --- /v1/status --------------------------------------------------------------------- */

static void copy(char *out, size_t len, const char *s)
{
	snprintf(out, len, "%s", s ? s : "");
}

/* A nullable integer of the status as the view keeps it: null is def. */
static long long nint(int64_t v, long long def)
{
	return v == API_INST_NULL ? def : (long long)v;
}

int ctl_inst_parse(const char *body, size_t len, struct ctl_inst *out, struct err *e)
{
	struct ctl_inst i = *out;
	struct api_inst_status s;
	const struct api_inst_replication *r = &s.replication;
	int rc = api_inst_status_decode(body, len, &s, e);

	if (rc)
		return rc;
	copy(i.state, sizeof(i.state), s.state);
	copy(i.role, sizeof(i.role), s.role);
	copy(i.reason, sizeof(i.reason), s.reason);
	copy(i.fence_reason, sizeof(i.fence_reason), s.fence_reason);
	copy(i.version, sizeof(i.version), s.version);
	copy(i.engine, sizeof(i.engine), s.engine);
	i.ready = s.ready;
	i.fenced = s.fenced;
	i.lease_held = s.lease_held;
	i.primary_crashed = s.primary_crashed;
	i.server_up = s.server.up;
	i.loading = s.server.loading;
	i.syncing = s.server.sync_in_progress;
	i.server_pid = nint(s.server.pid, 0);
	copy(i.repl_id, sizeof(i.repl_id), s.has_replication ? r->repl_id : NULL);
	copy(i.repl_id2, sizeof(i.repl_id2), s.has_replication ? r->repl_id2 : NULL);
	copy(i.link, sizeof(i.link), s.has_replication ? r->link : NULL);
	copy(i.master_host, sizeof(i.master_host), s.has_replication ? r->master_host : NULL);
	i.master_port = s.has_replication ? (int)nint(r->master_port, 0) : 0;
	i.offset = s.has_replication ? nint(r->offset, -1) : -1;
	i.lag_bytes = s.has_replication ? nint(r->lag_bytes, -1) : -1;
	i.lag_seconds = s.has_replication ? nint(r->lag_seconds, -1) : -1;
	api_inst_status_release(&s);
	*out = i;
	return 0;
}

bool ctl_inst_ok(const struct ctl_inst *i)
{
	return i->seen && i->failures == 0;
}

bool ctl_inst_current(const struct ctl_view *v, const struct ctl_inst *i)
{
	return ctl_inst_ok(i) && i->last_ok_mono > v->roles_epoch_mono;
}

bool ctl_inst_is_writable_primary(const struct ctl_inst *i)
{
	return ctl_inst_server_writable(i) && strcmp(i->state, API_INST_STATE_PRIMARY) == 0;
}

bool ctl_inst_server_writable(const struct ctl_inst *i)
{
	return ctl_inst_ok(i) && strcmp(i->role, API_INST_ROLE_PRIMARY) == 0 && !i->fenced;
}

/* --- failover state --------------------------------------------------------------- */

int ctl_failover_read(json_t *cluster, struct ctl_failover *out)
{
	struct api_failover_status s;
	struct ctl_failover f = { 0 };
	int rc = api_failover_status_decode(jsonx_get(cluster, "status.failover"),
	                                    "status.failover", &s, NULL);

	if (rc == 0 && s.set && s.phase) {
		f.active = true;
		copy(f.phase, sizeof(f.phase), api_failover_phase_name(s.phase));
		copy(f.from, sizeof(f.from), s.from);
		copy(f.to, sizeof(f.to), s.to);
		copy(f.reason, sizeof(f.reason), s.reason);
		copy(f.started_at, sizeof(f.started_at), s.started_at);
		if (rfc3339_parse(f.started_at, &f.started_wall_ms) < 0)
			f.started_wall_ms = 0;
	}
	*out = f;
	return rc;
}

void ctl_failover_status(const struct ctl_failover *fo, const char *phase, const char *to,
                         const char *catch_up, struct api_failover_status *out)
{
	*out = (struct api_failover_status){ .set = true,
		                             .phase = api_failover_phase_from_name(phase),
		                             .from = fo->from,
		                             .to = to,
		                             .reason = fo->reason,
		                             .catch_up = catch_up,
		                             .started_at = fo->started_at };
}

/* --- view --------------------------------------------------------------------------- */

const struct ctl_pod *ctl_view_pod(const struct ctl_view *v, const char *name)
{
	for (size_t i = 0; name && i < v->npods; i++)
		if (strcmp(v->pods[i].name, name) == 0)
			return &v->pods[i];
	return NULL;
}

int ctl_serial_of(const char *cluster, const char *name)
{
	size_t n = strlen(cluster);
	long v = 0;
	const char *p;

	if (strncmp(name, cluster, n) != 0 || name[n] != '-' || !name[n + 1])
		return -1;
	for (p = name + n + 1; *p; p++) {
		if (*p < '0' || *p > '9' || v > 100000000)
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (name[n + 1] == '0')
		return -1; /* serials start at 1 and have no leading zeros */
	return (int)v;
}

/* --- plans -------------------------------------------------------------------------- */

void ctl_plan_init(struct ctl_plan *p)
{
	memset(p, 0, sizeof(*p));
}

static void action_release(struct ctl_action *a)
{
	free(a->name);
	free(a->ip);
	free(a->op);
	free(a->reason);
	free(a->note);
	json_decref(a->obj);
}

void ctl_plan_release(struct ctl_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		action_release(&p->acts[i]);
	free(p->acts);
	json_decref(p->status);
	memset(p, 0, sizeof(*p));
}

struct ctl_action *ctl_plan_add(struct ctl_plan *p, enum ctl_act_kind kind)
{
	struct ctl_action *a;

	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 8;
		p->acts = xreallocarray(p->acts, p->cap, sizeof(*p->acts));
	}
	a = &p->acts[p->n++];
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	return a;
}

void ctl_plan_create(struct ctl_plan *p, const struct k8s_resource *res, json_t *obj)
{
	struct ctl_action *a = ctl_plan_add(p, CTL_ACT_CREATE);
	const char *name = ctl_json_str(obj, "metadata.name");

	a->res = res;
	a->name = xstrdup(name ? name : "");
	a->obj = obj;
}

void ctl_plan_patch(struct ctl_plan *p, const struct k8s_resource *res, const char *name,
                    json_t *patch)
{
	struct ctl_action *a = ctl_plan_add(p, CTL_ACT_PATCH);

	a->res = res;
	a->name = xstrdup(name);
	a->obj = patch;
}

void ctl_plan_delete(struct ctl_plan *p, const struct k8s_resource *res, const char *name)
{
	struct ctl_action *a = ctl_plan_add(p, CTL_ACT_DELETE);

	a->res = res;
	a->name = xstrdup(name);
}

struct ctl_action *ctl_plan_status(struct ctl_plan *p, json_t *patch)
{
	struct ctl_action *a = ctl_plan_add(p, CTL_ACT_STATUS);

	a->obj = patch;
	a->new_epoch = json_object_get(patch, "currentPrimary") != NULL;
	return a;
}

struct ctl_action *ctl_plan_instance(struct ctl_plan *p, const struct ctl_pod *pod, const char *op,
                                     json_t *body)
{
	struct ctl_action *a = ctl_plan_add(p, CTL_ACT_INSTANCE);

	a->name = xstrdup(pod->name);
	a->ip = xstrdup(pod->ip ? pod->ip : "");
	a->op = xstrdup(op);
	a->obj = body ? body : json_object();
	a->new_epoch = strcmp(op, "config") != 0 && strcmp(op, "restart") != 0;
	return a;
}

json_t *ctl_body_fence(const char *reason)
{
	struct api_inst_request r = { .op = API_INST_FENCE, .reason = reason };

	return api_inst_request_encode(&r);
}

json_t *ctl_body_promote(bool force)
{
	struct api_inst_request r = { .op = API_INST_PROMOTE, .force = force };

	return api_inst_request_encode(&r);
}

json_t *ctl_body_replicate(const char *host, int port)
{
	struct api_inst_request r = { .op = API_INST_REPLICATE, .host = host, .port = port };

	return api_inst_request_encode(&r);
}

json_t *ctl_body_switchover(const char *host, int port, int http_port)
{
	struct api_inst_request r = {
		.op = API_INST_SWITCHOVER, .host = host, .port = port, .http_port = http_port
	};

	return api_inst_request_encode(&r);
}

void ctl_plan_event(struct ctl_plan *p, bool warning, const char *reason, const char *fmt, ...)
{
	struct ctl_action *a = ctl_plan_add(p, CTL_ACT_EVENT);
	char note[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(note, sizeof(note), fmt, ap);
	va_end(ap);
	a->warning = warning;
	a->reason = xstrdup(reason);
	a->note = xstrdup(note);
	a->optional = true;
}

void ctl_plan_requeue(struct ctl_plan *p, int64_t ms)
{
	if (ms <= 0)
		ms = 1;
	if (!p->requeue_ms || ms < p->requeue_ms)
		p->requeue_ms = ms;
}

static const char *const kind_names[] = {
	[CTL_ACT_CREATE] = "create", [CTL_ACT_PATCH] = "patch",     [CTL_ACT_DELETE] = "delete",
	[CTL_ACT_STATUS] = "status", [CTL_ACT_CLUSTER] = "cluster", [CTL_ACT_INSTANCE] = "instance",
	[CTL_ACT_EVENT] = "event",
};

static json_t *action_dump(const struct ctl_action *a)
{
	json_t *j = json_pack("{s:s}", "action", kind_names[a->kind]);

	if (a->res)
		json_object_set_new(j, "kind", json_string(a->res->kind));
	if (a->name)
		json_object_set_new(j, "name", json_string(a->name));
	if (a->op)
		json_object_set_new(j, "op", json_string(a->op));
	if (a->obj)
		json_object_set(j, "body", a->obj);
	if (a->optional)
		json_object_set_new(j, "optional", json_true());
	if (a->fill_password)
		json_object_set_new(j, "fillPassword", json_true());
	if (a->fill_tls)
		json_object_set_new(j, "fillTls",
		                    json_string(a->fill_tls == CTL_FILL_TLS_OPERATOR ? "operator"
		                                                                     : "instance"));
	if (a->reason)
		json_object_set_new(j, "reason", json_string(a->reason));
	if (a->note)
		json_object_set_new(j, "note", json_string(a->note));
	if (a->kind == CTL_ACT_EVENT)
		json_object_set_new(j, "type", json_string(a->warning ? "Warning" : "Normal"));
	if (a->metric)
		json_object_set_new(j, "metric", json_integer(a->metric));
	return j;
}

json_t *ctl_plan_dump(const struct ctl_plan *p)
{
	json_t *acts = json_array();

	for (size_t i = 0; i < p->n; i++)
		json_array_append_new(acts, action_dump(&p->acts[i]));
	return json_pack("{s:o,s:I,s:s?,s:s?}", "actions", acts, "requeueMs",
	                 (json_int_t)p->requeue_ms, "phase", p->phase, "waiting", p->waiting);
}

/* --- JSON helpers ------------------------------------------------------------------- */

static bool number_equal(json_t *a, json_t *b)
{
	if (json_is_integer(a) && json_is_integer(b))
		return json_integer_value(a) == json_integer_value(b);
	return json_number_value(a) == json_number_value(b);
}

bool ctl_json_contains(json_t *have, json_t *want)
{
	const char *k;
	json_t *v;
	size_t i;

	if (!want)
		return true;
	if (!have)
		return json_is_null(want);
	if (json_is_object(want)) {
		if (!json_is_object(have))
			return false;
		json_object_foreach (want, k, v) {
			if (!ctl_json_contains(json_object_get(have, k), v))
				return false;
		}
		return true;
	}
	if (json_is_array(want)) {
		if (!json_is_array(have) || json_array_size(have) != json_array_size(want))
			return false;
		json_array_foreach (want, i, v) {
			if (!ctl_json_contains(json_array_get(have, i), v))
				return false;
		}
		return true;
	}
	if (json_is_number(want) && json_is_number(have))
		return number_equal(have, want);
	return json_equal(have, want);
}

const char *ctl_json_str(json_t *root, const char *path)
{
	return json_string_value(jsonx_get(root, path));
}
